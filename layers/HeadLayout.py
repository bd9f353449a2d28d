"""How an attention block's head-major output becomes the `[B, L, H, E]` that its layer flattens.

Informer's ProbSparse attention computes its context as `[B, H, L, E]` and FEDformer's Fourier blocks
as `[B, H, E, L]`. The multi-head layers around them (`AttentionLayer`, `AutoCorrelationLayer`) flatten
`[B, L, H, E]` → `[B, L, H·E]` before the output projection. Two ways of getting there:

    per_step  a permutation of the axes (time to axis 1, heads to axis 2): output step l holds the
              H·E values computed for step l — what the Informer and FEDformer papers write, and
              what Informer's authors' code does (a transpose before returning; only its decoder
              self-attention re-interleaves, on purpose, with `--mix`).
    tslib     TSLib's arithmetic: the head-major buffer's memory read as `[B, L, H, E]` (TSLib
              returns the buffer and its layer calls `view(B, L, -1)`). With the buffer flattened
              in C order as f, row l of the flattened output is f[l·H·E : (l+1)·H·E]:
              for `[B, H, L, E]`, row l, slot j (0 ≤ j < H) = context[h, p] with
              h·L + p = l·H + j, i.e. H consecutive steps of one head, not step l's heads;
              for `[B, H, E, L]`, row l is H·E consecutive time values of some (head, channel) rows.
              The causal mask of Informer's decoder self-attention then no longer keeps a step from
              reading later steps' outputs.

`per_step` is the default everywhere; `tslib` (run.py `--attn_output_layout tslib`) reproduces TSLib's
Informer and FEDformer forward pass (docs/tslib_differences.md).
"""

from __future__ import annotations

import torch

from layers.config_checks import OUTPUT_LAYOUTS


def check_output_layout(layout: str) -> None:
    """ValueError for a layout that is not one of OUTPUT_LAYOUTS."""
    if layout not in OUTPUT_LAYOUTS:
        raise ValueError(f"output layout {layout!r} is not one of {', '.join(OUTPUT_LAYOUTS)} "
                         "(--attn_output_layout)")


def head_major_to_steps(out: torch.Tensor, layout: str, time_dim: int) -> torch.Tensor:
    """A head-major block output → `[B, L, H, E]` (see the module docstring).

    Args:
        out: `[B, H, L, E]` (time_dim 2) or `[B, H, E, L]` (time_dim 3).
        layout: "per_step" (permute the axes) or "tslib" (read the memory as `[B, L, H, E]`).
        time_dim: the axis of `out` that is time, 2 or 3.
    """
    check_output_layout(layout)
    if time_dim not in (2, 3) or out.dim() != 4:
        raise ValueError(f"head_major_to_steps takes a 4-d [B, H, L, E] or [B, H, E, L] tensor and time_dim "
                         f"2 or 3, got shape {tuple(out.shape)} and time_dim {time_dim}")
    b, h = out.shape[:2]
    steps = out.shape[time_dim]
    width = out.shape[5 - time_dim]  # the other trailing axis: E
    if layout == "tslib":
        return out.contiguous().view(b, steps, h, width)  # [B, L, H, E]
    if time_dim == 2:
        return out.transpose(1, 2).contiguous()  # [B, L, H, E]
    return out.permute(0, 3, 1, 2).contiguous()  # [B, L, H, E]
