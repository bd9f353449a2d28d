"""`make test` from a fresh clone reads the dataset mirror by an absolute path (tests that change directory still
find it), and CI runs exactly the README's `make test`, with nothing pre-exported."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import _absolute_mirror

REPO = Path(__file__).resolve().parents[1]


def mirror_passed_by_make(*make_args: str, env: dict[str, str] | None = None) -> str:
    """The TSLIB_DATA_MIRROR value `make -n test` would give pytest."""
    done = subprocess.run(["make", "-n", "test", *make_args], cwd=REPO, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, check=True)
    (value,) = re.findall(r"^TSLIB_DATA_MIRROR=(\S*) .*-m pytest", done.stdout, flags=re.M)
    return value


@pytest.mark.parametrize("how", ["make-variable", "environment"])
def test_make_test_makes_a_relative_mirror_absolute(how):
    given = "../some/mirror"
    if how == "make-variable":
        value = mirror_passed_by_make(f"TSLIB_DATA_MIRROR={given}")
    else:
        value = mirror_passed_by_make(env={"TSLIB_DATA_MIRROR": given})
    assert value == os.path.abspath(REPO / given)


def test_make_test_finds_the_mirror_beside_the_clone():
    beside = REPO.parent / "shared" / "datasets"
    if not beside.is_dir():
        pytest.skip(f"no mirror beside this checkout ({beside})")
    assert mirror_passed_by_make(env={"TSLIB_DATA_MIRROR": ""}) == str(beside)


def test_conftest_makes_a_relative_mirror_absolute_for_subprocesses_too(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TSLIB_DATA_MIRROR", "mirror")
    assert _absolute_mirror() == str(tmp_path / "mirror") == os.environ["TSLIB_DATA_MIRROR"]


def test_ci_runs_the_readmes_make_test_without_exporting_the_mirror():
    ci = (REPO / ".ci" / "run").read_text()
    assert "make test" in (REPO / "README.md").read_text()
    commands = [line.strip() for line in ci.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert commands[-1] == "make test"
    assert "TSLIB_DATA_MIRROR" not in ci
