"""Where CAPS's linear time pays (issue 63): one attention layer's training step and peak memory against
causal softmax attention with RoPE and PatchTST's encoder attention, over a ladder of look-back lengths T.

Usage:  python benchmarks/bench_crossover.py [--threads 1 2] [--T 96 192 ...] [--batch 1] [--repeats 3]
                                             [--max-step-s 60] [--out docs/results/caps_crossover]

Rows (each an attention layer with its projections, forward + backward of `out.square().mean()`, no optimiser):
- CAPS: the first `CAPSAttention` of the CAPS model built from its ETTh1 H = 720 recipe (D = 32, 4 heads,
  learned RoPE, paths 123, `impl="auto"`: the native CPU kernel where it builds), over T tokens; linear in T.
- softmax+RoPE (SDPA): q, k, v projections as CAPS's (bias-free, same D and heads), CAPS's learned RoPE on q and k,
  `torch.nn.functional.scaled_dot_product_attention(is_causal=True)`, output projection. This is what causal
  softmax attention costs when done the fast way torch offers (a fused kernel that never stores the [T, T]
  weights); the repository's Attn+RoPE variant (`--caps_attn softmax --caps_impl naive`) computes the same
  function (checked here first) with the naive reference kernel, which materialises [B, H, T, T, E] blocks and
  is far slower, so it is not the softmax cost and is not a row.
- PatchTST attention: the first encoder `AttentionLayer` of the PatchTST model built from its ETTh1 H = 720
  recipe (D = 512, 16 heads, non-causal full attention with dropout 0.1, as the model runs it), over the
  T // 8 patches (patch_len 16, stride 8, end padding 8) that a look-back of T steps gives; quadratic in T / 8.
  Layers, not whole models: the question is the attention's growth with length, and the whole models' other
  parts (CAPS's MLPs and norms, PatchTST's flatten head whose width grows with T) differ at every length.

Every row sees B univariate series (one channel: both models are channel-independent, so a batch of B series
of N variates costs N times this). Per T and row: one warm-up step, then `--repeats` interleaved rounds
(one step of each row in turn) and the median; then the peak of one step's tensor memory (parameters and input
plus the high-water mark of tensors allocated during the step, `compare.grid.efficiency.TensorMemoryTracker`;
kernel-internal scratch that never becomes a torch tensor is not counted). A row whose step exceeds
`--max-step-s` is not measured at longer T (printed as skipped, never extrapolated).
Writes `crossover.csv` and `crossover.png`/`.pdf` (log-log, step time and memory) into --out.
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

from compare.grid.efficiency import TensorMemoryTracker, build_model  # noqa: E402
from compare.grid.run_args import parse_run_args  # noqa: E402
from compare.recipes.tables import RECIPES  # noqa: E402
from layers.CAPS_Attention import CAPSAttention, rope_frequencies, rope_rotate  # noqa: E402
from layers.SelfAttention_Family import AttentionLayer  # noqa: E402
from utils.host_load import busy_processes, load_average  # noqa: E402
from utils.host_memory import configure_host_malloc  # noqa: E402

DATA, HORIZON = "ETTh1", 720
# 96 * 2^k, with 816 (the paper's L + H = 96 + 720) in place of 768, and the 16 384 at the top.
T_VALUES = (96, 192, 384, 816, 1536, 3072, 6144, 12288, 16384)
PATCH_LEN, PATCH_STRIDE = 16, 8  # models/PatchTST.py's defaults (TSLib's), with end padding = stride
ROWS = ("CAPS", "softmax+RoPE (SDPA)", "PatchTST attention")
COLUMNS = ("threads", "T", "row", "tokens", "step_ms", "peak_mib")


def _commit() -> str:
    out = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True, text=True,
                         check=False)
    return out.stdout.strip() or "unknown"


class RoPESoftmaxAttention(nn.Module):
    """Causal softmax attention with RoPE, the fast way: x [B, T, D] -> [B, T, D].

    q, k, v = W x (bias-free, viewed [B, T, H, E]); q, k rotated by `rope_rotate` with learned frequencies;
    o = scaled_dot_product_attention(is_causal=True) (scale 1/sqrt(E)); out = c_proj(o). The parameter names
    are CAPSAttention's, so a CAPSAttention state dict loads into it (`strict=False`) and both compute the
    same function as `CAPSAttention(attn="softmax", paths="")`.
    """

    def __init__(self, d_model: int, n_heads: int) -> None:
        super().__init__()
        if n_heads < 1 or d_model % n_heads or (d_model // n_heads) % 2:
            raise ValueError(f"d_model {d_model} must split into {n_heads} heads of even width")
        self.n_heads = n_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=False)
        self.k_proj = nn.Linear(d_model, d_model, bias=False)
        self.v_proj = nn.Linear(d_model, d_model, bias=False)
        self.c_proj = nn.Linear(d_model, d_model, bias=False)
        self.rope_freq = nn.Parameter(rope_frequencies(d_model // n_heads))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: [B, T, D] -> [B, T, D]."""
        q, k, v = (proj(x).unflatten(-1, (self.n_heads, -1)) for proj in (self.q_proj, self.k_proj, self.v_proj))
        q, k = rope_rotate(q, self.rope_freq), rope_rotate(k, self.rope_freq)  # [B, T, H, E]
        o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                           is_causal=True)  # [B, H, T, E]
        return self.c_proj(o.transpose(1, 2).flatten(2))  # [B, T, D]


