"""`CAPSAttention.attention_inputs` hands out the kernel inputs that the layer's forward uses (explain
splits the layer's output by path on them), and `path_weights` are the naive kernel's weights."""

from __future__ import annotations

import pytest
import torch
from einops import rearrange

from layers.CAPS_Attention import CAPSAttention, caps_attention, path_weights, rope_rotate


@pytest.mark.parametrize("impl", ["chunked", "naive", "recurrent"])
@pytest.mark.parametrize("rope", ["learned", "none"])
@pytest.mark.parametrize("paths", ["123", "13", "2"])
def test_forward_is_the_kernel_on_attention_inputs(paths, rope, impl):
    torch.manual_seed(0)
    layer = CAPSAttention(24, 2, paths=paths, rope=rope, impl=impl).double().eval()
    x = torch.randn(3, 37, 24, dtype=torch.float64)
    with torch.no_grad():
        inputs = layer.attention_inputs(x)
        o = caps_attention(**inputs, attn=layer.attn, paths=layer.paths, impl=layer.impl, chunk_size=layer.chunk_size)
        expected = layer(x)
        # The paths are additive: one kernel call per path sums to the call with all of them.
        parts = sum(caps_attention(**inputs, paths=(path,), impl=layer.impl) for path in layer.paths)
    torch.testing.assert_close(layer.c_proj(rearrange(o, "b t h e -> b t (h e)")), expected, rtol=0, atol=1e-13)
    torch.testing.assert_close(parts, o, rtol=0, atol=1e-13)


@pytest.mark.parametrize("path", [1, 2, 3])
def test_path_weights_reproduce_the_kernel(path):
    torch.manual_seed(1)
    layer = CAPSAttention(16, 2, impl="chunked").double()
    inputs = layer.attention_inputs(torch.randn(2, 19, 16, dtype=torch.float64))
    q, k = (rope_rotate(inputs[name], inputs["rope_freq"]) for name in ("q", "k"))
    with torch.no_grad():
        weights = path_weights(inputs["p"], inputs["g"], inputs["clock"], (path,))  # [B, H, T, T, E]
        o = torch.einsum("bthe,bihe,bhtie,bihv->bthv", q, k, weights, inputs["v"])
        expected = caps_attention(**inputs, paths=(path,), impl="chunked")
    torch.testing.assert_close(o, expected, rtol=0, atol=1e-13)


def test_official_numerics_has_no_per_path_inputs():
    layer = CAPSAttention(16, 2, numerics="official", impl="chunked")
    with pytest.raises(ValueError, match="--caps_numerics official"):
        layer.attention_inputs(torch.randn(1, 5, 16))
