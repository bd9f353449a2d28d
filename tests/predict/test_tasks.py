"""The other tasks through the same API and shell command (predict/imputer.py, detector.py, classifier.py,
short_term.py), each against its experiment's own test path: imputation fills exactly what the experiment
reconstructs for the same mask, detection scores rows with the experiment's energy and labels them with the threshold
its test chose, classification gives the experiment's test labels, M4 forecasting the experiment's forecasts."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from exp.arguments import make_setting
from exp.exp_anomaly_detection import Exp_Anomaly_Detection
from exp.exp_classification import Exp_Classification
from exp.exp_imputation import Exp_Imputation
from exp.exp_short_term_forecasting import Exp_Short_Term_Forecast
from predict.cli import main
from predict.load import load_trained
from tests.anomaly_files import write_anomaly_files
from tests.data_provider.m4_synthetic import write_m4
from tests.data_provider.uea_files import toy_dataset
from tests.predict.checkpoints import checkpoint_folder, parse, working_directory, write_hourly_csv
from utils.errors import UserInputError

#: the mission baselines and CAPS beside each task's default-suite model (slow)
OTHERS = ("CAPS", "DLinear", "PatchTST", "iTransformer", "TimesNet")


def models(default: str) -> list:
    """`default` in the default suite, the other mission models as slow cases."""
    return [default, *(pytest.param(m, marks=pytest.mark.slow) for m in OTHERS if m != default)]


COMMON = ["--d_model", "8", "--d_ff", "8", "--n_heads", "2", "--e_layers", "1", "--top_k", "2", "--num_kernels", "2",
          "--num_workers", "0", "--no_progress", "--des", "Exp"]


def _loaded(experiment: type, argv: list[str]):
    args = parse(argv)
    args.is_training = 0
    exp = experiment(args)
    exp._load_for_test(make_setting(args, 0))
    exp.model.eval()
    return exp


def _one_line(call) -> str:
    with pytest.raises(UserInputError) as err:
        call()
    assert "\n" not in str(err.value)
    return str(err.value)


def imputation_argv(root: Path, model: str = "TimesNet", features: str = "M") -> list[str]:
    c_out = "3" if features == "M" else "1"
    return ["--task_name", "imputation", "--is_training", "1", "--root_path", str(root), "--data_path", "toy.csv",
            "--model_id", "toy_mask", "--mask_rate", "0.25", "--model", model, "--data", "custom", "--features",
            features, "--seq_len", "24", "--label_len", "0", "--pred_len", "0", "--enc_in", "3", "--dec_in", "3",
            "--c_out", c_out, "--batch_size", "16", "--checkpoints", str(root / "checkpoints"), *COMMON]


@pytest.mark.parametrize("model", models("TimesNet"))
def test_imputation_fills_what_the_experiment_reconstructs(tmp_path, model):
    write_hourly_csv(tmp_path / "toy.csv")
    argv = imputation_argv(tmp_path, model)
    folder = checkpoint_folder(argv)
    exp = _loaded(Exp_Imputation, argv)
    test_data, _ = exp._get_data("test")
    exp.step.generator = torch.Generator().manual_seed(3)
    batch = tuple(torch.as_tensor(np.asarray(item))[None] for item in test_data[0])
    with torch.no_grad():
        out, _, mask = exp.step.reconstruct(batch, exp.eval_runner)
    hidden = mask[0].numpy() == 0  # [L, C]
    expected = test_data.inverse_transform(out[0].float().numpy())
    raw = pd.read_csv(tmp_path / "toy.csv").iloc[test_data.border1s[2]:test_data.border1s[2] + 24]
    holes = raw.copy()
    for j, name in enumerate(["x0", "x1", "OT"]):
        holes.loc[holes.index[hidden[:, j]], name] = np.nan
    trained = load_trained(folder)
    filled = trained.impute(holes)
    for j, name in enumerate(["x0", "x1", "OT"]):
        np.testing.assert_allclose(filled[name].to_numpy()[hidden[:, j]], expected[hidden[:, j], j], rtol=1e-5,
                                   atol=1e-5)
        np.testing.assert_array_equal(filled[name].to_numpy()[~hidden[:, j]], raw[name].to_numpy()[~hidden[:, j]])
    # The shell command writes the filled file; a table longer than one window is filled everywhere.
    longer = pd.read_csv(tmp_path / "toy.csv").iloc[:70]
    longer.loc[[3, 40, 69], "OT"] = np.nan
    longer.to_csv(tmp_path / "gappy.csv", index=False)
    assert main([str(folder), str(tmp_path / "gappy.csv"), "--out", str(tmp_path / "out")]) == 0
    written = pd.read_csv(tmp_path / "out" / "gappy_imputed.csv")
    assert written["OT"].notna().all() and written.shape == longer.shape
    assert (tmp_path / "out" / "gappy_imputed.png").is_file()


def test_imputation_refuses_holes_it_cannot_fill(tmp_path):
    write_hourly_csv(tmp_path / "toy.csv")
    trained = load_trained(checkpoint_folder(imputation_argv(tmp_path, "TimesNet", "MS")))
    frame = pd.read_csv(tmp_path / "toy.csv").iloc[:30]
    frame.loc[5, "x0"] = np.nan
    assert "column 'x0' is missing" in _one_line(lambda: trained.impute(frame))
    frame.loc[5, "x0"] = 0.0
    frame.loc[6, "OT"] = np.nan
    assert trained.impute(frame)["OT"].notna().all()
    assert ".impute()" in _one_line(lambda: trained.forecast(frame))


@pytest.mark.parametrize("model", models("TimesNet"))
def test_detection_scores_rows_with_the_experiments_energy_and_threshold(tmp_path, model):
    data = tmp_path / "PSM"
    write_anomaly_files("PSM", data, channels=4)
    argv = ["--task_name", "anomaly_detection", "--is_training", "1", "--root_path", str(data), "--model_id", "PSM",
            "--model", model, "--data", "PSM", "--features", "M", "--seq_len", "20", "--pred_len", "0",
            "--label_len", "0", "--enc_in", "4", "--c_out", "4", "--anomaly_ratio", "5", "--batch_size", "32",
            "--checkpoints", str(tmp_path / "checkpoints"), *COMMON]
    with working_directory(tmp_path):
        folder = checkpoint_folder(argv, test=True)
    record = json.loads((tmp_path / "results.jsonl").read_text())
    trained = load_trained(folder)
    assert trained.threshold == record["threshold"]
    exp = _loaded(Exp_Anomaly_Detection, argv)
    test_data = exp._get_data("test")[0]
    windows = torch.from_numpy(np.stack([test_data[0][0], test_data[20][0]]))
    with torch.no_grad():
        out, x = exp.step.predict((windows, None), exp.eval_runner)
    expected = torch.mean((x - out.float()) ** 2, dim=-1).numpy().reshape(-1)  # rows 0..39
    test_csv = pd.read_csv(data / "test.csv")  # the published layout: a timestamp column, then the channels
    result = trained.detect(test_csv.iloc[:40])
    np.testing.assert_allclose(result["score"].to_numpy(), expected, rtol=1e-5, atol=1e-7)
    np.testing.assert_array_equal(result["anomaly"].to_numpy(), (expected > record["threshold"]).astype(int))
    assert main([str(folder), str(data / "test.csv"), "--out", str(tmp_path / "out")]) == 0
    written = pd.read_csv(tmp_path / "out" / "test_anomalies.csv")
    assert list(written.columns) == ["row", "score", "anomaly"] and len(written) == len(test_csv)
    assert "column 'feature_2'" in _one_line(lambda: trained.detect(test_csv.drop(columns="feature_2")))
    assert main([str(folder), str(data / "test.csv"), "--rolling", "--out", str(tmp_path / "out2")]) == 2
    assert not (tmp_path / "out2").exists()


def _unlabelled_copy(path: Path, to: Path) -> Path:
    lines = path.read_text().splitlines()
    out = [("@classLabel false" if line.startswith("@classLabel") else
            (line.rsplit(":", 1)[0] if line and not line.startswith("@") else line)) for line in lines]
    to.write_text("\n".join(out) + "\n")
    return to


@pytest.mark.parametrize("model", models("TimesNet"))
def test_classification_labels_are_the_experiments_test_labels(tmp_path, model):
    toy_dataset(tmp_path / "Toy")
    argv = ["--task_name", "classification", "--is_training", "1", "--root_path", str(tmp_path / "Toy"),
            "--model_id", "Toy", "--model", model, "--data", "UEA", "--batch_size", "4",
            "--checkpoints", str(tmp_path / "checkpoints"), *COMMON]
    folder = checkpoint_folder(argv)
    exp = _loaded(Exp_Classification, argv)
    test_data, loader = exp._get_data("test")
    preds, trues, _ = exp._classify(loader)
    trained = load_trained(folder)
    result = trained.classify(tmp_path / "Toy" / "Toy_TEST.ts")
    assert list(result.frame["label"]) == [test_data.class_names[i] for i in preds]
    assert result.metrics["accuracy"] == pytest.approx(float(np.mean(preds == trues)))
    probs = result.frame[[f"prob_{c}" for c in test_data.class_names]].to_numpy()
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-6)
    # A file without labels: the same predictions, no metrics; the shell writes labels.csv.
    bare = _unlabelled_copy(tmp_path / "Toy" / "Toy_TEST.ts", tmp_path / "new.ts")
    unlabelled = trained.classify(bare)
    assert unlabelled.metrics is None and list(unlabelled.frame["label"]) == list(result.frame["label"])
    assert main([str(folder), str(bare), "--out", str(tmp_path / "out")]) == 0
    assert {p.name for p in (tmp_path / "out").iterdir()} == {"new_labels.csv"}
    long_sample = [np.zeros((trained.args.seq_len + 1, 3))]
    assert "shorten it" in _one_line(lambda: trained.classify(long_sample))


@pytest.mark.parametrize("model", models("DLinear"))
def test_m4_forecasts_are_the_experiments(tmp_path, model):
    write_m4(tmp_path / "m4", counts={"Yearly": 4})
    argv = ["--task_name", "short_term_forecast", "--is_training", "1", "--root_path", str(tmp_path / "m4"),
            "--seasonal_patterns", "Yearly", "--model_id", "m4_Yearly", "--model", model, "--data", "m4",
            "--features", "M", "--enc_in", "1", "--dec_in", "1", "--c_out", "1", "--batch_size", "2", "--loss",
            "SMAPE", "--checkpoints", str(tmp_path / "checkpoints"), *COMMON]
    folder = checkpoint_folder(argv)
    exp = _loaded(Exp_Short_Term_Forecast, argv)
    expected = exp._forecast_last_windows()
    trained = load_trained(folder)
    result = trained.forecast(tmp_path / "m4" / "Yearly-train.csv")
    assert list(result.columns) == ["id", *(f"V{h}" for h in range(1, 7))]
    np.testing.assert_allclose(result.iloc[:, 1:].to_numpy(), expected, rtol=1e-6)
    assert main([str(folder), str(tmp_path / "m4" / "Yearly-train.csv"), "--out", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "Yearly-train_forecast.csv").is_file()


def test_an_m4_model_refuses_a_table_of_time_steps(tmp_path, capsys):
    """An ETT-style CSV (a date column, then one column per variate) is not M4's per-group layout: read as one, each
    of its rows would be forecast as a series of its own. One line saying which layout the model reads instead."""
    write_m4(tmp_path / "m4", counts={"Yearly": 4})
    argv = ["--task_name", "short_term_forecast", "--is_training", "1", "--root_path", str(tmp_path / "m4"),
            "--seasonal_patterns", "Yearly", "--model_id", "m4_Yearly", "--model", "DLinear", "--data", "m4",
            "--features", "M", "--enc_in", "1", "--dec_in", "1", "--c_out", "1", "--batch_size", "2", "--loss",
            "SMAPE", "--checkpoints", str(tmp_path / "checkpoints"), *COMMON]
    folder = checkpoint_folder(argv)
    write_hourly_csv(tmp_path / "hourly.csv", rows=100)
    undated = pd.read_csv(tmp_path / "hourly.csv").drop(columns="date")
    undated.to_csv(tmp_path / "undated.csv", index=False)
    capsys.readouterr()  # what building the checkpoint logged
    for name, found in (("hourly.csv", "its first column 'date' holds dates such as '2021-01-01 00:00:00'"),
                        ("undated.csv", "its first column 'x0' holds numbers such as")):
        assert main([str(folder), str(tmp_path / name), "--out", str(tmp_path / "out")]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err
        assert found in err and "M4's per-group layout" in err and "Yearly-train.csv" in err
        assert not (tmp_path / "out").exists()
        with pytest.raises(UserInputError, match="one row per time step"):
            load_trained(folder).forecast(tmp_path / name)
    # M4's own layout still reads.
    assert main([str(folder), str(tmp_path / "m4" / "Yearly-train.csv"), "--out", str(tmp_path / "out")]) == 0
