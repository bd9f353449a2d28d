"""compare.tune.search_spaces: every model's space is the family space restricted to the flags it reads, centred
on its recipe; NOT_SEARCHED flags stay out. No training: each model is only built (meta device)."""

from __future__ import annotations

import importlib.util

import pytest
import torch

from compare.grid.run_args import parse_run_args
from compare.recipes.tables import MODELS, RECIPES
from compare.tune import search_spaces
from compare.tune.search_spaces import FAMILY_SPACE, NOT_SEARCHED, TRAINING_FLAGS, space_for
from exp.model_flags import flags_read
from exp.model_registry import MODEL_REGISTRY
from utils.errors import UserInputError
from utils.train_split import needs_train_split, synthetic_train_split, with_train_split

HAS_MAMBA_SSM = importlib.util.find_spec("mamba_ssm") is not None


def recipe_argv(model: str) -> list[str]:
    """The recipe of `model` on its first dataset at its first horizon (ETTh1 96 for most)."""
    dataset = RECIPES.row_datasets(model)[0]
    return RECIPES.argv(model, dataset, RECIPES.horizons(model, dataset)[0])


def buildable(model: str) -> None:
    if model == "Mamba" and not (HAS_MAMBA_SSM and torch.cuda.is_available()):
        pytest.skip("Mamba builds only with mamba_ssm on a CUDA machine (its own one-line error is tested)")


def contains(space_range: dict, value: float) -> bool:
    (kind, bounds), = space_range.items()
    if kind == "choice":
        return value in bounds
    low, high = bounds
    return low <= value <= high


def structure(args) -> list:
    """What a built model is made of: per module its type, parameter shapes and plain settings (dropout
    rates, widths, counts), so a flag that changes nothing about the model leaves this unchanged."""
    model_class = MODEL_REGISTRY[args.model]
    if needs_train_split(model_class):
        args = with_train_split(args, synthetic_train_split(rows=2048, channels=args.enc_in))
    with torch.device("meta"):
        model = model_class(args)
    return [(name, type(module).__name__, [tuple(p.shape) for p in module.parameters(recurse=False)],
             sorted((k, v) for k, v in vars(module).items() if isinstance(v, (bool, int, float, str))))
            for name, module in model.named_modules()]


def other_value(space_range: dict, recipe_value: float) -> float:
    (kind, bounds), = space_range.items()
    if kind == "choice":
        return next(v for v in bounds if v != recipe_value)
    return bounds[1] if bounds[1] != recipe_value else bounds[0]


@pytest.mark.parametrize("model", list(MODELS))
def test_every_space_lists_flags_the_model_reads_around_its_recipe(model):
    buildable(model)
    argv = recipe_argv(model)
    args = parse_run_args(argv)
    space = space_for(model, argv)
    read = flags_read(args)
    assert set(space) <= set(FAMILY_SPACE)
    assert TRAINING_FLAGS <= set(space)
    for flag, space_range in space.items():
        assert flag in TRAINING_FLAGS or flag in read, f"{model}'s space names --{flag}, which it does not read"
        assert contains(space_range, getattr(args, flag)), f"{model}: recipe --{flag} outside {space_range}"
    # Every family flag the model reads is searched unless NOT_SEARCHED keeps it.
    expected = {f for f in FAMILY_SPACE if f in TRAINING_FLAGS or f in read} - set(NOT_SEARCHED.get(model, {}))
    assert set(space) == expected
    assert ("dropout" in space) == ("dropout" in read and "dropout" not in NOT_SEARCHED.get(model, {}))


@pytest.mark.parametrize("model", list(MODELS))
def test_every_searched_model_flag_changes_the_built_model(model):
    """An independent check of 'reads': moving a searched model flag to another value of its space
    changes what the model is built of (a flag read only to be checked would not)."""
    buildable(model)
    argv = recipe_argv(model)
    args = parse_run_args(argv)
    before = structure(args)
    for flag, space_range in space_for(model, argv).items():
        if flag in TRAINING_FLAGS:
            continue
        value = other_value(space_range, getattr(args, flag))
        after = structure(parse_run_args([*argv, f"--{flag}", str(value)]))
        assert after != before, f"{model}: --{flag} {value} builds the same model as the recipe"


def test_a_model_without_dropout_gets_none():
    for model in ("DLinear", "FiLM", "FreTS", "Koopa"):
        space = space_for(model, recipe_argv(model))
        assert "dropout" not in space and "dropout" not in flags_read(parse_run_args(recipe_argv(model)))
    assert set(space_for("DLinear", recipe_argv("DLinear"))) == {"learning_rate", "batch_size"}


def test_the_ranges_follow_the_recipe_values():
    caps = RECIPES.argv("CAPS", "ETTh1", 96)
    assert space_for("CAPS", caps) == {"learning_rate": {"log": (5e-05, 0.005)}, "batch_size": {"choice": [16, 32, 64]},
                                       "e_layers": {"choice": [2, 3, 4]}, "dropout": {"uniform": (0.0, 0.2)}}
    segrnn = space_for("SegRNN", RECIPES.argv("SegRNN", "ETTh1", 96))  # recipe dropout 0.5
    assert segrnn["dropout"] == {"uniform": (0.3, 0.7)} and segrnn["d_model"] == {"choice": [256, 512, 1024]}
    assert search_spaces.uniform_around(0.8) == {"uniform": (0.6, 0.9)}
    assert search_spaces.stepped(1) == {"choice": [1, 2]}
    # d_model stays a multiple of n_heads: 24 heads of 8 → 12 would not divide.
    assert search_spaces.scaled(24, multiple=8) == {"choice": [24, 48]}


@pytest.mark.parametrize(("model", "flags"), sorted(NOT_SEARCHED.items()))
def test_not_searched_flags_are_read_absent_and_explained(model, flags):
    argv = recipe_argv(model)
    read = flags_read(parse_run_args(argv))
    space = space_for(model, argv)
    for flag, reason in flags.items():
        assert flag in FAMILY_SPACE and flag in read, f"NOT_SEARCHED[{model!r}] names --{flag}: stale entry"
        assert flag not in space
        assert reason.strip() and "\n" not in reason


def test_a_model_that_does_not_build_here_is_one_line():
    if HAS_MAMBA_SSM and torch.cuda.is_available():
        pytest.skip("Mamba builds on this machine")
    with pytest.raises(UserInputError) as err:
        space_for("Mamba", recipe_argv("Mamba"))
    message = str(err.value)
    assert message.startswith("cannot derive the search space of Mamba, which does not build here: ")
    assert "\n" not in message


@pytest.mark.slow
@pytest.mark.parametrize("model", list(MODELS))
def test_every_model_builds_at_each_end_of_its_space(model):
    buildable(model)
    argv = recipe_argv(model)
    for flag, space_range in space_for(model, argv).items():
        if flag in TRAINING_FLAGS:
            continue
        (kind, bounds), = space_range.items()
        for value in (bounds[0], bounds[-1]):
            flags_read(parse_run_args([*argv, f"--{flag}", str(value)]))
