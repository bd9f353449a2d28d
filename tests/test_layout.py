"""The floors of the tree import downward only (house style, README "Layout"): entry points (`run.py`,
`compare/`, `explain/`, `benchmarks/`) → `exp/` → `models/` → `layers/` → `utils/`, with `data_provider/`
beside `exp/`. Every `import` statement of every module is read with `ast`, function-level imports included.
The two applications `compare/` and `explain/` stand side by side and import neither the other.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FLOORS = ("utils", "layers", "models", "data_provider", "exp", "compare", "explain", "benchmarks", "run")
# What each floor may import from the project (itself included).
ALLOWED = {
    "utils": {"utils"},
    "layers": {"layers", "utils"},
    "models": {"models", "layers", "utils"},
    "data_provider": {"data_provider", "utils"},
    "exp": {"exp", "models", "layers", "data_provider", "utils"},
    "compare": {"compare", "exp", "models", "layers", "data_provider", "utils"},
    "explain": {"explain", "exp", "models", "layers", "data_provider", "utils"},
    "benchmarks": {"compare", "exp", "models", "layers", "data_provider", "utils"},
    "run": {"exp", "models", "layers", "data_provider", "utils"},
}


def project_imports(path: Path) -> list[tuple[int, str]]:
    """(line, top-level project package) of every import in `path`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        found += [(node.lineno, name.split(".")[0]) for name in names if name.split(".")[0] in FLOORS]
    return found


def modules() -> list[tuple[str, Path]]:
    files = [("run", REPO / "run.py")]
    for floor in FLOORS[:-1]:
        files += [(floor, path) for path in sorted((REPO / floor).rglob("*.py"))]
    return files


@pytest.mark.parametrize(("floor", "path"), modules(), ids=lambda v: str(v.relative_to(REPO)) if isinstance(v, Path) else "")
def test_imports_run_downward(floor, path):
    upward = [f"{path.relative_to(REPO)}:{line} imports {name}" for line, name in project_imports(path)
              if name not in ALLOWED[floor]]
    assert not upward, "import runs up a floor: " + "; ".join(upward)


def test_the_check_sees_an_upward_import(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from compare.runner import main\n    import exp.arguments\n")
    assert project_imports(bad) == [(2, "compare"), (3, "exp")]
