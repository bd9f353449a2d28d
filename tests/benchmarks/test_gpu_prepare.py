"""`benchmarks/gpu_prepare.sh` refuses a bad mirror with one line before it touches `.whl/` or `.gpu/`.

Only the refusals run here: the download itself needs the package index (run by hand, see
benchmarks/README.md). The script works on the checkout it lives in, so the tests run a copy of it in a
scratch checkout-shaped folder and look at what that folder holds afterwards.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu_prepare.sh"


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A folder shaped like the repository root (benchmarks/gpu_prepare.sh) with a marker in .whl/."""
    root = tmp_path / "repo"
    (root / "benchmarks").mkdir(parents=True)
    shutil.copy(SCRIPT, root / "benchmarks" / "gpu_prepare.sh")
    (root / ".whl").mkdir()
    (root / ".whl" / "kept.whl").write_text("earlier wheels")
    return root


def _run(checkout: Path, mirror: Path | str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(checkout / "benchmarks" / "gpu_prepare.sh"), str(mirror)],
                          capture_output=True, text=True, timeout=60, cwd=cwd)


def _mirror(tmp_path: Path, content: bytes, listed: bytes) -> Path:
    """A mirror with one data file holding `content` and a SHA256SUMS line for `listed`."""
    mirror = tmp_path / "mirror"
    (mirror / "ETT-small").mkdir(parents=True)
    (mirror / "ETT-small" / "ETTh1.csv").write_bytes(content)
    (mirror / "SHA256SUMS").write_text(f"{hashlib.sha256(listed).hexdigest()}  ETT-small/ETTh1.csv\n")
    return mirror


def test_a_folder_without_sums_is_refused_in_one_line(checkout, tmp_path):
    result = _run(checkout, tmp_path / "nowhere")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"gpu_prepare: no SHA256SUMS in {tmp_path / 'nowhere'}: pass the data mirror's folder"]
    assert (checkout / ".whl" / "kept.whl").is_file() and not (checkout / ".gpu").exists()


def test_a_mirror_that_fails_its_sums_is_refused_before_anything_is_replaced(checkout, tmp_path):
    mirror = _mirror(tmp_path, b"date,OT\n", listed=b"other bytes")
    result = _run(checkout, mirror)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == (
        f"gpu_prepare: {mirror} does not match its SHA256SUMS: restore the mirror first")
    assert (checkout / ".whl" / "kept.whl").is_file() and not (checkout / ".gpu").exists()


def test_a_relative_mirror_is_read_from_the_callers_folder(checkout, tmp_path):
    """The script moves to the repository root; a relative MIRROR still names the caller's folder."""
    mirror = _mirror(tmp_path, b"date,OT\n", listed=b"other bytes")
    result = _run(checkout, "mirror", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == (
        f"gpu_prepare: {mirror} does not match its SHA256SUMS: restore the mirror first")
