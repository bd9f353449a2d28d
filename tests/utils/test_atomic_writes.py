"""Nothing half-written: a writer that fails part-way leaves the previous file intact and no temporary
file behind; a short append is cut back off so results files never end in half a record. Written files get the
mode the umask gives (0644 under the usual 022), as files written with open() do."""

from __future__ import annotations

import errno
import os
import stat

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


def test_short_append_keeps_a_row_another_writer_appended_meanwhile(tmp_path, monkeypatch):
    """Another writer's row lands between this call opening the file and its (short) write: cutting back
    removes only this call's partial bytes, never the other row."""
    path = tmp_path / "results.jsonl"
    tools.append_jsonl(path, {"mse": 1.0})
    real_write = tools.os.write

    def other_row_then_half(fd, data):
        with open(path, "ab") as other:
            other.write(b'{"other": 1}\n')
        return real_write(fd, data[: len(data) // 2])

    monkeypatch.setattr(tools.os, "write", other_row_then_half)
    with pytest.raises(OSError, match="nothing was kept"):
        tools.append_jsonl(path, {"mse": 2.0, "mae": 3.0})
    assert path.read_bytes() == b'{"mse": 1.0}\n{"other": 1}\n'


def test_append_holds_an_exclusive_lock_while_it_writes(tmp_path, monkeypatch):
    """A second writer (another open file, as another process has) cannot lock the file mid-append."""
    fcntl = pytest.importorskip("fcntl")
    path = tmp_path / "results.jsonl"
    real_write = tools.os.write
    seen = {}

    def probe(fd, data):
        with open(path, "ab") as other:
            try:
                fcntl.flock(other.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                seen["locked_by_other"] = True
            except BlockingIOError:
                seen["locked_by_other"] = False
        return real_write(fd, data)

    monkeypatch.setattr(tools.os, "write", probe)
    tools.append_text(path, "row\n")
    assert seen == {"locked_by_other": False}
    assert path.read_text() == "row\n"


def _fail_for(suffix: str, real):
    """`real` (a writer or os.replace) that raises OSError (disk full) when a path argument ends in `suffix`."""

    def call(*args, **kwargs):
        if any(str(arg).endswith(suffix) for arg in args):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(*args, **kwargs)

    return call


def test_a_group_whose_second_write_fails_writes_nothing(tmp_path, monkeypatch):
    folder = tmp_path / "new" / "out"
    monkeypatch.setattr(tools, "_temporary_beside", _fail_for("b.png", tools._temporary_beside))
    with pytest.raises(OSError, match="No space left"):
        tools.atomic_write_files({folder / "a.csv": b"csv", folder / "b.png": b"png"})
    assert list(tmp_path.iterdir()) == []  # the temporary files and the folders it created are gone


def test_a_group_whose_second_rename_fails_keeps_the_old_pair(tmp_path, monkeypatch):
    files = {tmp_path / "a.csv": b"old csv", tmp_path / "b.png": b"old png"}
    tools.atomic_write_files(files)
    monkeypatch.setattr(tools.os, "replace", _fail_for("b.png", tools.os.replace))
    with pytest.raises(OSError, match="No space left"):
        tools.atomic_write_files({tmp_path / "a.csv": b"new csv", tmp_path / "b.png": b"new png"})
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == {"a.csv": b"old csv", "b.png": b"old png"}


def test_a_group_replaces_every_file_and_leaves_no_temporary_file(tmp_path):
    tools.atomic_write_files({tmp_path / "a.csv": b"old", tmp_path / "b.png": b"old"})
    tools.atomic_write_files({tmp_path / "a.csv": b"new csv", tmp_path / "b.png": b"new png"})
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == {"a.csv": b"new csv", "b.png": b"new png"}


@pytest.mark.parametrize("case", ["a file", "under a file"])
def test_a_group_into_a_path_that_is_no_folder_raises_and_writes_nothing(tmp_path, case):
    (tmp_path / "f").write_bytes(b"keep")
    folder = tmp_path / "f" if case == "a file" else tmp_path / "f" / "sub"
    with pytest.raises((NotADirectoryError, FileExistsError)):
        tools.atomic_write_files({folder / "a.csv": b"csv"})
    assert [p.name for p in tmp_path.iterdir()] == ["f"] and (tmp_path / "f").read_bytes() == b"keep"


@pytest.fixture
def set_umask():
    """Set the process umask for one test; the old one comes back after it."""
    old = os.umask(0o022)
    yield os.umask
    os.umask(old)


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002], ids=["022", "077", "002"])
def test_atomically_written_files_honour_the_umask(tmp_path, set_umask, umask):
    set_umask(umask)
    tools.atomic_write_text(tmp_path / "table.tex", "x")
    tools.atomic_write_bytes(tmp_path / "efficiency.csv", b"x")
    tools.atomic_np_save(tmp_path / "pred.npy", np.arange(2))
    tools.atomic_torch_save({"w": torch.ones(1)}, tmp_path / "checkpoint.pth")
    # A rewrite too: the new file replaces the old one with the mode a new file gets.
    tools.atomic_write_text(tmp_path / "table.tex", "y")
    modes = {p.name: oct(stat.S_IMODE(p.stat().st_mode)) for p in tmp_path.iterdir()}
    assert modes == dict.fromkeys(["table.tex", "efficiency.csv", "pred.npy", "checkpoint.pth"], oct(0o666 & ~umask))


def test_a_temporary_file_beside_is_new_each_time(tmp_path):
    first, path = tools.temporary_file_beside(tmp_path / "x.json")
    second, other = tools.temporary_file_beside(tmp_path / "x.json")
    os.close(first)
    os.close(second)
    assert path != other and path.parent == tmp_path and path.name.startswith(".x.") and path.suffix == ".tmp"
