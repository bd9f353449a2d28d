"""Short-term forecasting on M4 (exp/exp_short_term_forecasting.py), on small files in the published
format: tiny end-to-end `run.py` runs writing TSLib's files and the M4 summary (checked against a slow
reference), validation and training losses, the four baseline models without time marks, test-only reload, resume."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

import run
from data_provider.data_factory import build_train_split
from data_provider.m4 import FREQUENCIES, HORIZONS
from exp.arguments import build_parser, make_setting
from exp.exp_short_term_forecasting import (
    Exp_Short_Term_Forecast,
    ShortTermStep,
    m4_results_folder,
)
from exp.m4_summary import M4Summary, read_forecasts
from exp.task_lengths import resolve_task_lengths
from tests.data_provider.m4_synthetic import write_m4
from tests.data_provider.test_m4 import Payload
from tests.utils.test_m4_summary import slow_summary
from utils.losses import LOSSES
from utils.m4_summary import M4_GROUPS


@pytest.fixture
def m4(tmp_path, monkeypatch):
    """A working folder holding ./dataset/m4 with 3 series per group (2 for Hourly)."""
    monkeypatch.chdir(tmp_path)
    counts = {**dict.fromkeys(M4_GROUPS, 3), "Hourly": 2}
    return write_m4(tmp_path / "dataset" / "m4", counts=counts)


@pytest.fixture
def quick_plots(monkeypatch):
    """Replace the pdf plots (about a second each on this machine) by empty files of the same names."""
    import exp.exp_short_term_forecasting as module

    monkeypatch.setattr(module, "visual", lambda true, preds, name: Path(name).touch())


def argv(group: str, model: str = "DLinear", *extra: str) -> list[str]:
    return ["--task_name", "short_term_forecast", "--is_training", "1", "--root_path", "./dataset/m4",
            "--seasonal_patterns", group, "--model_id", f"m4_{group}", "--model", model, "--data", "m4",
            "--features", "M", "--e_layers", "1", "--enc_in", "1", "--dec_in", "1", "--c_out", "1",
            "--batch_size", "2", "--d_model", "16", "--d_ff", "16", "--n_heads", "2", "--des", "Exp",
            "--learning_rate", "0.001", "--loss", "SMAPE", "--train_epochs", "1", "--num_workers", "0",
            "--no_progress", "--no_use_gpu", *extra]


def test_six_groups_write_tslib_files_and_the_m4_summary(m4, tmp_path, quick_plots):
    for group in M4_GROUPS:
        assert run.main(argv(group)) == 0
    setting = ("short_term_forecast_m4_Yearly_DLinear_m4_ftM_sl12_ll6_pl6_dm16_nh2_el1_dl1_df16_expand2_dc4_fc1"
               "_ebtimeF_dtTrue_Exp_0")
    assert (tmp_path / "checkpoints" / setting / "checkpoint.pth").is_file()
    assert sorted(p.name for p in (tmp_path / "test_results" / setting).glob("*.pdf")) == ["0.pdf", "1.pdf", "2.pdf"]

    records = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert [r["seasonal_patterns"] for r in records] == list(M4_GROUPS)
    assert [(r["seq_len"], r["pred_len"]) for r in records] == [(2 * HORIZONS[g], HORIZONS[g]) for g in M4_GROUPS]
    assert all(r["m4_summary"] is None for r in records[:-1])
    data, forecasts = {}, {}
    start = 0
    for group in M4_GROUPS:
        frame = pd.read_csv(tmp_path / "m4_results" / "DLinear" / f"{group}_forecast.csv")
        h, n = HORIZONS[group], len(frame)
        assert list(frame.columns) == ["id", *[f"V{i + 1}" for i in range(h)]]
        assert frame["id"].tolist() == [f"{group[0]}{k + 1}" for k in range(n)]
        rows = slice(start, start + n)
        start += n
        forecasts[group] = frame.iloc[:, 1:].to_numpy()
        data[group] = {"forecast": forecasts[group].tolist(), "naive2": [v.tolist() for v in m4["naive2"][rows]],
                       "insample": [v.tolist() for v in m4["training"][rows]],
                       "target": [v.tolist() for v in m4["test"][rows]], "frequency": FREQUENCIES[group]}
    # The per-group scores of each record and the summary of the last one, against the slow reference.
    ref = slow_summary(data)
    for name in ("smape", "mape", "mase", "owa"):
        assert records[-1]["m4_summary"][name] == pytest.approx(ref[name], rel=1e-9), name
    yearly = slow_summary({g: data["Yearly"] for g in M4_GROUPS})
    # The records score the float32 forecasts; the CSV holds them as text (equal to ~1e-7).
    assert records[0]["smape"] == pytest.approx(yearly["smape"]["Yearly"], rel=1e-6)
    assert records[0]["mase"] == pytest.approx(yearly["mase"]["Yearly"], rel=1e-6)
    smape, owa, mape, mase = M4Summary(tmp_path / "m4_results" / "DLinear", tmp_path / "dataset" / "m4").evaluate()
    assert owa == {k: round(v, 3) for k, v in ref["owa"].items()}
    text = (tmp_path / "result_short_term_forecast.txt").read_text()
    assert text.startswith(f"{setting}  \nsmape:{records[0]['smape']}, mape:")
    assert text.count("short_term_forecast_m4_") == 6


def test_test_only_run_reloads_the_checkpoint_and_writes_the_same_forecasts(m4, tmp_path, quick_plots):
    assert run.main(argv("Quarterly", "TimesNet", "--top_k", "2")) == 0
    path = tmp_path / "m4_results" / "TimesNet" / "Quarterly_forecast.csv"
    first = path.read_text()
    path.unlink()
    test_only = argv("Quarterly", "TimesNet", "--top_k", "2")
    test_only[test_only.index("--is_training") + 1] = "0"
    assert run.main(test_only) == 0
    assert path.read_text() == first


@pytest.mark.parametrize("model", ["TimesNet", "PatchTST", "iTransformer", "DLinear"])
@pytest.mark.parametrize("group", ["Yearly", "Hourly"])
def test_models_forecast_m4_without_time_marks(m4, model, group):
    args = build_parser().parse_args(argv(group, model, "--top_k", "3"))
    typed = vars(args).copy()
    exp = Exp_Short_Term_Forecast(args)
    h = HORIZONS[group]
    lengths = exp.args.seq_len, exp.args.label_len, exp.args.pred_len, exp.args.frequency_map
    assert lengths == (2 * h, h, h, FREQUENCIES[group])
    assert vars(args) == typed  # the caller's flags are not rewritten
    x = torch.randn(3, 2 * h, 1)
    out = exp.model(x, None, torch.zeros(3, 2 * h, 1), None)
    assert out.shape == (3, h, 1)
    out.sum().backward()


@pytest.mark.parametrize("loss", list(LOSSES))
def test_training_loss_is_the_criterion_on_insample_target_and_mask(m4, loss):
    args = build_parser().parse_args(argv("Monthly", "DLinear", "--loss", loss))
    exp = Exp_Short_Term_Forecast(args)
    train, _ = exp._get_data("train")
    np.random.seed(0)
    batch = next(iter(torch.utils.data.DataLoader(train, batch_size=3)))
    out, y = exp.step.predict(batch)
    insample, outsample, _, out_mask = (t.float() for t in batch)
    expected_out = exp.model(insample, None, torch.cat([outsample[:, :18], torch.zeros(3, 18, 1)], dim=1), None)
    torch.testing.assert_close(out, expected_out)
    expected = LOSSES[loss](insample, 12, expected_out, outsample[:, -18:], out_mask[:, -18:])
    torch.testing.assert_close(exp.step.loss(out, y), expected)
    assert isinstance(exp.step, ShortTermStep)


def test_vali_scores_last_window_forecasts_against_the_test_values(m4):
    args = build_parser().parse_args(argv("Weekly", "DLinear", "--loss", "MASE"))
    exp = Exp_Short_Term_Forecast(args)
    val, loader = exp._get_data("val")
    windows, _ = exp._get_data("train")[0].last_insample_window()
    x = torch.tensor(windows, dtype=torch.float32)[..., None]
    with torch.no_grad():
        pred = exp.model(x, None, torch.cat([x[:, -13:], torch.zeros(3, 13, 1)], dim=1), None)[..., 0]
    target = torch.tensor(np.stack(m4["test"][9:12]))
    expected = LOSSES["MASE"](torch.tensor(windows), 1, pred.double(), target, torch.ones_like(target))
    assert exp.vali(val, loader) == pytest.approx(float(expected), rel=1e-6)


def test_tslib_forecast_files_without_ids_are_read_in_row_order(tmp_path):
    # TSLib's test sets V1 as the index, so its files hold V1..VH and no id column.
    path = tmp_path / "Yearly_forecast.csv"
    pd.DataFrame({"V1": [1.0, 2.0], "V2": [3.0, 4.0]}).to_csv(path, index=False)
    assert read_forecasts(path, np.array(["Y1", "Y2"]), 2).tolist() == [[1.0, 3.0], [2.0, 4.0]]
    pd.DataFrame({"id": ["Y2", "Y1"], "V1": [2.0, 1.0], "V2": [4.0, 3.0]}).to_csv(path, index=False)
    assert read_forecasts(path, np.array(["Y1", "Y2"]), 2).tolist() == [[1.0, 3.0], [2.0, 4.0]]


@pytest.mark.parametrize("extra, message", [
    (["--data", "ETTh1"], "runs on M4 (--data m4) or a short-term file (--data short_term_csv or tsf)"),
    (["--seasonal_patterns", "Annual"], "--seasonal_patterns 'Annual' is not an M4 group"),
    (["--loss", "L1"], "--loss 'L1' is not supported"),
])
def test_bad_flags_end_in_one_error_line_before_any_output(m4, tmp_path, capsys, extra, message):
    assert run.main(argv("Yearly") + extra) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and message in err and "\n" not in err
    assert not (tmp_path / "checkpoints").exists() and not (tmp_path / "m4_results").exists()


def test_missing_m4_files_end_in_one_error_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert run.main(argv("Yearly")) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: M4 file dataset/m4/M4-info.csv not found; put M4-info.csv and the per-group CSVs "
                          "(Yearly-train.csv, Yearly-test.csv, ..., Hourly-test.csv")
    assert "\n" not in err


def test_a_pickled_training_npz_ends_the_run_in_one_line_and_is_never_unpickled(m4, tmp_path, capsys):
    """N-BEATS's pickled training.npz in place of the CSVs: refused before any code in it can run."""
    marker = tmp_path / "pwned"
    array = np.empty(1, dtype=object)
    array[:] = [Payload(marker)]
    for group in M4_GROUPS:
        (tmp_path / "dataset" / "m4" / f"{group}-train.csv").unlink()
    array.dump(tmp_path / "dataset" / "m4" / "training.npz")
    assert run.main(argv("Yearly")) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: M4 file dataset/m4/training.npz is a pickle") and "\n" not in err
    assert "never unpickles data files" in err and "put the published per-group CSVs" in err
    assert not marker.exists() and not (tmp_path / "checkpoints").exists()


