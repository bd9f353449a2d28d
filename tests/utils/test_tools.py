from __future__ import annotations

import json
import math
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from utils.tools import (
    EarlyStopping,
    adjust_learning_rate,
    append_jsonl,
    atomic_np_save,
    atomic_torch_save,
    scheduled_lr,
)


@pytest.mark.parametrize(
    "lradj,epoch,expected",
    [
        ("type1", 1, 1e-3), ("type1", 2, 5e-4), ("type1", 3, 2.5e-4),
        ("type2", 2, 5e-5), ("type2", 3, None), ("type2", 20, 5e-8),
        ("type3", 2, 1e-3), ("type3", 3, 1e-3), ("type3", 5, 1e-3 * 0.81),
        ("cosine", 5, 1e-3 / 2 * (1 + math.cos(math.pi / 2))),
        ("constant", 4, None), ("onecycle", 4, None),
    ],
)
def test_scheduled_lr_follows_tslib(lradj, epoch, expected):
    got = scheduled_lr(lradj, 1e-3, epoch, train_epochs=10)
    assert got == pytest.approx(expected) if expected is not None else got is None


def test_adjust_learning_rate_sets_every_group():
    a, b = torch.nn.Parameter(torch.zeros(1)), torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.Adam([{"params": [a]}, {"params": [b]}], lr=1e-3)
    adjust_learning_rate(opt, 3, SimpleNamespace(lradj="type1", learning_rate=1e-3, train_epochs=10))
    assert [g["lr"] for g in opt.param_groups] == [2.5e-4, 2.5e-4]


def test_early_stopping_rule_ties_improve_and_patience_counts(tmp_path):
    model = torch.nn.Linear(2, 1)
    stopper = EarlyStopping(patience=2)
    stopper(1.0, model, str(tmp_path), epoch=1)
    assert (tmp_path / "checkpoint.pth").is_file()
    stopper(1.0, model, str(tmp_path), epoch=2)  # tie counts as improvement
    assert (stopper.counter, stopper.best_epoch) == (0, 2)
    stopper(1.5, model, str(tmp_path), epoch=3)
    assert stopper.counter == 1 and not stopper.early_stop
    stopper(1.2, model, str(tmp_path), epoch=4)
    assert stopper.early_stop and stopper.best_epoch == 2


def test_atomic_writers_leave_no_temp_files(tmp_path):
    atomic_torch_save({"a": torch.ones(3)}, tmp_path / "x" / "ckpt.pth")
    atomic_np_save(tmp_path / "x" / "arr.npy", np.arange(4))
    assert sorted(p.name for p in (tmp_path / "x").iterdir()) == ["arr.npy", "ckpt.pth"]
    assert torch.equal(torch.load(tmp_path / "x" / "ckpt.pth")["a"], torch.ones(3))
    np.testing.assert_array_equal(np.load(tmp_path / "x" / "arr.npy"), np.arange(4))


def test_atomic_torch_save_failure_keeps_previous_file(tmp_path):
    target = tmp_path / "ckpt.pth"
    atomic_torch_save({"v": 1}, target)

    class Unpicklable:
        def __reduce__(self):
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        atomic_torch_save({"v": Unpicklable()}, target)
    assert torch.load(target) == {"v": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["ckpt.pth"]


def test_append_jsonl_writes_one_line_per_record(tmp_path):
    path = tmp_path / "r.jsonl"
    append_jsonl(path, {"a": 1})
    append_jsonl(path, {"b": 2})
    assert [json.loads(line) for line in path.read_text().splitlines()] == [{"a": 1}, {"b": 2}]
