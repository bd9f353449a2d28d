"""CAPS paper propositions as properties, the `official` numerics against a float64 transcription of
caps_reference section 4, and the CAPSAttention layer's configuration contract."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import layers.CAPS_Attention as caps
from layers.CAPS_Attention import CAPSAttention, caps_attention
from tests.numerics import assert_close_to_scale


def path_weights(paths: str, g: torch.Tensor, p: torch.Tensor, clock: torch.Tensor) -> torch.Tensor:
    """The weight matrix P[t, i] of one path read back through the chunked kernel.

    With E = 1, q = k = 1 and v = identity (Ev = T), o[t] is row t of the weights. [T, T].
    """
    T = g.shape[0]
    ones = torch.ones(1, T, 1, 1, dtype=g.dtype)
    v = torch.eye(T, dtype=g.dtype)[None, :, None]  # [1, T, 1, T]
    o = caps_attention(ones, ones, v, p.view(1, T, 1, 1), g.view(1, T, 1, 1), clock.view(1, T, 1), paths=paths,
                       chunk_size=16)
    return o[0, :, 0]


def test_path2_weight_depends_only_on_interval() -> None:
    """Proposition (ii): A[t, i] = exp(sum_{j=i+1..t} g~_j) ignores tokens outside (i, t]."""
    T, i, t = 60, 20, 41
    gen = torch.Generator().manual_seed(1)
    g, p = torch.randn(T, generator=gen, dtype=torch.float64), torch.randn(T, generator=gen, dtype=torch.float64)
    clock = F.softplus(torch.randn(T, generator=gen, dtype=torch.float64))
    base = path_weights("2", g, p, clock)
    outside = torch.ones(T, dtype=torch.bool)
    outside[i + 1 : t + 1] = False
    g2 = torch.where(outside, 5 * torch.randn(T, generator=gen, dtype=torch.float64), g)
    clock2 = torch.where(outside, clock * 7, clock)
    changed = path_weights("2", g2, p, clock2)
    assert_close_to_scale(changed[t, i], base[t, i], 1e-14, "A[t, i] after changing tokens outside (i, t]")
    expected = torch.exp(-(F.softplus(g) * clock)[i + 1 : t + 1].sum())
    assert_close_to_scale(base[t, i], expected, 1e-12, "A[t, i] vs its definition")
    assert not torch.allclose(changed[t, i - 1], base[t, i - 1]), "control: a weight whose interval changed"


@pytest.mark.parametrize("paths", ["1", "3"])
def test_riemann_and_clock_rows_sum_to_one(paths: str) -> None:
    T = 90
    gen = torch.Generator().manual_seed(2)
    g, p = torch.randn(T, generator=gen, dtype=torch.float64), 10 * torch.randn(T, generator=gen, dtype=torch.float64)
    clock = F.softplus(torch.randn(T, generator=gen, dtype=torch.float64)) + 1e-6
    w = path_weights(paths, g, p, clock)
    assert_close_to_scale(w.sum(dim=1), torch.ones(T, dtype=torch.float64), 1e-12, f"P{paths} row sums")
    assert (w.triu(1) == 0).all() and (w >= 0).all()


def test_rope_is_rotation_depending_on_offset_only() -> None:
    E, T = 8, 40
    omega = caps.rope_frequencies(E).double()
    gen = torch.Generator().manual_seed(3)
    qv, kv = torch.randn(E, generator=gen, dtype=torch.float64), torch.randn(E, generator=gen, dtype=torch.float64)
    q = caps.rope_rotate(qv.expand(1, T, 1, E), omega)[0, :, 0]  # [T, E]
    k = caps.rope_rotate(kv.expand(1, T, 1, E), omega)[0, :, 0]
    assert_close_to_scale(q.norm(dim=-1), qv.norm().expand(T), 1e-14, "RoPE norms")
    scores = q @ k.T  # [T, T]
    for offset in (0, 3, 17):
        diag = torch.diagonal(scores, offset=-offset)
        assert_close_to_scale(diag, diag[:1].expand_as(diag), 1e-12, f"scores at t - i = {offset}")


def test_official_rope_is_not_a_rotation() -> None:
    """caps_reference section 4: the official layout changes norms (documented, reproduced on purpose)."""
    E, T = 8, 20
    x = torch.randn(1, T, 1, E, dtype=torch.float64).expand(1, T, 1, E)
    out = caps.rope_official(x, caps.rope_frequencies(E).double())
    assert (out.norm(dim=-1) - x.norm(dim=-1)).abs().max() > 1e-3


@pytest.mark.parametrize("numerics", ["paper", "official"])
def test_layer_causality(numerics: str) -> None:
    """Paper numerics: outputs up to t ignore inputs after t. Official: its global max leaks (section 4)."""
    torch.manual_seed(4)
    layer = CAPSAttention(32, 4, numerics=numerics).double()
    with torch.no_grad():
        layer.p_proj.weight.mul_(20)
    x = torch.randn(2, 80, 32, dtype=torch.float64)
    x2 = x.clone()
    x2[:, 50:] *= 40
    y, y2 = layer(x), layer(x2)
    if numerics == "paper":
        assert_close_to_scale(y2[:, :50], y[:, :50], 1e-12, "outputs before the change")
    else:
        assert (y2[:, :50] - y[:, :50]).abs().max() > 1e-3 * y[:, :50].abs().max()
    assert (y2[:, 50:] - y[:, 50:]).abs().max() > 0


def official_transcription(layer: CAPSAttention, x: torch.Tensor, paths: str) -> torch.Tensor:
    """Float64 transcription of caps_reference section 4 with the T x T matrix materialised."""
    B, T, D = x.shape
    H, E = layer.n_heads, layer.head_dim
    q, k, v, p, g = (lin(x).view(B, T, H, E) for lin in (layer.q_proj, layer.k_proj, layer.v_proj, layer.p_proj,
                                                         layer.gate_proj))
    delta = (F.softplus(layer.clock_proj(x)) + 1e-6).view(B, T, H, 1)
    omega = caps.rope_frequencies(E).double()
    ang = torch.arange(T, dtype=torch.float64)[:, None] * omega
    ang = torch.cat([ang, ang], -1)[None, :, None]  # [1, T, 1, E]

    def rope(z):
        rot = torch.zeros_like(z)
        rot[..., 0::2], rot[..., 1::2] = -z[..., 1::2], z[..., 0::2]
        return z * ang.cos() + rot * ang.sin()

    q, k = rope(q), rope(k)
    pp = p + torch.log(delta)
    w = torch.exp(pp - pp.max(dim=1, keepdim=True).values)
    gamma = torch.exp(torch.clamp(torch.cumsum(-F.softplus(g) * delta, dim=1), -50, 40))
    parts = {"1": (q / (torch.cumsum(w, 1) + 1e-8), k * w), "2": (q * gamma, k / (gamma + 1e-8)),
             "3": (q / torch.cumsum(delta, 1), k * delta)}
    chosen = [parts[c] for c in paths] or [(q, k)]
    qc, kc = torch.cat([a for a, _ in chosen], -1), torch.cat([b for _, b in chosen], -1)
    scores = torch.einsum("bthe,bihe->bhti", qc, kc).tril()
    o = torch.einsum("bhti,bihe->bthe", scores, v).reshape(B, T, D)
    return layer.c_proj(o)


@pytest.mark.parametrize("paths", ["123", "2", "none"])
def test_official_numerics_match_section4_formula(paths: str) -> None:
    torch.manual_seed(5)
    layer = CAPSAttention(32, 4, paths=paths, rope="fixed", numerics="official").double()
    x = torch.randn(2, 150, 32, dtype=torch.float64)
    ref = official_transcription(layer, x, paths.replace("none", ""))
    assert_close_to_scale(layer(x), ref, 1e-12, "official float64")
    assert_close_to_scale(layer.float()(x.float()), ref, 1e-5, "official float32")


def test_layer_impls_agree_and_softmax_runs() -> None:
    torch.manual_seed(6)
    x = torch.randn(2, 70, 32, dtype=torch.float64)
    layer = CAPSAttention(32, 4).double()
    y = layer(x)
    layer.impl = "naive"
    assert_close_to_scale(layer(x), y, 1e-12, "layer naive vs chunked")
    soft = CAPSAttention(32, 4, attn="softmax").double()
    assert soft.impl == "naive" and soft(x).shape == x.shape


def test_layer_parameters_and_rope_modes() -> None:
    D, H = 32, 4
    learned, fixed, none = (CAPSAttention(D, H, rope=r) for r in ("learned", "fixed", "none"))
    base = 6 * D * D + D * H
    assert sum(p.numel() for p in fixed.parameters()) == base
    assert sum(p.numel() for p in none.parameters()) == base
    assert sum(p.numel() for p in learned.parameters()) == base + D // H // 2
    assert "rope_freq" not in fixed.state_dict() and isinstance(learned.rope_freq, torch.nn.Parameter)
    assert isinstance(learned.c_proj, torch.nn.Linear) and learned.c_proj.bias is None


@pytest.mark.parametrize(
    "kwargs, flag",
    [(dict(d_model=30, n_heads=4), "--d_model 30 is not divisible by --n_heads 4"),
     (dict(d_model=12, n_heads=4), "--caps_rope"), (dict(attn="relu"), "--caps_attn"),
     (dict(paths="4"), "--caps_paths"), (dict(rope="alibi"), "--caps_rope"),
     (dict(numerics="exact"), "--caps_numerics"), (dict(chunk_size=0), "--caps_chunk")],
    ids=["d_model", "odd-head", "attn", "paths", "rope", "numerics", "chunk"])
def test_layer_rejects_bad_config(kwargs: dict, flag: str) -> None:
    args = dict(d_model=32, n_heads=4) | kwargs
    with pytest.raises(ValueError, match=flag):
        CAPSAttention(**args)


def test_layer_bf16_autocast_is_finite() -> None:
    torch.manual_seed(7)
    layer = CAPSAttention(32, 4)
    with torch.no_grad():
        layer.gate_proj.weight.mul_(50)
    x = torch.randn(2, 300, 32)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = layer(x)
    assert torch.isfinite(y).all()
    assert_close_to_scale(y.float(), layer(x), 5e-2, "bf16 autocast vs float32")


def test_default_chunk_follows_the_device() -> None:
    """chunk_size=None resolves per device (32 on CPU, 64 on GPUs) and equals passing that size."""
    assert caps.default_chunk(torch.device("cpu")) == caps.DEFAULT_CHUNK == 32
    assert caps.default_chunk(torch.device("cuda")) == caps.GPU_CHUNK == 64
    layer = CAPSAttention(32, 4)
    assert layer.chunk_size is None and "chunk=auto" in repr(layer)
    x = torch.randn(2, 100, 32)
    fixed = CAPSAttention(32, 4, chunk_size=32)
    fixed.load_state_dict(layer.state_dict())
    assert torch.equal(layer(x), fixed(x))
