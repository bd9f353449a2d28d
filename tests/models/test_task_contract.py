"""Every model serves the tasks TSLib's model serves (`../shared/docs/tslib_models/tasks.csv`), with the
task's forward contract (TSLib §4):

| task | call | output |
|---|---|---|
| imputation | `forward(x_masked, x_mark, None, None, mask)` | `[B, L, C]` |
| anomaly_detection | `forward(x, None, None, None)` | `[B, L, C]` |
| classification | `forward(x, padding_mask, None, None)` | `[B, num_class]` |

plus one backward pass with finite gradients, for every task a model module declares in `TASKS` (each model
declares at least the tasks TSLib's model serves); a window task it does not declare is a one-line error
naming `--task_name`.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
import torch

from exp.model_registry import MODEL_REGISTRY
from tests.models.test_model_contract import BATCH, FORECASTERS, _marks, declared_tasks, tiny_configs
from tests.models.tslib_reference import model_params
from utils.errors import UserInputError

TASKS_CSV = Path(__file__).resolve().parents[3] / "shared" / "docs" / "tslib_models" / "tasks.csv"
WINDOW_TASKS = ("imputation", "anomaly_detection", "classification")
NUM_CLASS = 3


def tslib_tasks() -> dict[str, set[str]]:
    """Model → the task names TSLib's forward handles (models that only forecast map to both forecasts)."""
    with TASKS_CSV.open() as handle:
        rows = list(csv.DictReader(handle))
    served = {}
    for row in rows:
        tasks = row["tasks_handled_in_forward"]
        served[row["model"]] = ({"long_term_forecast", "short_term_forecast"} if tasks.startswith("forecast-only")
                                else set(tasks.split("|")))
    return served


TSLIB_TASKS = tslib_tasks() if TASKS_CSV.is_file() else {}

SERVED = [(m, t) for m in sorted(MODEL_REGISTRY) for t in WINDOW_TASKS if t in declared_tasks(m)]
NOT_SERVED = [(m, t) for m in sorted(MODEL_REGISTRY) for t in WINDOW_TASKS if t not in declared_tasks(m)]


def task_configs(make_configs, model: str, task: str):
    extra = dict(task_name=task, label_len=0, pred_len=0)
    configs = tiny_configs(make_configs, model, "M", **extra)
    if task == "classification":
        configs.num_class = NUM_CLASS
    return configs


def primary_configs(make_configs, model: str):
    """Tiny configs of the model's first task: forecasting (features M) if it forecasts, else its first
    declared window task."""
    if model in FORECASTERS:
        return tiny_configs(make_configs, model, "M")
    return task_configs(make_configs, model, next(t for t in WINDOW_TASKS if t in declared_tasks(model)))


def task_call(configs, task: str, generator: torch.Generator, batch: int = BATCH) -> tuple[tuple, tuple[int, ...]]:
    """The arguments the task's experiment passes to forward for `batch` windows, and the output shape it
    expects."""
    x = torch.randn(batch, configs.seq_len, configs.enc_in, generator=generator)
    if task == "imputation":
        mask = (torch.rand(x.shape, generator=generator) > 0.25).float()
        marks = _marks(configs, configs.seq_len, generator, batch)
        return (x * mask, marks, None, None, mask), (batch, configs.seq_len, configs.enc_in)
    if task == "anomaly_detection":
        return (x, None, None, None), (batch, configs.seq_len, configs.enc_in)
    padding = torch.ones(batch, configs.seq_len)
    padding[0, configs.seq_len // 2:] = 0  # one shorter series, padded at the end
    return (x, padding, None, None), (batch, NUM_CLASS)


def test_the_tslib_task_table_is_present():
    assert TASKS_CSV.is_file(), f"{TASKS_CSV} is missing: the tests need ../shared beside the repository"
    assert TSLIB_TASKS["TimesNet"] == {"long_term_forecast", "short_term_forecast", *WINDOW_TASKS}


@pytest.mark.parametrize("model_name", sorted(set(MODEL_REGISTRY) & set(TSLIB_TASKS)))
def test_every_model_declares_the_tasks_its_tslib_model_serves(model_name: str) -> None:
    assert declared_tasks(model_name) >= TSLIB_TASKS[model_name] & set(WINDOW_TASKS)


@pytest.mark.parametrize(("model_name", "task"), model_params(SERVED))
def test_task_forward_shape_and_backward(make_configs, model_name: str, task: str) -> None:
    configs = task_configs(make_configs, model_name, task)
    model = MODEL_REGISTRY[model_name](configs).float().train()
    args, shape = task_call(configs, task, torch.Generator().manual_seed(7))
    out = model(*args)
    assert out.shape == shape
    assert torch.isfinite(out).all()
    out.square().mean().backward()
    grads = [p.grad for p in model.parameters() if p.requires_grad and p.grad is not None]
    assert grads and all(torch.isfinite(g).all() for g in grads)
    assert any(g.abs().sum() > 0 for g in grads)


@pytest.mark.parametrize(("model_name", "task"), model_params(NOT_SERVED))
def test_a_task_the_model_does_not_serve_is_a_one_line_error(make_configs, model_name: str, task: str) -> None:
    with pytest.raises(UserInputError, match=f"--task_name '{task}' is not supported by {model_name}"):
        MODEL_REGISTRY[model_name](task_configs(make_configs, model_name, task))


@pytest.mark.parametrize("model_name", sorted(MODEL_REGISTRY))
def test_forecasting_models_serve_both_forecasting_tasks(make_configs, model_name: str) -> None:
    """TSLib's M4 scripts run the forecasting head with --task_name short_term_forecast."""
    served = TSLIB_TASKS.get(model_name, {"long_term_forecast", "short_term_forecast"})
    if "short_term_forecast" not in served or model_name == "Mamba":
        pytest.skip(f"{model_name} does not serve short_term_forecast in TSLib" if model_name != "Mamba"
                    else "Mamba needs mamba_ssm (CUDA)")
    configs = tiny_configs(make_configs, model_name, "M", task_name="short_term_forecast")
    MODEL_REGISTRY[model_name](configs)
