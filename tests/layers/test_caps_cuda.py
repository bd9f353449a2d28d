"""CAPS on a CUDA device: the chunked kernel against the float64 CPU reference, the model under bf16
autocast, and torch.compile (inductor, CUDA) against eager. Skipped without a GPU (CI has none); run on
a GPU machine with `python -m pytest tests/layers/test_caps_cuda.py tests/exp/test_run_cuda.py`.
"""

from __future__ import annotations

import pytest
import torch

from layers.CAPS_Attention import CAPSAttention, caps_attention
from models.CAPS import Model as CAPS
from tests.layers.test_caps_attention import F32_TOL, check_all, make_inputs, run_with_grads
from tests.layers.test_caps_fla import needs_fla

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device (none visible to torch)")
CUDA = torch.device("cuda")


@pytest.fixture(autouse=True)
def _exact_float32_matmuls():
    """TF32 would change float32 matmul results by ~1e-3; these checks compare full float32."""
    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    yield
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


@pytest.mark.parametrize("regime", ["default", "gates_x10", "gates_zero"])
@pytest.mark.parametrize("T", [97, 816, 4096], ids=lambda t: f"T{t}")
def test_chunked_on_cuda_matches_float64_reference(regime: str, T: int) -> None:
    """float32 chunked kernel on the GPU vs the float64 naive kernel on the CPU: outputs and all grads."""
    inputs = make_inputs(2, T, 2, 8, regime, dtype=torch.float64, seed=T)
    weight = torch.randn(2, T, 2, 8, dtype=torch.float64)
    expected = run_with_grads(inputs, weight, impl="naive")
    o, grads = run_with_grads([x.float().to(CUDA) for x in inputs], weight.float().to(CUDA), impl="chunked")
    check_all((o.cpu(), [g.cpu() for g in grads]), expected, F32_TOL, f"cuda T={T} {regime}")


def recipe_model(make_configs, pred_len: int = 96, **flags) -> CAPS:
    """The CAPS_ETTh1.sh model (official width rule, 3 layers, 4 heads) on the GPU, plus run.py `flags`."""
    configs = make_configs(model="CAPS", seq_len=96, label_len=0, pred_len=pred_len, enc_in=7, dec_in=7, c_out=7,
                           d_model=0, n_heads=4, e_layers=3, dropout=0.0, time_emb_dim=4, **flags)
    return CAPS(configs).to(CUDA)


def model_inputs(batch: int, pred_len: int = 96) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(batch, 96, 7, generator=gen)
    marks = torch.rand(batch, 96, 4, generator=gen) - 0.5
    dec = torch.zeros(batch, pred_len, 7)
    dec_marks = torch.rand(batch, pred_len, 4, generator=gen) - 0.5
    return tuple(t.to(CUDA) for t in (x, marks, dec, dec_marks))


@pytest.mark.parametrize("impl", ["chunked", pytest.param("fla", marks=needs_fla)])
def test_model_under_bf16_autocast_is_finite_and_close_to_float32(make_configs, impl: str) -> None:
    """The recipe's bf16 autocast: forecast within bf16 rounding of float32, finite gradients (torch's chunked
    kernel and fla-core's Triton kernel)."""
    model = recipe_model(make_configs, caps_impl=impl)
    inputs = model_inputs(16)
    with torch.no_grad():
        reference = model(*inputs)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        forecast = model(*inputs)
    forecast.float().square().mean().backward()
    rel = ((forecast.float() - reference).norm() / reference.norm()).item()
    assert rel < 2e-2, f"bf16 forecast differs from float32 by {rel:.2e} (relative L2)"
    bad = [n for n, prm in model.named_parameters() if prm.grad is not None and not torch.isfinite(prm.grad).all()]
    assert not bad, f"non-finite gradients under bf16 autocast: {bad}"


def test_compiled_layer_matches_eager_on_cuda() -> None:
    """torch.compile (inductor) of the layer vs eager: output and input gradient."""
    torch._dynamo.reset()
    layer = CAPSAttention(32, 4).to(CUDA)
    x = torch.randn(4, 200, 32, device=CUDA)
    compiled = torch.compile(layer, fullgraph=True)
    outputs = []
    for module in (layer, compiled):
        xi = x.clone().requires_grad_()
        out = module(xi)
        out.square().sum().backward()
        outputs.append((out.detach(), xi.grad))
    (o_e, g_e), (o_c, g_c) = outputs
    assert (o_c - o_e).abs().max() <= 1e-4 * o_e.abs().max()
    assert (g_c - g_e).abs().max() <= 1e-4 * g_e.abs().max()


def test_bf16_inputs_stay_finite_with_extreme_gates_on_cuda() -> None:
    """bf16 q/k/v with gates x10: the kernel upcasts, so decays far below bf16's range stay finite."""
    inputs = make_inputs(2, 816, 2, 8, "gates_x10", dtype=torch.float32, seed=3)
    out = caps_attention(*[x.to(CUDA, torch.bfloat16) for x in inputs[:5]], inputs[5].to(CUDA))
    reference = caps_attention(*[x.to(CUDA) for x in inputs])
    assert out.dtype == torch.bfloat16 and torch.isfinite(out).all()
    rel = ((out.float() - reference).norm() / reference.norm()).item()
    assert rel < 2e-2, f"bf16 inputs: relative L2 error {rel:.2e}"
