"""The native CPU kernel (`layers/caps/native.py` + `native.cpp`) against the float64
naive reference, finite differences and the pure-torch chunked kernel, plus how `impl="auto"` picks it.
Its float64 and float32 agreement over every path set and gate regime is tested beside the other
implementations in tests/layers/test_caps_attention.py (`impl` parametrised with "native").

Tolerances as tests/layers/test_caps_attention.py (never relaxed): float64 1e-12 (measured <= 4e-14),
float32 vs float64 reference 1e-5. The kernel keeps its states in float64, so its float32 error is one
rounding of inputs and outputs.
"""

from __future__ import annotations

import logging
import os
import re

import pytest
import torch

import layers.CAPS_Attention as caps
from layers.caps import dispatch, native
from layers.CAPS_Attention import CAPSAttention, caps_attention, resolve_impl
from tests.layers.test_caps_attention import (
    F32_TOL,
    check_all,
    make_inputs,
    needs_native_kernel,
    run_with_grads,
)
from tests.numerics import assert_close_to_scale


@needs_native_kernel
def test_kernel_builds() -> None:
    """With a compiler present the build must succeed (a failure here is a bug, not a skip)."""
    assert native.load() is not None


@needs_native_kernel
@pytest.mark.parametrize("regime", ["default", "gates_x10"])
def test_native_long_sequence_float32(regime: str) -> None:
    """T = 4096 (64 checkpoint segments): float32 outputs and gradients against recurrent float64."""
    T = 4096
    inputs = make_inputs(1, T, 1, 8, regime, seed=5)
    weight = torch.randn(1, T, 1, 8, dtype=torch.float64)
    got = run_with_grads([x.float() for x in inputs], weight, impl="native")
    check_all(got, run_with_grads(inputs, weight, impl="recurrent"), F32_TOL, "T4096 native float32")


@needs_native_kernel
def test_native_extreme_logits_and_clock() -> None:
    """Path-1 logits spanning +-200 (the running max jumps; most weights underflow to 0) and clocks
    from 1e-6 to 1e3, float32 against float64 naive."""
    q, k, v, p, g, clock = make_inputs(2, 160, 2, 8)
    p = p * 70.0
    clock = clock * torch.logspace(-6, 3, 160, dtype=torch.float64)[None, :, None]
    inputs = [q, k, v, p, g, clock]
    weight = torch.randn(2, 160, 2, 8, dtype=torch.float64)
    ref = run_with_grads(inputs, weight, impl="naive")
    check_all(run_with_grads([x.float() for x in inputs], weight, impl="native"), ref, F32_TOL,
              "native float32, extreme logits and clock")


@needs_native_kernel
@pytest.mark.parametrize("paths", [(1, 2, 3), (1,), (2,), (3,), (1, 3)], ids=str)
def test_native_gradcheck(paths: tuple[int, ...]) -> None:
    """Finite differences in float64, with head widths that are not multiples of 4 (E = 3, Ev = 5:
    padded feature groups) and a time step count across two checkpoint segments; one head (several heads:
    the float64 comparisons with the naive kernel, every gradient element to 1e-12)."""
    gen = torch.Generator().manual_seed(0)
    B, T, H, E, Ev = 1, native.SEGMENT + 7, 1, 3, 5
    q, k, p, g = (torch.randn(B, T, H, E, generator=gen, dtype=torch.float64) for _ in range(4))
    v = torch.randn(B, T, H, Ev, generator=gen, dtype=torch.float64)
    clock = torch.rand(B, T, H, generator=gen, dtype=torch.float64) + 0.1
    inputs = [x.requires_grad_() for x in (q, k, v, p, g, clock)]
    assert torch.autograd.gradcheck(lambda *x: native.caps_attention_native(*x, paths), inputs)


def _rope_grads(inputs, omega, weight, **kwargs):
    """Output and gradients of sum(o * weight) w.r.t. q, k, v, p, g, clock and the RoPE frequencies."""
    leaves = [x.detach().clone().requires_grad_() for x in (*inputs, omega)]
    o = caps_attention(*leaves[:-1], rope_freq=leaves[-1], **kwargs)
    grads = torch.autograd.grad((o * weight.to(o.dtype)).sum(), leaves, allow_unused=True, materialize_grads=True)
    return o.detach(), list(grads)


def _check_rope(actual, expected, tol: float, what: str) -> None:
    (o_a, g_a), (o_e, g_e) = actual, expected
    assert_close_to_scale(o_a, o_e, tol, f"{what} output")
    for name, ga, ge in zip("q k v p g clock omega".split(), g_a, g_e, strict=True):
        assert_close_to_scale(ga, ge, tol, f"{what} grad {name}", scale_floor=ge.abs().max().item())


