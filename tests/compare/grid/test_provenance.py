"""compare.grid.provenance: the commands a report prints name paths relative to the repository (never an
absolute path of the machine), and `table.md` opens with its table, how it was produced following it."""

from __future__ import annotations

from pathlib import Path

import pytest

from compare.grid.provenance import production_notes, production_section, shown_command, shown_path
from compare.grid.records import RunResult
from compare.report.build import write_report
from tests.compare.report.test_report import build_comparison

REPO = Path("/work/checkouts/caps")


@pytest.mark.parametrize(
    ("path", "shown"),
    [("./dataset", "./dataset"), ("docs/results/x", "docs/results/x"),
     ("/work/checkouts/caps/docs/results/x", "docs/results/x"),
     ("/work/checkouts/shared/datasets", "../shared/datasets"),
     ("/work/shared/docs/paper_results.csv", "../shared/docs/paper_results.csv"), ("/tmp/gpu", "../tmp/gpu")],
    ids=["relative", "relative-inside", "inside", "sibling", "beside-a-parent", "elsewhere"],
)
def test_paths_are_shown_relative_to_the_repository(path, shown):
    assert shown_path(path, REPO) == shown


def test_a_command_shows_relative_paths_and_the_report_folder_as_out():
    command = ("python -m compare --data ETTh1 --variant 'CAPS (official numerics)=CAPS:--caps_numerics official' "
               "--root /work/checkouts/shared/datasets --reference=/work/checkouts/shared/docs/p.csv "
               "--out /scratch/old/ETTh_cpu --no-report")
    shown = shown_command(command, REPO / "docs/results/ETTh_cpu", REPO)
    assert shown == ("python -m compare --data ETTh1 --variant 'CAPS (official numerics)=CAPS:--caps_numerics "
                     "official' --root ../shared/datasets --reference=../shared/docs/p.csv "
                     "--out docs/results/ETTh_cpu --no-report")
    assert shown_command("python -m compare --out=/scratch/x", REPO / "docs/results/y", REPO) == \
        "python -m compare --out=docs/results/y"
    # The removed alias utils.compare is shown as the runner it forwarded to.
    assert shown_command("python -m utils.compare --data ETTh1", None, REPO) == "python -m compare --data ETTh1"
    # Without the report's folder the command keeps its --out, shown like any other path.
    assert shown_command("python -m compare --out /work/checkouts/caps/cmp", None, REPO) == "python -m compare --out cmp"


def test_notes_name_each_invocation_and_the_section_is_empty_without_them():
    config = {"invocations": [{"command": "python -m compare --root /work/checkouts/shared/datasets"}]}
    notes = production_notes(config, [], [])
    assert notes[0].startswith("Runner: `python -m compare --root ")
    assert production_section(notes)[:2] == ["## How these numbers were produced", ""]
    assert production_section([]) == []


def test_notes_name_the_runs_whose_naive_scores_were_filled_in_later():
    note = {"command": "python -m compare.naive_backfill", "flags_from": "config"}

    def run(row: str, notes: list) -> RunResult:
        return RunResult(row=row, dataset="ETTh1", pred_len=96, settings=["s"], mse=0.4, mae=0.4,
                         extra={"naive_backfill": notes})

    runs = [run("CAPS", [note]), run("DLinear", [None]), run("PatchTST", [])]
    (line,) = [n for n in production_notes({}, runs, []) if "naive_backfill" in n]
    assert "of CAPS on ETTh1 H=96 were filled in" in line and "`python -m compare.naive_backfill`" in line
    assert not [n for n in production_notes({}, runs[1:], []) if "naive_backfill" in n]


def test_table_md_opens_with_the_table_and_says_below_how_it_was_produced(tmp_path):
    root = build_comparison(tmp_path / "cmp")
    write_report(root, timing=False)
    lines = (root / "table.md").read_text().splitlines()
    assert lines[0].startswith("# Forecasting accuracy") and lines[1] == ""
    # The protocol of the runs (recorded before --protocol existed: TSLib's), then the table.
    assert lines[2].startswith("**Protocol:** tslib (TSLib's protocol;") and lines[3] == ""
    assert lines[4].startswith("| Dataset | H |")
    produced = lines.index("## How these numbers were produced")
    runner = next(k for k, line in enumerate(lines) if line.startswith("Runner: "))
    assert max(k for k, line in enumerate(lines) if line.startswith("| ECL | Avg |")) < produced < runner
    assert not any(str(tmp_path) in line for line in lines)