class PatchAttention(nn.Module):
    """PatchTST's encoder self-attention as a module of one input: tokens [B, P, D] -> [B, P, D]."""

    def __init__(self, layer: AttentionLayer) -> None:
        super().__init__()
        self.layer = layer

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layer(x, x, x, attn_mask=None)[0]


def patch_count(T: int) -> int:
    """Patches PatchTST makes of a look-back of T steps (models/PatchTST.py: end padding = stride)."""
    return (T + PATCH_STRIDE - PATCH_LEN) // PATCH_STRIDE + 1


def recipe_model(name: str) -> nn.Module:
    configs = parse_run_args(RECIPES.argv(name, DATA, HORIZON))
    torch.manual_seed(0)
    return build_model(configs, "cpu")


def build_layers() -> dict[str, tuple[nn.Module, Callable[[int], int]]]:
    """row -> (layer in train mode, tokens of a look-back T): the three rows of the module docstring."""
    caps = next(m for m in recipe_model("CAPS").modules() if isinstance(m, CAPSAttention))
    softmax = RoPESoftmaxAttention(caps.n_heads * caps.head_dim, caps.n_heads)
    softmax.load_state_dict(caps.state_dict(), strict=False)
    patch = next(m for m in recipe_model("PatchTST").modules() if isinstance(m, AttentionLayer))
    layers = {ROWS[0]: (caps, lambda T: T), ROWS[1]: (softmax, lambda T: T),
              ROWS[2]: (PatchAttention(patch), patch_count)}
    for layer, _ in layers.values():
        layer.train()
    return layers


def width(layer: nn.Module) -> int:
    return next(p for p in layer.parameters() if p.dim() == 2).shape[1]


def softmax_matches_attn_rope(T: int = 97) -> float:
    """Relative max error of the SDPA row against the repository's Attn+RoPE layer (naive kernel), same weights,
    float64, output and input gradient; the table is only printed when it is <= 1e-10."""
    torch.manual_seed(0)
    ref = CAPSAttention(32, 4, attn="softmax", paths="", impl="naive").double()
    fast = RoPESoftmaxAttention(32, 4).double()
    fast.load_state_dict(ref.state_dict(), strict=False)
    x = torch.randn(2, T, 32, dtype=torch.float64, requires_grad=True)
    errors = []
    for layer in (ref, fast):
        out = layer(x)
        (grad,) = torch.autograd.grad(out.square().sum(), x)
        errors.append((out.detach(), grad))
    return max(((a - b).abs().max() / a.abs().max()).item() for a, b in zip(*errors, strict=True))


def one_step(layer: nn.Module, x: torch.Tensor) -> None:
    """Forward, loss, backward; gradients dropped so that every step allocates them afresh."""
    layer(x).square().mean().backward()
    layer.zero_grad(set_to_none=True)


def step_peak_bytes(layer: nn.Module, x: torch.Tensor) -> int:
    """Parameters and input plus the peak of tensors alive during one step (gradients included)."""
    held = sum(p.numel() * p.element_size() for p in layer.parameters()) + x.numel() * x.element_size()
    tracker = TensorMemoryTracker()
    with tracker:
        one_step(layer, x)
    return held + tracker.peak


def measure_table(t_values: Sequence[int], batch: int, repeats: int, threads: int, max_step_s: float,
                  report: Callable[[dict], None] = lambda row: None) -> list[dict]:
    """One dict per (T, row) with COLUMNS: median step ms over `repeats` interleaved rounds after a warm-up,
    peak MiB of one step; a row whose step took more than `max_step_s` is left out at every longer T."""
    torch.set_num_threads(threads)
    layers = build_layers()
    active = list(layers)
    table = []
    for T in t_values:
        inputs = {}
        for name in active:
            layer, tokens = layers[name]
            gen = torch.Generator().manual_seed(T)
            inputs[name] = torch.randn(batch, tokens(T), width(layer), generator=gen)
            one_step(layer, inputs[name])
        times: dict[str, list[float]] = {name: [] for name in active}
        for _ in range(repeats):
            for name in active:
                start = time.perf_counter()
                one_step(layers[name][0], inputs[name])
                times[name].append(time.perf_counter() - start)
        for name in list(active):
            layer, tokens = layers[name]
            row = {"threads": threads, "T": T, "row": name, "tokens": tokens(T),
                   "step_ms": statistics.median(times[name]) * 1e3,
                   "peak_mib": step_peak_bytes(layer, inputs[name]) / 2**20}
            table.append(row)
            report(row)
            if row["step_ms"] > max_step_s * 1e3:
                active.remove(name)
        if not active:
            break
    return table


