"""`--executor ray`: the comparison's runs as Ray tasks on a Ray cluster (or a local Ray instance).

Each planned run is one Ray task asking for `--cpus_per_run` CPUs and `--gpus_per_run` GPUs (a fraction
lets several runs share a GPU; Ray sets CUDA_VISIBLE_DEVICES). The task runs the same `python -u run.py`
command as the local executor, in a scratch folder of the node it lands on, so the nodes need not share a
filesystem; they need the repository and the data at the same paths as the driver (a shared home, or
`git clone` + `python -m data_provider.fetch` on each node).

Files travel through one actor, `RunFolder`, pinned to the driver's node, which reads and writes the
driver's `<out>/runs/` (paths checked to stay inside it):
- before starting, the task pulls the run's `checkpoints/<setting>/` (a `last.pth` means `--resume`);
- while it trains, every changed file of that folder and its log are pushed back every `SYNC_SECONDS`
  (run.py writes `last.pth` at every epoch end and every `--save_every_steps` steps);
- at the end it pushes its result folders (and `tracking/` of --logger) and appends its `results.jsonl` / `result_*.txt` lines.
So the driver's `<out>/runs/` has the local executor's layout, manifest and report, and the driver always
holds the newest `last.pth` of every run.

Faults: a task whose worker or node dies is retried by Ray (`max_retries`) and resumes from the newest
`last.pth` the driver holds; so is a task whose run.py was killed from outside (SIGKILL, the OOM killer:
`RunProcessLost`). A run that fails by itself (exit code 1 or 2) is not retried: it is recorded as failed, as
locally. A finished run is never rerun: the driver plans only unfinished runs. The time budget and a
signal to the runner cancel the tasks in flight; each forwards one SIGTERM to its run.py, which saves
`last.pth`, pushes it, and the next invocation resumes it.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import ClassVar

from compare.grid.plan import PlannedRun
from compare.grid.run_args import flag_value
from compare.run import ray_reaper
from compare.run.local_process import RunOutcome, follow_output, run_command, start_process
from compare.run.scheduler import Grid
from utils.errors import UserInputError
from utils.record_paths import REPO_ROOT

__all__ = ["SYNC_SECONDS", "RayExecutor", "RunProcessLost", "connect", "disconnect"]

logger = logging.getLogger("compare")

#: how often a task pushes its changed checkpoint files and log to the driver
SYNC_SECONDS = 2.0
#: retries of a task whose worker, node or run.py process was lost
MAX_RETRIES = 3
#: seconds a cancelled task's run.py gets to save last.pth after its SIGTERM
CANCEL_GRACE_SECONDS = 60.0
#: files run.py appends to (several runs share them): appended on the driver, never overwritten
APPENDED_FILES = ("results.jsonl", "result_long_term_forecast.txt", "result_short_term_forecast.txt",
                  "result_imputation.txt", "result_anomaly_detection.txt", "result_classification.txt")


class RunProcessLost(RuntimeError):
    """run.py was killed from outside (SIGKILL); Ray retries the task, which resumes from last.pth."""


def _import_ray():
    try:
        import ray
    except ImportError:
        raise UserInputError("--executor ray needs Ray: pip install 'ray[tune]' (see requirements.txt), or use "
                             "--executor local") from None
    return ray


def _inside(root: Path, relpath: str) -> Path:
    """root/relpath, refusing absolute paths and `..` (a task may only touch the run folder)."""
    parts = PurePosixPath(relpath).parts
    if not parts or PurePosixPath(relpath).is_absolute() or ".." in parts:
        raise ValueError(f"{relpath!r} is not a path inside the run folder")
    return root.joinpath(*parts)


class RunFolder:
    """The driver's `<out>/runs/` as seen by the tasks (a Ray actor on the driver's node)."""

    def __init__(self, runs_dir: str) -> None:
        self.root = Path(runs_dir)

    def pull(self, prefixes: list[str]) -> dict[str, bytes]:
        """Every file under each prefix folder (relative path -> bytes)."""
        found = {}
        for prefix in prefixes:
            folder = _inside(self.root, prefix)
            for path in sorted(folder.rglob("*")) if folder.is_dir() else []:
                if path.is_file():
                    found[path.relative_to(self.root).as_posix()] = path.read_bytes()
        return found

    def put(self, relpath: str, data: bytes) -> None:
        """Write a file atomically (utils.tools.atomic_write_bytes: readers never see a partial file)."""
        from utils.tools import atomic_write_bytes

        atomic_write_bytes(_inside(self.root, relpath), data)

    def append(self, relpath: str, text: str) -> None:
        from utils.tools import append_text

        path = _inside(self.root, relpath)
        path.parent.mkdir(parents=True, exist_ok=True)
        append_text(path, text)


class _Sync:
    """Pushes the files of `folders` (relative to `scratch`) that changed since the last push."""

    def __init__(self, folder, scratch: Path, folders: list[str]) -> None:
        self.folder, self.scratch, self.folders = folder, scratch, folders
        self.seen: dict[str, tuple[float, int]] = {}

    def push_changed(self, ray) -> None:
        refs = []
        for name in self.folders:
            base = self.scratch / name
            for path in sorted(base.rglob("*")) if base.is_dir() else ([base] if base.is_file() else []):
                if not path.is_file() or path.name.endswith(".part") or path.name.startswith("."):
                    continue
                stat = path.stat()
                key, stamp = path.relative_to(self.scratch).as_posix(), (stat.st_mtime, stat.st_size)
                if self.seen.get(key) != stamp:
                    self.seen[key] = stamp
                    refs.append(self.folder.put.remote(key, path.read_bytes()))
        ray.get(refs)


def _periodic(sync: _Sync, ray, stop: threading.Event) -> None:
    while not stop.wait(SYNC_SECONDS):
        sync.push_changed(ray)


def _run_task(run: PlannedRun, folder, threads: int) -> dict:
    """The body of one Ray task: pull, run run.py in a scratch folder with periodic pushes, push the rest."""
    import ray

    setting = run.settings[0]
    checkpoints = (flag_value(run.argv, "checkpoints") or "./checkpoints/").strip("/").removeprefix("./")
    with tempfile.TemporaryDirectory(prefix="caps-tslib-run-") as tmp:
        scratch = Path(tmp)
        pulled = ray.get(folder.pull.remote([f"{checkpoints}/{s}" for s in run.settings]))
        for relpath, data in pulled.items():
            _inside(scratch, relpath).parent.mkdir(parents=True, exist_ok=True)
            _inside(scratch, relpath).write_bytes(data)
        resumed = any(relpath.endswith("/last.pth") for relpath in pulled)
        command, env = run_command(run, resumed, threads)
        env["OMP_NUM_THREADS"] = str(threads)
        log_rel = f"logs/{setting}.{socket.gethostname()}.{os.getpid()}.log"
        sync = _Sync(folder, scratch, [f"{checkpoints}/{s}" for s in run.settings] + [log_rel])
        (scratch / "logs").mkdir()
        stop = threading.Event()
        pusher = threading.Thread(target=_periodic, args=(sync, ray, stop), daemon=True)
        with (scratch / log_rel).open("w", buffering=1) as log:
            log.write(shlex.join(command) + "\n")
            proc = start_process(command, scratch, env)
            pusher.start()
            try:
                error_line = follow_output(proc, log, run)
                code = proc.wait()
            except KeyboardInterrupt:
                # ray.cancel: one SIGTERM, so run.py saves last.pth; then push what it saved.
                code, error_line = _stop_process(proc), "interrupted: the runner cancelled the run"
            finally:
                stop.set()
                pusher.join()
        _push_results(folder, scratch, run, ray)
        sync.push_changed(ray)
        ray.get(folder.append.remote(f"logs/{setting}.log", (scratch / log_rel).read_text()))
    if code == -signal.SIGKILL:
        raise RunProcessLost(f"run.py of {run.label} was killed (SIGKILL) on {socket.gethostname()}")
    node = f"{socket.gethostname()} {ray.get_runtime_context().get_node_id()[:12]}"
    return {"code": code, "error_line": error_line, "node": node, "resumed": resumed}


def _stop_process(proc: subprocess.Popen) -> int:
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout=CANCEL_GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait()


def _push_results(folder, scratch: Path, run: PlannedRun, ray) -> None:
    """The run's result folders (put) and its lines of the shared result files (appended)."""
    refs = []
    for name in APPENDED_FILES:
        path = scratch / name
        if path.is_file():
            refs.append(folder.append.remote(name, path.read_text()))
    # tracking/: --logger tensorboard / wandb (one folder per run; mlflow is refused under Ray)
    for top in ("results", "test_results", "m4_results", "tracking"):
        base = scratch / top
        for path in sorted(base.rglob("*")) if base.is_dir() else []:
            if path.is_file():
                refs.append(folder.put.remote(path.relative_to(scratch).as_posix(), path.read_bytes()))
    ray.get(refs)


