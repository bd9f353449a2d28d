"""Carry a comparison folder between machines as one archive (time-limited GPU slices, cluster jobs).

    python -m compare pack --out DIR ARCHIVE          # DIR -> ARCHIVE (.tar.gz, .tgz, .tar.xz, .tar)
    python -m compare pack --out DIR ARCHIVE --slim [--max-file-mib N]   # only what the grid still needs
    python -m compare restore ARCHIVE --out DIR       # ARCHIVE -> DIR (refuses a non-empty DIR)
    python -m compare restore ARCHIVE --out DIR --force   # replaces DIR

`python -m compare` hands its arguments here when the first word is `pack` or `restore` (a runner command line
starts with flags).

The archive holds everything under DIR: `compare.json`, the report files and `runs/` (checkpoints
including `last.pth`, `results.jsonl`, the manifest `compare_runs.jsonl`, logs, predictions), so
`python -m compare ... --out DIR` on the new machine resumes interrupted runs and skips finished
ones. Pack the folder only while no runner writes to it.

`--slim` is for carrying a grid through a channel with a size limit (a lent GPU returns files of at most
16 MiB): the finished runs (those in `runs/results.jsonl`) keep their records and logs but lose their
`checkpoints/`, `results/` (pred/true arrays) and `test_results/` folders, which neither the table nor a
resume needs (the report then draws no forecast plot for them); interrupted runs keep `last.pth`.
`--max-file-mib N` also leaves out every file larger than N MiB, naming each (an interrupted run whose
`last.pth` is left out starts again from scratch).

Safety: `pack` writes a temporary file beside ARCHIVE and renames it (a pre-empted pack never leaves
a truncated archive under the final name); symbolic links in DIR are left out with a warning.
`restore` checks every member before writing anything: only regular files and folders, relative
names without `..`; it extracts into a temporary folder beside DIR and renames it into place, so a
failed restore leaves DIR as it was.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import sys
import tarfile
import tempfile
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import BinaryIO

from compare.grid.records import CONFIG_FILE, RUNS_DIR, finished_settings
from utils.cli_parser import OneLineArgumentParser
from utils.command_main import log_to_stdout, run_command
from utils.errors import UserInputError
from utils.tools import atomic_write

__all__ = ["build_parser", "check_member", "finished_run_folders", "main", "pack", "restore"]

logger = logging.getLogger("compare.run.archive")

# Archive name endings and their tarfile compression.
_COMPRESSION = {".tar.gz": "gz", ".tgz": "gz", ".tar.xz": "xz", ".tar.bz2": "bz2", ".tar": ""}


def _compression(archive: Path) -> str:
    for ending, compression in _COMPRESSION.items():
        if archive.name.endswith(ending):
            return compression
    raise UserInputError(f"archive {archive}: name it *.tar.gz, *.tgz, *.tar.xz, *.tar.bz2 or *.tar")


def _is_comparison(names: list[str]) -> bool:
    """True when the (relative, posix) names include compare.json or something under runs/."""
    return any(n == CONFIG_FILE or PurePosixPath(n).parts[:1] == (RUNS_DIR,) for n in names)


# Per-run folders under runs/ that a finished run no longer needs (`--slim`): weights, arrays, plots.
FINISHED_RUN_FOLDERS = ("checkpoints", "results", "test_results")


def finished_run_folders(out: Path) -> set[Path]:
    """`runs/<kind>/<setting>` folders (kind in FINISHED_RUN_FOLDERS) of the finished runs' settings."""
    runs = out / RUNS_DIR
    return {runs / kind / setting for kind in FINISHED_RUN_FOLDERS for setting in finished_settings(runs)
            if setting and (runs / kind / setting).is_dir()}


