"""The text of the comparison tables: numbers as printed, the grid of a table in its wide or tall layout,
the sections of the runs without a result, and the long-form `table.csv`.

Wide: a line per (dataset, axis point) and a column per (model, metric), like the CAPS paper's Table 1.
Tall, the transpose: a line per model, chosen from `TALL_FROM` models on (layout "auto"), where a wide line
would be unreadable.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from compare.ranking import DECIMALS
from compare.run_args import parse_run_args
from utils.errors import UserInputError

__all__ = [
    "LAYOUTS",
    "TALL_FROM",
    "GridLine",
    "format_p",
    "format_relative",
    "format_value",
    "is_tall",
    "markdown_grid",
    "percent_text",
    "run_status_sections",
    "write_long_csv",
]

LAYOUTS = ("auto", "wide", "tall")  # of the accuracy table, see markdown_grid
TALL_FROM = 9  # models from which layout "auto" puts a model per line: a wide line of 9+ models is unreadable


def format_value(value: float | None, mark: str = "", std: float | None = None, n: int | None = None) -> str:
    """A table number: `mean ± std` when std is given, `(n=k)` when n is given, then the mark."""
    if value is None:
        return "—"
    text = f"{value:.{DECIMALS}f}"
    if std is not None:
        text += f" ± {std:.{DECIMALS}f}"
    if n is not None:
        text += f" (n={n})"
    return {"best": f"**{text}**", "second": f"_{text}_", "tied": f"≈{text}"}.get(mark, text)


def format_p(value: float | None) -> str:
    """A p-value at 3 significant digits; — when there is none."""
    return "—" if value is None or math.isnan(value) else f"{value:.3g}"


def format_relative(value: float | None) -> str:
    """A relative difference (0.012) as a signed percentage (+1.2%); — when there is none."""
    return "—" if value is None or math.isnan(value) else f"{100.0 * value:+.1f}%"


def percent_text(ours: float | None, ref: float | None) -> str:
    """(ours − ref) / ref as a signed percentage; — when either is missing or ref is 0."""
    if ours is None or ref is None or ref == 0:
        return "—"
    return f"{100.0 * (ours - ref) / ref:+.1f}%"


def is_tall(layout: str, rows: Sequence[str]) -> bool:
    """Whether the accuracy table puts a model per line: layout "tall", or "auto" with TALL_FROM+ rows."""
    if layout not in LAYOUTS:
        raise UserInputError(f"table layout {layout!r} is not one of {', '.join(LAYOUTS)}: pass one of those")
    return layout == "tall" or (layout == "auto" and len(rows) >= TALL_FROM)


@dataclass
class GridLine:
    """One (dataset, horizon) line of an accuracy table: its label cells and `cells[row][metric]` texts."""

    label: tuple[str, ...]
    cells: list[list[str]]


def markdown_grid(label_heads: Sequence[str], rows: Sequence[str], metric_labels: Sequence[str],
                  lines: Sequence[GridLine], summaries: Sequence[tuple[str, list[list[str]]]], tall: bool
                  ) -> list[str]:
    """Markdown lines of a table of `lines[k].cells[row][metric]` plus per-row summaries (name,
    `cells[row][metric]`, e.g. the average rank).

    Wide: a line per GridLine (its label in the `label_heads` columns) with a column per (row, metric), then a
    line per summary. Tall, the transpose: a line per row with a column per (GridLine, metric), then a column
    per (summary, metric)."""
    if not tall:
        md = ["| " + " | ".join([*label_heads, *(f"{r} {m}" for r in rows for m in metric_labels)]) + " |",
              "|" + "---|" * len(label_heads) + "---:|" * (len(rows) * len(metric_labels))]
        md += ["| " + " | ".join([*line.label, *(c for per_row in line.cells for c in per_row)]) + " |"
               for line in lines]
        md += [f"| {name} | " + "| " * (len(label_heads) - 1) + " | ".join(c for per_row in cells for c in per_row)
               + " |" for name, cells in summaries]
        return md
    heads = [f"{' '.join(line.label)} {m}" for line in lines for m in metric_labels]
    heads += [f"{name} {m}" for name, _ in summaries for m in metric_labels]
    md = ["| " + " | ".join(["Model", *heads]) + " |", "|---|" + "---:|" * len(heads)]
    for i, row in enumerate(rows):
        cells = [c for line in lines for c in line.cells[i]] + [c for _, per_row in summaries for c in per_row[i]]
        md.append("| " + " | ".join([row, *cells]) + " |")
    return md


def _escape(text: object) -> str:
    """`text` as one markdown table cell."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def _train_epochs(argv: Sequence[str] | None) -> int | None:
    try:
        return int(parse_run_args(argv).train_epochs) if argv else None
    except UserInputError:
        return None


