"""The selective scans' time-invariant forms (MambaSL's `--tv_B 0` / `--tv_C 0`: B or C `[E, N]`, one row
per channel) and the scan without skip term (`--use_D 0`: D = None), against the input-dependent form run
one channel at a time (that form is checked against the quadratic closed form in
tests/models/test_MambaSimple.py), outputs and gradients in float64; the two scans against each other;
shape errors naming both accepted shapes."""

from __future__ import annotations

import pytest
import torch

from layers.Mamba_Blocks import SELECTIVE_SCANS, selective_scan_parallel, selective_scan_sequential
from tests.models.test_MambaSimple import outputs_and_grads, scan_inputs
from tests.numerics import assert_close

NAMES = ["y", "du", "ddelta", "dA", "dB", "dC", "dD"]


def invariant_inputs(batch: int, length: int, inner: int, state: int, dt: str, form: str,
                     seed: int = 0) -> list[torch.Tensor | None]:
    """`scan_inputs` with B and/or C replaced by a time-invariant `[E, N]` (form 'B', 'C', 'BC' or '' for
    none) and, for form ending in '-noD', D = None."""
    inputs = scan_inputs(batch, length, inner, state, dt, seed)
    gen = torch.Generator().manual_seed(seed + 100)
    for index, name in ((3, "B"), (4, "C")):
        if name in form.split("-")[0]:
            inputs[index] = torch.randn(inner, state, generator=gen, dtype=torch.float64).requires_grad_()
    if form.endswith("-noD"):
        inputs[5] = None
    return inputs


def one_channel_at_a_time(u, delta, A, B, C, D) -> torch.Tensor:
    """The scan of each channel e alone through the input-dependent form, a time-invariant row B_e (C_e)
    repeated at every step; D = None run as D = 0."""
    batch, length, inner = u.shape
    outputs = []
    for e in range(inner):
        b_e, c_e = (M if M.dim() == 3 else M[e].expand(batch, length, -1) for M in (B, C))  # [B, L, N]
        skip = torch.zeros(1, dtype=u.dtype) if D is None else D[e:e + 1]
        outputs.append(selective_scan_sequential(u[..., e:e + 1], delta[..., e:e + 1], A[e:e + 1], b_e, c_e, skip))
    return torch.cat(outputs, dim=-1)  # [B, L, E]


def grads_of(scan, inputs, weight) -> list[torch.Tensor]:
    """Output and gradients; a D = None input has no gradient (left out)."""
    present = [t for t in inputs if t is not None]

    def call(*tensors):
        it = iter(tensors)
        return scan(*[None if t is None else next(it) for t in inputs])

    return outputs_and_grads(call, present, weight)


FORMS = ["B", "C", "BC", "BC-noD", "-noD"]
SHORT = [(2, 1, 3, 4, "typical"), (2, 63, 3, 4, "typical"), (2, 97, 3, 4, "mixed")]
# Every form at the awkward lengths; the long one (T ≥ 2048, ~4 s a case here) for the form furthest from the
# selective one only.
CASES = [(*case, form) for case in SHORT for form in FORMS] + [(1, 2048, 2, 3, "mixed", "BC-noD")]


@pytest.mark.parametrize("scan", list(SELECTIVE_SCANS))
@pytest.mark.parametrize(("batch", "length", "inner", "state", "dt", "form"), CASES,
                         ids=[f"B{b}-T{t}-E{e}-N{n}-{dt}-{f}-float64" for b, t, e, n, dt, f in CASES])
def test_time_invariant_forms_equal_the_selective_form_per_channel(scan, batch, length, inner, state, dt, form):
    inputs = invariant_inputs(batch, length, inner, state, dt, form)
    weight = torch.randn(batch, length, inner, generator=torch.Generator().manual_seed(5), dtype=torch.float64)
    expected = grads_of(one_channel_at_a_time, inputs, weight)
    actual = grads_of(SELECTIVE_SCANS[scan], inputs, weight)
    names = [n for n in NAMES if not (n == "dD" and inputs[5] is None)]
    for name, mine, ref in zip(names, actual, expected, strict=True):
        assert torch.isfinite(mine).all(), name
        assert_close(mine, ref, rtol=1e-9, atol=1e-9, what=f"{form} {name}")


@pytest.mark.parametrize("form", FORMS)
def test_parallel_scan_matches_the_sequential_one_on_the_time_invariant_forms(form):
    inputs = invariant_inputs(2, 97, 3, 4, "mixed", form, seed=3)
    weight = torch.randn(2, 97, 3, generator=torch.Generator().manual_seed(6), dtype=torch.float64)
    expected = grads_of(selective_scan_sequential, inputs, weight)
    actual = grads_of(selective_scan_parallel, inputs, weight)
    for mine, ref in zip(actual, expected, strict=True):
        assert_close(mine, ref, rtol=1e-9, atol=1e-9, what=form)


def test_no_skip_term_removes_exactly_d_times_u():
    u, delta, A, B, C, D = (t.detach() for t in scan_inputs(2, 17, 3, 4, "typical"))
    for scan in SELECTIVE_SCANS.values():
        assert_close(scan(u, delta, A, B, C, None), scan(u, delta, A, B, C, D) - u * D, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(("index", "shape", "message"), [
    (3, (2, 5), r"B must be \[2, 7, 4\] or \[3, 4\], got \[2, 5\]"),
    (4, (3, 5), r"C must be \[2, 7, 4\] or \[3, 4\], got \[3, 5\]"),
    (5, (4,), r"D must be \[3\], got \[4\]"),
], ids=["B", "C", "D"])
def test_wrong_shapes_name_the_accepted_ones(index, shape, message):
    inputs = [t.detach() for t in scan_inputs(2, 7, 3, 4, "typical")]
    inputs[index] = torch.zeros(shape, dtype=torch.float64)
    for scan in SELECTIVE_SCANS.values():
        with pytest.raises(ValueError, match=message):
            scan(*inputs)
