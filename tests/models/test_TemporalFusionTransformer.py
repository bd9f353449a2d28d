"""TemporalFusionTransformer: TSLib's initial weights for a seed, the GRN, variable selection and
interpretable attention against the paper's formulas (float64), the variable split per dataset, static
contexts, the [B, H, c_out] output, and one-line errors naming the flag."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import models.TemporalFusionTransformer as tft
from layers.TemporalFusion_Blocks import GRN, InterpretableMultiHeadAttention, VariableSelectionNetwork
from models.TemporalFusionTransformer import Model, TypePos, variable_types
from tests.models.tslib_reference import assert_tslib_initial_weights

B, L, H, N, F_MARKS, D = 2, 8, 4, 3, 4, 8


def configs_for(make_configs, **overrides):
    flags = dict(model="TemporalFusionTransformer", data="custom", features="M", seq_len=L, label_len=2,
                 pred_len=H, enc_in=N, dec_in=N, c_out=N, d_model=D, n_heads=2, dropout=0.2, embed="timeF",
                 freq="h")
    return make_configs(**{**flags, **overrides})


def batch(seed: int = 0) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(B, L, N, generator=gen, dtype=torch.float64)
    x_mark = torch.rand(B, L, F_MARKS, generator=gen, dtype=torch.float64) - 0.5
    y_mark = torch.rand(B, 2 + H, F_MARKS, generator=gen, dtype=torch.float64) - 0.5
    return x, x_mark, y_mark


def tslib_initial_weights(configs, seed: int) -> list[torch.Tensor]:
    """TSLib's TFT draws (no static variables, timeF hourly marks): per observed variable a circular
    Conv1d(1→d) re-drawn Kaiming-normal and four fixed calendar tables (nn.Embedding draws, replaced by the
    sinusoid); four Linear(1→d) known embeddings; the static encoder's four GRNs; the past and future
    VSNs (joint GRN over V·d with context, then one GRN per variable); the decoder (two LSTMs, gate, the
    enrichment GRN with context, qkv and output projections, gate, GRN, gate, Linear d→c_out)."""
    torch.manual_seed(seed)
    d, weights = configs.d_model, []

    def linear(i, o, bias=True):
        layer = nn.Linear(i, o, bias=bias)
        weights.extend([layer.weight, layer.bias] if bias else [layer.weight])

    def gate(i, o):
        linear(i, i)
        linear(i, i)
        if i != o:
            linear(i, o)
        weights.extend([torch.ones(o), torch.zeros(o)])

    def grn(i, o, hidden=None, context=None):
        hidden = hidden or i
        linear(i, hidden)
        if context:
            linear(context, hidden)
        linear(hidden, hidden)
        if hidden != i:
            linear(i, hidden)
        gate(hidden, o)

    def vsn(n_vars):
        grn(d * n_vars, n_vars, hidden=d, context=d)
        for _ in range(n_vars):
            grn(d, d)

    def sinusoid(rows):
        table = torch.zeros(rows, d)
        position = torch.arange(rows).float()[:, None]
        div = torch.exp(torch.arange(0, d, 2).float() * -(torch.log(torch.tensor(10000.0)) / d))
        table[:, 0::2], table[:, 1::2] = torch.sin(position * div), torch.cos(position * div)
        return table

    for _ in range(configs.enc_in):
        conv = nn.Conv1d(1, d, 3, bias=False)
        nn.init.kaiming_normal_(conv.weight, mode="fan_in", nonlinearity="leaky_relu")
        weights.append(conv.weight)
        for rows in (24, 7, 32, 13):
            nn.Embedding(rows, d)
            weights.append(sinusoid(rows))
    for _ in range(F_MARKS):
        linear(1, d, bias=False)
    for _ in range(4):
        grn(d, d)
    vsn(configs.enc_in + F_MARKS)
    vsn(F_MARKS)
    for _ in range(2):
        weights.extend(nn.LSTM(d, d, batch_first=True).parameters())
    gate(d, d)
    grn(d, d, context=d)
    d_head = d // configs.n_heads
    linear(d, (2 * configs.n_heads + 1) * d_head, bias=False)
    linear(d_head, d, bias=False)
    gate(d, d)
    grn(d, d)
    gate(d, d)
    linear(d, configs.c_out)
    return weights


def test_initial_weights_follow_tslib_construction_order(make_configs):
    configs = configs_for(make_configs)
    assert_tslib_initial_weights(lambda: Model(configs), lambda: tslib_initial_weights(configs, seed=2021))


def gated_residual_by_formula(grn: GRN, a: torch.Tensor, c: torch.Tensor | None) -> torch.Tensor:
    """Paper eq. 2-5: η_2 = ELU(W_2 a + W_3 c + b_2), η_1 = W_1 η_2 + b_1,
    GRN = LayerNorm(skip + σ(W_4 η_1 + b_4) ⊙ (W_5 η_1 + b_5)), projected when the width changes."""
    pre = a @ grn.lin_a.weight.T + grn.lin_a.bias
    if c is not None:
        pre = pre + (c @ grn.lin_c.weight.T + grn.lin_c.bias)[:, None, :]
    eta1 = F.elu(pre) @ grn.lin_i.weight.T + grn.lin_i.bias
    glu = grn.gate.glu
    gated = torch.sigmoid(eta1 @ glu.fc2.weight.T + glu.fc2.bias) * (eta1 @ glu.fc1.weight.T + glu.fc1.bias)
    skip = a if isinstance(grn.project_a, nn.Identity) else a @ grn.project_a.weight.T + grn.project_a.bias
    summed = gated + skip
    if not isinstance(grn.gate.projection, nn.Identity):
        summed = summed @ grn.gate.projection.weight.T + grn.gate.projection.bias
    mean = summed.mean(-1, keepdim=True)
    var = summed.var(-1, unbiased=False, keepdim=True)
    norm = grn.gate.layer_norm
    return (summed - mean) / torch.sqrt(var + norm.eps) * norm.weight + norm.bias


def randomise(module: nn.Module, seed: int) -> nn.Module:
    """Non-trivial LayerNorm affines too, so the formula checks cover them."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=gen, dtype=p.dtype) * 0.5)
    return module.eval()


