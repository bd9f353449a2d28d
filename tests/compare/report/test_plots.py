"""compare.report.plots: the learning-curve figure reads sensibly at any size of run (one epoch: a note, an integer
epoch axis and losses from 0, not a dot on an axis from 0.96 to 1.04)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pytest

from compare.report.plots import LossCurve, learning_curve_figure, value_axis_limits


def figure_of(curves: list[LossCurve]):
    fig, _, _ = learning_curve_figure(curves, ["A", "B"], "loss")
    return fig


def test_one_epoch_reads_as_one_epoch():
    curves = [LossCurve("ETTh1, H = 96", "A", [{"epoch": 1, "train": 1.2, "vali": 1.0, "test": 1.01}], 1),
              LossCurve("ETTh1, H = 96", "B", [{"epoch": 1, "train": 1.1, "vali": 0.99, "test": 1.0}], 1)]
    fig = figure_of(curves)
    try:
        ax = fig.axes[0]
        assert "1 epoch" in ax.get_title()
        low, high = ax.get_ylim()
        assert low == 0.0 and high >= 1.01  # the losses' scale, not ±4 % around them
        assert [t for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]] == [1.0]
        assert all(line.get_marker() not in ("None", None, "") for line in ax.get_lines())
    finally:
        plt.close(fig)


def test_several_epochs_keep_their_own_scale():
    epochs = [{"epoch": e, "train": 1.0 / e, "vali": 1.0 / e + 0.1, "test": 1.0 / e + 0.2} for e in range(1, 6)]
    fig = figure_of([LossCurve("ETTh1, H = 96", "A", epochs, 5)])
    try:
        ax = fig.axes[0]
        assert "epoch)" not in ax.get_title()
        assert ax.get_ylim()[0] > 0.2  # the curve fills the panel
        ticks = [t for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
        assert ticks and all(t == pytest.approx(round(t)) for t in ticks) and ax.get_xlim() == (0.5, 5.5)
    finally:
        plt.close(fig)


@pytest.mark.parametrize(("values", "starts_at_zero"), [([1.0], True), ([0.50, 0.51, float("nan")], True),
                                                       ([0.4, 0.8], False), ([-0.2, -0.2], False)])
def test_a_panel_of_nearly_equal_values_starts_at_zero(values, starts_at_zero):
    fig, ax = plt.subplots()
    try:
        ax.plot(range(len(values)), values, marker="o")
        value_axis_limits(ax, values)
        assert bool(ax.get_ylim()[0] == 0.0) is starts_at_zero
    finally:
        plt.close(fig)