def test_sigterm_then_resume_matches_an_uninterrupted_run(m4, tmp_path, quick_plots, monkeypatch):
    # 3 epochs of 3 one-series batches; the cut points come from numpy's global RNG, whose state last.pth keeps.
    recipe = argv("Monthly", "DLinear", "--batch_size", "1", "--train_epochs", "3", "--patience", "5")
    assert run.main(recipe) == 0
    forecast = tmp_path / "m4_results" / "DLinear" / "Monthly_forecast.csv"
    reference = forecast.read_text()
    # the setting string shows the lengths the task derives from --seasonal_patterns
    setting = make_setting(resolve_task_lengths(build_parser().parse_args(recipe)), 0)
    weights = torch.load(tmp_path / "checkpoints" / setting / "checkpoint.pth")
    shutil.rmtree(tmp_path / "checkpoints")
    forecast.unlink()

    calls = {"train": 0}
    original = Exp_Short_Term_Forecast._predict

    def predict(self, batch, runner=None):
        if runner is None:
            calls["train"] += 1
            if calls["train"] == 3 + 2:
                os.kill(os.getpid(), signal.SIGTERM)
        return original(self, batch, runner)

    with monkeypatch.context() as patch:
        patch.setattr(Exp_Short_Term_Forecast, "_predict", predict)
        assert run.main(recipe) == 128 + signal.SIGTERM
    assert torch.load(tmp_path / "checkpoints" / setting / "last.pth")["progress"]["step"] == 2
    assert run.main([*recipe, "--resume"]) == 0
    assert forecast.read_text() == reference
    resumed = torch.load(tmp_path / "checkpoints" / setting / "checkpoint.pth")
    assert all(torch.equal(resumed[k], weights[k]) for k in weights)


