"""Is one row's score apart from another's beyond seed noise, when the rows' seeds live in several comparison
folders? (issue 61)

Usage:  python benchmarks/row_seed_gap.py docs/results/paper_recipe docs/results/paper_recipe_seeds \
            docs/results/paper_recipe_official --rows "CAPS (official numerics)" CAPS \
            [--reference ../shared/docs/paper_results.csv [--reference_row CAPS]]

For every (dataset, horizon) cell where both rows have finished runs: each row's seeds and its MSE and MAE as
mean ± sample sd (ddof = 1) over them, then the first row's mean MSE against the second's as
(mean(a) − mean(b)) / mean(b) with Welch's 95 % interval and p (`compare.report.significance.cell_difference`,
the test the comparison report's seed section uses). With --reference, the reference MSE of `--reference_row`
(default: the first of --rows the reference names) and, per row, whether it lies in the row's 95 % t-interval of
the mean, mean ± t(0.975, n − 1) · sd / sqrt(n). A (row, dataset, horizon, seed) run found in two folders is an
error: name each run's folder once. Reads the folders' records (their runs/ where present, else the committed
copies); prints markdown and writes nothing.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scipy import stats  # noqa: E402

from compare.grid.records import RunResult, folder_runs, seed_order  # noqa: E402
from compare.report.markdown import format_p  # noqa: E402
from compare.report.reference import Reference, load_reference, reference_for  # noqa: E402
from compare.report.significance import ALPHA, SeedSummary, cell_difference, summarize  # noqa: E402
from utils.errors import UserInputError  # noqa: E402

Cell = tuple[str, int]


def runs_by_cell(folders: list[Path], rows: list[str]) -> dict[str, dict[Cell, list[RunResult]]]:
    """row -> (dataset, horizon) -> its finished runs over `folders`, in seed order; a one-line error when a row
    has no run or one (row, dataset, horizon, seed) is in two folders."""
    found: dict[str, dict[Cell, list[RunResult]]] = {row: {} for row in rows}
    where: dict[tuple, Path] = {}
    for folder in folders:
        for run in folder_runs(folder):
            if run.row not in found:
                continue
            key = (run.row, run.dataset, run.pred_len, run.seed)
            if key in where:
                raise UserInputError(f"{run.row} {run.dataset} H={run.pred_len} seed {run.seed} is in both "
                                     f"{where[key]} and {folder}: name one of them only")
            where[key] = folder
            found[run.row].setdefault((run.dataset, run.pred_len), []).append(run)
    for row, cells in found.items():
        if not cells:
            raise UserInputError(f"--rows {row}: no finished run of that row in {', '.join(map(str, folders))}; "
                                 "name a row of their compare.json")
        for runs in cells.values():
            runs.sort(key=lambda r: seed_order(r.seed))
    return found


def mean_interval(summary: SeedSummary) -> tuple[float, float] | None:
    """The 1 − ALPHA t-interval of the mean, mean ± t(1 − ALPHA/2, n − 1) · sd / sqrt(n); None with one seed."""
    if summary.std is None:
        return None
    half = stats.t.ppf(1 - ALPHA / 2, summary.n - 1) * summary.std / math.sqrt(summary.n)
    return summary.mean - half, summary.mean + half


def spread_text(values: list[float]) -> str:
    """'mean ± sd' over seeds at 4 decimals (the mean alone with one seed)."""
    s = summarize(values)
    return f"{s.mean:.4f}" if s.std is None else f"{s.mean:.4f} ± {s.std:.4f}"


def reference_text(ref: float, mse: list[float]) -> str:
    """Whether the reference MSE lies in the t-interval of the mean of `mse`, with the interval."""
    interval = mean_interval(summarize(mse))
    if interval is None:
        return "one seed: no interval"
    inside = "inside" if interval[0] <= ref <= interval[1] else "outside"
    return f"{inside} [{interval[0]:.4f}, {interval[1]:.4f}]"


def reference_row(reference: Reference, rows: list[str], given: str | None, cells: list[Cell]) -> str | None:
    """The row whose reference numbers are shown: `given`, else the first of `rows` the reference names in a cell."""
    if given is not None:
        return given
    return next((row for row in rows for d, h in cells if reference_for(reference, d, row, h) is not None), None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path, help="comparison folders holding the rows' runs")
    parser.add_argument("--rows", nargs=2, required=True, metavar=("A", "B"), help="the two rows: A compared with B")
    parser.add_argument("--reference", default=None, help="CSV dataset,pred_len,model,mse,mae")
    parser.add_argument("--reference_row", default=None, help="the reference's model name (default: the first "
                                                              "of --rows it names)")
    args = parser.parse_args(argv)
    a, b = args.rows
    try:
        if a == b:
            raise UserInputError(f"--rows {a} {b}: name two different rows")
        found = runs_by_cell(args.folders, [a, b])
        reference = load_reference(args.reference) if args.reference else None
    except UserInputError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    cells = sorted(set(found[a]) & set(found[b]))
    if not cells:
        print(f"error: no (dataset, horizon) cell has runs of both {a} and {b}; run both rows in one cell",
              file=sys.stderr)
        return 2
    ref_row = reference_row(reference, [a, b], args.reference_row, cells) if reference else None
    head = f"| dataset | H | row | seeds | MSE | MAE | Δ MSE vs {b} [Welch 95 %], p |"
    rule = "|---|---:|---|---|---:|---:|---|"
    if ref_row is not None:
        head += f" {ref_row}'s reference MSE: in the 95 % interval of the mean? |"
        rule += "---|"
    print(head)
    print(rule)
    for dataset, horizon in cells:
        for row in (a, b):
            runs = found[row][(dataset, horizon)]
            mse, mae = [r.mse for r in runs], [r.mae for r in runs]
            if row == a:
                diff = cell_difference(mse, [r.mse for r in found[b][(dataset, horizon)]])
                gap = f"{100 * diff.relative:+.2f} %" + ("" if diff.p is None else
                                                        f" [{100 * diff.low:+.2f}, {100 * diff.high:+.2f}] %, "
                                                        f"p = {format_p(diff.p)}")
            else:
                gap = ""
            line = (f"| {dataset} | {horizon} | {row} | {', '.join(str(r.seed) for r in runs)} | "
                    f"{spread_text(mse)} | {spread_text(mae)} | {gap} |")
            if ref_row is not None:
                ref = reference_for(reference, dataset, ref_row, horizon)
                line += (" no reference |" if ref is None else f" {ref[0]:.3f}: {reference_text(ref[0], mse)} |")
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
