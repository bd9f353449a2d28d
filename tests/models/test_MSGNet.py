"""MSGNet: TSLib's initial weights for a seed, the adaptive graph convolution against a direct float64
formula, the scale block against a per-segment loop, features S/MS, the imputation / anomaly / classification heads, and one-line errors naming the flag."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn

from layers.Embed import DataEmbedding
from layers.MSGBlock import GraphBlock, mixprop
from models.MSGNet import Model
from tests.models.tslib_reference import assert_tslib_initial_weights

B, L, H, N = 2, 24, 8, 3


def configs_for(make_configs, **overrides):
    flags = dict(model="MSGNet", seq_len=L, label_len=4, pred_len=H, enc_in=N, dec_in=N, c_out=N, d_model=8,
                 d_ff=12, n_heads=2, e_layers=2, top_k=3, node_dim=4, gcn_depth=2, propalpha=0.3,
                 conv_channel=5, skip_channel=6, dropout=0.1, embed="timeF", freq="h")
    return make_configs(**{**flags, **overrides})


def tslib_initial_weights(configs, seed: int) -> list[torch.Tensor]:
    """TSLib's draw sequence: per block the attention (q, k, v, out Linear d→d; Conv1d d→d_ff→d; two
    LayerNorms), a LayerNorm, then top_k GraphBlocks (randn node vectors E_1, E_2; start Conv2d;
    mix-hop 1×1 Conv2d; end Conv2d; Linear c_out→d; LayerNorm); then DataEmbedding, LayerNorm,
    predict_linear L→L+H, projection d→c_out, seq2pred L→H."""
    torch.manual_seed(seed)
    d, c = configs.d_model, configs.c_out
    ln = [torch.ones(d), torch.zeros(d)]
    weights = []
    for _ in range(configs.e_layers):
        for layer in (nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d),
                      nn.Conv1d(d, configs.d_ff, 1), nn.Conv1d(configs.d_ff, d, 1)):
            weights += [layer.weight, layer.bias]
        weights += ln + ln + ln
        for _ in range(configs.top_k):
            weights += [torch.randn(c, configs.node_dim), torch.randn(configs.node_dim, c)]
            for layer in (nn.Conv2d(1, configs.conv_channel, (d - c + 1, 1)),
                          nn.Conv2d((configs.gcn_depth + 1) * configs.conv_channel, configs.skip_channel, 1),
                          nn.Conv2d(configs.skip_channel, L, (1, L)), nn.Linear(c, d)):
                weights += [layer.weight, layer.bias]
            weights += ln
    embedding = DataEmbedding(configs.enc_in, d, configs.embed, configs.freq, configs.dropout)
    weights += list(embedding.parameters()) + ln
    for layer in (nn.Linear(L, L + H), nn.Linear(d, c), nn.Linear(L, H)):
        weights += [layer.weight, layer.bias]
    return weights


def test_initial_weights_follow_tslib_construction_order(make_configs):
    configs = configs_for(make_configs)
    assert_tslib_initial_weights(lambda: Model(configs), lambda: tslib_initial_weights(configs, seed=2021))


def direct_mixprop(x: torch.Tensor, adj: torch.Tensor, layer: mixprop, alpha: float, depth: int) -> torch.Tensor:
    """H⁽ᵏ⁾ = αX + (1 − α) D̃⁻¹(A + I) H⁽ᵏ⁻¹⁾ written out node by node, then the 1×1 convolution as a sum."""
    n = adj.shape[0]
    a_tilde = adj + torch.eye(n, dtype=adj.dtype)
    degree = [sum(a_tilde[v, w] for w in range(n)) for v in range(n)]
    hops, h = [x], x
    for _ in range(depth):
        nxt = torch.zeros_like(x)
        for v in range(n):
            for w in range(n):
                nxt[:, :, v] += a_tilde[v, w] / degree[v] * h[:, :, w]
        h = alpha * x + (1 - alpha) * nxt
        hops.append(h)
    stacked = torch.cat(hops, dim=1)  # [B, (K+1)C, n, T]
    weight, bias = layer.mlp.mlp.weight[:, :, 0, 0], layer.mlp.mlp.bias
    return torch.einsum("oi,bint->bont", weight, stacked) + bias[None, :, None, None]


@pytest.mark.parametrize("depth", [0, 1, 3])
def test_mixprop_matches_the_direct_formula(depth):
    torch.manual_seed(depth)
    layer = mixprop(4, 5, depth, dropout=0.3, alpha=0.2).double()
    x = torch.randn(2, 4, 3, 6, dtype=torch.float64)
    adj = torch.rand(3, 3, dtype=torch.float64)
    torch.testing.assert_close(layer(x, adj), direct_mixprop(x, adj, layer, 0.2, depth))


def test_graph_block_matches_the_direct_formula():
    """Adjacency SoftMax(ReLU(E_1 E_2)), start conv carving c_out nodes from d_model features, mix-hop,
    GELU, end conv over the whole window, Linear c_out → d_model, residual LayerNorm; c_out = 1 runs
    (TSLib's squeeze drops the node axis there)."""
    for c_out in (3, 1):
        torch.manual_seed(c_out)
        block = GraphBlock(c_out, 6, 4, 5, 2, 0.1, 0.3, seq_len=7, node_dim=2).double()
        x = torch.randn(2, 7, 6, dtype=torch.float64)
        logits = torch.clamp(block.nodevec1 @ block.nodevec2, min=0)
        adj = torch.exp(logits) / torch.exp(logits).sum(dim=1, keepdim=True)
        kernel, k_bias = block.start_conv.weight[:, 0, :, 0], block.start_conv.bias  # [C, d − c + 1]
        start = torch.stack([torch.einsum("cj,btj->bct", kernel, x[:, :, v:v + kernel.shape[1]])
                             for v in range(c_out)], dim=2) + k_bias[None, :, None, None]  # [B, C, n, T]
        mixed = torch.nn.functional.gelu(direct_mixprop(start, adj, block.gconv1, 0.3, 2))  # [B, S, n, T]
        end = torch.einsum("osk,bsnk->bon", block.end_conv.weight[:, :, 0, :], mixed) + block.end_conv.bias[None, :, None]
        expected = block.norm(x + end @ block.linear.weight.T + block.linear.bias)
        torch.testing.assert_close(block(x), expected)


def test_scale_block_matches_a_per_segment_loop(make_configs):
    """Per scale s: chained graph conv, the zero-padded window cut into segments of s steps, attention
    block inside each segment, LayerNorm, GELU; amplitude-softmax mix plus the last graph output."""
    model = Model(configs_for(make_configs, dropout=0.0)).double().eval()
    block = model.model[0]
    x = torch.randn(B, L, 8, dtype=torch.float64)
    with torch.no_grad():
        spectrum = torch.fft.rfft(x, dim=1).abs()  # [B, L/2+1, D]
        ranking = spectrum.mean(dim=(0, 2))
        ranking[0] = 0
        freqs = torch.topk(ranking, 3).indices.tolist()
        weights = torch.softmax(spectrum.mean(dim=2)[:, freqs], dim=1)  # [B, k]
        h, total = x, 0
        for i, f in enumerate(freqs):
            s = L // f
            h = block.gconv[i](h)
            out = torch.empty_like(h)
            for b in range(B):
                for start in range(0, L, s):
                    segment = torch.zeros(1, s, 8, dtype=torch.float64)
                    stop = min(start + s, L)
                    segment[0, : stop - start] = h[b, start:stop]
                    res = torch.nn.functional.gelu(block.norm(block.att0(segment)))
                    out[b, start:stop] = res[0, : stop - start]
            total = total + out * weights[:, i, None, None]
        torch.testing.assert_close(block(x), total + h)


def test_segment_attention_is_causal(make_configs):
    """TSLib's FullAttention defaults to a causal mask: inside a segment a later step cannot change an
    earlier one."""
    block = Model(configs_for(make_configs, dropout=0.0)).double().eval().model[0].att0
    seg = torch.randn(3, 6, 8, dtype=torch.float64)
    changed = seg.clone()
    changed[:, -1] += 1.0
    with torch.no_grad():
        torch.testing.assert_close(block(changed)[:, :-1], block(seg)[:, :-1])


@pytest.mark.parametrize(("c_out", "enc_in"), [(1, 1), (1, N)], ids=["S", "MS"])
def test_single_output_channel_runs(make_configs, c_out, enc_in):
    """TSLib fails at c_out = 1 (its squeeze) and returns enc_in channels for MS; here [B, H, 1],
    de-normalised with the target's statistics."""
    model = Model(configs_for(make_configs, c_out=c_out, enc_in=enc_in, dec_in=enc_in)).double().eval()
    x = torch.randn(B, L, enc_in, dtype=torch.float64)
    marks = torch.rand(B, L, 4, dtype=torch.float64) - 0.5
    with torch.no_grad():
        out = model(x, marks, None, None)
        assert out.shape == (B, H, 1)
        scaled = x.clone()
        scaled[:, :, -1] = 10 * x[:, :, -1] + 3
        torch.testing.assert_close(model(scaled, marks, None, None), 10 * out + 3, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    ("overrides", "flag"),
    [(dict(top_k=13), "--top_k"), (dict(c_out=9, enc_in=9, dec_in=9), "--d_model"),
     (dict(n_heads=3), "--n_heads"), (dict(c_out=4), "--c_out"), (dict(task_name="zero_shot_forecast"), "--task_name"),
     (dict(node_dim=0), "--node_dim"), (dict(gcn_depth=-1), "--gcn_depth"), (dict(embed="onehot"), "--embed")],
    ids=["top_k", "d_model", "n_heads", "c_out", "task", "node_dim", "gcn_depth", "embed"],
)
def test_bad_config_names_the_flag(make_configs, overrides, flag):
    with pytest.raises(ValueError, match=flag):
        Model(configs_for(make_configs, **overrides))


def task_model(make_configs, task: str, num_class: int = 5, **overrides) -> Model:
    configs = configs_for(make_configs, task_name=task, label_len=0, pred_len=0, **overrides)
    configs.num_class = num_class
    return Model(configs)


@pytest.mark.parametrize("task", ["imputation", "anomaly_detection", "classification"])
def test_window_heads_have_tslib_parameters(make_configs, task):
    """TSLib's window builds: the forecasting encoder, predict_linear at --pred_len 0 (L → L, unused),
    no seq2pred; projection D → c_out per step, or L·D → num_class for classification."""
    model = task_model(make_configs, task)
    shapes = {name: tuple(p.shape) for name, p in model.named_parameters()}
    assert shapes["predict_linear.weight"] == (L, L)
    assert not any(name.startswith("seq2pred") for name in shapes)
    head = (5, 8 * L) if task == "classification" else (N, 8)
    assert shapes["projection.weight"] == head and shapes["projection.bias"] == head[:1]
    forecaster = Model(configs_for(make_configs))
    encoder = sum(p.numel() for name, p in forecaster.named_parameters()
                  if not name.startswith(("seq2pred", "predict_linear", "projection")))
    assert sum(p.numel() for p in model.parameters()) == encoder + L * L + L + head[0] * head[1] + head[0]


def test_imputation_does_not_depend_on_pred_len(make_configs):
    x = torch.randn(B, L, N)
    mask = (torch.rand(B, L, N) > 0.3).float()
    marks = torch.rand(B, L, 4) - 0.5
    torch.manual_seed(1)
    short = Model(configs_for(make_configs, task_name="imputation", pred_len=0)).eval()
    torch.manual_seed(1)
    long = Model(configs_for(make_configs, task_name="imputation", pred_len=96)).eval()
    out = short(x * mask, marks, None, None, mask)
    assert out.shape == (B, L, N)
    torch.testing.assert_close(out, long(x * mask, marks, None, None, mask))
    assert not torch.allclose(out, short(x * mask, None, None, None, mask))  # the marks are read


def test_anomaly_forward_is_the_reconstruction(make_configs):
    model = task_model(make_configs, "anomaly_detection").eval()
    x = torch.randn(B, L, N)
    out = model(x, None, None, None)
    assert out.shape == (B, L, N)
    torch.testing.assert_close(out, model.anomaly_detection(x))


def test_classification_drops_the_padded_steps_before_the_projection(make_configs):
    """The padded steps' features are zeroed: their projection weights cannot change the logits."""
    model = task_model(make_configs, "classification").eval()
    x = torch.randn(B, L, N)
    mask = torch.ones(B, L)
    mask[:, 15:] = 0
    with torch.no_grad():
        logits = model(x, mask, None, None)
        assert logits.shape == (B, 5)
        assert not torch.allclose(logits, model(x, torch.ones(B, L), None, None))
        model.projection.weight.view(5, L, 8)[:, 15:] += torch.randn(5, L - 15, 8)
        torch.testing.assert_close(model(x, mask, None, None), logits)


def test_classification_reads_c_out_only_as_the_graph_size(make_configs):
    """As TSLib's GraphBlock, --c_out sizes the graph in every task; in classification it need not match
    the data (BasicMotions: 6 variates, the default --c_out 7)."""
    model = task_model(make_configs, "classification", enc_in=6, c_out=7)
    assert model.model[0].gconv[0].nodevec1.shape == (7, 4)
    assert model(torch.randn(B, L, 6), torch.ones(B, L), None, None).shape == (B, 5)
