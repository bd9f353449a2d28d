"""Dataset_M4 (data_provider/m4.py) on small files in the published M4 format: group selection, the
training windows against a slow reference, TSLib's sampling range, the last input windows, the per-group
CSVs matched to M4-info.csv by id, the pickle-free numpy stand-ins, pickled files refused without running
them, the registry/fetch entries and one-line errors for missing or wrong files."""

from __future__ import annotations

import argparse
import os
import shlex
import zipfile

import numpy as np
import pandas as pd
import pytest

from data_provider import fetch
from data_provider.data_factory import DATA_DICT, build_dataset, build_train_split
from data_provider.m4 import (
    HISTORY_SIZE,
    HORIZONS,
    M4_SERIES_FILES,
    SERIES_COUNTS,
    Dataset_M4,
    check_m4_args,
    load_m4,
    load_naive2,
    missing_m4_files,
)
from data_provider.registry import DATASETS, expand_names
from exp.m4_summary import M4Summary
from tests.conftest import build_configs
from tests.data_provider.m4_synthetic import write_m4, write_sha256sums
from utils.errors import MissingDataError, UserInputError


@pytest.fixture
def m4_root(tmp_path):
    root = tmp_path / "m4"
    written = write_m4(root)
    return root, written


def dataset(root, group: str, flag: str = "train") -> Dataset_M4:
    h = HORIZONS[group]
    return Dataset_M4(None, root_path=str(root), flag=flag, size=[2 * h, h, h], seasonal_patterns=group)


def slow_window(series: list[float], cut: int, seq_len: int, label_len: int, pred_len: int):
    """Training item from the definition: insample[i] = series[cut − L + i], outsample[j] =
    series[cut − Ll + j], zero (mask 0) where that index does not exist."""
    insample, in_mask = [0.0] * seq_len, [0.0] * seq_len
    for i in range(seq_len):
        k = cut - seq_len + i
        if 0 <= k < cut:
            insample[i], in_mask[i] = series[k], 1.0
    outsample, out_mask = [0.0] * (label_len + pred_len), [0.0] * (label_len + pred_len)
    for j in range(label_len + pred_len):
        k = cut - label_len + j
        if 0 <= k < len(series):
            outsample[j], out_mask[j] = series[k], 1.0
    return [insample, outsample, in_mask, out_mask]


def test_groups_in_file_order_and_test_split(m4_root):
    root, written = m4_root
    monthly = dataset(root, "Monthly")
    assert list(monthly.ids) == ["M1", "M2", "M3"]
    assert len(monthly) == 3
    for got, want in zip(monthly.timeseries, written["training"][6:9], strict=True):
        np.testing.assert_array_equal(got, want)
    test = dataset(root, "Monthly", flag="test")
    assert [len(ts) for ts in test.timeseries] == [18, 18, 18]
    np.testing.assert_array_equal(test.timeseries[2], written["test"][8])
    # 'val' reads the test values too (M4 has no validation split).
    np.testing.assert_array_equal(dataset(root, "Monthly", flag="val").timeseries[0], written["test"][6])


@pytest.mark.parametrize("group", list(HORIZONS))
def test_windows_match_the_slow_reference_for_every_cut(m4_root, group):
    root, _ = m4_root
    ds = dataset(root, group)
    h = HORIZONS[group]
    for series in ds.timeseries:
        for cut in range(1, len(series) + 1):
            got = [a[:, 0].tolist() for a in ds.window(series, cut)]
            assert got == slow_window(series.tolist(), cut, 2 * h, h, h), (group, cut)


