"""`load_trained(folder).forecast / .rolling` (predict/forecaster.py) against the experiment's own test path: the
forecast of a table ending where the last test window's input ends is that window's test prediction, inverse-scaled;
rolling over the test rows scores what run.py's test scores. Tables in other shapes give the same forecast; bad
tables and altered checkpoints are refused in one line."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

import run
from exp.arguments import make_setting
from exp.exp_long_term_forecasting import Exp_Long_Term_Forecast
from exp.model_card import CARD_FILE, file_sha256
from predict.frames import Table, read_table
from predict.load import load_trained
from tests.predict.checkpoints import (
    checkpoint_folder,
    parse,
    reference_forecast,
    toy_argv,
    working_directory,
    write_hourly_csv,
)
from utils.errors import UserInputError

CASES = [("DLinear", "M"), ("CAPS", "MS"), ("iTransformer", "S")]


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("forecast")
    write_hourly_csv(root / "toy.csv")
    return root


@pytest.fixture(scope="module")
def folders(root) -> dict[tuple[str, str], Path]:
    return {case: checkpoint_folder(toy_argv(root, *case)) for case in CASES}


def _last_window_end(test_data, pred_len: int) -> int:
    """The row after the last test window's input: the file's rows up to it are that window's history."""
    return test_data.border2s[2] - pred_len


@pytest.mark.parametrize(("model", "features"), CASES, ids=[f"{m}-{f}" for m, f in CASES])
def test_forecast_is_the_test_prediction_of_the_last_window(root, folders, model, features):
    argv = toy_argv(root, model, features)
    expected, test_data = reference_forecast(argv)
    raw = pd.read_csv(root / "toy.csv")
    end = _last_window_end(test_data, 12)
    trained = load_trained(folders[(model, features)])
    forecast = trained.forecast(raw.iloc[:end])
    columns = ["x0", "x1", "OT"] if features == "M" else ["OT"]
    assert list(forecast.columns) == ["date", *columns]
    np.testing.assert_allclose(forecast[columns].to_numpy(), expected, rtol=1e-5, atol=1e-5)
    # The timestamps continue the file's hourly steps: those of the rows the window forecasts.
    truth_dates = pd.to_datetime(raw["date"].iloc[end:end + 12]).to_numpy()
    np.testing.assert_array_equal(pd.to_datetime(forecast["date"]).to_numpy(), truth_dates)


def test_rolling_scores_the_test_windows_as_the_experiment_does(root, folders):
    argv = toy_argv(root, "CAPS", "MS")
    args = parse(argv)
    args.is_training = 0
    exp = Exp_Long_Term_Forecast(args)
    exp._load_for_test(make_setting(args, 0))
    test_data, loader = exp._get_data("test")
    preds, trues = exp._forecast(test_data, loader)  # standardised, the scored channel
    raw = pd.read_csv(root / "toy.csv")
    trained = load_trained(folders[("CAPS", "MS")])
    result = trained.rolling(raw.iloc[test_data.border1s[2]:test_data.border2s[2]])
    assert result.metrics["windows"] == len(test_data)
    assert result.metrics["mse"] == pytest.approx(float(np.mean((preds - trues) ** 2)), rel=1e-5)
    assert result.metrics["mae"] == pytest.approx(float(np.mean(np.abs(preds - trues))), rel=1e-5)
    # Window w's forecast is forecast() of the rows up to it; past the table's end there is no truth.
    frame = result.frame
    last = frame[frame["window"] == frame["window"].max()]
    alone = trained.forecast(raw.iloc[test_data.border1s[2]:test_data.border2s[2]])
    np.testing.assert_allclose(last["OT"].to_numpy(), alone["OT"].to_numpy(), rtol=1e-6, atol=1e-6)
    assert last["OT_true"].isna().all()
    first = frame[frame["window"] == 0]
    np.testing.assert_allclose(first["OT_true"].to_numpy(), raw["OT"].iloc[test_data.border1s[2] + 24:][:12])
    # On the whole file, split "test" back-tests those windows only (named by their first row in the file); "all"
    # scores the training windows too.
    split = trained.rolling(raw, "test")
    assert split.metrics["windows"] == len(test_data) and split.frame["OT_true"].notna().all()
    assert split.metrics["mse"] == pytest.approx(float(np.mean((preds - trues) ** 2)), rel=1e-5)
    assert sorted(set(split.frame["window"])) == list(range(test_data.border1s[2], test_data.border2s[2] - 24 - 12 + 1))
    assert trained.rolling(raw).metrics["windows"] == len(raw) - 24 - 12 + 1 > len(test_data)


