"""TSLib-compatible entry point: `python -u run.py --task_name long_term_forecast --is_training 1 ...`.

Same flags, setting string and itr loop as TSLib. Bad input ends with one `error: ...` line and exit
code 2 before any output file is written; a non-finite loss ends with one `error: ...` line and exit
code 1; SIGTERM/SIGINT save `last.pth` and end with one `interrupted: ...` line, then the process ends as
killed by that signal (so the shell stops a script of run.py lines; `main()` itself returns 128 + signal).
Under `torchrun` (WORLD_SIZE, RANK and LOCAL_RANK set) the run is distributed; only rank 0 logs.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys

import torch

from exp import distributed
from exp.arguments import build_parser, differing_from_defaults, make_setting, validate_args
from exp.model_card import write_model_card
from exp.recipe_hint import tslib_defaults_hint
from exp.resolved_args import resolve_args
from exp.run_config import run_config
from exp.tasks import experiment_class
from exp.trackers.run_trackers import open_trackers
from exp.training_guards import TrainingStopped
from predict.after_run import predict_for_run
from utils.cpu_denormals import cpu_denormals
from utils.errors import UserInputError
from utils.host_memory import configure_host_malloc
from utils.process_guard import die_with_parent
from utils.seeding import deterministic_mode, seed_everything

logger = logging.getLogger("run")


def _log_arguments(args: argparse.Namespace) -> None:
    """TSLib's printout of every argument under --print_all_args, else those that differ from the defaults."""
    if args.print_all_args:
        shown, title = vars(args), "Args in experiment:"
    else:
        shown = differing_from_defaults(args)
        title = f"Args in experiment (the {len(shown)} of {len(vars(args))} not at their defaults; --print_all_args shows all):"
    logger.info("%s\n%s", title, "\n".join(f"  {k}: {v}" for k, v in sorted(shown.items())))


def _run_zero_shot(args: argparse.Namespace, Experiment: type, config: dict) -> None:  # noqa: N803 - a class
    """A pretrained model scored once on the test split (TSLib passes --is_training 0; 1 trains nothing either)."""
    seed_everything(args.seed)
    exp = Experiment(args, config=config)
    setting = make_setting(args, 0)
    logger.info(">>>>>>>testing : %s<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<", setting)
    with open_trackers(args, setting, config, exp.dist.is_main) as exp.trackers:
        record = exp.test(setting)
        exp.trackers.log_result(record, config)


def _run(args: argparse.Namespace) -> None:
    Experiment = experiment_class(args.task_name)  # noqa: N806 - a class
    # The command's flags as typed, then the lengths the task derives from its data (M4, UEA), once.
    config = run_config(args)
    args = resolve_args(args)

    _log_arguments(args)
    hint = tslib_defaults_hint(args)
    if hint:
        logger.info("%s", hint)
    if args.task_name == "zero_shot_forecast":
        _run_zero_shot(args, Experiment, config)
        return
    if not args.is_training:
        seed_everything(args.seed)
        exp = Experiment(args, config=config)
        setting = make_setting(args, 0)
        logger.info(">>>>>>>testing : %s<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<", setting)
        with open_trackers(args, setting, config, exp.dist.is_main) as exp.trackers:
            record = exp.test(setting, test=1)
            exp.trackers.log_result(record, config)
        # A checkpoint trained before model cards existed gets its card here (exp/model_card.py).
        write_model_card(exp, setting, record)
        if args.do_predict and exp.dist.is_main:
            predict_for_run(args, setting)
        return
    for ii in range(args.itr):
        seed_everything(args.seed + ii)
        exp = Experiment(args, run_seed=args.seed + ii, config=config)
        setting = make_setting(args, ii)
        # One process per setting: a second copy of this command stops here (exp/run_folder.py).
        with exp.hold_run_folder(setting):
            if args.resume and exp.is_complete(setting):
                logger.info("--resume: %s was already trained and tested; skipping it", setting)
                continue
            # --logger: the experiment reports to these trackers until the setting is tested.
            with open_trackers(args, setting, config, exp.dist.is_main) as exp.trackers:
                logger.info(">>>>>>>start training : %s>>>>>>>>>>>>>>>>>>>>>>>>>>", setting)
                exp.train(setting)
                write_model_card(exp, setting)
                if args.vali_only:
                    logger.info("--vali_only: %s trained and validated; the test split was not evaluated", setting)
                    continue
                logger.info(">>>>>>>testing : %s<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<", setting)
                record = exp.test(setting)
                exp.trackers.log_result(record, config)
            write_model_card(exp, setting, record)
            exp.mark_complete(setting)
            if args.do_predict and exp.dist.is_main:
                predict_for_run(args, setting)
        if torch.cuda.is_available():
            torch.cuda.empty_cache()


def main(argv: list[str] | None = None) -> int:
    die_with_parent()
    # Under torchrun only rank 0 reports progress; the others still report warnings and errors.
    level = logging.INFO if int(os.environ.get("RANK", "0")) == 0 else logging.WARNING
    logging.basicConfig(level=level, format="%(message)s", stream=sys.stdout, force=True)
    args = build_parser().parse_args(argv)
    finished = False
    try:
        validate_args(args)
        configure_host_malloc(args.host_malloc)
        if distributed.launched_by_torchrun():
            distributed.init_distributed(use_cuda=args.use_gpu and args.gpu_type == "cuda")
        with deterministic_mode(args.deterministic), cpu_denormals(args.cpu_denormals == "flush"):
            _run(args)
        finished = True
    except UserInputError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except TrainingStopped as err:
        print(f"{err.prefix}: {err}", file=sys.stderr)
        return err.exit_code
    finally:
        distributed.shutdown(clean=finished)
    return 0


def exit_as_signalled(code: int) -> None:
    """For an interrupted run (exit code 128 + SIGINT/SIGTERM): end the process as that signal's default action
    would, so the shell running a script of run.py lines sees a process killed by Ctrl-C and stops the script
    (bash continues after a child that merely exits 130). Other codes return."""
    signum = code - 128
    if signum not in (signal.SIGINT, signal.SIGTERM):
        return
    sys.stdout.flush()
    sys.stderr.flush()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


if __name__ == "__main__":
    exit_code = main()
    exit_as_signalled(exit_code)
    sys.exit(exit_code)
