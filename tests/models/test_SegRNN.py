"""SegRNN: TSLib's initial weights for a seed, the segment-wise encoder and parallel decoder against a
per-series loop, last-value centring, and one-line errors naming the flag."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn

from models.SegRNN import Model

B, L, H, N, W = 2, 24, 12, 3, 4


def configs_for(make_configs, **overrides):
    flags = dict(model="SegRNN", seq_len=L, label_len=0, pred_len=H, enc_in=N, dec_in=N, c_out=N,
                 d_model=8, seg_len=W, dropout=0.5)
    return make_configs(**{**flags, **overrides})


def tslib_initial_weights(configs, seed: int) -> list[torch.Tensor]:
    """TSLib's SegRNN initialisation: value Linear(w→d), GRU(d, d) (uniform, ih/hh weights then biases),
    pos_emb randn [m, d/2], channel_emb randn [N, d/2], predict Linear(d→w)."""
    torch.manual_seed(seed)
    d, w = configs.d_model, configs.seg_len
    value = nn.Linear(w, d)
    gru = nn.GRU(d, d, batch_first=True)
    pos = torch.randn(configs.pred_len // w, d // 2)
    chan = torch.randn(configs.enc_in, d // 2)
    head = nn.Linear(d, w)
    return [value.weight, value.bias, *gru.parameters(), pos, chan, head.weight, head.bias]


def test_initial_weights_follow_tslib_construction_order(make_configs):
    configs = configs_for(make_configs)
    expected = tslib_initial_weights(configs, seed=2021)
    torch.manual_seed(2021)
    model = Model(configs)
    ours = [model.valueEmbedding[0].weight, model.valueEmbedding[0].bias, *model.rnn.parameters(),
            model.pos_emb, model.channel_emb, model.predict[1].weight, model.predict[1].bias]
    assert len(ours) == len(expected) == sum(1 for _ in model.parameters())
    for mine, theirs in zip(ours, expected, strict=True):
        assert torch.equal(mine, theirs)
    after_ours = torch.rand(4)
    tslib_initial_weights(configs, seed=2021)
    assert torch.equal(after_ours, torch.rand(4))


def reference_forecast(model: Model, x: torch.Tensor) -> torch.Tensor:
    """The paper's equations one series and one output segment at a time (eval mode): `[B, L, N]` → `[B, H, N]`."""
    cell = nn.GRUCell(model.d_model, model.d_model).to(x.dtype)
    cell.weight_ih.data, cell.weight_hh.data = model.rnn.weight_ih_l0.data, model.rnn.weight_hh_l0.data
    cell.bias_ih.data, cell.bias_hh.data = model.rnn.bias_ih_l0.data, model.rnn.bias_hh_l0.data
    out = torch.empty(x.shape[0], model.pred_len, x.shape[2], dtype=x.dtype)
    for b in range(x.shape[0]):
        for c in range(x.shape[2]):
            series = x[b, :, c] - x[b, -1, c]
            h = torch.zeros(1, model.d_model, dtype=x.dtype)
            for segment in series.reshape(-1, model.seg_len):
                h = cell(model.valueEmbedding(segment[None]), h)
            pieces = []
            for j in range(model.seg_num_y):
                e_j = torch.cat([model.pos_emb[j], model.channel_emb[c]])[None]
                pieces.append(model.predict(cell(e_j, h))[0])
            out[b, :, c] = torch.cat(pieces) + x[b, -1, c]
    return out


def test_forward_matches_the_per_series_loop(make_configs):
    model = Model(configs_for(make_configs)).double().eval()
    x = torch.randn(B, L, N, dtype=torch.float64)
    with torch.no_grad():
        torch.testing.assert_close(model(x), reference_forecast(model, x))


def test_forecast_moves_with_the_last_value(make_configs):
    """Centring on x_L: adding a constant to a series adds it to that series' forecast."""
    model = Model(configs_for(make_configs)).double().eval()
    x = torch.randn(B, L, N, dtype=torch.float64)
    with torch.no_grad():
        torch.testing.assert_close(model(x + 7.0), model(x) + 7.0)


