"""pyproject.toml installs no top-level package (README: the library runs from its checkout, as TSLib): generic names
such as `models`, `layers` or `utils` in site-packages would shadow or be shadowed by other projects' packages."""

from __future__ import annotations

from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")

REPO = Path(__file__).resolve().parents[1]


def test_pip_install_puts_no_package_into_site_packages():
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    setuptools = config.get("tool", {}).get("setuptools", {})
    # Without an explicit empty list, setuptools' discovery would pick up the checkout's folders.
    assert setuptools.get("packages") == []
    assert "py-modules" not in setuptools and "package-dir" not in setuptools
