"""compare.report.forecast_tables: the report's "Tuning budget" section states each cell's budget as tuning.json
records it (trials and/or minutes, epochs, resources), what was spent and what stopped the search."""

from __future__ import annotations

import json

from compare.report.forecast_tables import tuning_section


def cell(row: str, budget: dict, spent: dict, last: dict) -> dict:
    return {"row": row, "dataset": "ETTh1", "pred_len": 96, "budget": budget, "spent": spent,
            "this_invocation": last, "best_vali_loss": 0.41234, "best_params": {"learning_rate": 0.00123456,
                                                                               "batch_size": 32}}


def test_the_tuning_section_states_each_cells_budget_and_spending(tmp_path):
    assert tuning_section(tmp_path / "tuning.json") == []
    cells = [
        cell("DLinear", {"trials": None, "minutes": 2.5, "epochs_per_trial": 2, "cpus_per_trial": 1.0,
                         "gpus_per_trial": 0.0},
             {"trials": 7, "seconds": 150.2, "epochs_per_trial": [2, 1, 2, 2, 1, 2, 1]},
             {"trials": 7, "seconds": 150.2, "epochs_per_trial": [2, 1, 2, 2, 1, 2, 1], "stopped_by": "time budget"}),
        cell("CAPS", {"trials": 4, "minutes": None, "epochs_per_trial": 2, "cpus_per_trial": 2.0,
                      "gpus_per_trial": 0.5},
             {"trials": 4, "seconds": 61.0, "epochs_per_trial": [2, 2, 1, 2]},
             {"trials": 0, "seconds": 0.0, "epochs_per_trial": [], "stopped_by": "nothing left of the budget"}),
    ]
    (tmp_path / "tuning.json").write_text(json.dumps({"cells": cells}))
    md = tuning_section(tmp_path / "tuning.json")
    assert md[0] == "## Tuning budget"
    assert ("| DLinear | ETTh1 | 96 | 2.5 min × ≤ 2 epochs | 1 CPU, 0 GPU | 7 | 150 | 2, 1, 2, 2, 1, 2, 1 | "
            "time budget | 0.4123 | `--batch_size 32 --learning_rate 0.001235` |") in md
    assert ("| CAPS | ETTh1 | 96 | 4 trials × ≤ 2 epochs | 2 CPU, 0.5 GPU | 4 | 61 | — | nothing left of the "
            "budget | 0.4123 | `--batch_size 32 --learning_rate 0.001235` |") in md
    header = next(line for line in md if line.startswith("| Model"))
    assert header.count("|") == md[-2].count("|")