@needs_native_kernel
@pytest.mark.parametrize("paths", ["123", "1", "2", "3", "13"])
def test_native_rope_inside_kernel_float64(paths: str) -> None:
    """rope_freq given: the kernel rotates q, k itself; outputs and all gradients, the frequencies' included,
    equal the naive reference on rotated inputs (T across three checkpoint segments, E = 6: 3 pairs)."""
    inputs = make_inputs(2, 2 * native.SEGMENT + 22, 3, 6, seed=3)
    omega = caps.rope_frequencies(6).double() * 1.7
    weight = torch.randn(2, 2 * native.SEGMENT + 22, 3, 6, dtype=torch.float64)
    got = _rope_grads(inputs, omega, weight, paths=paths, impl="native")
    _check_rope(got, _rope_grads(inputs, omega, weight, paths=paths, impl="naive"), 1e-12, f"rope paths {paths}")


@needs_native_kernel
@pytest.mark.parametrize("width", [8, 16])
def test_native_specialised_widths_float64(width: int) -> None:
    """E = Ev = 8 and 16 run the kernel's compile-time-width code (`dispatch_width`): outputs and every gradient
    equal the naive reference in float64, RoPE in the kernel, three checkpoint segments, all three paths."""
    T = 2 * native.SEGMENT + 9
    inputs = make_inputs(2, T, 2, width, seed=7)
    omega = caps.rope_frequencies(width).double() * 1.3
    weight = torch.randn(2, T, 2, width, dtype=torch.float64)
    got = _rope_grads(inputs, omega, weight, paths="123", impl="native")
    _check_rope(got, _rope_grads(inputs, omega, weight, paths="123", impl="naive"), 1e-12, f"E = Ev = {width}")


@needs_native_kernel
def test_native_rope_long_sequence_float32() -> None:
    """T = 4096 with RoPE in the kernel, float32, against recurrent float64 (which rotates beforehand); one head
    (several heads: the float64 test above)."""
    T = 4096
    inputs = make_inputs(1, T, 1, 8, "gates_x10", seed=6)
    omega = caps.rope_frequencies(8).double()
    weight = torch.randn(1, T, 1, 8, dtype=torch.float64)
    got = _rope_grads([x.float() for x in inputs], omega.float(), weight, impl="native")
    _check_rope(got, _rope_grads(inputs, omega, weight, impl="recurrent"), F32_TOL, "rope T4096 float32")


@needs_native_kernel
@pytest.mark.parametrize("paths", [(1, 2, 3), (2,)], ids=str)
def test_native_rope_gradcheck(paths: tuple[int, ...]) -> None:
    """Finite differences through the in-kernel rotation, frequencies included (E = 4, Ev = 5, two segments,
    one head)."""
    gen = torch.Generator().manual_seed(4)
    B, T, H, E, Ev = 1, native.SEGMENT + 7, 1, 4, 5
    q, k, p, g = (torch.randn(B, T, H, E, generator=gen, dtype=torch.float64) for _ in range(4))
    v = torch.randn(B, T, H, Ev, generator=gen, dtype=torch.float64)
    clock = torch.rand(B, T, H, generator=gen, dtype=torch.float64) + 0.1
    omega = torch.tensor([0.3, 0.02], dtype=torch.float64)
    inputs = [x.requires_grad_() for x in (q, k, v, p, g, clock, omega)]

    def attention(*x: torch.Tensor) -> torch.Tensor:
        return native.caps_attention_native(*x[:6], paths, rope_freq=x[6])

    assert torch.autograd.gradcheck(attention, inputs)


