"""TimeFilter: TSLib's initial weights for a seed, the neighbour regions and the top-p selection against
direct loops, the whole graph filtration (k-NN pruning, routing, masking, GCN) against a per-node float64
loop, the MS fix, the auxiliary routing loss, the imputation / anomaly / classification heads, and one-line
errors naming the flag."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn as nn

from layers.TimeFilter_layers import mask_topk, patch_graph_masks, top_p_keep
from models.TimeFilter import Model
from tests.models.tslib_reference import assert_tslib_initial_weights

B, L, H, N, P = 2, 12, 5, 3, 4
NODES = N * (L // P)


def configs_for(make_configs, **overrides):
    flags = dict(model="TimeFilter", seq_len=L, label_len=4, pred_len=H, enc_in=N, dec_in=N, c_out=N, d_model=8,
                 n_heads=2, d_ff=12, e_layers=2, patch_len=P, dropout=0.2, alpha=0.25, top_p=0.5, pos=1)
    return make_configs(**{**flags, **overrides})


def tslib_initial_weights(configs, seed: int) -> list[torch.Tensor]:
    """TSLib's draws: patch Linear, per block proj_1, proj_2 (D/heads), gate and noise (nodes → 3, no bias),
    GCN proj, the FFN's two Linears (LayerNorms draw nothing), then the head."""
    torch.manual_seed(seed)
    d, e, nodes = configs.d_model, configs.d_model // configs.n_heads, NODES
    patch = nn.Linear(configs.patch_len, d)
    weights = [patch.weight, patch.bias]
    ones, zeros = torch.ones(d), torch.zeros(d)
    for _ in range(configs.e_layers):
        proj_1, proj_2 = nn.Linear(e, e), nn.Linear(e, e)
        gate, noise = nn.Linear(nodes, 3, bias=False), nn.Linear(nodes, 3, bias=False)
        gcn = nn.Linear(d, d)
        up, down = nn.Linear(d, configs.d_ff), nn.Linear(configs.d_ff, d)
        weights += [proj_1.weight, proj_1.bias, proj_2.weight, proj_2.bias, gate.weight, noise.weight,
                    gcn.weight, gcn.bias, ones, zeros, up.weight, up.bias, down.weight, down.bias, ones, zeros]
    head = nn.Linear(d * (configs.seq_len // configs.patch_len), configs.pred_len)
    return weights + [head.weight, head.bias]


def test_initial_weights_follow_tslib_construction_order(make_configs):
    configs = configs_for(make_configs)
    assert_tslib_initial_weights(lambda: Model(configs), lambda: tslib_initial_weights(configs, seed=2021))


def region_of(i: int, j: int, patches: int) -> int | None:
    """0 spatial (same patch index, other variate), 1 temporal (same variate), 2 otherwise; None for i = j."""
    if i == j:
        return None
    if i % patches == j % patches:
        return 0
    if i // patches == j // patches:
        return 1
    return 2


@pytest.mark.parametrize(("nodes", "n_vars"), [(NODES, N), (1, 1), (7, 7), (6, 1), (10, 2)])
def test_neighbour_regions_match_their_definition(nodes, n_vars):
    masks = patch_graph_masks(nodes, n_vars)
    patches = nodes // n_vars
    for i in range(nodes):
        for j in range(nodes):
            expected = [0.0, 0.0, 0.0]
            region = region_of(i, j, patches)
            if region is not None:
                expected[region] = 1.0
            assert masks[i, :, j].tolist() == expected


def reference_keep(probs: list[float], top_p: float) -> list[float]:
    """Walk the experts from the most to the least probable, keeping each until the sum exceeds top_p."""
    keep = [0.0] * len(probs)
    total = 0.0
    for expert in sorted(range(len(probs)), key=lambda e: -probs[e]):
        keep[expert] = 1.0
        total += probs[expert]
        if total > top_p:
            break
    return keep


@pytest.mark.parametrize("top_p", [0.0, 0.3, 0.5, 0.7, 0.95, 1.0])
def test_top_p_selection_matches_the_walk(top_p):
    probs = torch.softmax(3.0 * torch.randn(40, 5, 3, generator=torch.Generator().manual_seed(0),
                                            dtype=torch.float64), dim=-1)
    exact = torch.tensor([[[0.5, 0.3, 0.2], [0.2, 0.5, 0.3], [0.25, 0.25, 0.5], [1.0, 0.0, 0.0]]],
                         dtype=torch.float64)
    for case in (probs, exact):
        keep = top_p_keep(case, top_p)[0]
        for row, kept in zip(case.reshape(-1, 3).tolist(), keep.reshape(-1, 3).tolist(), strict=True):
            assert kept == reference_keep(row, top_p), (row, top_p)


def test_knn_pruning_zeroes_the_smallest_entries():
    x = torch.randn(2, 3, 9, generator=torch.Generator().manual_seed(0))
    mask = mask_topk(x, 0.25)  # ⌊0.25 · 9⌋ = 2 per row
    for row, kept in zip(x.reshape(-1, 9), mask.reshape(-1, 9), strict=True):
        smallest = set(row.argsort()[:2].tolist())
        assert kept.tolist() == [0.0 if j in smallest else 1.0 for j in range(9)]
    assert torch.equal(mask_topk(x, 0.0), torch.ones_like(x))


def reference_graph_filter(gnn, x: torch.Tensor, alpha: float, n_vars: int) -> torch.Tensor:
    """The module docstring's steps 1-4 node by node (eval mode): x `[B, L, D]` → `[B, L, D]`."""
    learner, moe, gcn = gnn.graph_learner, gnn.graph_learner.mask_moe, gnn.graph_conv
    b_size, nodes, d = x.shape
    heads, e = gnn.n_heads, d // gnn.n_heads
    patches = nodes // n_vars
    values = gcn.proj(x)  # [B, L, D]
    out = torch.zeros_like(x)
    for b in range(b_size):
        for h in range(heads):
            part = slice(h * e, (h + 1) * e)
            left = [learner.proj_1(x[b, i, part]) for i in range(nodes)]
            right = [learner.proj_2(x[b, j, part]) for j in range(nodes)]
            for i in range(nodes):
                row = [torch.nn.functional.gelu(sum(left[i] * right[j])) for j in range(nodes)]
                pruned = set(sorted(range(nodes), key=lambda j: row[j].item())[:int(alpha * nodes)])
                row = [0.0 * a if j in pruned else a for j, a in enumerate(row)]
                logits = [sum(moe.gate.weight[r, j] * row[j] for j in range(nodes)) for r in range(3)]
                top = max(logits)
                weights = [math.exp(v - top) for v in logits]
                # --top_p 0 keeps no region (only the node itself), as in TSLib.
                keep = reference_keep([w / sum(weights) for w in weights], moe.top_p) if moe.top_p else [0.0] * 3
                filtered = [a if j == i or keep[region_of(i, j, patches)] else 0.0 * a for j, a in enumerate(row)]
                exps = [math.exp(a) for a in filtered]
                for j in range(nodes):
                    out[b, i, part] += exps[j] / sum(exps) * values[b, j, part]
    return out


@pytest.mark.parametrize("top_p", [0.0, 0.4, 0.8])
def test_graph_filter_matches_the_node_loop(make_configs, top_p):
    model = Model(configs_for(make_configs, top_p=top_p, e_layers=1)).double().eval()
    gnn = model.backbone.blocks[0].gnn
    x = torch.randn(B, NODES, 8, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    with torch.no_grad():
        out, _ = gnn(x, patch_graph_masks(NODES, N, dtype=torch.float64), 0.25)
        torch.testing.assert_close(out, reference_graph_filter(gnn, x, 0.25, N))


def test_ms_returns_the_target_of_the_multivariate_forecast(make_configs):
    """TSLib sizes TimeFilter's graph by --c_out, which breaks MS (c_out 1 < enc_in); here it is --enc_in."""
    model = Model(configs_for(make_configs)).double().eval()
    target = Model(configs_for(make_configs, c_out=1)).double().eval()
    target.load_state_dict(model.state_dict())
    x = torch.randn(B, L, N, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    with torch.no_grad():
        out = model(x)
        assert out.shape == (B, H, N)
        torch.testing.assert_close(target(x), out[:, :, -1:])
        torch.testing.assert_close(model(3.0 * x + 5.0), 3.0 * out + 5.0, rtol=1e-4, atol=1e-4)


def test_router_learns_only_from_the_auxiliary_loss(make_configs):
    model = Model(configs_for(make_configs, e_layers=1)).double().train()
    x = torch.randn(B, L, N, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    model(x).sum().backward(retain_graph=True)
    gate = model.backbone.blocks[0].gnn.graph_learner.mask_moe.gate.weight
    assert gate.grad is None
    assert model.moe_loss.dim() == 0 and torch.isfinite(model.moe_loss)
    model.moe_loss.backward()
    assert gate.grad.abs().sum() > 0


@pytest.mark.parametrize(
    ("overrides", "flag"),
    [(dict(task_name="zero_shot_forecast"), "--task_name"), (dict(patch_len=5), "--patch_len"),
     (dict(patch_len=0), "--patch_len"), (dict(alpha=1.5), "--alpha"), (dict(top_p=-0.1), "--top_p"),
     (dict(pos=2), "--pos"), (dict(n_heads=3), "--n_heads"), (dict(c_out=N + 1), "--c_out"),
     (dict(e_layers=0), "--e_layers"), (dict(dropout=1.0), "--dropout"),
     (dict(enc_in=3400, dec_in=3400, c_out=3400), "--pos 0")],
    ids=["task", "patch_len-divides", "patch_len-zero", "alpha", "top_p", "pos", "heads", "c_out", "e_layers",
         "dropout", "too-many-nodes"],
)
def test_bad_config_names_the_flag(make_configs, overrides, flag):
    with pytest.raises(ValueError, match=flag):
        Model(configs_for(make_configs, **overrides))


def task_model(make_configs, task: str, num_class: int = 5, **overrides) -> Model:
    configs = configs_for(make_configs, task_name=task, label_len=0, pred_len=0, **overrides)
    configs.num_class = num_class
    return Model(configs)


@pytest.mark.parametrize("task", ["imputation", "anomaly_detection"])
def test_reconstruction_head_maps_each_variate_back_to_the_window(make_configs, task):
    model = task_model(make_configs, task)
    shapes = {name: tuple(p.shape) for name, p in model.named_parameters()}
    assert shapes["head.weight"] == (L, 8 * (L // P)) and shapes["head.bias"] == (L,)
    assert "projection.weight" not in shapes


def test_classification_head_has_tslib_shape(make_configs):
    """TSLib: projection Linear(D·(⌊(L·N − P)/P⌋ + 1) → num_class) over all patch nodes, no `head`; its
    JapaneseVowels shapes (12 variates, 29 steps) build with --c_out left at 7 (TSLib sizes its graph with
    c_out and fails there)."""
    model = task_model(make_configs, "classification")
    shapes = {name: tuple(p.shape) for name, p in model.named_parameters()}
    assert shapes["projection.weight"] == (5, 8 * ((L * N - P) // P + 1))
    assert not any(name.startswith("head") for name in shapes)
    vowels = task_model(make_configs, "classification", num_class=9, seq_len=29, patch_len=29, enc_in=12, c_out=7)
    assert vowels.projection.weight.shape == (9, 8 * 12)
    assert vowels(torch.randn(B, 29, 12), torch.ones(B, 29), None, None).shape == (B, 9)


def test_classification_ignores_the_padding_mask_as_tslib(make_configs):
    model = task_model(make_configs, "classification").eval()
    x = torch.randn(B, L, N)
    mask = torch.ones(B, L)
    mask[:, 7:] = 0
    logits = model(x, torch.ones(B, L), None, None)
    assert logits.shape == (B, 5)
    torch.testing.assert_close(model(x, mask, None, None), logits)


def test_imputation_does_not_depend_on_pred_len(make_configs):
    x = torch.randn(B, L, N)
    mask = (torch.rand(B, L, N) > 0.3).float()
    torch.manual_seed(1)
    short = Model(configs_for(make_configs, task_name="imputation", pred_len=0)).eval()
    torch.manual_seed(1)
    long = Model(configs_for(make_configs, task_name="imputation", pred_len=96)).eval()
    out = short(x * mask, None, None, None, mask)
    assert out.shape == (B, L, N)
    torch.testing.assert_close(out, long(x * mask, None, None, None, mask))


def test_anomaly_forward_is_the_reconstruction(make_configs):
    model = task_model(make_configs, "anomaly_detection").eval()
    x = torch.randn(B, L, N)
    out = model(x, None, None, None)
    assert out.shape == (B, L, N)
    torch.testing.assert_close(out, model.anomaly_detection(x))
