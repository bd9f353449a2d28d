"""Side-by-side comparison runner: `python -m compare --data ETTh1 --models CAPS DLinear ...`.

Every (model row, dataset, horizon) runs `python -u run.py` with its recipe from the table in
`compare/recipes.py` (the table `scripts/` is generated from, so scripts and runner share one source of
truth), in a subprocess whose working directory is `<out>/runs`: all TSLib outputs
(`checkpoints/`, `results/`, `results.jsonl`, ...) stay inside `--out`, and a crash or an
out-of-memory run cannot take the others down. Runs whose settings are already in
`<out>/runs/results.jsonl` are skipped, so an interrupted comparison continues where it stopped.
The runner records each attempt in `<out>/runs/compare_runs.jsonl` and finally writes the report
(`compare.report`).

`--jobs N` runs N of them at once (each its own process; results and manifest lines are appended
atomically): small models leave a GPU mostly idle, so several runs share it well. Each job gets
`cpu_count // N` CPU threads unless OMP_NUM_THREADS is set.

Rows are the table's models and named variants (`--models CAPS LinAttn+RoPE DLinear`). Ad-hoc variants
are extra rows built on another row's recipe: `--variant "NAME=BASE:FLAGS"`, e.g.
`--variant "CAPS (official numerics)=CAPS:--caps_numerics official"`; their `--model_id` gets the
suffix `_<NAME>` so their settings never collide with BASE's.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import shlex
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from compare.recipes import RECIPES, Recipe, RecipeBook
from compare.report import (
    CONFIG_FILE,
    MANIFEST_FILE,
    RESULTS_JSONL,
    RUNS_DIR,
    machine_info,
    write_report,
)
from compare.run_args import flag_value, merge_flags, parse_run_args
from exp.arguments import make_setting
from utils.errors import UserInputError
from utils.tools import append_text

__all__ = ["PlannedRun", "Row", "build_parser", "main", "parse_variant", "plan_runs"]

logger = logging.getLogger("compare")

REPO_ROOT = Path(__file__).resolve().parent.parent
_EPOCH_LINE = re.compile(r"Epoch: (\d+), Steps: \d+ \| Train Loss: (\S+) Vali Loss: (\S+) Test Loss: (\S+)")


@dataclass(frozen=True)
class Row:
    """A model row of the comparison: BASE's recipe plus `flags`; `tag` suffixes variant model_ids."""

    name: str
    base: str
    flags: tuple[str, ...] = ()
    tag: str = ""


@dataclass
class PlannedRun:
    """One (row, dataset, horizon): the run.py argv, its settings, or why it cannot run."""

    row: Row
    dataset: str
    pred_len: int
    argv: list[str] = field(default_factory=list)
    settings: list[str] = field(default_factory=list)
    recipe: Recipe | None = None
    error: str | None = None

    @property
    def label(self) -> str:
        return f"{self.row.name} | {self.dataset} | H={self.pred_len}"


def _tag(name: str) -> str:
    """A file-name-safe tag for a variant name (`CAPS (official)` -> `CAPS-official`)."""
    return re.sub(r"[^A-Za-z0-9.+-]+", "-", name).strip("-")


def parse_variant(text: str) -> Row:
    """`NAME=BASE:FLAGS` -> Row; FLAGS is a shell-quoted string of run.py flags (may be empty)."""
    name, eq, rest = text.partition("=")
    base, colon, flags = rest.partition(":")
    if not eq or not colon or not name.strip() or not base.strip():
        raise UserInputError(f"--variant {text!r} must look like NAME=BASE:FLAGS, e.g. "
                             "'LinAttn=CAPS:--caps_paths none --learning_rate 6e-4'")
    try:
        words = shlex.split(flags)
    except ValueError as err:
        raise UserInputError(f"--variant {text!r}: cannot split its flags ({err})") from None
    name = name.strip()
    if not _tag(name):
        raise UserInputError(f"--variant {text!r}: NAME needs at least one letter or digit")
    return Row(name=name, base=base.strip(), flags=tuple(words), tag=_tag(name))