def test_a_split_without_a_whole_window_or_an_unknown_split_is_one_line(root, folders):
    trained = load_trained(folders[("DLinear", "M")])
    raw = pd.read_csv(root / "toy.csv")
    # 40 rows as --data custom splits them: 8 test rows, fewer than one window of 24 + 12 rows reaches into them.
    with pytest.raises(UserInputError, match=r"--rolling_split test: the test split of the DataFrame .* holds no "
                                             r"window of --seq_len 24 \+ --pred_len 12 rows; pass the whole file"):
        trained.rolling(raw.iloc[:40], "test")
    with pytest.raises(UserInputError, match="--rolling_split 'tests' is not one of all, train, val, test"):
        trained.rolling(raw, "tests")


def test_other_layouts_of_the_same_rows_forecast_the_same(root, folders, tmp_path):
    trained = load_trained(folders[("DLinear", "M")])
    raw = pd.read_csv(root / "toy.csv")
    plain = trained.forecast(raw.iloc[:200])
    # More rows before, shuffled columns, an extra column, another file name.
    shuffled = raw.iloc[:200][["OT", "date", "x1", "x0"]].assign(note="x")
    shuffled.to_csv(tmp_path / "another name.csv", index=False)
    other = trained.forecast(read_table(tmp_path / "another name.csv"))
    pd.testing.assert_frame_equal(other, plain)
    np.testing.assert_allclose(trained.forecast(raw.iloc[150:200])[["x0", "x1", "OT"]], plain[["x0", "x1", "OT"]])


def _one_line(call) -> str:
    with pytest.raises(UserInputError) as err:
        call()
    message = str(err.value)
    assert "\n" not in message
    return message


def test_bad_tables_are_one_line_naming_the_row_and_column(root, folders, tmp_path):
    trained = load_trained(folders[("DLinear", "M")])
    raw = pd.read_csv(root / "toy.csv").iloc[:100]
    assert "column 'x1'" in _one_line(lambda: trained.forecast(raw.drop(columns="x1")))
    assert "give at least 24 rows" in _one_line(lambda: trained.forecast(raw.iloc[:10]))
    text = raw.astype({"OT": object})
    text.loc[90, "OT"] = "n/a"
    assert "line 92, column 'OT' holds 'n/a'" in _one_line(
        lambda: trained.forecast(Table(text, "new.csv", from_csv=True)))
    missing = raw.copy()
    missing.loc[95, "x0"] = np.nan
    assert "row 95 (from 0), column 'x0' is missing" in _one_line(lambda: trained.forecast(missing))
    huge = raw.copy()
    huge.loc[96, "x1"] = 3e38
    assert "row 96 (from 0), column 'x1' holds 3e+38, whose square overflows float32" in _one_line(
        lambda: trained.forecast(huge))
    quarter = raw.assign(date=pd.date_range("2021-01-01", periods=100, freq="15min").astype(str))
    assert "00:15:00 after the row before; the model was trained on rows 01:00:00 apart" in _one_line(
        lambda: trained.forecast(quarter))
    gap = raw.drop(index=90)
    assert "row 90 (from 0), column 'date' is 2021-01-04 19:00:00, 02:00:00 after" in _one_line(
        lambda: trained.forecast(gap))
    bad_date = raw.astype({"date": object})
    bad_date.loc[99, "date"] = "yesterday"
    assert "'yesterday'" in _one_line(lambda: trained.forecast(bad_date))
    # Rows the model does not read are not checked.
    early = raw.copy()
    early.loc[3, "x0"] = np.nan
    pd.testing.assert_frame_equal(trained.forecast(early), trained.forecast(raw))


def test_a_folder_copied_elsewhere_forecasts_identically(root, folders, tmp_path):
    source = folders[("CAPS", "MS")]
    copy = shutil.copytree(source, tmp_path / "moved" / "anything")
    raw = pd.read_csv(root / "toy.csv").iloc[:120]
    pd.testing.assert_frame_equal(load_trained(copy).forecast(raw), load_trained(source).forecast(raw))


