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

import pandas as pd

from compare.grid.run_args import parse_run_args
from compare.report.ranking import DECIMALS
from utils.errors import UserInputError
from utils.report_files import write_table

__all__ = [
    "LAYOUTS",
    "TALL_FROM",
    "GridLine",
    "format_p",
    "format_relative",
    "format_value",
    "grid_frame",
    "is_tall",
    "latex_marks_caption",
    "markdown_grid",
    "percent_text",
    "run_status_sections",
    "split_mark",
    "write_grid_latex",
    "write_long_csv",
]

LAYOUTS = ("auto", "wide", "tall")  # of the accuracy table, see markdown_grid
TALL_FROM = 9  # models from which layout "auto" puts a model per line: a wide line of 9+ models is unreadable
# The markdown around a marked cell's text: (before, after) per mark.
_MARKUP = {"best": ("**", "**"), "second": ("_", "_")}


def format_value(value: float | None, mark: str = "", std: float | None = None, n: int | None = None) -> str:
    """A table number: `mean ± std` when std is given, `(n=k)` when n is given, then the mark. A std that would
    print as 0 at DECIMALS shows its first significant digit instead (± 0.0003, not ± 0.000)."""
    if value is None:
        return "—"
    text = f"{value:.{DECIMALS}f}"
    if std is not None:
        shown = DECIMALS if std == 0 or round(std, DECIMALS) != 0 else -math.floor(math.log10(abs(std)))
        text += f" ± {std:.{shown}f}"
    if n is not None:
        text += f" (n={n})"
    if mark in _MARKUP:
        return _MARKUP[mark][0] + text + _MARKUP[mark][1]
    return f"≈{text}" if mark == "tied" else text


def split_mark(text: str) -> tuple[str, str]:
    """A table cell's text without its bold / underline markup and the mark it stood for ("best", "second"
    or ""): the inverse of `format_value`'s markup (≈ stays in the text, it is no style)."""
    for mark, (before, after) in _MARKUP.items():
        if len(text) > len(before) + len(after) and text.startswith(before) and text.endswith(after):
            return text[len(before):-len(after)], mark
    return text, ""


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
    shown = round(100.0 * (ours - ref) / ref, 1)
    return f"{shown + 0.0:+.1f}%"  # + 0.0: a difference that rounds to zero prints +0.0%, never -0.0%


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


def grid_frame(label_heads: Sequence[str], rows: Sequence[str], metric_labels: Sequence[str],
               lines: Sequence[GridLine], summaries: Sequence[tuple[str, list[list[str]]]], tall: bool
               ) -> pd.DataFrame:
    """The cell texts of a table of `lines[k].cells[row][metric]` plus per-row summaries (name,
    `cells[row][metric]`, e.g. the average rank), as a frame with a MultiIndex on both axes.

    Wide: a line per GridLine (index levels `label_heads`) with a column per (row, metric), then a line per
    summary (its name, the other levels empty). Tall, the transpose: a line per row (index "Model") with a
    column per (GridLine label..., metric), then a column per (summary, "", ..., metric)."""
    pad = ("",) * (len(label_heads) - 1)
    labels = [tuple(line.label) for line in lines] + [(name, *pad) for name, _ in summaries]
    per_row = [[c for line in lines for c in line.cells[i]] + [c for _, cells in summaries for c in cells[i]]
               for i in range(len(rows))]  # [row][label x metric]
    if tall:
        columns = pd.MultiIndex.from_tuples([(*label, m) for label in labels for m in metric_labels])
        return pd.DataFrame(per_row, index=pd.Index(list(rows), name="Model"), columns=columns, dtype=object)
    width = len(metric_labels)
    body = [[per_row[i][k * width + j] for i in range(len(rows)) for j in range(width)] for k in range(len(labels))]
    return pd.DataFrame(body, index=pd.MultiIndex.from_tuples(labels, names=list(label_heads)),
                        columns=pd.MultiIndex.from_tuples([(r, m) for r in rows for m in metric_labels]), dtype=object)


