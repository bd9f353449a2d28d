"""The CAPS attention half that recomputes its projections in backward (`layers/caps/recomputed.py`) against the
same computation as separate steps (tiled normed projections, then the native kernel under autograd): output bit
for bit in float32, the gradients of x, the norm weight, the stacked weight and the RoPE frequencies in float64
(1e-12) and float32 (1e-5 against float64), for every path set with and without RoPE; and what it keeps.
"""

from __future__ import annotations

import pytest
import torch
from torch.nn.functional import softplus

from layers.caps import native
from layers.caps.native import caps_attention_native
from layers.caps.projection import normed_projections_tiled
from layers.caps.recomputed import recomputed_native_attention
from layers.caps.rope import rope_angles, rope_frequencies
from tests.layers.test_caps_block_ops import _saved_bytes
from tests.numerics import assert_close_to_scale

pytestmark = pytest.mark.skipif(not native.available(), reason="the native CPU kernel does not build here")

EPS, CLOCK_EPS = 1e-5, 1e-6
B, T, H, E = 2, native.SEGMENT + 9, 2, 4  # two checkpoint segments
D = H * E
WIDTHS = (D,) * 5 + (H, 8 - (5 * D + H) % 8)  # the layer's padding to a multiple of 8 rows


def _leaves(dtype: torch.dtype) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(4)
    x = torch.randn(B, T, D, generator=gen, dtype=torch.float64)
    norm_weight = 1.0 + 0.2 * torch.randn(D, generator=gen, dtype=torch.float64)
    weight = torch.randn(sum(WIDTHS), D, generator=gen, dtype=torch.float64) / D**0.5
    weight[sum(WIDTHS[:6]):] = 0.0  # padding rows, as the layer's
    omega = rope_frequencies(E).double() * 1.3
    return [t.to(dtype).requires_grad_() for t in (x, norm_weight, weight, omega)]


def _tables(omega: torch.Tensor, rope: bool) -> tuple[torch.Tensor, torch.Tensor]:
    if not rope:
        return omega.new_empty(0), omega.new_empty(0)
    angle = rope_angles(T, omega)
    return angle.cos().to(omega.dtype), angle.sin().to(omega.dtype)


def _recomputed(x, norm_weight, weight, omega, paths, rope):  # noqa: ANN001, ANN202
    cos, sin = _tables(omega, rope)
    mask = sum(1 << (path - 1) for path in paths)
    return recomputed_native_attention(x, norm_weight, EPS, weight, WIDTHS, H, CLOCK_EPS, cos, sin, mask)


def _separate_steps(x, norm_weight, weight, omega, paths, rope):  # noqa: ANN001, ANN202
    q, k, v, p, g, c, _ = normed_projections_tiled(x, norm_weight, EPS, weight, WIDTHS)
    q, k, v, p, g = (piece.unflatten(-1, (H, E)) for piece in (q, k, v, p, g))
    return caps_attention_native(q, k, v, p, g, softplus(c) + CLOCK_EPS, paths, rope_freq=omega if rope else None)


def _run(fn, dtype: torch.dtype, paths: tuple[int, ...], rope: bool) -> list[torch.Tensor]:  # noqa: ANN001
    leaves = _leaves(dtype)
    out = fn(*leaves, paths, rope)
    dout = torch.randn(out.shape, generator=torch.Generator().manual_seed(5), dtype=torch.float64).to(dtype)
    grads = torch.autograd.grad(out, leaves if rope else leaves[:3], dout)
    return [out.detach(), *grads]


@pytest.mark.parametrize("rope", [True, False], ids=["rope", "no-rope"])
@pytest.mark.parametrize("paths", [(1, 2, 3), (1, 3), (2,), (3,)], ids=str)
def test_recomputed_half_matches_the_separate_steps(paths: tuple[int, ...], rope: bool) -> None:
    fast32 = _run(_recomputed, torch.float32, paths, rope)
    steps32 = _run(_separate_steps, torch.float32, paths, rope)
    fast64 = _run(_recomputed, torch.float64, paths, rope)
    steps64 = _run(_separate_steps, torch.float64, paths, rope)
    assert torch.equal(fast32[0], steps32[0]), "output differs from the separate steps (float32)"
    names = ["o", "dx", "dnorm_weight", "dweight", "domega"]
    for name, a, b, c in zip(names, fast64, steps64, fast32, strict=False):
        assert_close_to_scale(a, b, 1e-12, f"{name} recomputed vs separate steps, float64")
        assert_close_to_scale(c, b, 1e-5, f"{name} recomputed float32 vs float64")


def test_recomputed_half_keeps_no_projection_piece() -> None:
    """The separate steps keep q, k, v, p, g for the kernel's backward (5 x [B, T, D] floats) on top of what both
    keep (the checkpoints and, here, the clock pre-activation); the recomputing half keeps none of the pieces."""
    x, norm_weight, weight, omega = _leaves(torch.float32)

    def kept(fn) -> int:  # noqa: ANN001
        return _saved_bytes(lambda a, b, c: fn(a, b, c, omega.detach(), (1, 2, 3), False), x, norm_weight, weight)

    pieces = 5 * B * T * D * 4
    assert kept(_separate_steps) - kept(_recomputed) >= pieces