def write_csv(table: list[dict], path: Path) -> None:
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        writer.writeheader()
        for row in table:
            writer.writerow({**row, "step_ms": f"{row['step_ms']:.3f}", "peak_mib": f"{row['peak_mib']:.3f}"})


def crossover(table: list[dict], threads: int, key: str, a: str = ROWS[0], b: str = ROWS[1]) -> int | None:
    """The smallest measured T from which row a's `key` stays below row b's (None when it never does)."""
    per_t: dict[int, dict[str, float]] = {}
    for row in table:
        if row["threads"] == threads:
            per_t.setdefault(row["T"], {})[row["row"]] = row[key]
    found = None
    for T in sorted(per_t):
        vals = per_t[T]
        if a in vals and b in vals:
            found = (found or T) if vals[a] < vals[b] else None
    return found


def plot(table: list[dict], stem: Path, title: str) -> list[Path]:
    """Two log-log panels (step ms, peak MiB against T), one line per row and thread count."""
    from compare.report.plots import pyplot
    from utils.report_files import save_figure

    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    styles = {1: "-", 2: "--"}
    colors = dict(zip(ROWS, ("tab:red", "tab:blue", "tab:green"), strict=True))
    for ax, key, label in zip(axes, ("step_ms", "peak_mib"), ("train step of one layer (ms)", "peak memory (MiB)"),
                              strict=True):
        for threads in sorted({row["threads"] for row in table}):
            for name in ROWS:
                pts = [(r["T"], r[key]) for r in table if r["row"] == name and r["threads"] == threads]
                if pts:
                    ax.plot(*zip(*pts, strict=True), styles.get(threads, ":"), marker="o", ms=3,
                            color=colors[name], label=f"{name}, {threads} thread{'s' * (threads > 1)}")
        ax.axvline(816, color="grey", lw=0.8, ls=":")
        ax.text(816, 0.98, " T = 816", color="grey", fontsize=7, transform=ax.get_xaxis_transform(), va="top")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("look-back T (tokens; PatchTST attends over T/8 patches)")
        ax.set_ylabel(label)
        ax.grid(True, which="both", lw=0.3, alpha=0.5)
    axes[0].legend(fontsize=7)
    fig.suptitle(title, fontsize=9)
    return save_figure(fig, stem)


def format_row(row: dict) -> str:
    return (f"{row['threads']:>7} {row['T']:>6} {row['row']:<22} {row['tokens']:>6} {row['step_ms']:>10.2f} "
            f"{row['peak_mib']:>9.2f}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2], help="torch thread counts, measured in turn")
    p.add_argument("--T", type=int, nargs="+", default=list(T_VALUES), help="look-back lengths")
    p.add_argument("--batch", type=int, default=1, help="series per step (one channel each)")
    p.add_argument("--repeats", type=int, default=3, help="interleaved timed rounds per T (median)")
    p.add_argument("--max-step-s", type=float, default=60.0, help="a row slower than this stops at that T")
    p.add_argument("--out", type=Path, default=ROOT / "docs/results/caps_crossover", help="folder of CSV and plot")
    args = p.parse_args(argv)
    configure_host_malloc("retain")
    start = time.perf_counter()
    header = (f"bench_crossover {time.strftime('%Y-%m-%d %H:%M %Z')}, commit {_commit()}, torch {torch.__version__}, "
              f"{platform.machine()} ({os.cpu_count()} cores), batch {args.batch}, median of {args.repeats}")
    print(f"# {header}\n# load average before: {load_average()}")
    print(f"# other busy processes: {busy_processes()}")
    err = softmax_matches_attn_rope()
    print(f"# SDPA row vs the repository's Attn+RoPE (naive kernel), float64, T = 97: rel err {err:.1e}")
    if not err <= 1e-10:
        print("the SDPA row does not compute Attn+RoPE's function: no table reported")
        return 1
    print(f"{'threads':>7} {'T':>6} {'row':<22} {'tokens':>6} {'step ms':>10} {'peak MiB':>9}")
    table = []
    for threads in args.threads:
        table += measure_table(args.T, args.batch, args.repeats, threads, args.max_step_s,
                               lambda row: print(format_row(row), flush=True))
        for key in ("step_ms", "peak_mib"):
            for other in ROWS[1:]:
                T = crossover(table, threads, key, ROWS[0], other)
                print(f"# {threads} thread(s), {key}: CAPS below {other} from T = {T} on" if T
                      else f"# {threads} thread(s), {key}: CAPS never below {other} in the measured range")
    args.out.mkdir(parents=True, exist_ok=True)
    write_csv(table, args.out / "crossover.csv")
    load = load_average()
    paths = plot(table, args.out / "crossover", header + f"; load after {load}")
    shown = [str(path.resolve().relative_to(ROOT)) if path.resolve().is_relative_to(ROOT) else str(path)
             for path in (args.out / "crossover.csv", *paths)]
    print(f"# load average after: {load}; wall {time.perf_counter() - start:.0f} s; wrote {', '.join(shown)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
