"""compare.run.archive: pack and restore give back the comparison folder byte for byte; restore refuses a
non-empty folder unless forced, and any archive with an absolute, `..`, link or device member (then
nothing is written)."""

from __future__ import annotations

import io
import runpy
import sys
import tarfile
from pathlib import Path

import pytest

from compare.run import archive
from utils.errors import UserInputError


def make_comparison(out: Path) -> dict[str, bytes]:
    """A small comparison folder; returns {relative path: contents}."""
    files = {
        "compare.json": b'{"data": ["toy"]}\n',
        "table.md": b"| toy |\n",
        "runs/results.jsonl": b'{"setting": "s", "mse": 0.5}\n',
        "runs/compare_runs.jsonl": b'{"status": "interrupted"}\n',
        "runs/checkpoints/s/last.pth": bytes(range(256)) * 40,
        "runs/logs/s.log": b"interrupted: training stopped by signal 15\n",
    }
    for name, data in files.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_bytes(data)
    (out / "runs" / "results" / "empty").mkdir(parents=True)
    return files


def tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("name", ["grid.tar.gz", "grid.tgz", "grid.tar.xz", "grid.tar"])
def test_round_trip_is_byte_for_byte(tmp_path, name):
    files = make_comparison(tmp_path / "out")
    packed = tmp_path / "archives" / name
    assert archive.pack(tmp_path / "out", packed) == len(files)
    assert [p.name for p in packed.parent.iterdir()] == [name]  # no temporary file left beside it
    assert archive.restore(packed, tmp_path / "new" / "out") == len(files)
    assert tree(tmp_path / "new" / "out") == files
    assert (tmp_path / "new" / "out" / "runs" / "results" / "empty").is_dir()
    assert sorted(p.name for p in (tmp_path / "new").iterdir()) == ["out"]  # the staging folder is gone


def test_an_archive_inside_the_folder_does_not_pack_itself(tmp_path):
    files = make_comparison(tmp_path / "out")
    packed = tmp_path / "out" / "grid.tar.gz"
    archive.pack(tmp_path / "out", packed)
    archive.pack(tmp_path / "out", packed)
    with tarfile.open(packed) as tar:
        assert sorted(m.name for m in tar.getmembers() if m.isfile()) == sorted(files)


def test_restore_refuses_a_non_empty_folder_unless_forced(tmp_path):
    files = make_comparison(tmp_path / "out")
    packed = tmp_path / "grid.tar.gz"
    archive.pack(tmp_path / "out", packed)
    target = tmp_path / "target"
    target.mkdir()
    (target / "stale.txt").write_text("old")
    with pytest.raises(UserInputError, match="is not empty; restore into a new folder or pass --force"):
        archive.restore(packed, target)
    assert tree(target) == {"stale.txt": b"old"}
    archive.restore(packed, target, force=True)
    assert tree(target) == files  # replaced, not merged
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grid.tar.gz", "out", "target"]


def test_restore_into_an_empty_folder(tmp_path):
    files = make_comparison(tmp_path / "out")
    archive.pack(tmp_path / "out", tmp_path / "grid.tar")
    (tmp_path / "empty").mkdir()
    archive.restore(tmp_path / "grid.tar", tmp_path / "empty")
    assert tree(tmp_path / "empty") == files


def evil_archive(path: Path, member: tarfile.TarInfo, data: bytes = b"x") -> Path:
    """An archive with a normal comparison file plus `member`."""
    with tarfile.open(path, "w:gz") as tar:
        good = tarfile.TarInfo("compare.json")
        good.size = 2
        tar.addfile(good, io.BytesIO(b"{}"))
        if member.isfile():
            member.size = len(data)
            tar.addfile(member, io.BytesIO(data))
        else:
            tar.addfile(member)
    return path


