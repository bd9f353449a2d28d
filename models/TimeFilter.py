"""TimeFilter (Hu et al., "TimeFilter: Patch-Specific Spatial-Temporal Graph Filtration for Time Series
Forecasting", ICML 2025, https://arxiv.org/abs/2501.13041), TSLib's configuration.

RevIN-normalise (no affine) `[B, L, N]`; cut every variate into p = L / `--patch_len` non-overlapping
patches and embed each as a node, Linear(patch_len → D) + sinusoid position over the N·p nodes
(variate-major, `--pos 1`); run `--e_layers` GraphBlocks over the spatial-temporal patch graph (graph
learning, k-NN pruning by `--alpha`, patch-specific filtration of the spatial / temporal /
spatio-temporal neighbours by a top-p mixture of experts `--top_p`, GCN message passing; see
`layers/TimeFilter_layers.py`); flatten each variate's p node features and map D·p → H with one Linear
shared by the variates; de-normalise.

The other tasks, as TSLib's heads: imputation and anomaly detection reconstruct the window with the same
`head` mapping D·p → L (seq_len) per variate, de-normalised (neither reads the mask or the time marks);
classification flattens all N·p node features, applies `dropout` and `projection` Linear(N·p·D →
num_class) (no GELU, and the padding mask is not read: TSLib's head ignores it).

Differences from TSLib: TSLib sizes the graph with `--c_out` variates; here `--enc_in` (the variates the
input has), which is the same in TSLib's scripts and lets classification run (TSLib's default --c_out 7
fails on JapaneseVowels' 12 variates). TSLib's classification head counts ⌊(L·N − P)/P⌋ + 1 patches of the
variate-major series; with P dividing L (required here) that is TSLib's N·L/P, the same parameters.
"""

from __future__ import annotations

import argparse

import torch
import torch.nn as nn

from layers.config_checks import (
    CLASSIFICATION,
    FORECAST_TASKS,
    IMPUTATION,
    WINDOW_TASKS,
    check_heads,
    check_positive,
    check_variate_task_config,
)
from layers.Embed import PositionalEmbedding
from layers.StandardNorm import Normalize
from layers.TaskDispatch import window_task_output
from layers.TimeFilter_layers import TimeFilter_Backbone, patch_graph_masks
from utils.errors import UserInputError

TASKS = (*FORECAST_TASKS, IMPUTATION, "anomaly_detection", CLASSIFICATION)
# TSLib sizes the positional table of TimeFilter's patch embedding for 10,000 nodes.
MAX_NODES = 10000


