"""The `--logger` option: which experiment trackers a run writes to, where, and under which group name.

`--logger tensorboard mlflow wandb` (several at once; a comma list `--logger tensorboard,mlflow` is the same)
writes every run to each tracker's local, offline store under `--logger_dir` (default `./tracking`, inside
the run's working folder like `./results`); `--logger_group` names the group of runs (MLflow's experiment, W&B's
group, TensorBoard's sub-folder), by default the task name. The comparison runner passes its grid's name.
"""

from __future__ import annotations

import argparse
import importlib.util
from collections.abc import Sequence

from utils.cli_parser import did_you_mean
from utils.errors import UserInputError
from utils.path_names import check_path_component

#: tracker name -> (the module it needs, the requirement to install)
TRACKERS = {
    "tensorboard": ("tensorboard", "tensorboard"),
    "mlflow": ("mlflow", "mlflow-skinny"),
    "wandb": ("wandb", "wandb"),
}
DEFAULT_LOGGER_DIR = "./tracking"


def split_logger_names(values: Sequence[str]) -> list[str]:
    """`["tensorboard,mlflow", "wandb"]` -> `["tensorboard", "mlflow", "wandb"]` (lower case, each once, in
    order); an unknown name is a UserInputError with the valid choices."""
    names: list[str] = []
    for value in values:
        for name in (part.strip().lower() for part in value.split(",")):
            if not name:
                continue
            if name not in TRACKERS:
                raise UserInputError(f"--logger {name!r} is not a tracker this library writes to; valid choices: "
                                     f"{', '.join(TRACKERS)}{did_you_mean(name, TRACKERS)}")
            if name not in names:
                names.append(name)
    if values and not names:
        raise UserInputError(f"--logger needs a tracker name: {', '.join(TRACKERS)}")
    return names


class LoggerNames(argparse.Action):
    """argparse action of `--logger`: space- and comma-separated names, checked at parse time."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        try:
            setattr(namespace, self.dest, split_logger_names(values))
        except UserInputError as err:
            parser.error(str(err))


def check_logger_flags(args: argparse.Namespace) -> None:
    """Each chosen tracker's package is installed, and the group name can name a folder."""
    for name in args.logger:
        module, requirement = TRACKERS[name]
        if importlib.util.find_spec(module) is None:
            raise UserInputError(f"--logger {name} needs the {requirement} package: pip install -r requirements.txt "
                                 f"(or pip install {requirement})")
    for flag in ("logger_group", "logger_dir"):
        if getattr(args, flag) is not None and not args.logger:
            raise UserInputError(f"--{flag} belongs to the tracked runs of --logger: add --logger NAME, or drop it")
    if args.logger_group is not None:
        check_path_component("--logger_group", args.logger_group, "the tracking folders")


def group_name(args: argparse.Namespace) -> str:
    """The runs' group: --logger_group, else the task name."""
    return args.logger_group or args.task_name


def logger_dir(args: argparse.Namespace) -> str:
    """The trackers' root folder: --logger_dir, else ./tracking."""
    return args.logger_dir or DEFAULT_LOGGER_DIR
