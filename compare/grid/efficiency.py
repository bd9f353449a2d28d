"""Model cost at a dataset's shape, as the CAPS paper's Table 5: parameters, forward FLOPs, and a
measured training step (median time and peak tensor memory).

- Parameters: learnable elements (`requires_grad`).
- Forward FLOPs: `torch.utils.flop_counter.FlopCounterMode` on one sample (batch 1) in eval mode. It
  counts matmul / convolution / attention kernels at 2 FLOPs per multiply-add and ignores elementwise
  ops, FFTs and reductions (so TimesNet's FFT and CAPS's cumulative sums are not in the count).
- Train step: the experiment's own step (`exp.train_step.ForecastStep`: decoder input, forward under
  the run's AMP settings, MSE on the scored channels, backward, clipping, Adam or AdamW) on a random
  batch of the recipe's `--batch_size`.
  Time is the median over `steps` timed steps after `warmup` untimed ones.
- Peak memory: parameters + buffers + optimiser state + the peak of tensors alive during one step,
  tracked per storage by a dispatch mode. It is deterministic and device-independent, but does not see
  scratch buffers a kernel allocates internally.
"""

from __future__ import annotations

import argparse
import copy
import functools
import os
import statistics
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn as nn
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten
from torch.utils.flop_counter import FlopCounterMode

from data_provider.data_factory import build_train_split
from exp.model_registry import MODEL_REGISTRY
from exp.train_step import ForecastStep, compiled_runner, make_optimizer, model_inputs
from utils.flag_defaults import flag_default
from utils.timefeatures import num_calendar_features, num_time_features
from utils.train_split import (
    TRAIN_SPLIT_ATTR,
    TrainSplit,
    default_cache_dir,
    needs_train_split,
    synthetic_train_split,
    with_train_split,
)

__all__ = [
    "Efficiency",
    "TensorMemoryTracker",
    "build_model",
    "count_parameters",
    "example_batch",
    "example_inputs",
    "forward_flops",
    "format_bytes",
    "format_count",
    "make_train_step",
    "measure",
]


@dataclass(frozen=True)
class Efficiency:
    """Cost of one model configuration; `step_ms` / `peak_bytes` are None when timing was skipped."""

    params: int
    flops: int
    step_ms: float | None
    peak_bytes: int | None
    batch_size: int
    device: str


