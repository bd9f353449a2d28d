"""Each CAPS layer of a model on one window, split by path: forward hooks keep each layer's input and output,
`CAPSAttention.attention_inputs` gives the kernel's inputs, `caps_attention` with one path at a time gives
o^(j) (the paths add up to the layer's attention output), and `path_weights` (the naive reference kernel's
weights) gives each path's t × i matrix."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from layers.CAPS_Attention import CAPSAttention, caps_attention, path_weights, rope_rotate

__all__ = ["WEIGHT_FILES", "LayerLook", "capture_layers", "layer_quantities", "look_at_layer", "path_matrices"]

# File stem of each path's weights (`explain.figures` draws them as heat maps).
WEIGHT_FILES = {1: "riemann_weights", 2: "decay_weights", 3: "clock_weights"}


@dataclass
class LayerLook:
    """One CAPS layer on one window; rows are the decoded channels (B = 1).

    inputs: `attention_inputs` of the layer's input (q, k, v, p, g [Ct, T, H, E], clock [Ct, T, H], rope_freq);
    outputs: path id -> o^(j) [Ct, T, H, Ev]; total: the kernel with the layer's paths [Ct, T, H, Ev];
    layer_output: what the layer's forward returned [Ct, T, D] (its c_proj of `total`)."""

    layer: CAPSAttention
    inputs: dict[str, torch.Tensor | None]
    outputs: dict[int, torch.Tensor]
    total: torch.Tensor
    layer_output: torch.Tensor


def capture_layers(model: torch.nn.Module, *inputs: torch.Tensor) -> tuple[torch.Tensor, list[tuple]]:
    """Run model(*inputs) without gradients; return its output and (layer, input, output) of every
    CAPSAttention call, in call order (forward hooks on the model's own layers)."""
    calls: list[tuple] = []
    hooks = [module.register_forward_hook(lambda mod, args, out: calls.append((mod, args[0], out)))
             for module in model.modules() if isinstance(module, CAPSAttention)]
    try:
        with torch.no_grad():
            prediction = model(*inputs)
    finally:
        for hook in hooks:
            hook.remove()
    return prediction, calls


def look_at_layer(layer: CAPSAttention, x: torch.Tensor, output: torch.Tensor) -> LayerLook:
    """The layer's kernel inputs for x `[Ct, T, D]` and its output split by path (`caps_attention` with
    one path at a time, the layer's attn, impl and chunk)."""
    with torch.no_grad():
        inputs = layer.attention_inputs(x)

        def kernel(paths: tuple[int, ...]) -> torch.Tensor:
            return caps_attention(**inputs, attn=layer.attn, paths=paths, impl=layer.impl,
                                  chunk_size=layer.chunk_size)

        outputs = {path: kernel((path,)) for path in layer.paths}
        return LayerLook(layer, inputs, outputs, kernel(layer.paths), output)


def path_matrices(look: LayerLook, path: int, row: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(W, scores) of one path for channel row `row`, both [H, T, T] (0 above the diagonal).

    W: `path_weights` averaged over the head's features; scores[t, i] = Σ_e q̂_t,e k̂_i,e W[t, i, e] with
    RoPE-rotated q̂, k̂: the matrix that, applied to v, gives o^(path) of that row."""
    inputs = {name: None if value is None else value[row:row + 1] if value.dim() > 1 else value
              for name, value in look.inputs.items()}
    with torch.no_grad():
        weights = path_weights(inputs["p"], inputs["g"], inputs["clock"], (path,))  # [1, H, T, T, E]
        q, k, omega = inputs["q"], inputs["k"], inputs["rope_freq"]
        if omega is not None:
            q, k = rope_rotate(q, omega), rope_rotate(k, omega)
        scores = torch.einsum("bthe,bihe,bhtie->bhti", q, k, weights)  # [1, H, T, T]
    return weights.mean(-1)[0], scores[0]


def layer_quantities(looks: list[LayerLook], channel: int) -> dict[str, dict[str, np.ndarray]]:
    """file stem -> named arrays (layers first): contributions, clock, and each path's weights."""
    def stack(tensors: list[torch.Tensor]) -> np.ndarray:
        return torch.stack(tensors).cpu().numpy()

    contributions, clock = {}, {}
    for path in [*looks[0].layer.paths, 0]:
        # [Ct, T, H] norms over the head's value features; 0 = the layer's whole attention output
        norms = [(look.total if path == 0 else look.outputs[path]).norm(dim=-1) for look in looks]
        name = "o" if path == 0 else f"o{path}"
        contributions[f"{name}_channel"] = stack([n[channel].T for n in norms])  # [L, H, T]
        contributions[f"{name}_mean"] = stack([n.mean(0).T for n in norms])
    clock["channel"] = stack([look.inputs["clock"][channel].T for look in looks])  # [L, H, T]
    clock["mean"] = stack([look.inputs["clock"].mean(0).T for look in looks])
    quantities = {"contributions": contributions, "clock": clock}
    rows = looks[0].total.shape[0]
    for path in looks[0].layer.paths:
        mine, mean, scores = [], [], []
        for look in looks:
            total = 0.0
            for row in range(rows):
                weights, row_scores = path_matrices(look, path, row)
                total = total + weights
                if row == channel:
                    mine.append(weights)
                    scores.append(row_scores)
            mean.append(total / rows)
        quantities[WEIGHT_FILES[path]] = {
            "channel": stack(mine), "mean": stack(mean),  # [L, H, T, T]
            "scores_channel": stack(scores),  # [L, H, T, T]
            "values_channel": stack([look.inputs["v"][channel] for look in looks]),  # [L, T, H, Ev]
        }
    return quantities