def _best_so_far(curve: Sequence[dict]) -> str:
    """'<validation> (epoch e) | <test>' at the best validation epoch of `curve` so far: the highest
    validation accuracy where the task early-stops on it (classification), else the lowest validation loss."""
    if not curve:
        return "— | —"
    if "vali_accuracy" in curve[0]:
        best = max(curve, key=lambda e: e["vali_accuracy"])
        return f"accuracy {best['vali_accuracy']:.4f} (epoch {best['epoch']}) | accuracy {best['test_accuracy']:.4f}"
    best = min(curve, key=lambda e: e["vali"])
    return f"{best['vali']:.4f} (epoch {best['epoch']}) | {best['test']:.4f}"


def _unfinished_lines(entry: dict, where: str) -> list[str]:
    """The *Unfinished runs* lines of one interrupted manifest entry (one per setting with progress)."""
    epochs = _train_epochs(entry.get("argv"))
    of = f" of {epochs}" if epochs else ""
    progress = entry.get("progress")
    if not progress:
        note = "no last.pth" if progress == {} else "not recorded (runner older than 2026-11-28)"
        return [f"{where} {note} | — | — | — | {entry.get('log') or '—'} |"]
    lines = []
    for setting in entry.get("settings") or []:
        if setting not in progress:
            continue
        state = progress[setting]
        lines.append(f"{where} epoch {state['epoch']}{of}, batch {state['batch']} | "
                     f"{len(state['curve'])} | {_best_so_far(state['curve'])} | {entry.get('log') or '—'} |")
    return lines


def run_status_sections(failed: Sequence[dict], unfinished: Sequence[dict], axis_column: str = "H",
                        axis_field: str = "pred_len") -> list[str]:
    """Markdown sections for the runs without a result: *Failed runs* (reason, log) and *Unfinished runs*
    (latest attempt interrupted; where the runner read its last.pth: the epoch it stopped in, the epochs
    finished and, at the best validation epoch so far, the validation and test losses, which the finished
    run reports unless a later epoch validates better). `axis_field` names the manifest field shown under
    `axis_column`."""
    md: list[str] = []

    def where(entry: dict) -> str:
        seed = f" (seed {entry['seed']})" if entry.get("seed") is not None else ""
        return f"| {entry['row']} | {entry['dataset']} | {entry.get(axis_field)}{seed} |"

    if failed:
        md += ["## Failed runs", "", f"| Model | Dataset | {axis_column} | Reason | Log |", "|---|---|---|---|---|"]
        for entry in failed:
            md.append(f"{where(entry)} {_escape(entry.get('error') or 'no result recorded')} | "
                      f"{entry.get('log') or '—'} |")
        md.append("")
    if unfinished:
        md += ["## Unfinished runs", "",
               "Stopped by a time budget or a signal; the same command resumes them from `last.pth` while `runs/` "
               "survives, else restarts them. The test loss at the best validation epoch so far is not a result: "
               "it is what the finished run reports only if no later epoch validates better.", "",
               f"| Model | Dataset | {axis_column} | Stopped in | Epochs finished | Best validation so far | "
               "Test loss there | Log |", "|---|---|---|---|---:|---:|---:|---|"]
        for entry in unfinished:
            md += _unfinished_lines(entry, where(entry))
        md.append("")
    return md


def write_long_csv(path: Path, records: Sequence[dict], default_fields: Sequence[str]) -> Path:
    """`records` as a CSV with a column per key (first-seen order; `default_fields` when there is no record)
    and "" for a missing value."""
    fields = list(dict.fromkeys(k for rec in records for k in rec)) or list(default_fields)
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        for rec in records:
            writer.writerow({k: "" if rec.get(k) is None else rec[k] for k in fields})
    return path
