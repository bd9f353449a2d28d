"""compare.grid.naive_backfill: a record of a real tiny run, stripped of its naive scores, gets them back bit for
bit from its `config` or from its manifest line's argv; every other line keeps its bytes; --dry-run and every
refusal write nothing, and a refusal is one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import run
from compare.grid.naive_backfill import BACKFILL_COMMAND, main, needs_naive
from compare.grid.provenance import production_notes
from compare.grid.records import load_runs
from exp.naive_forecast import NAIVE_METHODS
from tests.exp.conftest import toy_argv, write_toy_csv

NAIVE_FIELDS = (*NAIVE_METHODS, "naive_backfill")
# Records the command leaves alone: a record that has its scores (below), and another task's.
CLASSIFICATION = {"setting": "classification_JV_TimesNet_x", "model": "TimesNet", "accuracy": 0.9,
                  "config": {"task_name": "classification"}}


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> dict:
    """One DLinear epoch on the toy CSV (data under mirror/Toy/): its argv and its record (with naive scores)."""
    root = tmp_path_factory.mktemp("trained")
    (root / "mirror" / "Toy").mkdir(parents=True)
    write_toy_csv(root / "mirror" / "Toy" / "toy.csv")
    argv = toy_argv(root / "mirror" / "Toy", "--train_epochs", "1", model="DLinear")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(root)
        assert run.main(argv) == 0
    (record,) = [json.loads(line) for line in (root / "results.jsonl").read_text().splitlines()]
    assert record["naive"] and record["seasonal_naive"]["mse"] is not None
    return {"argv": argv, "record": record, "mirror": root / "mirror"}


def stripped(record: dict, *also: str) -> dict:
    """`record` without its naive fields (and the fields `also` names): as a record written before them."""
    return {k: v for k, v in record.items() if k not in (*NAIVE_METHODS, *also)}


def write_lines(path: Path, records: list[dict]) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(r, sort_keys=True) + "\n" for r in records)
    path.write_text(text)
    return text


def manifest_entry(trained: dict, **changes) -> dict:
    record = trained["record"]
    return {"row": "DLinear", "dataset": "toy", "pred_len": 12, "seed": None, "status": "ok", "error": None,
            "settings": [record["setting"]], "argv": trained["argv"], "seconds": 1.0, **changes}


def records_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def one_error_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err
    return err


def test_a_record_without_naive_scores_gets_the_runs_own_back_from_its_config(tmp_path, trained, capsys):
    record = trained["record"]
    other = {**record, "setting": record["setting"] + "_other"}
    results = tmp_path / "cmp" / "results.jsonl"
    write_lines(results, [stripped(record), other, CLASSIFICATION])
    kept = results.read_text().splitlines(keepends=True)[1:]

    assert main([str(tmp_path / "cmp")]) == 0
    out = capsys.readouterr().out
    assert f"filled {results}:1 ({record['setting']}), flags from config" in out and f"wrote {results}" in out
    filled, *rest = records_of(results)
    for method in NAIVE_METHODS:
        assert filled[method] == record[method]  # exactly, not approximately
    assert filled["naive_backfill"]["command"] == BACKFILL_COMMAND
    assert filled["naive_backfill"]["flags_from"] == "config" and len(filled["naive_backfill"]["code_version"]) == 40
    assert stripped(filled, "naive_backfill") == stripped(record)
    assert results.read_text().splitlines(keepends=True)[1:] == kept


def test_an_older_record_takes_its_flags_from_the_manifest_and_the_report_names_it(tmp_path, trained, capsys):
    """No `config`: the argv of its manifest line, in the folder and in its runs/ copy alike."""
    folder = tmp_path / "cmp"
    old = stripped(trained["record"], "config", "config_hash", "code_version", "protocol")
    for place in (folder, folder / "runs"):
        write_lines(place / "results.jsonl", [old])
        write_lines(place / "compare_runs.jsonl", [manifest_entry(trained, status="interrupted", argv=["--bad"]),
                                                   manifest_entry(trained)])
    assert main([str(folder)]) == 0
    assert capsys.readouterr().out.count(", flags from compare_runs.jsonl argv") == 2
    for place in (folder, folder / "runs"):
        (filled,) = records_of(place / "results.jsonl")
        assert {m: filled[m] for m in NAIVE_METHODS} == {m: trained["record"][m] for m in NAIVE_METHODS}
        assert filled["naive_backfill"]["flags_from"] == "compare_runs.jsonl argv"
    runs, _ = load_runs(folder / "runs")
    (note,) = [line for line in production_notes({}, runs, []) if BACKFILL_COMMAND in line]
    assert "DLinear on toy H=12" in note


def test_root_finds_the_data_where_it_is_now(tmp_path, trained, capsys):
    moved = {**stripped(trained["record"]),
             "config": {**trained["record"]["config"], "root_path": "../elsewhere/Toy/"}}
    write_lines(tmp_path / "cmp" / "results.jsonl", [moved])
    assert main([str(tmp_path / "cmp"), "--root", str(trained["mirror"])]) == 0
    (filled,) = records_of(tmp_path / "cmp" / "results.jsonl")
    assert {m: filled[m] for m in NAIVE_METHODS} == {m: trained["record"][m] for m in NAIVE_METHODS}


def test_a_folder_with_every_score_is_left_as_it_is(tmp_path, trained, capsys):
    text = write_lines(tmp_path / "cmp" / "results.jsonl", [trained["record"], CLASSIFICATION])
    assert main([str(tmp_path / "cmp")]) == 0
    assert "no record to fill" in capsys.readouterr().out
    assert (tmp_path / "cmp" / "results.jsonl").read_text() == text


def test_dry_run_lists_and_writes_nothing(tmp_path, trained, capsys):
    text = write_lines(tmp_path / "cmp" / "results.jsonl", [stripped(trained["record"])])
    assert main([str(tmp_path / "cmp"), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert f"would fill {tmp_path / 'cmp' / 'results.jsonl'}:1 ({trained['record']['setting']})" in out
    assert "wrote" not in out
    assert (tmp_path / "cmp" / "results.jsonl").read_text() == text


def test_which_records_need_scores():
    assert needs_naive({"setting": "long_term_forecast_ETTh1_96_96_CAPS_x"})
    assert needs_naive({"setting": "x", "config": {"task_name": "zero_shot_forecast"}})
    assert not needs_naive({"setting": "long_term_forecast_x", "naive": None, "seasonal_naive": None})
    assert not needs_naive(CLASSIFICATION)
    assert not needs_naive({"setting": "imputation_ETTh1_x", "mse": 0.1})


def bad_folders(tmp_path: Path, trained: dict) -> dict[str, tuple[list[str], str]]:
    """name -> (command arguments, what its error line says), each folder holding one refused record."""
    record = trained["record"]
    no_flags = stripped(record, "config")
    write_lines(tmp_path / "no_flags" / "results.jsonl", [no_flags])
    write_lines(tmp_path / "no_flags" / "compare_runs.jsonl", [manifest_entry(trained, settings=["other"])])
    write_lines(tmp_path / "no_data" / "results.jsonl",
                [{**stripped(record), "config": {**record["config"], "root_path": "../nowhere/Toy/"}}])
    write_lines(tmp_path / "mismatch" / "results.jsonl",
                [{**stripped(record), "config": {**record["config"], "pred_len": 24}}])
    write_lines(tmp_path / "bad_argv" / "results.jsonl", [no_flags])
    write_lines(tmp_path / "bad_argv" / "compare_runs.jsonl", [manifest_entry(trained, argv=["--no_such_flag", "1"])])
    (tmp_path / "empty").mkdir()
    return {
        "missing-folder": ([str(tmp_path / "absent")], "is not a folder"),
        "no-results": ([str(tmp_path / "empty")], "holds no results.jsonl"),
        "no-flags": ([str(tmp_path / "no_flags")], "flags cannot be recovered"),
        "no-data": ([str(tmp_path / "no_data")], "nowhere/Toy/toy.csv is missing; pass --root DIR"),
        "mismatch": ([str(tmp_path / "mismatch")], "do not match the record (pred_len 12 vs 24)"),
        "bad-argv": ([str(tmp_path / "bad_argv")], "does not parse"),
    }


@pytest.mark.parametrize("case", ["missing-folder", "no-results", "no-flags", "no-data", "mismatch", "bad-argv"])
def test_bad_input_is_one_line_and_writes_nothing(tmp_path, trained, capsys, case):
    """A good folder given first is not written either: nothing is, unless every record can be filled."""
    good = tmp_path / "good" / "results.jsonl"
    text = write_lines(good, [stripped(trained["record"])])
    argv, says = bad_folders(tmp_path, trained)[case]
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert main([str(good.parent), *argv]) == 2
    assert says in one_error_line(capsys)
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before
    assert good.read_text() == text


def test_several_folders_in_one_call(tmp_path, trained, capsys):
    for name in ("a", "b"):
        write_lines(tmp_path / name / "results.jsonl", [stripped(trained["record"])])
    assert main([str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    assert capsys.readouterr().out.count("filled ") == 2
    for name in ("a", "b"):
        assert records_of(tmp_path / name / "results.jsonl")[0]["naive"] == trained["record"]["naive"]
