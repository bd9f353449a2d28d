"""No silent NaN (predict/trained.py, issue 65): weights holding NaN are refused when the checkpoint is loaded, even
with a sha256 that matches the card, and a forecast holding NaN or inf is refused instead of written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
import torch

from exp.model_card import CARD_FILE, file_sha256
from predict.cli import main
from predict.load import load_trained
from tests.predict.checkpoints import checkpoint_folder, toy_argv, write_hourly_csv
from utils.errors import UserInputError


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("finite")
    write_hourly_csv(root / "toy.csv")
    pd.read_csv(root / "toy.csv").iloc[:80].to_csv(root / "in.csv", index=False)
    return root


@pytest.fixture(scope="module")
def folder(root) -> Path:
    return checkpoint_folder(toy_argv(root, "DLinear", "MS"))


def _refused(folder: Path, root: Path, out: Path, capsys, *flags: str) -> str:
    assert main([str(folder), str(root / "in.csv"), "--out", str(out), *flags]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err
    assert not out.exists()
    return err


def test_nan_weights_with_a_matching_checksum_are_refused(root, folder, tmp_path, capsys):
    copy = shutil.copytree(folder, tmp_path / "nan")
    state = torch.load(copy / "checkpoint.pth", weights_only=True)
    name = sorted(key for key, value in state.items() if value.is_floating_point())[0]
    state[name].view(-1)[0] = float("nan")
    torch.save(state, copy / "checkpoint.pth")
    card = json.loads((copy / CARD_FILE).read_text())
    card["checkpoint"]["sha256"] = file_sha256(copy / "checkpoint.pth")  # the card vouches for the altered file
    (copy / CARD_FILE).write_text(json.dumps(card))
    err = _refused(copy, root, tmp_path / "out", capsys)
    assert "non-finite weights (NaN or inf: 1 of" in err and name in err


@pytest.mark.filterwarnings("error::RuntimeWarning")  # a numpy overflow warning would be more lines on stderr
@pytest.mark.parametrize("rolling", [False, True], ids=["forecast", "rolling"])
def test_a_forecast_holding_nan_or_inf_is_refused(root, folder, tmp_path, capsys, rolling):
    # A scale so small that the scaled input overflows float32: every field passes the schema, the forecast is inf.
    copy = shutil.copytree(folder, tmp_path / "tiny")
    card = json.loads((copy / CARD_FILE).read_text())
    card["data"]["scaler"]["scale"] = [1e-300] * 3
    (copy / CARD_FILE).write_text(json.dumps(card))
    flags = ["--rolling"] if rolling else []
    err = _refused(copy, root, tmp_path / "out", capsys, *flags)
    assert "NaN or infinite, so it is refused" in err and str(root / "in.csv") in err
    trained, frame = load_trained(copy), pd.read_csv(root / "in.csv")
    with pytest.raises(UserInputError, match="NaN or infinite"):
        trained.rolling(frame) if rolling else trained.forecast(frame)
