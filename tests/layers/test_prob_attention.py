"""ProbSparse attention (Informer) against its slow reference, against full attention when every query
is active, and on a hand-built case where the sparsity measurement's ranking is known."""

from __future__ import annotations

import math

import pytest
import torch
from numerics import assert_close

from layers.SelfAttention_Family import (
    FullAttention,
    ProbAttention,
    eval_sample_seed,
    prob_sparse_attention,
    prob_sparse_attention_reference,
    prob_sparse_sizes,
)
from tests.layers.test_head_layout import tslib_reference

KERNELS = {"fast": prob_sparse_attention, "reference": prob_sparse_attention_reference}




def qkv(b: int, q_len: int, k_len: int, h: int, e: int, dtype=torch.float64, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    shapes = ((b, q_len, h, e), (b, k_len, h, e), (b, k_len, h, e + 1))  # values wider: D ≠ E on purpose
    return [torch.randn(s, generator=g, dtype=dtype).requires_grad_() for s in shapes]


@pytest.mark.parametrize(
    ("b", "q_len", "k_len", "h", "e", "causal"),
    [(1, 1, 1, 1, 4, True), (2, 63, 63, 2, 8, True), (2, 97, 97, 3, 4, False), (2, 63, 97, 2, 8, False),
     (1, 97, 2, 2, 4, False)],
    ids=lambda v: str(v),
)
def test_fast_equals_reference_outputs_and_gradients(b, q_len, k_len, h, e, causal) -> None:
    n_sample, n_top = prob_sparse_sizes(q_len, k_len, factor=2)
    sample_index = torch.randint(k_len, (q_len, n_sample), generator=torch.Generator().manual_seed(1))
    results = {}
    for name, kernel in KERNELS.items():
        q, k, v = qkv(b, q_len, k_len, h, e)
        res = kernel(q, k, v, sample_index, n_top, 1 / math.sqrt(e), causal)
        (res.out * torch.linspace(-1, 1, res.out.numel(), dtype=res.out.dtype).view_as(res.out)).sum().backward()
        order = res.top_index.sort(dim=-1)
        weights = torch.gather(res.top_weights, 2, order.indices.unsqueeze(-1).expand(-1, -1, -1, k_len))
        results[name] = (res.out, order.values, weights, q.grad, k.grad, v.grad)
    fast, ref = results["fast"], results["reference"]
    assert torch.equal(fast[1], ref[1])
    for mine, theirs in zip(fast[:1] + fast[2:], ref[:1] + ref[2:], strict=True):
        assert_close(mine, theirs)


@pytest.mark.parametrize("causal", [True, False], ids=["causal", "full"])
@pytest.mark.parametrize("length", [1, 7, 63], ids=lambda n: f"T{n}")
def test_every_query_active_equals_full_attention(causal: bool, length: int) -> None:
    q, k, v = qkv(2, length, length, 2, 8)
    # factor ≥ L / ⌈ln L⌉ makes u = L: every query gets its full softmax row.
    prob = ProbAttention(causal, factor=length, attention_dropout=0.0, output_attention=True).train()
    full = FullAttention(causal, attention_dropout=0.0, output_attention=True)
    out, attn = prob(q, k, v, None)
    ref_out, ref_attn = full(q, k, v, None)
    assert_close(out, ref_out)
    assert_close(attn, ref_attn)
    grads = torch.autograd.grad(out.pow(2).sum(), (q, k, v))
    ref_grads = torch.autograd.grad(ref_out.pow(2).sum(), (q, k, v))
    for mine, theirs in zip(grads, ref_grads, strict=True):
        assert_close(mine, theirs)


def test_cross_attention_every_query_active_equals_full_attention() -> None:
    q, k, v = qkv(2, 37, 11, 2, 8)
    out, _ = ProbAttention(False, factor=37, attention_dropout=0.0)(q, k, v, None)
    assert_close(out, FullAttention(False, attention_dropout=0.0)(q, k, v, None)[0])


def test_top_u_are_the_queries_with_the_largest_sparsity_measurement() -> None:
    # Keys are the basis vectors, so q·k_j = q_j and M̄(q) = max_j q_j − Σ_j q_j / 4.
    keys = torch.eye(4, dtype=torch.float64).view(1, 4, 1, 4)  # [B, S, H, E]
    values = torch.arange(12, dtype=torch.float64).view(1, 4, 1, 3)
    queries = torch.tensor([
        [5.0, 0.0, 0.0, 0.0],  # M̄ = 3.75: one dominant key
        [1.0, 1.0, 1.0, 1.0],  # M̄ = 0: uniform, the lazy case
        [0.0, 3.0, 0.0, 0.0],  # M̄ = 2.25
        [4.0, 4.0, 4.0, 4.0],  # M̄ = 0: a larger max, but no more peaked
        [0.5, 0.0, 0.0, 0.0],  # M̄ = 0.375
    ], dtype=torch.float64).view(1, 5, 1, 4)
    every_key = torch.arange(4).expand(5, 4)
    for kernel in KERNELS.values():
        res = kernel(queries, keys, values, every_key, 2, 1.0, False)
        assert sorted(res.top_index.flatten().tolist()) == [0, 2]
        mean_v = values[0, :, 0].mean(dim=0)
        for lazy in (1, 3, 4):
            assert_close(res.out[0, lazy, 0], mean_v)
        for active in (0, 2):
            weights = torch.softmax(queries[0, active, 0] @ keys[0, :, 0].T, dim=0)
            assert_close(res.out[0, active, 0], weights @ values[0, :, 0])


def test_causal_lazy_queries_take_the_cumulative_sum_of_values() -> None:
    q, k, v = qkv(1, 50, 50, 2, 4)
    res = prob_sparse_attention(q, k, v, torch.randint(50, (50, 12)), 5, 0.5, True)
    active = torch.zeros(1, 2, 50, dtype=torch.bool).scatter(2, res.top_index, True)
    cumsum = v.transpose(1, 2).cumsum(dim=2)  # [B, H, L, D]
    out = res.out.transpose(1, 2)
    assert_close(out[~active], cumsum[~active])
    # Active causal rows put no weight on later keys.
    later = torch.arange(50) > res.top_index.unsqueeze(-1)
    assert (res.top_weights[later] == 0).all()


def test_sizes_follow_c_ln_l() -> None:
    assert prob_sparse_sizes(96, 96, 3) == (15, 15)  # 3·⌈ln 96⌉ = 3·5
    assert prob_sparse_sizes(144, 49, 3) == (12, 15)  # U from the keys, u from the queries
    assert prob_sparse_sizes(5, 5, 3) == (5, 5)  # clamped to the lengths
    assert prob_sparse_sizes(1, 1, 3) == (1, 1)  # ⌈ln 1⌉ = 0 would leave nothing to rank


def test_gradients_are_finite_and_reach_queries_keys_values() -> None:
    q, k, v = qkv(2, 96, 96, 4, 16, dtype=torch.float32)
    out, _ = ProbAttention(True, factor=3).train()(q, k, v, None)
    out.square().mean().backward()
    for t in (q, k, v):
        assert torch.isfinite(t.grad).all() and t.grad.abs().sum() > 0


def test_eval_mode_samples_reproducibly_and_training_uses_the_global_stream() -> None:
    q, k, v = qkv(1, 200, 200, 2, 4)
    attn = ProbAttention(False, factor=1).eval()
    with torch.no_grad():
        assert torch.equal(attn(q, k, v, None)[0], attn(q, k, v, None)[0])
    attn.train()
    torch.manual_seed(3)
    first = attn.sample_keys(200, 200, 6, torch.device("cpu"))
    torch.manual_seed(3)
    assert torch.equal(first, torch.randint(200, (200, 6)))


@pytest.mark.parametrize(("q_len", "k_len", "h", "causal"), [(63, 63, 2, True), (97, 97, 3, False), (40, 24, 8, False)],
                         ids=lambda v: str(v))
def test_tslib_layout_is_the_reference_context_read_as_tslib_views_it(q_len: int, k_len: int, h: int,
                                                                     causal: bool) -> None:
    n_sample, n_top = prob_sparse_sizes(q_len, k_len, factor=2)
    sample_index = torch.randint(k_len, (q_len, n_sample), generator=torch.Generator().manual_seed(1))
    q, k, v = qkv(2, q_len, k_len, h, 4)
    ref = prob_sparse_attention_reference(q, k, v, sample_index, n_top, 0.5, causal).out  # [B, L, H, D]
    expected = tslib_reference(ref.detach().transpose(1, 2).numpy(), time_dim=2)  # TSLib's [B, L, H·D] rows
    fast = prob_sparse_attention(q, k, v, sample_index, n_top, 0.5, causal, output_layout="tslib").out
    assert fast.shape == ref.shape
    assert_close(fast.detach().reshape(2, q_len, -1), torch.from_numpy(expected))
    assert not torch.allclose(fast, ref)  # the layouts really differ at these sizes


def test_tslib_layout_lets_early_steps_of_causal_attention_read_later_ones() -> None:
    # Every query active (full causal softmax): step 0's output depends on values 0 … H-1 under TSLib's
    # layout (row 0 is head 0 at steps 0 … H-1), on value 0 alone per step.
    length, h = 16, 4
    index = torch.arange(length).repeat(length, 1)
    reach = {}
    for layout in ("per_step", "tslib"):
        q, k, v = qkv(1, length, length, h, 4)
        out = prob_sparse_attention(q, k, v, index, length, 0.5, True, output_layout=layout).out
        out[:, 0].sum().backward()
        reach[layout] = v.grad[0].abs().sum(dim=(1, 2)).nonzero().flatten().tolist()  # value steps reached
    assert reach["per_step"] == [0]
    assert reach["tslib"] == [0, 1, 2, 3]


def test_global_eval_sampling_draws_from_the_global_stream_as_tslib() -> None:
    q, k, v = qkv(1, 50, 50, 2, 4)
    assert eval_sample_seed("fixed") == 0 and eval_sample_seed("global") is None
    for seed, advances in ((eval_sample_seed("fixed"), False), (eval_sample_seed("global"), True)):
        attn = ProbAttention(False, factor=1, eval_sample_seed=seed).eval()
        state = torch.get_rng_state()
        with torch.no_grad():
            attn(q, k, v, None)
        assert (not torch.equal(state, torch.get_rng_state())) == advances
    with pytest.raises(ValueError, match="--prob_eval_sampling"):
        eval_sample_seed("seeded")


def test_bad_inputs_raise_clear_errors() -> None:
    q, k, v = qkv(1, 8, 6, 1, 4)
    with pytest.raises(ValueError, match="as many queries as keys"):
        ProbAttention(True, factor=1)(q, k, v, None)
    with pytest.raises(ValueError, match="attn_mask=None"):
        ProbAttention(False, factor=1)(q, k, v, torch.zeros(1, 1, 8, 6, dtype=torch.bool))
    with pytest.raises(ValueError, match="--factor"):
        ProbAttention(False, factor=0)
    with pytest.raises(ValueError, match="--attn_output_layout"):
        ProbAttention(False, factor=1, output_layout="heads")
