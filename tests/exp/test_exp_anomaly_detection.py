"""End-to-end `run.py --task_name anomaly_detection` on generated PSM files: TSLib's result file, the
scores recomputed independently from the saved checkpoint, test-only reload, resume skip, bad input."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
import torch
from anomaly_files import write_anomaly_files
from sklearn.metrics import average_precision_score, f1_score, precision_score, recall_score

import run
from data_provider.data_factory import build_dataset
from exp.arguments import build_parser, make_setting
from models import DLinear
from utils.anomaly_metrics import point_adjust

C = 4
LINE = re.compile(r"^Accuracy : (\d\.\d{4}), Precision : (\d\.\d{4}), Recall : (\d\.\d{4}), F-score : (\d\.\d{4}) $")


def argv(root: Path, *extra: str, model: str = "DLinear") -> list[str]:
    return [
        "--task_name", "anomaly_detection", "--is_training", "1", "--root_path", str(root), "--model_id", "PSM",
        "--model", model, "--data", "PSM", "--features", "M", "--seq_len", "20", "--pred_len", "0",
        "--label_len", "0", "--enc_in", str(C), "--c_out", str(C), "--d_model", "8", "--d_ff", "8",
        "--e_layers", "1", "--n_heads", "2", "--top_k", "2", "--anomaly_ratio", "5", "--batch_size", "32",
        "--train_epochs", "2", "--num_workers", "0", "--no_progress", "--no_use_gpu", "--des", "Exp", *extra,
    ]


@pytest.fixture
def psm(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    write_anomaly_files("PSM", tmp_path / "PSM", channels=C)
    return tmp_path / "PSM"


def energies_reference(model: torch.nn.Module, dataset) -> tuple[np.ndarray, np.ndarray]:
    """Window by window, in order: per-step mean squared error over channels, and the labels."""
    energy, labels = [], []
    with torch.no_grad():
        for i in range(len(dataset)):
            x, y = dataset[i]
            x = torch.from_numpy(x)[None]
            out = model(x, None, None, None)
            energy.append(((x - out) ** 2).mean(dim=-1).reshape(-1).numpy())
            labels.append(np.asarray(y).reshape(-1))
    return np.concatenate(energy), np.concatenate(labels)


def test_run_writes_tslib_result_and_scores_recompute(psm):
    args_list = argv(psm)
    assert run.main(args_list) == 0
    args = build_parser().parse_args(args_list)
    setting = make_setting(args, 0)
    assert setting.startswith("anomaly_detection_PSM_DLinear_PSM_ftM_sl20_ll0_pl0_")
    text = Path("result_anomaly_detection.txt").read_text()
    lines = text.split("\n")
    assert lines[0] == f"{setting}  " and LINE.match(lines[1]) and lines[2:] == ["", ""]
    assert (Path("checkpoints") / setting / "checkpoint.pth").is_file()
    assert (Path("test_results") / setting).is_dir()
    record = json.loads(Path("results.jsonl").read_text().splitlines()[-1])

    model = DLinear.Model(args).eval()
    model.load_state_dict(torch.load(Path("checkpoints") / setting / "checkpoint.pth", weights_only=True))
    train_energy, _ = energies_reference(model, build_dataset(args, "train"))
    test_energy, labels = energies_reference(model, build_dataset(args, "test"))
    assert len(test_energy) == (150 - 20 + 1) * 20  # every stride-1 test window, all of its steps
    threshold = np.percentile(np.concatenate([train_energy, test_energy]), 95)
    assert record["threshold"] == pytest.approx(threshold, rel=1e-5)
    gt = labels.astype(int)
    pred = (test_energy > threshold).astype(int)
    adjusted = point_adjust(gt, pred)
    expected = {
        "precision": precision_score(gt, adjusted), "recall": recall_score(gt, adjusted),
        "f_score": f1_score(gt, adjusted), "unadjusted_precision": precision_score(gt, pred, zero_division=0),
        "unadjusted_recall": recall_score(gt, pred), "unadjusted_f_score": f1_score(gt, pred),
        "average_precision": average_precision_score(gt, test_energy),
    }
    for key, value in expected.items():
        assert record[key] == pytest.approx(value, abs=2e-3), key
    printed = [float(v) for v in LINE.match(lines[1]).groups()]
    np.testing.assert_allclose(printed, [record[k] for k in ("accuracy", "precision", "recall", "f_score")],
                               atol=5e-5)
    assert record["f_score"] >= record["unadjusted_f_score"]
    assert record["protocol"] == "tslib" and record["threshold_from"] == "train+test"

    # Test only: reloads the checkpoint and appends the same line.
    assert run.main(argv(psm, "--is_training", "0")) == 0
    again = Path("result_anomaly_detection.txt").read_text().split("\n")
    assert again[3:5] == lines[:2]
    # --resume skips a setting that was trained and tested.
    assert run.main(argv(psm, "--resume")) == 0
    assert Path("result_anomaly_detection.txt").read_text().count(setting) == 2


@pytest.mark.parametrize("bad, message", [
    (["--enc_in", "5"], "--enc_in 5 does not match --data PSM (4 channels)"),
    (["--anomaly_ratio", "150"], "--anomaly_ratio is a percentage"),
    (["--root_path", "nowhere"], "./dataset/PSM/"),
])
def test_bad_input_is_one_line_and_writes_nothing(psm, capsys, bad, message):
    assert run.main(argv(psm, *bad)) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and message in err
    assert not Path("result_anomaly_detection.txt").exists() and not Path("results.jsonl").exists()


def test_sigterm_then_resume_matches_an_uninterrupted_run(tmp_path, monkeypatch, capsys):
    """The forecasting loop's resume carries over: dropout, shuffle and Adam state survive the restart."""
    import os
    import signal

    from exp.exp_long_term_forecasting import Exp_Long_Term_Forecast

    def one_run(folder: Path, interrupt_at: int | None) -> tuple[dict, dict]:
        folder.mkdir()
        monkeypatch.chdir(folder)
        write_anomaly_files("PSM", folder / "PSM", channels=C)
        args_list = argv(folder / "PSM", model="iTransformer")
        if interrupt_at is not None:
            calls = {"train": 0}
            original = Exp_Long_Term_Forecast._predict

            def predict(self, batch, runner=None):
                if runner is None:
                    calls["train"] += 1
                    if calls["train"] == interrupt_at:
                        os.kill(os.getpid(), signal.SIGTERM)
                return original(self, batch, runner)

            with monkeypatch.context() as patch:
                patch.setattr(Exp_Long_Term_Forecast, "_predict", predict)
                assert run.main(args_list) == 128 + signal.SIGTERM
            assert not Path("results.jsonl").exists()
            args_list = [*args_list, "--resume"]
        assert run.main(args_list) == 0
        setting = make_setting(build_parser().parse_args(args_list), 0)
        weights = torch.load(Path("checkpoints") / setting / "checkpoint.pth", weights_only=True)
        return json.loads(Path("results.jsonl").read_text().splitlines()[-1]), weights

    reference, ref_weights = one_run(tmp_path / "reference", None)
    resumed, weights = one_run(tmp_path / "resumed", 6 + 3)  # 6 batches per epoch: epoch 2, batch 3
    capsys.readouterr()
    keys = ("threshold", "f_score", "unadjusted_f_score", "epochs_run")
    assert [resumed[k] for k in keys] == [reference[k] for k in keys]
    assert all(torch.equal(weights[k], ref_weights[k]) for k in ref_weights)


