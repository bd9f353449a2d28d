"""`compare.grid.efficiency.measure`: FLOPs of a CAPS model are the same whichever kernel it runs (torch's
FLOP counter cannot see inside the native C++ kernel or fla-core's Triton kernel, so they are counted on the
chunked one)."""

from __future__ import annotations

import pytest

from compare.grid.efficiency import measure


@pytest.mark.parametrize("impl", ["auto", "native", "fla"])
def test_caps_flops_do_not_depend_on_the_kernel(make_configs, impl: str) -> None:
    base = dict(model="CAPS", seq_len=24, pred_len=12, enc_in=3, dec_in=3, c_out=3, e_layers=1, d_model=0,
                n_heads=2, batch_size=2)
    chunked = measure(make_configs(**base, caps_impl="chunked"), timing=False)
    other = measure(make_configs(**base, caps_impl=impl), timing=False)
    assert chunked.flops > 0
    assert other.flops == chunked.flops
    assert other.params == chunked.params


def test_softmax_caps_under_auto_is_counted_on_its_naive_kernel(make_configs) -> None:
    """Softmax attention has only the naive kernel (auto selects it): same FLOPs as naive named explicitly."""
    base = dict(model="CAPS", seq_len=24, pred_len=12, enc_in=3, dec_in=3, c_out=3, e_layers=1, d_model=0,
                n_heads=2, batch_size=2, caps_attn="softmax")
    naive = measure(make_configs(**base, caps_impl="naive"), timing=False)
    auto = measure(make_configs(**base, caps_impl="auto"), timing=False)
    assert naive.flops > 0 and auto.flops == naive.flops
