"""`--task_name zero_shot_forecast`: a pretrained model scored by the long-term test path, on the trained models'
windows and scaling, with the long-term output files; bad input is one line and writes nothing."""

from __future__ import annotations

import numpy as np
import pytest

import run
from data_provider.window_subset import EveryKthWindow
from tests.models.foundation_weights import tiny_fracast


def zero_shot_argv(toy, root, weights, *extra):
    argv = toy(root, "--pretrained_path", str(weights), *extra, model="Fracast")
    argv[argv.index("long_term_forecast")] = "zero_shot_forecast"
    argv[argv.index("--is_training") + 1] = "0"
    return argv


def test_zero_shot_scores_the_trained_models_windows(in_tmp, toy, results):
    pytest.importorskip("fracast")
    weights = tiny_fracast(in_tmp / "weights")
    assert run.main(toy(in_tmp, "--train_epochs", "1")) == 0
    assert run.main(zero_shot_argv(toy, in_tmp, weights)) == 0
    trained, zero_shot = results(in_tmp)
    assert zero_shot["zero_shot"] is True and zero_shot["lookback"] == 24 and zero_shot["epochs_run"] == 0
    assert zero_shot["setting"].startswith("zero_shot_forecast_toy_Fracast_")
    # Same windows, same scaling: the targets are the long-term test's, element for element.
    true_trained = np.load(in_tmp / "results" / trained["setting"] / "true.npy")
    true_zero = np.load(in_tmp / "results" / zero_shot["setting"] / "true.npy")
    np.testing.assert_array_equal(true_zero, true_trained)
    pred = np.load(in_tmp / "results" / zero_shot["setting"] / "pred.npy")
    assert np.isclose(zero_shot["mse"], float(np.mean((pred - true_zero) ** 2)), rtol=1e-6)
    assert zero_shot["setting"] in (in_tmp / "result_long_term_forecast.txt").read_text()


def test_test_every_scores_every_kth_window_and_says_so(in_tmp, toy, results):
    pytest.importorskip("fracast")
    weights = tiny_fracast(in_tmp / "weights")
    assert run.main(zero_shot_argv(toy, in_tmp, weights)) == 0
    assert run.main(zero_shot_argv(toy, in_tmp, weights, "--test_every", "5")) == 0
    full, every = results(in_tmp)
    assert every["setting"] == full["setting"] + "_every5"
    assert every["test_every"] == 5 and every["test_windows_of"] == len(np.load(
        in_tmp / "results" / full["setting"] / "true.npy"))
    sub = np.load(in_tmp / "results" / every["setting"] / "pred.npy")
    np.testing.assert_allclose(sub, np.load(in_tmp / "results" / full["setting"] / "pred.npy")[::5], rtol=1e-5)


@pytest.mark.parametrize("change,message", [
    (("--model", "DLinear"), "error: --model 'DLinear' is not a zero-shot foundation model"),
    (("--model", "Sundial"), "error: --model Sundial (a TSLib zero-shot model) is not wrapped here"),
    (("--test_every", "0"), "error: --test_every 0 must be at least 1"),
])
def test_bad_zero_shot_input_is_one_line_and_writes_nothing(in_tmp, toy, capsys, change, message):
    argv = zero_shot_argv(toy, in_tmp, in_tmp / "weights")
    flag, value = change
    if flag in argv:
        argv[argv.index(flag) + 1] = value
    else:
        argv += [flag, value]
    assert run.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(message) and "\n" not in err
    assert not (in_tmp / "results").exists() and not (in_tmp / "results.jsonl").exists()


def test_absent_weights_folder_is_one_line_and_writes_nothing(in_tmp, toy, capsys):
    pytest.importorskip("fracast")
    assert run.main(zero_shot_argv(toy, in_tmp, in_tmp / "absent")) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: --pretrained_path") and "absent" in err and "\n" not in err
    assert not (in_tmp / "results").exists()


def test_foundation_model_in_a_training_task_points_to_zero_shot(in_tmp, toy, capsys):
    assert run.main(toy(in_tmp, model="Fracast")) == 2
    err = capsys.readouterr().err.strip()
    assert "--task_name zero_shot_forecast" in err and "\n" not in err


def test_every_kth_window_view():
    data = list(range(11))
    view = EveryKthWindow(data, 4)
    assert len(view) == 3 and [view[i] for i in range(3)] == [0, 4, 8]
    with pytest.raises(IndexError):
        view[3]