def count_parameters(model: nn.Module) -> int:
    """Number of learnable elements."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def build_model(configs: argparse.Namespace, device: str | torch.device = "cpu") -> nn.Module:
    """`models/<configs.model>.py`'s Model built from a copy of `configs`, in float32 on `device`.

    A model that reads training statistics when built (`utils.train_split`: Koopa, OLinear) receives
    `configs.train_split` when the configs carry none: the real training split of --data when its file
    is found (at --root_path/--data_path, else for ETTh1 in the dataset mirror $TSLIB_DATA_MIRROR),
    otherwise a deterministic synthetic series (`synthetic_train_split`, enc_in channels). The choice
    changes which frequencies/bases are used, not the parameter count or the FLOPs.
    """
    model_class = MODEL_REGISTRY[configs.model]
    configs = copy.deepcopy(configs)
    if needs_train_split(model_class) and getattr(configs, TRAIN_SPLIT_ATTR, None) is None:
        configs = with_train_split(configs, _train_split_for(configs))
    return model_class(configs).float().to(device)


def _train_split_for(configs: argparse.Namespace) -> TrainSplit:
    """The training split of --data when its file is at hand (see `build_model`), else a synthetic one."""
    candidates = [configs]
    mirror = os.environ.get("TSLIB_DATA_MIRROR")
    if mirror and configs.data == "ETTh1":
        candidates.append(argparse.Namespace(**{**vars(configs), "root_path": str(Path(mirror) / "ETT-small"),
                                                "data_path": "ETTh1.csv"}))
    for candidate in candidates:
        if Path(candidate.root_path, candidate.data_path).is_file():
            return build_train_split(candidate, cache_dir=default_cache_dir())
    rows = max(2048, 4 * (configs.seq_len + configs.pred_len))
    return synthetic_train_split(rows=rows, channels=configs.enc_in)


def _mark_width(configs: argparse.Namespace) -> int:
    """Columns of the time marks the data loader produces for `--embed` and `--freq`."""
    if configs.embed == "timeF":
        return num_time_features(configs.freq)
    return num_calendar_features(configs.freq)


def example_batch(configs: argparse.Namespace, batch_size: int, seed: int = 0) -> tuple[torch.Tensor, ...]:
    """A random batch as the data loader yields it at the recipe's shape (CPU, float32): x `[B, L, C]`,
    y `[B, Ll + H, C]`, x_mark `[B, L, F]`, y_mark `[B, Ll + H, F]` with C = enc_in. timeF marks lie in
    [-0.5, 0.5]; calendar marks are 0 (a valid index)."""
    gen = torch.Generator().manual_seed(seed)
    length, span = configs.seq_len, configs.label_len + configs.pred_len
    width = _mark_width(configs)
    x = torch.randn(batch_size, length, configs.enc_in, generator=gen)  # [B, L, C]
    y = torch.randn(batch_size, span, configs.enc_in, generator=gen)  # [B, Ll + H, C]
    if configs.embed == "timeF":
        x_mark = torch.rand(batch_size, length, width, generator=gen) - 0.5  # [B, L, F]
        y_mark = torch.rand(batch_size, span, width, generator=gen) - 0.5  # [B, Ll + H, F]
    else:
        x_mark, y_mark = torch.zeros(batch_size, length, width), torch.zeros(batch_size, span, width)
    return x, y, x_mark, y_mark


def example_inputs(configs: argparse.Namespace, batch_size: int, device: str | torch.device = "cpu",
                   seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """The model's forward arguments for `example_batch`, built as the training step builds them:
    (x, x_mark, dec, y_mark) with dec = label_len known steps then zeros `[B, Ll + H, C]`."""
    batch = example_batch(configs, batch_size, seed)
    return model_inputs(batch, configs.label_len, configs.pred_len, torch.device(device))[:4]


def _flop_model(configs: argparse.Namespace, model: nn.Module, device: torch.device) -> nn.Module:
    """The model whose FLOPs are counted: torch's counter cannot see inside CAPS's native C++ kernel or
    fla-core's Triton kernel, so a CAPS model that may run one is counted on the pure-torch chunked kernel
    (same arithmetic).
    Softmax attention only runs naive (auto selects it), so its model is counted as it is."""
    impl = getattr(configs, "caps_impl", flag_default("caps_impl"))
    if impl not in ("auto", "native", "fla") or getattr(configs, "caps_attn", flag_default("caps_attn")) == "softmax":
        return model
    return build_model(argparse.Namespace(**{**vars(configs), "caps_impl": "chunked"}), device)


def forward_flops(model: nn.Module, inputs: tuple[torch.Tensor, ...]) -> int:
    """Total FLOPs counted by FlopCounterMode for one eval-mode forward pass on `inputs`."""
    was_training = model.training
    model.eval()
    counter = FlopCounterMode(display=False)
    with torch.no_grad(), counter:
        model(*inputs)
    model.train(was_training)
    return int(counter.get_total_flops())


class TensorMemoryTracker(TorchDispatchMode):
    """Tracks bytes of tensor storage created while active; `peak` is the high-water mark.

    Each storage first seen as an op output (and not aliasing an input: in-place ops and views of
    pre-existing tensors allocate nothing) is counted until the last tensor viewing it is freed.
    """

    def __init__(self) -> None:
        super().__init__()
        self.live = 0
        self.peak = 0
        self._size: dict[tuple[str, int], int] = {}
        self._holders: dict[tuple[str, int], int] = {}
        self._seen: dict[int, weakref.finalize] = {}

    @staticmethod
    def _key(t: torch.Tensor) -> tuple[str, int]:
        return (str(t.device), t.untyped_storage().data_ptr())

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        inputs = {self._key(t) for t in tree_flatten((args, kwargs))[0] if isinstance(t, torch.Tensor)}
        for t in tree_flatten(out)[0]:
            if not isinstance(t, torch.Tensor) or id(t) in self._seen:
                continue
            key = self._key(t)
            if key not in self._holders:
                if key in inputs or key[1] == 0:
                    continue
                self._holders[key] = 0
                self._size[key] = t.untyped_storage().nbytes()
                self.live += self._size[key]
                self.peak = max(self.peak, self.live)
            self._holders[key] += 1
            self._seen[id(t)] = weakref.finalize(t, self._release, id(t), key)
        return out

    def _release(self, tensor_id: int, key: tuple[str, int]) -> None:
        self._seen.pop(tensor_id, None)
        self._holders[key] -= 1
        if self._holders[key] == 0:
            del self._holders[key]
            self.live -= self._size.pop(key)


def _state_bytes(model: nn.Module, optimizer: torch.optim.Optimizer) -> int:
    """Bytes held between steps: parameters, buffers and optimiser state tensors."""
    total = sum(t.numel() * t.element_size() for t in (*model.parameters(), *model.buffers()))
    for state in optimizer.state.values():
        total += sum(v.numel() * v.element_size() for v in state.values() if isinstance(v, torch.Tensor))
    return total


def make_train_step(configs: argparse.Namespace, model: nn.Module, device: str | torch.device = "cpu",
                    seed: int = 0) -> tuple[ForecastStep, Callable[[], torch.Tensor]]:
    """(the step, a call of it on one batch); puts `model` in train mode. `run()` runs the experiment's training step (`ForecastStep`) with the
    recipe's optimiser on one fixed random batch of `--batch_size`. With `--compile` the step runs the
    torch.compile wrapper in --compile_mode, as run.py does (compilation happens in the first call)."""
    device = torch.device(device)
    batch = tuple(t.to(device) for t in example_batch(configs, configs.batch_size, seed))
    model.train()
    runner = compiled_runner(model, configs)
    train_step = ForecastStep(model, configs, device, runner=runner, optimizer=make_optimizer(model, configs))
    return train_step, functools.partial(train_step, batch)


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def measure(configs: argparse.Namespace, *, device: str | torch.device = "cpu", steps: int = 5,
            warmup: int = 2, timing: bool = True, seed: int = 0) -> Efficiency:
    """Parameters and forward FLOPs of `configs.model` at the recipe's shape and, when `timing`,
    the median train-step time over `steps` steps and the peak tensor memory of one step."""
    device = torch.device(device)
    torch.manual_seed(seed)
    model = build_model(configs, device)
    params = count_parameters(model)
    flops = forward_flops(_flop_model(configs, model, device), example_inputs(configs, 1, device, seed))
    if not timing:
        return Efficiency(params, flops, None, None, configs.batch_size, str(device))

    train_step, step = make_train_step(configs, model, device, seed)
    for _ in range(warmup):
        step()
    times = []
    for _ in range(steps):
        _sync(device)
        start = time.perf_counter()
        step()
        _sync(device)
        times.append(time.perf_counter() - start)
    tracker = TensorMemoryTracker()
    with tracker:
        step()
    peak = _state_bytes(model, train_step.optimizer) + tracker.peak
    return Efficiency(params, flops, 1e3 * statistics.median(times), peak, configs.batch_size, str(device))


def format_count(value: float) -> str:
    """Paper-style magnitude: 18.6K, 9.56M, 1.39G (three significant digits)."""
    for unit, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("K", 1e3)):
        if abs(value) >= scale:
            return f"{value / scale:.3g}{unit}"
    return f"{value:.3g}"


def format_bytes(value: float) -> str:
    """Bytes in MiB with one decimal."""
    return f"{value / 2**20:.1f} MiB"
