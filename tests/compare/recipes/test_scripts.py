"""compare.recipes.scripts: the committed `scripts/` equal the ones generated from the recipe table (byte for
byte), each is valid bash, bash runs exactly the table's argv, and `--check` names what is off."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from compare.recipes import scripts
from compare.recipes.tables import RECIPES, TASK_RECIPES

REPO = Path(__file__).resolve().parents[3]
GENERATED = scripts.render_scripts()
BASH = shutil.which("bash")
needs_bash = pytest.mark.skipif(BASH is None, reason="bash is not installed")
# Stands in for python: prints $CUDA_VISIBLE_DEVICES and each argument NUL-terminated, then a record mark.
STUB = 'python() { printf "%s\\0" "$CUDA_VISIBLE_DEVICES" "$@"; printf "\\036\\0"; }; source "$1"'


def test_committed_scripts_equal_the_generated_ones():
    assert scripts.check_scripts(REPO) == [], "run `python -m compare.scripts` and commit scripts/"


def test_every_script_starts_with_the_generated_header():
    for path, text in GENERATED.items():
        assert text.splitlines()[:2] == list(scripts.HEADER), path
        assert "python -m compare.scripts" in text.splitlines()[0]


@needs_bash
@pytest.mark.parametrize("path", GENERATED)
def test_script_is_valid_bash(path):
    result = subprocess.run([BASH, "-n", str(REPO / path)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr


@needs_bash
@pytest.mark.parametrize("path", GENERATED)
def test_bash_runs_the_table_argv_in_order(path):
    """What bash passes to python (after $model_name expansion) is the table's argv, block for block."""
    out = subprocess.run([BASH, "-c", STUB, "stub", str(REPO / path)], capture_output=True, text=True,
                         check=True, cwd=REPO).stdout
    calls = [record.split("\0")[:-1] for record in out.split("\x1e\0")[:-1]]
    fetched = [c[3] for c in calls if c[1:3] == ["-m", "data_provider.fetch"]]
    runs = [c for c in calls if c[1:3] == ["-u", "run.py"]]
    assert len(fetched) + len(runs) == len(calls)
    argvs, wanted = table_blocks(path)
    assert [c[3:] for c in runs] == argvs
    assert {c[0] for c in runs} == {RECIPES.env["CUDA_VISIBLE_DEVICES"]}
    assert fetched == wanted


def table_blocks(path: str) -> tuple[list[list[str]], list[str]]:
    """The argv of every block the tables place in `path`, in order, and the fetch names it should run."""
    expected = [(row, d, h) for row in RECIPES.rows for d in RECIPES.row_datasets(row)
                for h in RECIPES.horizons(row, d) if RECIPES.script(row, d) == path]
    if expected:
        fetch = RECIPES.models[RECIPES.row_model(expected[0][0])].fetch
        return ([RECIPES.argv(*block) for block in expected],
                list(dict.fromkeys(RECIPES.datasets[d].fetch for _, d, _ in expected)) if fetch else [])
    blocks = [b for b in TASK_RECIPES.every_block() if TASK_RECIPES.script(*b[:3]) == path]
    task, model = blocks[0][:2]
    datasets = TASK_RECIPES.datasets[task]
    fetch = TASK_RECIPES.recipe(task, model).fetch
    return ([TASK_RECIPES.argv(*block) for block in blocks],
            list(dict.fromkeys(datasets[d].fetch for _, _, d, _ in blocks if datasets[d].fetch)) if fetch else [])


def test_check_lists_stale_missing_and_extra_scripts(tmp_path, capsys):
    assert scripts.main(["--root", str(tmp_path)]) == 0
    assert scripts.check_scripts(tmp_path) == []
    some, other = [path for path in GENERATED if "--itr 1" in GENERATED[path]][:2]
    (tmp_path / some).write_text(GENERATED[some].replace("--itr 1", "--itr 2"))
    (tmp_path / other).unlink()
    (tmp_path / "scripts" / "mine.sh").write_text("echo hi\n")
    capsys.readouterr()
    assert scripts.main(["--check", "--root", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert f"stale: {some}" in out and f"missing: {other}" in out
    assert "extra (not from the recipe table): scripts/mine.sh" in out
    # Regenerating repairs the generated files and leaves the user's own script alone (and reports it).
    assert scripts.main(["--root", str(tmp_path)]) == 1
    assert scripts.check_scripts(tmp_path) == ["extra (not from the recipe table): scripts/mine.sh"]
