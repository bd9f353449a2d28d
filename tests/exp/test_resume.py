"""--resume: a run stopped by SIGTERM/SIGINT (in process) or SIGKILL (a killed subprocess) and resumed ends
with exactly the metrics and weights of an uninterrupted run; damaged or foreign last.pth/checkpoint.pth
files give one error line naming the file."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

import run
from exp.arguments import build_parser, make_setting
from exp.exp_long_term_forecasting import Exp_Long_Term_Forecast

REPO = Path(__file__).resolve().parents[2]
# Dropout, the shuffle, AdamW state, OneCycle and gradient accumulation all have to survive the restart.
BASE_RECIPE = ("--train_epochs", "3", "--optimizer", "adamw", "--lradj", "onecycle", "--grad_accum", "2",
               "--learning_rate", "0.003")


@pytest.fixture(scope="module", params=["tslib", "epoch"], ids=["rng-tslib", "rng-epoch"])
def recipe(request) -> tuple[str, ...]:
    """The recipe under each train-order source (the tslib stream replays a recorded shuffle seed)."""
    return (*BASE_RECIPE, "--rng_stream", request.param)


@pytest.fixture(scope="module")
def reference(tmp_path_factory, toy, toy_csv, results, recipe):
    """One uninterrupted run: its folder, setting, result record and best weights."""
    folder = tmp_path_factory.mktemp("reference")
    toy_csv(folder / "toy.csv")
    argv = toy(folder, *recipe)
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        assert run.main(argv) == 0
    finally:
        os.chdir(cwd)
    setting = make_setting(build_parser().parse_args(argv), 0)
    weights = torch.load(folder / "checkpoints" / setting / "checkpoint.pth")
    return {"folder": folder, "setting": setting, "record": results(folder)[0], "weights": weights}


def assert_same_run(folder: Path, reference: dict, results) -> None:
    record = results(folder)[-1]
    assert (record["mse"], record["mae"], record["epochs_run"]) == (
        reference["record"]["mse"], reference["record"]["mae"], reference["record"]["epochs_run"])
    # The per-epoch losses survive the restart too (the train loss sums are part of last.pth).
    assert record["curve"] == reference["record"]["curve"]
    assert [e["epoch"] for e in record["curve"]] == list(range(1, record["epochs_run"] + 1))
    weights = torch.load(folder / "checkpoints" / reference["setting"] / "checkpoint.pth")
    assert weights.keys() == reference["weights"].keys()
    assert all(torch.equal(weights[k], reference["weights"][k]) for k in weights)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_signal_saves_last_and_resume_matches_uninterrupted(in_tmp, recipe, toy, results, reference, monkeypatch,
                                                            capsys, signum):
    # 22 batches per epoch: the signal arrives during batch 8 of epoch 2, which closes an accumulation group.
    calls = {"train": 0}
    original = Exp_Long_Term_Forecast._predict

    def predict(self, batch, runner=None):
        if runner is None:
            calls["train"] += 1
            if calls["train"] == 22 + 8:
                os.kill(os.getpid(), signum)
        return original(self, batch, runner)

    argv = toy(in_tmp, *recipe)
    with monkeypatch.context() as patch:
        patch.setattr(Exp_Long_Term_Forecast, "_predict", predict)
        assert run.main(argv) == 128 + signum
    err = capsys.readouterr().err.strip()
    last = in_tmp / "checkpoints" / reference["setting"] / "last.pth"
    assert err == (f"interrupted: training stopped by signal {int(signum)} at epoch 2, batch 8; state saved to "
                   f"{last.relative_to(in_tmp)}; run the same command with --resume to continue")
    progress = torch.load(last)["progress"]
    assert (progress["epoch"], progress["step"], progress["loss_count"], progress["finished"]) == (1, 8, 64, False)
    assert [e["epoch"] for e in progress["curve"]] == [1] and set(progress["curve"][0]) == {"epoch", "train", "vali",
                                                                                           "test"}
    assert results(in_tmp) == []
    assert signal.getsignal(signum) is not None and calls["train"] == 30  # handlers restored, nothing ran on
    assert progress["seconds"] > 0

    # The record's train_seconds sums every invocation: pretend the first one took a day.
    state = torch.load(last)
    state["progress"]["seconds"] = 86_400.0
    torch.save(state, last)
    assert run.main([*argv, "--resume"]) == 0
    assert_same_run(in_tmp, reference, results)
    assert 86_400.0 < results(in_tmp)[-1]["train_seconds"] < 86_400.0 + 600


def test_sigkill_mid_epoch_then_resume_matches_uninterrupted(in_tmp, recipe, toy, results, reference):
    argv = toy(in_tmp, *recipe)
    last = in_tmp / "checkpoints" / reference["setting"] / "last.pth"
    # Same thread count as this process, which runs the reference and the resumed half: float reductions
    # are only reproducible at a fixed thread count.
    env = {**os.environ, "OMP_NUM_THREADS": str(torch.get_num_threads())}
    child = subprocess.Popen([sys.executable, str(REPO / "run.py"), *argv, "--save_every_steps", "2"],
                             cwd=in_tmp, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not last.exists() and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait()
    assert child.returncode == -signal.SIGKILL
    progress = torch.load(last)["progress"]
    assert not progress["finished"] and progress["step"] % 2 == 0
    assert results(in_tmp) == []

    assert run.main([*argv, "--resume"]) == 0
    assert_same_run(in_tmp, reference, results)


def _stop_after_epoch(in_tmp: Path, argv: list[str], monkeypatch, epochs: int) -> Path:
    """Run `argv` and SIGTERM it in the first batch after `epochs` finished epochs; returns its last.pth."""
    calls = {"train": 0}
    original = Exp_Long_Term_Forecast._predict

    def predict(self, batch, runner=None):
        if runner is None:
            calls["train"] += 1
            if calls["train"] == 22 * epochs + 1:
                os.kill(os.getpid(), signal.SIGTERM)
        return original(self, batch, runner)

    with monkeypatch.context() as patch:
        patch.setattr(Exp_Long_Term_Forecast, "_predict", predict)
        assert run.main(argv) == 128 + signal.SIGTERM
    return in_tmp / "checkpoints" / make_setting(build_parser().parse_args(argv), 0) / "last.pth"


def _validation_rising_each_epoch(monkeypatch) -> None:
    """Add 10 x the epoch number to every validation/test loss (counted over runs, so a resumed run goes on
    counting): epoch 1 stays the best while later epochs train."""
    calls = {"n": 0}
    original = Exp_Long_Term_Forecast.vali

    def vali(self, data, loader, criterion=None):
        calls["n"] += 1  # two calls per epoch: validation, then test
        return original(self, data, loader, criterion) + 10.0 * ((calls["n"] + 1) // 2)

    monkeypatch.setattr(Exp_Long_Term_Forecast, "vali", vali)


def test_a_resume_from_last_pth_alone_writes_the_best_checkpoint_again(tmp_path, recipe, toy, toy_csv, results,
                                                                       monkeypatch, capsys):
    # The run moved to another machine (compare --resume_copies) with last.pth only: checkpoint.pth holds
    # epoch 1, which the resumed epochs do not beat, so it has to come back from last.pth.
    folders = {name: tmp_path / name for name in ("uninterrupted", "resumed")}
    for folder in folders.values():
        folder.mkdir()
        toy_csv(folder / "toy.csv")
    with monkeypatch.context() as patch:
        patch.chdir(folders["uninterrupted"])
        _validation_rising_each_epoch(patch)
        assert run.main(toy(folders["uninterrupted"], *recipe)) == 0
    setting = make_setting(build_parser().parse_args(toy(folders["uninterrupted"], *recipe)), 0)
    reference = {"setting": setting, "record": results(folders["uninterrupted"])[0],
                 "weights": torch.load(folders["uninterrupted"] / "checkpoints" / setting / "checkpoint.pth")}
    assert (reference["record"]["best_epoch"], reference["record"]["epochs_run"]) == (1, 3)

    monkeypatch.chdir(folders["resumed"])
    _validation_rising_each_epoch(monkeypatch)
    argv = toy(folders["resumed"], *recipe)
    last = _stop_after_epoch(folders["resumed"], argv, monkeypatch, 1)
    (last.parent / "checkpoint.pth").unlink()
    capsys.readouterr()
    assert run.main([*argv, "--resume"]) == 0
    best = (last.parent / "checkpoint.pth").relative_to(folders["resumed"])
    assert f"--resume: {best} was missing; written again from {best.parent / 'last.pth'}" in capsys.readouterr().out
    assert_same_run(folders["resumed"], reference, results)


def test_an_older_last_pth_without_its_best_checkpoint_is_refused_before_training(in_tmp, recipe, toy, results,
                                                                                 monkeypatch, capsys):
    argv = toy(in_tmp, *recipe)
    last = _stop_after_epoch(in_tmp, argv, monkeypatch, 1)
    state = torch.load(last)
    del state["best_model"]  # as versions before it was carried wrote it
    torch.save(state, last)
    (last.parent / "checkpoint.pth").unlink()
    capsys.readouterr()
    assert run.main([*argv, "--resume"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"error: --resume: {(last.parent / 'checkpoint.pth').relative_to(in_tmp)} (the epoch-1 best "
                   f"weights) is missing and {last.relative_to(in_tmp)} was written by an earlier version that "
                   "does not carry them; put checkpoint.pth back beside it, or drop --resume to train again")
    assert results(in_tmp) == [] and torch.load(last)["progress"]["epoch"] == 1


def test_resume_skips_a_trained_and_tested_run(in_tmp, recipe, toy, results, reference, capsys):
    shutil.copytree(reference["folder"] / "checkpoints", in_tmp / "checkpoints")
    assert run.main([*toy(in_tmp, *recipe), "--resume"]) == 0
    assert "already trained and tested; skipping it" in capsys.readouterr().out
    assert results(in_tmp) == []


@pytest.mark.parametrize("config_json", [True, False], ids=["config.json", "last.pth-of-an-earlier-version"])
def test_resume_with_other_flags_is_refused(in_tmp, recipe, toy, reference, capsys, config_json):
    shutil.copytree(reference["folder"] / "checkpoints", in_tmp / "checkpoints")
    folder = Path("checkpoints") / reference["setting"]
    if not config_json:
        (in_tmp / folder / "config.json").unlink()
    argv = toy(in_tmp, *recipe, "--resume")
    argv[argv.index("--learning_rate") + 1] = "0.01"
    assert run.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err
    if config_json:
        assert err.startswith(f"error: {folder} holds a run with other flags: --learning_rate 0.01 (there: 0.003)")
    else:
        assert err.startswith("error: --resume: checkpoints/")
        assert "last.pth was written by a run with other flags: --learning_rate 0.01 (saved: 0.003)" in err


def _forget_flag(last: Path, flag: str) -> None:
    """Rewrite `last` as a library version without `flag` would have written it."""
    state = torch.load(last)
    del state["args"][flag]
    torch.save(state, last)


def test_resume_accepts_a_flag_added_after_the_checkpoint_at_its_default(in_tmp, recipe, toy, reference,
                                                                          capsys):
    shutil.copytree(reference["folder"] / "checkpoints", in_tmp / "checkpoints")
    _forget_flag(in_tmp / "checkpoints" / reference["setting"] / "last.pth", "caps_mark_norm")
    assert run.main([*toy(in_tmp, *recipe), "--resume"]) == 0
    assert "already trained and tested; skipping it" in capsys.readouterr().out


def test_resume_refuses_a_flag_added_after_the_checkpoint_off_its_default(in_tmp, recipe, toy, reference,
                                                                          capsys):
    shutil.copytree(reference["folder"] / "checkpoints", in_tmp / "checkpoints")
    _forget_flag(in_tmp / "checkpoints" / reference["setting"] / "last.pth", "learning_rate")
    assert run.main([*toy(in_tmp, *recipe), "--resume"]) == 2
    assert "--learning_rate 0.003 (saved: None)" in capsys.readouterr().err


@pytest.mark.parametrize("name, mode", [("last.pth", "truncated"), ("last.pth", "garbage"),
                                        ("checkpoint.pth", "truncated"), ("checkpoint.pth", "empty")],
                         ids=["last-truncated", "last-garbage", "best-truncated", "best-empty"])
def test_damaged_checkpoint_is_one_error_line_naming_it(in_tmp, recipe, toy, reference, capsys, name, mode):
    shutil.copytree(reference["folder"] / "checkpoints", in_tmp / "checkpoints")
    path = in_tmp / "checkpoints" / reference["setting"] / name
    if name == "last.pth":
        # A mid-run last.pth is large; cut it as a crash during a non-atomic write would.
        torch.save({"pad": torch.zeros(10_000)}, path)
    data = path.read_bytes()
    path.write_bytes({"truncated": data[: len(data) // 2], "garbage": b"not a checkpoint", "empty": b""}[mode])
    argv = toy(in_tmp, *recipe)
    argv += ["--resume"] if name == "last.pth" else []
    if name == "checkpoint.pth":
        argv[argv.index("--is_training") + 1] = "0"
    assert run.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: checkpoint checkpoints/{reference['setting']}/{name} is truncated or corrupt (")
    assert err.endswith("delete it and train again (without --resume when it is last.pth)") and "\n" not in err


def test_checkpoint_of_another_model_is_one_error_line(in_tmp, recipe, toy, reference, capsys):
    shutil.copytree(reference["folder"] / "checkpoints", in_tmp / "checkpoints")
    setting = reference["setting"]
    best = in_tmp / "checkpoints" / setting / "checkpoint.pth"
    torch.save({"weight": torch.zeros(2)}, best)
    argv = toy(in_tmp, *recipe)
    argv[argv.index("--is_training") + 1] = "0"
    assert run.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: checkpoint checkpoints/{setting}/checkpoint.pth does not fit the model")
