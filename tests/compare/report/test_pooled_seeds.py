"""`python -m compare.report --pool DIR`: seeds of another comparison folder counted in this folder's report.

Synthetic folders with real run.py argv (the flags are compared through run.py's parser): the report's folder
holds seed 1 of A at ETTh1 H = 96 and H = 192 and of B at H = 96; the pooled folder seeds 2 and 3 of A at 96 (its
committed copies only, no runs/) plus a cell the report lacks. Checks the pooled means and sample std, the note,
that the pool is remembered and can be dropped, and that a differing recipe, a repeated seed, the report's own
folder or a missing one are one-line errors that write nothing. No training."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import numpy as np
import pytest

from compare.report.build import main, write_report
from compare.report.pooled_seeds import POOL_KEY
from utils.errors import UserInputError
from utils.record_paths import from_record

REFERENCE = "dataset,pred_len,model,mse,mae\nETTh1,96,A,0.4,0.5\nETTh1,192,A,0.5,0.6\nETTh1,96,B,0.3,0.4\n"


def argv(seed: int, horizon: int, *, lr: str = "0.001", seeded: bool = False) -> list[str]:
    model_id = f"ETTh1_96_{horizon}" + (f"_s{seed}" if seeded else "")
    return ["--task_name", "long_term_forecast", "--is_training", "1", "--model_id", model_id, "--model", "DLinear",
            "--data", "ETTh1", "--pred_len", str(horizon), "--learning_rate", lr, "--seed", str(seed)]


def write_folder(folder: Path, runs: list[tuple[str, int, int, float]], *, committed: bool = False, lr: str = "0.001",
                 seeded: bool = False) -> Path:
    """A comparison folder with one finished run per (row, horizon, seed, mse); MAE = MSE + 0.1. committed: the
    records as a commit keeps them (the folder's own copies, no runs/)."""
    records = folder if committed else folder / "runs"
    records.mkdir(parents=True)
    results, manifest = [], []
    for row, horizon, seed, mse in runs:
        setting = f"long_term_forecast_ETTh1_96_{horizon}_s{seed}_{row}"
        results.append({"setting": setting, "model": "DLinear", "pred_len": horizon, "mse": mse, "mae": mse + 0.1,
                        "seed": seed, "epochs_run": 2, "best_epoch": 1, "params": 600})
        entry = {"row": row, "dataset": "ETTh1", "pred_len": horizon, "status": "ok", "settings": [setting],
                 "argv": argv(seed, horizon, lr=lr, seeded=seeded), "seconds": 5.0, "error": None}
        if seeded:
            entry["seed"] = seed
        manifest.append(entry)
    (records / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in results))
    (records / "compare_runs.jsonl").write_text("".join(json.dumps(m) + "\n" for m in manifest))
    config = {"data": ["ETTh1"], "pred_lens": [96, 192], "rows": [{"name": n, "base": "DLinear", "flags": []}
                                                                 for n in "AB"],
              "invocations": [{"command": "python -m compare --data ETTh1", "seeds": None}]}
    (folder / "compare.json").write_text(json.dumps(config))
    (folder / "reference.csv").write_text(REFERENCE)
    return folder


MINE = [("A", 96, 1, 0.40), ("A", 192, 1, 0.50), ("B", 96, 1, 0.30)]
POOLED = [("A", 96, 2, 0.42), ("A", 96, 3, 0.47), ("A", 336, 2, 0.9)]


def layout(folder: Path) -> dict[tuple[str, str, str], dict]:
    with (folder / "paper_layout.csv").open(newline="") as f:
        return {(r["pred_len"], r["model"], r["metric"]): r for r in csv.DictReader(f)}


@pytest.fixture()
def folders(tmp_path) -> tuple[Path, Path]:
    more = write_folder(tmp_path / "more", POOLED, committed=True, seeded=True)
    with (more / "compare_runs.jsonl").open("a") as f:  # a seed whose run failed: named, never counted
        f.write(json.dumps({"row": "A", "dataset": "ETTh1", "pred_len": 96, "seed": 4, "status": "failed",
                            "settings": [], "argv": argv(4, 96, seeded=True), "seconds": 1.0, "error": "killed"}) + "\n")
    return write_folder(tmp_path / "mine", MINE), more


