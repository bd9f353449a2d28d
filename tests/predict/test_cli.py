"""The shell forms: `python -m predict FOLDER FILE [--out DIR] [--rolling [--rolling_split test]]` (predict/cli.py) and run.py's
`--is_training 0 --do_predict [--predict_data FILE]` (predict/after_run.py). They write what the Python API
returns; bad input is one `error:` line, exit code 2, and no file."""

from __future__ import annotations

import errno
import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import run
from exp.arguments import make_setting
from predict.cli import main
from predict.load import load_trained
from tests.predict.checkpoints import checkpoint_folder, parse, toy_argv, working_directory, write_hourly_csv
from utils import tools

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("cli")
    write_hourly_csv(root / "toy.csv")
    return root


@pytest.fixture(scope="module")
def folder(root) -> Path:
    return checkpoint_folder(toy_argv(root, "DLinear", "MS"))


def _files(path: Path) -> set[str]:
    return {p.relative_to(path).as_posix() for p in path.rglob("*") if p.is_file()}


def test_the_short_form_writes_the_forecast_csv_and_figure(root, folder, tmp_path):
    pd.read_csv(root / "toy.csv").iloc[:150].to_csv(tmp_path / "new data.csv", index=False)
    with working_directory(tmp_path):
        assert main([str(folder), "new data.csv"]) == 0
    out = tmp_path / "predictions" / folder.name
    assert _files(out) == {"new data_forecast.csv", "new data_forecast.png"}
    written = pd.read_csv(out / "new data_forecast.csv")
    expected = load_trained(folder).forecast(pd.read_csv(tmp_path / "new data.csv"))
    assert list(written.columns) == ["date", "OT"]
    np.testing.assert_allclose(written["OT"], expected["OT"], rtol=1e-12)
    assert (written["date"] == expected["date"].dt.strftime("%Y-%m-%d %H:%M:%S")).all()
    assert (out / "new data_forecast.png").read_bytes()[:4] == b"\x89PNG"


def test_rolling_writes_every_window_and_the_metrics(root, folder, tmp_path):
    pd.read_csv(root / "toy.csv").iloc[100:160].to_csv(tmp_path / "recent.csv", index=False)
    assert main([str(folder), str(tmp_path / "recent.csv"), "--out", str(tmp_path / "out"), "--rolling"]) == 0
    assert _files(tmp_path / "out") == {"recent_rolling.csv", "recent_rolling.png", "recent_rolling_metrics.json"}
    frame = pd.read_csv(tmp_path / "out" / "recent_rolling.csv")
    assert frame["window"].nunique() == 60 - 24 + 1 and set(frame["step"]) == set(range(1, 13))
    metrics = json.loads((tmp_path / "out" / "recent_rolling_metrics.json").read_text())
    assert metrics["windows"] == 60 - 24 - 12 + 1
    complete = frame[frame["window"] < metrics["windows"]]
    assert metrics["mse_original"] == pytest.approx(float(((complete["OT"] - complete["OT_true"]) ** 2).mean()))


def test_rolling_split_test_back_tests_the_test_windows_only(root, folder, tmp_path, capsys):
    assert main([str(folder), str(root / "toy.csv"), "--out", str(tmp_path / "out"), "--rolling",
                 "--rolling_split", "test"]) == 0
    frame = pd.read_csv(tmp_path / "out" / "toy_rolling.csv")
    metrics = json.loads((tmp_path / "out" / "toy_rolling_metrics.json").read_text())
    # --data custom on 240 rows: the last int(0.2 * 240) = 48 rows are the test split; its windows read 24 rows
    # before it, so the first starts at row 240 - 48 - 24 and every forecast row is a test row.
    assert frame["window"].min() == 240 - 48 - 24 and metrics["windows"] == 48 - 12 + 1 == frame["window"].nunique()
    assert len(frame) == metrics["windows"] * 12 and frame["OT_true"].notna().all()
    assert main([str(folder), str(root / "toy.csv"), "--rolling_split", "test"]) == 2
    assert capsys.readouterr().err == "error: --rolling_split test picks the windows of a back-test: add --rolling\n"


@pytest.mark.parametrize("case", ["missing column", "too few rows", "text cell", "empty cell", "other step",
                                  "no such file", "no card"])