def markdown_grid(frame: pd.DataFrame, tall: bool) -> list[str]:
    """Markdown lines of a `grid_frame`: wide, a line per GridLine and summary with a column per (row, metric)
    named "row metric"; tall, a line per row with a column per (label, metric) named "label metric"."""
    heads = [" ".join(str(part) for part in column if part != "") for column in frame.columns]
    texts = frame.to_numpy().tolist()
    if tall:
        md = ["| " + " | ".join(["Model", *heads]) + " |", "|---|" + "---:|" * len(heads)]
        return md + ["| " + " | ".join([row, *cells]) + " |" for row, cells in zip(frame.index, texts, strict=True)]
    label_heads = list(frame.index.names)
    md = ["| " + " | ".join([*label_heads, *heads]) + " |",
          "|" + "---|" * len(label_heads) + "---:|" * len(heads)]
    for label, cells in zip(frame.index, texts, strict=True):
        label = label if isinstance(label, tuple) else (label,)
        # A summary line (average rank, first count) has its name in the first label column only.
        md.append("| " + " | ".join([*label, *cells]) + " |" if all(label) else
                  f"| {label[0]} | " + "| " * (len(label) - 1) + " | ".join(cells) + " |")
    return md


def latex_marks_caption(seeded: bool) -> str:
    """What the marks of a LaTeX table mean, for its caption (the markdown's legend in short)."""
    if seeded:
        return ("Mean ± sample standard deviation over seeds; bold: best, underlined: second best, each apart "
                "from the others by Welch's t-test (p < 0.05); ≈: within seed noise of the best.")
    return "Bold: best, underlined: second best (ties at 3 decimals share the mark)."


def write_grid_latex(frame: pd.DataFrame, stem: Path, caption: str) -> list[Path]:
    """`stem.tex` of a `grid_frame` (its numbers are in the report's long-form CSV): the markdown marks as
    LaTeX, **bold** best and underlined second (`utils.report_files.write_table`)."""
    texts = frame.map(lambda text: split_mark(text)[0])
    marks = frame.map(lambda text: split_mark(text)[1])
    return write_table(texts, stem, marks=marks, caption=caption, csv=False)


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
    """Markdown sections for the runs without a result: *Failed runs* (reason, log), *Stale runs* (status
    `stale`: finished by older code, `compare.grid.behaviour_changes`, or with other flags than planned) and *Unfinished runs*
    (latest attempt interrupted; where the runner read its last.pth: the epoch it stopped in, the epochs
    finished and, at the best validation epoch so far, the validation and test losses, which the finished
    run reports unless a later epoch validates better). `axis_field` names the manifest field shown under
    `axis_column`."""
    md: list[str] = []

    def where(entry: dict) -> str:
        seed = f" (seed {entry['seed']})" if entry.get("seed") is not None else ""
        return f"| {entry['row']} | {entry['dataset']} | {entry.get(axis_field)}{seed} |"

    stale = [entry for entry in failed if entry.get("status") == "stale"]
    failed = [entry for entry in failed if entry.get("status") != "stale"]
    if failed:
        md += ["## Failed runs", "", f"| Model | Dataset | {axis_column} | Reason | Log |", "|---|---|---|---|---|"]
        for entry in failed:
            md.append(f"{where(entry)} {_escape(entry.get('error') or 'no result recorded')} | "
                      f"{entry.get('log') or '—'} |")
        md.append("")
    if stale:
        md += ["## Stale runs (not in the table)", "",
               "Finished, but by code older than a change of what the run computes (`compare/grid/behaviour_changes.py`) "
               "or with other flags than the plan's: the same command with `--rerun-stale` runs them again.", "",
               f"| Model | Dataset | {axis_column} | Why stale |", "|---|---|---|---|"]
        md += [f"{where(entry)} {_escape(entry['error'])} |" for entry in stale]
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
