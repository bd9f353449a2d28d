"""How much each official-arithmetic switch changes a CAPS model's forecasts, on the same weights.

Usage:  python benchmarks/caps_switch_sensitivity.py --data ETTh2 --pred_len 720 [--root DIR]
            [--checkpoint <out>/runs/checkpoints/SETTING[/checkpoint.pth]] [--every 1]

The CAPS model of the recipe that `compare/recipes/tables.py` gives (data, H) (the flags the comparison runner
trains it with), with the weights of --checkpoint (a run of that recipe, e.g. from `paper_recipe/`), forecasts the
test windows of its split once with the paper's arithmetic and once per switch of the official code's
(`--caps_path1_max global`, `--caps_path2_decay official`, `--caps_rope_layout official`, `--caps_mark_norm
official`, and all of them, `--caps_numerics official`), always with the same weights, in float64 and without
AMP, so only the arithmetic differs. Printed per switch: the largest |Δŷ| against the paper arithmetic's forecasts
relative to the largest |ŷ|, the mean |Δŷ|, and the test MSE (standardised units, the windows used) with its
change. The dropout rescale acts only in training; for it a second table gives the share of training samples
whose surviving mixer channels (values and marks, `--enc_in` + `--time_emb_dim`) are scaled by more than 2, 10,
100 and 1000, from the model's own `random_ratio_channel_dropout` on 10⁶ draws of r ~ U(0, 1). Without
--checkpoint the weights are freshly initialised (torch seed = the recipe's --seed): the state every training
run starts from.

A switch whose relative change stays far below a bfloat16 rounding step (2⁻⁸ ≈ 3.9e-3; the CAPS recipes train
under bf16 AMP) computes the same function as the paper's arithmetic on those weights; if that holds where
training starts and where it ends, a run with the switch follows the paper arithmetic's run up to rounding
noise. Nothing here re-implements CAPS: every forecast is the model's own forward (models/CAPS.py) with the
switch set as run.py sets it.
"""

from __future__ import annotations

import argparse
import copy
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
from torch.utils.data import DataLoader, Subset  # noqa: E402

from compare.grid.plan import resolve_root  # noqa: E402
from compare.grid.run_args import flag_value, merge_flags, parse_run_args  # noqa: E402
from compare.recipes.tables import RECIPES  # noqa: E402
from data_provider.data_factory import build_dataset  # noqa: E402
from exp.checkpointing import BEST_FILE, load_checkpoint, load_model_state  # noqa: E402
from models.CAPS import Model as CAPSModel  # noqa: E402
from models.CAPS import random_ratio_channel_dropout  # noqa: E402

# (row name, run.py flag settings on top of the checkpoint's own): the paper's arithmetic first.
SWITCHES = (
    ("paper arithmetic", {}),
    ("--caps_path1_max global", {"caps_path1_max": "global"}),
    ("--caps_path2_decay official", {"caps_path2_decay": "official"}),
    ("--caps_rope_layout official", {"caps_rope_layout": "official"}),
    ("--caps_mark_norm official", {"caps_mark_norm": "official"}),
    ("--caps_numerics official (all)", {"caps_numerics": "official"}),
)
PAPER_SWITCHES = {"caps_numerics": "paper", "caps_path1_max": "auto", "caps_path2_decay": "auto",
                  "caps_rope_layout": "auto", "caps_mark_norm": "auto", "caps_dropout_rescale": "auto"}


def forecasts(args: argparse.Namespace, state: dict | None, file: Path | None, loader: DataLoader
              ) -> tuple[torch.Tensor, torch.Tensor]:
    """(ŷ, y) `[N, H, C']` in float64 of the test windows in `loader` by the CAPS model of `args` in eval mode, with
    the weights `state` read from `file` (None: fresh weights, torch seed = args.seed)."""
    dtype = torch.float64
    torch.manual_seed(args.seed)
    model = CAPSModel(args)
    if state is not None:
        load_model_state(model, state, file)
    model = model.to(dtype).eval()
    preds, trues = [], []
    with torch.no_grad():
        for x, y, x_mark, y_mark in loader:
            decoder = torch.zeros(x.shape[0], args.label_len + args.pred_len, y.shape[-1], dtype=dtype)
            out = model(x.to(dtype), x_mark.to(dtype), decoder, y_mark.to(dtype))  # [B, H, C']
            preds.append(out[:, -args.pred_len:])
            trues.append(y[:, -args.pred_len:, -out.shape[-1]:].to(dtype))
    return torch.cat(preds), torch.cat(trues)


