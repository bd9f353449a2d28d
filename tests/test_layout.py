"""The floors of the tree import downward only (house style, README "Layout"): entry points (`run.py`,
`compare/`, `explain/`, `predict/`, `benchmarks/`) → `exp/` → `models/` → `layers/` → `utils/`, with
`data_provider/` beside `exp/`. Every `import` statement of every module is read with `ast`, function-level imports
included. The applications `compare/`, `explain/` and `predict/` stand side by side and import none of the others;
run.py imports `predict/` for its `--do_predict`. The same
statements, resolved to modules, form an import graph that must hold no circle (Tarjan's strongly connected
components).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FLOORS = ("utils", "layers", "models", "data_provider", "exp", "compare", "explain", "predict", "benchmarks", "run")
# What each floor may import from the project (itself included).
ALLOWED = {
    "utils": {"utils"},
    "layers": {"layers", "utils"},
    "models": {"models", "layers", "utils"},
    "data_provider": {"data_provider", "utils"},
    "exp": {"exp", "models", "layers", "data_provider", "utils"},
    "compare": {"compare", "exp", "models", "layers", "data_provider", "utils"},
    "explain": {"explain", "exp", "models", "layers", "data_provider", "utils"},
    "predict": {"predict", "exp", "models", "layers", "data_provider", "utils"},
    "benchmarks": {"compare", "exp", "models", "layers", "data_provider", "utils"},
    "run": {"predict", "exp", "models", "layers", "data_provider", "utils"},
}


def absolute_imports(path: Path) -> list[tuple[int, str]]:
    """(line, top-level module) of every absolute import in `path`, function-level ones included."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        found += [(node.lineno, name.split(".")[0]) for name in names]
    return found


def project_imports(path: Path) -> list[tuple[int, str]]:
    """(line, top-level project package) of every import in `path`."""
    return [(line, name) for line, name in absolute_imports(path) if name in FLOORS]


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
    bad.write_text("def f():\n    from compare.run.runner import main\n    import exp.arguments\n")
    assert project_imports(bad) == [(2, "compare"), (3, "exp")]


# compare/'s own floors: each folder imports only itself and the folders before it; the files at the top of
# compare/ are its command-line doors (compare/__init__.py holds the map).
COMPARE_FOLDERS = ("recipes", "grid", "report", "run", "tune")
COMPARE_DOORS = {"__init__.py", "__main__.py", "scripts.py", "relative_paths.py", "naive_backfill.py"}


def compare_folder(dotted: str) -> str | None:
    parts = dotted.split(".")
    return parts[1] if parts[0] == "compare" and len(parts) > 1 and parts[1] in COMPARE_FOLDERS else None


@pytest.mark.parametrize("folder", COMPARE_FOLDERS)
def test_compare_folders_import_only_the_folders_below(folder):
    allowed = set(COMPARE_FOLDERS[: COMPARE_FOLDERS.index(folder) + 1])
    upward = []
    for path in sorted((REPO / "compare" / folder).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
            upward += [f"{path.relative_to(REPO)}:{node.lineno} imports {name}" for name in names
                       if name == "compare" or compare_folder(name) not in allowed | {None}]
    assert not upward, f"compare/{folder}/ may import only {sorted(allowed)}: " + "; ".join(upward)


def test_compare_holds_only_its_folders_and_doors():
    loose = sorted(p.name for p in (REPO / "compare").glob("*.py") if p.name not in COMPARE_DOORS)
    assert not loose, f"put {loose} in one of compare/'s folders {COMPARE_FOLDERS} (map: compare/__init__.py)"


# Import circles the circle test tolerates: none.
KNOWN_CIRCLES: set[frozenset[str]] = set()


def module_files(root: Path, tops: tuple[str, ...]) -> dict[str, Path]:
    """Dotted module name -> file for every module under `root` whose top-level name is in `tops`
    (a package is its `__init__.py`)."""
    found = {}
    for top in tops:
        files = [root / f"{top}.py"] if (root / f"{top}.py").is_file() else sorted((root / top).rglob("*.py"))
        for path in files:
            parts = path.relative_to(root).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _imported_names(node: ast.Import | ast.ImportFrom, name: str, is_package: bool) -> list[str]:
    """The dotted names an import statement of module `name` may load: the module itself and, for
    `from m import x`, m.x (a submodule when x is one). Relative imports are resolved against `name`."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        package = name.split(".") if is_package else name.split(".")[:-1]
        anchor = package[: len(package) - (node.level - 1)]
        base = ".".join(anchor + ([node.module] if node.module else []))
    return [base] + [f"{base}.{alias.name}" for alias in node.names]


def import_graph(root: Path, tops: tuple[str, ...]) -> dict[str, dict[str, int]]:
    """module -> {imported project module: first line}, from every import statement (function-level ones
    included). Importing a.b.c runs a and a.b first, so each package on the way counts as imported too."""
    files = module_files(root, tops)
    graph: dict[str, dict[str, int]] = {}
    for name, path in files.items():
        edges = graph.setdefault(name, {})
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            for dotted in _imported_names(node, name, path.name == "__init__.py"):
                parts = dotted.split(".")
                for end in range(1, len(parts) + 1):
                    target = ".".join(parts[:end])
                    if target in files and target != name:
                        edges.setdefault(target, node.lineno)
    return graph


def strongly_connected(graph: dict[str, dict[str, int]]) -> list[set[str]]:
    """Tarjan's strongly connected components with more than one module: each is a set of modules that
    import one another in a circle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, {}):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_circles():
    """No two project modules import each other, directly or through others, not even inside a function
    (house style: a circle means two files share a concept that wants its own home)."""
    graph = import_graph(REPO, FLOORS)
    circles = [c for c in strongly_connected(graph) if frozenset(c) not in KNOWN_CIRCLES]
    report = ["{" + ", ".join(sorted(c)) + "}: " + "; ".join(
        f"{source}:{line} imports {target}" for source in sorted(c) for target, line in sorted(graph[source].items())
        if target in c) for c in circles]
    assert not circles, "import circles: " + " | ".join(report)