@pytest.mark.parametrize(("model_id", "folder"), [
    ("m4_Monthly", "m4_results/CAPS"),  # TSLib's scripts: TSLib's folder
    ("m4_Monthly_CAPS-official", "m4_results/CAPS/CAPS-official"),  # a runner variant
    ("m4_Monthly_s2021", "m4_results/CAPS/s2021"),  # a runner seed
    ("m4_Monthly_LinAttn_s2022", "m4_results/CAPS/LinAttn_s2022"),
    ("Monthly", "m4_results/CAPS"),
    ("myrun", "m4_results/CAPS/myrun"),
])
def test_each_experiment_of_a_model_keeps_its_own_m4_folder(model_id, folder):
    args = argparse.Namespace(model="CAPS", model_id=model_id, seasonal_patterns="Monthly", data="m4")
    assert m4_results_folder(args) == Path(folder)
    # The six groups of one experiment share the folder the summary reads.
    for group in ("Yearly", "Quarterly", "Weekly", "Daily", "Hourly"):
        other = argparse.Namespace(model="CAPS", model_id=model_id.replace("Monthly", group), seasonal_patterns=group,
                                   data="m4")
        assert m4_results_folder(other) == m4_results_folder(args)
    # Only the whole group name is removed.
    near = argparse.Namespace(model="CAPS", model_id="m4_Monthlyish", seasonal_patterns="Monthly", data="m4")
    assert m4_results_folder(near) == Path("m4_results/CAPS/Monthlyish")


