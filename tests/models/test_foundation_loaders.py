"""The zero-shot loaders (models/foundation/) on tiny random models saved as release folders: each loads through
--pretrained_path, forecasts `[B, H, C]` finite values that depend on the input; absent weights are one line."""

from __future__ import annotations

import argparse

import pytest
import torch

from models.foundation import foundation_class
from tests.models import foundation_weights as tiny
from utils.errors import UserInputError

CASES = {
    "Fracast": ("fracast", tiny.tiny_fracast),
    "Chronos": ("chronos", tiny.tiny_chronos_bolt),
    "Chronos2": ("chronos", tiny.tiny_chronos2),
    "TimesFM": ("timesfm", tiny.tiny_timesfm),
    "TiRex": ("tirex", tiny.tiny_tirex),
}


def configs(**overrides) -> argparse.Namespace:
    return argparse.Namespace(**{"seq_len": 48, "pred_len": 20, "pretrained_path": None, **overrides})


@pytest.fixture
def tiny_timesfm_class(monkeypatch):
    pytest.importorskip("timesfm")
    from timesfm.timesfm_2p5.timesfm_2p5_torch import TimesFM_2p5_200M_torch_module

    monkeypatch.setattr(TimesFM_2p5_200M_torch_module, "config", tiny.tiny_timesfm_definition())


@pytest.mark.parametrize("name", list(CASES))
def test_tiny_model_forecasts_through_the_loader(name, tmp_path, request):
    package, build = CASES[name]
    pytest.importorskip(package)
    if name == "TimesFM":
        request.getfixturevalue("tiny_timesfm_class")
    torch.manual_seed(0)
    folder = build(tmp_path / name)
    model = foundation_class(name)(configs(pretrained_path=str(folder))).eval()
    x = torch.randn(3, 48, 2)
    with torch.no_grad():
        y = model(x, None, None, None)
        # Each channel is its own series: a trend added to channel 0 changes channel 0's forecast only.
        shifted = x.clone()
        shifted[:, :, 0] += torch.linspace(0.0, 5.0, 48)
        y_shifted = model(shifted, None, None, None)
    assert y.shape == (3, 20, 2) and y.dtype == torch.float32
    assert torch.isfinite(y).all()
    assert (y_shifted[..., 0] - y[..., 0]).abs().max() > 1e-3
    torch.testing.assert_close(y_shifted[..., 1], y[..., 1])
    assert model.describe()["lookback"] == 48


@pytest.mark.parametrize("name", ["Chronos", "Chronos2", "TimesFM", "TiRex", "Fracast"])
def test_missing_weights_folder_is_one_line(name, tmp_path):
    pytest.importorskip(CASES[name][0])
    with pytest.raises(UserInputError) as err:
        foundation_class(name)(configs(pretrained_path=str(tmp_path / "absent")))
    message = str(err.value)
    assert "\n" not in message and "--pretrained_path" in message and "absent" in message


@pytest.mark.parametrize("name", ["Chronos", "TiRex"])
def test_weights_absent_from_hub_cache_is_one_line(name, tmp_path, monkeypatch):
    pytest.importorskip(CASES[name][0])
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(tmp_path))
    with pytest.raises(UserInputError) as err:
        foundation_class(name)(configs())
    message = str(err.value)
    assert "\n" not in message and "Hugging Face cache" in message and "--pretrained_path" in message


def test_look_back_longer_than_the_context_is_refused(tmp_path):
    pytest.importorskip("fracast")
    folder = tiny.tiny_fracast(tmp_path / "fracast")
    with pytest.raises(UserInputError, match="--seq_len 65 is longer than Fracast's context of 64"):
        foundation_class("Fracast")(configs(seq_len=65, pretrained_path=str(folder)))


def test_missing_package_is_one_line(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_chronos(name, *args, **kwargs):
        if name == "chronos" or name.startswith("chronos."):
            raise ImportError("No module named 'chronos'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_chronos)
    monkeypatch.delitem(__import__("sys").modules, "chronos", raising=False)
    with pytest.raises(UserInputError, match="needs the package chronos-forecasting") as err:
        foundation_class("Chronos")(configs())
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("name,fragment", [("Moirai", "not wrapped here"), ("DLinear", "not a zero-shot")])
def test_other_names_are_one_line(name, fragment):
    with pytest.raises(UserInputError, match=fragment):
        foundation_class(name)
