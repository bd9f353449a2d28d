"""TSLib's task dispatch inside `Model.forward(x_enc, x_mark_enc, x_dec, x_mark_dec, mask=None)`: a model
serving the window tasks exposes TSLib's methods and its forward hands those tasks here.

- imputation: `imputation(x_enc, x_mark_enc, x_dec, x_mark_dec, mask)` → `[B, L, c_out]`
- anomaly detection: `anomaly_detection(x_enc)` → `[B, L, c_out]` (TSLib passes no marks)
- classification: `classification(x_enc, padding_mask)` → `[B, num_class]`; the experiment passes the padding
  mask `[B, L]` in the `x_mark_enc` position.

`TaskForward` is that forward for a model whose forecasting is one `forecast` method.
"""

from __future__ import annotations

import torch
import torch.nn as nn

from layers.config_checks import ANOMALY_DETECTION, CLASSIFICATION, IMPUTATION, WINDOW_TASKS


def window_task_output(model: nn.Module, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None,
                       x_dec: torch.Tensor | None, x_mark_dec: torch.Tensor | None,
                       mask: torch.Tensor | None) -> torch.Tensor:
    """The output of `model.task_name` (one of `WINDOW_TASKS`) through the model's TSLib-named method."""
    task = model.task_name
    if task == IMPUTATION:
        return model.imputation(x_enc, x_mark_enc, x_dec, x_mark_dec, mask)
    if task == ANOMALY_DETECTION:
        return model.anomaly_detection(x_enc)
    if task == CLASSIFICATION:
        return model.classification(x_enc, x_mark_enc)
    raise ValueError(f"--task_name {task!r} is not a window task (imputation, anomaly_detection, classification)")


class TaskForward:
    """TSLib's `forward` for a model serving forecasting and the window tasks: the window tasks through
    `window_task_output`, forecasting through the model's `forecast`, called with the inputs FORECAST_INPUTS
    names, in that order (a model sets it to what its forecast reads)."""

    #: which of forward's inputs `forecast` takes, in order
    FORECAST_INPUTS: tuple[str, ...] = ("x_enc", "x_mark_enc", "x_dec", "x_mark_dec")

    def forward(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None = None,
                x_dec: torch.Tensor | None = None, x_mark_dec: torch.Tensor | None = None,
                mask: torch.Tensor | None = None) -> torch.Tensor:
        """x_enc `[B, L, enc_in]` (and marks, decoder input, mask as TSLib passes them) → `[B, H, c_out]` when
        forecasting, else the window task's output (see window_task_output)."""
        if self.task_name in WINDOW_TASKS:
            return window_task_output(self, x_enc, x_mark_enc, x_dec, x_mark_dec, mask)
        given = {"x_enc": x_enc, "x_mark_enc": x_mark_enc, "x_dec": x_dec, "x_mark_dec": x_mark_dec}
        return self.forecast(*(given[name] for name in self.FORECAST_INPUTS))


class EncoderOutputTasks(TaskForward):
    """Every task from one `encoder(x)`: `[B, L, N]` → `[B, H, N]` with H = pred_len when forecasting and L for
    the window tasks (TSLib's DLinear, LightTS, SegRNN). Forecasting, imputation and anomaly detection return
    its last c_out variates (the marks and the mask are not read, as in TSLib); classification flattens the
    L-step output time-major into `projection`, Linear(L·N → num_class) (the padding mask is not read: padded
    steps are zeros)."""

    FORECAST_INPUTS = ("x_enc",)

    def forecast(self, x_enc: torch.Tensor) -> torch.Tensor:
        """`[B, L, enc_in]` → `[B, H, c_out]`."""
        return self.encoder(x_enc)[:, :, -self.c_out:]

    def imputation(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None, x_dec: torch.Tensor | None,
                   x_mark_dec: torch.Tensor | None, mask: torch.Tensor | None) -> torch.Tensor:
        """Reconstruct the window `[B, L, N]` (0 where masked) → `[B, L, c_out]`."""
        return self.encoder(x_enc)[:, :, -self.c_out:]

    def anomaly_detection(self, x_enc: torch.Tensor) -> torch.Tensor:
        """Reconstruct the window: `[B, L, enc_in]` → `[B, L, c_out]`."""
        return self.encoder(x_enc)[:, :, -self.c_out:]

    def classification(self, x_enc: torch.Tensor, padding_mask: torch.Tensor | None = None) -> torch.Tensor:
        """`[B, L, enc_in]` → logits `[B, num_class]`."""
        out = self.encoder(x_enc)  # [B, L, N]
        return self.projection(out.reshape(out.shape[0], -1))  # [B, num_class]
