"""The run folder `<checkpoints>/<setting>/` belongs to one process at a time (issue 49).

Two copies of one command started at once would train on the same `last.pth` and record every row twice.
`RunFolder` takes an exclusive, non-blocking `fcntl.flock` on `<folder>/run.lock` for the whole train +
test of a setting and writes its pid there; a second process gets one line naming the folder and that pid.
Once locked, the folder's `config.json` is checked against the run's configuration and written
(exp/run_config.py).
The lock file stays when the run ends (removing it would let two later runs lock two different files); a
run that fails before anything of it was written removes the folders it created, so no empty folder is left.
Where `fcntl` is missing (Windows) the folder is not locked. `lock_holder` tells, without taking the folder,
whether another process holds it (the comparison runner leaves such a run to that process).
"""

from __future__ import annotations

import os
from pathlib import Path

from exp.run_config import CONFIG_FILE, record_config
from utils.errors import UserInputError

try:
    import fcntl
except ImportError:  # Windows: runs are not locked there
    fcntl = None

LOCK_FILE = "run.lock"


def _holder(fd: int) -> str:
    """The pid the holder wrote into the lock file ('an unknown process' while it has not yet)."""
    text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    return f"process {text}" if text.isdigit() else "an unknown process"


def _lock(lock: Path) -> int:
    """An open descriptor of `lock` holding its exclusive flock, with this process's pid written in it."""
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            raise UserInputError(f"{lock.parent} is in use by {holder} (the same run started twice?); wait for it "
                                 "to finish, or give this run another --des or --model_id") from None
        # A failing holder may have removed the file between our open and our lock: lock the file now there.
        try:
            current = os.stat(lock).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            current = False
        if current:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
            return fd
        os.close(fd)
        lock.parent.mkdir(parents=True, exist_ok=True)


def lock_holder(folder: str | os.PathLike) -> str | None:
    """Who holds `folder`'s run lock ('process N' or 'an unknown process'), or None when nobody does (no lock
    file, a free one, or no `fcntl`). The probe takes a shared lock for an instant and never creates the file."""
    if fcntl is None:
        return None
    try:
        fd = os.open(Path(folder) / LOCK_FILE, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _holder(fd)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


class RunFolder:
    """Hold `path` (a run's `<checkpoints>/<setting>/`) for this process: `acquire`, then `release(failed)`.

    `own_files` are bookkeeping files of the run (not results): when the run fails and the folder holds
    nothing else, they, the lock file and every folder `acquire` created are removed again.
    """

    def __init__(self, path: str | os.PathLike, config: dict | None = None) -> None:
        """config: the run's `run_config`, recorded in (and checked against) `<path>/config.json` once the folder
        is locked; None records nothing."""
        self.path = Path(path)
        self.config = config
        self.own_files: set[str] = {LOCK_FILE}
        self._fd: int | None = None
        self._created: list[Path] = []

    def acquire(self) -> None:
        """Create the folder if needed and lock it; UserInputError naming the holder when another process has it."""
        missing = [folder for folder in (self.path, *self.path.parents) if not folder.exists()]
        self.path.mkdir(parents=True, exist_ok=True)
        # Deepest first: the order in which they are removed again.
        self._created = missing
        if fcntl is not None:
            try:
                self._fd = _lock(self.path / LOCK_FILE)
            except UserInputError:
                self._remove_created()
                raise
        if self.config is None:
            return
        try:
            if record_config(self.path, self.config):
                self.own_files.add(CONFIG_FILE)
        except UserInputError:
            self.release(failed=True)
            raise

    def release(self, failed: bool) -> None:
        """Unlock; after a failure that left only bookkeeping files, remove them and the folders `acquire` made."""
        try:
            if failed and self._created and {p.name for p in self.path.iterdir()} <= self.own_files:
                for name in self.own_files:
                    (self.path / name).unlink(missing_ok=True)
                self._remove_created()
        finally:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def _remove_created(self) -> None:
        for folder in self._created:
            try:
                folder.rmdir()
            except OSError:
                # Not empty (another run writes there too) or already gone: leave it.
                return
        self._created = []