class PatchEmbed(nn.Module):
    """Non-overlapping patches of the last axis, projected (Linear with bias) plus sinusoid positions:
    `[..., T]` → `[..., T / patch_len, D]`; TSLib's signature (`stride` defaults to `patch_len`)."""

    def __init__(self, dim: int, patch_len: int, stride: int | None = None, pos: bool = True) -> None:
        super().__init__()
        self.patch_len = patch_len
        self.stride = patch_len if stride is None else stride
        self.patch_proj = nn.Linear(patch_len, dim)
        self.pos = pos
        if pos:
            self.pe = PositionalEmbedding(dim, MAX_NODES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        patches = x.unfold(dimension=-1, size=self.patch_len, step=self.stride)  # [..., nodes, patch_len]
        tokens = self.patch_proj(patches)  # [..., nodes, D]
        if self.pos:
            tokens = tokens + self.pe(tokens)
        return tokens


def _check_timefilter_config(configs: argparse.Namespace) -> None:
    check_variate_task_config(configs, "TimeFilter", TASKS)
    check_heads(configs)
    check_positive(configs, "e_layers", "d_ff", "patch_len")
    if configs.seq_len % configs.patch_len != 0:
        raise UserInputError(
            f"--seq_len {configs.seq_len} is not a multiple of --patch_len {configs.patch_len}: TimeFilter cuts "
            "each variate into whole patches; choose --patch_len dividing --seq_len")
    if not 0.0 <= configs.alpha <= 1.0:
        raise UserInputError(f"--alpha {configs.alpha!r} must lie in [0, 1] (the share of each node's weakest "
                             "edges TimeFilter prunes)")
    if not 0.0 <= configs.top_p <= 1.0:
        raise UserInputError(f"--top_p {configs.top_p!r} must lie in [0, 1] (the cumulative routing probability "
                             "of the neighbour regions TimeFilter keeps)")
    if configs.pos not in (0, 1):
        raise UserInputError(f"--pos {configs.pos!r} must be 0 or 1 (positional embedding off/on)")
    nodes = configs.enc_in * (configs.seq_len // configs.patch_len)
    if configs.pos and nodes > MAX_NODES:
        raise UserInputError(
            f"--enc_in {configs.enc_in} x (--seq_len {configs.seq_len} / --patch_len {configs.patch_len}) = {nodes} "
            f"patch nodes exceed TimeFilter's {MAX_NODES} positions; use a larger --patch_len or --pos 0")


class Model(nn.Module):
    """TimeFilter for forecasting, imputation, anomaly detection and classification: `[B, L, enc_in]` →
    `[B, H, c_out]`, `[B, L, c_out]` or logits `[B, num_class]` (see the module doc).

    Reads seq_len, pred_len (forecasting), enc_in, c_out (not in classification), num_class
    (classification), patch_len, d_model, n_heads, e_layers, d_ff, dropout, alpha, top_p, pos. With
    c_out < enc_in (features MS) the last c_out variates are returned. The backbone's auxiliary routing
    loss of the last forward pass is kept in `moe_loss`.
    """

    def __init__(self, configs: argparse.Namespace) -> None:
        super().__init__()
        _check_timefilter_config(configs)
        self.task_name = configs.task_name
        self.seq_len = configs.seq_len
        self.pred_len = configs.pred_len if self.task_name in FORECAST_TASKS else 0
        self.c_out = configs.c_out
        self.n_vars = configs.enc_in
        self.dim = configs.d_model
        self.patch_len = configs.patch_len
        self.num_patches = configs.seq_len // configs.patch_len
        self.alpha = configs.alpha
        self.top_p = configs.top_p
        self.num_nodes = self.n_vars * self.num_patches
        self.patch_embed = PatchEmbed(self.dim, self.patch_len, self.patch_len, bool(configs.pos))
        self.backbone = TimeFilter_Backbone(self.dim, self.n_vars, configs.d_ff, configs.n_heads, configs.e_layers,
                                            self.top_p, configs.dropout, self.num_nodes)
        if self.task_name in FORECAST_TASKS:
            self.head = nn.Linear(self.dim * self.num_patches, self.pred_len)
        elif self.task_name == CLASSIFICATION:
            self.dropout = nn.Dropout(configs.dropout)
            self.projection = nn.Linear(self.dim * self.num_nodes, configs.num_class)
        else:
            self.head = nn.Linear(self.dim * self.num_patches, self.seq_len)
        self.norm = Normalize(configs.enc_in)
        self.moe_loss: torch.Tensor | None = None

    def encode(self, x_enc: torch.Tensor) -> torch.Tensor:
        """Normalise (statistics kept for "denorm"), cut into patch nodes and filter the graph:
        `[B, L, N]` → `[B, N·p, D]`; stores the routing loss in `moe_loss`."""
        b = x_enc.shape[0]
        x = self.norm(x_enc, "norm")  # [B, L, N]
        # Variate-major nodes: the patches of variate 0, then of variate 1, ...
        series = x.transpose(1, 2).reshape(b, -1)  # [B, N·L]
        nodes = self.patch_embed(series)  # [B, N·p, D]
        masks = patch_graph_masks(self.num_nodes, self.n_vars, x.device, x.dtype)  # [N·p, 3, N·p]
        nodes, self.moe_loss = self.backbone(nodes, masks, self.alpha)
        return nodes

    def per_variate_head(self, x_enc: torch.Tensor) -> torch.Tensor:
        """`head` on each variate's flattened nodes, de-normalised: `[B, L, N]` → `[B, T, c_out]`, T the
        head's width (pred_len when forecasting, seq_len when reconstructing)."""
        nodes = self.encode(x_enc)  # [B, N·p, D]
        out = self.head(nodes.reshape(x_enc.shape[0], self.n_vars, -1))  # [B, N, T]
        return self.norm(out.transpose(1, 2)[:, :, -self.c_out:], "denorm")  # [B, T, c_out]

    def imputation(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None, x_dec: torch.Tensor | None,
                   x_mark_dec: torch.Tensor | None, mask: torch.Tensor | None) -> torch.Tensor:
        """Reconstruct the window `[B, L, N]` (0 where masked) → `[B, L, c_out]`: the encoder, then `head`
        Linear(p·D → L) per variate, de-normalised. As TSLib's, neither the mask nor the marks are read
        (the normalisation takes the statistics of the zero-filled window)."""
        return self.per_variate_head(x_enc)

    def anomaly_detection(self, x_enc: torch.Tensor) -> torch.Tensor:
        """Reconstruct the window: `[B, L, enc_in]` → `[B, L, c_out]` (as imputation)."""
        return self.per_variate_head(x_enc)

    def classification(self, x_enc: torch.Tensor, padding_mask: torch.Tensor | None) -> torch.Tensor:
        """`[B, L, enc_in]` → logits `[B, num_class]`: the encoder, all N·p node features flattened, dropout,
        Linear(N·p·D → num_class). As TSLib's, no activation, and the padding mask is not read."""
        nodes = self.encode(x_enc)  # [B, N·p, D]
        return self.projection(self.dropout(nodes.flatten(start_dim=1)))  # [B, num_class]

    def forward(self, x_enc: torch.Tensor, x_mark_enc: torch.Tensor | None = None,
                x_dec: torch.Tensor | None = None, x_mark_dec: torch.Tensor | None = None,
                mask: torch.Tensor | None = None) -> torch.Tensor:
        if self.task_name in WINDOW_TASKS:
            return window_task_output(self, x_enc, x_mark_enc, x_dec, x_mark_dec, mask)
        return self.per_variate_head(x_enc)  # [B, H, c_out]
