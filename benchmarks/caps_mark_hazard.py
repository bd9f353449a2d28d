"""How large CAPS's normalised time marks get on real windows, under each `--caps_mark_norm`.

Usage:  python benchmarks/caps_mark_hazard.py [--data ETTh1 ETTm1] [--pred_lens 96 720] [--root DIR]
                                              [--threshold 10]

For every window of the train, validation and test splits, as the CAPS recipe of `compare/recipes/tables.py`
loads them (the marks TSLib's loader yields for the script's --embed/--freq), the marks CAPS feeds its
bias-free channel mixer are `normalise_marks(enc, fut, mode)` (models/CAPS.py, the function the model
runs) of the last --time_emb_dim mark columns: enc `[L, F]` the encoder steps, fut `[H, F]` the horizon.
Printed per (dataset, H, mode): the largest |mark| over all windows, the median and 99th percentile of
the per-window largest |mark|, and the share of windows whose largest |mark| exceeds --threshold, the largest change any mark gets
against the paper's `window` mode (where `official`'s `+1e-8` matters at all), and the mark column
(calendar feature) responsible for the largest value.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
from torch.utils.data import ConcatDataset, DataLoader  # noqa: E402

from compare.grid.plan import resolve_root  # noqa: E402
from compare.grid.run_args import flag_value, merge_flags, parse_run_args  # noqa: E402
from compare.recipes.tables import RECIPES  # noqa: E402
from data_provider.data_factory import build_dataset  # noqa: E402
from models.CAPS import MARK_NORM_CHOICES, normalise_marks  # noqa: E402
from utils.timefeatures import time_feature_names  # noqa: E402

MODES = MARK_NORM_CHOICES[1:]  # every mode but "auto"


def window_maxima(args: argparse.Namespace, modes: tuple[str, ...]
                  ) -> tuple[dict[str, torch.Tensor], dict[str, float], list[str]]:
    """mode -> per-window largest |normalised mark| `[windows]`, mode -> the largest |mark(mode) − mark(window)|
    of any window, and the column of each mode's overall largest, over the train, val and test windows of
    `args` (a run.py namespace)."""
    splits = ConcatDataset([build_dataset(args, flag) for flag in ("train", "val", "test")])
    used = args.time_emb_dim
    maxima: dict[str, list[torch.Tensor]] = {mode: [] for mode in modes}
    column_max: dict[str, torch.Tensor] = {}
    change = dict.fromkeys(modes, 0.0)
    for _, _, x_mark, y_mark in DataLoader(splits, batch_size=1024, shuffle=False):
        enc = x_mark[..., -used:].double()  # [B, L, F]
        fut = y_mark[:, -args.pred_len:, -used:].double()  # [B, H, F]
        paper = normalise_marks(enc, fut, "window")  # [B, L + H, F]
        for mode in modes:
            marks = normalise_marks(enc, fut, mode)  # [B, L + H, F]
            change[mode] = max(change[mode], (marks - paper).abs().max().item())
            size = marks.abs()
            maxima[mode].append(size.amax(dim=(1, 2)))
            per_column = size.amax(dim=(0, 1))  # [F]
            column_max[mode] = per_column if mode not in column_max else torch.maximum(column_max[mode], per_column)
    names = time_feature_names(args.freq)[-used:] if args.embed == "timeF" else [f"mark {i}" for i in range(used)]
    worst = [names[int(column_max[mode].argmax())] for mode in modes]
    return {mode: torch.cat(values) for mode, values in maxima.items()}, change, worst


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", nargs="+", default=["ETTh1", "ETTm1"])
    p.add_argument("--pred_lens", nargs="+", type=int, default=[96, 720])
    p.add_argument("--root", default="./dataset", help="dataset root, as compare's --root (the mirror works)")
    p.add_argument("--threshold", type=float, default=10.0, help="a window 'blows up' above this |mark|")
    args = p.parse_args(argv)
    header = (f"{'data':<7}{'H':>5}  {'mode':<9}{'max |mark|':>12}{'median':>9}{'p99':>10}"
              f"{'> ' + format(args.threshold, 'g'):>8}{'max |Δ| vs window':>19}  largest in")
    print(f"# CAPS's normalised time marks, every train/val/test window; columns: the largest |mark| of all "
          f"windows, the median and 99th percentile of each window's largest |mark|, the share of windows "
          f"above {args.threshold:g}, the largest change of any mark against --caps_mark_norm window (the paper's)")
    print(header)
    print("-" * len(header))
    for data in args.data:
        for pred_len in args.pred_lens:
            argv = RECIPES.argv("CAPS", data, pred_len)
            root = resolve_root(flag_value(argv, "root_path") or "./dataset", Path(args.root))
            run_args = parse_run_args(merge_flags(argv, ["--root_path", root]))
            maxima, change, worst = window_maxima(run_args, MODES)
            for mode, column in zip(MODES, worst, strict=True):
                m = maxima[mode]
                share = (m > args.threshold).double().mean().item()
                print(f"{data:<7}{pred_len:>5}  {mode:<9}{m.max().item():>12.3g}{m.median().item():>9.3g}"
                      f"{torch.quantile(m, 0.99).item():>10.3g}{share:>8.1%}{change[mode]:>19.3g}  {column}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
