"""`table.md` and `table.csv` of a forecasting comparison.

`table.md` opens with the MSE / MAE table per dataset x horizon plus the horizon average, like the CAPS
paper's Table 1 (**bold** best, _underline_ second best per line and metric, average rank and first-place
count per model; with seeds mean ± sd and marks tested over the seeds), then its legend, how the numbers were
produced (`compare.grid.provenance`), the seed section of each focus row (`compare.report.seeds`), the scores over
(dataset, horizon) cells (relative to the naive forecasts, `compare.report.naive_scores`; skill vs seasonal naive,
`compare.report.skill_scores`; ranks and win rates, `compare.report.cell_statistics`), the comparison with reference numbers
per model and in the paper's layout (`compare.report.paper_layout`, with `paper_layout.csv` / `.tex`) and the runs
without a result. `table.csv` holds the same in long form: one line
per dataset, horizon or `avg`, and model, with ranks, reference and run statistics.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pandas as pd

from compare.grid.own_data import own_data_lines
from compare.grid.protocol_notes import protocol_header
from compare.grid.provenance import production_notes, production_section
from compare.grid.records import RunResult, seed_order
from compare.grid.run_args import shown_flags
from compare.grid.tune_budget import Budget, current_cell
from compare.report import significance
from compare.report.cell_statistics import cell_statistics, statistics_section
from compare.report.forecast_cells import (
    Cells,
    accuracy_cells,
    average_ranks,
    dataset_horizons,
    orders,
    units,
)
from compare.report.markdown import (
    GridLine,
    format_value,
    grid_frame,
    is_tall,
    latex_marks_caption,
    markdown_grid,
    percent_text,
    run_status_sections,
    write_grid_latex,
    write_long_csv,
)
from compare.report.naive_scores import naive_section
from compare.report.paper_layout import write_paper_layout
from compare.report.ranking import AVG, competition_ranks
from compare.report.reference import Reference, difference_pct, reference_value
from compare.report.seeds import (
    SeedView,
    focus_rows,
    forecast_seed_section,
    seed_cell_text,
    seed_plot_name,
    seed_view,
)
from compare.report.skill_scores import skill_scores, skill_section

__all__ = ["accuracy_grid", "table_records", "write_tables"]

_SEEDED_LEGEND = (
    "Cells: mean ± sample standard deviation over n = {n} seeds (seeds {seeds}); a cell with another number of "
    "seeds shows (n=k). Marks and ranks use the means. **Bold**: the lowest mean, lower than every other row by "
    "Welch's t-test over the seeds (p < 0.05); _underline_: the second-lowest mean, separated in the same way "
    "from the best and from every row after it; ≈: within seed noise, i.e. the lowest mean and every row whose "
    "difference from it has Welch p ≥ 0.05 (its 95 % interval contains 0) or is invisible at 3 decimals: no row "
    "wins that line. {dagger}*Avg*: mean over the dataset's horizons (only when the model has all of them); its ± "
    "and test use the per-seed horizon averages of the seeds that have every horizon. *Avg rank*: mean over "
    "datasets of the model's rank on the horizon-averaged mean (the paper's Table 2 rule; ties at 3 decimals "
    "share the lowest rank). *1st count*: lines (horizons and Avg) where the model is bold, i.e. a win beyond "
    "seed noise.")
_UNTESTED = ("†: a model of that line has a single seed (tall layout: of that column), so its marks follow the "
             "means untested. ")
_SINGLE_LEGEND = (
    "**Bold**: best, _underline_: second best in the row (ties at 3 decimals share the mark). *Avg*: mean over "
    "the dataset's horizons (only when the model has all of them). *Avg rank*: mean over datasets of the "
    "model's rank on the horizon-averaged metric (the paper's Table 2 rule; ties share the lowest rank). "
    "*1st count*: rows (horizons and Avg) where the model is best.")


def accuracy_grid(rows: list[str], datasets: list[str], cells: Cells, view: SeedView, tall: bool
                  ) -> tuple[pd.DataFrame, bool]:
    """The MSE / MAE table as cell texts (`compare.report.markdown.grid_frame`), and whether a line's marks went
    untested (†). The tall layout
    leaves out the Avg of a dataset with a single horizon (it would repeat that horizon); the first-place
    count counts the lines shown."""
    metrics = ("mse", "mae")
    lines, shown, untested = [], [], False
    for dataset in datasets:
        horizons = dataset_horizons(cells, dataset)
        for h in horizons:
            if tall and h == AVG and len(horizons) == 2:
                continue
            dagger = view.seeded and not view.tested[(dataset, h, "mse")]
            untested |= dagger
            shown.append((dataset, h))
            lines.append(GridLine((dataset, f"{h}{' †' if dagger else ''}"), [
                [seed_cell_text(view.marks[(dataset, h, m)][i], view.samples[(dataset, h, m)][i], view.seeded,
                                view.common_n) for m in metrics]
                for i in range(len(rows))]))
    ranks = average_ranks(cells, rows, datasets)
    rank_cells = [["—" if ranks[m][i] is None else f"{ranks[m][i]:.1f}" for m in metrics] for i in range(len(rows))]
    first_cells = [[str(sum(view.marks[(d, h, m)][i].mark == "best" for d, h in shown)) for m in metrics]
                   for i in range(len(rows))]
    return grid_frame(("Dataset", "H"), rows, ("MSE", "MAE"), lines,
                      [("Avg rank", rank_cells), ("1st count", first_cells)], tall), untested


def _legend(view: SeedView, untested: bool) -> str:
    """What the cells, marks and summary columns of the accuracy table mean."""
    if not view.seeded:
        return _SINGLE_LEGEND
    seeds = ", ".join("?" if s is None else str(s) for s in view.seeds)
    return _SEEDED_LEGEND.format(n=view.common_n, seeds=seeds, dagger=_UNTESTED if untested else "")


def table_records(runs: list[RunResult], rows: list[str], datasets: list[str], cells: Cells, view: SeedView,
                  reference: Reference | None) -> list[dict]:
    """The lines of `table.csv`: one per (dataset, horizon or avg, row) with values, ranks, reference, run
    statistics and the seeds."""
    horizons_of = {d: sorted({r.pred_len for r in runs if r.dataset == d}) for d in datasets}
    records: list[dict] = []
    by_key: dict[tuple[str, str, int], list[RunResult]] = {}
    for r in sorted(runs, key=lambda r: seed_order(r.seed)):
        by_key.setdefault((r.row, r.dataset, r.pred_len), []).append(r)
    for (dataset, h, metric), values in cells.items():
        if metric != "mse":
            continue
        mse_ranks = competition_ranks(values)
        mae_values = cells[(dataset, h, "mae")]
        mae_ranks = competition_ranks(mae_values)
        for i, row in enumerate(rows):
            ref = reference_value(reference, dataset, row, h, horizons_of[dataset]) if reference else None
            found = by_key.get((row, dataset, h), []) if h != AVG else []
            mse_sample, mae_sample = view.samples[(dataset, h, "mse")][i], view.samples[(dataset, h, "mae")][i]

            def per_run(name: str, found: list[RunResult] = found) -> object:
                # One value as before; the seeds' values joined by ';' in seed order with several seeds.
                got = [getattr(r, name) for r in found if getattr(r, name) is not None]
                return None if not got else got[0] if len(found) == 1 else ";".join(map(str, got))

            records.append({
                "dataset": dataset, "pred_len": h if h != AVG else "avg", "model": row,
                "mse": values[i], "mae": mae_values[i], "mse_rank": mse_ranks[i], "mae_rank": mae_ranks[i],
                "ref_mse": ref[0] if ref else None, "ref_mae": ref[1] if ref else None,
                "mse_diff_pct": difference_pct(values[i], ref[0] if ref else None),
                "mae_diff_pct": difference_pct(mae_values[i], ref[1] if ref else None),
                "epochs_run": per_run("epochs_run"), "best_epoch": per_run("best_epoch"),
                "train_seconds": per_run("train_seconds"), "params": found[0].params if found else None,
                "settings": ";".join(s for r in found for s in r.settings) if found else None,
                "n_seeds": len(mse_sample), "seeds": ";".join(str(s) for s in mse_sample),
                "mse_std": significance.summarize(list(mse_sample.values())).std if mse_sample else None,
                "mae_std": significance.summarize(list(mae_sample.values())).std if mae_sample else None,
                "mse_mark": view.marks[(dataset, h, "mse")][i].mark, "mae_mark": view.marks[(dataset, h, "mae")][i].mark,
            })
    return records


def _reference_section(runs: list[RunResult], rows: list[str], datasets: list[str], cells: Cells,
                       reference: Reference, reference_name: str) -> list[str]:
    """Per model, its numbers beside the reference's with the relative difference."""
    horizons_of = {d: sorted({r.pred_len for r in runs if r.dataset == d}) for d in datasets}
    md = [f"## Reference: {reference_name}", "",
          "Δ = (ours − reference) / reference; negative means we measured a lower error.", ""]
    for i, row in enumerate(rows):
        lines = []
        for dataset in datasets:
            for h in dataset_horizons(cells, dataset):
                ref = reference_value(reference, dataset, row, h, horizons_of[dataset])
                if ref is None:
                    continue
                ours_mse, ours_mae = cells[(dataset, h, "mse")][i], cells[(dataset, h, "mae")][i]
                lines.append(f"| {dataset} | {h} | {format_value(ours_mse)} | {ref[0]:.3f} | "
                             f"{percent_text(ours_mse, ref[0])} | {format_value(ours_mae)} | {ref[1]:.3f} | "
                             f"{percent_text(ours_mae, ref[1])} |")
        if lines:
            md += [f"### {row}", "", "| Dataset | H | MSE | ref MSE | Δ MSE | MAE | ref MAE | Δ MAE |",
                   "|---|---|---:|---:|---:|---:|---:|---:|", *lines, ""]
    return md


