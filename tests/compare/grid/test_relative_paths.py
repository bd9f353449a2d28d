"""compare.grid.relative_paths: an existing results folder's absolute paths become repository-relative ones, every
number and the JSON structure unchanged; a rewrite that would change more writes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compare.grid.relative_paths import (
    find_checkouts,
    main,
    relative_file_text,
    rewrite_folder,
    same_but_strings,
)
from utils.errors import UserInputError
from utils.record_paths import absolute_paths, record_path

# A checkout of the machine that wrote the records, and its dataset mirror beside it.
CHECKOUT = "/srv/ci/main"
MIRROR = "/srv/ci/shared/datasets"


def write_folder(folder: Path) -> dict[str, object]:
    """A results folder as the runner wrote it before records kept paths relative; returns its records."""
    folder.mkdir(parents=True)
    command = (f"python -m compare --data ETTh1 --models CAPS --root {MIRROR} --reference /srv/ci/shared/p.csv "
               "--out /tmp/old_out --no-report")
    config = {"data": ["ETTh1"], "reference": "/srv/ci/shared/p.csv",
              "invocations": [{"command": command, "epochs": 2, "root": MIRROR, "seeds": None}]}
    entry = {"row": "CAPS", "status": "ok", "argv": ["--root_path", f"{CHECKOUT}/dataset/ETT-small/", "--seed", "7"],
             "script": f"{CHECKOUT}/scripts/long_term_forecast/ETT_script/CAPS_ETTh1.sh:15", "seconds": 12.5}
    record = {"model": "CAPS", "mse": 0.38123456789012345, "mae": 0.4, "best_epoch": 3,
              "config": {"root_path": f"{MIRROR}/ETT-small/", "seed": 7, "use_amp": True, "alpha": None}}
    (folder / "compare.json").write_text(json.dumps(config, indent=2) + "\n")
    (folder / "compare_runs.jsonl").write_text(json.dumps(entry) + "\n")
    (folder / "results.jsonl").write_text(json.dumps(record) + "\n\n")
    (folder / "table.md").write_text(f"| x |\n\nRunner: `{command}`; overrides: none.\n")
    (folder / "figure.npz").write_bytes(b"\0\x01/srv/ci/main/dataset/x")
    return {"config": config, "entry": entry, "record": record}


def test_a_folder_is_rewritten_relative_to_the_checkout_that_wrote_it(tmp_path):
    written = write_folder(tmp_path / "x")
    changed = rewrite_folder(tmp_path / "x")
    assert sorted(p.name for p in changed) == ["compare.json", "compare_runs.jsonl", "results.jsonl", "table.md"]
    config = json.loads((tmp_path / "x" / "compare.json").read_text())
    (entry,) = [json.loads(line) for line in (tmp_path / "x" / "compare_runs.jsonl").read_text().splitlines()]
    record = json.loads((tmp_path / "x" / "results.jsonl").read_text().splitlines()[0])
    assert entry["argv"] == ["--root_path", "dataset/ETT-small/", "--seed", "7"]
    assert entry["script"] == "scripts/long_term_forecast/ETT_script/CAPS_ETTh1.sh:15"
    assert record["config"]["root_path"] == "../shared/datasets/ETT-small/"
    assert config["invocations"][0]["root"] == "../shared/datasets" and config["reference"] == "../shared/p.csv"
    # The command's --out names the folder itself (as the report shows it), wherever it was first written.
    shown_out = config["invocations"][0]["command"].split("--out ")[1].split()[0]
    assert shown_out == record_path(str((tmp_path / "x").resolve())) and not shown_out.startswith("/")
    # Numbers, keys and lengths as before; the blank line of results.jsonl kept; nothing absolute left.
    assert same_but_strings(written["config"], config) and same_but_strings(written["entry"], entry)
    assert record["mse"] == 0.38123456789012345 and record["config"]["alpha"] is None
    assert (tmp_path / "x" / "results.jsonl").read_text().endswith("}\n\n")
    for name in ("compare.json", "compare_runs.jsonl", "results.jsonl", "table.md"):
        assert absolute_paths((tmp_path / "x" / name).read_text()) == [], name
    assert (tmp_path / "x" / "figure.npz").read_bytes() == b"\0\x01/srv/ci/main/dataset/x"


def test_the_runner_commands_out_names_the_folder():
    text = "Runner: `python -m compare --root /srv/ci/shared/datasets --out /tmp/gpu --no-report`"
    assert relative_file_text(text, "docs/results/ETTh_gpu", [CHECKOUT]) == (
        "Runner: `python -m compare --root ../shared/datasets --out docs/results/ETTh_gpu --no-report`")


def test_paths_into_installed_packages_and_mapped_prefixes():
    text = ('File "/tmp/site/fla/ops/chunk.py", line 3\n/opt/t/.venv/lib/python3.12/site-packages/torch/x.py:9: W\n'
            '../../opt/t/.venv/lib/python3.12/site-packages/torch/jit/s.py:365: 14 warnings')
    assert relative_file_text(text, "d", [CHECKOUT], {"/tmp/site": "<site-packages>"}) == (
        'File "<site-packages>/fla/ops/chunk.py", line 3\n<site-packages>/torch/x.py:9: W\n'
        '<site-packages>/torch/jit/s.py:365: 14 warnings')


def test_the_checkout_is_found_from_its_folders():
    paths = [f"{CHECKOUT}/dataset/ETT-small/", f"{CHECKOUT}/exp/train_step.py", MIRROR, f"{MIRROR}/ETT-small/",
             "/tmp/site/fla/utils/decorators.py", "/elsewhere/exp/not_in_this_repository.py"]
    assert find_checkouts(paths) == [CHECKOUT]


def test_a_rewrite_that_breaks_the_json_writes_nothing(tmp_path):
    write_folder(tmp_path / "x")
    before = (tmp_path / "x" / "compare.json").read_text()
    # A mapping whose text needs JSON escaping would leave the file unparsable.
    with pytest.raises(UserInputError, match="does not parse after rewriting"):
        rewrite_folder(tmp_path / "x", mapping={MIRROR: 'a"b'})
    assert (tmp_path / "x" / "compare.json").read_text() == before


def test_same_but_strings():
    assert same_but_strings({"a": [1, "x", None]}, {"a": [1, "y", None]})
    assert not same_but_strings({"a": 1.0}, {"a": 1.0000001})
    assert not same_but_strings({"a": 1}, {"a": True})
    assert not same_but_strings({"a": [1]}, {"a": [1, 2]})
    assert not same_but_strings({"a": 1, "b": 2}, {"b": 2, "a": 1})


def test_the_command_line_rewrites_and_reports(tmp_path, capsys):
    write_folder(tmp_path / "x")
    assert main([str(tmp_path / "x"), "--dry-run"]) == 0
    assert "4 file(s) would change" in capsys.readouterr().out
    assert absolute_paths((tmp_path / "x" / "table.md").read_text()) != []
    assert main([str(tmp_path / "x")]) == 0
    assert "4 file(s) rewritten, 0 absolute path(s) left" in capsys.readouterr().out
    assert main([str(tmp_path / "nothing")]) == 2
    assert capsys.readouterr().err.startswith("error: ")
    assert main([str(tmp_path / "x"), "--map", "relative=x"]) == 2