def survivor_scales(channels: int, rescale: str, draws: int = 1_000_000, seed: int = 0) -> torch.Tensor:
    """The factor the surviving channels of each of `draws` samples get `[draws]` (0 where every channel is
    dropped), from `random_ratio_channel_dropout` on ones `[draws, channels, 1]`, r and u drawn as CAPS draws them."""
    generator = torch.Generator().manual_seed(seed)
    ratio = torch.rand(draws, 1, 1, generator=generator)
    uniform = torch.rand(draws, channels, 1, generator=generator)
    ones = torch.ones(draws, channels, 1)
    return random_ratio_channel_dropout(ones, ratio, uniform, rescale=rescale).amax(dim=(1, 2))


def print_dropout_scales(channels: int) -> None:
    """The table of survivor scales under each --caps_dropout_rescale."""
    limits = (2, 10, 100, 1000)
    print(f"# channel dropout (training only): share of samples whose {channels} mixer channels' survivors are "
          "scaled by more than the factor")
    header = f"{'--caps_dropout_rescale':<24}" + "".join(f"{'> ' + str(limit):>9}" for limit in limits) + f"{'max':>10}"
    print(header)
    print("-" * len(header))
    for rescale in ("paper", "official"):
        scales = survivor_scales(channels, rescale)
        shares = "".join(f"{(scales > limit).double().mean().item():>9.3%}" for limit in limits)
        print(f"{rescale:<24}{shares}{scales.max().item():>10.3g}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default="ETTh1", help="the recipe's data set (compare/recipes/tables.py)")
    p.add_argument("--pred_len", type=int, default=96, help="the recipe's horizon")
    p.add_argument("--checkpoint", default=None,
                   help="a run of that recipe: its setting folder or checkpoint.pth (default: fresh weights)")
    p.add_argument("--root", default="./dataset", help="dataset root, as compare's --root (the mirror works)")
    p.add_argument("--every", type=int, default=1, help="use every N-th test window (default: all)")
    opts = p.parse_args(argv)
    if opts.every < 1:
        p.error(f"--every {opts.every}: give a positive stride")
    argv = RECIPES.argv("CAPS", opts.data, opts.pred_len)
    root = resolve_root(flag_value(argv, "root_path") or "./dataset", Path(opts.root))
    base = parse_run_args(merge_flags(argv, ["--root_path", root]))
    base.use_amp = False
    file = None
    if opts.checkpoint is not None:
        file = Path(opts.checkpoint) / BEST_FILE if Path(opts.checkpoint).is_dir() else Path(opts.checkpoint)
        if not file.is_file():
            p.error(f"--checkpoint {opts.checkpoint}: no such checkpoint (give a run's setting folder or its "
                    f"{BEST_FILE})")
    for name, value in PAPER_SWITCHES.items():
        setattr(base, name, value)
    state = None if file is None else load_checkpoint(file)
    test = build_dataset(base, "test")
    windows = Subset(test, range(0, len(test), opts.every))
    loader = DataLoader(windows, batch_size=64, shuffle=False)
    weights = f"fresh weights (seed {base.seed})" if file is None else str(file)
    print(f"# {weights}: {base.data} H={base.pred_len}, {len(windows)} of {len(test)} test windows, float64, no AMP")
    header = f"{'switch':<32}{'max |Δŷ| / max |ŷ|':>20}{'mean |Δŷ|':>12}{'test MSE':>10}{'Δ MSE':>9}{'s':>6}"
    print(header)
    print("-" * len(header))
    paper_pred = paper_mse = None
    for name, flags in SWITCHES:
        args = copy.copy(base)
        for flag, value in flags.items():
            setattr(args, flag, value)
        started = time.perf_counter()
        pred, true = forecasts(args, state, file, loader)
        seconds = time.perf_counter() - started
        mse = ((pred - true) ** 2).mean().item()
        if paper_pred is None:
            paper_pred, paper_mse = pred, mse
        change = (pred - paper_pred).abs()
        print(f"{name:<32}{change.max().item() / paper_pred.abs().max().item():>20.3g}{change.mean().item():>12.3g}"
              f"{mse:>10.4f}{(mse / paper_mse - 1):>+9.2%}{seconds:>6.0f}", flush=True)
    print()
    print_dropout_scales(base.enc_in + base.time_emb_dim)
    return 0


if __name__ == "__main__":
    sys.exit(main())