def test_ms_returns_the_last_variate(make_configs):
    torch.manual_seed(3)
    full = Model(configs_for(make_configs)).eval()
    torch.manual_seed(3)
    ms = Model(configs_for(make_configs, c_out=1)).eval()
    x = torch.randn(B, L, N)
    with torch.no_grad():
        torch.testing.assert_close(ms(x), full(x)[:, :, -1:])


@pytest.mark.parametrize(
    ("overrides", "flag"),
    [(dict(seg_len=5), "--seg_len 5 does not divide --seq_len"),
     (dict(seg_len=8), "--seg_len 8 does not divide --pred_len"),
     (dict(seg_len=0), "--seg_len"), (dict(d_model=7), "--d_model"),
     (dict(task_name="zero_shot_forecast"), "--task_name"), (dict(c_out=4), "--c_out")],
    ids=["seq_len", "pred_len", "seg_len_zero", "odd_d_model", "task", "c_out"],
)
def test_bad_config_names_the_flag(make_configs, overrides, flag):
    with pytest.raises(ValueError, match=flag):
        Model(configs_for(make_configs, **overrides))


def window_configs(make_configs, task: str, **overrides):
    """A window task's namespace as its experiment builds it (--pred_len 0; num_class from the data)."""
    configs = configs_for(make_configs, **{"task_name": task, "pred_len": 0, "dropout": 0.0, **overrides})
    if task == "classification":
        configs.num_class = 5
    return configs


@pytest.mark.parametrize("task", ["imputation", "anomaly_detection", "classification"])
def test_window_heads_decode_the_window_itself(make_configs, task):
    model = Model(window_configs(make_configs, task))
    shapes = {name: tuple(p.shape) for name, p in model.named_parameters()}
    assert shapes["pos_emb"] == (L // W, 8 // 2)  # one decoder position per window segment
    assert shapes["predict.1.weight"] == (W, 8)
    assert ("projection.weight" in shapes) == (task == "classification")
    if task == "classification":
        assert shapes["projection.weight"] == (5, N * L)


def test_imputation_shape_and_pred_len_independence(make_configs):
    """--pred_len is not read (7 is not even a multiple of --seg_len)."""
    x = torch.randn(B, L, N)
    mask = (torch.rand(B, L, N) > 0.3).float()
    outs = []
    for pred_len in (0, 7):
        torch.manual_seed(1)
        model = Model(window_configs(make_configs, "imputation", pred_len=pred_len)).eval()
        with torch.no_grad():
            outs.append(model(x * mask, torch.rand(B, L, 4), None, None, mask))
    assert outs[0].shape == (B, L, N)
    torch.testing.assert_close(outs[0], outs[1], rtol=0, atol=0)


def test_window_tasks_need_seg_len_dividing_seq_len(make_configs):
    with pytest.raises(ValueError, match="--seg_len 5 does not divide --seq_len 24"):
        Model(window_configs(make_configs, "anomaly_detection", seg_len=5))


def test_anomaly_forward_is_the_reconstruction(make_configs):
    model = Model(window_configs(make_configs, "anomaly_detection")).eval()
    x = torch.randn(B, L, N)
    with torch.no_grad():
        out = model(x, None, None, None)
        torch.testing.assert_close(out, model.anomaly_detection(x), rtol=0, atol=0)
        torch.testing.assert_close(out, model.encoder(x), rtol=0, atol=0)
    assert out.shape == (B, L, N)


def test_classification_flattens_the_reconstruction_and_ignores_the_mask(make_configs):
    """TSLib's SegRNN head: logits = projection(flatten(reconstruction)); the padding mask is not read."""
    model = Model(window_configs(make_configs, "classification")).eval()
    x = torch.randn(B, L, N)
    mask = torch.ones(B, L)
    mask[:, 16:] = 0
    with torch.no_grad():
        logits = model(x, mask, None, None)
        torch.testing.assert_close(logits, model(x, torch.ones(B, L), None, None), rtol=0, atol=0)
        expected = model.encoder(x).reshape(B, -1) @ model.projection.weight.T + model.projection.bias
    torch.testing.assert_close(logits, expected)
    assert logits.shape == (B, 5)


def test_classification_does_not_read_c_out(make_configs):
    model = Model(window_configs(make_configs, "classification", enc_in=2, c_out=7))
    assert model(torch.randn(B, L, 2), torch.ones(B, L), None, None).shape == (B, 5)
