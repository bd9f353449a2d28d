"""Issue 19 parts 3-4: normalised linear attention (`--caps_attn normalised`) against a slow loop
reference, and the per-difference switches of the official arithmetic (`--caps_path1_max`,
`--caps_path2_decay`, `--caps_rope_layout`) against a float64 transcription, the default and the bundle.

Tolerances as tests/layers/test_caps_attention.py: float64 vs float64 1e-12, float32 vs float64 1e-5.
"""

from __future__ import annotations

import itertools

import pytest
import torch
import torch.nn.functional as F

import layers.CAPS_Attention as caps
from layers.CAPS_Attention import CAPSAttention, caps_attention
from tests.layers.test_caps_attention import F32_TOL, F64_TOL, dense_reference, make_inputs
from tests.numerics import assert_close_to_scale

# ---- normalised linear attention ----------------------------------------------------------------------


def rotate_pairs(x: torch.Tensor, omega: torch.Tensor) -> torch.Tensor:
    """True RoPE written out: pair (2j, 2j+1) of step t turned by t omega_j. x [B, T, H, E]."""
    angle = torch.arange(x.shape[1], dtype=torch.float64)[:, None, None] * omega.double()  # [T, 1, E/2]
    cos, sin = angle.cos().to(x.dtype), angle.sin().to(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


def normalised_loop_reference(q, k, v, omega=None):
    """Katharopoulos et al.'s causal linear attention with phi = elu + 1, one step at a time in float64:
    S_t = S_{t-1} + R_t phi(k_t) v_t^T, z_t = z_{t-1} + phi(k_t), o_t = (R_t phi(q_t)) S_t / phi(q_t).z_t."""
    q, k, v = q.double(), k.double(), v.double()
    fq, fk = F.elu(q) + 1, F.elu(k) + 1
    rq, rk = (fq, fk) if omega is None else (rotate_pairs(fq, omega), rotate_pairs(fk, omega))
    B, T, H, E = q.shape
    state = torch.zeros(B, H, E, v.shape[-1], dtype=torch.float64)
    norm = torch.zeros(B, H, E, dtype=torch.float64)
    outs = []
    for t in range(T):
        state = state + rk[:, t, :, :, None] * v[:, t, :, None, :]
        norm = norm + fk[:, t]
        num = torch.einsum("bhe,bhev->bhv", rq[:, t], state)
        den = torch.einsum("bhe,bhe->bh", fq[:, t], norm)
        outs.append(num / den[..., None])
    return torch.stack(outs, dim=1)  # [B, T, H, Ev]


def grads_of(fn, inputs, weight):
    """Output and gradients of sum(fn(*inputs) * weight) with respect to every input."""
    leaves = [x.detach().clone().requires_grad_() for x in inputs]
    o = fn(*leaves)
    grads = torch.autograd.grad((o * weight.to(o.dtype)).sum(), leaves, allow_unused=True, materialize_grads=True)
    return o.detach(), list(grads)


def check(actual, expected, tol: float, what: str, names: str) -> None:
    (o_a, g_a), (o_e, g_e) = actual, expected
    assert_close_to_scale(o_a, o_e, tol, f"{what} output")
    floor = max(g.abs().max().item() for g in g_e)
    for name, a, e in zip(names.split(), g_a, g_e, strict=True):
        assert_close_to_scale(a, e, tol, f"{what} grad {name}", scale_floor=floor)


@pytest.mark.parametrize("rope", [True, False], ids=["rope", "no-rope"])
@pytest.mark.parametrize("impl", ["naive", "recurrent", "chunked"])
@pytest.mark.parametrize("T", [1, 63, 97], ids=lambda t: f"T{t}")
def test_normalised_matches_loop_reference_float64(T: int, impl: str, rope: bool) -> None:
    q, k, v, p, g, clock = make_inputs(2, T, 2, 6, seed=11)
    omega = caps.rope_frequencies(6).double() * 1.3 if rope else None
    weight = torch.randn(2, T, 2, 6, generator=torch.Generator().manual_seed(12), dtype=torch.float64)

    def fast(q, k, v, omega):
        return caps_attention(q, k, v, p, g, clock, attn="normalised", paths="none", impl=impl, rope_freq=omega)

    inputs = [q, k, v] + ([omega] if rope else [])
    names = "q k v" + (" omega" if rope else "")
    got = grads_of(lambda *a: fast(*a[:3], a[3] if rope else None), inputs, weight)
    ref = grads_of(lambda *a: normalised_loop_reference(*a[:3], a[3] if rope else None), inputs, weight)
    check(got, ref, F64_TOL, f"normalised {impl}", names)


def test_normalised_long_sequence_float32_matches_float64_loop() -> None:
    """T = 2048, float32 chunked against the float64 loop: outputs and gradients."""
    T = 2048
    q, k, v, p, g, clock = make_inputs(1, T, 2, 8, seed=13)
    omega = caps.rope_frequencies(8).double()
    weight = torch.randn(1, T, 2, 8, generator=torch.Generator().manual_seed(14), dtype=torch.float64)
    got = grads_of(lambda q, k, v: caps_attention(q, k, v, p.float(), g.float(), clock.float(), attn="normalised",
                                                  paths="none", impl="chunked", rope_freq=omega.float()),
                   [q.float(), k.float(), v.float()], weight)
    ref = grads_of(lambda q, k, v: normalised_loop_reference(q, k, v, omega), [q, k, v], weight)
    check(got, ref, F32_TOL, "normalised T2048 chunked float32", "q k v")


@pytest.mark.parametrize("paths", ["123", "2"], ids=lambda p: f"paths-{p}")
def test_normalised_with_paths_matches_dense_formula(paths: str) -> None:
    """With paths the scores phi(q).phi(k) carry the (non-negative) path weights: numerator over rotated
    features, normaliser over unrotated ones, both from the dense float64 formula of the kernel tests."""
    q, k, v, p, g, clock = make_inputs(2, 40, 2, 4, seed=15)
    omega = caps.rope_frequencies(4).double()
    fq, fk = F.elu(q) + 1, F.elu(k) + 1
    num = dense_reference(rotate_pairs(fq, omega), rotate_pairs(fk, omega), v, p, g, clock, "linear", paths)
    den = dense_reference(fq, fk, torch.ones_like(v[..., :1]), p, g, clock, "linear", paths)
    for impl in ("naive", "chunked"):
        got = caps_attention(q, k, v, p, g, clock, attn="normalised", paths=paths, impl=impl, rope_freq=omega)
        assert_close_to_scale(got, num / den, F64_TOL, f"normalised paths {paths} {impl}")


def test_normalised_is_a_weighted_mean_of_values() -> None:
    """Without RoPE the weights phi(q_t).phi(k_i) / sum_j phi(q_t).phi(k_j) are positive and sum to one:
    a constant value comes back exactly, and every output lies inside the range of the values so far."""
    q, k, v, p, g, clock = make_inputs(2, 50, 2, 4, seed=16)
    const = torch.full_like(v, 3.25)
    assert_close_to_scale(caps_attention(q, k, const, p, g, clock, attn="normalised", paths="none"), const, F64_TOL,
                 "constant values")
    o = caps_attention(q, k, v, p, g, clock, attn="normalised", paths="none")
    assert (o <= torch.cummax(v, dim=1).values + 1e-12).all() and (o >= torch.cummin(v, dim=1).values - 1e-12).all()


def test_normalised_layer_is_the_loop_reference_on_its_projections() -> None:
    torch.manual_seed(17)
    layer = CAPSAttention(16, 2, attn="normalised", paths="none", rope="learned").double()
    with torch.no_grad():
        layer.rope_freq.mul_(1.7)
    x = torch.randn(2, 70, 16, dtype=torch.float64)
    B, T, _ = x.shape
    q, k, v = (proj(x).view(B, T, 2, 8) for proj in (layer.q_proj, layer.k_proj, layer.v_proj))
    ref = layer.c_proj(normalised_loop_reference(q, k, v, layer.rope_freq).reshape(B, T, 16))
    assert_close_to_scale(layer(x), ref, F64_TOL, "normalised layer")
    layer(x).sum().backward()
    assert layer.rope_freq.grad is not None and layer.rope_freq.grad.abs().max() > 0


# ---- per-difference switches of the official arithmetic -------------------------------------------------

SWITCHES = ("path1_max", "path2_decay", "rope_layout")
OFFICIAL = {"path1_max": "global", "path2_decay": "official", "rope_layout": "official"}
PAPER = {"path1_max": "running", "path2_decay": "exact", "rope_layout": "paper"}


def layer_pair(paths: str = "123", attn: str = "linear", seed: int = 21, **kwargs) -> tuple[CAPSAttention, torch.Tensor]:
    """A float64 layer with the given switches and an input long enough (T = 150) for path 2's clip to bind."""
    torch.manual_seed(seed)
    layer = CAPSAttention(32, 4, attn=attn, paths=paths, rope="learned", impl="naive" if attn == "softmax" else "auto",
                          **kwargs).double()
    with torch.no_grad():
        layer.rope_freq.mul_(1.3)  # learned frequencies away from their init (the official layout reads them too)
    x = torch.randn(2, 150, 32, generator=torch.Generator().manual_seed(seed + 1), dtype=torch.float64)
    return layer, x


def switch_reference(layer: CAPSAttention, x: torch.Tensor, path1_max: str, path2_decay: str,
                     rope_layout: str) -> torch.Tensor:
    """Float64 transcription with the T x T weights materialised: per path the paper's weights or the
    official code's (caps_reference section 4), RoPE as true pair rotations or the official layout."""
    B, T, D = x.shape
    H, E = layer.n_heads, layer.head_dim
    q, k, v, p, g = (lin(x).view(B, T, H, E) for lin in (layer.q_proj, layer.k_proj, layer.v_proj, layer.p_proj,
                                                         layer.gate_proj))
    delta = (F.softplus(layer.clock_proj(x)) + 1e-6).view(B, T, H, 1)
    omega = layer.rope_freq
    if rope_layout == "official":
        ang = torch.arange(T, dtype=torch.float64)[:, None] * omega
        ang = torch.cat([ang, ang], -1)[None, :, None]  # [1, T, 1, E]

        def rope(z):
            rot = torch.zeros_like(z)
            rot[..., 0::2], rot[..., 1::2] = -z[..., 1::2], z[..., 0::2]
            return z * ang.cos() + rot * ang.sin()

        q, k = rope(q), rope(k)
    else:
        q, k = rotate_pairs(q, omega), rotate_pairs(k, omega)
    causal = torch.ones(T, T, dtype=torch.bool).tril()[None, :, :, None, None]  # [1, t, i, 1, 1]
    weights = torch.zeros(B, T, T, H, E, dtype=torch.float64)  # [b, t, i, h, e]
    pt = p + torch.log(delta)
    if 1 in layer.paths:
        if path1_max == "global":
            w = torch.exp(pt - pt.max(dim=1, keepdim=True).values)
            weights = weights + w[:, None] / (torch.cumsum(w, 1) + 1e-8)[:, :, None]
        else:
            logits = pt[:, None].expand(B, T, T, H, E).masked_fill(~causal, float("-inf"))
            weights = weights + torch.softmax(logits, dim=2)
    if 2 in layer.paths:
        cum = torch.cumsum(-F.softplus(g) * delta, dim=1)  # log Gamma
        if path2_decay == "official":
            gamma = torch.exp(cum.clamp(-50, 40))
            weights = weights + gamma[:, :, None] / (gamma[:, None] + 1e-8)
        else:
            weights = weights + torch.exp((cum[:, :, None] - cum[:, None]).masked_fill(~causal, float("-inf")))
    if 3 in layer.paths:
        weights = weights + (delta[:, None] / torch.cumsum(delta, 1)[:, :, None]).expand_as(weights)
    if not layer.paths:
        weights = torch.ones_like(weights)
    scores = torch.einsum("bthe,bihe,btihe->bhti", q, k, weights * causal)
    o = torch.einsum("bhti,bihv->bthv", scores, v).reshape(B, T, D)
    return layer.c_proj(o)


COMBOS = [dict(zip(SWITCHES, values, strict=True)) for values in itertools.product(
    ("running", "global"), ("exact", "official"), ("paper", "official"))]


@pytest.mark.parametrize("switches", COMBOS, ids=lambda s: "-".join(s.values()))
def test_every_switch_combination_matches_the_transcription(switches: dict) -> None:
    """All 8 combinations of the three switches (paper numerics otherwise) against the float64
    transcription; float32 (fast kernels for the paper paths, the no-decay kernel for the official ones)
    against it too."""
    layer, x = layer_pair(**switches)
    ref = switch_reference(layer, x, **switches)
    assert_close_to_scale(layer(x), ref, F64_TOL, f"{switches} float64")
    assert_close_to_scale(layer.float()(x.float()), ref, F32_TOL, f"{switches} float32")


@pytest.mark.parametrize("attn", ["linear", "softmax", "normalised"])
@pytest.mark.parametrize("paths", ["123", "13", "2", "none"], ids=lambda p: f"paths-{p}")
def test_official_numerics_is_exactly_every_switch_official(paths: str, attn: str) -> None:
    """--caps_numerics official == the five switches official, bit for bit (the layer's three here)."""
    bundle, x = layer_pair(paths, attn, numerics="official")
    switched, _ = layer_pair(paths, attn, **OFFICIAL)
    assert (switched.path1_max, switched.path2_decay, switched.rope_layout) == tuple(OFFICIAL.values())
    assert torch.equal(bundle(x), switched(x))
    assert torch.equal(bundle.float()(x.float()), switched.float()(x.float()))


@pytest.mark.parametrize("attn", ["linear", "softmax", "normalised"])
@pytest.mark.parametrize("paths", ["123", "13", "none"], ids=lambda p: f"paths-{p}")
def test_default_is_the_paper_kernel_call(paths: str, attn: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Defaults (auto under paper numerics) equal explicit paper switches bit for bit, and both make the
    paper path's calls only: one kernel call (`dispatch_kernel`, caps_attention past its checks) on all paths
    with the RoPE frequencies (normalised: the numerator with them, the normaliser without)."""
    default, x = layer_pair(paths, attn)
    explicit, _ = layer_pair(paths, attn, **PAPER)
    assert (default.path1_max, default.path2_decay, default.rope_layout) == tuple(PAPER.values())
    assert default.official_paths == () and default.paper_paths == caps.parse_paths(paths)
    calls = []
    kernel = caps.dispatch_kernel

    def spy(*args):
        calls.append((args[6], args[7], args[10] is not None))
        return kernel(*args)

    monkeypatch.setattr(caps, "dispatch_kernel", spy)
    assert torch.equal(default(x), explicit(x))
    ids = caps.parse_paths(paths)
    expected = [("linear", ids, True), ("linear", ids, False)] if attn == "normalised" else [(attn, ids, True)]
    assert calls == expected * 2


@pytest.mark.parametrize(("switch", "paths"), [("path1_max", "23"), ("path2_decay", "13"), ("rope_layout", "123")])
def test_a_switch_whose_part_is_absent_changes_nothing(switch: str, paths: str) -> None:
    """path 1's switch without path 1, path 2's without path 2, the RoPE layout without RoPE: the default."""
    rope = "none" if switch == "rope_layout" else "learned"
    torch.manual_seed(23)
    default = CAPSAttention(32, 4, paths=paths, rope=rope).double()
    torch.manual_seed(23)
    switched = CAPSAttention(32, 4, paths=paths, rope=rope, **{switch: OFFICIAL[switch]}).double()
    x = torch.randn(2, 150, 32, dtype=torch.float64)
    assert torch.equal(default(x), switched(x))


@pytest.mark.parametrize("switch", SWITCHES)
def test_each_switch_alone_changes_only_its_part(switch: str) -> None:
    """One switch on: outside its part the output is the paper's (the transcription with only that part
    official, compared above), and its part really changes: paths 1/2 alone or RoPE alone differ from the
    paper by more than rounding at T = 150 with default-init gates and p logits x 20."""
    paths = {"path1_max": "1", "path2_decay": "2", "rope_layout": "none"}[switch]
    alone, x = layer_pair(paths, **{switch: OFFICIAL[switch]})
    paper, _ = layer_pair(paths)
    with torch.no_grad():
        for layer in (alone, paper):
            layer.p_proj.weight.mul_(20)
    assert (alone.path1_max, alone.path2_decay, alone.rope_layout) == tuple(
        OFFICIAL[s] if s == switch else PAPER[s] for s in SWITCHES)
    diff = (alone(x) - paper(x)).abs().max() / paper(x).abs().max()
    assert diff > 1e-3, f"{switch} alone changed the output by only {diff:.2e}"


def test_global_path1_max_alone_leaks_the_future_and_running_does_not() -> None:
    """The official global max (caps_reference section 4) alone makes outputs before step 50 depend on
    later inputs; the paper's running max keeps the layer causal."""
    for path1_max, leaks in (("global", True), ("running", False)):
        layer, x = layer_pair("123", path1_max=path1_max)
        with torch.no_grad():
            layer.p_proj.weight.mul_(20)
        x2 = x.clone()
        x2[:, 50:] *= 40
        change = (layer(x2)[:, :50] - layer(x)[:, :50]).abs().max() / layer(x)[:, :50].abs().max()
        assert (change > 1e-3) if leaks else (change < 1e-12), (path1_max, change.item())


def test_softmax_rejects_mixed_paper_and_official_paths() -> None:
    with pytest.raises(ValueError, match="--caps_attn softmax needs the selected paths all paper or all official"):
        CAPSAttention(32, 4, attn="softmax", impl="naive", path1_max="global")
    # Softmax with only a path whose switch is official, or with the RoPE layout alone, is fine.
    CAPSAttention(32, 4, attn="softmax", impl="naive", paths="1", path1_max="global")
    CAPSAttention(32, 4, attn="softmax", impl="naive", rope_layout="official")


@pytest.mark.parametrize(("kwargs", "flag"), [(dict(path1_max="max"), "--caps_path1_max"),
                                              (dict(path2_decay="clip"), "--caps_path2_decay"),
                                              (dict(rope_layout="half"), "--caps_rope_layout"),
                                              (dict(attn="elu"), "--caps_attn")], ids=lambda v: str(v))
def test_bad_switch_values_name_the_flag(kwargs: dict, flag: str) -> None:
    with pytest.raises(ValueError, match=f"^{flag} .* is invalid: choose one of"):
        CAPSAttention(32, 4, **kwargs)


def test_kernels_still_reject_the_normalised_choice() -> None:
    """normalised is built on the linear kernels; a kernel called by name with it fails, never runs linear."""
    for name in ("naive", "recurrent", "chunked"):
        with pytest.raises(ValueError, match="--caps_attn"):
            caps.CAPS_KERNELS[name](*make_inputs(1, 4, 1, 2), (1, 2, 3), attn="normalised")
