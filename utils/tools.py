"""Training utilities with TSLib's names: EarlyStopping, adjust_learning_rate, visual, dotdict,
plus the atomic file writers every output goes through."""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import math
import os
import secrets
import shutil
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import torch

try:
    import fcntl
except ImportError:  # Windows: appends are not locked there
    fcntl = None

logger = logging.getLogger(__name__)

# TSLib's type2 table: epoch -> learning rate.
_TYPE2_TABLE = {2: 5e-5, 4: 1e-5, 6: 5e-6, 8: 1e-6, 10: 5e-7, 15: 1e-7, 20: 5e-8}


def scheduled_lr(lradj: str, base_lr: float, epoch: int, train_epochs: int) -> float | None:
    """Learning rate after 1-based `epoch` for the per-epoch schedules, or None for 'leave unchanged'.

    type1: lr * 0.5^(e-1); type2: TSLib's table; type3: lr for e < 3 else lr * 0.9^(e-3);
    cosine: lr/2 * (1 + cos(pi e / train_epochs)); constant and onecycle (stepped per batch): None.
    """
    if lradj == "type1":
        return base_lr * (0.5 ** (epoch - 1))
    if lradj == "type2":
        return _TYPE2_TABLE.get(epoch)
    if lradj == "type3":
        return base_lr if epoch < 3 else base_lr * (0.9 ** (epoch - 3))
    if lradj == "cosine":
        return base_lr / 2 * (1 + math.cos(epoch / train_epochs * math.pi))
    if lradj in ("constant", "onecycle"):
        return None
    raise ValueError(f"--lradj {lradj!r} is not a known schedule")


def adjust_learning_rate(optimizer: torch.optim.Optimizer, epoch: int, args: Any) -> None:
    """Set every param group's lr for the epoch that follows 1-based `epoch` (TSLib semantics)."""
    lr = scheduled_lr(args.lradj, args.learning_rate, epoch, args.train_epochs)
    if lr is None:
        return
    for group in optimizer.param_groups:
        group["lr"] = lr
    logger.info("Updating learning rate to %s", lr)


def temporary_file_beside(path: Path, suffix: str = ".tmp") -> tuple[int, Path]:
    """A new, empty file in `path`'s folder, open for writing: (descriptor, its path). Created as `open()` creates
    files, mode 0o666 less the umask (0644 typically), so the file renamed over `path` has the mode any written
    file has; `tempfile.mkstemp`'s 0600 would stick to it."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        candidate = path.parent / f".{path.stem}.{secrets.token_hex(6)}{suffix}"
        try:
            return os.open(candidate, flags, 0o666), candidate
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary file name beside {path}")


def _temporary_beside(path: Path, write: Callable[[BinaryIO], None], suffix: str = ".tmp") -> Path:
    """A new temporary file in `path`'s folder (`temporary_file_beside`) holding what `write(file)` wrote,
    flushed and fsynced; a failure removes it and raises."""
    fd, tmp = temporary_file_beside(path, suffix)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(tmp)


def atomic_write(path: str | os.PathLike, write: Callable[[BinaryIO], None], suffix: str = ".tmp") -> None:
    """The one atomic writer of a single file: call `write(file)` on a temporary file beside `path`, fsync it, rename it over `path` (atomic on
    POSIX and Windows), then fsync the folder so the rename itself survives a crash. Readers see the
    old file or the new one, never a partial one; a failure removes the temporary file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _temporary_beside(path, write, suffix)
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_folder(path.parent)


def _fsync_folder(folder: Path) -> None:
    # Folders cannot be opened for fsync on Windows; there the rename is durable enough.
    if os.name != "posix":
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_torch_save(obj: Any, path: str | os.PathLike) -> None:
    """torch.save that never leaves a half-written file at `path`."""
    atomic_write(path, lambda f: torch.save(obj, f))


def atomic_np_save(path: str | os.PathLike, array: np.ndarray) -> None:
    """np.save that never leaves a half-written file at `path` (the temporary name ends in .npy so
    np.save does not append a second suffix)."""
    atomic_write(path, lambda f: np.save(f, array), suffix=".npy")


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write `text` (UTF-8) to `path` so that readers see the old file or the new one, never a partial one."""
    atomic_write(path, lambda f: f.write(text.encode("utf-8")))


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write `data` to `path` so that readers see the old file or the new one, never a partial one."""
    atomic_write(path, lambda f: f.write(data))


def atomic_copy(source: str | os.PathLike, target: str | os.PathLike) -> None:
    """Copy the file `source` to `target` so that readers of `target` see the old file or the new one."""
    with open(source, "rb") as src:
        atomic_write(target, lambda f: shutil.copyfileobj(src, f))


def _make_folders(folder: Path, created: list[Path]) -> None:
    """Create `folder` and its missing parents, shallowest first, adding each one created to `created`."""
    for missing in reversed([f for f in (folder, *folder.parents) if not f.exists()]):
        missing.mkdir()
        created.append(missing)
    if not folder.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, "Not a directory", str(folder))


def _backup(path: Path) -> Path | None:
    """A second name (a hard link, else a copy) for the file at `path`, so it can be put back; None when absent."""
    if not path.exists():
        return None
    backup = path.with_name(f".{path.name}.{uuid.uuid4().hex}.old")
    try:
        os.link(path, backup)
    except OSError:
        shutil.copy2(path, backup)
    return backup


