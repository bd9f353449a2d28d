"""Nothing half-written: a writer that fails part-way leaves the previous file intact and no temporary
file behind; a short append is cut back off so results files never end in half a record."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from utils import tools


def fail_after_partial_write(f, *args, **kwargs):
    f.write(b"PARTIAL")
    raise OSError("disk full")


@pytest.mark.parametrize("writer", ["torch", "numpy"])
def test_failed_atomic_write_keeps_the_old_file(tmp_path, monkeypatch, writer):
    path = tmp_path / ("ckpt.pth" if writer == "torch" else "pred.npy")
    if writer == "torch":
        tools.atomic_torch_save({"w": torch.ones(2)}, path)
        monkeypatch.setattr(tools.torch, "save", lambda obj, f: fail_after_partial_write(f))
        with pytest.raises(OSError, match="disk full"):
            tools.atomic_torch_save({"w": torch.zeros(2)}, path)
        monkeypatch.undo()
        assert torch.equal(torch.load(path)["w"], torch.ones(2))
    else:
        tools.atomic_np_save(path, np.arange(3))
        monkeypatch.setattr(tools.np, "save", lambda f, array: fail_after_partial_write(f))
        with pytest.raises(OSError, match="disk full"):
            tools.atomic_np_save(path, np.arange(5))
        monkeypatch.undo()
        np.testing.assert_array_equal(np.load(path), np.arange(3))
    assert [p.name for p in tmp_path.iterdir()] == [path.name]


def test_short_append_is_cut_back_off(tmp_path, monkeypatch):
    path = tmp_path / "results.jsonl"
    tools.append_jsonl(path, {"mse": 1.0})
    before = path.read_bytes()
    real_write = tools.os.write
    monkeypatch.setattr(tools.os, "write", lambda fd, data: real_write(fd, data[: len(data) // 2]))
    with pytest.raises(OSError, match="nothing was kept"):
        tools.append_jsonl(path, {"mse": 2.0, "mae": 3.0})
    assert path.read_bytes() == before == b'{"mse": 1.0}\n'
