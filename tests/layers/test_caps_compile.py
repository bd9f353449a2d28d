"""torch.compile readiness of the CAPS layer: dynamo traces the whole layer (RoPE, path features,
the chunked kernel's data-dependent fallback as torch.cond, or the native kernel as an opaque op) as one
graph with no break. No inductor code generation, so it stays fast on CPU."""

from __future__ import annotations

import pytest
import torch

from layers.CAPS_Attention import CAPSAttention
from tests.layers.test_caps_attention import F32_TOL, NATIVE, needs_native_kernel
from tests.numerics import assert_close_to_scale


@pytest.mark.parametrize("impl", ["chunked", NATIVE, pytest.param("auto", marks=needs_native_kernel)])
def test_layer_traces_as_one_graph_without_breaks(impl: str) -> None:
    """The default layer (learned RoPE, paths 123); one case per kernel, as tracing takes seconds. On a
    CPU-only machine "auto" traces the native kernel as one opaque op, loaded when the layer was built."""
    torch._dynamo.reset()
    layer = CAPSAttention(32, 4, impl=impl)
    report = torch._dynamo.explain(layer)(torch.randn(2, 70, 32))
    reasons = [str(b.reason).splitlines()[0] for b in report.break_reasons]
    assert (report.graph_count, report.graph_break_count) == (1, 0), reasons
    uses_native = "caps_tslib.native_forward" in report.graphs[0].code
    assert uses_native == (impl != "chunked" and not torch.cuda.is_available())


@needs_native_kernel
def test_compiled_native_layer_matches_eager() -> None:
    """Forward and input/parameter gradients through AOT autograd (the graph inductor would receive)."""
    torch._dynamo.reset()
    torch.manual_seed(0)
    layer = CAPSAttention(32, 4, impl="native")
    x = torch.randn(2, 70, 32, requires_grad=True)
    results = []
    for run in (layer, torch.compile(layer, backend="aot_eager", fullgraph=True)):
        out = run(x)
        results.append((out, *torch.autograd.grad(out.square().sum(), (x, *layer.parameters()))))
    for eager, compiled in zip(*results, strict=True):
        assert_close_to_scale(compiled, eager, F32_TOL, "compiled vs eager")
