"""compare/grid/plan.py: each planned run's flags are parsed and resolved once (`PlannedRun.args`); its protocol is
that value (the runner's --protocol, or a variant's own, in any of run.py's spellings), not its argv's text."""

from __future__ import annotations

import pytest

from compare.grid.plan import plan_runs, rows_from_args
from compare.run.runner import build_parser
from exp.resolved_args import ResolvedArgs
from tests.compare.run.test_runner import TOY, write_toy_csv


@pytest.mark.parametrize("spelling", [["--protocol", "tslib"], ["--protocol=tslib"]], ids=["space", "equals"])
def test_a_runs_protocol_is_resolved_once_with_its_flags(tmp_path, spelling):
    write_toy_csv(tmp_path / "data" / "toy" / "toy.csv")
    args = build_parser().parse_args(["--data", "toy", "--models", "DLinear", "--pred_lens", "12", "--epochs", "1",
                                      "--num_workers", "0", "--root", str(tmp_path / "data"),
                                      "--out", str(tmp_path / "out"), "--protocol", "strict",
                                      "--variant", f"TSLib DLinear=DLinear:{' '.join(spelling)}"])
    args.extra_flags = []
    plan = plan_runs(args, rows_from_args(args, TOY), TOY)
    assert [(run.row.name, run.protocol) for run in plan] == [("DLinear", "strict"), ("TSLib DLinear", "tslib")]
    assert all(isinstance(run.args, ResolvedArgs) and run.args.pred_len == 12 for run in plan)
