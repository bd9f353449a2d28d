"""explain.figures: every series of a line figure stays visible when it lies on top of another (path 1 under
path 3 was hidden): its own marker, markers staggered along t, channel and channel mean in other line styles."""

from __future__ import annotations

import numpy as np

from explain.figures import MARKERS, line_figure, series_styles

LAYERS, HEADS, STEPS = 2, 2, 40


def test_series_that_coincide_stay_distinguishable():
    rng = np.random.default_rng(0)
    same = rng.random((LAYERS, HEADS, STEPS))
    series = {"|o1|": (same, same), "|o2|": (rng.random(same.shape), same), "|o3|": (same.copy(), same.copy()),
              "|o| (layer)": (rng.random(same.shape), same)}
    fig = line_figure("contributions", series, 24, "OT", "norm")
    try:
        for ax in fig.axes:
            lines = ax.get_lines()[: 2 * len(series)]  # then the horizon marker
            channel = [line for line in lines if line.get_label().endswith(", OT")]
            mean = [line for line in lines if line.get_label().endswith(", channel mean")]
            assert len(channel) == len(mean) == len(series)
            # Path 1 and path 3 draw the same numbers, yet each has its own marker shape and marker positions.
            assert len({line.get_marker() for line in channel}) == len(series)
            assert len({line.get_markevery()[0] for line in channel}) == len(series)
            np.testing.assert_array_equal(channel[0].get_ydata(), channel[2].get_ydata())
            assert {line.get_linestyle() for line in channel} == {"-"} and {line.get_linestyle() for line in mean} == {"--"}
            assert all(line.get_markerfacecolor() == "none" for line in mean)
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)


def test_styles_stagger_markers_within_one_period():
    styles = series_styles(["a", "b", "c"], 100)
    assert [s["marker"] for s in styles.values()] == list(MARKERS[:3])
    assert [s["markevery"] for s in styles.values()] == [(0, 10), (3, 10), (6, 10)]
