"""PNG figures of predict's outputs, drawn with matplotlib's Agg backend into bytes (the caller writes them with the
other outputs, after every check passed)."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd

__all__ = ["forecast_figure", "imputation_figure", "rolling_figure", "scores_figure"]

#: at most this many variates get a panel (the forecast columns' last ones: the target is last)
MAX_PANELS = 8


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _png(fig) -> bytes:
    buffer = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buffer, format="png", dpi=100)
    _pyplot().close(fig)
    return buffer.getvalue()


def _panels(columns: list[str], title: str):
    shown = columns[-MAX_PANELS:]
    plt = _pyplot()
    fig, axes = plt.subplots(len(shown), 1, figsize=(9, 2.2 * len(shown)), squeeze=False, sharex=True)
    more = f" (last {len(shown)} of {len(columns)} variates)" if len(shown) < len(columns) else ""
    axes[0, 0].set_title(title + more)
    return fig, list(zip(shown, axes[:, 0], strict=True))


def forecast_figure(history: pd.DataFrame, forecast: pd.DataFrame, time_column: str, columns: list[str]) -> bytes:
    """History (the rows the model read) and the forecast, one panel per forecast variate."""
    fig, panels = _panels(columns, "history and forecast")
    for name, ax in panels:
        ax.plot(history[time_column], history[name], label="history", color="tab:blue")
        ax.plot(forecast[time_column], forecast[name], label="forecast", color="tab:orange")
        ax.set_ylabel(name)
    panels[0][1].legend(loc="upper left")
    return _png(fig)


def rolling_figure(frame: pd.DataFrame, time_column: str, columns: list[str]) -> bytes:
    """Truth and the one-step-ahead and last-step forecasts of every window, one panel per forecast variate."""
    horizon = int(frame["step"].max())
    fig, panels = _panels(columns, "rolling forecasts")
    for name, ax in panels:
        for step, style in ((1, "tab:orange"), (horizon, "tab:green")):
            rows = frame[frame["step"] == step]
            ax.plot(rows[time_column], rows[name], color=style, label=f"{step} step(s) ahead")
        first = frame[frame["step"] == 1]
        ax.plot(first[time_column], first[f"{name}_true"], color="tab:blue", label="truth")
        ax.set_ylabel(name)
    panels[0][1].legend(loc="upper left")
    return _png(fig)


def imputation_figure(frame: pd.DataFrame, filled: np.ndarray, time_column: str | None, columns: list[str]) -> bytes:
    """The filled series, the filled cells marked, one panel per filled variate (`filled`: `[rows, K]` bool)."""
    fig, panels = _panels(columns, "imputed values (marked)")
    x = frame[time_column] if time_column else np.arange(len(frame))
    for name, ax in panels:
        k = columns.index(name)
        ax.plot(x, frame[name], color="tab:blue")
        ax.scatter(np.asarray(x)[filled[:, k]], frame[name].to_numpy()[filled[:, k]], color="tab:red", s=8,
                   label="filled")
        ax.set_ylabel(name)
    panels[0][1].legend(loc="upper left")
    return _png(fig)


def scores_figure(scores: np.ndarray, threshold: float, flagged: np.ndarray) -> bytes:
    """Anomaly scores per row, the training threshold and the flagged rows."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(9, 3))
    rows = np.arange(len(scores))
    ax.plot(rows, scores, color="tab:blue", label="score")
    ax.axhline(threshold, color="tab:red", linestyle="--", label="threshold")
    ax.scatter(rows[flagged], scores[flagged], color="tab:red", s=8, label="anomaly")
    ax.set_xlabel("row")
    ax.set_yscale("log" if np.all(scores > 0) else "linear")
    ax.legend(loc="upper left")
    return _png(fig)