def test_window_agrees_with_tslib_slicing_when_the_cut_is_past_label_len():
    series = np.arange(1.0, 31.0)  # 30 values
    ds = Dataset_M4.__new__(Dataset_M4)
    ds.seq_len, ds.label_len, ds.pred_len = 12, 6, 6
    for cut in range(6, 30):
        insample, outsample, in_mask, out_mask = ds.window(series, cut)
        # TSLib: insample[-len(w):] = series[max(0, cut − L):cut]; outsample[:len(w)] = series[cut − Ll:cut + H].
        w = series[max(0, cut - 12):cut]
        assert insample[-len(w):, 0].tolist() == w.tolist() and in_mask.sum() == len(w)
        w = series[cut - 6:min(30, cut + 6)]
        assert outsample[:len(w), 0].tolist() == w.tolist() and out_mask.sum() == len(w)


def test_cut_points_follow_numpys_global_rng_in_tslibs_range(m4_root):
    root, _ = m4_root
    ds = dataset(root, "Quarterly")
    limit = int(HISTORY_SIZE["Quarterly"] * 8)
    for index, series in enumerate(ds.timeseries):
        np.random.seed(index)
        item = ds[index]
        np.random.seed(index)
        cut = np.random.randint(low=max(1, len(series) - limit), high=len(series), size=1)[0]
        for got, want in zip(item, ds.window(series, cut), strict=True):
            np.testing.assert_array_equal(got, want)
        assert max(1, len(series) - limit) <= cut < len(series)
    assert item[0].shape == (16, 1) and item[1].shape == (16, 1) and item[0].dtype == np.float64


def test_last_insample_window_pads_short_series_on_the_left():
    ds = Dataset_M4.__new__(Dataset_M4)
    ds.seq_len = 4
    ds.timeseries = [np.array([1.0, 2.0]), np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])]
    windows, mask = ds.last_insample_window()
    assert windows.tolist() == [[0, 0, 1, 2], [3, 4, 5, 6]]
    assert mask.tolist() == [[0, 0, 1, 1], [1, 1, 1, 1]]


def test_csv_rows_are_matched_to_m4_info_by_id_and_right_padding_is_dropped(tmp_path):
    root = tmp_path / "m4"
    written = write_m4(root, counts={"Yearly": 3})
    # Rows in another order, and "NA" as padding (the files use empty cells; both mean "no value").
    lines = (root / "Yearly-train.csv").read_text().splitlines()
    lines[1:] = [",".join(cell or "NA" for cell in line.split(",")) for line in (lines[3], lines[1], lines[2])]
    assert ",NA" in lines[1] + lines[2] + lines[3]
    (root / "Yearly-train.csv").write_text("\n".join(lines) + "\n")
    data = load_m4(root, training=True, groups=["Yearly"])
    assert list(data.ids) == ["Y1", "Y2", "Y3"]
    for got, want in zip(data.values, written["training"], strict=True):
        np.testing.assert_array_equal(got, want)


def test_only_the_requested_groups_are_read(tmp_path):
    root = tmp_path / "m4"
    write_m4(root, counts={"Yearly": 2, "Hourly": 2})
    (root / "Hourly-train.csv").write_text("broken")
    assert list(load_m4(root, training=True, groups=["Yearly"]).ids) == ["Y1", "Y2"]
    # A group M4-info.csv does not list needs no file.
    (root / "Quarterly-train.csv").unlink(missing_ok=True)
    with pytest.raises(UserInputError, match="lists no Quarterly series"):
        dataset(root, "Quarterly")


