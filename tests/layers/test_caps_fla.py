"""impl="fla": CAPS as one gated-linear-attention call of fla-core's `chunk_gla`.

On the CPU (CI): the reference gated linear attention in chunk_gla's convention against the chunked
kernel's primitive, the derivation (paths concatenated into one GLA call, `caps_attention_fla`) against
the naive kernel in float64 with that reference standing in for chunk_gla, and the dispatch rules
(fallback with one log line, auto on CUDA, clear errors). On a CUDA machine with fla-core installed:
the Triton kernel itself, float32 against the float64 reference up to T = 16 384 in every gate regime,
gradients included (the model under bf16 autocast with fla: tests/layers/test_caps_cuda.py). Run there as
    TRITON_F32_DEFAULT=ieee python -m pytest tests/layers/test_caps_fla.py tests/layers/test_caps_cuda.py
(Triton's float32 dots default to TF32, ~1e-3 relative; `ieee` checks the algorithm at full float32).
"""

from __future__ import annotations

import logging

import pytest
import torch

import layers.CAPS_Attention as caps
from layers.caps import dispatch, fla
from layers.CAPS_Attention import caps_attention
from tests.layers.test_caps_attention import (
    F32_TOL,
    F64_TOL,
    REGIMES,
    _kernel_grads,
    check_all,
    make_inputs,
    run_with_grads,
)
from tests.numerics import assert_close_to_scale

CPU, CUDA = torch.device("cpu"), torch.device("cuda")


def _gla_with_chunk_gla_limits(q, k, v, g, scale=None):
    """The reference GLA, refusing what chunk_gla cannot compile (key or value width < 16: its backward's
    tl.dot needs an inner dimension >= 16) and the layouts it does not take (non-contiguous inputs)."""
    if min(k.shape[-1], v.shape[-1]) < caps.FLA_MIN_WIDTH:
        raise AssertionError(f"chunk_gla cannot compile widths K={k.shape[-1]}, V={v.shape[-1]} (< 16)")
    assert all(x.is_contiguous() for x in (q, k, v, g)), "chunk_gla needs contiguous inputs"
    return caps.gated_linear_attention_recurrent(q, k, v, g, scale=scale)


@pytest.fixture
def reference_gla(monkeypatch: pytest.MonkeyPatch) -> None:
    """chunk_gla replaced by the step-by-step reference (same convention and width limits), as if fla-core
    imported."""
    monkeypatch.setattr(fla, "_FLA_IMPORT", [(_gla_with_chunk_gla_limits, None)])


@pytest.fixture
def no_fla(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fla, "_FLA_IMPORT", [(None, "fla-core does not import (ModuleNotFoundError: test)")])


@pytest.mark.parametrize("regime", list(REGIMES))
def test_reference_gla_is_the_chunked_primitive(regime: str) -> None:
    """S_t = diag(exp(g_t)) S_{t-1} + k_t^T v_t, o_t = q_t S_t equals the chunked kernel's decayed linear
    attention sum_i q_t k_i exp(L_t - L_i) v_i (float64; gates x10 reach decays of exp(-1e3))."""
    q, k, v, p, g, _ = make_inputs(2, 75, 3, 5, regime, seed=4)
    ell = -torch.nn.functional.softplus(g)
    o, state = caps.gated_linear_attention_recurrent(q, k, v, ell, scale=1.0)
    q_, k_, v_, ell_ = (x.transpose(1, 2) for x in (q, k, v, ell))  # [B, H, T, E], the chunked kernel's layout
    expected = caps.decayed_linear_attention_chunked(q_, k_, v_, ell_, chunk_size=16).transpose(1, 2)
    assert_close_to_scale(o, expected, F64_TOL, "reference GLA vs chunked primitive")
    assert state.shape == (2, 3, 5, 5)
    assert_close_to_scale(caps.gated_linear_attention_recurrent(q, k, v, ell)[0], o / 5 ** 0.5, F64_TOL, "default scale")