def _resolve_root(root_path: str, data_root: Path | None) -> str:
    """The recipe's `--root_path` made absolute: `./dataset/X/` maps to `<data_root>/X/` when a data
    root is given, else it is taken relative to the repository root (where the scripts are run from)."""
    path = Path(root_path)
    if path.is_absolute():
        return str(path)
    if data_root is not None:
        parts = path.parts[1:] if path.parts and path.parts[0] == "dataset" else path.parts
        return str(data_root.joinpath(*parts).resolve()) + os.sep
    return str((REPO_ROOT / path).resolve()) + os.sep


def _fetch_hint(recipe: Recipe) -> str:
    return f"python -m data_provider.fetch {recipe.fetch} --root ./dataset"


def _global_flags(args: argparse.Namespace) -> list[str]:
    """Flags the runner applies to every run after the recipe and variant flags."""
    flags = ["--no_progress"]
    if args.epochs is not None:
        flags += ["--train_epochs", str(args.epochs)]
    if args.patience is not None:
        flags += ["--patience", str(args.patience)]
    if args.num_workers is not None:
        flags += ["--num_workers", str(args.num_workers)]
    if args.inverse:
        flags.append("--inverse")
    return flags + list(args.extra_flags)


def plan_runs(args: argparse.Namespace, rows: list[Row], book: RecipeBook = RECIPES) -> list[PlannedRun]:
    """Every (dataset, horizon, row) with its final argv and settings; an unknown dataset raises
    UserInputError, other problems are recorded on the run (`error`) instead of raised, so one bad row
    never stops the others."""
    data_root = Path(args.root).resolve() if args.root else None
    overrides = _global_flags(args)
    datasets = [book.dataset(name).name for name in args.data]
    plan = []
    for dataset in datasets:
        for pred_len in args.pred_lens:
            for row in rows:
                run = PlannedRun(row, dataset, pred_len)
                plan.append(run)
                try:
                    run.recipe = book.recipe(row.base, dataset, pred_len)
                    argv = merge_flags(run.recipe.argv, row.flags)
                    argv = merge_flags(argv, overrides)
                    model_id = flag_value(argv, "model_id") or dataset
                    if row.tag:
                        model_id = f"{model_id}_{row.tag}"
                    root_path = _resolve_root(flag_value(argv, "root_path") or "./dataset", data_root)
                    argv = merge_flags(argv, ["--model_id", model_id, "--root_path", root_path])
                    parsed = parse_run_args(argv)
                    data_file = Path(parsed.root_path) / parsed.data_path
                    if not data_file.is_file():
                        raise UserInputError(f"data file {data_file} is missing: run `{_fetch_hint(run.recipe)}`"
                                             " from the repository root, or pass --root DIR (a folder laid out "
                                             "like ./dataset)")
                except UserInputError as err:
                    run.error = str(err)
                    continue
                run.argv = argv
                run.settings = [make_setting(parsed, ii) for ii in range(parsed.itr)]
    seen: dict[str, PlannedRun] = {}
    for run in plan:
        for setting in run.settings:
            if setting in seen:
                raise UserInputError(f"{run.label} and {seen[setting].label} produce the same setting {setting}; "
                                     "give one of them a different --model_id")
            seen[setting] = run
    return plan


def _finished_settings(runs_dir: Path) -> set[str]:
    path = runs_dir / RESULTS_JSONL
    if not path.is_file():
        return set()
    done = set()
    for line in path.read_text().splitlines():
        try:
            done.add(json.loads(line)["setting"])
        except (json.JSONDecodeError, KeyError):
            continue
    return done


def _warn_changed_recipes(runs_dir: Path, skipped: list[PlannedRun]) -> None:
    """Warn when a finished run was made with other flags than the ones planned now (the setting
    string does not contain every flag, e.g. --learning_rate or --train_epochs)."""
    path = runs_dir / MANIFEST_FILE
    earlier = {}
    for line in path.read_text().splitlines() if path.is_file() else []:
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if entry.get("status") == "ok":
            earlier[tuple(entry.get("settings") or [])] = entry.get("argv") or []
    for run in skipped:
        before = earlier.get(tuple(run.settings))
        if before is not None and before != run.argv:
            changed = sorted(set(before) ^ set(run.argv))
            logger.warning("  %s finished earlier with different flags (%s); its old result is kept: delete "
                           "%s/results/%s and its line in results.jsonl to rerun it", run.label,
                           " ".join(changed), runs_dir, run.settings[0])


