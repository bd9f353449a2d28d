"""The custom short-term formats (`--data short_term_csv`, `--data tsf`) read into M4's structure, and the real set
sktime_monthly assembled from the installed sktime: splits, windows, one-line format errors, the strict protocol."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from data_provider import fetch as fetch_module
from data_provider.data_factory import build_dataset
from data_provider.fetch import ChecksumError, fetch, package_source
from data_provider.registry import DATASETS, SHORT_TERM_SETS
from data_provider.short_term_files import read_long_csv
from exp.arguments import build_parser, validate_args
from exp.task_lengths import resolve_task_lengths
from utils.errors import UserInputError

H = 3


def configs(root, *extra: str, data: str = "short_term_csv", data_path: str = "toy.csv", horizon: int = H,
            seasonality: int | None = 2):
    argv = ["--task_name", "short_term_forecast", "--is_training", "1", "--model_id", "toy", "--model", "DLinear",
            "--data", data, "--root_path", str(root), "--data_path", data_path, "--pred_len", str(horizon),
            "--enc_in", "1", "--dec_in", "1", "--c_out", "1", "--loss", "SMAPE", *extra]
    if seasonality is not None:
        argv += ["--seasonality", str(seasonality)]
    args = build_parser().parse_args(argv)
    validate_args(args)
    return resolve_task_lengths(args)


def toy_series() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {"a": 10 + rng.random(14), "b": 20 + rng.random(11), "c": 30 + rng.random(9)}


def write_long_csv(path, series: dict[str, np.ndarray], timestamps: bool = True, interleave: bool = True) -> None:
    """The long CSV of `series`; `interleave`: the rows of the series alternate (allowed: each keeps its order)."""
    rows = [(name, f"2020-{1 + t // 28:02d}-{1 + t % 28:02d}", repr(float(v)), t)
            for name, values in series.items() for t, v in enumerate(values)]
    frame = pd.DataFrame(rows, columns=["series_id", "timestamp", "value", "t"])
    if interleave:
        frame = frame.sort_values(["t", "series_id"], kind="stable")
    frame = frame.drop(columns="t" if timestamps else ["t", "timestamp"])
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False)


def test_long_csv_splits_are_the_last_horizon_and_the_rest(tmp_path):
    series = toy_series()
    write_long_csv(tmp_path / "toy.csv", series)
    tslib = {flag: build_dataset(configs(tmp_path), flag) for flag in ("train", "val", "test")}
    strict = {flag: build_dataset(configs(tmp_path, "--protocol", "strict"), flag) for flag in ("train", "val", "test")}
    for i, (name, values) in enumerate(series.items()):
        for split in (tslib, strict):
            assert [d.ids[i] for d in split.values()] == [name] * 3
            assert np.array_equal(split["test"].timeseries[i], values[-H:])
            assert all(np.array_equal(d.history[i], values[:-H]) for d in split.values())
        assert np.array_equal(tslib["train"].timeseries[i], values[:-H])
        assert np.array_equal(tslib["val"].timeseries[i], values[-H:])  # TSLib validates on the test values
        assert np.array_equal(strict["train"].timeseries[i], values[:-2 * H])
        assert np.array_equal(strict["val"].timeseries[i], values[-2 * H:-H])
    train = tslib["train"]
    assert (train.seq_len, train.label_len, train.pred_len, train.seasonality) == (2 * H, H, H, 2)


def test_windows_are_m4s(tmp_path):
    """The training items, cut at every point, against a slow reference of M4's rule."""
    series = toy_series()
    write_long_csv(tmp_path / "toy.csv", series, timestamps=False, interleave=False)
    train = build_dataset(configs(tmp_path), "train")
    for values in train.timeseries:
        for cut in range(1, len(values) + 1):
            insample, outsample, in_mask, out_mask = train.window(values, cut)
            for j in range(2 * H):  # insample[j] = values[cut − L + j]
                k = cut - 2 * H + j
                assert (insample[j, 0], in_mask[j, 0]) == ((values[k], 1.0) if k >= 0 else (0.0, 0.0))
            for j in range(2 * H):  # outsample[j] = values[cut − Ll + j]
                k = cut - H + j
                assert (outsample[j, 0], out_mask[j, 0]) == ((values[k], 1.0) if 0 <= k < len(values) else (0.0, 0.0))
    assert train.window_sampling_limit == 10 * H
    windows, mask = train.last_insample_window()
    assert windows.shape == (3, 2 * H) and np.array_equal(windows[2], train.timeseries[2][-2 * H:])


def _edit(path, row: int, column: str, value: str) -> None:
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    frame.loc[row, column] = value
    frame.to_csv(path, index=False)


