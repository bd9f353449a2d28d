"""Extra seeds from other comparison folders, counted in one report (`python -m compare.report --pool DIR ...`).

A comparison's first seed often lives in one folder and its extra seeds in another (a `--seeds` run added
later, e.g. `docs/results/paper_recipe` and `paper_recipe_seeds`). Pooling lets the first folder's report show
mean ± sd over all of them. Only seeds of cells the report already has are pooled, and only when the pooled
run's run.py flags equal those of the report's run of that cell apart from `--seed` and `--model_id` (which
`--seeds` tags); anything else is a one-line error, never a silent mix of recipes. The folders are kept in
`compare.json` (`pool`), so every later report of the folder, the runner's included, pools the same ones.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from compare.grid.records import CONFIG_FILE, MANIFEST_FILE, RESULTS_JSONL, RunResult, load_runs, records_dir
from compare.grid.run_args import parse_run_args
from exp.run_config import differing_flags, run_config
from utils.errors import UserInputError
from utils.record_paths import REPO_ROOT, from_record
from utils.tools import atomic_write_text

__all__ = ["POOL_KEY", "Pooled", "pool_folders", "pool_note", "pool_runs", "remember_pool"]

#: the key of compare.json that lists the pooled folders (paths as records keep them)
POOL_KEY = "pool"
#: flags that may differ between a run and a pooled seed of it: the seed itself and the name `--seeds` tags
SEED_FLAGS = frozenset({"seed", "model_id"})


@dataclass
class Pooled:
    """What pooling added: per folder (as recorded) its runs taken and its runs left out with the reason."""

    taken: dict[str, list[RunResult]] = field(default_factory=dict)
    left_out: dict[str, list[str]] = field(default_factory=dict)


def pool_folders(out: Path, given: Sequence[str] | None, config: dict) -> list[str]:
    """The folders to pool, as records keep them: `given` (the command's --pool; [] stops pooling) when not
    None, else the folders compare.json remembers. Each must be an existing folder other than `out`."""
    # Relative to the repository, as records keep paths, and read back by `from_record` (also outside it: ../..).
    folders = ([os.path.relpath(Path(f).resolve(), REPO_ROOT.resolve()) for f in given] if given is not None
               else list(config.get(POOL_KEY, [])))
    for folder in folders:
        path = from_record(folder)
        if not path.is_dir():
            raise UserInputError(f"--pool {folder}: no such folder; name a comparison folder (it holds "
                                 f"{RESULTS_JSONL} and {MANIFEST_FILE})")
        if path.resolve() == out.resolve():
            raise UserInputError(f"--pool {folder}: that is the report's own folder; pool other folders only")
    if len(set(folders)) != len(folders):
        raise UserInputError(f"--pool names a folder twice ({', '.join(folders)}): give each once")
    return folders


def remember_pool(out: Path, folders: Sequence[str]) -> None:
    """Keep `folders` in `out/compare.json` (key `pool`; removed when empty)."""
    path = out / CONFIG_FILE
    config = json.loads(path.read_text()) if path.is_file() else {}
    if list(config.get(POOL_KEY, [])) == list(folders):
        return
    if folders:
        config[POOL_KEY] = list(folders)
    else:
        config.pop(POOL_KEY, None)
    atomic_write_text(path, json.dumps(config, indent=2) + "\n")


def _flags(run: RunResult, where: str) -> dict:
    """run.py's configuration of `run` (every flag after defaults), from its manifest argv."""
    if not run.argv:
        raise UserInputError(f"{where}: {run.row} {run.dataset} H={run.pred_len} has no run.py flags in its "
                             f"{MANIFEST_FILE}; only runs of the comparison runner can be pooled")
    return run_config(parse_run_args(run.argv))


def pool_runs(runs: list[RunResult], folders: Sequence[str], report_dir: Path) -> tuple[list[RunResult], Pooled]:
    """`runs` plus the finished runs of `folders` that are further seeds of their cells (module docstring).

    A pooled run whose cell `runs` lacks is left out (listed in the returned `Pooled`); one whose flags differ
    from the cell's run apart from SEED_FLAGS, or whose seed the cell already has, raises UserInputError."""
    pooled = Pooled()
    merged = list(runs)
    by_cell: dict[tuple[str, str, int], RunResult] = {}
    for run in runs:
        by_cell.setdefault((run.row, run.dataset, run.pred_len), run)
    seeds = {(r.row, r.dataset, r.pred_len, r.seed) for r in runs}
    for folder in folders:
        found, failed = load_runs(records_dir(from_record(folder)))
        if not found:
            raise UserInputError(f"--pool {folder}: no finished runs there; pool a folder with finished runs")
        taken, left = pooled.taken.setdefault(folder, []), pooled.left_out.setdefault(folder, [])
        # Failed and stale runs are never results; the note names them so that a missing seed is explained.
        left += [f"{e.get('row')} {e.get('dataset')} H={e.get('pred_len')} seed {e.get('seed')} ({e.get('status')})"
                 for e in failed]
        for run in found:
            name = f"{run.row} {run.dataset} H={run.pred_len} seed {run.seed}"
            mine = by_cell.get((run.row, run.dataset, run.pred_len))
            if mine is None:
                left.append(f"{name} (no run of that cell here)")
                continue
            if run.seed is None or (run.row, run.dataset, run.pred_len, run.seed) in seeds:
                raise UserInputError(f"--pool {folder}: {name} is already in the report (same seed); pool only "
                                     f"other seeds of the same cells")
            differ = sorted(set(differing_flags(_flags(mine, str(report_dir)), _flags(run, folder))) - SEED_FLAGS)
            if differ:
                raise UserInputError(f"--pool {folder}: {name} differs from the report's run of that cell in "
                                     f"--{', --'.join(differ)}; pool only seeds of the same recipe")
            seeds.add((run.row, run.dataset, run.pred_len, run.seed))
            merged.append(run)
            taken.append(run)
    return merged, pooled


def pool_note(pooled: Pooled) -> list[str]:
    """The report's lines on what was pooled from where ([] when nothing was)."""
    if not pooled.taken:
        return []
    lines = ["## Seeds pooled from other folders", "",
             "These runs of other comparison folders are further seeds of this folder's cells with the same "
             "run.py flags apart from `--seed` (`python -m compare.report --pool`; their commands are in those "
             "folders' `table.md`):", ""]
    for folder, runs in pooled.taken.items():
        listed = ", ".join(f"{r.row} {r.dataset} H={r.pred_len} seed {r.seed}" for r in runs) or "none"
        lines.append(f"- `{folder}`: {listed}.")
        if pooled.left_out.get(folder):
            lines.append(f"  Left out: {'; '.join(pooled.left_out[folder])}.")
    return lines
