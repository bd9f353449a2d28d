"""BatchNorm1d that survives a training batch with one value per channel (issue 49).

`nn.BatchNorm1d` in training mode raises "Expected more than 1 value per channel" when the batch holds a single
value per channel: a loader's last training batch of one window (TSLib keeps it: `drop_last=False`) meeting a
one-position axis, e.g. Pyraformer's coarsest scale at `--seq_len` 16-31 or PatchTST's single patch of one
variate. Batch statistics do not exist there, so that batch is normalised with the running statistics (as in
evaluation) and leaves them unchanged; its affine parameters still learn. Every other batch is torch's
BatchNorm1d unchanged, and the parameter and buffer names are its own, so TSLib's checkpoints load.
"""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F


class SafeBatchNorm1d(nn.BatchNorm1d):
    """`nn.BatchNorm1d` (same arguments) over `[N, C]` or `[N, C, L]`; a training batch with N·L = 1 uses the
    running statistics instead of raising."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        one_value = x.numel() == x.shape[1] if x.ndim > 1 else False
        if self.training and one_value and self.running_mean is not None:
            return F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias, training=False,
                                eps=self.eps)
        return super().forward(x)
