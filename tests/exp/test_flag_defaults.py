"""One table of flag defaults (utils/flag_defaults.py, generated from run.py's parser by exp/flag_table.py), read
everywhere: no library file restates a registered flag's default as `getattr(x, "<flag>", <literal>)`."""

from __future__ import annotations

import ast
from pathlib import Path

from exp.arguments import build_parser
from exp.flag_table import TABLE_FILE, parser_defaults, table_source
from utils.flag_defaults import FLAG_DEFAULTS, flag_default

REPO = Path(__file__).resolve().parents[2]
#: folders that are not library code
NOT_LIBRARY = {"tests", "scripts", "docs", "dataset", ".git", ".venv", "__pycache__"}
#: (file, name) pairs whose getattr reads an attribute of another object that shares a flag's name
NOT_FLAGS = {
    ("exp/training_guards.py", "data_path"): "a dataset's file, not run.py's --data_path",
    ("exp/training_guards.py", "root_path"): "a dataset's folder, not run.py's --root_path",
}


def library_files() -> list[Path]:
    """Every .py file of the library (run.py, the packages), without tests, scripts and docs."""
    return sorted(path for path in REPO.rglob("*.py")
                  if not NOT_LIBRARY & set(path.relative_to(REPO).parts))


def literal_default_reads(source: str, rel: str, flags: set[str]) -> list[str]:
    """`rel:line getattr(...)` for each getattr of a registered flag whose fallback is a literal in `source`."""
    found = []
    for node in ast.walk(ast.parse(source, filename=rel)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
                and len(node.args) == 3):
            continue
        name, fallback = node.args[1], node.args[2]
        if not (isinstance(name, ast.Constant) and name.value in flags) or (rel, name.value) in NOT_FLAGS:
            continue
        try:
            ast.literal_eval(fallback)
        except ValueError:
            continue  # a name or a call (flag_default(...)): not a restated literal
        found.append(f"{rel}:{node.lineno} {ast.unparse(node)}")
    return found


def test_no_library_file_restates_a_flag_default():
    flags = set(parser_defaults())
    found = [hit for path in library_files()
             for hit in literal_default_reads(path.read_text(), path.relative_to(REPO).as_posix(), flags)]
    assert not found, ("restated flag defaults; read them with utils.flag_defaults.flag_default(name):\n"
                       + "\n".join(found))


def test_the_scan_sees_a_restated_default_and_not_the_table():
    source = 'a = getattr(args, "caps_impl", "chunked")\nb = getattr(args, "caps_impl", flag_default("caps_impl"))\n'
    assert literal_default_reads(source, "x.py", {"caps_impl"}) == ["x.py:1 getattr(args, 'caps_impl', 'chunked')"]


def test_the_committed_table_is_the_parsers():
    assert TABLE_FILE.read_text() == table_source(), "utils/flag_defaults.py is stale: run python -m exp.flag_table"
    parser = build_parser()
    for name, value in FLAG_DEFAULTS.items():
        assert parser.get_default(name) == value == flag_default(name)


def test_a_list_default_is_a_copy():
    dims = flag_default("p_hidden_dims")
    dims.append(1)
    assert flag_default("p_hidden_dims") == [128, 128]