def _info(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    return info


@pytest.mark.parametrize(("member", "reason"), [
    (_info("/etc/evil"), "points outside the folder"),
    (_info("../evil"), "points outside the folder"),
    (_info("runs/../../evil"), "points outside the folder"),
    (_info("C:/evil"), "points outside the folder"),
    (_info("runs\\..\\evil"), "points outside the folder"),
    (_info("runs/link", tarfile.SYMTYPE, "/etc/passwd"), "is not a regular file or folder"),
    (_info("runs/hard", tarfile.LNKTYPE, "compare.json"), "is not a regular file or folder"),
    (_info("runs/fifo", tarfile.FIFOTYPE), "is not a regular file or folder"),
], ids=["absolute", "dotdot", "nested-dotdot", "drive", "backslash", "symlink", "hardlink", "fifo"])
def test_unsafe_members_are_rejected_before_anything_is_written(tmp_path, member, reason):
    packed = evil_archive(tmp_path / "evil.tar.gz", member)
    with pytest.raises(UserInputError, match=reason):
        archive.restore(packed, tmp_path / "out")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["evil.tar.gz"]


def test_restore_refuses_what_is_not_a_comparison(tmp_path):
    with tarfile.open(tmp_path / "other.tar", "w") as tar:
        info = tarfile.TarInfo("notes.txt")
        tar.addfile(info, io.BytesIO(b""))
    with pytest.raises(UserInputError, match="holds no compare.json or runs/: not a comparison"):
        archive.restore(tmp_path / "other.tar", tmp_path / "out")
    (tmp_path / "junk.tar.gz").write_bytes(b"not an archive")
    with pytest.raises(UserInputError, match="cannot be read"):
        archive.restore(tmp_path / "junk.tar.gz", tmp_path / "out")


def make_grid_in_flight(out: Path) -> dict[str, bytes]:
    """A grid with one finished run (`done`: record, weights, arrays, plot, log) and one interrupted
    run (`half`: last.pth and log only); returns {relative path: contents}."""
    files = {
        "compare.json": b'{"data": ["toy"]}\n',
        "results.jsonl": b'{"setting": "done", "mse": 0.5}\n',
        "runs/results.jsonl": b'{"setting": "done", "mse": 0.5}\n',
        "runs/compare_runs.jsonl": b'{"status": "ok"}\n{"status": "interrupted"}\n',
        "runs/checkpoints/done/checkpoint.pth": b"w" * 3000,
        "runs/checkpoints/done/last.pth": b"l" * 3000,
        "runs/results/done/pred.npy": b"p" * 5000,
        "runs/results/done/true.npy": b"t" * 5000,
        "runs/test_results/done/0.pdf": b"%PDF",
        "runs/logs/done.log": b"done\n",
        "runs/checkpoints/half/last.pth": b"h" * 2000,
        "runs/logs/half.log": b"interrupted\n",
    }
    for name, data in files.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_bytes(data)
    return files


def test_slim_pack_keeps_records_logs_and_what_a_resume_needs(tmp_path):
    files = make_grid_in_flight(tmp_path / "out")
    kept = {k: v for k, v in files.items() if "/done/" not in k}
    assert archive.pack(tmp_path / "out", tmp_path / "grid.tar.gz", slim=True) == len(kept)
    archive.restore(tmp_path / "grid.tar.gz", tmp_path / "back")
    assert tree(tmp_path / "back") == kept  # records, both logs and the interrupted run's last.pth
    assert archive.pack(tmp_path / "out", tmp_path / "full.tar.gz") == len(files)  # without --slim: all


def test_max_file_mib_leaves_out_large_files_by_name(tmp_path, caplog):
    files = make_grid_in_flight(tmp_path / "out")
    limit_mib = 2500 / 2**20  # between the 2000-byte last.pth and the 3000-byte checkpoints
    with caplog.at_level("WARNING", logger="compare.run.archive"):
        archive.pack(tmp_path / "out", tmp_path / "grid.tar", max_file_mib=limit_mib)
    archive.restore(tmp_path / "grid.tar", tmp_path / "back")
    assert tree(tmp_path / "back") == {k: v for k, v in files.items() if len(v) <= 2500}
    assert "left out runs/results/done/pred.npy" in caplog.text
    assert "runs/checkpoints/done/last.pth" in caplog.text and "restarts from scratch" in caplog.text
    with pytest.raises(UserInputError, match="--max-file-mib 0 must be a positive"):
        archive.pack(tmp_path / "out", tmp_path / "grid.tar", max_file_mib=0)


def test_pack_checks_its_arguments(tmp_path):
    make_comparison(tmp_path / "out")
    with pytest.raises(UserInputError, match=r"name it \*.tar.gz"):
        archive.pack(tmp_path / "out", tmp_path / "grid.zip")
    (tmp_path / "plain").mkdir()
    with pytest.raises(UserInputError, match="not a comparison folder"):
        archive.pack(tmp_path / "plain", tmp_path / "grid.tar.gz")


def test_python_m_compare_dispatches_pack_and_restore(tmp_path, monkeypatch, capsys):
    """`python -m compare pack|restore ...` reaches compare.run.archive; errors are one line, exit 2."""
    files = make_comparison(tmp_path / "out")
    codes = []
    for argv in (["pack", "--out", str(tmp_path / "out"), str(tmp_path / "a.tar.gz")],
                 ["restore", str(tmp_path / "a.tar.gz"), "--out", str(tmp_path / "back")],
                 ["restore", str(tmp_path / "a.tar.gz"), "--out", str(tmp_path / "back")]):
        monkeypatch.setattr(sys, "argv", ["compare", *argv])
        with pytest.raises(SystemExit) as exit_info:
            runpy.run_module("compare", run_name="__main__")
        codes.append(exit_info.value.code)
    assert tree(tmp_path / "back") == files
    assert codes == [0, 0, 2]  # the third: the folder is no longer empty
    assert capsys.readouterr().err.strip().startswith("error: --out ")