def tuning_section(path: Path) -> list[str]:
    """`## Tuning budget` from `python -m compare tune`'s tuning.json (nothing when there is none): per cell the
    budget (trials and/or minutes, epochs per trial, resources per trial), what the study spent over every
    invocation, what stopped the last one, and the choice."""
    if not path.is_file():
        return []
    cells = json.loads(path.read_text()).get("cells", [])
    md = ["## Tuning budget", "",
          "Every model had the same budget per cell (trials and/or wall-clock minutes, at most the stated epochs "
          "per trial, the same resources per trial), chosen on the validation loss only (the test split was "
          "not evaluated before the choice; `tuning.json`). Then the chosen flags were retrained over the seeds "
          "as the `(tuned)` rows above.", "",
          "| Model | Dataset | H | Tuning budget | Per trial | Trials spent | Seconds spent | Epochs per trial "
          "(last invocation) | Last invocation stopped by | Best validation loss | Chosen flags |",
          "|---|---|---:|---|---|---:|---:|---|---|---:|---|"]
    cells = [current_cell(c) for c in cells]
    fixed = {shown_flags(c.get("fixed_by_extra", {})) for c in cells} - {""}
    if fixed:
        md[2] += (" Flags given in `--extra` were held fixed, not searched, in every trial and tuned row: "
                  + "; ".join(f"`{f}`" for f in sorted(fixed)) + ".")
    for c in cells:
        flags = shown_flags(c["best_params"])
        budget, spent, last = c["budget"], c["spent"], c["this_invocation"]
        epochs = ", ".join(map(str, last["epochs_per_trial"])) or "—"
        resources = ("— (not recorded)" if budget["cpus_per_trial"] is None else
                     f"{budget['cpus_per_trial']:g} CPU, {budget['gpus_per_trial']:g} GPU")
        md.append(f"| {c['row']} | {c['dataset']} | {c['pred_len']} | {Budget.from_record(budget).describe()} | "
                  f"{resources} | {spent['trials']} | {spent['seconds']:.0f} | {epochs} | "
                  f"{last['stopped_by']} | {c['best_vali_loss']:.4f} | `{flags}` |")
    return [*md, ""]