class _Payload:
    """What an unpickler would build (weights_only refuses to)."""


def test_altered_or_foreign_checkpoints_are_refused_in_one_line(folders, tmp_path):
    folder = Path(shutil.copytree(folders[("DLinear", "M")], tmp_path / "copy"))
    weights = folder / "checkpoint.pth"
    state = torch.load(weights, weights_only=True)
    state[next(iter(state))] += 1.0
    torch.save(state, weights)
    assert "sha256 differs" in _one_line(lambda: load_trained(folder))
    # A foreign file whose card was rewritten to match: the loader still refuses it.
    card = json.loads((folder / CARD_FILE).read_text())
    for foreign in (b"not a checkpoint at all", None):
        if foreign is None:
            torch.save({"x": _Payload()}, weights)
        else:
            weights.write_bytes(foreign)
        card["checkpoint"]["sha256"] = file_sha256(weights)
        (folder / CARD_FILE).write_text(json.dumps(card))
        assert "checkpoint.pth" in _one_line(lambda: load_trained(folder))
    (folder / CARD_FILE).unlink()
    assert "--is_training 0" in _one_line(lambda: load_trained(folder))


def test_models_built_from_training_statistics_need_the_training_file(root, tmp_path):
    folder = checkpoint_folder(toy_argv(root, "OLinear", "M"))
    assert "root_path" in _one_line(lambda: load_trained(folder))
    trained = load_trained(folder, root_path=str(root))
    raw = pd.read_csv(root / "toy.csv")
    assert trained.forecast(raw).shape == (12, 4)
    other = tmp_path / "other"
    other.mkdir()
    write_hourly_csv(other / "toy.csv", seed=5)
    assert "fingerprint" in _one_line(lambda: load_trained(folder, root_path=str(other)))


def test_a_forecaster_has_no_other_tasks_methods(folders):
    trained = load_trained(folders[("DLinear", "M")])
    assert ".forecast()" in _one_line(lambda: trained.impute(pd.DataFrame()))


#: CAPS and the mission baselines, in each --features mode; the default suite trains DLinear (M) only
ROUND_TRIPS = [pytest.param(model, features, marks=[] if (model, features) == ("DLinear", "M") else pytest.mark.slow)
               for model in ("DLinear", "CAPS", "PatchTST", "iTransformer", "TimesNet") for features in ("M", "S", "MS")]


@pytest.mark.parametrize(("model", "features"), ROUND_TRIPS)
def test_train_then_forecast_on_etth1(tmp_path, data_mirror, caplog, model, features):
    """The acceptance round trip through run.py on ETTh1 (1 epoch): the forecast of the rows up to the last test
    window's input is that window's test prediction, inverse-scaled."""
    channels = "1" if features == "S" else "7"
    c_out = "7" if features == "M" else "1"
    argv = ["--task_name", "long_term_forecast", "--is_training", "1", "--root_path", str(data_mirror / "ETT-small"),
            "--data_path", "ETTh1.csv", "--model_id", "rt", "--model", model, "--data", "ETTh1", "--features",
            features, "--seq_len", "96", "--label_len", "48", "--pred_len", "24", "--enc_in", channels, "--dec_in",
            channels, "--c_out", c_out, "--d_model", "8", "--d_ff", "16", "--n_heads", "2", "--e_layers", "1",
            "--top_k", "2", "--num_kernels", "2", "--batch_size", "256", "--train_epochs", "1", "--num_workers", "0",
            "--no_progress", "--des", "rt", "--checkpoints", str(tmp_path / "checkpoints")]
    caplog.set_level(logging.WARNING)
    with working_directory(tmp_path):
        assert run.main(argv) == 0
    expected, test_data = reference_forecast(argv)
    raw = pd.read_csv(data_mirror / "ETT-small" / "ETTh1.csv")
    trained = load_trained(tmp_path / "checkpoints" / make_setting(parse(argv), 0))
    forecast = trained.forecast(raw.iloc[:_last_window_end(test_data, 24)])
    columns = list(raw.columns[1:]) if features == "M" else ["OT"]
    assert list(forecast.columns) == ["date", *columns]
    np.testing.assert_allclose(forecast[columns].to_numpy(), expected, rtol=1e-5, atol=1e-4)
