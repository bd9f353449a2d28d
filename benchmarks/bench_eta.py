"""The comparison runner's ETA against the truth, on a real 3-run comparison.

    python benchmarks/bench_eta.py [--models DLinear iTransformer PatchTST] [--epochs 2] [--jobs 1]

Runs `python -m compare` on ETTh1 at H = 96 (from TSLIB_DATA_MIRROR, else ./dataset) in a temporary folder,
stamps every line it prints with the time, and at each moment the runner states an ETA (its up-front grid
estimate, each run's start, each progress line) prints that ETA beside the time that really remained until
the grid ended (`--progress-every 30`: a progress line every 30 s while a run trains), and beside what the old rule (the mean of the finished runs' times × the runs left) would have
said. Not a test: it prints measured figures only.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DURATION = re.compile(r"(?:(\d+)h(\d+)m|(\d+)m(\d+)s)")
MOMENT = re.compile(r"^(estimate: the \d+ runs take about (\S+)|\[(\d+)/(\d+)\] .*\(ETA (\S+)\)|"
                    r"grid: .*\(ETA (\S+)\))")
DONE = re.compile(r"^\s+(?:done|FAILED) (?:in|after) (\S+): ([^:]+):")
PROBE = re.compile(r"^\s+probe (.+?): .* about (\S+)$")
OWN = re.compile(r"this run: about \S+ \((\d+) s\)")


def seconds(text: str) -> float:
    m = DURATION.fullmatch(text)
    if m is None:
        raise ValueError(text)
    h, hm, m_, s = m.groups()
    return int(h) * 3600 + int(hm) * 60 if h else int(m_) * 60 + int(s)


def _first_own_estimate(log: str) -> str:
    found = OWN.search(log)
    return f"{found[1]} s" if found else "-"


def header() -> str:
    import torch

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (f"{time.strftime('%Y-%m-%d %H:%M')}  {platform.machine()} {os.cpu_count()} CPUs, load {load:.1f} at "
            f"start, torch {torch.__version__}, Python {platform.python_version()}, commit {commit.strip()}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", nargs="+", default=["DLinear", "iTransformer", "PatchTST"])
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--jobs", type=int, default=1)
    args = p.parse_args()
    root = Path(os.environ.get("TSLIB_DATA_MIRROR", REPO / "dataset"))
    if not (root / "ETT-small" / "ETTh1.csv").is_file():
        raise SystemExit(f"ETTh1 not found under {root}: set TSLIB_DATA_MIRROR or run python -m data_provider.fetch ETTh1")
    print(header())
    with tempfile.TemporaryDirectory(prefix="bench-eta-") as tmp:
        command = [sys.executable, "-m", "compare", "--data", "ETTh1", "--models", *args.models, "--pred_lens", "96",
                   "--epochs", str(args.epochs), "--num_workers", "0", "--jobs", str(args.jobs), "--root", str(root),
                   "--out", str(Path(tmp) / "grid"), "--no-report", "--progress-every", "30"]
        print("command: python -m compare " + " ".join(command[3:-5]) + " --out <tmp> --no-report --progress-every 30")
        start = time.monotonic()
        lines: list[tuple[float, str]] = []
        with subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as proc:
            assert proc.stdout is not None
            for line in proc.stdout:
                lines.append((time.monotonic() - start, line.rstrip("\n")))
        end = time.monotonic() - start
        runs_log = {}
        for log in (Path(tmp) / "grid" / "runs" / "logs").glob("*.log"):
            model = log.name.split("_96_96_")[1].split("_ETTh1_")[0]
            runs_log[f"{model} | ETTh1 | H=96"] = log.read_text()
        if proc.returncode != 0:
            print("\n".join(text for _, text in lines))
            raise SystemExit(f"the comparison failed with exit code {proc.returncode}")
    durations: list[float] = []
    total = len(args.models)
    print("\n| moment | at | ETA printed | old rule (mean of finished) | truth | printed / truth |")
    print("|---|---|---|---|---|---|")
    for at, text in lines:
        done = DONE.match(text)
        if done:
            durations.append(seconds(done[1]))
            continue
        m = MOMENT.match(text)
        if m is None:
            continue
        eta = seconds(m[2] or m[5] or m[6])
        started = int(m[3]) if m[3] else None
        left_runs = total - len(durations)
        old = (f"{sum(durations) / len(durations) * left_runs / args.jobs:.0f} s" if durations else "?")
        moment = ("grid estimate" if m[2] else f"start of run {started}/{m[4]}" if started
                  else f"after {len(durations)} run(s)")
        truth = end - at
        print(f"| {moment} | {at:.0f} s | {eta:.0f} s | {old} | {truth:.0f} s | {eta / truth:.2f} |")
    print(f"\ngrid wall time {end:.0f} s")
    probes = {m[1]: seconds(m[2]) for _, text in lines if (m := PROBE.match(text))}
    print("\n| run | probed prediction | run's first own estimate (training only) | measured (process) |")
    print("|---|---|---|---|")
    for _, text in lines:
        done = DONE.match(text)
        if done:
            label = done[2].strip()
            own = _first_own_estimate(runs_log.get(label, ""))
            print(f"| {label} | {probes.get(label, float('nan')):.0f} s | {own} | {seconds(done[1]):.0f} s |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