def pack(out: str | Path, archive: str | Path, *, slim: bool = False, max_file_mib: float | None = None) -> int:
    """Write every file and folder under `out` into `archive` (atomically); returns the number of files.

    out: a comparison folder (holds compare.json or runs/).
    archive: the archive to write; its name picks the compression (`.tar.gz` -> gzip).
    slim: leave out the finished runs' checkpoints, prediction arrays and test plots.
    max_file_mib: leave out every file larger than this many MiB (each named in a warning)."""
    out, archive = Path(out), Path(archive)
    compression = _compression(archive)
    if not out.is_dir():
        raise UserInputError(f"--out {out} is not a folder")
    if not _is_comparison([p.name for p in out.iterdir()]):
        raise UserInputError(f"--out {out} holds no {CONFIG_FILE} or {RUNS_DIR}/: not a comparison folder")
    if max_file_mib is not None and not max_file_mib > 0:
        raise UserInputError(f"--max-file-mib {max_file_mib} must be a positive number of MiB")
    archive.parent.mkdir(parents=True, exist_ok=True)
    dropped = {p.resolve() for p in finished_run_folders(out)} if slim else set()
    files = 0

    def write_tar(raw: BinaryIO) -> None:
        nonlocal files
        # The archive being written may lie inside `out`: it is left out by its inode (its temporary name is
        # atomic_write's), the finished archive by its path.
        writing = os.fstat(raw.fileno())
        skip = {archive.resolve()}
        with tarfile.open(fileobj=raw, mode=f"w:{compression}" if compression else "w") as tar:
            for folder, dirs, names in os.walk(out):
                dirs[:] = sorted(d for d in dirs if (Path(folder) / d).resolve() not in dropped)
                for name in dirs + sorted(names):
                    path = Path(folder) / name
                    arcname = path.relative_to(out).as_posix()
                    if path.is_symlink():
                        logger.warning("left out the symbolic link %s", path)
                        continue
                    if path.resolve() in skip or os.path.samestat(path.stat(), writing):
                        continue
                    size = path.stat().st_size if path.is_file() else 0
                    if max_file_mib is not None and size > max_file_mib * 2**20:
                        logger.warning("left out %s (%.1f MiB > --max-file-mib %g)%s", arcname,
                                       size / 2**20, max_file_mib,
                                       ": its run restarts from scratch" if name == "last.pth" else "")
                        continue
                    tar.add(path, arcname=arcname, recursive=False, filter=_anonymous)
                    files += path.is_file()

    atomic_write(archive, write_tar)
    return files


def _anonymous(info: tarfile.TarInfo) -> tarfile.TarInfo:
    """Drop the packing machine's user and group (they mean nothing on the machine that restores)."""
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def check_member(member: tarfile.TarInfo) -> None:
    """Raise UserInputError unless `member` is a regular file or folder with a relative name inside
    the target folder (no absolute path, drive, backslash or `..`)."""
    name = member.name
    parts = PurePosixPath(name).parts
    if (not name or name.startswith(("/", "\\")) or "\\" in name or PureWindowsPath(name).drive
            or ".." in parts):
        raise UserInputError(f"archive member {name!r} points outside the folder (absolute path or '..'); "
                             "refusing to restore this archive")
    if not (member.isfile() or member.isdir()):
        raise UserInputError(f"archive member {name!r} is not a regular file or folder (link or device); "
                             "refusing to restore this archive")


def _clear(folder: Path) -> bool:
    """True when `folder` is missing or empty."""
    return not folder.exists() or (folder.is_dir() and not any(folder.iterdir()))


