"""Exp_Basic: model registry, device selection (with CPU fallback) and model construction."""

from __future__ import annotations

import argparse
import logging

import torch
import torch.nn as nn

from exp import distributed
from exp.model_registry import MODEL_REGISTRY
from exp.trackers.run_trackers import RunTrackers

logger = logging.getLogger(__name__)


def multi_gpu_ids(args: argparse.Namespace) -> list[int]:
    """The GPU indices of --devices ("0,1,2,3") for --use_multi_gpu's DataParallel."""
    return [int(i) for i in args.devices.replace(" ", "").split(",") if i]


def select_device(args: argparse.Namespace, local_rank: int | None = None) -> torch.device:
    """`cuda:<gpu>` / `mps` when requested and available, else CPU with one log line (TSLib crashed instead).

    Under torchrun (`local_rank` given) each process takes the GPU of its local rank; with
    --use_multi_gpu the first of --devices (as TSLib, which overwrites --gpu with it).
    """
    if args.use_gpu and args.gpu_type == "cuda":
        if torch.cuda.is_available():
            if local_rank is not None:
                return torch.device(f"cuda:{local_rank}")
            if args.use_multi_gpu:
                return torch.device(f"cuda:{multi_gpu_ids(args)[0]}")
            return torch.device(f"cuda:{args.gpu}")
        logger.info("CUDA is not available: running on CPU")
    elif args.use_gpu and args.gpu_type == "mps":
        if torch.backends.mps.is_available():
            return torch.device("mps")
        logger.info("MPS is not available: running on CPU")
    return torch.device("cpu")


class Exp_Basic:  # noqa: N801 - TSLib's public name
    """Base experiment: stores args, builds the registry, acquires the device, then builds the model,
    moves it there and wraps it (`_wrap_model`: DataParallel / DistributedDataParallel in subclasses)."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.model_dict = MODEL_REGISTRY
        self.dist = distributed.context()
        self.device = self._acquire_device()
        self.device_ids = multi_gpu_ids(args) if args.use_multi_gpu else None
        self.model = self._wrap_model(self._build_model().to(self.device))
        #: where the run reports its curves (--logger); run.py opens them per setting
        self.trackers = RunTrackers()

    def _acquire_device(self) -> torch.device:
        return select_device(self.args, self.dist.local_rank if self.dist.enabled else None)

    def _wrap_model(self, model: nn.Module) -> nn.Module:
        return model

    def _build_model(self) -> nn.Module:
        raise NotImplementedError

    def _get_data(self, flag: str):
        raise NotImplementedError

    def vali(self, *args, **kwargs):
        raise NotImplementedError

    def train(self, setting: str):
        raise NotImplementedError

    def test(self, setting: str, test: int = 0):
        raise NotImplementedError