def test_pooled_seeds_enter_the_tables_and_the_note_says_from_where(folders):
    mine, more = folders
    write_report(mine, reference=mine / "reference.csv", timing=False, pool=[str(more)])
    cells = layout(mine)
    values = np.array([0.40, 0.42, 0.47])
    assert cells[("96", "A", "mse")]["seeds"] == "3"
    assert float(cells[("96", "A", "mse")]["ours_mean"]) == pytest.approx(values.mean())
    assert float(cells[("96", "A", "mse")]["ours_std"]) == pytest.approx(values.std(ddof=1))
    assert cells[("192", "A", "mse")]["seeds"] == "1" and cells[("96", "B", "mse")]["seeds"] == "1"
    text = (mine / "table.md").read_text()
    assert "## Seeds pooled from other folders" in text
    assert "A ETTh1 H=96 seed 2, A ETTh1 H=96 seed 3." in text
    assert "Left out: A ETTh1 H=96 seed 4 (failed); A ETTh1 H=336 seed 2 (no run of that cell here)." in text
    # The pooled runs' own records stay in their folder: the copies written here are this folder's runs only.
    assert len((mine / "results.jsonl").read_text().splitlines()) == len(MINE)


def test_the_pool_is_remembered_and_an_empty_pool_drops_it(folders):
    mine, more = folders
    write_report(mine, reference=mine / "reference.csv", timing=False, pool=[str(more)])
    remembered = json.loads((mine / "compare.json").read_text())[POOL_KEY]
    assert len(remembered) == 1 and not Path(remembered[0]).is_absolute()
    assert from_record(remembered[0]).resolve() == more.resolve()
    write_report(mine, reference=mine / "reference.csv", timing=False)  # as the runner's report calls it
    assert layout(mine)[("96", "A", "mse")]["seeds"] == "3"
    write_report(mine, reference=mine / "reference.csv", timing=False, pool=[])
    assert POOL_KEY not in json.loads((mine / "compare.json").read_text())
    assert layout(mine)[("96", "A", "mse")]["seeds"] == "1"
    assert "Seeds pooled" not in (mine / "table.md").read_text()


def test_a_pooled_folder_with_its_own_runs_dir_is_read_from_there(tmp_path):
    mine = write_folder(tmp_path / "mine", MINE)
    more = write_folder(tmp_path / "more", POOLED[:1], seeded=True)
    write_report(mine, reference=mine / "reference.csv", timing=False, pool=[str(more)])
    assert layout(mine)[("96", "A", "mse")]["seeds"] == "2"


@pytest.mark.parametrize(("pooled", "kwargs", "message"), [
    (POOLED, {"lr": "0.002"}, "A ETTh1 H=96 seed 2 differs from the report's run of that cell in --learning_rate"),
    ([("A", 96, 1, 0.41)], {}, "A ETTh1 H=96 seed 1 is already in the report (same seed)"),
])
def test_another_recipe_or_the_same_seed_is_refused_and_nothing_is_written(tmp_path, pooled, kwargs, message):
    mine = write_folder(tmp_path / "mine", MINE)
    more = write_folder(tmp_path / "more", pooled, committed=True, seeded=True, **kwargs)
    config = (mine / "compare.json").read_text()
    with pytest.raises(UserInputError, match=re.escape(message)):
        write_report(mine, reference=mine / "reference.csv", timing=False, pool=[str(more)])
    assert not (mine / "table.md").exists() and (mine / "compare.json").read_text() == config


def test_bad_pool_folders_are_one_line_errors(folders, tmp_path, capsys):
    mine, more = folders
    for given, message in [([str(mine)], "that is the report's own folder"),
                           ([str(tmp_path / "nowhere")], "no such folder"),
                           ([str(more), str(more)], "names a folder twice")]:
        assert main(["--out", str(mine), "--no-timing", "--pool", *given]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and message in err[0]
    assert not (mine / "table.md").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(UserInputError, match="no finished runs there"):
        write_report(mine, timing=False, pool=[str(empty)])


def test_a_report_of_another_task_refuses_a_pool(folders):
    mine, more = folders
    config = json.loads((mine / "compare.json").read_text())
    (mine / "compare.json").write_text(json.dumps({**config, "task": "imputation"}))
    with pytest.raises(UserInputError, match="only long-term forecasting reports pool seeds"):
        write_report(mine, timing=False, pool=[str(more)])