def _check_reachable(address: str, source: str = "") -> bool:
    """Refuse an address nobody listens on at once (Ray itself retries for minutes); True for a loopback
    host, whose driver must then talk over loopback too. `source`: where the address came from (auto)."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise UserInputError(f"--address {address}: give auto or HOST:PORT (the head's `ray start --head --port`)")
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as err:
        if source:
            raise UserInputError(f"--address auto: the newest Ray cluster of this machine, {address} ({source}), "
                                 f"does not answer ({err.strerror or err}): its head has stopped; start one with "
                                 "`ray start --head`, or give --address HOST:PORT") from None
        raise UserInputError(f"--address {address}: no Ray head answers there ({err.strerror or err}); start one "
                             "with `ray start --head --port PORT` or fix the address") from None
    return host in ("127.0.0.1", "localhost", "::1")


def ray_temp_dir() -> Path:
    """Where Ray keeps its sessions and `ray_current_cluster`: `$RAY_TMPDIR/ray`, on Linux else `$TMPDIR/ray` or
    `/tmp/ray`, elsewhere the system temporary folder's `ray` (Ray's own rule)."""
    if os.environ.get("RAY_TMPDIR"):
        return Path(os.environ["RAY_TMPDIR"]) / "ray"
    if sys.platform.startswith("linux"):
        return Path(os.environ.get("TMPDIR") or "/tmp") / "ray"
    return Path("/tmp" if sys.platform.startswith("darwin") else tempfile.gettempdir()) / "ray"


def resolve_auto() -> tuple[str, str]:
    """What `--address auto` joins, as Ray resolves it: (HOST:PORT, where it came from) — RAY_ADDRESS, else the
    newest cluster `ray start` recorded in `ray_temp_dir()/ray_current_cluster`; one-line error when neither."""
    env = os.environ.get("RAY_ADDRESS", "").strip()
    if env:
        return env, "from RAY_ADDRESS"
    recorded = ray_temp_dir() / "ray_current_cluster"
    try:
        address = recorded.read_text().strip()
    except OSError:
        address = ""
    if not address:
        raise UserInputError(f"--address auto: no Ray cluster was started on this machine (no RAY_ADDRESS, no "
                             f"{recorded}); start one with `ray start --head`, or give --address HOST:PORT")
    return address, f"from {recorded}"


#: the one-line hint of a driver that reaches a head but cannot join it
_JOIN_HINT = ("if the head runs Ray's token authentication, the driver needs the same token (~/.ray/auth_token, "
              "RAY_AUTH_TOKEN), or both need RAY_AUTH_MODE=disabled; else start one with `ray start --head`")


#: the SIGTERM/SIGINT handlers before `connect`: ray.init installs its own and ray.shutdown leaves them
_HANDLERS_BEFORE: dict[int, object] = {}


def disconnect() -> None:
    """ray.shutdown, then the signal handlers as they were before `connect`."""
    ray = _import_ray()
    if ray.is_initialized():
        ray.shutdown()
    ray_reaper.stop()
    _restore_handlers()


def _restore_handlers() -> None:
    """The SIGTERM/SIGINT handlers as they were before `connect` (ray.init installs its own, even when it fails)."""
    for signum, handler in _HANDLERS_BEFORE.items():
        signal.signal(signum, handler)
    _HANDLERS_BEFORE.clear()


_HELD = Path(tempfile.gettempdir()) / f"caps-tslib-ray-join-{os.getpid()}.err"


@contextlib.contextmanager
def _held_stderr() -> Iterator[Path]:
    """Route file descriptor 2 to a file while Ray's core joins a cluster: on a refused join it prints a warning
    a second for about 20 s (C++ logging, not Python's); the caller replays the text when the join succeeds."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with _HELD.open("wb") as held:
            os.dup2(held.fileno(), 2)
        yield _HELD
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


def _held_text() -> str:
    """What `_held_stderr` held (the file is removed)."""
    try:
        return _HELD.read_text(errors="replace")
    except OSError:
        return ""
    finally:
        _HELD.unlink(missing_ok=True)


def connect(address: str | None) -> None:
    """`ray.init` on `address` (a new local instance on loopback when None), the workers finding this
    repository on their PYTHONPATH; one-line UserInputError when Ray is missing, cannot start, or nobody
    answers. `auto` is resolved here (RAY_ADDRESS, else the newest cluster of this machine) and checked, so a
    stale record of a stopped head is one line, not minutes of Ray's retries; the log names the cluster."""
    ray = _import_ray()
    if threading.current_thread() is threading.main_thread():
        _HANDLERS_BEFORE.update({sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)})
    runtime_env = {"env_vars": {"PYTHONPATH": str(REPO_ROOT)}}
    source = ""
    if address == "auto":
        address, source = resolve_auto()
    loopback = address is not None and _check_reachable(address, source)
    try:
        if address is None:
            # A new instance (never a stale one named in /tmp/ray), on loopback only.
            ray.init(address="local", _node_ip_address="127.0.0.1", include_dashboard=False, log_to_driver=False,
                     runtime_env=runtime_env, configure_logging=False)
            ray_reaper.start(os.getpid())  # its helper processes end with this driver, even a SIGKILLed one
        else:
            with _held_stderr():
                ray.init(address=address, log_to_driver=False, runtime_env=runtime_env, configure_logging=False,
                         **({"_node_ip_address": "127.0.0.1"} if loopback else {}))
            sys.stderr.write(_held_text())
    except (ConnectionError, RuntimeError, ValueError) as err:
        _restore_handlers()
        denied = " (the head refused the driver's token)" if "InvalidAuthToken" in _held_text() else ""
        raise UserInputError(f"--address {address}: cannot join the Ray cluster there ({str(err).splitlines()[0]})"
                             f"{denied}; {_JOIN_HINT}") from None
    except OSError as err:
        _restore_handlers()
        raise UserInputError(f"cannot start a local Ray instance ({err.strerror or err}: "
                             f"{getattr(err, 'filename', '') or ray_temp_dir()}); set RAY_TMPDIR to a folder you "
                             "can write") from None
    if address is not None:
        logger.info("ray: joined the cluster at %s%s (%g CPUs, %g GPUs)", address, f", {source}" if source else "",
                    ray.cluster_resources().get("CPU", 0), ray.cluster_resources().get("GPU", 0))