BAD_CSV = {
    # (edit, message); line = row + 2. Rows are not interleaved here: rows 0..13 are series a.
    "no-value-column": (lambda p: pd.read_csv(p).drop(columns="value").to_csv(p, index=False),
                        r"the header \(series_id, timestamp\) lacks value"),
    "extra-column": (lambda p: pd.read_csv(p).assign(label=0).to_csv(p, index=False),
                     r"has the column\(s\) label; the long CSV format has the columns series_id, value"),
    "empty-id": (lambda p: _edit(p, 4, "series_id", ""), r"toy.csv line 6: the series_id is empty"),
    "text-value": (lambda p: _edit(p, 5, "value", "n/a"), r"toy.csv line 7, column 'value' holds the text 'n/a'"),
    "bad-timestamp": (lambda p: _edit(p, 2, "timestamp", "yesterday"),
                      r"toy.csv line 4, column 'timestamp' holds 'yesterday', neither a number nor an ISO 8601 date"),
    "timestamp-backwards": (lambda p: _edit(p, 6, "timestamp", "2019-01-01"),
                            r"toy.csv line 8: series a's timestamp '2019-01-01' does not come after"),
    "nan-value": (lambda p: _edit(p, 3, "value", ""), r"toy.csv line 5, column 'value' \(series a\) is missing"),
    "inf-value": (lambda p: _edit(p, 1, "value", "-inf"), r"toy.csv line 3, column 'value' \(series a\) holds -inf, "
                                                          r"which is not a finite number; fix the file"),
    "beyond-float32": (lambda p: _edit(p, 0, "value", "1e40"), r"line 2, column 'value' \(series a\) holds 1e\+40, "
                                                               r"whose square overflows float32"),
    "square-overflows": (lambda p: _edit(p, 0, "value", "-2e19"), r"line 2, column 'value' \(series a\) holds -2e\+19, "
                                                                  r"whose square overflows float32 .*at most 1.845e\+19"
                                                                  r"\); rescale the series"),
    "too-short": (lambda p: pd.read_csv(p).iloc[:-5].to_csv(p, index=False),
                  r"series c has 4 values; --pred_len 3 \(the last 3 test values\) and --seasonality 2 need 6"),
}


@pytest.mark.parametrize("case", list(BAD_CSV))
def test_long_csv_format_errors_are_one_line(tmp_path, case):
    edit, message = BAD_CSV[case]
    write_long_csv(tmp_path / "toy.csv", toy_series(), interleave=False)
    edit(tmp_path / "toy.csv")
    with pytest.raises(UserInputError, match=message) as err:
        build_dataset(configs(tmp_path), "train")
    assert "\n" not in str(err.value)


def test_strict_train_and_val_never_read_the_test_values(tmp_path):
    """A test value (among the last H of series b) poisoned with NaN: the strict train and val splits build, the
    strict test split and the tslib val split (TSLib's validation on the test values) stop on it."""
    series = toy_series()
    write_long_csv(tmp_path / "toy.csv", series, interleave=False)
    _edit(tmp_path / "toy.csv", 14 + 9, "value", "")  # series b's 10th of 11 values: a test value
    message = r"toy.csv line 25, column 'value' \(series b\) is missing"
    for flag in ("train", "val"):
        assert len(build_dataset(configs(tmp_path, "--protocol", "strict"), flag)) == 3
    assert len(build_dataset(configs(tmp_path), "train")) == 3
    for args, flag in ((configs(tmp_path), "val"), (configs(tmp_path, "--protocol", "strict"), "test")):
        with pytest.raises(UserInputError, match=message):
            build_dataset(args, flag)


def test_interleaved_rows_keep_each_series_in_file_order(tmp_path):
    series = toy_series()
    write_long_csv(tmp_path / "toy.csv", series, interleave=True)
    table = read_long_csv(tmp_path / "toy.csv")
    assert table.ids == ["a", "b", "c"]
    assert all(np.array_equal(v, series[k]) for k, v in zip(table.ids, table.values, strict=True))


@pytest.mark.parametrize(("extra", "seasonality", "message"), [
    ([], None, r"--data short_term_csv needs --seasonality m >= 1"),
    ([], 0, r"needs --seasonality m >= 1.*got 0"),
    (["--seasonal_patterns", "Yearly"], 2, r"--seasonal_patterns Yearly names an M4 group"),
    (["--data", "m4"], 2, r"--seasonality 2: M4's comes from --seasonal_patterns \(Monthly: 12\)"),
    (["--enc_in", "2"], 2, r"series are univariate: pass --enc_in 1 --c_out 1"),
    (["--task_name", "long_term_forecast"], 2, r"--data short_term_csv needs --task_name short_term_forecast"),
])
def test_flags_of_the_custom_formats_are_checked(tmp_path, extra, seasonality, message):
    with pytest.raises(UserInputError, match=message):
        configs(tmp_path, *extra, seasonality=seasonality)


