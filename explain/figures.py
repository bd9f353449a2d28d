"""The files of a look: one `.npz` of named arrays and one `.png` + `.pdf` per quantity (path contributions over
time, the Clock, each path's weights as t × i heat maps on one log scale) and the window's forecast."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from explain.paths import WEIGHT_FILES
from utils.report_files import save_figure

__all__ = ["LOG_RANGE", "MARKERS", "WEIGHT_TITLES", "line_figure", "plot_forecast", "plot_heat_maps", "plot_lines",
           "series_styles", "write_files"]

# Figure title of each path's weights.
WEIGHT_TITLES = {
    1: "path 1, Riemann softmax weights G[t, i] = exp(p_i) Δ_i / Σ_{j≤t} exp(p_j) Δ_j (mean over features)",
    2: "path 2, prefix-product decay A[t, i] = exp(−Σ_{i<j≤t} softplus(g_j) Δ_j) (mean over features)",
    3: "path 3, clock average Δ_i / Σ_{j≤t} Δ_j",
}
# Heat maps share one log colour scale from this weight up to 1.
LOG_RANGE = 1e-6
# Marker shapes of the line figures' series, in order (path 1, 2, 3, the layer's sum).
MARKERS = ("o", "s", "^", "D", "v", "P")


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _mark_horizon(ax, seq_len: int) -> None:
    ax.axvline(seq_len - 0.5, color="grey", linestyle=":", linewidth=0.8)


def series_styles(labels: list[str], steps: int) -> dict[str, dict]:
    """Per series label its colour, marker and `markevery`: each series gets its own marker shape, and the
    markers of the series are staggered along t, so a series lying on top of another one stays visible."""
    colours = _plt().get_cmap("tab10")
    every = max(1, steps // 10)
    return {label: {"color": colours(k), "marker": MARKERS[k % len(MARKERS)],
                    "markevery": (k * every // len(labels), every)} for k, label in enumerate(labels)}


def line_figure(title: str, series: dict[str, tuple[np.ndarray, np.ndarray]], seq_len: int, channel_name: str,
                ylabel: str):
    """The figure of `plot_lines`, not yet saved: rows = layers, columns = heads; each label's [L, H, T] for
    the channel (solid, filled markers) and the mean over channels (dashed, hollow markers), with the
    marker and colour of `series_styles`."""
    plt = _plt()
    layers, heads, steps = next(iter(series.values()))[0].shape[:3]
    height = 2.4 * layers + 1.3
    fig, axes = plt.subplots(layers, heads, figsize=(3.6 * heads, height), squeeze=False, sharex=True)
    styles = series_styles(list(series), steps)
    for layer in range(layers):
        for head in range(heads):
            ax = axes[layer, head]
            for label, (mine, mean) in series.items():
                ax.plot(mine[layer, head], linewidth=1.2, markersize=3.5, label=f"{label}, {channel_name}",
                        **styles[label])
                ax.plot(mean[layer, head], linewidth=0.9, linestyle="--", markersize=3.5, markerfacecolor="none",
                        label=f"{label}, channel mean", **styles[label])
            _mark_horizon(ax, seq_len)
            ax.set_title(f"layer {layer}, head {head}", fontsize=8)
            ax.tick_params(labelsize=7)
        axes[layer, 0].set_ylabel(ylabel, fontsize=8)
    for ax in axes[-1]:
        ax.set_xlabel("t (dotted: start of the horizon)", fontsize=8)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(4, len(labels)), fontsize=7)
    fig.suptitle(title, fontsize=9)
    # Fixed margins: tight_layout measures every tick label and costs seconds on large grids.
    fig.subplots_adjust(left=0.07, right=0.98, bottom=1.0 / height,
                        top=1 - 0.55 / height, hspace=0.35, wspace=0.25)
    return fig


def plot_lines(stem: Path, title: str, series: dict[str, tuple[np.ndarray, np.ndarray]], seq_len: int,
               channel_name: str, ylabel: str) -> list[Path]:
    """`stem.png` and `stem.pdf` of `line_figure`; returns their paths."""
    return save_figure(line_figure(title, series, seq_len, channel_name, ylabel), stem, tight=False)


def plot_heat_maps(stem: Path, title: str, mine: np.ndarray, mean: np.ndarray, seq_len: int,
                   channel_name: str) -> list[Path]:
    """Rows = (layer, channel | channel mean), columns = heads; [L, H, T, T] causal weights on one log colour
    scale from LOG_RANGE to 1 (every path weight lies in [0, 1]), so panels compare directly."""
    plt = _plt()
    from matplotlib.colors import LogNorm
    from matplotlib.ticker import MaxNLocator

    layers, heads, steps = mine.shape[:3]
    above = np.triu(np.ones((steps, steps), dtype=bool), 1)
    norm = LogNorm(vmin=LOG_RANGE, vmax=1.0)
    height = 5.4 * layers + 0.9
    fig, axes = plt.subplots(2 * layers, heads, figsize=(2.9 * heads + 0.8, height), squeeze=False)
    for layer in range(layers):
        for which, (label, values) in enumerate(((channel_name, mine), ("channel mean", mean))):
            for head in range(heads):
                ax = axes[2 * layer + which, head]
                panel = np.clip(values[layer, head].astype(np.float64), LOG_RANGE, None)
                image = ax.imshow(np.ma.masked_where(above, panel), norm=norm, cmap="viridis",
                                  interpolation="nearest")
                ax.axhline(seq_len - 0.5, color="white", linestyle=":", linewidth=0.6)
                ax.set_title(f"layer {layer}, head {head}, {label}", fontsize=7)
                ax.set_xlabel("i (key)", fontsize=7)
                ax.set_ylabel("t (query)", fontsize=7)
                ax.xaxis.set_major_locator(MaxNLocator(4, integer=True))
                ax.yaxis.set_major_locator(MaxNLocator(4, integer=True))
                ax.tick_params(labelsize=6)
    fig.suptitle(title + "\n(dotted: first horizon step; blank: i > t)", fontsize=9)
    fig.subplots_adjust(left=0.08, right=0.86, bottom=0.45 / height, top=1 - 0.95 / height, hspace=0.45,
                        wspace=0.35)
    bar = fig.colorbar(image, cax=fig.add_axes((0.89, 0.15, 0.02, 0.7)))
    bar.ax.tick_params(labelsize=7)
    return save_figure(fig, stem, tight=False)


def plot_forecast(stem: Path, history: np.ndarray, truth: np.ndarray, prediction: np.ndarray,
                  channel_name: str) -> list[Path]:
    """`stem.png` / `.pdf`: the window's input, the truth of the horizon and CAPS's forecast of one channel."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 2.6))
    steps = np.arange(len(history) + len(truth))
    ax.plot(steps[:len(history)], history, color="black", linewidth=1.0, label="input")
    ax.plot(steps[len(history):], truth, color="black", linestyle="--", linewidth=1.0, label="truth")
    ax.plot(steps[len(history):], prediction, color="tab:red", linewidth=1.2, label="CAPS")
    _mark_horizon(ax, len(history))
    ax.set_xlabel("t")
    ax.set_title(f"window and forecast, channel {channel_name} (standardised)", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return save_figure(fig, stem, tight=False)


def write_files(out: Path, quantities: dict[str, dict[str, np.ndarray]], paths: tuple[int, ...], seq_len: int,
                channel_name: str) -> list[Path]:
    """One `.npz` (named arrays) and one `.png` + `.pdf` per quantity under `out`."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for stem, arrays in quantities.items():
        np.savez_compressed(out / f"{stem}.npz", seq_len=seq_len, **arrays)
        written.append(out / f"{stem}.npz")
    contributions = quantities["contributions"]
    series = {f"|o{p}|": (contributions[f"o{p}_channel"], contributions[f"o{p}_mean"]) for p in paths}
    series["|o| (layer)"] = (contributions["o_channel"], contributions["o_mean"])
    written += plot_lines(out / "contributions", "contribution of each path to the attention output: norm of "
                          "o^(j)_t per head (o = Σ_j o^(j))", series, seq_len, channel_name, "norm")
    written += plot_lines(out / "clock", "Clock Δ_t per head", {"Δ": (quantities["clock"]["channel"],
                                                                     quantities["clock"]["mean"])},
                          seq_len, channel_name, "Δ_t")
    for path in paths:
        stem = WEIGHT_FILES[path]
        written += plot_heat_maps(out / stem, WEIGHT_TITLES[path], quantities[stem]["channel"],
                                  quantities[stem]["mean"], seq_len, channel_name)
    return written