@pytest.mark.parametrize(("in_dim", "out_dim", "hidden", "context"),
                         [(5, 5, None, None), (5, 5, None, 3), (12, 3, 5, 5), (7, 4, None, 2)],
                         ids=["plain", "context", "vsn-joint", "projected"])
def test_grn_matches_the_paper_formula(in_dim, out_dim, hidden, context):
    grn = randomise(GRN(in_dim, out_dim, hidden_size=hidden, context_size=context).double(), seed=1)
    gen = torch.Generator().manual_seed(2)
    a = torch.randn(3, 6, in_dim, generator=gen, dtype=torch.float64)
    c = None if context is None else torch.randn(3, context, generator=gen, dtype=torch.float64)
    expected = gated_residual_by_formula(grn, a, c)
    torch.testing.assert_close(grn(a, c), expected)


def test_variable_selection_matches_the_weighted_sum():
    """Paper eq. 6-8, one variable and one time step at a time."""
    vsn = randomise(VariableSelectionNetwork(4, 3).double(), seed=3)
    gen = torch.Generator().manual_seed(4)
    x = torch.randn(2, 5, 3, 4, generator=gen, dtype=torch.float64)  # [B, T, V, D]
    context = torch.randn(2, 4, generator=gen, dtype=torch.float64)
    logits = gated_residual_by_formula(vsn.joint_grn, x.flatten(-2), context)  # [B, T, V]
    expected = torch.zeros(2, 5, 4, dtype=torch.float64)
    for b in range(2):
        for t in range(5):
            v = torch.exp(logits[b, t]) / torch.exp(logits[b, t]).sum()
            for j in range(3):
                xi = gated_residual_by_formula(vsn.variable_grns[j], x[b, t, j][None, None], None)[0, 0]
                expected[b, t] += v[j] * xi
    torch.testing.assert_close(vsn(x, context), expected)
    torch.testing.assert_close(vsn.selection_weights(x, context).sum(-1), torch.ones(2, 5, dtype=torch.float64))


def test_interpretable_attention_matches_the_paper_formula():
    """Eq. 13-16: heads share the value projection; the weights are averaged over heads before W_H; causal."""
    attn = randomise(InterpretableMultiHeadAttention(6, 3, 0.0, max_len=9).double(), seed=5)
    x = torch.randn(2, 7, 6, generator=torch.Generator().manual_seed(6), dtype=torch.float64)
    w = attn.qkv_linears.weight  # [(2·3 + 1)·2, 6]
    v = x @ w[12:].T  # [B, T, 2]
    mean_weights = torch.zeros(2, 7, 7, dtype=torch.float64)
    for h in range(3):
        q, k = x @ w[2 * h:2 * h + 2].T, x @ w[6 + 2 * h:6 + 2 * h + 2].T
        for i in range(7):
            scores = (q[:, i:i + 1] @ k[:, : i + 1].transpose(1, 2))[:, 0] / 2 ** 0.5  # keys 0..i only
            mean_weights[:, i, : i + 1] += torch.softmax(scores, dim=-1) / 3
    expected = (mean_weights @ v) @ attn.out_projection.weight.T
    torch.testing.assert_close(attn(x), expected)


