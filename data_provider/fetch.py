"""Put benchmark files under ``./dataset/`` in TSLib's layout: ``python -m data_provider.fetch NAME...``.

For each dataset, in order: keep a file already present with the right checksum; else copy it from a
local mirror (``--mirror DIR`` or env ``TSLIB_DATA_MIRROR``, laid out like ``./dataset/``); else
download it when the registry knows a URL (archives are extracted with patool). Every file is
verified against the registry checksum and written atomically (a temporary file in the destination
folder, then ``os.replace``), so an interrupted or rejected fetch never leaves a partial file.
Datasets that cannot be fetched get one line saying what to do, and the exit code is 1.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import logging
import os
import shutil
import sys
import tempfile
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path

from data_provider.registry import (
    DATASET_GROUPS,
    DATASETS,
    TSLIB_DRIVE_URL,
    DatasetInfo,
    expand_names,
    lookup,
)
from utils.errors import MissingDataError, UserInputError

__all__ = ["ChecksumError", "fetch", "fetch_command", "main", "verify"]

logger = logging.getLogger(__name__)

MIRROR_ENV = "TSLIB_DATA_MIRROR"
DOWNLOAD_TIMEOUT_S = 60
_ARCHIVE_SUFFIXES = (".gz", ".zip", ".tar", ".tgz", ".bz2", ".xz", ".7z")


class ChecksumError(UserInputError):
    """A copied or downloaded file whose checksum differs from the registry's."""


def fetch_command(name: str, root: str | Path = "./dataset") -> str:
    """The shell command that fetches `name` into `root`, e.g.
    ``python -m data_provider.fetch ETTh1 --root ./dataset``."""
    root = str(root)
    if not (Path(root).is_absolute() or root.startswith(".")):
        root = f"./{root}"
    shown = name.lower() if name.lower() in DATASET_GROUPS else lookup(name).name
    return f"python -m data_provider.fetch {shown} --root {root}"


def _digest(path: Path, algorithm: str) -> str:
    h = hashlib.new(algorithm)
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def verify(path: Path, info: DatasetInfo) -> bool | None:
    """True/False when `path` does/does not match the registry checksum (sha256, else md5);
    None when the registry has no checksum for the file."""
    if info.sha256:
        return _digest(path, "sha256") == info.sha256
    if info.md5:
        return _digest(path, "md5") == info.md5
    return None


def _checked_install(candidate: Path, dest: Path, info: DatasetInfo, origin: str) -> Path:
    """Verify `candidate` (already in dest's folder) and move it onto `dest`, or delete it and raise."""
    ok = verify(candidate, info)
    if ok is False:
        candidate.unlink()
        algo = "sha256" if info.sha256 else "md5"
        raise ChecksumError(f"{info.name}: {algo} of the file from {origin} does not match the registry; "
                            "nothing was written (the source is corrupt or a different version)")
    if ok is None:
        logger.warning("%s: checksum unknown; the file from %s was not verified", info.name, origin)
    os.replace(candidate, dest)
    return dest


def _copy_from_mirror(src: Path, dest: Path, info: DatasetInfo) -> Path:
    # A fresh name beside dest (not mkstemp, whose 0600 mode would stick to the final file).
    tmp = dest.parent / f".{dest.name}.{uuid.uuid4().hex}.part"
    try:
        shutil.copyfile(src, tmp)
        return _checked_install(tmp, dest, info, f"mirror {src}")
    finally:
        tmp.unlink(missing_ok=True)


def _download(url: str, out: Path) -> None:
    """Stream `url` into `out` (urllib; raises URLError/OSError when offline)."""
    with urllib.request.urlopen(url, timeout=DOWNLOAD_TIMEOUT_S) as response, out.open("wb") as f:
        shutil.copyfileobj(response, f)


def _extract_single(archive: Path, workdir: Path, wanted: str) -> Path:
    """Extract `archive` into `workdir` with patool and return the extracted file named `wanted`."""
    try:
        # Imported here because only archives need it.
        import patoolib
    except ImportError as exc:
        raise UserInputError(f"extracting {archive.name} needs patool: pip install patool") from exc
    try:
        patoolib.extract_archive(str(archive), outdir=str(workdir), verbosity=-1, interactive=False)
    except patoolib.util.PatoolError as exc:
        raise UserInputError(f"cannot extract {archive.name}: {exc}") from exc
    matches = [p for p in workdir.rglob(wanted) if p.is_file()]
    if not matches:
        raise UserInputError(f"{archive.name} does not contain {wanted}")
    return matches[0]