def _append_manifest(runs_dir: Path, record: dict) -> None:
    append_text(runs_dir / MANIFEST_FILE, json.dumps(record) + "\n")


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}h{rest // 60:02d}m" if hours else f"{rest // 60}m{rest % 60:02d}s"


def _execute(run: PlannedRun, runs_dir: Path, timeout: float | None,
             threads: int | None = None) -> tuple[int, str | None, Path]:
    """Run one `python -u run.py` subprocess, echoing epoch progress; returns (exit code, error line, log).

    threads: OMP_NUM_THREADS for the subprocess when the environment does not set it already.
    """
    log_dir = runs_dir / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / f"{run.settings[0]}.log"
    env = {**os.environ, **(run.recipe.env if run.recipe else {}), "PYTHONUNBUFFERED": "1"}
    if threads is not None:
        env.setdefault("OMP_NUM_THREADS", str(threads))
    command = [sys.executable, "-u", str(REPO_ROOT / "run.py"), *run.argv]
    epochs = flag_value(run.argv, "train_epochs") or "?"
    error_line = None
    with log_path.open("w") as log:
        log.write(" ".join(shlex.quote(c) for c in command) + "\n")
        proc = subprocess.Popen(command, cwd=runs_dir, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, bufsize=1)
        timer = threading.Timer(timeout, proc.kill) if timeout else None
        if timer:
            timer.start()
        try:
            assert proc.stdout is not None  # PIPE was requested
            for line in proc.stdout:
                log.write(line)
                match = _EPOCH_LINE.search(line)
                if match:
                    logger.info("    %s  epoch %s/%s  train %.4f  vali %.4f  test %.4f", run.label, match[1],
                                epochs, float(match[2]), float(match[3]), float(match[4]))
                elif line.startswith("error:"):
                    error_line = line.strip()
                elif "Traceback" in line and error_line is None:
                    error_line = "crashed with a traceback"
                elif error_line == "crashed with a traceback" and line.strip() and not line.startswith(" "):
                    error_line = line.strip()
            code = proc.wait()
        finally:
            if timer:
                timer.cancel()
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    if timer and code < 0 and error_line is None:
        error_line = f"killed after the --run-timeout of {timeout:g} s"
    return code, error_line, log_path


def _result_line(runs_dir: Path, settings: list[str]) -> str:
    records = {}
    path = runs_dir / RESULTS_JSONL
    for line in path.read_text().splitlines() if path.is_file() else []:
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        records[rec.get("setting")] = rec
    found = [records[s] for s in settings if s in records]
    if not found:
        return "no result recorded"
    mse = sum(r["mse"] for r in found) / len(found)
    mae = sum(r["mae"] for r in found) / len(found)
    return f"mse {mse:.4f}  mae {mae:.4f}  epochs {found[0].get('epochs_run')}"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m compare",
        description="Run models side by side with their recipes (compare/recipes.py) and write a comparison report.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--data", nargs="+", required=True,
                   help=f"datasets of compare/recipes.py: {' '.join(RECIPES.datasets)}")
    p.add_argument("--models", nargs="*", default=[],
                   help=f"model rows of compare/recipes.py: {', '.join(RECIPES.rows)}")
    p.add_argument("--pred_lens", nargs="+", type=int, default=[96, 192, 336, 720],
                   help="horizons (PEMS: 96 48 24 12)")
    p.add_argument("--variant", action="append", default=[], metavar="NAME=BASE:FLAGS",
                   help="extra row: BASE's recipe plus run.py FLAGS (repeatable)")
    p.add_argument("--epochs", type=int, default=None, help="override every recipe's --train_epochs")
    p.add_argument("--patience", type=int, default=None, help="override every recipe's --patience")
    p.add_argument("--num_workers", type=int, default=None, help="override --num_workers (0 loads in-process)")
    p.add_argument("--extra", default="",
                   help="run.py flags applied to every run, as one string after '=': --extra='--d_model 16'")
    p.add_argument("--inverse", action="store_true", help="score and plot in original units (--inverse)")
    p.add_argument("--root", default=None, help="dataset root replacing the recipes' ./dataset (e.g. a mirror)")
    p.add_argument("--out", default="comparison", help="output folder (runs go to OUT/runs)")
    # Recipes come from compare/recipes.py now; the old flag stays only to say so.
    p.add_argument("--scripts", default=None, help=argparse.SUPPRESS)
    p.add_argument("--reference", default=None, help="CSV dataset,pred_len,model,mse,mae shown beside ours")
    p.add_argument("--run-timeout", type=float, default=None, help="kill a run after this many seconds")
    p.add_argument("--jobs", type=int, default=1,
                   help="runs at once (each gets cpu_count // jobs threads unless OMP_NUM_THREADS is set)")
    p.add_argument("--no-timing", action="store_true", help="efficiency.md without train-step measurements")
    p.add_argument("--efficiency-device", default="cpu", choices=("cpu", "cuda"),
                   help="device of the efficiency.md measurements")
    p.add_argument("--no-report", action="store_true", help="run only; write the report later with compare.report")
    p.add_argument("--dry-run", action="store_true", help="print the plan (commands, skips, problems) and exit")
    return p


