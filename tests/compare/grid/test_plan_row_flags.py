"""compare.grid.plan.refuse_replaced_row_flags: a flag set for every run (--extra, --epochs) never silently replaces a
flag that defines a row (a --variant's FLAGS, a table variant's flags), and --extra never repeats a flag another
runner option sets: the runner refuses the invocation in one line and writes nothing."""

from __future__ import annotations

import pytest

from compare.grid.plan import rows_from_args
from compare.recipes.tables import RECIPES
from compare.run.runner import build_parser
from tests.compare.run.test_runner import base_argv, invoke, write_toy_csv


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    root = tmp_path_factory.mktemp("row_flags")
    write_toy_csv(root / "data" / "toy" / "toy.csv")
    return root


@pytest.mark.parametrize(("extra", "expected"), [
    (["--variant", "Deep=DLinear:--learning_rate 0.01 --batch_size 8", "--extra=--batch_size 32"],
     "error: row 'Deep' sets --batch_size and --extra sets --batch_size for every run, which would replace the "
     "row's value; drop --batch_size from --extra or from the row"),
    (["--variant", "Long=DLinear:--train_epochs 3"],
     "error: row 'Long' sets --train_epochs and --epochs sets --train_epochs for every run, which would replace "
     "the row's value; drop --train_epochs from --epochs or from the row"),
    (["--extra=--train_epochs 3"],
     "error: --extra sets --train_epochs, which --epochs sets for every run; give it once (as --epochs)"),
    (["--extra=--num_workers=2"],
     "error: --extra sets --num_workers, which --num_workers sets for every run; give it once (as --num_workers)"),
], ids=["variant-vs-extra", "variant-vs-epochs", "extra-vs-epochs", "extra-equals-form"])
def test_a_row_flag_replaced_by_a_runner_flag_is_refused_in_one_line(workspace, capsys, extra, expected):
    out = workspace / "out"
    code, _ = invoke([*base_argv(workspace, out, "DLinear"), *extra])
    assert code == 2
    assert capsys.readouterr().err.strip() == expected and not out.exists()


def test_a_table_variant_keeps_its_defining_flag_against_extra():
    """`CAPS w/o Path1` is `--caps_paths 23`: an --extra --caps_paths would make it plain CAPS."""
    from compare.grid.plan import refuse_replaced_row_flags
    from utils.errors import UserInputError

    args = build_parser().parse_args(["--data", "ETTh1", "--models", "CAPS w/o Path1", "DLinear",
                                      "--extra=--caps_paths 123"])
    args.extra_flags = ["--caps_paths", "123"]
    rows = rows_from_args(args, RECIPES)
    with pytest.raises(UserInputError, match=r"^row 'CAPS w/o Path1' sets --caps_paths and --extra sets"):
        refuse_replaced_row_flags(args, rows, RECIPES.variants)
    args.extra_flags = ["--caps_impl", "torch"]  # a flag no row defines: fine
    refuse_replaced_row_flags(args, rows, RECIPES.variants)


def test_flags_that_do_not_overlap_plan_with_the_row_values(workspace):
    out = workspace / "ok"
    code, log = invoke([*base_argv(workspace, out, "DLinear"), "--variant", "Fast=DLinear:--learning_rate 0.01",
                        "--extra=--batch_size 8", "--dry-run"])
    assert code == 0
    fast = next(line for line in log.splitlines() if "Fast" in line and "run.py" in line)
    assert "--learning_rate 0.01" in fast and "--batch_size 8" in fast
