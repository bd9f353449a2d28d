"""compare.grid.run_state.warn_changed_recipes: a finished run whose recorded command differs from the planned
one in a flag that changes results is named with that flag (was / now); a difference only in flags that do not
(--num_workers, --root_path) says nothing."""

from __future__ import annotations

import json
import logging

import pytest

from compare.grid.plan import PlannedRun, Row
from compare.grid.run_state import warn_changed_recipes

SETTING = "long_term_forecast_toy_24_12_DLinear_custom_ftM_sl24_ll12_pl12_Exp_0"
PLANNED = ["--model", "DLinear", "--seq_len", "24", "--learning_rate", "0.001", "--num_workers", "0",
           "--root_path", "/data/here/", "--use_amp"]


def warnings_for(tmp_path, caplog, recorded: list[str]) -> list[str]:
    (tmp_path / "compare_runs.jsonl").write_text(json.dumps(
        {"row": "DLinear", "dataset": "toy", "pred_len": 12, "status": "ok", "settings": [SETTING],
         "argv": recorded}) + "\n")
    run = PlannedRun(row=Row("DLinear", "DLinear"), dataset="toy", point=12, argv=PLANNED, settings=[SETTING])
    with caplog.at_level(logging.WARNING, logger="compare"):
        warn_changed_recipes(tmp_path, [run])
    return [r.getMessage() for r in caplog.records]


def test_result_free_flags_alone_say_nothing(tmp_path, caplog):
    recorded = ["--model", "DLinear", "--seq_len", "24", "--learning_rate", "0.001", "--num_workers", "10",
                "--root_path", "/data/elsewhere/", "--use_amp"]
    assert warnings_for(tmp_path, caplog, recorded) == []


@pytest.mark.parametrize(("recorded", "named"), [
    (["--model", "DLinear", "--seq_len", "24", "--learning_rate", "0.01", "--use_amp"],
     "--learning_rate 0.001 (was 0.01)"),
    (["--model", "DLinear", "--seq_len", "24", "--learning_rate", "0.001"], "--use_amp set (was unset)"),
    (["--model", "DLinear", "--seq_len", "24", "--learning_rate", "0.001", "--use_amp", "--gone_flag", "3"],
     "--gone_flag unset (was 3)"),
], ids=["value", "switch", "removed-flag"])
def test_a_result_flag_that_differs_is_named_with_both_values(tmp_path, caplog, recorded, named):
    (message,) = warnings_for(tmp_path, caplog, recorded)
    assert message.startswith(f"  DLinear | toy | H=12 finished earlier with different flags ({named}); its old "
                              "result is kept: delete ")
