"""Issue 49 §8: NaN/inf caused by the data are blamed on the data. A UEA file with a dimension that has no value
at all, or values beyond float32's range, is rejected when read, naming the file, sample and dimension; a
non-finite training loss whose input batch holds NaN/inf names the data file and split first, not the
learning rate."""

from __future__ import annotations

import numpy as np
import pytest

import run
from exp.exp_long_term_forecasting import Exp_Long_Term_Forecast
from tests.data_provider.uea_files import toy_dataset, write_ts
from tests.exp.test_exp_classification import toy_argv as uea_argv


def spoil_uea(folder, edit) -> None:
    """Rewrite Toy_TRAIN.ts with `edit(samples)` applied (sample 5 of the TRAIN file)."""
    train, labels, _, _ = toy_dataset(folder)
    edit(train[5])
    write_ts(folder / "Toy_TRAIN.ts", train, labels, ["a", "b", "c"])


@pytest.mark.parametrize(("edit", "message"), [
    (lambda s: s.__setitem__((slice(None), 1), np.nan),
     "error: {path}: sample 5 (from 0), dimension 1 has no value at all (every step is missing), so it cannot be "
     "interpolated; fill or drop that sample in the file"),
    (lambda s: s.__setitem__((3, 2), 1e39),
     "error: {path}: sample 5 (from 0), dimension 2, step 3 holds 1e+39, whose square overflows float32 (the models, "
     "their normalisation and the losses square the values, so |x| must be at most 1.845e+19); rescale the "
     "dimension (e.g. other units) or fix the file"),
    (lambda s: s.__setitem__((3, 2), -2e19),
     "error: {path}: sample 5 (from 0), dimension 2, step 3 holds -2e+19, whose square overflows float32 (the "
     "models, their normalisation and the losses square the values, so |x| must be at most 1.845e+19); rescale "
     "the dimension (e.g. other units) or fix the file"),
], ids=["all-nan-dimension", "beyond-float32", "square-overflows-float32"])
def test_uea_data_the_model_cannot_use_is_rejected_when_read(tmp_path, monkeypatch, capsys, edit, message):
    monkeypatch.chdir(tmp_path)
    spoil_uea(tmp_path / "Toy", edit)
    assert run.main(uea_argv(tmp_path / "Toy")) == 2
    assert capsys.readouterr().err == message.format(path=tmp_path / "Toy" / "Toy_TRAIN.ts") + "\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["Toy"]


def test_a_non_finite_loss_from_a_nan_input_batch_names_the_data(in_tmp, toy, capsys, results, monkeypatch):
    original = Exp_Long_Term_Forecast._predict

    def predict(self, batch, runner=None):
        if runner is None:
            batch[0][1, 4:6, 2] = float("nan")  # windows 1 of the batch: two steps of channel 2
        return original(self, batch, runner)

    monkeypatch.setattr(Exp_Long_Term_Forecast, "_predict", predict)
    assert run.main(toy(in_tmp, "--train_epochs", "1", model="DLinear")) == 1
    err = capsys.readouterr().err
    assert err == (f"error: non-finite training loss (nan) at epoch 1, batch 1; the input batch itself holds NaN or "
                   f"inf (batch tensor 0: 2 values, first in window 1) read from {in_tmp / 'toy.csv'} (train split), "
                   "so the data produced it, not the learning rate; check the file for missing or extreme values "
                   "(--fillna fills missing ones in CSV files)\n")
    assert results(in_tmp) == []