def _rows(args: argparse.Namespace, book: RecipeBook = RECIPES) -> list[Row]:
    """The table rows named by --models (in the table's spelling) and the --variant rows, checked."""
    rows = [Row(name=book.row_name(m), base=book.row_name(m)) for m in args.models]
    rows += [replace(row, base=book.row_name(row.base)) for row in map(parse_variant, args.variant)]
    if not rows:
        raise UserInputError("nothing to compare: pass --models and/or --variant")
    names = [r.name for r in rows]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise UserInputError(f"row names must be unique; repeated: {', '.join(duplicates)}")
    return rows


def _write_config(out: Path, args: argparse.Namespace, argv: list[str], rows: list[Row]) -> None:
    """Record this invocation in `out/compare.json`, merged with earlier ones (a comparison may be
    continued or extended by later commands): rows, datasets and horizons are united, and every
    invocation's overrides and machine are kept."""
    path = out / CONFIG_FILE
    config = json.loads(path.read_text()) if path.is_file() else {}
    row_defs = {r["name"]: r for r in config.get("rows", [])}
    row_defs.update({r.name: {"name": r.name, "base": r.base, "flags": list(r.flags)} for r in rows})
    config.update({
        "data": list(dict.fromkeys([*config.get("data", []), *args.data])),
        "pred_lens": sorted({*config.get("pred_lens", []), *args.pred_lens}),
        "rows": list(row_defs.values()),
        "reference": str(Path(args.reference).resolve()) if args.reference else config.get("reference"),
    })
    config.setdefault("invocations", []).append({
        "command": "python -m compare " + " ".join(shlex.quote(a) for a in argv),
        "epochs": args.epochs,
        "patience": args.patience,
        "extra": list(args.extra_flags),
        "inverse": args.inverse,
        "root": args.root,
        "machine": machine_info(),
        "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
    })
    path.write_text(json.dumps(config, indent=2) + "\n")


