"""Put benchmark files under ``./dataset/`` in TSLib's layout: ``python -m data_provider.fetch NAME...``.

For each dataset, in order: keep a file already present with the right checksum; else copy it from a
local mirror (``--mirror DIR`` or env ``TSLIB_DATA_MIRROR``, laid out like ``./dataset/``); else, for the
files an installed package ships (the registry's `package_file`: sktime's Yahoo and MITDB series), copy the
package's file, and for the sets assembled from package files (`assembled_from`: sktime_monthly) write the long
CSV from those files, each checked against its own sha256 first; else download it when the registry knows a URL (archives are extracted with patool). Every copied or
downloaded file is verified and written atomically (a temporary file in the destination folder, then
``os.replace``), so an interrupted or rejected fetch never leaves a partial file. The checksum it must
match is the registry's (sha256, else md5), else the one the mirror's ``SHA256SUMS`` lists for it
(``sha256sum`` format, paths relative to the mirror); a file extracted from an archive whose md5 the
registry knows counts as verified. A file no checksum covers is refused (its sha256 is in the message)
unless ``--accept-unverified`` is given, which installs it and logs the sha256 it saw. A file already
present is kept when it matches, or when no checksum is known (its sha256 is logged).
Datasets that cannot be fetched get one line saying what to do, and the exit code is 1.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import hashlib
import importlib.util
import logging
import os
import shutil
import sys
import tempfile
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
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

__all__ = ["SUMS_FILE", "ChecksumError", "Expected", "UnverifiedError", "assemble_series", "expected_checksum", "fetch",
           "fetch_command", "main", "package_source", "read_sha256sums", "verify"]

logger = logging.getLogger(__name__)

MIRROR_ENV = "TSLIB_DATA_MIRROR"
DOWNLOAD_TIMEOUT_S = 60
_ARCHIVE_SUFFIXES = (".gz", ".zip", ".tar", ".tgz", ".bz2", ".xz", ".7z")
#: The checksum list a mirror may hold at its top (``sha256sum`` output, paths relative to the mirror).
SUMS_FILE = "SHA256SUMS"
_HEX = frozenset("0123456789abcdef")


class ChecksumError(UserInputError):
    """A copied or downloaded file whose checksum differs from the registry's (or the mirror's SHA256SUMS)."""


class UnverifiedError(UserInputError):
    """A copied or downloaded file that no known checksum covers (and --accept-unverified was not given)."""


@dataclass(frozen=True)
class Expected:
    """The checksum a file must have: `algorithm` (sha256 or md5), hex `digest`, and `where` it comes from."""

    algorithm: str
    digest: str
    where: str


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


def read_sha256sums(path: Path) -> dict[str, str]:
    """{relative path: sha256} of a ``sha256sum``-style file (``<hex>  <path>`` or ``<hex> *<path>`` per line;
    blank lines and ``#`` comments skipped); a malformed line is a one-line UserInputError."""
    sums: dict[str, str] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        digest, _, name = line.partition(" ")
        name = name[1:] if name[:1] in (" ", "*") else ""
        digest = digest.lower()
        if len(digest) != 64 or not set(digest) <= _HEX or not name.strip():
            raise UserInputError(f"{path} line {number} is not '<sha256>  <file>' (the format sha256sum writes); "
                                 "fix or remove that line")
        sums[name.strip().removeprefix("./")] = digest
    return sums


def expected_checksum(info: DatasetInfo, mirror: str | Path | None = None) -> Expected | None:
    """The checksum `info`'s file must have: the registry's sha256, else its md5, else the sha256 that
    `mirror`/SHA256SUMS lists for ``info.relpath``; None when none is known."""
    if info.sha256:
        return Expected("sha256", info.sha256, "the registry")
    if info.md5:
        return Expected("md5", info.md5, "the registry")
    sums_path = Path(mirror) / SUMS_FILE if mirror else None
    if sums_path is not None and sums_path.is_file():
        digest = read_sha256sums(sums_path).get(info.relpath)
        if digest:
            return Expected("sha256", digest, str(sums_path))
    return None


def verify(path: Path, info: DatasetInfo, mirror: str | Path | None = None) -> bool | None:
    """True/False when `path` does/does not match its expected checksum (`expected_checksum`);
    None when no checksum is known for the file."""
    expected = expected_checksum(info, mirror)
    if expected is None:
        return None
    return _digest(path, expected.algorithm) == expected.digest


def _checked_install(candidate: Path, dest: Path, info: DatasetInfo, origin: str, expected: Expected | None,
                     accept_unverified: bool = False, archive_verified: bool = False) -> Path:
    """Verify `candidate` (already in dest's folder) and move it onto `dest`, or delete it and raise.

    With no `expected` checksum the file is installed only when it came out of an archive whose md5 the
    registry knows (`archive_verified`) or when `accept_unverified` (its sha256 is logged)."""
    if expected is not None:
        if _digest(candidate, expected.algorithm) != expected.digest:
            candidate.unlink()
            raise ChecksumError(f"{info.name}: {expected.algorithm} of the file from {origin} does not match "
                                f"{expected.where}; nothing was written (the source is corrupt or a different version)")
    elif not archive_verified:
        seen = _digest(candidate, "sha256")
        if not accept_unverified:
            candidate.unlink()
            raise UnverifiedError(
                f"{info.name}: no known checksum for {info.relpath} (none in the registry, none in a mirror "
                f"{SUMS_FILE}), so the file from {origin} (sha256 {seen}) was not installed; compare that sha256 "
                f"with a source you trust, then add '{seen}  {info.relpath}' to {SUMS_FILE} in the --mirror folder or rerun "
                "with --accept-unverified (which logs the sha256 it installs)")
        logger.warning("%s: installed WITHOUT a known checksum (--accept-unverified): the file from %s has sha256 %s",
                       info.name, origin, seen)
    os.replace(candidate, dest)
    return dest


def _copy_from_mirror(src: Path, dest: Path, info: DatasetInfo, expected: Expected | None,
                      accept_unverified: bool, origin: str = "mirror") -> Path:
    # A fresh name beside dest (not mkstemp, whose 0600 mode would stick to the final file).
    tmp = dest.parent / f".{dest.name}.{uuid.uuid4().hex}.part"
    try:
        shutil.copyfile(src, tmp)
        return _checked_install(tmp, dest, info, f"{origin} {src}", expected, accept_unverified)
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


def _download_and_install(info: DatasetInfo, url: str, dest: Path, expected: Expected | None = None,
                          accept_unverified: bool = False) -> Path:
    with tempfile.TemporaryDirectory(prefix=f".{dest.name}.", dir=dest.parent) as workdir:
        work = Path(workdir)
        archive_name = url.rsplit("/", 1)[-1]
        downloaded = work / archive_name
        logger.info("%s: downloading %s", info.name, url)
        _download(url, downloaded)
        archive_verified = False
        if archive_name.endswith(_ARCHIVE_SUFFIXES):
            if info.archive_md5 and _digest(downloaded, "md5") != info.archive_md5:
                raise ChecksumError(f"{info.name}: md5 of {archive_name} from {url} does not match "
                                    "the registry; nothing was written")
            archive_verified = bool(info.archive_md5)
            downloaded = _extract_single(downloaded, work / "extracted", dest.name)
        # The temporary folder lies inside dest's folder, so os.replace stays on one file system.
        return _checked_install(downloaded, dest, info, url, expected, accept_unverified, archive_verified)


def package_source(package_file: str) -> Path | None:
    """Where an installed package keeps ``<package>/<path inside it>`` (the package is located, not imported);
    None when the package is not installed or lacks the file."""
    package, _, inside = package_file.partition("/")
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    found = [Path(folder) / inside for folder in locations if (Path(folder) / inside).is_file()]
    return found[0] if found else None


def assemble_series(info: DatasetInfo, out: Path) -> None:
    """Write the long CSV (series_id, timestamp, value) of `info.assembled_from` to `out`: each source package
    file located and checked against its sha256 first, its time stamps and values copied as text, row by row.
    Raises MissingDataError (package or file absent) or ChecksumError (another version of the file)."""
    rows = []
    for source in info.assembled_from:
        path = package_source(source.package_file)
        package = source.package_file.partition("/")[0]
        if path is None:
            raise MissingDataError(f"{info.name}: {source.package_file} not found; install {package} (pip install "
                                   f"{package}) or pass --mirror DIR / set {MIRROR_ENV} to a folder that has "
                                   f"{info.relpath}")
        if _digest(path, "sha256") != source.sha256:
            raise ChecksumError(f"{info.name}: sha256 of {path} does not match the registry (another {package} "
                                "version?); nothing was written")
        with path.open(newline="", encoding="utf-8") as f:
            for record in csv.DictReader(f):
                rows.append((source.series_id, record[source.time_column], record[source.value_column]))
    with out.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(("series_id", "timestamp", "value"))
        writer.writerows(rows)


def _assemble_from_packages(info: DatasetInfo, dest: Path, expected: Expected | None, accept_unverified: bool) -> Path:
    tmp = dest.parent / f".{dest.name}.{uuid.uuid4().hex}.part"
    try:
        assemble_series(info, tmp)
        return _checked_install(tmp, dest, info, "the installed package files", expected, accept_unverified)
    finally:
        tmp.unlink(missing_ok=True)


def _manual_instructions(info: DatasetInfo, dest: Path) -> str:
    if info.package_file:
        package = info.package_file.partition("/")[0]
        return (f"install {package} (pip install {package}; this file is its {info.package_file}) or pass "
                f"--mirror DIR / set {MIRROR_ENV} to a folder that has {info.relpath}")
    return (f"place {info.relpath} at {dest} (download it from {TSLIB_DRIVE_URL}) "
            f"or pass --mirror DIR / set {MIRROR_ENV} to a folder that has {info.relpath}")


def fetch(name: str, root: str | Path = "./dataset", mirror: str | Path | None = None,
          download: bool = True, accept_unverified: bool = False) -> Path:
    """Make ``root/<relpath>`` of dataset `name` present and verified; return its path.

    `mirror` defaults to env TSLIB_DATA_MIRROR; its SHA256SUMS supplies checksums the registry lacks.
    Raises ChecksumError for a corrupt source, UnverifiedError for a copied or downloaded file that no
    checksum covers (unless `accept_unverified`), and MissingDataError when neither the mirror nor a
    download (URL known and `download`) works.
    """
    info = lookup(name)
    dest = Path(root) / info.relpath
    mirror = mirror if mirror is not None else os.environ.get(MIRROR_ENV)
    expected = expected_checksum(info, mirror)
    if dest.is_file():
        if expected is None:
            logger.warning("%s: present at %s (no known checksum; sha256 %s)", info.name, dest,
                           _digest(dest, "sha256"))
            return dest
        if _digest(dest, expected.algorithm) == expected.digest:
            logger.info("%s: present at %s", info.name, dest)
            return dest
        logger.warning("%s: %s has the wrong checksum; fetching a fresh copy", info.name, dest)

    source = Path(mirror) / info.relpath if mirror else None
    if source is not None and source.is_file():
        with _destination_folder(dest):
            _copy_from_mirror(source, dest, info, expected, accept_unverified)
        logger.info("%s: copied from mirror %s to %s", info.name, mirror, dest)
        return dest

    if info.assembled_from:
        with _destination_folder(dest):
            _assemble_from_packages(info, dest, expected, accept_unverified)
        logger.info("%s: assembled from %d files of the installed packages into %s", info.name,
                    len(info.assembled_from), dest)
        return dest

    packaged = package_source(info.package_file) if info.package_file else None
    if packaged is not None:
        with _destination_folder(dest):
            _copy_from_mirror(packaged, dest, info, expected, accept_unverified, "installed package file")
        logger.info("%s: copied from the installed package file %s to %s", info.name, packaged, dest)
        return dest

    if info.url and download:
        try:
            with _destination_folder(dest):
                _download_and_install(info, info.url, dest, expected, accept_unverified)
        except (urllib.error.URLError, OSError) as exc:
            raise MissingDataError(f"{info.name}: download from {info.url} failed ({exc}); "
                                   f"{_manual_instructions(info, dest)}") from exc
        logger.info("%s: downloaded to %s", info.name, dest)
        return dest
    raise MissingDataError(f"{info.name}: not found; {_manual_instructions(info, dest)}")


@contextlib.contextmanager
def _destination_folder(dest: Path) -> Iterator[None]:
    """Create dest's folder (and its missing parents) for the duration of a fetch; remove the ones it
    created again if the fetch fails and leaves them empty, so a failed fetch changes nothing on disk."""
    created = [folder for folder in (dest.parent, *dest.parent.parents) if not folder.exists()]
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        yield
    except BaseException:
        for folder in created:  # deepest first
            if any(folder.iterdir()):
                break
            folder.rmdir()
        raise


def _names_in_mirror(mirror: str | None) -> list[str]:
    if not mirror:
        raise UserInputError(f"'all' fetches every mirrored dataset: pass --mirror DIR or set {MIRROR_ENV}")
    return [info.name for info in DATASETS.values() if (Path(mirror) / info.relpath).is_file()]


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point; returns the exit code (0 when every dataset is in place, else 1)."""
    parser = argparse.ArgumentParser(prog="python -m data_provider.fetch", description="Put benchmark files under ./dataset/ in TSLib's layout.")
    parser.add_argument("names", nargs="+", metavar="NAME",
                        help=f"dataset names ({', '.join(DATASETS)}), m4 (M4-info.csv, the 12 per-group CSVs, submission-Naive2.csv) or 'all' (every mirrored dataset)")
    parser.add_argument("--root", default="./dataset", help="dataset root (TSLib scripts use ./dataset)")
    parser.add_argument("--mirror", default=None, help=f"local mirror folder (default: env {MIRROR_ENV})")
    parser.add_argument("--offline", action="store_true", help="only copy from the mirror; never download")
    parser.add_argument("--accept-unverified", action="store_true",
                        help="install copied or downloaded files that no known checksum covers (neither the "
                             f"registry nor the mirror's {SUMS_FILE}), logging the sha256 of each; check them yourself")
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
            fetch(name, args.root, mirror, download=not args.offline, accept_unverified=args.accept_unverified)
        except UserInputError as exc:
            logger.error("error: %s", exc)
            failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
