"""Frequency-domain MLP of FreTS (Yi et al., "Frequency-domain MLPs are More Effective Learners in Time
Series Forecasting", NeurIPS 2023, https://arxiv.org/abs/2311.06184, Eq. 7–8).

For a spectrum H = H_r + j·H_i `[..., D]` and complex weights W = W_r + j·W_i, B = B_r + j·B_i:
    Y_r = ReLU(H_r W_r − H_i W_i + B_r)
    Y_i = ReLU(H_i W_r + H_r W_i + B_i)
    Y   = SoftShrink_λ(Y_r) + j·SoftShrink_λ(Y_i)          (λ: sparsity threshold)
i.e. one complex-valued Linear layer with ReLU applied to the real and imaginary parts separately.

Two forms share one signature:
- ``"diagonal"``: W acts through its diagonal only (H_r·diag(W_r) elementwise). This is what the
  authors' released code and TSLib compute (their einsum ``'bijd,dd->bijd'`` reads the diagonal), so
  the off-diagonal entries of W never change the output. FreTS uses it to stay TSLib's model.
- ``"dense"``: the paper's full D × D complex product.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

MLP_FORMS = ("diagonal", "dense")


def frequency_mlp(spectrum: torch.Tensor, w_real: torch.Tensor, w_imag: torch.Tensor, b_real: torch.Tensor,
                  b_imag: torch.Tensor, sparsity: float, form: str = "diagonal") -> torch.Tensor:
    """One frequency-domain MLP layer.

    Args:
        spectrum: complex `[..., D]`.
        w_real, w_imag: `[D, D]` real and imaginary weights (``form="diagonal"`` reads their diagonals).
        b_real, b_imag: `[D]` real and imaginary biases.
        sparsity: SoftShrink threshold λ ≥ 0 (FreTS: 0.01).
        form: ``"diagonal"`` (TSLib's and the authors' code) or ``"dense"`` (the paper's equation).
    Returns the complex `[..., D]` output.
    """
    real, imag = spectrum.real, spectrum.imag
    if form == "diagonal":
        wr, wi = w_real.diagonal(), w_imag.diagonal()  # [D]
        out_real = real * wr - imag * wi + b_real
        out_imag = imag * wr + real * wi + b_imag
    elif form == "dense":
        out_real = real @ w_real - imag @ w_imag + b_real
        out_imag = imag @ w_real + real @ w_imag + b_imag
    else:
        raise ValueError(f"frequency_mlp form {form!r} is not one of {', '.join(MLP_FORMS)}")
    out_real = F.softshrink(F.relu(out_real), sparsity)
    out_imag = F.softshrink(F.relu(out_imag), sparsity)
    return torch.complex(out_real, out_imag)  # [..., D]