def rewrite_cell(path, row: int, column: int, text: str) -> None:
    """Set cell (data row `row`, column `column`; 0 = the id) of a CSV to `text`."""
    lines = path.read_text().splitlines()
    cells = lines[row + 1].split(",")
    cells[column] = text
    lines[row + 1] = ",".join(cells)
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize(("edit", "message"), [
    (lambda p: rewrite_cell(p, 1, 0, '"Y9"'), r"Yearly-train.csv holds series Y9, which .*M4-info.csv does not list "
                                            r"as Yearly \(1 such\)"),
    (lambda p: rewrite_cell(p, 1, 0, '"Q1"'), r"holds series Q1, which .* does not list as Yearly"),
    (lambda p: p.write_text("\n".join(p.read_text().splitlines()[:-1]) + "\n"),
     r"Yearly-train.csv lacks series Y3, which .*M4-info.csv lists as Yearly \(1 missing\)"),
    (lambda p: rewrite_cell(p, 1, 0, '"Y1"'), r"Yearly-train.csv lists series Y1 more than once"),
    (lambda p: rewrite_cell(p, 1, 3, "abc"), r"Yearly-train.csv: series Y2 holds 'abc' in column V4, not a number"),
    (lambda p: rewrite_cell(p, 0, 2, "True"), r"series Y1 holds 'True' in column V3, not a number"),
    (lambda p: rewrite_cell(p, 2, 2, "inf"), r"series Y3 has an infinite value in column V3; the published files"),
    (lambda p: rewrite_cell(p, 2, 2, "-Infinity"), r"series Y3 has an infinite value in column V3"),
    (lambda p: rewrite_cell(p, 1, 4, "3e38"), r"Yearly-train.csv: series Y2, column V5 holds 3e\+38, whose square "
                                              r"overflows float32 .*; rescale the series \(e.g. other units\)"),
    (lambda p: rewrite_cell(p, 0, 2, ""), r"series Y1 has an empty cell in column V3 before its last value"),
    (lambda p: rewrite_cell(p, 0, 0, ""), r"Yearly-train.csv: data row 1 has no series id"),
    (lambda p: p.write_text(p.read_text() + '"Y4"' + "," * p.read_text().split("\n")[0].count(",") + "\n"),
     r"Yearly-train.csv: series Y4 has no values"),
    (lambda p: p.write_text(p.read_text() + '"Y4",1,2' + ",3" * 40 + "\n"), r"is not a readable CSV \(.*Expected"),
    (lambda p: p.write_text('"V1"\n"Y1"\n'), r"has 1 column\(s\); expected the series id, then its values"),
    (lambda p: p.write_text(""), r"Yearly-train.csv has 0 column\(s\); expected the series id"),
    (lambda p: p.write_bytes(b'"V1","V2"\n"Y1",\xff\n'), r"Yearly-train.csv is not a readable CSV"),
], ids=["unknown-id", "other-group", "missing-id", "duplicate-id", "text", "bool", "inf", "-inf", "square-overflows",
        "gap", "no-id",
        "empty-row", "too-many-fields", "one-column", "empty-file", "not-utf8"])
def test_bad_csv_files_are_one_line_errors(tmp_path, edit, message):
    root = tmp_path / "m4"
    write_m4(root, counts={"Yearly": 3})
    edit(root / "Yearly-train.csv")
    with pytest.raises(UserInputError, match=message) as err:
        dataset(root, "Yearly")
    assert "\n" not in str(err.value)


def test_test_csv_needs_horizon_values_per_series(tmp_path):
    root = tmp_path / "m4"
    write_m4(root, counts={"Yearly": 2})
    rewrite_cell(root / "Yearly-test.csv", 1, 6, "")
    with pytest.raises(UserInputError, match=r"Yearly-test.csv: series Y2 has 5 test values but M4-info.csv gives "
                                             r"it Horizon 6"):
        dataset(root, "Yearly", flag="test")


def padded(series: list[np.ndarray]) -> np.ndarray:
    out = np.full((len(series), max(len(s) for s in series)), np.nan)
    for i, s in enumerate(series):
        out[i, :len(s)] = s
    return out


def remove_csvs(root) -> None:
    for path in root.glob("*-t*.csv"):
        path.unlink()


def test_pickle_free_numpy_files_stand_in_for_missing_csvs(tmp_path):
    root = tmp_path / "m4"
    written = write_m4(root, counts={"Yearly": 2, "Weekly": 2})
    remove_csvs(root)
    with open(root / "training.npz", "wb") as f:  # .npy content under TSLib's name
        np.save(f, padded(written["training"]), allow_pickle=False)
    np.savez(root / "test.npz", values=padded(written["test"]))
    weekly = dataset(root, "Weekly")
    assert weekly.data_path == str(root / "training.npz") and list(weekly.ids) == ["W1", "W2"]
    np.testing.assert_array_equal(weekly.timeseries[1], written["training"][3])
    np.testing.assert_array_equal(load_m4(root, training=False).values[0], written["test"][0])