def atomic_write_files(files: Mapping[str | os.PathLike, bytes]) -> None:
    """Write every file of {path: bytes} or none of them. Each is first written to a temporary file beside it
    (flushed, fsynced); only when all are written are they renamed into place. A failure removes the temporary
    files, puts back the files that were there before the renames, removes the folders this call created, and
    raises. Readers see each file old or new, never partial; a group is all old or all new unless the machine
    stops between two renames."""
    paths = [Path(p) for p in files]
    created: list[Path] = []
    staged: list[Path] = []
    backups: dict[Path, Path | None] = {}
    renamed: list[Path] = []
    try:
        for path in paths:
            _make_folders(path.parent, created)
        for path, data in zip(paths, files.values(), strict=True):
            staged.append(_temporary_beside(path, lambda f, data=data: f.write(data)))
        for path in paths:
            backups[path] = _backup(path)
        for tmp, path in zip(staged, paths, strict=True):
            os.replace(tmp, path)
            renamed.append(path)
    except BaseException:
        for path in renamed:
            old = backups.get(path)
            if old is None:
                path.unlink(missing_ok=True)
            else:
                os.replace(old, path)
        for tmp in [*staged, *(b for b in backups.values() if b is not None)]:
            tmp.unlink(missing_ok=True)
        for folder in reversed(created):
            with contextlib.suppress(OSError):  # not empty: something else wrote there meanwhile
                folder.rmdir()
        raise
    for old in backups.values():
        if old is not None:
            old.unlink(missing_ok=True)
    for folder in {path.parent for path in paths}:
        _fsync_folder(folder)


def append_text(path: str | os.PathLike, text: str) -> None:
    """Append `text` with a single write call under an exclusive lock on the file, then fsync: concurrent
    writers (other processes running the same script) never interleave partial records. A short write
    (disk full) cuts back off the bytes this call wrote, and only those (rows other writers appended
    before stay), so the file never ends in half a record."""
    data = text.encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        _lock_exclusive(fd)
        written = os.write(fd, data)
        if written != len(data):
            # O_APPEND put our bytes at the end, and the lock keeps cooperating writers out until we return.
            os.ftruncate(fd, os.fstat(fd).st_size - written)
            raise OSError(f"only {written} of {len(data)} bytes could be appended to {path}; nothing was kept")
        os.fsync(fd)
    finally:
        # Closing the descriptor releases the lock.
        os.close(fd)


def _lock_exclusive(fd: int) -> None:
    """Block until this process holds an exclusive flock on `fd` (no-op where fcntl is missing: Windows)."""
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_EX)


def append_jsonl(path: str | os.PathLike, record: dict) -> None:
    """Append one JSON object as one line (see `append_text`). NaN and inf are not JSON: a record holding one
    raises ValueError instead of writing a non-standard token (callers record such a score as null)."""
    append_text(path, json.dumps(record, sort_keys=True, allow_nan=False) + "\n")


class EarlyStopping:
    """Stop when the validation loss has not improved for `patience` calls (TSLib rule, delta 0:
    a loss > best - delta, and a NaN loss, count as no improvement; ties count as improvement). Each improvement
    saves the model's state_dict atomically to `<path>/checkpoint.pth` and keeps a CPU copy of it in
    `best_state` (unless `save` is False), which a run's `last.pth` carries so a resume needs no other file."""

    def __init__(self, patience: int = 7, verbose: bool = False, delta: float = 0.0, save: bool = True) -> None:
        self.patience = patience
        # False on every distributed rank but 0: they track the same decisions without writing.
        self.save = save
        self.verbose = verbose
        self.delta = delta
        self.counter = 0
        self.best_score: float | None = None
        self.early_stop = False
        self.val_loss_min = float("inf")
        self.best_epoch = 0
        self.best_state: dict[str, torch.Tensor] | None = None

    def __call__(self, val_loss: float, model: torch.nn.Module, path: str, epoch: int = 0) -> None:
        score = -val_loss
        # A NaN loss compares False with everything, so without the first test it would count as an improvement.
        if math.isnan(score) or (self.best_score is not None and score < self.best_score + self.delta):
            self.counter += 1
            logger.info("EarlyStopping counter: %d out of %d", self.counter, self.patience)
            if self.counter >= self.patience:
                self.early_stop = True
            return
        self.best_score = score
        self.best_epoch = epoch
        self.save_checkpoint(val_loss, model, path)
        self.counter = 0

    def save_checkpoint(self, val_loss: float, model: torch.nn.Module, path: str) -> None:
        if self.verbose:
            logger.info("Validation loss decreased (%.6f --> %.6f).  Saving model ...", self.val_loss_min, val_loss)
        if self.save:
            self.best_state = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}
            atomic_torch_save(self.best_state, os.path.join(path, "checkpoint.pth"))
        self.val_loss_min = val_loss

    def state_dict(self) -> dict:
        return {k: getattr(self, k) for k in ("counter", "best_score", "early_stop", "val_loss_min", "best_epoch")}

    def load_state_dict(self, state: dict) -> None:
        for key, value in state.items():
            setattr(self, key, value)


class dotdict(dict):  # noqa: N801 - TSLib's public name
    """dict with attribute access."""

    __getattr__ = dict.get
    __setattr__ = dict.__setitem__
    __delattr__ = dict.__delitem__


def forecast_figure(true: np.ndarray, preds: np.ndarray | None = None):
    """A matplotlib figure of the ground truth and (optionally) the prediction of one series `[T]`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 3))
    if preds is not None:
        ax.plot(preds, label="Prediction", linewidth=2)
    ax.plot(true, label="GroundTruth", linewidth=2)
    ax.legend()
    fig.tight_layout()
    return fig


def visual(true: np.ndarray, preds: np.ndarray | None = None, name: str = "./pic/test.pdf") -> None:
    """Plot the ground truth and (optionally) the prediction of one series and save it to `name`."""
    fig = forecast_figure(true, preds)
    import matplotlib.pyplot as plt

    fig.savefig(name, bbox_inches="tight")
    plt.close(fig)