@pytest.mark.parametrize("regime", list(REGIMES))
@pytest.mark.parametrize("paths", [(1, 2, 3), (1,), (2,), (3,), (1, 3), ()], ids=lambda p: "paths-" + "".join(map(str, p)))
def test_one_gla_call_is_caps(paths: tuple[int, ...], regime: str, reference_gla: None) -> None:
    """The derivation of issue 18: queries [q/Z, q, q/sum clock], keys [k e^(pt-m), k, k clock], log gates
    [m_{t-1} - m_t, -softplus(g) clock, 0] in one GLA call = the paper's three paths (naive kernel),
    outputs and every gradient (RoPE frequencies included), float64."""
    inputs = make_inputs(2, 97, 2, 6, regime, seed=7)
    omega = caps.rope_frequencies(6).double() * 1.3
    weight = torch.randn(2, 97, 2, 6, generator=torch.Generator().manual_seed(8), dtype=torch.float64)
    ref = _kernel_grads(caps.CAPS_KERNELS["naive"], inputs, omega, weight, paths)
    got = _kernel_grads(caps.CAPS_KERNELS["fla"], inputs, omega, weight, paths)
    assert_close_to_scale(got[0], ref[0], F64_TOL, "fla form output")
    floor = max(g.abs().max().item() for g in ref[1])
    for label, a, b in zip("q k v p g clock omega".split(), got[1], ref[1], strict=True):
        assert_close_to_scale(a, b, F64_TOL, f"fla form grad {label}", scale_floor=floor)


def _float64_reference(inputs: list[torch.Tensor], weight: torch.Tensor, T: int, device: torch.device = CPU):
    """The naive kernel on the CPU up to T = 816; beyond, the chunked kernel in float64 on `device` (tested
    equal to naive at 1e-12 in float64, tests/layers/test_caps_attention.py) since [T, T, E] does not fit."""
    if T <= 816:
        return run_with_grads(inputs, weight, impl="naive")
    o, grads = run_with_grads([x.to(device) for x in inputs], weight.to(device), impl="chunked")
    return o.cpu(), [g.cpu() for g in grads]


@pytest.mark.parametrize(("T", "regime"), [(T, r) for T in (97, 700) for r in REGIMES] + [(4096, "gates_x10")],
                         ids=lambda x: f"T{x}" if isinstance(x, int) else x)
def test_one_gla_call_float32_matches_float64(T: int, regime: str, reference_gla: None) -> None:
    """The features in float32 (path 1's normaliser from the branch-free scan the fla kernel uses) against
    the float64 naive kernel (chunked beyond T = 816): outputs and gradients within 1e-5, the GLA itself
    the float32 reference. T = 4 096 with gates x10 is where fla's own kernel missed the bar on an H200
    (a Clock gradient at 1.66e-5, 2026-11-27); with the same float32 features and the step-by-step GLA
    that gradient stays inside it (3.7e-6 on these inputs, 6.9e-7 on the CUDA test's B = 2 inputs)."""
    inputs = make_inputs(1, T, 2, 8, regime, seed=T)
    weight = torch.randn(1, T, 2, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(T))
    expected = _float64_reference(inputs, weight, T)
    leaves = [x.float().requires_grad_() for x in inputs]
    o = caps.CAPS_KERNELS["fla"](*leaves, (1, 2, 3))
    (o * weight.float()).sum().backward()
    check_all((o.detach(), [x.grad for x in leaves]), expected, F32_TOL, f"fla form float32 T={T} {regime}")


def test_fla_falls_back_to_chunked_with_one_log_line(no_fla: None, caplog: pytest.LogCaptureFixture) -> None:
    """No fla-core (or no GPU): --caps_impl fla runs the chunked kernel, saying so once, with the same result."""
    dispatch._log_fla_fallback.cache_clear()
    inputs = make_inputs(1, 40, 2, 4)
    with caplog.at_level(logging.INFO, logger=caps.logger.name):
        outs = [caps_attention(*inputs, impl="fla") for _ in range(3)]
        assert caps.resolve_impl("fla", CUDA) == "chunked"
    lines = [r.getMessage() for r in caplog.records if "--caps_impl fla" in r.getMessage()]
    assert len(lines) == 2, lines  # one per reason: no CUDA here, fla-core missing on the CUDA device
    assert "not on cpu" in lines[0] and "running the torch chunked kernel" in lines[0]
    assert "ModuleNotFoundError" in lines[1]
    assert_close_to_scale(outs[0], caps_attention(*inputs, impl="chunked"), 0.0, "fallback is the chunked kernel")