def test_the_check_sees_an_import_circle(tmp_path):
    """A circle closed by an import inside a function, one through relative imports, and `from pkg import
    mod` resolved to the submodule; a one-way import is no circle."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    files = {
        "__init__.py": "",
        "a.py": "from pkg import b\n",
        "b.py": "def f():\n    from pkg.a import thing\n    return thing\n",
        "c.py": "import pkg.a\nfrom pkg.d import name\n",
        "d.py": "from . import e\nname = 1\n",
        "e.py": "from .d import name\n",
    }
    for file, text in files.items():
        (pkg / file).write_text(text)
    graph = import_graph(tmp_path, ("pkg",))
    assert graph["pkg.a"] == {"pkg": 1, "pkg.b": 1}
    assert graph["pkg.b"] == {"pkg": 2, "pkg.a": 2}
    assert sorted(map(sorted, strongly_connected(graph))) == [["pkg.a", "pkg.b"], ["pkg.d", "pkg.e"]]


MAX_FILE_LINES, MAX_FUNCTION_LINES = 700, 80


def oversized(root: Path) -> list[str]:
    """Every Python file outside scripts/ over MAX_FILE_LINES lines and every function over MAX_FUNCTION_LINES
    (decorators excluded, docstring included), as `path: what`."""
    found = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if relative.parts[0] in ("scripts", ".git") or any(part.startswith(".") for part in relative.parts):
            continue
        text = path.read_text()
        if text.count("\n") > MAX_FILE_LINES:
            found.append(f"{relative}: {text.count(chr(10))} lines")
        found += [f"{relative}:{line} {name}: {length} lines"
                  for line, name, length in functions_over(text, MAX_FUNCTION_LINES)]
    return found


def functions_over(text: str, limit: int) -> list[tuple[int, str, int]]:
    """(line, name, length) of every function in the source `text` (methods and nested functions included;
    decorators excluded, docstring included) longer than `limit` lines."""
    return [(node.lineno, node.name, node.end_lineno - node.lineno + 1) for node in ast.walk(ast.parse(text))
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno - node.lineno >= limit]


def test_no_room_outgrows_a_reader():
    assert oversized(REPO) == []


def test_the_size_check_sees_a_long_function_and_a_long_file(tmp_path):
    (tmp_path / "long.py").write_text("def f():\n" + "    x = 1\n" * MAX_FUNCTION_LINES)
    (tmp_path / "big.py").write_text("x = 1\n" * (MAX_FILE_LINES + 1))
    assert oversized(tmp_path) == ["big.py: 701 lines", "long.py:1 f: 81 lines"]


# Library code (all but tests/, scripts/ and docs/) holds functions a reader takes in without scrolling.
LIBRARY_FUNCTION_LINES = 60
LIBRARY_SKIPS = ("tests", "scripts", "docs")


def long_library_functions(root: Path) -> list[str]:
    """Every function (methods and nested functions included) over LIBRARY_FUNCTION_LINES lines in the library's
    Python files (decorators excluded, docstring included), as `path:line name: N lines`."""
    found = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if relative.parts[0] in LIBRARY_SKIPS or any(part.startswith(".") for part in relative.parts):
            continue
        found += [f"{relative.as_posix()}:{line} {name}: {length} lines"
                  for line, name, length in functions_over(path.read_text(), LIBRARY_FUNCTION_LINES)]
    return found


def test_no_library_function_needs_a_scroll_bar():
    assert long_library_functions(REPO) == []


def test_the_function_length_check_sees_library_code_only(tmp_path):
    body = "    x = 1\n" * LIBRARY_FUNCTION_LINES
    for folder in ("models", "tests", "scripts", "docs"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "long.py").write_text("class A:\n    def f(self):\n    " + body.replace("\n    ", "\n        ")
                                                   + "def short():\n    return 1\n")
    (tmp_path / "run.py").write_text("def g():\n" + body)
    assert long_library_functions(tmp_path) == ["models/long.py:2 f: 61 lines", "run.py:1 g: 61 lines"]
