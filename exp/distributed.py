"""torchrun support: process-group set-up from the environment and the few collectives the loop needs.

`torchrun --nproc_per_node N run.py ...` exports WORLD_SIZE, RANK and LOCAL_RANK; `run.py` then joins the
process group (NCCL when the run uses CUDA, gloo on CPU) and the experiment wraps the model in
DistributedDataParallel. Rank 0 alone logs, writes checkpoints and results; every other rank only
computes. Objects cross ranks on the CPU (`*_object` collectives), so rank 0 can read a checkpoint
and hand it to ranks on other nodes without a shared file system.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.distributed as dist

from utils.errors import UserInputError

logger = logging.getLogger(__name__)

TORCHRUN_VARIABLES = ("WORLD_SIZE", "RANK", "LOCAL_RANK")


@dataclass(frozen=True)
class DistContext:
    """This process's place in the run; the defaults describe a plain single-process run."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    #: where tensors for collectives must live (CUDA for NCCL, CPU for gloo)
    device: torch.device = torch.device("cpu")

    @property
    def enabled(self) -> bool:
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0


def launched_by_torchrun() -> bool:
    """True when WORLD_SIZE, RANK and LOCAL_RANK are all set (torchrun or an equivalent launcher)."""
    return all(name in os.environ for name in TORCHRUN_VARIABLES)


def init_distributed(use_cuda: bool) -> DistContext:
    """Join the process group described by the environment; NCCL with one GPU per local rank, else gloo."""
    local_rank = int(os.environ["LOCAL_RANK"])
    backend = "nccl" if use_cuda and torch.cuda.is_available() else "gloo"
    if backend == "nccl":
        torch.cuda.set_device(local_rank)
    if not dist.is_initialized():
        dist.init_process_group(backend=backend)
    return context()


def context() -> DistContext:
    """The current DistContext (single-process defaults when no process group is initialised)."""
    if not (dist.is_available() and dist.is_initialized()):
        return DistContext()
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    device = torch.device("cuda", local_rank) if dist.get_backend() == "nccl" else torch.device("cpu")
    return DistContext(dist.get_rank(), dist.get_world_size(), local_rank, device)


def shutdown(clean: bool) -> None:
    """Leave the process group (no-op outside torchrun).

    After a clean run every rank first meets at a barrier, so no rank tears its connections down while a
    message to or from it is still in flight (a rank that left early could abort at exit with "terminate
    called without an active exception"). After an error the barrier is skipped: a failed peer never arrives.
    """
    if not (dist.is_available() and dist.is_initialized()):
        return
    if clean:
        dist.barrier()
    dist.destroy_process_group()


def all_reduce_sum(values: list[float], ctx: DistContext) -> list[float]:
    """Element-wise sum of `values` over all ranks (float64; identity in a single process)."""
    if not ctx.enabled:
        return values
    tensor = torch.tensor(values, dtype=torch.float64, device=ctx.device)
    dist.all_reduce(tensor, op=dist.ReduceOp.SUM)
    return tensor.tolist()


def gather_to_main(obj: Any, ctx: DistContext) -> list[Any] | None:
    """Rank 0 gets ``[obj of rank 0, obj of rank 1, ...]``; other ranks get None."""
    if not ctx.enabled:
        return [obj]
    out = [None] * ctx.world_size if ctx.is_main else None
    dist.gather_object(obj, out, dst=0)
    return out


def broadcast_from_main(obj: Any, ctx: DistContext) -> Any:
    """Rank 0's `obj` on every rank (pass anything on the other ranks)."""
    if not ctx.enabled:
        return obj
    box = [obj]
    dist.broadcast_object_list(box, src=0)
    return box[0]


def any_rank(condition: bool, ctx: DistContext) -> bool:
    """True when `condition` holds on at least one rank (so every rank takes the same branch)."""
    return all_reduce_sum([float(condition)], ctx)[0] > 0


def on_main(read: Callable[[], Any], ctx: DistContext) -> Any:
    """Run `read` on rank 0 only and hand its result, or its UserInputError, to every rank."""
    outcome = None
    if ctx.is_main:
        try:
            outcome = (True, read())
        except UserInputError as err:
            outcome = (False, str(err))
    ok, value = broadcast_from_main(outcome, ctx)
    if not ok:
        raise UserInputError(value)
    return value


def barrier(ctx: DistContext) -> None:
    if ctx.enabled:
        dist.barrier()