def test_seasonality_is_refused_for_other_data():
    args = build_parser().parse_args(["--task_name", "long_term_forecast", "--is_training", "1", "--model_id", "x",
                                      "--model", "DLinear", "--data", "ETTh1", "--seasonality", "12"])
    with pytest.raises(UserInputError, match=r"--seasonality 12 is read by --data short_term_csv and tsf only"):
        validate_args(args)


TSF = """# a tiny file in the Monash forecasting archive's format
@relation toy
@attribute series_name string
@attribute start_timestamp date
@frequency monthly
@horizon 3
@missing true
@equallength false
@data
T_one:2000-01-01 00-00-00:1,2,3,4,5,6,7,8,9,10
T_two:2001-01-01 00-00-00:5,6,7,8,9,10,11,12,13
"""


@pytest.fixture(scope="module")
def tsf_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tsf")
    (folder / "toy.tsf").write_text(TSF)
    (folder / "missing.tsf").write_text(TSF.replace("7,8,9,10\n", "7,8,?,10\n"))
    (folder / "broken.tsf").write_text(TSF.replace("@data\n", ""))
    return folder


def test_tsf_files_read_through_sktime(tsf_folder):
    train = build_dataset(configs(tsf_folder, data="tsf", data_path="toy.tsf"), "train")
    assert list(train.ids) == ["T_one", "T_two"]
    assert np.array_equal(train.timeseries[0], np.arange(1.0, 8.0))
    test = build_dataset(configs(tsf_folder, data="tsf", data_path="toy.tsf"), "test")
    assert np.array_equal(test.timeseries[1], [11.0, 12.0, 13.0])
    with pytest.raises(UserInputError, match=r"toy.tsf sets @horizon 3 and --pred_len is 2; pass --pred_len 3"):
        build_dataset(configs(tsf_folder, data="tsf", data_path="toy.tsf", horizon=2), "train")
    # A missing test value (`?`) stops the split that reads it, in one line naming the series and the position.
    assert len(build_dataset(configs(tsf_folder, data="tsf", data_path="missing.tsf"), "train")) == 2
    with pytest.raises(UserInputError, match=r"missing.tsf: series T_one, value 9 of 10 is missing"):
        build_dataset(configs(tsf_folder, data="tsf", data_path="missing.tsf"), "test")
    with pytest.raises(UserInputError, match=r"broken.tsf: not a readable .tsf file \(Missing @data tag.\)"):
        build_dataset(configs(tsf_folder, data="tsf", data_path="broken.tsf"), "train")


@pytest.fixture(scope="module")
def sktime_monthly(tmp_path_factory):
    root = tmp_path_factory.mktemp("dataset")
    fetch("sktime_monthly", root, mirror="", download=False)
    return root


def test_sktime_monthly_is_assembled_from_the_package_files(sktime_monthly):
    info, entry = SHORT_TERM_SETS["sktime_monthly"], DATASETS["sktime_monthly"]
    frame = pd.read_csv(sktime_monthly / info.relpath)
    assert list(frame.columns) == ["series_id", "timestamp", "value"] and len(frame) == entry.rows
    assert frame.groupby("series_id", sort=False).size().to_dict() == info.lengths
    airline = pd.read_csv(package_source("sktime/datasets/data/Airline/Airline.csv"))
    assert frame.loc[frame.series_id == "Airline", "value"].tolist() == airline["Passengers"].tolist()
    args = configs(sktime_monthly / info.folder, "--protocol", "strict", data_path=info.file, horizon=info.horizon,
                   seasonality=info.seasonality)
    for flag, lengths in (("train", [n - 2 * info.horizon for n in info.lengths.values()]),
                          ("val", [info.horizon] * 3), ("test", [info.horizon] * 3)):
        dataset = build_dataset(args, flag)
        assert list(dataset.ids) == list(info.lengths) and [len(s) for s in dataset.timeseries] == lengths
        assert [len(s) for s in dataset.history] == [n - info.horizon for n in info.lengths.values()]


def test_a_changed_source_file_is_refused_and_nothing_is_written(tmp_path, monkeypatch):
    altered = tmp_path / "Airline.csv"
    altered.write_text(package_source("sktime/datasets/data/Airline/Airline.csv").read_text().replace("112", "113"))
    real = fetch_module.package_source
    monkeypatch.setattr(fetch_module, "package_source",
                        lambda name: altered if name.endswith("Airline.csv") else real(name))
    with pytest.raises(ChecksumError, match=r"sktime_monthly: sha256 of .*Airline.csv does not match the registry "
                                            r"\(another sktime version\?\); nothing was written"):
        fetch("sktime_monthly", tmp_path / "root", mirror="", download=False)
    assert not (tmp_path / "root").exists()