@pytest.mark.slow
def test_torchrun_two_processes_score_like_one(psm):
    """Under torchrun the train and test energies are gathered in window order on rank 0: the threshold and
    the scores equal a single process's on the same checkpoint (slow: two process start-ups)."""
    import os
    import subprocess
    import sys

    args_list = argv(psm, "--train_epochs", "1")
    repo = Path(__file__).resolve().parents[2]
    launched = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
         str(repo / "run.py"), *args_list],
        env={**os.environ, "OMP_NUM_THREADS": "1"}, capture_output=True, text=True, timeout=300)
    assert launched.returncode == 0, launched.stderr[-3000:]
    distributed = json.loads(Path("results.jsonl").read_text().splitlines()[-1])
    assert distributed["world_size"] == 2
    assert Path("result_anomaly_detection.txt").read_text().count("F-score") == 1
    assert run.main(argv(psm, "--train_epochs", "1", "--is_training", "0")) == 0
    single = json.loads(Path("results.jsonl").read_text().splitlines()[-1])
    for key in ("threshold", "accuracy", "f_score", "unadjusted_f_score"):
        assert distributed[key] == pytest.approx(single[key], rel=1e-6), key


@pytest.mark.parametrize(("name", "seq_len", "ratio"), [("Yahoo", 20, 1.5), ("MITDB", 50, 10)])
def test_runs_on_the_real_sktime_series_write_finite_scores(tmp_path, monkeypatch, name, seq_len, ratio):
    """One epoch of DLinear on each labelled series sktime ships (fetched from the installed package), under the
    strict protocol: the record's scores are finite and the threshold comes from train and validation."""
    from data_provider.fetch import fetch
    from data_provider.registry import ANOMALY_CSV_DATASETS

    monkeypatch.chdir(tmp_path)
    info = ANOMALY_CSV_DATASETS[name]
    fetch(name, tmp_path / "dataset", mirror="", download=False)
    argv_real = [
        "--task_name", "anomaly_detection", "--is_training", "1", "--root_path", f"./dataset/{info.folder}",
        "--model_id", name, "--model", "DLinear", "--data", name, "--features", "M", "--seq_len", str(seq_len),
        "--pred_len", "0", "--label_len", "0", "--enc_in", "1", "--c_out", "1", "--anomaly_ratio", str(ratio),
        "--batch_size", "64", "--train_epochs", "1", "--num_workers", "0", "--no_progress", "--no_use_gpu",
        "--des", "Exp", "--protocol", "strict"]
    assert run.main(argv_real) == 0
    record = json.loads(Path("results.jsonl").read_text().splitlines()[-1])
    assert record["data"] == name and record["threshold_from"] == "train+val"
    for key in ("threshold", "accuracy", "precision", "recall", "f_score", "unadjusted_f_score", "average_precision"):
        assert np.isfinite(record[key]), key
    # The test series holds every labelled anomaly: average precision is defined and above chance.
    test_rows = info.rows - int(info.train_ratio * info.rows)
    assert record["average_precision"] > info.anomalies / test_rows / 2