def restore(archive: str | Path, out: str | Path, *, force: bool = False) -> int:
    """Extract `archive` (written by `pack`) into the folder `out`; returns the number of files.

    force: replace a non-empty `out` (otherwise that is refused)."""
    archive, out = Path(archive), Path(out)
    if not archive.is_file():
        raise UserInputError(f"archive {archive} does not exist")
    if out.exists() and not out.is_dir():
        raise UserInputError(f"--out {out} is a file, not a folder")
    if not force and not _clear(out):
        raise UserInputError(f"--out {out} is not empty; restore into a new folder or pass --force to replace it")
    try:
        tar = tarfile.open(archive, "r:*")
    except (tarfile.TarError, OSError) as err:
        raise UserInputError(f"archive {archive} cannot be read ({err})") from None
    with tar:
        members = tar.getmembers()
        for member in members:
            check_member(member)
        if not _is_comparison([m.name for m in members]):
            raise UserInputError(f"archive {archive} holds no {CONFIG_FILE} or {RUNS_DIR}/: not a comparison")
        out.parent.mkdir(parents=True, exist_ok=True)
        # A folder swap, not a file write (utils.tools.atomic_write covers single files): the restored folder
        # is staged beside `out` and renamed into place, the old one moved aside first.
        staging = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.restore-"))
        try:
            files = _extract(tar, members, staging)
            if out.exists():
                aside = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.old-"))
                os.replace(out, aside / "old")
                os.replace(staging, out)
                shutil.rmtree(aside)
            else:
                os.replace(staging, out)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    return files


def _extract(tar: tarfile.TarFile, members: list[tarfile.TarInfo], target: Path) -> int:
    """Write the checked members under `target` (folders first), keeping file modes and times."""
    root = target.resolve()
    files = 0
    for member in sorted(members, key=lambda m: not m.isdir()):
        path = (target / member.name).resolve()
        # check_member already refused '..'; this also catches anything it could have missed.
        if root != path and root not in path.parents:
            raise UserInputError(f"archive member {member.name!r} points outside the folder")
        if member.isdir():
            path.mkdir(parents=True, exist_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        source = tar.extractfile(member)
        if source is None:
            raise UserInputError(f"archive member {member.name!r} has no contents")
        with source, path.open("wb") as sink:
            shutil.copyfileobj(source, sink)
        os.chmod(path, (member.mode & 0o777) | 0o600)
        os.utime(path, (member.mtime, member.mtime))
        files += 1
    return files


def build_parser() -> argparse.ArgumentParser:
    p = OneLineArgumentParser(prog="python -m compare", description="Pack or restore a comparison folder.")
    sub = p.add_subparsers(dest="command", required=True)
    pk = sub.add_parser("pack", help="write the comparison folder into one archive")
    pk.add_argument("--out", required=True, help="comparison folder (holds compare.json and runs/)")
    pk.add_argument("archive", help="archive to write (.tar.gz, .tgz, .tar.xz, .tar.bz2, .tar)")
    pk.add_argument("--slim", action="store_true",
                    help="leave out the finished runs' checkpoints, pred/true arrays and test plots (records and logs stay)")
    pk.add_argument("--max-file-mib", type=float, default=None, metavar="N",
                    help="leave out every file larger than N MiB (an interrupted run without last.pth restarts)")
    rs = sub.add_parser("restore", help="unpack an archive written by pack into a folder")
    rs.add_argument("archive", help="archive written by `python -m compare pack`")
    rs.add_argument("--out", required=True, help="folder to restore into (must be empty or missing)")
    rs.add_argument("--force", action="store_true", help="replace --out when it is not empty")
    return p


def main(argv: list[str] | None = None) -> int:
    """`pack` / `restore`; 0 on success, 2 on a usage error (one `error: ...` line)."""
    log_to_stdout()
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    return run_command(lambda: _pack_or_restore(args))


def _pack_or_restore(args: argparse.Namespace) -> None:
    """main's work: pack --out into the archive, or restore the archive into --out, with one log line."""
    if args.command == "pack":
        files = pack(args.out, args.archive, slim=args.slim, max_file_mib=args.max_file_mib)
        size = Path(args.archive).stat().st_size / 2**20
        logger.info("packed %d files of %s into %s (%.1f MiB)", files, args.out, args.archive, size)
    else:
        files = restore(args.archive, args.out, force=args.force)
        logger.info("restored %d files of %s into %s", files, args.archive, args.out)

