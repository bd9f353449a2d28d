"""utils.report_files: a figure becomes a print-resolution PNG and a vector PDF; a table becomes a CSV and a
booktabs LaTeX table from pandas' Styler, with the marks as bold / underline and every special character
escaped."""

from __future__ import annotations

import os
import stat

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.image import imread  # noqa: E402

from utils import report_files  # noqa: E402
from utils.report_files import save_figure, table_latex, write_table  # noqa: E402

# The module's own value: tests/conftest.py lowers report_files.PRINT_DPI for the other tests' speed.
PRINT_DPI = 300


def test_a_figure_is_a_print_resolution_png_and_a_vector_pdf(tmp_path, monkeypatch):
    monkeypatch.undo()  # the print resolution itself, not conftest's
    assert report_files.PRINT_DPI == PRINT_DPI
    fig, ax = plt.subplots(figsize=(2.0, 1.0))
    ax.plot([0, 1], [0, 1])
    png, pdf = save_figure(fig, tmp_path / "line", tight=False)
    assert (png.name, pdf.name) == ("line.png", "line.pdf")
    assert imread(png).shape[:2] == (1 * PRINT_DPI, 2 * PRINT_DPI)
    text = pdf.read_bytes()
    assert text.startswith(b"%PDF") and b"/Subtype /Image" not in text  # lines stay vectors, no embedded bitmap
    assert not plt.get_fignums()  # closed


def marked_table() -> tuple[pd.DataFrame, pd.DataFrame]:
    index = pd.MultiIndex.from_tuples([("ETTh1", "96"), ("ETTh1", "192 †"), ("Avg rank", "")], names=["Dataset", "H"])
    columns = pd.MultiIndex.from_tuples([("CAPS_1", "MSE"), ("CAPS_1", "MAE"), ("Lin&Attn", "MSE"),
                                         ("Lin&Attn", "MAE")])
    table = pd.DataFrame([["0.380 ± 0.002", "0.400", "≈0.390", "—"], ["0.5", "0.6", "0.7", "0.8"],
                          ["1.0", "1.5", "2.0", "1.5"]], index=index, columns=columns)
    marks = pd.DataFrame([["best", "second", "", ""], ["", "", "second", "best"], ["", "", "", ""]],
                         index=index, columns=columns)
    return table, marks


def test_latex_is_booktabs_with_the_marks_and_escaped_text():
    table, marks = marked_table()
    tex = table_latex(table, marks, caption="MSE_1 & MAE, 50% of the runs")
    for rule in (r"\toprule", r"\midrule", r"\bottomrule"):
        assert tex.count(rule) == 1
    assert r"\textbf{0.380 $\pm$ 0.002}" in tex and r"\underline{0.400}" in tex
    assert r"\underline{0.7}" in tex and r"\textbf{0.8}" in tex
    assert tex.count(r"\textbf") == 2 and tex.count(r"\underline") == 2
    assert r"$\approx$0.390" in tex and " -- " in tex and r"192 $^\dagger$" in tex
    assert r"\multicolumn{2}{c}{CAPS\_1}" in tex and r"Lin\&Attn" in tex
    assert r"\caption{MSE\_1 \& MAE, 50\% of the runs}" in tex
    assert r"\begin{tabular}{llrrrr}" in tex


def test_write_table_writes_csv_and_tex(tmp_path):
    table, marks = marked_table()
    csv, tex = write_table(table, tmp_path / "accuracy", marks=marks)
    assert (csv.name, tex.name) == ("accuracy.csv", "accuracy.tex")
    assert tex.read_text().startswith("% needs \\usepackage{booktabs,multirow}\n")
    back = pd.read_csv(csv, dtype=str, keep_default_na=False)
    assert list(back.columns) == ["Dataset", "H", "CAPS_1 MSE", "CAPS_1 MAE", "Lin&Attn MSE", "Lin&Attn MAE"]
    assert back.iloc[0].tolist() == ["ETTh1", "96", "0.380 ± 0.002", "0.400", "≈0.390", "—"]
    assert [p.name for p in write_table(table, tmp_path / "only", csv=False)] == ["only.tex"]


def test_table_files_are_readable_by_others_under_the_usual_umask(tmp_path):
    """table.tex / efficiency.csv were 0600 (tempfile.mkstemp's mode, kept by the rename): now 0644 under umask 022."""
    table, marks = marked_table()
    old = os.umask(0o022)
    try:
        written = write_table(table, tmp_path / "efficiency", marks=marks)
    finally:
        os.umask(old)
    assert [oct(stat.S_IMODE(p.stat().st_mode)) for p in written] == [oct(0o644)] * 2


def test_marks_of_another_shape_are_refused():
    table, marks = marked_table()
    with pytest.raises(ValueError, match="one mark per cell"):
        table_latex(table, marks.iloc[:2])
