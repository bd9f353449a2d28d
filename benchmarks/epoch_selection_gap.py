"""How much of a gap to published numbers could the choice of the test epoch explain? (issue 61)

Usage:  python benchmarks/epoch_selection_gap.py docs/results/paper_recipe docs/results/paper_recipe_seeds \
            --reference ../shared/docs/paper_results.csv [--rows CAPS LinAttn+RoPE]

For every finished run of the given comparison folders that recorded its per-epoch losses (`curve`), the test MSE
at three epochs, each against the reference's MSE: the best-validation epoch (what every table of this project
reports, and what the paper says it reports), the epoch of the lowest test MSE (a test-selected minimum: it reads
the test set to choose, so it is a bound, never a result; the official code's logging table records one beside the
best-validation figure, caps_reference section 8 item 18) and the last epoch. Then, per row, the mean of each
difference over the runs. Reads the folders' records (their runs/ where present, else the committed copies);
prints markdown and writes nothing.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from compare.grid.records import folder_runs  # noqa: E402
from compare.report.reference import difference_pct, load_reference, reference_for  # noqa: E402
from utils.errors import UserInputError  # noqa: E402


def epoch_choices(curve: list[dict], best_epoch: int | None = None) -> dict[str, tuple[int, float]]:
    """(epoch, test MSE) at the best-validation epoch (the run's recorded `best_epoch`, else the first of equal
    validation lows, as early stopping keeps it), at the lowest test MSE and at the last epoch of a run's curve
    [{epoch, train, vali, test}, ...]."""
    test = [e["test"] for e in curve]
    epochs = [e["epoch"] for e in curve]
    best = epochs.index(best_epoch) if best_epoch in epochs else int(np.argmin([e["vali"] for e in curve]))
    picks = {"best validation": best, "lowest test": int(np.argmin(test)), "last": len(curve) - 1}
    return {name: (curve[i]["epoch"], float(test[i])) for name, i in picks.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path, help="comparison folders")
    parser.add_argument("--reference", required=True, help="CSV dataset,pred_len,model,mse,mae")
    parser.add_argument("--rows", nargs="+", default=None, help="rows to show (default: every row)")
    args = parser.parse_args(argv)
    try:
        reference = load_reference(args.reference)
        runs = [(folder, run) for folder in args.folders for run in folder_runs(folder)]
    except UserInputError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    runs = [(f, r) for f, r in runs if args.rows is None or r.row in args.rows]
    names = ("best validation", "lowest test", "last")
    print("| row | dataset | H | seed | folder | epochs | " + " | ".join(f"{n}: epoch, MSE, Δ" for n in names)
          + " | reference MSE |")
    print("|---|---|---:|---:|---|---:|" + "---|" * len(names) + "---:|")
    deltas: dict[str, dict[str, list[float]]] = {}
    missing = []
    for folder, run in sorted(runs, key=lambda fr: (fr[1].row, fr[1].dataset, fr[1].pred_len, fr[1].seed or 0)):
        ref = reference_for(reference, run.dataset, run.row, run.pred_len)
        if not run.curve or ref is None:
            missing.append(f"{run.row} {run.dataset} H={run.pred_len} seed {run.seed} ({folder}): "
                           + ("no per-epoch curve in its record" if not run.curve else "no reference number"))
            continue
        chosen = epoch_choices(run.curve, run.best_epoch)
        cells = []
        for name in names:
            epoch, mse = chosen[name]
            delta = difference_pct(mse, ref[0])
            deltas.setdefault(run.row, {}).setdefault(name, []).append(delta)
            cells.append(f"{epoch}, {mse:.4f}, {delta:+.1f} %")
        print(f"| {run.row} | {run.dataset} | {run.pred_len} | {run.seed} | {folder.name} | {len(run.curve)} | "
              + " | ".join(cells) + f" | {ref[0]:.3f} |")
    print()
    print("| row | runs | " + " | ".join(f"mean Δ, {n}" for n in names) + " |")
    print("|---|---:|" + "---:|" * len(names))
    for row, by_name in deltas.items():
        print(f"| {row} | {len(by_name[names[0]])} | "
              + " | ".join(f"{np.mean(by_name[n]):+.1f} %" for n in names) + " |")
    if missing:
        print("\nNot shown: " + "; ".join(missing) + ".")
    return 0


if __name__ == "__main__":
    sys.exit(main())
