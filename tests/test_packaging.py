"""`pip install .` installs the library: every package of its top-level names (models, layers, exp, data_provider,
utils, compare, explain, predict, with their subpackages), the files the code reads beside it (the native CAPS
kernel's C++ source), and requirements.txt as its dependencies; so `from predict.load import load_trained`,
`python -m compare --help` and `python -m predict --help` work from any folder. run.py stays with the checkout."""

from __future__ import annotations

import fnmatch
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")

REPO = Path(__file__).resolve().parents[1]
CONFIG = tomllib.loads((REPO / "pyproject.toml").read_text())
SETUPTOOLS = CONFIG["tool"]["setuptools"]
LIBRARY = ("models", "layers", "exp", "data_provider", "utils", "compare", "explain", "predict")


def package_folders() -> set[str]:
    """Dotted names of every folder with an __init__.py under the library's top-level names."""
    return {".".join(init.parent.relative_to(REPO).parts) for name in LIBRARY
            for init in (REPO / name).rglob("__init__.py") if "__pycache__" not in init.parts}


def test_every_package_of_the_library_and_nothing_else_is_installed():
    from setuptools import find_packages

    found = find_packages(str(REPO), include=SETUPTOOLS["packages"]["find"]["include"])
    assert set(found) == package_folders()
    assert {"layers.caps", "compare.recipes", "exp.trackers"} <= set(found)


def test_files_read_beside_the_code_are_package_data():
    data = SETUPTOOLS["package-data"]
    missing = [str(path.relative_to(REPO)) for name in LIBRARY for path in (REPO / name).rglob("*")
               if path.is_file() and path.suffix not in (".py", ".pyc") and "__pycache__" not in path.parts
               and not any(fnmatch.fnmatch(path.name, glob) for glob in data.get(
                   ".".join(path.parent.relative_to(REPO).parts), []))]
    assert missing == []
    assert (REPO / "layers" / "caps" / "native.cpp").is_file()


def test_dependencies_are_requirements_txt():
    assert "dependencies" in CONFIG["project"]["dynamic"]
    assert SETUPTOOLS["dynamic"]["dependencies"] == {"file": ["requirements.txt"]}
    # setuptools reads the file itself: no pip options (-r, -e) in it.
    assert not [line for line in (REPO / "requirements.txt").read_text().splitlines() if line.startswith("-")]
    assert CONFIG["build-system"]["build-backend"] == "setuptools.build_meta"


def source_copy(tmp_path: Path) -> Path:
    """What `pip install .` reads, copied, so the build's build/ and *.egg-info stay out of the checkout."""
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "requirements.txt"):
        shutil.copy(REPO / name, source / name)
    for name in LIBRARY:
        shutil.copytree(REPO / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
    return source


@pytest.mark.slow
def test_pip_install_makes_the_library_usable_from_any_folder(tmp_path):
    """A venv on this interpreter's packages (nothing downloaded), the library installed into it without its
    dependencies, then used from a folder that is not the checkout."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    installed = subprocess.run([python, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                                str(source_copy(tmp_path))], capture_output=True, text=True, env=env)
    assert installed.returncode == 0, installed.stderr[-2000:]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([python, *args], cwd=elsewhere, capture_output=True, text=True, env=env)

    imported = run("-c", "import predict.load, layers.caps.native as native; from predict.load import load_trained; "
                         "from exp.model_card import library_version; "
                         "print(predict.load.__file__); print(native.SOURCE.is_file()); print(library_version())")
    assert imported.returncode == 0, imported.stderr[-2000:]
    where, source_found, version = imported.stdout.split()
    # The packages come from the venv, the C++ source with them; model cards name the installed version.
    assert Path(where).is_relative_to(venv) and source_found == "True" and version == CONFIG["project"]["version"]
    for module, usage in (("compare", "usage: python -m compare"), ("predict", "usage: python -m predict")):
        done = run("-m", module, "--help")
        assert done.returncode == 0 and done.stdout.startswith(usage), done.stderr[-2000:]