def _download_and_install(info: DatasetInfo, url: str, dest: Path) -> Path:
    with tempfile.TemporaryDirectory(prefix=f".{dest.name}.", dir=dest.parent) as workdir:
        work = Path(workdir)
        archive_name = url.rsplit("/", 1)[-1]
        downloaded = work / archive_name
        logger.info("%s: downloading %s", info.name, url)
        _download(url, downloaded)
        if archive_name.endswith(_ARCHIVE_SUFFIXES):
            if info.archive_md5 and _digest(downloaded, "md5") != info.archive_md5:
                raise ChecksumError(f"{info.name}: md5 of {archive_name} from {url} does not match "
                                    "the registry; nothing was written")
            downloaded = _extract_single(downloaded, work / "extracted", dest.name)
        # The temporary folder lies inside dest's folder, so os.replace stays on one file system.
        return _checked_install(downloaded, dest, info, url)


def _manual_instructions(info: DatasetInfo, dest: Path) -> str:
    return (f"place {info.relpath} at {dest} (download it from {TSLIB_DRIVE_URL}) "
            f"or pass --mirror DIR / set {MIRROR_ENV} to a folder that has {info.relpath}")


def fetch(name: str, root: str | Path = "./dataset", mirror: str | Path | None = None,
          download: bool = True) -> Path:
    """Make ``root/<relpath>`` of dataset `name` present and verified; return its path.

    `mirror` defaults to env TSLIB_DATA_MIRROR. Raises ChecksumError for a corrupt source and
    MissingDataError when neither the mirror nor a download (URL known and `download`) works.
    """
    info = lookup(name)
    dest = Path(root) / info.relpath
    if dest.is_file():
        ok = verify(dest, info)
        if ok is not False:
            logger.info("%s: present at %s%s", info.name, dest, "" if ok else " (checksum unknown)")
            return dest
        logger.warning("%s: %s has the wrong checksum; fetching a fresh copy", info.name, dest)

    mirror = mirror if mirror is not None else os.environ.get(MIRROR_ENV)
    source = Path(mirror) / info.relpath if mirror else None
    if source is not None and source.is_file():
        with _destination_folder(dest):
            _copy_from_mirror(source, dest, info)
        logger.info("%s: copied from mirror %s to %s", info.name, mirror, dest)
        return dest

    if info.url and download:
        try:
            with _destination_folder(dest):
                _download_and_install(info, info.url, dest)
        except (urllib.error.URLError, OSError) as exc:
            raise MissingDataError(f"{info.name}: download from {info.url} failed ({exc}); "
                                   f"{_manual_instructions(info, dest)}") from exc
        logger.info("%s: downloaded to %s", info.name, dest)
        return dest
    raise MissingDataError(f"{info.name}: not found; {_manual_instructions(info, dest)}")


@contextlib.contextmanager
def _destination_folder(dest: Path) -> Iterator[None]:
    """Create dest's folder for the duration of a fetch; remove it again if the fetch fails and
    leaves it empty, so a failed fetch changes nothing on disk."""
    created = not dest.parent.exists()
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        yield
    except BaseException:
        if created and not any(dest.parent.iterdir()):
            dest.parent.rmdir()
        raise


def _names_in_mirror(mirror: str | None) -> list[str]:
    if not mirror:
        raise UserInputError(f"'all' fetches every mirrored dataset: pass --mirror DIR or set {MIRROR_ENV}")
    return [info.name for info in DATASETS.values() if (Path(mirror) / info.relpath).is_file()]


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point; returns the exit code (0 when every dataset is in place, else 1)."""
    parser = argparse.ArgumentParser(prog="python -m data_provider.fetch", description="Put benchmark files under ./dataset/ in TSLib's layout.")
    parser.add_argument("names", nargs="+", metavar="NAME",
                        help=f"dataset names ({', '.join(DATASETS)}), m4 (its four files) or 'all' (every mirrored dataset)")
    parser.add_argument("--root", default="./dataset", help="dataset root (TSLib scripts use ./dataset)")
    parser.add_argument("--mirror", default=None, help=f"local mirror folder (default: env {MIRROR_ENV})")
    parser.add_argument("--offline", action="store_true", help="only copy from the mirror; never download")
    args = parser.parse_args(argv)
    # The CLI prints this module's log records as plain lines; library callers keep their own logging.
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger.addHandler(handler)
    previous_level = logger.level
    logger.setLevel(logging.INFO)
    try:
        return _run(args)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(previous_level)


def _run(args: argparse.Namespace) -> int:
    mirror = args.mirror if args.mirror is not None else os.environ.get(MIRROR_ENV)
    failures = 0
    try:
        names = _names_in_mirror(mirror) if args.names == ["all"] else expand_names(args.names)
    except UserInputError as exc:
        logger.error("error: %s", exc)
        return 1
    for name in names:
        try:
            fetch(name, args.root, mirror, download=not args.offline)
        except UserInputError as exc:
            logger.error("error: %s", exc)
            failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
