"""Zero-shot rows in the forecasting report: their label, and which of their runs may share the trained rows' ranking.

A zero-shot run (`compare.grid.zero_shot`; its record says `zero_shot: true`) is labelled with its look-back,
`Fracast (zero-shot, L=2048)`. It is ranked beside the trained rows only when it was scored on their test windows:

- a `--test_every K > 1` run scored windows 0, K, 2K, ... only, an estimate: it is shown apart and ranked nowhere
  (table, ranks, win rates, significance tests and plots hold the ranked runs only); beside it stand the trained
  rows' scores on the same windows, recomputed from their saved forecasts (`results/<setting>/{pred,true}.npy`);
- a run over every window is checked against each trained run of its (dataset, horizon): their ground truth
  (`true.npy`, where both were saved) must be equal, else their naive-forecast scores (each run scores the naive
  forecast on its own windows); a mismatch shows the run apart with the reason, instead of a silent ranking.

The trained rows' recomputed scores are kept in `zero_shot_windows.json`, so a report regenerated where the forecasts
are gone (a fresh clone: `runs/` is not committed) still shows them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from compare.grid.records import RunResult
from compare.grid.zero_shot import zero_shot_label

__all__ = ["SIDECAR", "Apart", "apart_section", "labelled_focus", "zero_shot_view"]

SIDECAR = "zero_shot_windows.json"
#: relative tolerance of the naive-score window check (the same windows give the same float32 sums)
_NAIVE_RTOL = 1e-6


@dataclass
class Apart:
    """A zero-shot run shown apart from the ranking: why, on how many windows, and the trained rows' scores on
    those windows ({row: {"mse", "mae"}}; empty when their forecasts are not at hand)."""

    run: RunResult
    windows: str
    reason: str
    matched: dict[str, dict[str, float]] = field(default_factory=dict)


def _label(run: RunResult) -> str:
    info = run.extra["zero_shot"]
    return zero_shot_label(run.row, info.get("lookback"), info.get("test_every"), info.get("test_windows_of"))


def _arrays(runs_dir: Path, run: RunResult) -> tuple[np.ndarray, np.ndarray] | None:
    """(pred, true) of the run's first setting, or None when they were not saved (or were not kept)."""
    folder = runs_dir / "results" / run.settings[0]
    if not (folder / "pred.npy").is_file() or not (folder / "true.npy").is_file():
        return None
    return np.load(folder / "pred.npy"), np.load(folder / "true.npy")


def _naive_mse(run: RunResult) -> float | None:
    fields = run.extra.get("naive") or [None]
    return fields[0].get("mse") if isinstance(fields[0], dict) else None


def _same_windows(zero: RunResult, peer: RunResult, runs_dir: Path) -> str | None:
    """None when `zero` (every window) was scored on `peer`'s test windows, else why not."""
    own, other = _arrays(runs_dir, zero), _arrays(runs_dir, peer)
    if own is not None and other is not None:
        if own[1].shape != other[1].shape:
            return f"{own[1].shape[0]} test windows, {peer.row} {other[1].shape[0]}"
        if not np.array_equal(own[1], other[1]):
            return f"other test targets than {peer.row}"
        return None
    mine, theirs = _naive_mse(zero), _naive_mse(peer)
    if mine is None or theirs is None:
        return f"its windows cannot be checked against {peer.row} (no forecasts or naive scores recorded)"
    if not np.isclose(mine, theirs, rtol=_NAIVE_RTOL, atol=0.0):
        return f"other test windows than {peer.row} (naive MSE {mine:.6g} vs {theirs:.6g})"
    return None


def _matched(zero: RunResult, peers: list[RunResult], every: int, runs_dir: Path, kept: dict) -> dict:
    """{peer row: its MSE and MAE on windows 0, every, 2·every, ...}: from its forecasts when at hand (its ground
    truth on those windows must equal the zero-shot run's), else from the earlier report's sidecar."""
    own = _arrays(runs_dir, zero)
    found: dict[str, dict[str, float]] = {}
    for peer in peers:
        arrays = _arrays(runs_dir, peer)
        if arrays is None:
            earlier = kept.get(zero.settings[0], {}).get(peer.row)
            if earlier:
                found[peer.row] = earlier
            continue
        pred, true = arrays[0][::every], arrays[1][::every]
        if own is not None and (own[1].shape != true.shape or not np.array_equal(own[1], true)):
            found[peer.row] = {}  # its targets on these windows are not the zero-shot run's: no comparison
            continue
        found[peer.row] = {"mse": float(np.mean((pred - true) ** 2)), "mae": float(np.mean(np.abs(pred - true)))}
    return found