@pytest.mark.parametrize(("array", "message"), [
    (np.ones(4), r"holds a 1-D float64 array; expected a 2-D float array"),
    (np.ones((3, 5)), r"has 3 series but M4-info.csv lists 4"),
    (np.array([["a", "b"]] * 4), r"holds a 2-D <U1 array"),
    (np.array([[1.0, np.nan, 2.0]] * 4), r"series Y1 has an empty cell in column V3 before its last value"),
])
def test_bad_numpy_stand_ins_are_one_line_errors(tmp_path, array, message):
    root = tmp_path / "m4"
    write_m4(root, counts={"Yearly": 2, "Weekly": 2})
    remove_csvs(root)
    np.save(root / "values.npy", array)
    (root / "values.npy").rename(root / "training.npz")
    with pytest.raises(UserInputError, match=message):
        dataset(root, "Yearly")
    np.savez(root / "training.npz", a=np.ones((4, 3)), b=np.ones((4, 3)))
    with pytest.raises(UserInputError, match=r"holds arrays \['a', 'b'\]; expected exactly one"):
        dataset(root, "Yearly")


class Payload:
    """Unpickling this runs a shell command that creates `marker` (what a crafted M4 file could do)."""

    def __init__(self, marker) -> None:
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {shlex.quote(str(self.marker))}",)


def malicious(path, marker, form: str) -> None:
    """Write at `path` an object array holding a Payload: N-BEATS's ndarray.dump form (a bare pickle),
    a .npy with an object array, or an .npz holding one."""
    array = np.empty(2, dtype=object)
    array[:] = [np.arange(3.0), Payload(marker)]
    if form == "dump":
        array.dump(path)
    elif form == "npy":
        with open(path, "wb") as f:
            np.save(f, array, allow_pickle=True)
    else:
        with open(path, "wb") as f:
            np.savez(f, array)
    # The file really carries the command (checked without unpickling it, of course).
    raw = zipfile.ZipFile(path).read("arr_0.npy") if form == "npz" else path.read_bytes()
    assert b"system" in raw and str(marker).encode() in raw


@pytest.mark.parametrize("form", ["dump", "npy", "npz"])
def test_a_malicious_pickled_file_is_refused_and_never_run(tmp_path, form):
    root = tmp_path / "m4"
    write_m4(root, counts={"Yearly": 2})
    remove_csvs(root)
    marker = tmp_path / "pwned"
    for name in ("training.npz", "test.npz"):
        malicious(root / name, marker, form)
    for load in (lambda: dataset(root, "Yearly"), lambda: dataset(root, "Yearly", flag="test"),
                 lambda: load_m4(root, training=True), lambda: M4Summary(tmp_path, root).evaluate_full()):
        with pytest.raises(UserInputError) as err:
            load()
        message = str(err.value)
        assert "\n" not in message
        assert f"M4 file {root / 'training.npz'}" in message or f"M4 file {root / 'test.npz'}" in message
        assert "this project never unpickles data files" in message
        assert "put the published per-group CSVs (Yearly-train.csv, Yearly-test.csv, ..., Hourly-test.csv)" in message
        assert "python -m data_provider.fetch m4" in message
    assert not marker.exists()


def test_tslib_folder_with_pickles_beside_the_csvs_reads_the_csvs_only(tmp_path):
    root = tmp_path / "m4"
    written = write_m4(root, counts={"Hourly": 2})
    marker = tmp_path / "pwned"
    for name in ("training.npz", "test.npz"):
        malicious(root / name, marker, "dump")
    np.testing.assert_array_equal(dataset(root, "Hourly").timeseries[1], written["training"][1])
    np.testing.assert_array_equal(dataset(root, "Hourly", flag="test").timeseries[0], written["test"][0])
    assert not marker.exists()


