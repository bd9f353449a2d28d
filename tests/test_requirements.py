"""Every third-party package the code imports is a listed requirement: each top-level `import` of every
module outside tests/ (read with `ast`, function-level imports included) is the standard library, the
project itself, or a distribution named in a requirements*.txt file (import names are mapped to
distributions with `importlib.metadata.packages_distributions()`)."""

from __future__ import annotations

import re
import sys
from importlib.metadata import packages_distributions
from pathlib import Path

from tests.test_layout import absolute_imports

REPO = Path(__file__).resolve().parents[1]
SKIPPED = {"tests", ".venv", "build", "dist", ".git"}
# Import names of optional packages that are not installed on every machine (the CUDA extras), so that
# packages_distributions() cannot map them here: import name -> distribution.
NOT_INSTALLED_HERE = {"fla": "fla-core"}


def normalized(name: str) -> str:
    """A distribution name as PEP 503 compares them (PyWavelets, pywavelets and py_wavelets alike)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def listed_requirements() -> set[str]:
    """The distributions named in every requirements*.txt at the repository root (without versions, extras,
    markers or `-r` includes)."""
    names = set()
    for path in REPO.glob("requirements*.txt"):
        for line in path.read_text().splitlines():
            line = line.split("#")[0].strip()
            if line and not line.startswith("-"):
                names.add(normalized(re.split(r"[\[<>=!~;\s]", line, maxsplit=1)[0]))
    return names


def third_party_imports(root: Path) -> dict[str, list[str]]:
    """Top-level name -> the files importing it, for every absolute import of every .py file under `root`
    (outside SKIPPED) that is neither the standard library nor a module of the project (a top-level folder
    or file of the repository, or a module beside the importing file)."""
    project = {p.stem if p.suffix == ".py" else p.name for p in root.iterdir()}
    found: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if SKIPPED & set(relative.parts):
            continue
        local = {p.stem for p in path.parent.glob("*.py")}
        for name in {n for _, n in absolute_imports(path)} - set(sys.stdlib_module_names) - project - local:
            found.setdefault(name, []).append(str(relative))
    return found


def unlisted(imports: dict[str, list[str]], listed: set[str]) -> list[str]:
    """'name (files)' for each import whose distribution is not in `listed`."""
    distributions = packages_distributions()
    missing = []
    for name, files in sorted(imports.items()):
        candidates = distributions.get(name) or [NOT_INSTALLED_HERE.get(name, name)]
        if not {normalized(d) for d in candidates} & listed:
            missing.append(f"{name} ({', '.join(candidates)}; imported by {', '.join(sorted(set(files))[:3])})")
    return missing


def test_every_third_party_import_is_a_listed_requirement():
    imports = third_party_imports(REPO)
    assert {"torch", "numpy", "scipy", "matplotlib"} <= set(imports)  # the scan sees the package's imports
    missing = unlisted(imports, listed_requirements())
    assert not missing, "imported but not in requirements*.txt: " + "; ".join(missing)


def test_the_check_sees_an_unlisted_import(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("import os\nimport pkg.other\nfrom sibling import x\n"
                                             "def f():\n    import scipy.stats\n    from sklearn import svm\n")
    (tmp_path / "pkg" / "sibling.py").write_text("")
    imports = third_party_imports(tmp_path)
    assert set(imports) == {"scipy", "sklearn"}
    assert [m.split(" ")[0] for m in unlisted(imports, {"scikit-learn"})] == ["scipy"]
    assert unlisted(imports, {"scikit-learn", "scipy"}) == []