def write_tables(out: Path, runs: list[RunResult], failed: list[dict], config: dict,
                 reference: Reference | None, reference_name: str = "",
                 focus: str | Sequence[str] | None = None, layout: str = "auto",
                 unfinished: Sequence[dict] = ()) -> tuple[Path, ...]:
    """Write `table.md`, `table.csv` and the accuracy table as LaTeX, `table.tex`, into `out`, with a reference also
    `paper_layout.csv` and `paper_layout.tex` (`compare.report.paper_layout`); returns their paths.

    focus: the row or rows each compared with every other one over seeds (default: the first row).
    unfinished: the manifest entries of interrupted runs (`latest_interrupted`), listed after the tables.
    layout: "wide" (a line per dataset and horizon, two columns per model), "tall" (a line per model, two
    columns per dataset and horizon) or "auto" (tall from TALL_FROM models on)."""
    rows, datasets, _ = orders(runs, config, failed)
    cells = accuracy_cells(runs, rows, datasets)
    focused = focus_rows(focus, rows)
    view = seed_view(runs, rows, datasets, cells, focused[0])

    md = [f"# Forecasting accuracy ({units(runs, config)} MSE / MAE, lower is better)", "",
          protocol_header([(r.row, r.argv) for r in runs], "long_term_forecast"), "",
          *[line for own in own_data_lines(config) for line in (own, "")]]
    tall = is_tall(layout, rows)
    frame, untested = accuracy_grid(rows, datasets, cells, view, tall)
    md += [*markdown_grid(frame, tall), "", _legend(view, untested), ""]
    md += production_section(production_notes(config, runs, failed, out))
    for k, row in enumerate(focused if view.seeded else focused[:1]):
        md += forecast_seed_section(replace(view, focus=row), rows, datasets, seed_plot_name(row, k == 0))
    # Across cells: scores relative to the naive forecasts, skill vs seasonal naive, ranks, win rates, Friedman /
    # Nemenyi.
    md += naive_section(runs, rows, datasets, tall)
    md += skill_section(skill_scores(runs, rows, datasets), tall)
    md += statistics_section(cell_statistics(cells, rows, datasets))
    layout_paths: list[Path] = []
    if reference:
        md += _reference_section(runs, rows, datasets, cells, reference, reference_name)
        layout_md, layout_paths = write_paper_layout(out, rows, datasets, cells, view.samples, reference,
                                                     reference_name)
        md += layout_md
    md += tuning_section(out / "tuning.json")
    md += run_status_sections(failed, unfinished)

    md_path = out / "table.md"
    md_path.write_text("\n".join(md))
    csv_path = write_long_csv(out / "table.csv", table_records(runs, rows, datasets, cells, view, reference),
                              ["dataset", "pred_len", "model", "mse", "mae"])
    tex_paths = write_grid_latex(frame, out / "table", f"{md[0][2:]}. {latex_marks_caption(view.seeded)}")
    return md_path, csv_path, *tex_paths, *layout_paths
