"""The CAPS options: each choice list, default and help line lives here once, with the checks of a value.

`models/CAPS.py` reads them with getattr(configs, name, default) and `exp/arguments.py` builds the run.py
flags from `CAPS_OPTIONS`. This file imports no torch: the flag parser reads it without loading a kernel.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

ATTN_CHOICES = ("linear", "softmax")
# Path subsets as run.py spells them ("none": plain causal linear attention, LinAttn).
PATHS_CHOICES = ("123", "12", "13", "23", "1", "2", "3", "none")
ROPE_CHOICES = ("learned", "fixed", "none")
NUMERICS_CHOICES = ("paper", "official")
# Normalised linear attention (Katharopoulos et al. 2020): two linear calls, a numerator and a normaliser.
NORMALISED_ATTN = "normalised"
# --caps_attn as run.py spells it: the kernels' ATTN_CHOICES plus the normalised form built on them.
LAYER_ATTN_CHOICES = (*ATTN_CHOICES, NORMALISED_ATTN)
# One switch per difference of the official arithmetic (layers/CAPS_Attention.md, "Hazards and switches");
# "auto" follows --caps_numerics, so --caps_numerics official is exactly every switch set to its official value.
PATH1_MAX_CHOICES = ("auto", "running", "global")
PATH2_DECAY_CHOICES = ("auto", "exact", "official")
ROPE_LAYOUT_CHOICES = ("auto", "paper", "official")
# The kernels of CAPS_KERNELS (layers/caps/dispatch.py), in that order, after "auto" (native on the CPU when it
# builds; fla on CUDA when FLA_IN_AUTO and fla-core imports; else chunked).
IMPL_CHOICES = ("auto", "naive", "recurrent", "chunked", "native", "fla")

# Default chunk length of the chunked kernel. Its cost is O(T C F) in [C, C] score matmuls plus
# O(T F Ev / C) in states; on CPU at the paper's widths (E = 8, F <= 24) 32 is the fastest measured
# (benchmarks/README.md) and halves the in-chunk decay spread of 64. On a GPU the kernel is launch-bound
# and fewer, larger chunks win: 64 measured 1.6-1.9x faster than 32 on an H100 (T = 816 to 16 384).
DEFAULT_CHUNK = 32
GPU_CHUNK = 64


@dataclass(frozen=True)
class CAPSOption:
    """One CAPS option: its default, its choices (None: any value of the default's type) and its help line."""

    default: str | int
    choices: tuple[str, ...] | None
    help: str


CAPS_OPTIONS: dict[str, CAPSOption] = {
    "caps_attn": CAPSOption("linear", LAYER_ATTN_CHOICES, "CAPS: phi = identity (linear), causal softmax "
                            "(softmax runs only as --caps_impl naive, which auto selects) or normalised linear "
                            "attention (Katharopoulos et al.: elu(x) + 1 features over their causal normaliser, RoPE "
                            "on the numerator's features as RoFormer eq. 19)"),
    "caps_paths": CAPSOption("123", PATHS_CHOICES, "CAPS: active paths (1 Riemann softmax, 2 prefix product, "
                             "3 clock); none = LinAttn"),
    "caps_rope": CAPSOption("learned", ROPE_CHOICES, "CAPS: RoPE frequencies"),
    "caps_numerics": CAPSOption("paper", NUMERICS_CHOICES, "CAPS: exact paper maths or the official code's arithmetic "
                                "(the value every auto switch below follows: --caps_path1_max, --caps_path2_decay, "
                                "--caps_rope_layout, --caps_mark_norm, --caps_dropout_rescale)"),
    "caps_path1_max": CAPSOption("auto", PATH1_MAX_CHOICES, "CAPS: path 1's max, running over i <= t (paper) or "
                                 "global over all T plus 1e-8 in the normaliser (official); auto = --caps_numerics"),
    "caps_path2_decay": CAPSOption("auto", PATH2_DECAY_CHOICES, "CAPS: path 2's decay, exact segment sums (paper) or "
                                   "the official Gamma_t / (Gamma_i + 1e-8) with log Gamma clipped to [-50, 40]; "
                                   "auto = --caps_numerics"),
    "caps_rope_layout": CAPSOption("auto", ROPE_LAYOUT_CHOICES, "CAPS: RoPE pairs, true rotations of pairs "
                                   "(2j, 2j+1) (paper) or the official half-split angles with interleaved partners "
                                   "(not a rotation); auto = --caps_numerics"),
    "caps_impl": CAPSOption("auto", IMPL_CHOICES, "CAPS: attention implementation; auto = the native C++ kernel on "
                            "CPU when it builds and the head width fits (layers/caps/native.py), else the torch "
                            "chunked kernel (CUDA too); fla = fla-core's chunk_gla Triton kernel on CUDA (opt-in); "
                            "naive for --caps_attn softmax"),
    "caps_chunk": CAPSOption(0, None, "CAPS: chunk size of the linear-attention kernel; 0 = 32 on CPU, 64 on GPU "
                             "(fastest measured)"),
}

# Every path subset in its canonical form (sorted distinct ids; () is LinAttn).
_PATH_TUPLES = frozenset(tuple(int(c) for c in text.replace("none", "")) for text in PATHS_CHOICES)


def parse_paths(paths: str | tuple[int, ...]) -> tuple[int, ...]:
    """'123', '31', '' or 'none' (or an already parsed tuple such as (1, 2, 3)) -> sorted tuple of path ids.

    Raises ValueError on anything but distinct digits from 1, 2, 3 (or 'none' / '').
    """
    if isinstance(paths, tuple):
        if paths in _PATH_TUPLES:
            return paths
        text = "".join(str(i) for i in paths)
    else:
        text = "" if paths == "none" else str(paths)
    ids = tuple(sorted(int(c) for c in text if c in "123"))
    if len(ids) != len(text) or len(set(ids)) != len(ids):
        raise ValueError(f"--caps_paths {paths!r} is invalid: use distinct digits from 1, 2, 3 "
                         "(e.g. 123, 12, 13, 23) or none for plain linear attention")
    return ids


def _check_choice(name: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"{name} {value!r} is invalid: choose one of {', '.join(choices)}")


def follow_numerics(flag: str, value: str, choices: tuple[str, ...], numerics: str) -> str:
    """A per-difference switch with its "auto" resolved: choices[1] (the paper's) under --caps_numerics paper,
    choices[2] (the official code's) under official; an explicit value is kept (so one difference can be
    measured alone, or left out of the official bundle). Raises ValueError naming `flag` on a bad value."""
    _check_choice(flag, value, choices)
    _check_choice("--caps_numerics", numerics, NUMERICS_CHOICES)
    if value != "auto":
        return value
    return choices[1] if numerics == "paper" else choices[2]


def resolve_attn_impl(attn: str, impl: str) -> str:
    """The impl that runs `attn`: softmax attention is quadratic by nature and exists only as the naive
    kernel, so impl="auto" selects "naive" and any other linear-time choice raises ValueError; linear
    attention keeps `impl`. The one home of the "softmax => naive" rule."""
    _check_choice("--caps_attn", attn, ATTN_CHOICES)
    _check_choice("--caps_impl", impl, IMPL_CHOICES)
    if attn != "softmax":
        return impl
    if impl not in ("auto", "naive"):
        raise ValueError(f"--caps_attn softmax only has impl='naive' (quadratic by nature), got --caps_impl {impl}; "
                         "pass --caps_impl naive (or auto), or use --caps_attn linear")
    return "naive"


def _check_chunk(chunk_size: int | None) -> None:
    if chunk_size is not None and chunk_size < 1:
        raise ValueError(f"--caps_chunk {chunk_size} is invalid: pass a positive chunk size (e.g. 32), "
                         "or 0 on the command line for the device's default")


def default_chunk(device: torch.device) -> int:
    """The chunk length used when none is given: DEFAULT_CHUNK on the CPU, GPU_CHUNK elsewhere."""
    return DEFAULT_CHUNK if device.type == "cpu" else GPU_CHUNK
