"""`--model CAPS` left at TSLib's optimisation defaults trains with TSLib's loop (Adam, `--learning_rate 1e-4`, the
per-epoch `type1` schedule), not the CAPS paper's recipe (AdamW, OneCycle stepped per batch, weight decay, clipping):
a valid run, but rarely the one meant. run.py says so in one line at start, naming where the recipe lives.
Only long-term forecasting has that recipe (the other tasks' CAPS scripts follow TSLib's task scripts)."""

from __future__ import annotations

import argparse

from exp.arguments import build_parser

__all__ = ["RECIPE_FLAGS", "RECIPE_SCRIPT", "tslib_defaults_hint"]

#: the optimisation flags the paper's recipe sets; a run that sets any of them has chosen its own loop
RECIPE_FLAGS = ("optimizer", "learning_rate", "lradj")
#: the recipe as a TSLib-style script (generated from compare/recipes/tables.py, like every CAPS script)
RECIPE_SCRIPT = "scripts/long_term_forecast/ETT_script/CAPS_ETTh1.sh"


def tslib_defaults_hint(args: argparse.Namespace) -> str | None:
    """The line run.py logs when CAPS trains for long-term forecasting with every `RECIPE_FLAGS` at run.py's
    default, else None."""
    if args.model != "CAPS" or not args.is_training or args.task_name != "long_term_forecast":
        return None
    parser = build_parser()
    if any(getattr(args, flag) != parser.get_default(flag) for flag in RECIPE_FLAGS):
        return None
    return (f"--model CAPS is training with TSLib's defaults (--optimizer adam --learning_rate "
            f"{parser.get_default('learning_rate'):g} --lradj type1), not the CAPS paper's recipe (AdamW, OneCycle, "
            f"weight decay, clipping): see {RECIPE_SCRIPT} for its flags (every recipe: compare/recipes/tables.py)")
