"""torch.compile readiness of the CAPS layer: dynamo traces the whole layer (RoPE, path features,
the data-dependent fallback as torch.cond) as one graph with no break. Tracing only: no inductor
code generation, so it stays fast on CPU."""

from __future__ import annotations

import torch

from layers.CAPS_Attention import CAPSAttention


def test_layer_traces_as_one_graph_without_breaks() -> None:
    """The default layer (learned RoPE, paths 123, chunked kernel); one case, as tracing takes seconds."""
    torch._dynamo.reset()
    layer = CAPSAttention(32, 4)
    report = torch._dynamo.explain(layer)(torch.randn(2, 70, 32))
    reasons = [str(b.reason).splitlines()[0] for b in report.break_reasons]
    assert (report.graph_count, report.graph_break_count) == (1, 0), reasons
