"""FEDformer: TSLib's initial weights and numpy mode draws for a seed, the frequency enhanced blocks against
a direct DFT in float64, the time layout of their output, and one-line errors naming the flag."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn as nn

from layers.AutoCorrelation import AutoCorrelationLayer
from layers.FourierCorrelation import FourierBlock, FourierCrossAttention, get_frequency_modes
from models.FEDformer import Model
from tests.layers.test_head_layout import tslib_reference
from tests.models.test_Transformer import C as WINDOW_C
from tests.models.test_Transformer import D as WINDOW_D
from tests.models.test_Transformer import L as WINDOW_L
from tests.models.test_Transformer import check_anomaly_head, check_classification_head, check_imputation_head
from tests.models.tslib_reference import assert_tslib_initial_weights

SMALL = dict(model="FEDformer", seq_len=24, label_len=12, pred_len=12, d_model=8, d_ff=16, n_heads=2,
             e_layers=2, d_layers=1, moving_avg=5, enc_in=3, dec_in=3, c_out=3, freq="h", embed="timeF")
SEED = 2021


def shuffled_modes(length: int, modes: int) -> list[int]:
    """TSLib's random modes: one np.random.shuffle of the list of the first ⌊length/2⌋ bins."""
    bins = list(range(length // 2))
    np.random.shuffle(bins)
    return sorted(bins[:min(modes, length // 2)])


def tslib_initial_weights(configs, modes: int) -> tuple[list[torch.Tensor], list[list[int]]]:
    """TSLib's FEDformer construction with torch and numpy seeded: embeddings (circular token conv,
    Kaiming-normal; bias-free timeF Linear) for encoder and decoder; FEB-f encoder, FEB-f decoder and
    FEA-f, each drawing its modes from numpy, then weights1 and weights2 = rand / D²; per encoder layer
    q/k/v/out Linear and two 1×1 convs; per decoder layer self q/k/v/out, cross q/k/v/out, two 1×1 convs
    and the circular trend projection; the final Linear. Returned in parameter registration order
    (the shared blocks' weights appear once, in the first layer using them), with the modes."""
    torch.manual_seed(SEED)
    np.random.seed(SEED)
    d, d_ff, h, c_out = configs.d_model, configs.d_ff, configs.n_heads, configs.c_out
    dec_len = configs.label_len + configs.pred_len

    def embedding(c_in: int) -> list[torch.Tensor]:
        token = nn.Conv1d(c_in, d, 3, padding=1, padding_mode="circular", bias=False)
        nn.init.kaiming_normal_(token.weight, mode="fan_in", nonlinearity="leaky_relu")
        return [token.weight, nn.Linear(4, d, bias=False).weight]

    def frequency_weights(n_modes: int) -> list[torch.Tensor]:
        shape = (h, d // h, d // h, n_modes)
        return [torch.rand(*shape) / (d * d), torch.rand(*shape) / (d * d)]

    def projections() -> list[torch.Tensor]:
        return [p for _ in range(4) for p in (lambda lin: (lin.weight, lin.bias))(nn.Linear(d, d))]

    def feed_forward() -> list[torch.Tensor]:
        return [nn.Conv1d(d, d_ff, 1, bias=False).weight, nn.Conv1d(d_ff, d, 1, bias=False).weight]

    enc_emb, dec_emb = embedding(configs.enc_in), embedding(configs.dec_in)
    enc_modes = shuffled_modes(configs.seq_len, modes)
    enc_feb = frequency_weights(len(enc_modes))
    dec_modes = shuffled_modes(dec_len, modes)
    dec_feb = frequency_weights(len(dec_modes))
    q_modes, kv_modes = shuffled_modes(dec_len, modes), shuffled_modes(configs.seq_len, modes)
    fea = frequency_weights(len(q_modes))
    layer_norm = [torch.ones(d), torch.zeros(d)]
    weights = enc_emb + dec_emb
    for i in range(configs.e_layers):
        weights += (enc_feb if i == 0 else []) + projections() + feed_forward()
    weights += layer_norm
    for i in range(configs.d_layers):
        self_att, cross_att = projections(), projections()
        weights += (dec_feb if i == 0 else []) + self_att + (fea if i == 0 else []) + cross_att + feed_forward()
        weights.append(nn.Conv1d(d, c_out, 3, padding=1, padding_mode="circular", bias=False).weight)
    projection = nn.Linear(d, c_out)
    weights += layer_norm + [projection.weight, projection.bias]
    return weights, [enc_modes, dec_modes, q_modes, kv_modes]


@pytest.mark.parametrize("modes", [32, 5])
def test_initial_weights_and_modes_follow_tslib(make_configs, modes: int):
    configs = make_configs(**SMALL)

    def build() -> Model:
        np.random.seed(SEED)
        return Model(configs, modes=modes)

    assert_tslib_initial_weights(build, lambda: tslib_initial_weights(configs, modes)[0], seed=SEED)
    torch.manual_seed(SEED)
    model = build()
    enc = model.encoder.attn_layers[0].attention.inner_correlation
    dec = model.decoder.layers[0].self_attention.inner_correlation
    cross = model.decoder.layers[0].cross_attention.inner_correlation
    assert [enc.index, dec.index, cross.index_q, cross.index_kv] == tslib_initial_weights(configs, modes)[1]
    # One FEB-f serves every encoder layer (TSLib passes the same module to each).
    assert model.encoder.attn_layers[1].attention.inner_correlation is enc


def test_mode_selection():
    np.random.seed(7)
    first = get_frequency_modes(40, modes=6)
    np.random.seed(7)
    assert first == shuffled_modes(40, 6) and len(first) == 6 and first == sorted(first)
    assert get_frequency_modes(40, modes=6, mode_select_method="low") == list(range(6))
    assert get_frequency_modes(9, modes=32, mode_select_method="low") == list(range(4))
    with pytest.raises(ValueError, match="mode_select_method"):
        get_frequency_modes(40, 6, "high")


def dft(x: torch.Tensor) -> torch.Tensor:
    """rfft along the last axis from the definition X_k = Σ_t x_t e^{−2πikt/L}, bin by bin (complex128)."""
    length = x.shape[-1]
    t = torch.arange(length, dtype=torch.float64)
    bins = []
    for k in range(length // 2 + 1):
        angle = 2 * math.pi * k * t / length
        bins.append(torch.complex((x * torch.cos(angle)).sum(-1), -(x * torch.sin(angle)).sum(-1)))
    return torch.stack(bins, dim=-1)


def inverse_dft(spectrum: torch.Tensor, length: int) -> torch.Tensor:
    """irfft from the definition: x_t = (1/L) Σ over all L bins, the upper half the conjugates of the lower
    (imaginary parts of the DC and, for even L, Nyquist bins ignored, as irfft does)."""
    t = torch.arange(length, dtype=torch.float64)
    out = spectrum[..., :1].real.expand(*spectrum.shape[:-1], length).clone()
    for k in range(1, spectrum.shape[-1]):
        angle = 2 * math.pi * k * t / length
        term = spectrum[..., k:k + 1].real * torch.cos(angle) - spectrum[..., k:k + 1].imag * torch.sin(angle)
        out = out + (term if 2 * k == length else 2 * term)
    return out / length


def complex_weights(block: nn.Module) -> torch.Tensor:
    return torch.complex(block.weights1.detach().double(), block.weights2.detach().double())


def feb_reference(block: FourierBlock, q: torch.Tensor) -> torch.Tensor:
    """FEB-f mode by mode: output bin m = Σ_e Q[e, i_m] W[e, o, m], kept when i_m and m are bins."""
    b, length, h, e = q.shape
    spectrum = dft(q.permute(0, 2, 3, 1))  # [B, H, E, F]
    bins = spectrum.shape[-1]
    w = complex_weights(block)
    out = torch.zeros(b, h, w.shape[2], bins, dtype=torch.complex128)
    for m, i in enumerate(block.index):
        if i < bins and m < bins:
            for o in range(w.shape[2]):
                out[:, :, o, m] = (spectrum[:, :, :, i] * w[None, :, :, o, m]).sum(-1)
    return inverse_dft(out, length).permute(0, 3, 1, 2)  # [B, L, H, E']


@pytest.mark.parametrize(("seq_len", "length", "modes", "method"),
                         [(24, 24, 5, "random"), (24, 24, 32, "low"), (21, 21, 4, "random"), (30, 17, 12, "random")],
                         ids=["L24-M5", "L24-all-low", "L21-odd", "drawn30-run17"])
def test_fourier_block_matches_direct_dft(seq_len: int, length: int, modes: int, method: str):
    torch.manual_seed(0)
    np.random.seed(0)
    block = FourierBlock(6, 6, 2, seq_len, modes=modes, mode_select_method=method).double()
    q = torch.randn(2, length, 2, 3, dtype=torch.float64, requires_grad=True)
    out, attn = block(q, q, q, None)
    expected = feb_reference(block, q)
    assert attn is None and out.shape == (2, length, 2, 3)
    torch.testing.assert_close(out, expected, rtol=1e-9, atol=1e-12)
    grad = torch.randn_like(out)
    (fast,) = torch.autograd.grad(out, q, grad)
    (slow,) = torch.autograd.grad(expected, q, grad)
    torch.testing.assert_close(fast, slow, rtol=1e-9, atol=1e-12)


def fea_reference(block: FourierCrossAttention, q, k, v) -> torch.Tensor:
    """FEA-f from the definition with explicit sums over modes (complex128)."""
    length = q.shape[1]
    qs, ks, vs = (dft(x.permute(0, 2, 3, 1)) for x in (q, k, v))  # [B, H, E, F·]

    def pick(spectrum, index):
        return torch.stack([spectrum[..., i] if i < spectrum.shape[-1] else torch.zeros_like(spectrum[..., 0])
                            for i in index], dim=-1)

    qm, km, vm = pick(qs, block.index_q), pick(ks, block.index_kv), pick(vs, block.index_kv)
    scores = (qm[..., :, None] * km[..., None, :]).sum(2)  # [B, H, Mq, Mkv]
    if block.activation == "tanh":
        scores = torch.complex(scores.real.tanh(), scores.imag.tanh())
    else:
        scores = torch.softmax(scores.abs(), dim=-1).to(torch.complex128)
    z = (scores[:, :, None, :, :] * vm[:, :, :, None, :]).sum(-1)  # [B, H, E, Mq]
    w = complex_weights(block)  # [H, E, E', Mq]
    y = (z[:, :, :, None, :] * w[None]).sum(2)  # [B, H, E', Mq]
    bins = length // 2 + 1
    out = torch.zeros(*y.shape[:-1], bins, dtype=torch.complex128)
    for m, i in enumerate(block.index_q):
        if i < bins:
            out[..., i] = y[..., m]
    return inverse_dft(out / block.in_channels / block.out_channels, length).permute(0, 3, 1, 2)


@pytest.mark.parametrize("activation", ["tanh", "softmax"])
@pytest.mark.parametrize(("len_q", "len_kv"), [(18, 24), (13, 9)], ids=["q18-kv24", "q13-kv9"])
def test_fourier_cross_attention_matches_direct_dft(activation: str, len_q: int, len_kv: int):
    torch.manual_seed(1)
    np.random.seed(1)
    block = FourierCrossAttention(6, 6, 18, 24, modes=5, activation=activation, num_heads=2).double()
    q = torch.randn(2, len_q, 2, 3, dtype=torch.float64, requires_grad=True)
    k = torch.randn(2, len_kv, 2, 3, dtype=torch.float64, requires_grad=True)
    v = torch.randn(2, len_kv, 2, 3, dtype=torch.float64, requires_grad=True)
    out, _ = block(q, k, v)
    expected = fea_reference(block, q, k, v)
    torch.testing.assert_close(out, expected, rtol=1e-9, atol=1e-12)
    grad = torch.randn_like(out)
    fast = torch.autograd.grad(out, (q, k, v), grad)
    slow = torch.autograd.grad(expected, (q, k, v), grad)
    for a, b in zip(fast, slow, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-9, atol=1e-12)
    # The values carry the content: changing v (not k) changes the output.
    assert not torch.allclose(block(q, k, 2 * v)[0], out)


def test_block_output_keeps_time_axis():
    """With every low mode kept, FEB-f is a per-head circular convolution, so the attention layer is
    equivariant to circular time shifts; this holds only if the block returns time on axis 1."""
    torch.manual_seed(2)
    layer = AutoCorrelationLayer(FourierBlock(8, 8, 2, 16, modes=8, mode_select_method="low"), 8, 2).double()
    x = torch.randn(2, 16, 8, dtype=torch.float64)
    out, _ = layer(x, x, x, None)
    shifted, _ = layer(torch.roll(x, 5, dims=1), x, x, None)
    torch.testing.assert_close(shifted, torch.roll(out, 5, dims=1))


def test_forecast_shape_and_decoder_start(make_configs):
    model = Model(make_configs(**SMALL)).double().eval()
    x = torch.randn(2, 24, 3, dtype=torch.float64)
    marks = torch.rand(2, 24, 4, dtype=torch.float64) - 0.5
    dec_marks = torch.rand(2, 24, 4, dtype=torch.float64) - 0.5
    seen = {}
    handle = model.decoder.register_forward_pre_hook(
        lambda module, args, kwargs: seen.update(x=args[0], trend=kwargs["trend"]), with_kwargs=True)
    with torch.no_grad():
        out = model(x, marks, None, dec_marks)
    handle.remove()
    assert out.shape == (2, 12, 3)
    seasonal, trend = model.decomp(x)
    torch.testing.assert_close(seen["trend"], torch.cat([trend[:, 12:], x.mean(1, keepdim=True).expand(-1, 12, -1)], 1))
    seasonal_init = torch.cat([seasonal[:, 12:], torch.zeros(2, 12, 3, dtype=torch.float64)], dim=1)
    torch.testing.assert_close(seen["x"], model.dec_embedding(seasonal_init, dec_marks))


@pytest.mark.parametrize(
    ("overrides", "flag"),
    [
        (dict(moving_avg=0), "--moving_avg"),
        (dict(task_name="zero_shot_forecast"), "--task_name"),
        (dict(d_model=30, n_heads=4), "--d_model"),
        (dict(activation="swish"), "--activation"),
        (dict(embed="onehot"), "--embed"),
        (dict(c_out=4), "--c_out"),
        (dict(dec_in=2), "--dec_in"),
        (dict(label_len=25), "--label_len"),
        (dict(d_layers=0), "--d_layers"),
        (dict(dropout=1.0), "--dropout"),
    ],
    ids=lambda v: v if isinstance(v, str) else "-".join(f"{k}={x}" for k, x in v.items()),
)
def test_bad_config_names_the_flag(make_configs, overrides: dict, flag: str) -> None:
    with pytest.raises(ValueError, match=flag) as error:
        Model(make_configs(**{**SMALL, **overrides}))
    assert "\n" not in str(error.value)


@pytest.mark.parametrize(("kwargs", "match"), [(dict(version="Wavelets"), "Wavelets"),
                                                (dict(version="spline"), "version"),
                                                (dict(mode_select="high"), "mode_select"),
                                                (dict(modes=0), "modes")])
def test_bad_constructor_arguments(make_configs, kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match) as error:
        Model(make_configs(**SMALL), **kwargs)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("task", ["imputation", "anomaly_detection", "classification"])
def test_window_heads_keep_tslib_s_decoder_at_half_the_window(make_configs, task: str):
    """The window heads read the encoder; as in TSLib the decoder is built for every task (its parameters
    are in TSLib's JapaneseVowels count), its frequency blocks drawn for ⌊seq_len/2⌋ steps (TSLib's
    ⌊seq_len/2⌋ + pred_len at the scripts' --pred_len 0)."""
    check = {"imputation": check_imputation_head, "anomaly_detection": check_anomaly_head,
             "classification": check_classification_head}[task]
    net = check(make_configs, "FEDformer", Model)
    cross = net.decoder.layers[0].cross_attention.inner_correlation
    self_block = net.decoder.layers[0].self_attention.inner_correlation
    half = WINDOW_L // 2
    assert len(self_block.index) == len(cross.index_q) == min(32, half // 2)
    assert net.decoder.projection.weight.shape == (WINDOW_C, WINDOW_D)


def test_forecasting_is_the_same_for_long_and_short_term(make_configs):
    """TSLib's FEDformer runs one forecasting path for both task names (no normalisation)."""
    x = torch.randn(2, 24, 3, dtype=torch.float64)
    outs = []
    for task in ("long_term_forecast", "short_term_forecast"):
        torch.manual_seed(0)
        np.random.seed(0)
        configs = make_configs(model="FEDformer", task_name=task, seq_len=24, label_len=12, pred_len=6, enc_in=3,
                               dec_in=3, c_out=3, d_model=8, d_ff=8, n_heads=2, e_layers=1, d_layers=1, dropout=0.0)
        with torch.no_grad():
            outs.append(Model(configs).double().eval()(x, None, None, None))
    torch.testing.assert_close(outs[0], outs[1])


@pytest.mark.parametrize("cross", [False, True], ids=["FEB-f", "FEA-f"])
def test_tslib_layout_is_the_block_output_read_as_tslib_views_it(cross: bool):
    """`output_layout="tslib"`: the reference's `[B, H, E, L]` result read row by row as TSLib's `view`."""
    blocks = {}
    for layout in ("per_step", "tslib"):
        torch.manual_seed(3)
        np.random.seed(3)
        blocks[layout] = (FourierCrossAttention(6, 6, 18, 18, modes=5, num_heads=2, output_layout=layout) if cross
                          else FourierBlock(6, 6, 2, 18, modes=5, output_layout=layout)).double()
    q, k, v = (torch.randn(2, 18, 2, 3, dtype=torch.float64) for _ in range(3))
    expected = fea_reference(blocks["tslib"], q, k, v) if cross else feb_reference(blocks["tslib"], q)
    rows = tslib_reference(expected.permute(0, 2, 3, 1).numpy(), time_dim=3)  # from [B, H, E', L]
    out, _ = blocks["tslib"](q, k, v)
    torch.testing.assert_close(out.reshape(2, 18, -1), torch.from_numpy(rows), rtol=1e-9, atol=1e-12)
    assert not torch.allclose(out, blocks["per_step"](q, k, v)[0])


def test_tslib_layout_flag_reaches_all_three_blocks(make_configs):
    torch.manual_seed(SEED)
    np.random.seed(SEED)
    model = Model(make_configs(**SMALL, attn_output_layout="tslib"))
    blocks = [m for m in model.modules() if isinstance(m, (FourierBlock, FourierCrossAttention))]
    assert len(blocks) == 3 and {b.output_layout for b in blocks} == {"tslib"}
    with pytest.raises(ValueError, match="--attn_output_layout"):
        Model(make_configs(**SMALL, attn_output_layout="heads"))