def test_narrow_heads_are_padded_for_chunk_gla(reference_gla: None) -> None:
    """CAPS's head width 8 (key widths 8/16/24 for 1/2/3 paths, value width 8) reaches chunk_gla zero-padded
    to width 16 and comes back at width 8, equal to the naive kernel (float64)."""
    inputs = make_inputs(2, 33, 2, 8, "default", seed=3)
    for paths in [(), (1,), (1, 2, 3)]:
        out = caps.CAPS_KERNELS["fla"](*inputs, paths)
        assert out.shape == inputs[2].shape
        assert_close_to_scale(out, caps.CAPS_KERNELS["naive"](*inputs, paths), F64_TOL, f"padded fla paths={paths}")


def test_auto_picks_fla_on_cuda_only_when_enabled_and_it_imports(reference_gla: None,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    assert caps.resolve_impl("auto", CUDA) == ("fla" if dispatch.FLA_IN_AUTO else "chunked")
    monkeypatch.setattr(dispatch, "FLA_IN_AUTO", True)
    assert caps.resolve_impl("auto", CUDA) == "fla"
    assert caps.resolve_impl("fla", CUDA) == "fla"
    assert caps.resolve_impl("auto", CPU) in ("native", "chunked")
    assert caps.resolve_impl("fla", CPU) == "chunked"
    monkeypatch.setattr(fla, "_FLA_IMPORT", [(None, "missing")])
    assert caps.resolve_impl("auto", CUDA) == "chunked"


def test_fla_errors_are_one_line(no_fla: None, reference_gla: None) -> None:
    """Softmax is not a GLA; the kernel called by name without fla-core says what to install."""
    inputs = make_inputs(1, 8, 1, 2)
    with pytest.raises(ValueError, match="--caps_impl naive"):
        caps.CAPS_KERNELS["fla"](*inputs, (1, 2, 3), attn="softmax")
    with pytest.raises(ValueError, match=r"only has impl='naive'.*got --caps_impl fla"):
        caps.resolve_attn_impl("softmax", "fla")


def test_fla_kernel_without_fla_core_names_the_package(no_fla: None) -> None:
    with pytest.raises(ValueError, match="pip install fla-core"):
        caps.CAPS_KERNELS["fla"](*make_inputs(1, 8, 1, 2), (1, 2, 3))


def test_float64_is_refused_by_fla_and_kept_exact_by_auto(monkeypatch: pytest.MonkeyPatch, reference_gla: None) -> None:
    """Triton computes in float32/bf16: an explicit fla call in float64 is an error, never a silent downcast;
    auto (which would pick fla on CUDA) runs float64 on the chunked kernel."""
    monkeypatch.setattr(dispatch, "fla_unavailable_reason", lambda device: None)
    inputs = make_inputs(1, 8, 1, 2)
    with pytest.raises(ValueError, match="float32/bf16, got float64"):
        caps_attention(*inputs, impl="fla")
    monkeypatch.setattr(dispatch, "resolve_impl", lambda impl, device, head_dim=None: "fla" if impl == "auto" else impl)
    monkeypatch.setitem(caps.CAPS_KERNELS, "fla", None)  # must not be called
    assert_close_to_scale(caps_attention(*inputs, impl="auto"), caps_attention(*inputs, impl="chunked"), 0.0, "auto float64")


def test_layer_accepts_fla_and_runs_on_cpu(make_configs) -> None:
    """run.py's --caps_impl fla on this CPU: the model trains (chunked fallback), no flag ignored."""
    from models.CAPS import Model as CAPS

    configs = make_configs(model="CAPS", seq_len=24, label_len=0, pred_len=8, enc_in=3, dec_in=3, c_out=3,
                           d_model=16, n_heads=2, e_layers=1, caps_impl="fla")
    model = CAPS(configs)
    x, marks = torch.randn(2, 24, 3), torch.rand(2, 24, 4) - 0.5
    out = model(x, marks, torch.zeros(2, 8, 3), torch.rand(2, 8, 4) - 0.5)
    out.square().mean().backward()
    assert out.shape == (2, 8, 3) and all(p.grad is not None for p in model.parameters() if p.requires_grad)


# ---- on a CUDA machine with fla-core: the Triton kernel itself --------------------------------------

def _fla_on_cuda() -> str | None:
    if not torch.cuda.is_available():
        return "needs a CUDA device (none visible to torch)"
    return caps.fla_chunk_gla()[1]


_FLA_REASON = _fla_on_cuda()
needs_fla = pytest.mark.skipif(_FLA_REASON is not None, reason=f"fla-core's Triton kernel cannot run: {_FLA_REASON}")


@needs_fla
@pytest.mark.parametrize("regime", list(REGIMES))
@pytest.mark.parametrize("T", [97, 816, 4096, 16384], ids=lambda t: f"T{t}")
def test_fla_float32_matches_float64_reference(T: int, regime: str) -> None:
    """Issue 18's bar: float32 fla vs float64, outputs and all gradients <= 1e-5 relative."""
    inputs = make_inputs(1 if T > 4096 else 2, T, 2, 8, regime, dtype=torch.float64, seed=T)
    weight = torch.randn(*inputs[2].shape, dtype=torch.float64, generator=torch.Generator().manual_seed(T))
    expected = _float64_reference(inputs, weight, T, CUDA)
    o, grads = run_with_grads([x.float().to(CUDA) for x in inputs], weight.float().to(CUDA), impl="fla")
    check_all((o.cpu(), [g.cpu() for g in grads]), expected, F32_TOL, f"fla T={T} {regime}")


# ---- CAPS_FLA_AUTOTUNE=0: one config per fla kernel (Triton's perf_model / top_k pruning) ------------

class _Config:
    """The parts of triton.Config that Triton's pruning reads."""

    def __init__(self, num_warps: int, num_stages: int, **kwargs: int) -> None:
        self.kwargs, self.num_warps, self.num_stages = kwargs, num_warps, num_stages

    def all_kwargs(self) -> dict:
        return {**self.kwargs, "num_warps": self.num_warps, "num_stages": self.num_stages, "num_ctas": 1}


class _Autotuner:
    def __init__(self, configs: list[_Config]) -> None:
        self.configs, self.perf_model, self.configs_top_k = configs, None, 1.0


def _triton_pick(tuner: _Autotuner, **launch: int) -> list[_Config]:
    """What Triton's Autotuner.prune_configs keeps: the top_k configs by perf_model (int top_k)."""
    ranked = sorted(tuner.configs, key=lambda c: tuner.perf_model(**launch, **c.all_kwargs()))
    return ranked[: tuner.configs_top_k]


def test_limit_fla_autotuning_keeps_one_config_per_kernel() -> None:
    import types

    tiles = _Autotuner([_Config(w, s, BK=bk, BV=bv) for bk in (32, 64) for bv in (64, 128)
                        for w in (2, 4, 8) for s in (2, 3, 4)])
    warps_only = _Autotuner([_Config(w, 3) for w in (1, 2, 8)])
    module = types.SimpleNamespace(kernel_o=types.SimpleNamespace(fn=tiles),  # @triton.heuristics outside
                                   again=tiles, other=warps_only, constant=3, fn_plain=len)
    assert caps.limit_fla_autotuning([module]) == 2
    assert [c.all_kwargs() for c in _triton_pick(tiles, K=24, V=16)] == [
        {"BK": 32, "BV": 64, "num_warps": 4, "num_stages": 2, "num_ctas": 1}]
    picked = _triton_pick(warps_only, BT=64)
    assert len(picked) == 1 and picked[0].num_warps in (2, 8)  # nearest to 4 warps on the log scale


def test_fla_autotune_setting_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(caps.FLA_AUTOTUNE_ENV, raising=False)
    assert fla._fla_autotune_setting() == "1"
    monkeypatch.setenv(caps.FLA_AUTOTUNE_ENV, "off")
    with pytest.raises(ValueError, match=r"CAPS_FLA_AUTOTUNE='off': expected 1 .* or 0"):
        fla._fla_autotune_setting()