@needs_native_kernel
@pytest.mark.parametrize("rope", [False, True], ids=["plain", "rope"])
@pytest.mark.parametrize("mask", [7, 5, 2], ids=["paths123", "paths13", "paths2"])
def test_native_ops_pass_opcheck(mask: int, rope: bool) -> None:
    """The torch.library ops torch.compile sees: schema, fake (shape-only) implementations, autograd
    registration and AOT dispatch with dynamic shapes agree with the real kernel."""
    gen = torch.Generator().manual_seed(2)
    B, T, H, E, Ev = 2, native.SEGMENT + 5, 2, 4 if rope else 3, 5
    q, k = (torch.randn(B, T, H, E, generator=gen, dtype=torch.float64, requires_grad=True) for _ in range(2))
    v = torch.randn(B, T, H, Ev, generator=gen, dtype=torch.float64, requires_grad=True)
    p, g = (torch.randn(B, T, H, E, generator=gen, dtype=torch.float64, requires_grad=True) for _ in range(2))
    clock = (torch.rand(B, T, H, generator=gen, dtype=torch.float64) + 0.1).requires_grad_()
    angle = torch.rand(T, E // 2, generator=gen, dtype=torch.float64) * 6.0
    cos, sin = (angle.cos(), angle.sin()) if rope else (q.new_empty(0), q.new_empty(0))
    if rope:
        cos, sin = cos.requires_grad_(), sin.requires_grad_()
    torch.library.opcheck(native.native_forward, (q, k, v, p, g, clock, cos, sin, mask, native.SEGMENT))


@needs_native_kernel
def test_native_accepts_strided_views() -> None:
    """Inputs that are views of one projection output (time stride > H E) give the contiguous result
    (up to float32 rounding: torch's vectorised and strided elementwise loops round differently)."""
    gen = torch.Generator().manual_seed(1)
    B, T, H, E = 2, 70, 2, 4
    packed = torch.randn(B, T, 5 * H * E, generator=gen)
    q, k, v, p, g = (x.unflatten(-1, (H, E)) for x in packed.split(H * E, dim=-1))
    clock = torch.rand(B, T, H, generator=gen) + 0.1
    strided = caps_attention(q, k, v, p, g, clock, impl="native")
    contiguous = caps_attention(*(x.contiguous() for x in (q, k, v, p, g)), clock, impl="native")
    assert_close_to_scale(strided, contiguous, 1e-6, "strided vs contiguous inputs")


@needs_native_kernel
def test_native_rejects_bad_shapes_clearly() -> None:
    q, none = torch.randn(1, 5, 2, 4), torch.empty(0)
    with pytest.raises(RuntimeError, match="caps_cpu_kernel: v must be"):
        native.load().forward(q, q, torch.randn(1, 4, 2, 4), q, q, torch.ones(1, 5, 2), none, none, 7, 64)
    with pytest.raises(RuntimeError, match=r"RoPE tables cos, sin must be contiguous \[T, E / 2\]"):
        native.load().forward(q, q, q, q, q, torch.ones(1, 5, 2), torch.ones(5, 4), torch.ones(5, 4), 7, 64)
    with pytest.raises(ValueError, match="non-empty subset of paths"):
        native.caps_attention_native(q, q, q, q, q, torch.ones(1, 5, 2), ())


@needs_native_kernel
def test_layer_auto_is_native_on_cpu_and_matches_chunked() -> None:
    torch.manual_seed(0)
    layer = CAPSAttention(32, 4)
    assert resolve_impl(layer.impl, torch.device("cpu")) == "native"
    x = torch.randn(3, 150, 32, requires_grad=True)
    out = layer(x)
    (grad_auto,) = torch.autograd.grad(out.square().sum(), x)
    layer.impl = "chunked"
    ref = layer(x)
    (grad_ref,) = torch.autograd.grad(ref.square().sum(), x)
    assert_close_to_scale(out, ref, F32_TOL, "layer auto (native) vs chunked")
    assert_close_to_scale(grad_auto, grad_ref, F32_TOL, "layer input gradient")


def test_auto_falls_back_to_chunked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(native, "available", lambda: False)
    assert resolve_impl("auto", torch.device("cpu")) == "chunked"
    assert resolve_impl("auto", torch.device("meta")) == "chunked"
    assert resolve_impl("naive", torch.device("cpu")) == "naive"


def test_auto_without_the_kernel_file(monkeypatch: pytest.MonkeyPatch) -> None:
    """A layers/caps/ copied without native.py: auto is chunked, native says what is missing."""
    monkeypatch.setattr(dispatch, "native_kernel", None)
    assert resolve_impl("auto", torch.device("cpu")) == "chunked"
    with pytest.raises(ValueError, match="native.py is not installed"):
        resolve_impl("native", torch.device("cpu"))


def test_native_switch_off_by_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(native.ENV_SWITCH, "0")
    assert native.disabled_reason() == f"{native.ENV_SWITCH}=0"


def test_native_on_other_devices_is_an_error() -> None:
    with pytest.raises(ValueError, match="is the CPU kernel"):
        resolve_impl("native", torch.device("cuda"))


def test_stale_build_lock_is_cleared(tmp_path) -> None:
    """A lock left by a killed build would make torch wait forever: old locks go, fresh ones stay."""
    lock = tmp_path / "lock"
    lock.touch()
    assert not native.clear_stale_lock(tmp_path, max_age_s=600)
    assert lock.exists()
    old = lock.stat().st_mtime - 3600
    os.utime(lock, (old, old))
    assert native.clear_stale_lock(tmp_path, max_age_s=600)
    assert not lock.exists()
    assert not native.clear_stale_lock(tmp_path)


def test_a_fresh_lock_left_by_a_killed_process_is_removed_under_the_build_guard(tmp_path) -> None:
    """Holding the guard, no other process builds: torch's lock file, however fresh, is stale."""
    lock = tmp_path / "lock"
    lock.touch()
    with native.build_guard(tmp_path):
        assert not lock.exists()
    assert (tmp_path / native.BUILD_GUARD).exists()


def test_the_build_guard_waits_for_a_live_holder_and_not_for_a_dead_one(tmp_path) -> None:
    import subprocess
    import sys

    released = tmp_path / "released"
    holder = ("import fcntl, sys, time\n"
              f"f = open({str(tmp_path / native.BUILD_GUARD)!r}, 'a'); fcntl.flock(f, fcntl.LOCK_EX)\n"
              "print('held', flush=True); time.sleep(1.0)\n"
              f"open({str(released)!r}, 'w').close()\n")
    process = subprocess.Popen([sys.executable, "-c", holder], stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline().strip() == "held"
    (tmp_path / "lock").touch()  # the live holder's build lock: must survive until the holder is done
    with native.build_guard(tmp_path):
        assert released.exists()
    process.wait()
    # A holder killed while it builds releases the flock with its death: the next builder does not wait.
    process = subprocess.Popen([sys.executable, "-c", holder.replace("time.sleep(1.0)", "time.sleep(600)")],
                               stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline().strip() == "held"
    process.kill()
    process.wait()
    (tmp_path / "lock").touch()
    with native.build_guard(tmp_path):
        assert not (tmp_path / "lock").exists()


def test_build_directory_names_the_torch_version(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(tmp_path))
    directory = native.build_directory("caps_cpu_kernel_x")
    assert directory.parent == tmp_path
    assert torch.__version__.replace("+", "_") in directory.name


def test_max_head_dim_matches_the_cpp_bound() -> None:
    """MAX_HEAD_DIM (Python) and kMaxHeadDim (the .cpp's stack-array bound) are one limit."""
    found = re.findall(r"constexpr int64_t kMaxHeadDim = (\d+);", native.SOURCE.read_text())
    assert found == [str(native.MAX_HEAD_DIM)]


WIDE = 2 * (native.MAX_HEAD_DIM + 8)  # two heads just past the native kernel's limit


def test_explicit_native_rejects_wide_heads_up_front() -> None:
    """--caps_impl native with heads wider than MAX_HEAD_DIM fails at construction, in one line naming
    the limit and the fix (not with a RuntimeError from the C++ kernel at the first step)."""
    with pytest.raises(ValueError, match=r"head width 264 exceeds .* limit of 256 \(MAX_HEAD_DIM.*use --caps_impl "
                                         r"auto or chunked") as err:
        CAPSAttention(WIDE, 2, impl="native")
    assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match="MAX_HEAD_DIM"):
        resolve_impl("native", torch.device("cpu"), head_dim=native.MAX_HEAD_DIM + 1)
    q = torch.randn(1, 3, 1, native.MAX_HEAD_DIM + 1)
    with pytest.raises(ValueError, match="MAX_HEAD_DIM"):
        native.caps_attention_native(q, q, q, q, q, torch.ones(1, 3, 1), (1, 2, 3))


def test_auto_runs_wide_heads_on_the_chunked_kernel_and_logs_once(caplog: pytest.LogCaptureFixture) -> None:
    dispatch._log_wide_head_fallback.cache_clear()
    torch.manual_seed(0)
    with caplog.at_level(logging.INFO, logger=caps.logger.name):
        layers = [CAPSAttention(WIDE, 2) for _ in range(2)]
        x = torch.randn(1, 5, WIDE)
        outs = [layer(x) for layer in layers]
    lines = [r.getMessage() for r in caplog.records if "MAX_HEAD_DIM" in r.getMessage()]
    assert lines == ["CAPS: head width 264 exceeds the native CPU kernel's limit of 256 (MAX_HEAD_DIM in "
                     "layers/caps/native.py); --caps_impl auto uses the chunked kernel"]
    assert resolve_impl("auto", torch.device("cpu"), head_dim=WIDE // 2) == "chunked"
    layers[0].impl = "chunked"
    assert_close_to_scale(outs[0], layers[0](x), 0.0, "auto vs chunked on wide heads")


def test_a_layer_built_on_the_meta_device_loads_no_kernel() -> None:
    """A shapes-only build (exp.model_flags.flags_read) never runs, so it neither builds nor loads the kernel."""
    before = native.load.cache_info()
    with torch.device("meta"):
        dispatch.prepare_native_kernel("auto", 16)
        CAPSAttention(d_model=32, n_heads=2)
    assert native.load.cache_info() == before