def test_a_file_that_is_no_numpy_file_is_refused(tmp_path):
    root = tmp_path / "m4"
    write_m4(root, counts={"Yearly": 2})
    remove_csvs(root)
    (root / "training.npz").write_bytes(b"cos\nsystem\n(S'true'\ntR.")  # a protocol-0 pickle
    with pytest.raises(UserInputError, match=r"training.npz is neither a .npy nor a .npz array file, and this "
                                             r"project never unpickles data files"):
        dataset(root, "Yearly")


def test_naive2_rows_are_found_by_id(m4_root):
    root, written = m4_root
    picked = load_naive2(root, np.array(["D2", "D1"]))
    assert picked.shape == (2, 14)  # the NaN cells past the horizon are dropped
    np.testing.assert_allclose(picked[0], written["naive2"][13], rtol=1e-15)
    np.testing.assert_allclose(picked[1], written["naive2"][12], rtol=1e-15)


def test_build_dataset_through_the_factory(m4_root):
    root, _ = m4_root
    assert DATA_DICT["m4"] is Dataset_M4
    args = build_configs(task_name="short_term_forecast", data="m4", root_path=str(root), seasonal_patterns="Hourly",
                         seq_len=96, label_len=48, pred_len=48, enc_in=1, c_out=1)
    ds = build_dataset(args, "train")
    assert len(ds) == 3 and ds.seq_len == 96 and ds.window_sampling_limit == 480


@pytest.mark.parametrize("protocol", ["tslib", "strict"])
def test_train_split_holds_each_training_series_on_its_own(m4_root, protocol):
    """What Koopa and OLinear read when built (`build_train_split`): one float32 `[n, 1]` array per series (under
    strict without its held-out last H values), never one array of the concatenated series."""
    root, written = m4_root
    args = build_configs(task_name="short_term_forecast", data="m4", root_path=str(root), seasonal_patterns="Weekly",
                         seq_len=26, label_len=13, pred_len=13, enc_in=1, c_out=1, protocol=protocol)
    split = build_train_split(args)
    cut = 13 if protocol == "strict" else 0
    assert len(split.segments) == 3
    for got, want in zip(split.segments, written["training"][9:12], strict=True):
        assert got.dtype == np.float32 and got.shape == (len(want) - cut, 1)
        np.testing.assert_array_equal(got[:, 0], want[:len(want) - cut].astype(np.float32))


def test_missing_files_name_the_folder_and_the_fetch_command(tmp_path):
    with pytest.raises(MissingDataError) as err:
        dataset(tmp_path / "m4", "Yearly")
    message = str(err.value)
    assert "\n" not in message
    assert str(tmp_path / "m4" / "M4-info.csv") in message
    assert "Yearly-train.csv, Yearly-test.csv, ..., Hourly-test.csv" in message and "submission-Naive2.csv" in message
    assert f"python -m data_provider.fetch m4 --root {tmp_path}" in message
    root = tmp_path / "m4"
    write_m4(root, counts={"Yearly": 2})
    (root / "Yearly-test.csv").unlink()
    with pytest.raises(MissingDataError, match=r"M4 file .*Yearly-test.csv not found; put the published "
                                               r"Yearly-train.csv and Yearly-test.csv in .* beside M4-info.csv, "
                                               r"e.g. with: python -m data_provider.fetch m4"):
        dataset(root, "Yearly", flag="test")
    assert missing_m4_files(root, "Yearly") == [root / "Yearly-test.csv"]
    (root / "submission-Naive2.csv").unlink()
    with pytest.raises(MissingDataError, match=r"submission-Naive2.csv not found; put the M4 competition's"):
        load_naive2(root, np.array(["Y1"]))