def test_forecast_is_causal_in_the_known_inputs(make_configs):
    """Marks of a later horizon step never change an earlier step's forecast (LSTM + causal attention)."""
    model = Model(configs_for(make_configs)).double().eval()
    x, x_mark, y_mark = batch()
    with torch.no_grad():
        base = model(x, x_mark, None, y_mark)
        moved = y_mark.clone()
        moved[:, -2] += 1.0
        out = model(x, x_mark, None, moved)
    torch.testing.assert_close(out[:, :-2], base[:, :-2])
    assert not torch.allclose(out[:, -2:], base[:, -2:])


def test_returns_the_horizon_for_c_out(make_configs):
    """[B, H, c_out]; MS is de-normalised with the target's (last variate's) statistics."""
    x, x_mark, y_mark = batch()
    model = Model(configs_for(make_configs, c_out=1)).double().eval()
    with torch.no_grad():
        out = model(x, x_mark, None, y_mark)
        shifted = model(x + torch.tensor([0.0, 0.0, 7.0], dtype=torch.float64), x_mark, None, y_mark)
    assert out.shape == (B, H, 1)
    torch.testing.assert_close(shifted, out + 7.0)


def test_variable_split_per_dataset():
    assert variable_types("ETTh1", "M", 7) == TypePos([], list(range(7)))
    assert variable_types("ETTh1", "S", 1) == TypePos([], [0])
    assert variable_types("custom", "M", 21) == TypePos([], list(range(21)))
    with pytest.raises(ValueError, match="--enc_in 5"):
        variable_types("ETTm1", "MS", 5)


def test_static_variables_give_the_contexts(make_configs, monkeypatch):
    """A declared static channel is embedded from its first value, selected, and its four contexts
    reach the model (every parameter gets a gradient; changing the value changes the forecast)."""
    monkeypatch.setitem(tft.VARIABLE_TYPES, "custom", TypePos([0], [1, 2]))
    model = Model(configs_for(make_configs)).double().eval()
    assert len(model.embedding.static_embedding) == 1 and len(model.embedding.observed_embedding) == 2
    assert model.history_vsn.joint_grn.lin_a.in_features == D * (2 + F_MARKS)
    x, x_mark, y_mark = batch()
    out = model(x, x_mark, None, y_mark)
    out.sum().backward()
    unreached = [name for name, p in model.named_parameters() if p.requires_grad and p.grad is None]
    # The static VSN has no context of its own: like TSLib's, its joint GRN's lin_c is built and unused.
    assert unreached == ["static_encoder.static_vsn.joint_grn.lin_c.weight",
                         "static_encoder.static_vsn.joint_grn.lin_c.bias"]
    first_changed = x.clone()
    first_changed[:, 0, 0] += 1.0
    with torch.no_grad():
        assert not torch.allclose(model(first_changed, x_mark, None, y_mark), out)


def test_calendar_marks_and_missing_marks(make_configs):
    """--embed fixed keeps the calendar fields apart (one known input each); no marks means zeros."""
    model = Model(configs_for(make_configs, embed="fixed")).double().eval()
    assert model.known_len == 4 and model.future_vsn.joint_grn.gate.projection.out_features == 4
    x, _, _ = batch()
    zeros_enc, zeros_dec = torch.zeros(B, L, 4, dtype=torch.float64), torch.zeros(B, 2 + H, 4, dtype=torch.float64)
    with torch.no_grad():
        torch.testing.assert_close(model(x, None, None, None), model(x, zeros_enc, None, zeros_dec))


@pytest.mark.parametrize(
    ("overrides", "flag"),
    [(dict(task_name="imputation"), "--task_name"), (dict(n_heads=3), "--n_heads"), (dict(c_out=4), "--c_out"),
     (dict(embed="onehot"), "--embed"), (dict(data="ETTh1", enc_in=3, c_out=3), "--enc_in"),
     (dict(dropout=1.0), "--dropout")],
    ids=["task", "n_heads", "c_out", "embed", "enc_in-split", "dropout"],
)
def test_bad_config_names_the_flag(make_configs, overrides, flag):
    with pytest.raises(ValueError, match=flag):
        Model(configs_for(make_configs, **overrides))