class RayExecutor:
    """Runs a grid's jobs as Ray tasks; `start` connects (one-line errors), `submit`/`poll`/`cancel` run them
    (compare/run/executor.py drives them), `close` leaves."""

    flags: ClassVar[dict[str, object]] = {"address": None, "gpus_per_run": 0.0}

    def __init__(self, address: str | None = None, cpus_per_run: float = 1.0, gpus_per_run: float = 0.0,
                 run_timeout: float | None = None) -> None:
        self.address, self.cpus, self.gpus, self.run_timeout = address, cpus_per_run, gpus_per_run, run_timeout
        self.ray = None
        self._folder = self._task = None
        self._pending: dict = {}

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> RayExecutor:
        if "mlflow" in args.logger:
            raise UserInputError("--logger mlflow writes one SQLite store that runs on other nodes cannot share: under "
                                 "--executor ray use --logger tensorboard or wandb (their folders come back with the "
                                 "results)")
        return cls(address=args.address, cpus_per_run=args.cpus_per_run or 1.0, gpus_per_run=args.gpus_per_run,
                   run_timeout=args.run_timeout)

    def start(self) -> None:
        """Connect to the cluster (or start a local instance) and check it can run one job."""
        ray = self.ray = _import_ray()
        connect(self.address)
        resources = ray.cluster_resources()
        for name, need in (("CPU", self.cpus), ("GPU", self.gpus)):
            if need > 0 and resources.get(name, 0.0) < need:
                self.close()
                raise UserInputError(f"--{name.lower()}s_per_run {need:g}: the Ray cluster has "
                                     f"{resources.get(name, 0.0):g} {name}s; lower it or add nodes with {name}s")

    def close(self) -> None:
        if self.ray is not None:
            if self._folder is not None:
                self.ray.kill(self._folder)
                self._folder = None
            disconnect()

    def capacity(self) -> int:
        """Runs the cluster can hold at once now (it changes as nodes come and go); 1 before `start`."""
        if self.ray is None or not self.ray.is_initialized():
            return 1
        resources = self.ray.cluster_resources()
        fits = [resources.get("CPU", 0.0) / self.cpus]
        if self.gpus > 0:
            fits.append(resources.get("GPU", 0.0) / self.gpus)
        return max(1, int(min(fits) + 1e-9))

    def _open(self, grid: Grid) -> None:
        """The grid folder's actor on this node (the runs' files come back through it) and the task."""
        ray = self.ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        here = ray.get_runtime_context().get_node_id()
        self._folder = ray.remote(RunFolder).options(
            num_cpus=0, scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=False)).remote(
            str(grid.runs_dir.resolve()))
        self._task = ray.remote(_run_task).options(num_cpus=self.cpus, num_gpus=self.gpus, max_retries=MAX_RETRIES,
                                                   retry_exceptions=[RunProcessLost])

    def submit(self, run: PlannedRun, grid: Grid, resume: bool):
        """A Ray task for `run` (the task itself resumes when the run's last.pth came back earlier)."""
        if self._folder is None:
            self._open(grid)
        ref = self._task.remote(run, self._folder, max(1, int(self.cpus)))
        self._pending[ref] = [grid, run, False]
        return ref

    def poll(self, timeout: float) -> list:
        ready, _ = self.ray.wait(list(self._pending), num_returns=1, timeout=timeout)
        ended = []
        for ref in ready:
            grid, run, cancelled = self._pending.pop(ref)
            ended.append((ref, *self._outcome(grid, ref, run, cancelled)))
        return ended

    def cancel(self, ref) -> None:
        if ref in self._pending and not self._pending[ref][2]:
            self.ray.cancel(ref)
            self._pending[ref][2] = True

    def _outcome(self, grid: Grid, ref, run: PlannedRun, cancelled: bool) -> tuple[RunOutcome, bool]:
        """(outcome, resumed) of an ended task."""
        ray = self.ray
        log_path = grid.runs_dir / "logs" / f"{run.settings[0]}.log"
        try:
            result = ray.get(ref)
            outcome = RunOutcome(result["code"], result["error_line"], log_path, cancelled, False, result["node"])
            resumed = result["resumed"]
        except ray.exceptions.TaskCancelledError:
            outcome, resumed = RunOutcome(128 + signal.SIGTERM, None, log_path, True, False, None), False
        except ray.exceptions.RayError as err:
            first = str(err).strip().splitlines()[-1] if str(err).strip() else type(err).__name__
            outcome, resumed = RunOutcome(1, f"Ray task failed: {first}", log_path, False, False, None), False
        return outcome, resumed