def test_a_run_on_the_real_sktime_monthly_set_writes_finite_scores_and_owa(tmp_path, monkeypatch, quick_plots):
    """One epoch of DLinear on sktime_monthly (three real monthly series, assembled from the installed sktime) under
    the strict protocol: the forecasts file, and the record's sMAPE / MASE / OWA recomputed from it and Naive2."""
    from data_provider.fetch import fetch
    from data_provider.registry import SHORT_TERM_SETS
    from utils.m4_summary import group_scores
    from utils.naive2 import naive2_forecast

    monkeypatch.chdir(tmp_path)
    info = SHORT_TERM_SETS["sktime_monthly"]
    fetch(info.name, tmp_path / "dataset", mirror="", download=False)
    recipe = ["--task_name", "short_term_forecast", "--is_training", "1", "--root_path", f"./dataset/{info.folder}",
              "--data_path", info.file, "--model_id", "sktime_monthly", "--model", "DLinear", "--data", info.data,
              "--pred_len", str(info.horizon), "--seasonality", str(info.seasonality), "--features", "M",
              "--enc_in", "1", "--dec_in", "1", "--c_out", "1", "--batch_size", "2", "--loss", "SMAPE",
              "--learning_rate", "0.001", "--train_epochs", "1", "--num_workers", "0", "--no_progress",
              "--no_use_gpu", "--des", "Exp", "--protocol", "strict"]
    assert run.main(recipe) == 0
    record = json.loads(Path("results.jsonl").read_text().splitlines()[-1])
    assert record["series"] == 3 and record["seasonality"] == 12 and record["m4_summary"] is None
    assert record["setting"].endswith("_sl24_ll12_pl12_dm512_nh8_el2_dl1_df2048_expand2_dc4_fc1_ebtimeF_dtTrue_Exp_0"
                                      "_strict")
    forecast = pd.read_csv(tmp_path / "m4_results" / "strict" / "DLinear" / "sktime_monthly" /
                           "sktime_monthly_forecast.csv")
    assert forecast["id"].tolist() == list(info.lengths)
    frame = pd.read_csv(tmp_path / "dataset" / info.relpath)
    series = [frame.loc[frame.series_id == name, "value"].to_numpy(dtype=float) for name in info.lengths]
    history, target = [s[:-12] for s in series], np.stack([s[-12:] for s in series])
    scores = group_scores(forecast.iloc[:, 1:].to_numpy(), history, target, 12)
    naive2 = group_scores(np.stack([naive2_forecast(h, 12, 12) for h in history]), history, target, 12)
    for key in ("smape", "mase"):
        assert np.isfinite(record[key]) and record[key] == pytest.approx(scores[key], rel=1e-5)
        assert record["naive2"][key] == pytest.approx(naive2[key], rel=1e-12)
    assert record["owa"] == pytest.approx((scores["smape"] / naive2["smape"] + scores["mase"] / naive2["mase"]) / 2,
                                          rel=1e-5)


@pytest.mark.parametrize("protocol", ["tslib", "strict"])
@pytest.mark.parametrize("model", ["Koopa", "OLinear"])
def test_models_built_from_training_statistics_run_on_m4(m4, tmp_path, quick_plots, model, protocol):
    """Koopa and OLinear read their training split when built: on M4 it is the group's training series (under
    strict without their held-out horizon), each a series of its own; the run once stopped at `data_x`."""
    assert run.main(argv("Monthly", model, "--protocol", protocol)) == 0
    strict = protocol == "strict"
    folder = tmp_path / "m4_results" / ("strict" if strict else "") / model
    forecast = pd.read_csv(folder / "Monthly_forecast.csv")
    assert forecast.shape == (3, 1 + HORIZONS["Monthly"]) and np.isfinite(forecast.iloc[:, 1:].to_numpy()).all()
    (card,) = (tmp_path / "checkpoints").glob("*/model_card.json")
    args = build_parser().parse_args(argv("Monthly", model, "--protocol", protocol))
    split = build_train_split(resolve_task_lengths(args))
    assert [len(s) for s in split.segments] == [len(s) - strict * HORIZONS["Monthly"] for s in m4["training"][6:9]]
    assert json.loads(card.read_text())["train_split_fingerprint"] == split.fingerprint