def test_bad_info_and_flags_are_one_line_errors(m4_root, tmp_path):
    root, _ = m4_root
    with pytest.raises(UserInputError, match="not an M4 group; valid choices: Yearly, Quarterly"):
        Dataset_M4(None, root_path=str(root), flag="train", size=[12, 6, 6], seasonal_patterns="Annual")
    info = pd.read_csv(root / "M4-info.csv")
    info.iloc[:-1].to_csv(root / "M4-info.csv", index=False)
    with pytest.raises(UserInputError, match=r"Hourly-train.csv holds series H3, which .* does not list as Hourly"):
        dataset(root, "Hourly")
    pd.concat([info, info.iloc[:1]]).to_csv(root / "M4-info.csv", index=False)
    with pytest.raises(UserInputError, match="M4-info.csv lists series Y1 more than once"):
        dataset(root, "Hourly")
    info.drop(columns="SP").to_csv(root / "M4-info.csv", index=False)
    with pytest.raises(UserInputError, match="M4-info.csv lacks the columns SP"):
        dataset(root, "Hourly")


def flags(**overrides) -> argparse.Namespace:
    base = dict(task_name="short_term_forecast", data="m4", seasonal_patterns="Monthly", loss="SMAPE", enc_in=1,
                c_out=1)
    return build_configs(**{**base, **overrides})


def test_check_m4_args():
    check_m4_args(flags())
    check_m4_args(build_configs())  # long-term on ETTh1: nothing to check
    for overrides, pattern in [({"data": "ETTh1"}, r"runs on M4 \(--data m4\) or a short-term file"),
                               ({"task_name": "long_term_forecast"}, "needs --task_name short_term_forecast"),
                               ({"loss": "MAE"}, "--loss 'MAE' is not supported; valid choices: MSE, MAPE"),
                               ({"enc_in": 7}, "univariate: pass --enc_in 1 --c_out 1"),
                               ({"seasonal_patterns": "yearly"}, "not an M4 group")]:
        with pytest.raises(UserInputError, match=pattern):
            check_m4_args(flags(**overrides))


def test_registry_lists_the_m4_files_and_fetch_expands_m4(tmp_path):
    names = ["M4-info.csv", *M4_SERIES_FILES, "submission-Naive2.csv"]
    assert [DATASETS[n].relpath for n in expand_names(["M4"])] == [f"m4/{name}" for name in names]
    assert all(DATASETS[n].data_flag == "m4" for n in expand_names(["m4"]))
    for group, count in SERIES_COUNTS.items():
        train, test = DATASETS[f"M4-{group}-train"], DATASETS[f"M4-{group}-test"]
        assert train.rows == test.rows == count and test.cols == HORIZONS[group] + 1
        assert train.url == f"https://github.com/Mcompetitions/M4-methods/raw/master/Dataset/Train/{group}-train.csv"
        assert test.url == f"https://github.com/Mcompetitions/M4-methods/raw/master/Dataset/Test/{group}-test.csv"
    assert not any(info.relpath.endswith((".npz", ".npy")) for info in DATASETS.values() if info.data_flag == "m4")


def test_fetch_m4_copies_what_the_loader_reads_only_when_checksummed(tmp_path, capsys):
    mirror, dest = tmp_path / "mirror", tmp_path / "dataset"
    written = write_m4(mirror / "m4")
    argv = ["m4", "--root", str(dest), "--mirror", str(mirror), "--offline"]
    # No checksum anywhere: every file is refused, in one line each, and nothing is written.
    assert fetch.main(argv) == 1
    errors = [line for line in capsys.readouterr().out.splitlines() if line.startswith("error:")]
    assert len(errors) == 14 and all("no known checksum" in line for line in errors)
    assert not dest.exists()
    # The mirror's SHA256SUMS vouches for its files.
    write_sha256sums(mirror)
    assert fetch.main(argv) == 0
    for name in ("M4-info.csv", *M4_SERIES_FILES, "submission-Naive2.csv"):
        assert (dest / "m4" / name).read_bytes() == (mirror / "m4" / name).read_bytes()
    np.testing.assert_array_equal(dataset(dest / "m4", "Daily").timeseries[2], written["training"][14])
