"""Comparison report from result files only: `python -m compare.report --out DIR`.

Reads what `compare.runner` and `run.py` wrote under `DIR/runs/` (`results.jsonl`, the runner's
`compare_runs.jsonl` naming the model row of each setting, `results/<setting>/{pred,true}.npy`) and
`DIR/compare.json` (the invocation), and writes into DIR:

- `table.md` / `table.csv`: MSE and MAE per dataset x horizon plus the horizon average, like the CAPS
  paper's Table 1 (**bold** best, _underline_ second best per row and metric, average rank and
  first-place count per model), and per-model comparisons with reference numbers from a CSV
  (`dataset,pred_len,model,mse,mae`) with the relative difference; `table.csv` holds the same in long
  form (one line per dataset, horizon or `avg`, and model, with ranks, reference and run statistics);
- `mse_by_horizon.png`: MSE against horizon, one panel per dataset;
- `forecast_<data>_<H>.png`: ground truth and every model's forecast for the same test window;
- `efficiency.md`: parameters, forward FLOPs, train-step time and peak memory (`compare.efficiency`).

Ties are judged at the printed precision (3 decimals), so equal-looking numbers share a mark and a rank.
"""

from __future__ import annotations

import argparse
import csv
import json
import logging
import math
import os
import platform
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from compare.recipes import RECIPES, name_key
from compare.run_args import parse_run_args
from utils.errors import UserInputError

__all__ = [
    "CONFIG_FILE",
    "MANIFEST_FILE",
    "RUNS_DIR",
    "Cell",
    "RunResult",
    "accuracy_cells",
    "load_reference",
    "load_runs",
    "machine_info",
    "main",
    "mark_best",
    "write_report",
]

logger = logging.getLogger(__name__)

RUNS_DIR = "runs"
MANIFEST_FILE = "compare_runs.jsonl"
CONFIG_FILE = "compare.json"
RESULTS_JSONL = "results.jsonl"
DECIMALS = 3
AVG = "Avg"


@dataclass
class RunResult:
    """One finished (row, dataset, horizon): metrics averaged over its itr settings."""

    row: str
    dataset: str
    pred_len: int
    settings: list[str]
    mse: float
    mae: float
    argv: list[str] | None = None
    epochs_run: int | None = None
    best_epoch: int | None = None
    train_seconds: float | None = None
    params: int | None = None
    extra: dict = field(default_factory=dict)


@dataclass
class Cell:
    """One table cell: a value (None = missing) and its mark ('best', 'second' or '')."""

    value: float | None
    mark: str = ""