def test_bad_input_is_one_line_and_writes_nothing(root, folder, tmp_path, capsys, case):
    frame = pd.read_csv(root / "toy.csv").iloc[:80]
    checkpoint = folder
    if case == "missing column":
        frame = frame.drop(columns="x0")
    elif case == "too few rows":
        frame = frame.iloc[:5]
    elif case == "text cell":
        frame = frame.astype({"x1": object})
        frame.loc[70, "x1"] = "oops"
    elif case == "empty cell":
        frame.loc[79, "OT"] = np.nan
    elif case == "other step":
        frame["date"] = pd.date_range("2021-01-01", periods=80, freq="D").strftime("%Y-%m-%d")
    elif case == "no card":
        checkpoint = tmp_path / "old"
        checkpoint.mkdir()
        (checkpoint / "checkpoint.pth").write_bytes((folder / "checkpoint.pth").read_bytes())
    if case != "no such file":
        frame.to_csv(tmp_path / "in.csv", index=False)
    with working_directory(tmp_path):
        assert main([str(checkpoint), "in.csv"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1
    assert not (tmp_path / "predictions").exists()


def _one_error_line(capsys) -> str:
    """The command's stderr: one `error:` line, no traceback."""
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err
    return err


@pytest.mark.parametrize("case", ["a file", "under a file"])
def test_an_out_folder_that_cannot_be_created_is_one_line(root, folder, tmp_path, capsys, case):
    pd.read_csv(root / "toy.csv").iloc[:80].to_csv(tmp_path / "in.csv", index=False)
    (tmp_path / "taken").write_text("a file, not a folder")
    out = tmp_path / "taken" if case == "a file" else tmp_path / "taken" / "out"
    assert main([str(folder), str(tmp_path / "in.csv"), "--out", str(out)]) == 2
    assert "pass --out a folder" in _one_error_line(capsys)
    assert _files(tmp_path) == {"in.csv", "taken"}


def _fail_png(real):
    """`real` (utils.tools' temporary-file writer, or os.replace) failing (disk full) when its last path argument is
    the .png, the second file of a forecast."""

    def call(*args):
        if Path([a for a in args if isinstance(a, (str, Path))][-1]).suffix == ".png":
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(*args)

    return call


def test_a_figure_that_cannot_be_written_leaves_no_csv(root, folder, tmp_path, capsys, monkeypatch):
    pd.read_csv(root / "toy.csv").iloc[:80].to_csv(tmp_path / "in.csv", index=False)
    monkeypatch.setattr(tools, "_temporary_beside", _fail_png(tools._temporary_beside))
    assert main([str(folder), str(tmp_path / "in.csv"), "--out", str(tmp_path / "out")]) == 2
    assert "No space left on device" in _one_error_line(capsys)
    assert _files(tmp_path) == {"in.csv"}  # no csv, no temporary file, not even the folder


def test_a_failed_rewrite_keeps_the_earlier_csv_and_figure(root, folder, tmp_path, capsys, monkeypatch):
    frame = pd.read_csv(root / "toy.csv")
    frame.iloc[:80].to_csv(tmp_path / "in.csv", index=False)
    out = tmp_path / "out"
    assert main([str(folder), str(tmp_path / "in.csv"), "--out", str(out)]) == 0
    before = {name: (out / name).read_bytes() for name in _files(out)}
    frame.iloc[:100].to_csv(tmp_path / "in.csv", index=False)
    monkeypatch.setattr(tools.os, "replace", _fail_png(tools.os.replace))
    assert main([str(folder), str(tmp_path / "in.csv"), "--out", str(out)]) == 2
    _one_error_line(capsys)
    assert {name: (out / name).read_bytes() for name in _files(out)} == before


@pytest.mark.slow
def test_the_module_runs_from_the_shell(folder, tmp_path):
    done = subprocess.run([sys.executable, "-m", "predict", str(folder), str(tmp_path / "absent.csv")], cwd=REPO,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 2 and done.stderr.strip().startswith("error: input file")
    assert done.stderr.count("\n") == 1


def test_run_py_do_predict_writes_beside_the_test_results(root, tmp_path):
    argv = toy_argv(root, "DLinear", "M", "--des", "dopredict")
    folder = checkpoint_folder(argv)
    argv[argv.index("--is_training") + 1] = "0"
    setting = make_setting(parse(argv), 0)
    with working_directory(tmp_path):
        assert run.main([*argv, "--do_predict"]) == 0
    results = tmp_path / "results" / setting
    assert {"forecast.csv", "forecast.png", "real_prediction.npy", "pred.npy"} <= _files(results)
    expected = load_trained(folder).forecast(pd.read_csv(root / "toy.csv"))
    real = np.load(results / "real_prediction.npy")
    assert real.shape == (1, 12, 3)
    np.testing.assert_allclose(real[0], expected[["x0", "x1", "OT"]].to_numpy())
    # --predict_data: another file; without --do_predict it is an error, as is a file that is not there.
    pd.read_csv(root / "toy.csv").iloc[:50].to_csv(tmp_path / "other.csv", index=False)
    with working_directory(tmp_path):
        assert run.main([*argv, "--do_predict", "--predict_data", "other.csv"]) == 0
        forecast = pd.read_csv(results / "forecast.csv")
        assert forecast["date"].iloc[0] == "2021-01-03 02:00:00"
        assert run.main([*argv, "--predict_data", "other.csv"]) == 2
        assert run.main([*argv, "--do_predict", "--predict_data", "absent.csv"]) == 2
    assert np.load(io.BytesIO((results / "real_prediction.npy").read_bytes())).shape == (1, 12, 3)