def labelled_focus(focus: str | Sequence[str] | None, runs: list[RunResult]) -> str | list[str] | None:
    """--focus with a zero-shot row's name (`Fracast`) replaced by its label, as the report's rows are named."""
    labels = {r.row: _label(r) for r in runs if r.extra.get("zero_shot")}
    if focus is None or not labels:
        return focus
    if isinstance(focus, str):
        return labels.get(focus, focus)
    return [labels.get(name, name) for name in focus]


def zero_shot_view(runs: list[RunResult], config: dict, runs_dir: Path, out: Path
                   ) -> tuple[list[RunResult], dict, list[RunResult], dict, list[Apart]]:
    """(the runs to rank and the config naming their rows, every run and the config naming every row, the zero-shot
    runs shown apart), zero-shot runs labelled (`Fracast (zero-shot, L=2048)`); writes `zero_shot_windows.json`
    when any run is apart. Without zero-shot runs: (runs, config, runs, config, [])."""
    zero = [r for r in runs if r.extra.get("zero_shot")]
    if not zero:
        return runs, config, runs, config, []
    sidecar = out / SIDECAR
    kept = json.loads(sidecar.read_text()) if sidecar.is_file() else {}
    trained = [r for r in runs if not r.extra.get("zero_shot")]
    labels = {r.row: _label(r) for r in zero}
    ranked = list(trained)
    apart: list[Apart] = []
    for run in zero:
        info = run.extra["zero_shot"]
        labelled = replace(run, row=_label(run))
        peers = [p for p in trained if (p.dataset, p.pred_len) == (run.dataset, run.pred_len)]
        every = int(info.get("test_every") or 1)
        if every > 1:
            of = info.get("test_windows_of")
            count = f"{-(-of // every)} of {of}" if of else f"every {every}th"
            apart.append(Apart(labelled, count, f"every {every}th test window only: an estimate, not scored on "
                               "the trained rows' windows", _matched(run, peers, every, runs_dir, kept)))
            continue
        reasons = [why for why in (_same_windows(run, peer, runs_dir) for peer in peers) if why]
        if reasons:
            apart.append(Apart(labelled, "all of its own", reasons[0]))
        else:
            ranked.append(labelled)
    ranked_rows = {r.row for r in ranked}
    rows = [{**row, "name": labels.get(row["name"], row["name"])} for row in config.get("rows", [])]
    ranked_config = {**config, "rows": [row for row in rows if row["name"] in ranked_rows]}
    if apart:
        sidecar.write_text(json.dumps({a.run.settings[0]: a.matched for a in apart}, indent=1, sort_keys=True) + "\n")
    return ranked, ranked_config, ranked + [a.run for a in apart], {**config, "rows": rows}, apart


def apart_section(apart: list[Apart], zero_shot_ranked: list[str]) -> list[str]:
    """table.md's section on the zero-shot rows: which are ranked, and the unranked runs with the trained rows'
    scores on the same windows."""
    if not apart and not zero_shot_ranked:
        return []
    md = ["## Zero-shot rows", "",
          "A zero-shot row is a pretrained foundation model scored with no training (`--task_name "
          "zero_shot_forecast`, look-back L); it is scored once: its forecast does not depend on a seed, so it has "
          "no seed spread."]
    if zero_shot_ranked:
        md += ["", f"Ranked above (scored on every test window the trained rows were): {', '.join(zero_shot_ranked)}."]
    if not apart:
        return md + [""]
    md += ["", "**Not ranked** (left out of the table above, its ranks, win rates, significance tests and plots): "
           "these runs were not scored on the trained rows' test windows.", "",
           "| Row | Dataset | H | MSE | MAE | Test windows | Why not ranked |", "|---|---|---:|---:|---:|---|---|"]
    for a in apart:
        md.append(f"| {a.run.row} | {a.run.dataset} | {a.run.pred_len} | {a.run.mse:.3f} | {a.run.mae:.3f} | "
                  f"{a.windows} | {a.reason} |")
    for a in apart:
        if not a.matched:
            continue
        md += ["", f"On the same {a.windows} test windows ({a.run.dataset}, H = {a.run.pred_len}): the trained "
               "rows' scores recomputed from their saved forecasts (`" + SIDECAR + "`).", "",
               "| Row | MSE | MAE |", "|---|---:|---:|", f"| {a.run.row} | {a.run.mse:.3f} | {a.run.mae:.3f} |"]
        md += [f"| {row} | {m['mse']:.3f} | {m['mae']:.3f} |" if m else f"| {row} | other targets | other targets |"
               for row, m in a.matched.items()]
    return md + [""]