def _read_jsonl(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    records = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            # A run killed mid-write leaves a partial last line; the finished records are still valid.
            logger.warning("%s:%d is not valid JSON; ignoring that line", path, number)
    return records


def machine_info() -> dict:
    """Where measurements were taken: OS, CPU, threads, torch version and GPU name."""
    info = {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "python": platform.python_version(),
    }
    if torch.cuda.is_available():
        info["gpu"] = torch.cuda.get_device_name(0)
    return info


def _mean(values: Sequence[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return float(np.mean(kept)) if kept and len(kept) == len(values) else None


def load_runs(runs_dir: Path) -> tuple[list[RunResult], list[dict]]:
    """Finished runs (one per row x dataset x horizon, the latest attempt) and failed attempts; a run whose
    latest attempt was `interrupted` (time budget) is in neither.

    Without a runner manifest (run.py used by hand), every results.jsonl record is its own run, with
    the model name as row and the first `model_id` token as dataset.
    """
    results = {r["setting"]: r for r in _read_jsonl(runs_dir / RESULTS_JSONL)}
    manifest = _read_jsonl(runs_dir / MANIFEST_FILE)
    if not manifest:
        return [RunResult(row=r["model"], dataset=str(r["model_id"]).split("_")[0], pred_len=int(r["pred_len"]),
                          settings=[s], mse=float(r["mse"]), mae=float(r["mae"]), epochs_run=r.get("epochs_run"),
                          best_epoch=r.get("best_epoch"), train_seconds=r.get("train_seconds"),
                          params=r.get("params")) for s, r in results.items()], []
    latest: dict[tuple[str, str, int], dict] = {}
    for entry in manifest:
        latest[(entry["row"], entry["dataset"], int(entry["pred_len"]))] = entry
    runs, failed = [], []
    for (row, dataset, pred_len), entry in latest.items():
        found = [results.get(s) for s in entry.get("settings") or []]
        if entry["status"] == "interrupted":
            # Stopped by the runner's time budget: unfinished (shown as —), not failed; resumed next time.
            continue
        if entry["status"] != "ok" or not found or None in found:
            failed.append(entry)
            continue
        runs.append(RunResult(
            row=row, dataset=dataset, pred_len=pred_len, settings=list(entry["settings"]),
            mse=float(np.mean([r["mse"] for r in found])), mae=float(np.mean([r["mae"] for r in found])),
            argv=entry.get("argv"), epochs_run=found[0].get("epochs_run"), best_epoch=found[0].get("best_epoch"),
            train_seconds=_mean([r.get("train_seconds") for r in found]), params=found[0].get("params"),
            extra={"seconds": entry.get("seconds")},
        ))
    return runs, failed


def load_reference(path: str | Path) -> dict[tuple[str, str, int | str], tuple[float, float]]:
    """Reference numbers keyed by (normalised dataset, normalised model, pred_len or 'Avg') -> (mse, mae).

    The CSV has columns dataset,pred_len,model,mse,mae (`variant` is accepted for `model`, as in the
    paper's ablation tables); a pred_len of `Avg` is the reference's own horizon average."""
    path = Path(path)
    if not path.is_file():
        raise UserInputError(f"reference file {path} does not exist; pass a CSV with columns "
                             "dataset,pred_len,model,mse,mae")
    table: dict[tuple[str, str, int | str], tuple[float, float]] = {}
    with path.open(newline="") as f:
        reader = csv.DictReader(f)
        fields = set(reader.fieldnames or [])
        name_col = "model" if "model" in fields else "variant"
        missing = {"dataset", "pred_len", name_col, "mse", "mae"} - fields
        if missing:
            raise UserInputError(f"reference file {path} lacks columns {sorted(missing)}; "
                                 "expected dataset,pred_len,model,mse,mae")
        for number, rec in enumerate(reader, start=2):
            horizon_text = rec["pred_len"].strip()
            try:
                horizon: int | str = AVG if horizon_text.lower() == "avg" else int(horizon_text)
                values = (float(rec["mse"]), float(rec["mae"]))
            except ValueError:
                raise UserInputError(f"{path}:{number}: pred_len must be an integer or Avg and mse/mae numbers, "
                                     f"got {horizon_text!r}, {rec['mse']!r}, {rec['mae']!r}") from None
            for key in RECIPES.dataset_keys(rec["dataset"]):
                table[(key, name_key(rec[name_col]), horizon)] = values
    return table


def _reference_for(reference: dict, dataset: str, row: str, pred_len: int) -> tuple[float, float] | None:
    for key in RECIPES.dataset_keys(dataset):
        hit = reference.get((key, name_key(row), pred_len))
        if hit is not None:
            return hit
    return None


def mark_best(values: Sequence[float | None]) -> list[Cell]:
    """Cells with 'best' on the smallest value and 'second' on the next distinct one, judged at
    the printed precision (ties share a mark)."""
    rounded = [None if v is None else round(v, DECIMALS) for v in values]
    distinct = sorted({v for v in rounded if v is not None})
    marks = {distinct[0]: "best"} if distinct else {}
    if len(distinct) > 1:
        marks[distinct[1]] = "second"
    return [Cell(v, marks.get(r, "") if r is not None else "") for v, r in zip(values, rounded, strict=True)]


def _competition_ranks(values: Sequence[float | None]) -> list[int | None]:
    """Rank 1 = smallest at the printed precision; ties share the lowest rank (1, 1, 3)."""
    rounded = [None if v is None else round(v, DECIMALS) for v in values]
    present = [v for v in rounded if v is not None]
    return [None if v is None else 1 + sum(u < v for u in present) for v in rounded]


def _orders(runs: list[RunResult], config: dict, failed: Sequence[dict] = ()
            ) -> tuple[list[str], list[str], list[int]]:
    """Row, dataset and horizon order: the runner's order first, then anything else found."""
    def ordered(preferred: Sequence, seen: Sequence) -> list:
        out = [x for x in preferred if x in seen]
        return out + [x for x in dict.fromkeys(seen) if x not in out]

    rows = ordered([r["name"] for r in config.get("rows", [])], [r.row for r in runs] + [f["row"] for f in failed])
    datasets = ordered(config.get("data", []), [r.dataset for r in runs])
    horizons = sorted({r.pred_len for r in runs})
    return rows, datasets, horizons


def accuracy_cells(runs: list[RunResult], rows: list[str], datasets: list[str]
                   ) -> dict[tuple[str, int | str, str], list[float | None]]:
    """(dataset, horizon or 'Avg', metric) -> one value per row (None when missing).

    The horizon average of a model is taken only when it has every horizon the dataset has, so
    a failed run never makes an average look better."""
    by_key = {(r.row, r.dataset, r.pred_len): r for r in runs}
    cells: dict[tuple[str, int | str, str], list[float | None]] = {}
    for dataset in datasets:
        horizons = sorted({r.pred_len for r in runs if r.dataset == dataset})
        for metric in ("mse", "mae"):
            for h in horizons:
                cells[(dataset, h, metric)] = [getattr(by_key[(row, dataset, h)], metric)
                                               if (row, dataset, h) in by_key else None for row in rows]
            cells[(dataset, AVG, metric)] = [
                _mean([cells[(dataset, h, metric)][i] for h in horizons]) for i in range(len(rows))]
    return cells


def _fmt(value: float | None, mark: str = "") -> str:
    if value is None:
        return "—"
    text = f"{value:.{DECIMALS}f}"
    return {"best": f"**{text}**", "second": f"_{text}_"}.get(mark, text)


def _pct(ours: float | None, ref: float | None) -> str:
    if ours is None or ref is None or ref == 0:
        return "—"
    return f"{100.0 * (ours - ref) / ref:+.1f}%"


def _summary_stats(cells: dict, rows: list[str], datasets: list[str]) -> dict[str, dict[str, tuple]]:
    """Per metric: (average rank of the horizon average over datasets, number of datasets ranked,
    first-place count over every horizon and average row)."""
    stats: dict[str, dict[str, tuple]] = {}
    for metric in ("mse", "mae"):
        rank_lists: list[list[int | None]] = []
        firsts = [0] * len(rows)
        for dataset in datasets:
            rank_lists.append(_competition_ranks(cells[(dataset, AVG, metric)]))
            for (d, _h, m), values in cells.items():
                if d == dataset and m == metric:
                    for i, cell in enumerate(mark_best(values)):
                        firsts[i] += cell.mark == "best"
        per_row = {}
        for i, row in enumerate(rows):
            ranks = [r[i] for r in rank_lists if r[i] is not None]
            per_row[row] = (float(np.mean(ranks)) if ranks else None, len(ranks), firsts[i])
        stats[metric] = per_row
    return stats


def _conditions(config: dict, runs: list[RunResult], failed: list[dict]) -> list[str]:
    """Markdown lines stating how the numbers were produced (commands, overrides, machine, time)."""
    lines = []
    invocations = config.get("invocations", [])
    for inv in invocations:
        overrides = []
        if inv.get("epochs") is not None:
            overrides.append(f"`--train_epochs {inv['epochs']}` (scripts' epochs overridden)")
        if inv.get("patience") is not None:
            overrides.append(f"`--patience {inv['patience']}`")
        if inv.get("extra"):
            overrides.append(f"`{' '.join(inv['extra'])}`")
        lines.append(f"Runner: `{inv['command']}`; overrides for the runs it started: "
                     + (", ".join(overrides) if overrides else "none") + ".")
    if invocations:
        lines.append("Each model uses its recipe from `compare/recipes.py` (the settings of its `scripts/`: same "
                     "data, splits, seed and evaluation) plus the overrides of the invocation that ran it; `table.csv` has the epochs "
                     "each run trained.")
    for row in config.get("rows", []):
        if row.get("flags"):
            lines.append(f"Variant **{row['name']}** = {row['base']} recipe + `{' '.join(row['flags'])}`.")
    machines = {json.dumps(inv.get("machine"), sort_keys=True): inv.get("machine") for inv in invocations}
    for machine in machines.values():
        if machine:
            lines.append(f"Runs executed on {machine.get('processor')} ({machine.get('cpu_count')} CPUs, "
                         f"torch {machine.get('torch')}, {machine.get('torch_threads')} torch thread(s)"
                         + (f", GPU {machine['gpu']}" if machine.get("gpu") else "") + ").")
    seconds = [r.extra.get("seconds") for r in runs if r.extra.get("seconds") is not None]
    if seconds:
        lines.append(f"{len(runs)} finished runs, {sum(seconds) / 3600:.2f} h of run wall time in total.")
    epochs = sorted({r.epochs_run for r in runs if r.epochs_run is not None})
    if epochs:
        lines.append(f"Epochs actually run (early stopping included): {', '.join(map(str, epochs))}.")
    if failed:
        lines.append(f"{len(failed)} runs failed and are shown as —; see *Failed runs* below.")
    return lines


def _units(runs: list[RunResult], config: dict) -> str:
    inverse = any(inv.get("inverse") for inv in config.get("invocations", [])) or any(
        "--inverse" in (r.argv or []) for r in runs)
    return "original units (--inverse)" if inverse else "standardised"


def write_tables(out: Path, runs: list[RunResult], failed: list[dict], config: dict,
                 reference: dict | None, reference_name: str = "") -> tuple[Path, Path]:
    """Write `table.md` and `table.csv` into `out`; returns their paths."""
    rows, datasets, _ = _orders(runs, config, failed)
    cells = accuracy_cells(runs, rows, datasets)
    stats = _summary_stats(cells, rows, datasets)
    units = _units(runs, config)

    md = [f"# Forecasting accuracy ({units} MSE / MAE, lower is better)", ""]
    md += _conditions(config, runs, failed)
    md += ["", "| Dataset | H | " + " | ".join(f"{r} MSE | {r} MAE" for r in rows) + " |",
           "|---|---|" + "---:|---:|" * len(rows)]
    for dataset in datasets:
        horizons = [h for (d, h, m) in cells if d == dataset and m == "mse"]
        for h in horizons:
            mse_cells, mae_cells = mark_best(cells[(dataset, h, "mse")]), mark_best(cells[(dataset, h, "mae")])
            values = " | ".join(f"{_fmt(a.value, a.mark)} | {_fmt(b.value, b.mark)}"
                                for a, b in zip(mse_cells, mae_cells, strict=True))
            md.append(f"| {dataset} | {h} | {values} |")
    rank_cells = " | ".join(
        " | ".join("—" if stats[m][r][0] is None else f"{stats[m][r][0]:.1f}" for m in ("mse", "mae")) for r in rows)
    first_cells = " | ".join(" | ".join(str(stats[m][r][2]) for m in ("mse", "mae")) for r in rows)
    md += [f"| Avg rank | | {rank_cells} |", f"| 1st count | | {first_cells} |", ""]
    md += ["**Bold**: best, _underline_: second best in the row (ties at 3 decimals share the mark). "
           "*Avg*: mean over the dataset's horizons (only when the model has all of them). "
           "*Avg rank*: mean over datasets of the model's rank on the horizon-averaged metric (the paper's "
           "Table 2 rule; ties share the lowest rank). *1st count*: rows (horizons and Avg) where the model "
           "is best.", ""]

    horizons_of = {d: sorted({r.pred_len for r in runs if r.dataset == d}) for d in datasets}
    csv_rows: list[dict] = []
    by_key = {(r.row, r.dataset, r.pred_len): r for r in runs}
    for (dataset, h, metric), values in cells.items():
        if metric != "mse":
            continue
        mse_ranks = _competition_ranks(values)
        mae_values = cells[(dataset, h, "mae")]
        mae_ranks = _competition_ranks(mae_values)
        for i, row in enumerate(rows):
            ref = _reference_value(reference, dataset, row, h, horizons_of[dataset]) if reference else None
            run = by_key.get((row, dataset, h)) if h != AVG else None
            csv_rows.append({
                "dataset": dataset, "pred_len": h if h != AVG else "avg", "model": row,
                "mse": values[i], "mae": mae_values[i], "mse_rank": mse_ranks[i], "mae_rank": mae_ranks[i],
                "ref_mse": ref[0] if ref else None, "ref_mae": ref[1] if ref else None,
                "mse_diff_pct": _diff(values[i], ref[0] if ref else None),
                "mae_diff_pct": _diff(mae_values[i], ref[1] if ref else None),
                "epochs_run": run.epochs_run if run else None, "best_epoch": run.best_epoch if run else None,
                "train_seconds": run.train_seconds if run else None, "params": run.params if run else None,
                "settings": ";".join(run.settings) if run else None,
            })

    if reference:
        md += [f"## Reference: {reference_name}", "",
               "Δ = (ours − reference) / reference; negative means we measured a lower error.", ""]
        for row in rows:
            lines = []
            for dataset in datasets:
                horizons = [h for (d, h, m) in cells if d == dataset and m == "mse"]
                for h in horizons:
                    ref = _reference_value(reference, dataset, row, h, horizons_of[dataset])
                    if ref is None:
                        continue
                    i = rows.index(row)
                    ours_mse, ours_mae = cells[(dataset, h, "mse")][i], cells[(dataset, h, "mae")][i]
                    lines.append(f"| {dataset} | {h} | {_fmt(ours_mse)} | {ref[0]:.3f} | {_pct(ours_mse, ref[0])} "
                                 f"| {_fmt(ours_mae)} | {ref[1]:.3f} | {_pct(ours_mae, ref[1])} |")
            if lines:
                md += [f"### {row}", "", "| Dataset | H | MSE | ref MSE | Δ MSE | MAE | ref MAE | Δ MAE |",
                       "|---|---|---:|---:|---:|---:|---:|---:|", *lines, ""]
    if failed:
        md += ["## Failed runs", "", "| Model | Dataset | H | Reason | Log |", "|---|---|---|---|---|"]
        for entry in failed:
            reason = str(entry.get("error") or "no result recorded").replace("|", "\\|").replace("\n", " ")
            md.append(f"| {entry['row']} | {entry['dataset']} | {entry['pred_len']} | {reason} | "
                      f"{entry.get('log') or '—'} |")
        md.append("")

    md_path, csv_path = out / "table.md", out / "table.csv"
    md_path.write_text("\n".join(md))
    fields = list(csv_rows[0]) if csv_rows else ["dataset", "pred_len", "model", "mse", "mae"]
    with csv_path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        for rec in csv_rows:
            writer.writerow({k: "" if v is None else v for k, v in rec.items()})
    return md_path, csv_path


def _reference_value(reference: dict | None, dataset: str, row: str, h: int | str,
                     horizons: Sequence[int] = ()) -> tuple[float, float] | None:
    """Reference (mse, mae) at horizon h. For Avg, only when the reference covers exactly our
    `horizons` (an average over other horizons is not comparable): its Avg row, else the mean."""
    if not reference:
        return None
    if h != AVG:
        return _reference_for(reference, dataset, row, int(h))
    keys, model = RECIPES.dataset_keys(dataset), name_key(row)
    by_h = {k[2]: v for k, v in reference.items() if k[0] in keys and k[1] == model}
    numeric = {k: v for k, v in by_h.items() if k != AVG}
    if not numeric or set(numeric) != set(horizons):
        return None
    if AVG in by_h:
        return by_h[AVG]
    return float(np.mean([v[0] for v in numeric.values()])), float(np.mean([v[1] for v in numeric.values()]))


def _diff(ours: float | None, ref: float | None) -> float | None:
    if ours is None or ref is None or ref == 0:
        return None
    return round(100.0 * (ours - ref) / ref, 3)


def _colors(rows: list[str]) -> dict[str, tuple]:
    import matplotlib

    cmap = matplotlib.colormaps["tab10"]
    return {row: cmap(i % 10) for i, row in enumerate(rows)}


def plot_mse_by_horizon(out: Path, runs: list[RunResult], config: dict, reference: dict | None) -> Path:
    """`mse_by_horizon.png`: one panel per dataset, one line per model, reference values as x."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    rows, datasets, _ = _orders(runs, config)
    colors = _colors(rows)
    ncols = min(len(datasets), 3) or 1
    nrows = math.ceil(len(datasets) / ncols) or 1
    fig, axes = plt.subplots(nrows, ncols, figsize=(5.2 * ncols, 4.0 * nrows), squeeze=False)
    for ax in axes.flat[len(datasets):]:
        ax.set_visible(False)
    for ax, dataset in zip(axes.flat, datasets, strict=False):
        horizons = sorted({r.pred_len for r in runs if r.dataset == dataset})
        xs = range(len(horizons))
        for row in rows:
            ys = [next((r.mse for r in runs if (r.row, r.dataset, r.pred_len) == (row, dataset, h)), np.nan)
                  for h in horizons]
            ax.plot(xs, ys, marker="o", color=colors[row], label=row)
            if reference:
                refs = [(_reference_for(reference, dataset, row, h) or (np.nan,))[0] for h in horizons]
                ax.plot(xs, refs, linestyle="none", marker="x", markersize=8, color=colors[row])
        ax.set_xticks(list(xs), [str(h) for h in horizons])
        ax.set_title(dataset)
        ax.set_xlabel("horizon H (steps)")
        ax.set_ylabel(f"test MSE ({_units(runs, config)})")
        ax.grid(alpha=0.3)
    handles = [Line2D([], [], color=colors[r], marker="o", label=r) for r in rows]
    if reference:
        handles.append(Line2D([], [], color="grey", marker="x", linestyle="none", label="reference (same colour)"))
    fig.suptitle("Test MSE by horizon")
    fig.tight_layout()
    # Below the panels, as many columns as the figure is wide (two per panel): never cut off.
    fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), frameon=False,
               ncol=min(len(handles), 2 * ncols))
    path = out / "mse_by_horizon.png"
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return path


def _series_of(true: np.ndarray, channel: int) -> np.ndarray:
    """The test target series of one channel rebuilt from overlapping windows `[N, H, C]`:
    window i covers steps i .. i + H - 1, so s = true[:, 0] followed by the rest of the last window."""
    return np.concatenate([true[:, 0, channel], true[-1, 1:, channel]])  # [N + H - 1]


def plot_forecasts(out: Path, runs: list[RunResult], config: dict, runs_dir: Path,
                   window: int | None = None) -> list[Path]:
    """`forecast_<data>_<H>.png` per dataset and horizon: truth, context and each model's forecast of
    the last channel for the same test window (default: the middle window)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows, datasets, _ = _orders(runs, config)
    colors = _colors(rows)
    units = _units(runs, config)
    paths = []
    for dataset in datasets:
        for h in sorted({r.pred_len for r in runs if r.dataset == dataset}):
            arrays = {}
            for row in rows:
                run = next((r for r in runs if (r.row, r.dataset, r.pred_len) == (row, dataset, h)), None)
                folder = runs_dir / "results" / run.settings[0] if run else None
                if folder is None or not (folder / "pred.npy").is_file():
                    continue
                arrays[row] = (np.load(folder / "pred.npy", mmap_mode="r"), np.load(folder / "true.npy", mmap_mode="r"))
            if not arrays:
                continue
            count = min(p.shape[0] for p, _ in arrays.values())
            index = count // 2 if window is None else min(max(window, 0), count - 1)
            reference_row = next(iter(arrays))
            truth_all = np.asarray(arrays[reference_row][1][: count])
            for row, (_, true) in arrays.items():
                if not np.allclose(np.asarray(true[index, :, -1]), truth_all[index, :, -1], atol=1e-5):
                    logger.warning("%s H=%d: %s's ground truth differs from %s's at window %d; its test "
                                   "windows are not aligned with the others", dataset, h, row, reference_row, index)
            series = _series_of(truth_all, -1)
            context = min(index, max(h, 48))
            fig, ax = plt.subplots(figsize=(10, 4))
            steps = np.arange(-context, h)
            ax.plot(steps, series[index - context : index + h], color="black", linewidth=1.8, label="ground truth")
            ax.axvline(0, color="grey", linestyle="--", linewidth=1)
            for row, (pred, _) in arrays.items():
                forecast = np.asarray(pred[index, :, -1])  # [H]
                window_mse = float(np.mean((forecast - truth_all[index, :, -1]) ** 2))
                ax.plot(np.arange(h), forecast, color=colors[row], linewidth=1.3,
                        label=f"{row} (window MSE {window_mse:.3f})")
            ax.set_title(f"{dataset}, H = {h}: test window {index} of {count}, last channel")
            ax.set_xlabel("time step relative to the forecast start (context left of the dashed line)")
            ax.set_ylabel(f"value ({units})")
            ax.grid(alpha=0.3)
            # Below the axes: a legend inside would hide the curves, and wide labels would be cut off.
            ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), fontsize=8, frameon=False,
                      ncol=min(len(arrays) + 1, 3))
            path = out / f"forecast_{dataset}_{h}.png"
            fig.savefig(path, dpi=120, bbox_inches="tight")
            plt.close(fig)
            paths.append(path)
    return paths


def write_efficiency(out: Path, runs: list[RunResult], config: dict, *, timing: bool = True,
                     steps: int = 3, device: str = "cpu") -> Path:
    """`efficiency.md`: per dataset, each model's parameters and forward FLOPs at every horizon, and
    its train-step time and peak memory at the dataset's shortest horizon (measured here, now)."""
    from compare.efficiency import format_bytes, format_count, measure

    rows, datasets, _ = _orders(runs, config)
    info = machine_info()
    md = ["# Efficiency", "",
          f"Measured by `python -m compare.report` on {info['processor']} ({info['cpu_count']} CPUs, torch "
          f"{info['torch']}, {info['torch_threads']} threads, device {device}). FLOPs: forward pass of one "
          "sample counted by `torch.utils.flop_counter` (matmul/conv/attention only). Train step: forward, "
          "MSE loss, backward and optimiser step at the recipe's batch size on random inputs, median of "
          f"{steps} steps; peak memory = parameters + optimiser state + peak tensors of one step. "
          "*s/epoch*: measured wall time of the actual training runs divided by their epochs.", ""]
    for dataset in datasets:
        horizons = sorted({r.pred_len for r in runs if r.dataset == dataset})
        header = ["Model", *[f"H={h} Params | H={h} FLOPs" for h in horizons],
                  f"Batch | Train step ms (H={horizons[0]}) | Peak memory (H={horizons[0]}) | s/epoch (H={horizons[0]})"]
        lines = []
        shape = None
        for row in rows:
            cols, timed = [], None
            for j, h in enumerate(horizons):
                run = next((r for r in runs if (r.row, r.dataset, r.pred_len) == (row, dataset, h)), None)
                if run is None or not run.argv:
                    cols.append("— | —")
                    continue
                configs = parse_run_args(run.argv)
                shape = shape or f"L = {configs.seq_len}, {configs.enc_in} variates"
                eff = measure(configs, device=device, steps=steps, timing=timing and j == 0, warmup=1)
                cols.append(f"{format_count(eff.params)} | {format_count(eff.flops)}")
                if j == 0:
                    per_epoch = (run.train_seconds / run.epochs_run
                                 if run.train_seconds is not None and run.epochs_run else None)
                    timed = (eff, per_epoch)
            if timed and timed[0].step_ms is not None:
                eff, per_epoch = timed
                tail = (f"{eff.batch_size} | {eff.step_ms:.1f} | {format_bytes(eff.peak_bytes)} | "
                        + ("—" if per_epoch is None else f"{per_epoch:.1f}"))
            else:
                tail = "— | — | — | —"
            lines.append(f"| {row} | {' | '.join(cols)} | {tail} |")
        md += [f"## {dataset} ({shape or 'no recipe recorded'})", "",
               "| " + " | ".join(header) + " |", "|---|" + "---:|" * (2 * len(horizons) + 4), *lines, ""]
    path = out / "efficiency.md"
    path.write_text("\n".join(md))
    return path


def write_report(out: str | Path, *, runs_dir: str | Path | None = None, reference: str | Path | None = None,
                 timing: bool = True, steps: int = 3, window: int | None = None, device: str = "cpu") -> list[Path]:
    """Write every report file into `out` from the result files in `runs_dir` (default `out/runs`)."""
    out = Path(out)
    runs_dir = Path(runs_dir) if runs_dir else out / RUNS_DIR
    config_path = out / CONFIG_FILE
    config = json.loads(config_path.read_text()) if config_path.is_file() else {}
    runs, failed = load_runs(runs_dir)
    if not runs:
        raise UserInputError(f"no finished runs in {runs_dir}: run `python -m compare --out {out} ...` first")
    if reference is None and config.get("reference"):
        reference = config["reference"]
    ref_table = load_reference(reference) if reference else None
    out.mkdir(parents=True, exist_ok=True)
    paths = list(write_tables(out, runs, failed, config, ref_table, Path(reference).name if reference else ""))
    paths.append(plot_mse_by_horizon(out, runs, config, ref_table))
    paths += plot_forecasts(out, runs, config, runs_dir, window)
    paths.append(write_efficiency(out, runs, config, timing=timing, steps=steps, device=device))
    # The run records beside the report (runs/ is git-ignored): committing the report commits them, and the
    # runner restores them in a fresh clone, so a table is completed later instead of rerun.
    for name in (RESULTS_JSONL, MANIFEST_FILE):
        if (runs_dir / name).is_file() and (runs_dir / name).resolve() != (out / name).resolve():
            (out / name).write_text((runs_dir / name).read_text())
            paths.append(out / name)
    return paths


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m compare.report",
                                description="Tables and plots of a comparison from its result files.")
    p.add_argument("--out", required=True, help="comparison folder (holds compare.json and runs/)")
    p.add_argument("--runs", default=None, help="folder with results.jsonl and results/ (default OUT/runs)")
    p.add_argument("--reference", default=None,
                   help="CSV dataset,pred_len,model,mse,mae of reference numbers (default: the runner's)")
    p.add_argument("--window", type=int, default=None, help="test window of the forecast plots (default: middle)")
    p.add_argument("--no-timing", action="store_true", help="efficiency.md without train-step measurements")
    p.add_argument("--steps", type=int, default=3, help="timed train steps per model")
    p.add_argument("--device", default="cpu", help="device for efficiency measurements (cpu, cuda)")
    return p


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stdout, force=True)
    args = build_parser().parse_args(argv)
    try:
        paths = write_report(args.out, runs_dir=args.runs, reference=args.reference, timing=not args.no_timing,
                             steps=args.steps, window=args.window, device=args.device)
    except UserInputError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for path in paths:
        logger.info("wrote %s", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
