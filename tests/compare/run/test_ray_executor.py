"""`--executor ray` on real Ray: a local instance in the default suite; a two-node cluster on this machine
(`ray start --head` plus a second `ray start --address`, both on 127.0.0.1) and the fault tests are marked
slow. Every Ray process a test starts is stopped by it (`ray start --block` ends its processes on SIGTERM)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import ray
from waiting import run_py_pids, wait_for

from compare.recipes.tables import Dataset, ModelRecipe, RecipeBook
from compare.run import runner
from compare.run.scheduler import GridOptions
from tests.compare.run.test_runner import TOY_FLAGS, write_toy_csv

BOOK = RecipeBook(
    datasets={"toy": Dataset("toy", "./dataset/toy/", "toy.csv", "custom", 3, fetch="toy", folder="Toy_script",
                             horizons=(12, 6))},
    models={m: ModelRecipe(m, TOY_FLAGS, {"toy": {}}) for m in ("DLinear", "iTransformer")},
)
# Ray's own login token stays off: the tests' clusters live on loopback (see issue 51).
ENV = {**os.environ, "RAY_AUTH_MODE": "disabled", "PYTHONPATH": str(Path(__file__).resolve().parents[3])}


@pytest.fixture(autouse=True)
def _no_ray_auth(monkeypatch):
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")


def invoke(argv: list[str]) -> tuple[int, str]:
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = runner.main(argv, BOOK)
    return code, buffer.getvalue()


def grid_argv(data: Path, out: Path, *extra: str) -> list[str]:
    return ["--data", "toy", "--models", "DLinear", "--pred_lens", "12", "--epochs", "1", "--num_workers", "0",
            "--root", str(data), "--out", str(out), "--cpus_per_run", "1", "--no-timing", *extra]


def scores(out: Path) -> dict[str, tuple[float, float]]:
    lines = (out / "runs" / "results.jsonl").read_text().splitlines()
    return {r["setting"]: (r["mse"], r["mae"]) for r in map(json.loads, lines)}


def manifest(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "runs" / "compare_runs.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("ray_data")
    write_toy_csv(root / "toy" / "toy.csv")
    return root


def test_a_local_ray_instance_gives_the_local_executors_numbers(data, tmp_path):
    code, log = invoke(grid_argv(data, tmp_path / "local"))
    assert code == 0, log
    code, log = invoke(grid_argv(data, tmp_path / "ray", "--executor", "ray"))
    assert code == 0, log
    assert not ray.is_initialized()
    assert scores(tmp_path / "ray") == scores(tmp_path / "local") and len(scores(tmp_path / "ray")) == 1
    entry = manifest(tmp_path / "ray")[0]
    assert entry["status"] == "ok" and entry["node"].startswith(socket.gethostname())
    assert "grid: 1 finished, 0 running, 0 failed, 0 interrupted, 0 waiting" in log
    # The same layout: checkpoint, result arrays, log, report.
    setting = next(iter(scores(tmp_path / "ray")))
    for path in (f"runs/checkpoints/{setting}/checkpoint.pth", f"runs/results/{setting}/metrics.npy",
                 f"runs/logs/{setting}.log", "table.md"):
        assert (tmp_path / "ray" / path).is_file(), path
    # A finished run is never rerun.
    code, log = invoke(grid_argv(data, tmp_path / "ray", "--executor", "ray"))
    assert code == 0 and "1 already finished, 0 to run" in log


@pytest.mark.parametrize(("extra", "expected"), [
    (("--address", "127.0.0.1:6379"), "error: --address 127.0.0.1:6379 is read by --executor ray only: add "
                                      "--executor ray or drop it"),
    (("--gpus_per_run", "0.5"), "error: --gpus_per_run 0.5 is read by --executor ray only: add --executor ray or "
                                "drop it"),
    (("--executor", "ray", "--cpus_per_run", "0"), "error: --cpus_per_run 0: give a positive number of CPUs"),
    (("--executor", "ray", "--gpus_per_run", "-1"), "error: --gpus_per_run -1: give 0 or a positive fraction of "
                                                    "a GPU"),
    (("--executor", "ray", "--address", "nonsense"), "error: --address nonsense: give auto or HOST:PORT (the "
                                                     "head's `ray start --head --port`)"),
], ids=["address-without-ray", "gpus-without-ray", "zero-cpus", "negative-gpus", "address-not-host-port"])
def test_executor_flags_are_checked_in_one_line_writing_nothing(data, tmp_path, capsys, extra, expected):
    out = tmp_path / "out"
    argv = grid_argv(data, out)
    del argv[argv.index("--cpus_per_run"):argv.index("--cpus_per_run") + 2]
    assert runner.main([*argv, *extra], BOOK) == 2
    assert capsys.readouterr().err.strip() == expected
    assert not out.exists()


def test_an_address_nobody_listens_on_is_one_line_at_once(data, tmp_path, capsys):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # free once the socket is closed
    out = tmp_path / "out"
    start = time.monotonic()
    assert runner.main([*grid_argv(data, out), "--executor", "ray", "--address", f"127.0.0.1:{port}"], BOOK) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: --address 127.0.0.1:{port}: no Ray head answers there") and "\n" not in err
    assert time.monotonic() - start < 30 and not out.exists()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # free once the socket is closed


@pytest.mark.parametrize("case", ["stale-record", "no-record", "stale-RAY_ADDRESS"])
def test_address_auto_is_resolved_and_a_dead_head_is_one_line_at_once(data, tmp_path, capsys, monkeypatch, case):
    """`--address auto` joins RAY_ADDRESS, else the cluster `ray start` recorded last in Ray's temp folder; a
    record of a head that has stopped is one line within seconds (Ray alone retried for minutes)."""
    monkeypatch.setenv("RAY_TMPDIR", str(tmp_path / "raytmp"))
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    port = _free_port()
    record = tmp_path / "raytmp" / "ray" / "ray_current_cluster"
    if case == "stale-record":
        record.parent.mkdir(parents=True)
        record.write_text(f"127.0.0.1:{port}\n")
        expected = (f"error: --address auto: the newest Ray cluster of this machine, 127.0.0.1:{port} (from "
                    f"{record}), does not answer (")
    elif case == "no-record":
        expected = (f"error: --address auto: no Ray cluster was started on this machine (no RAY_ADDRESS, no "
                    f"{record}); start one with `ray start --head`, or give --address HOST:PORT")
    else:
        monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{port}")
        expected = f"error: --address auto: the newest Ray cluster of this machine, 127.0.0.1:{port} (from RAY_ADDRESS)"
    out = tmp_path / "out"
    start = time.monotonic()
    assert runner.main([*grid_argv(data, out), "--executor", "ray", "--address", "auto"], BOOK) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(expected) and "\n" not in err
    assert time.monotonic() - start < 30 and not out.exists() and not ray.is_initialized()


def test_a_local_instance_that_cannot_start_is_one_line(data, tmp_path, capsys, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("RAY_TMPDIR", str(blocker))
    out = tmp_path / "out"
    assert runner.main([*grid_argv(data, out), "--executor", "ray"], BOOK) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: cannot start a local Ray instance (Not a directory: ") and "\n" not in err
    assert err.endswith("set RAY_TMPDIR to a folder you can write") and not ray.is_initialized()


def test_gpus_per_run_on_a_cluster_without_gpus_is_one_line(data, tmp_path, capsys):
    out = tmp_path / "out"
    assert runner.main([*grid_argv(data, out), "--executor", "ray", "--gpus_per_run", "0.25"], BOOK) == 2
    assert capsys.readouterr().err.strip() == ("error: --gpus_per_run 0.25: the Ray cluster has 0 GPUs; lower it or "
                                               "add nodes with GPUs")
    assert not out.exists() and not ray.is_initialized()


def test_grid_options_default_to_one_run_at_a_time():
    assert GridOptions(out=Path("x")).parallel == 1


class Cluster:
    """A head and one worker node on 127.0.0.1, one CPU each (`ray start --block`, stopped on exit)."""

    def __init__(self, tmp: Path) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.address = f"127.0.0.1:{self.port}"
        common = ["--node-ip-address", "127.0.0.1", "--num-cpus", "1", "--disable-usage-stats", "--block"]
        self.head = self._start(["--head", "--port", str(self.port), "--include-dashboard", "false", *common],
                                tmp / "head.log")
        self.wait_for_nodes(1)
        self.worker = self._start(["--address", self.address, *common], tmp / "worker.log")
        self.wait_for_nodes(2)

    @staticmethod
    def _start(flags: list[str], log: Path) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-m", "ray.scripts.scripts", "start", *flags], env=ENV,
                                stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True)

    def alive_nodes(self) -> int:
        probe = (f"import ray; ray.init(address={self.address!r}, _node_ip_address='127.0.0.1', log_to_driver=False); "
                 "print(sum(n['Alive'] for n in ray.nodes()))")
        done = subprocess.run([sys.executable, "-c", probe], env=ENV, capture_output=True, text=True, timeout=120)
        return int(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 and done.stdout.strip() else 0

    def wait_for_nodes(self, count: int, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while self.alive_nodes() != count:
            assert time.monotonic() < deadline, f"the Ray cluster did not reach {count} alive nodes"
            time.sleep(1.0)

    @staticmethod
    def stop(proc: subprocess.Popen) -> None:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()

    def close(self) -> None:
        self.stop(self.worker)
        self.stop(self.head)


@pytest.fixture
def cluster(tmp_path):
    nodes = Cluster(tmp_path)
    try:
        yield nodes
    finally:
        nodes.close()


@pytest.mark.slow
def test_a_two_node_cluster_spreads_the_grid_and_matches_the_local_table(data, tmp_path, cluster):
    rows = ["--models", "DLinear", "iTransformer", "--variant", "DLinear-lr=DLinear:--learning_rate 0.001",
            "--pred_lens", "12", "6"]
    code, log = invoke([*grid_argv(data, tmp_path / "ray", "--executor", "ray", "--address", cluster.address),
                        *rows])
    assert code == 0, log
    code, local_log = invoke([*grid_argv(data, tmp_path / "local"), *rows])
    assert code == 0, local_log
    assert scores(tmp_path / "ray") == scores(tmp_path / "local") and len(scores(tmp_path / "ray")) == 6
    nodes = {entry["node"] for entry in manifest(tmp_path / "ray")}
    assert len(nodes) == 2, nodes
    assert (tmp_path / "ray" / "table.md").read_text().split("\n## ")[0] == \
        (tmp_path / "local" / "table.md").read_text().split("\n## ")[0]




@pytest.mark.slow
def test_a_killed_run_is_retried_by_ray_and_resumes_to_the_uninterrupted_result(tmp_path, cluster):
    data = tmp_path / "data"
    write_toy_csv(data / "toy" / "toy.csv", rows=3000)
    argv = ["--data", "toy", "--models", "iTransformer", "--pred_lens", "12", "--epochs", "3", "--num_workers", "0",
            "--root", str(data), "--cpus_per_run", "1", "--no-timing", "--patience", "5", "--extra=--save_every_steps 5"]
    outcome = {}
    ray_out = tmp_path / "ray"
    worker = threading.Thread(target=lambda: outcome.update(
        result=invoke([*argv, "--out", str(ray_out), "--executor", "ray", "--address", cluster.address])))
    worker.start()
    wait_for(lambda: any((ray_out / "runs" / "checkpoints").glob("*/last.pth")), 300, "a pushed last.pth")
    pids = run_py_pids(str(data))
    assert len(pids) == 1
    os.kill(pids[0], signal.SIGKILL)
    worker.join(timeout=900)
    code, log = outcome["result"]
    assert code == 0, log
    entry = manifest(ray_out)[-1]
    assert entry["status"] == "ok" and entry["resumed"] is True
    code, local_log = invoke([*argv, "--out", str(tmp_path / "local")])
    assert code == 0, local_log
    assert scores(ray_out) == scores(tmp_path / "local")


@pytest.mark.slow
def test_losing_the_worker_node_still_finishes_the_grid_with_the_same_numbers(tmp_path, cluster):
    data = tmp_path / "data"
    write_toy_csv(data / "toy" / "toy.csv", rows=3000)
    argv = ["--data", "toy", "--models", "iTransformer", "DLinear", "--pred_lens", "12", "--epochs", "3",
            "--num_workers", "0", "--root", str(data), "--cpus_per_run", "1", "--no-timing",
            "--patience", "5", "--extra=--save_every_steps 5"]
    outcome = {}
    ray_out = tmp_path / "ray"
    worker = threading.Thread(target=lambda: outcome.update(
        result=invoke([*argv, "--out", str(ray_out), "--executor", "ray", "--address", cluster.address])))
    worker.start()
    # Both runs are in flight (one per node) once two run.py processes exist; then the worker node goes.
    wait_for(lambda: len(run_py_pids(str(data))) == 2, 300, "two runs in flight")
    wait_for(lambda: any((ray_out / "runs" / "checkpoints").glob("*/last.pth")), 300, "a pushed last.pth")
    cluster.stop(cluster.worker)
    worker.join(timeout=1200)
    code, log = outcome["result"]
    assert code == 0, log
    assert {e["status"] for e in manifest(ray_out)} == {"ok"} and len(manifest(ray_out)) == 2
    code, local_log = invoke([*argv, "--out", str(tmp_path / "local")])
    assert code == 0, local_log
    assert scores(ray_out) == scores(tmp_path / "local")