def main(argv: list[str] | None = None, book: RecipeBook = RECIPES) -> int:
    """Run the comparison; 0 when every run finished, 1 when some failed, 2 on a usage error.

    book: the recipe table (tests pass a small one)."""
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stdout, force=True)
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    try:
        if args.scripts is not None:
            raise UserInputError("--scripts is gone: recipes come from compare/recipes.py (scripts/ is generated "
                                 "from it); add a row there or use --variant NAME=BASE:FLAGS")
        if args.jobs < 1:
            raise UserInputError(f"--jobs {args.jobs}: use 1 or more")
        args.extra_flags = shlex.split(args.extra)
        if args.reference and not Path(args.reference).is_file():
            raise UserInputError(f"--reference {args.reference} does not exist")
        args.data = [book.dataset(name).name for name in args.data]
        rows = _rows(args, book)
        plan = plan_runs(args, rows, book)
    except UserInputError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2

    out = Path(args.out)
    runs_dir = out / RUNS_DIR
    done = _finished_settings(runs_dir)
    todo = [r for r in plan if r.error is None and not set(r.settings) <= done]
    skipped = [r for r in plan if r.error is None and set(r.settings) <= done]
    broken = [r for r in plan if r.error is not None]
    logger.info("comparison: %d runs planned, %d already finished, %d to run, %d cannot run",
                len(plan), len(skipped), len(todo), len(broken))
    _warn_changed_recipes(runs_dir, skipped)
    for run in broken:
        logger.info("  cannot run %s: %s", run.label, run.error)
    if args.dry_run:
        for run in plan:
            if run.error is None:
                state = "skip" if run in skipped else "run "
                logger.info("%s %s\n     python -u run.py %s", state, run.label, shlex.join(run.argv))
        return 1 if broken else 0

    runs_dir.mkdir(parents=True, exist_ok=True)
    # Run artefacts (checkpoints, predictions) are large; only the report files are meant for git.
    (runs_dir / ".gitignore").write_text("*\n")
    _write_config(out, args, argv, rows)
    for run in broken:
        _append_manifest(runs_dir, {"row": run.row.name, "dataset": run.dataset, "pred_len": run.pred_len,
                                    "status": "failed", "error": run.error, "settings": [], "argv": [],
                                    "seconds": 0.0, "log": None, "time": time.strftime("%Y-%m-%dT%H:%M:%S")})

    failures = [(r, r.error) for r in broken]
    durations: list[float] = []
    lock = threading.Lock()
    threads = max(1, (os.cpu_count() or 1) // args.jobs) if args.jobs > 1 else None

    def attempt(k: int, run: PlannedRun) -> None:
        with lock:
            eta = "ETA ?"
            if durations:
                remaining = (len(todo) - k + 1) / args.jobs
                eta = f"ETA {_duration(sum(durations) / len(durations) * remaining)}"
            logger.info("[%d/%d] %s  (%s)", k, len(todo), run.label, eta)
        start = time.time()
        code, error_line, log_path = _execute(run, runs_dir, args.run_timeout, threads)
        seconds = time.time() - start
        ok = code == 0 and set(run.settings) <= _finished_settings(runs_dir)
        error = None if ok else (error_line or f"run.py exited with code {code}")
        _append_manifest(runs_dir, {"row": run.row.name, "dataset": run.dataset, "pred_len": run.pred_len,
                                    "status": "ok" if ok else "failed", "error": error, "settings": run.settings,
                                    "argv": run.argv, "seconds": round(seconds, 3),
                                    "log": str(log_path.relative_to(out)), "script": run.recipe.script,
                                    "time": time.strftime("%Y-%m-%dT%H:%M:%S")})
        with lock:
            durations.append(seconds)
            if ok:
                logger.info("      done in %s: %s: %s", _duration(seconds), run.label,
                            _result_line(runs_dir, run.settings))
            else:
                logger.info("      FAILED after %s: %s: %s (log: %s)", _duration(seconds), run.label, error,
                            log_path)
                failures.append((run, error))

    interrupted = False
    try:
        if args.jobs == 1:
            for k, run in enumerate(todo, start=1):
                attempt(k, run)
        else:
            with ThreadPoolExecutor(max_workers=args.jobs) as pool:
                for future in [pool.submit(attempt, k, run) for k, run in enumerate(todo, start=1)]:
                    future.result()
    except KeyboardInterrupt:
        logger.info("interrupted: rerun the same command to continue (finished runs are kept)")
        interrupted = True

    logger.info("summary: %d ran (%d failed), %d skipped as finished, %d could not start; %s of run time",
                len(durations), len(failures) - len(broken), len(skipped), len(broken), _duration(sum(durations)))
    for run, error in failures:
        logger.info("  FAILED %s: %s", run.label, error)
    if interrupted:
        return 130
    if not args.no_report:
        try:
            paths = write_report(out, reference=args.reference, timing=not args.no_timing,
                                 device=args.efficiency_device)
        except UserInputError as err:
            print(f"error: {err}", file=sys.stderr)
            return 1
        logger.info("report: %s", ", ".join(str(p) for p in paths))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
