"""TSLib-compatible entry point: `python -u run.py --task_name long_term_forecast --is_training 1 ...`.

Same flags, setting string and itr loop as TSLib. Bad input ends with one `error: ...` line and exit
code 2 before any output file is written.
"""

from __future__ import annotations

import logging
import sys

import torch

from utils.arguments import build_parser, make_setting, validate_args
from utils.errors import UserInputError
from utils.seeding import seed_everything

logger = logging.getLogger("run")


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stdout, force=True)
    args = build_parser().parse_args(argv)
    try:
        validate_args(args)
        from exp.exp_long_term_forecasting import Exp_Long_Term_Forecast

        logger.info("Args in experiment:\n%s", "\n".join(f"  {k}: {v}" for k, v in sorted(vars(args).items())))
        if args.is_training:
            for ii in range(args.itr):
                args.run_seed = args.seed + ii
                seed_everything(args.run_seed)
                exp = Exp_Long_Term_Forecast(args)
                setting = make_setting(args, ii)
                logger.info(">>>>>>>start training : %s>>>>>>>>>>>>>>>>>>>>>>>>>>", setting)
                exp.train(setting)
                logger.info(">>>>>>>testing : %s<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<", setting)
                exp.test(setting)
                if torch.cuda.is_available():
                    torch.cuda.empty_cache()
        else:
            args.run_seed = args.seed
            seed_everything(args.run_seed)
            exp = Exp_Long_Term_Forecast(args)
            setting = make_setting(args, 0)
            logger.info(">>>>>>>testing : %s<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<", setting)
            exp.test(setting, test=1)
    except UserInputError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
