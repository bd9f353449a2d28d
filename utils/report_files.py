"""The files a figure or a table of a report becomes, ready for a paper:

- `save_figure(fig, stem)`: `stem.png` at print resolution (`PRINT_DPI`) and `stem.pdf` (vector);
- `write_table(table, stem, marks=...)`: `stem.csv` (the cells as shown) and `stem.tex`, a booktabs table
  written by pandas' `Styler.to_latex` (jinja2), **bold** where a mark says "best" and underlined where it
  says "second", as the markdown tables show them.

Every report of the project (`compare`, `explain`) writes its figures and tables through these two, so a
new figure or table gets every format by calling them.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from utils.tools import atomic_write_text

__all__ = ["LATEX_PREAMBLE", "PRINT_DPI", "latex_text", "save_figure", "table_latex", "write_table"]

#: dots per inch of every PNG a report writes (print resolution)
PRINT_DPI = 300
#: what a LaTeX document needs to \input a table of `write_table`
LATEX_PREAMBLE = r"\usepackage{booktabs,multirow}"

# Characters of the tables' text that LaTeX's default UTF-8 input does not typeset, as math or text commands.
_LATEX_SYMBOLS = {"±": r"$\pm$", "≈": r"$\approx$", "—": "--", "–": "--", "−": "$-$", "†": r"$^\dagger$",
                  "Δ": r"$\Delta$", "×": r"$\times$", "≤": r"$\leq$", "≥": r"$\geq$"}
# The `marks` values `write_table` styles, as Styler's LaTeX commands wrapping the cell.
_MARK_STYLES = {"best": "textbf:--rwrap;", "second": "underline:--rwrap;"}


def save_figure(fig, stem: str | os.PathLike, *, dpi: int | None = None, tight: bool = True) -> list[Path]:
    """Save matplotlib `fig` as `stem.png` (at `dpi`, default `PRINT_DPI`) and `stem.pdf` (vector), then close
    it; returns [png, pdf]. tight: crop to the drawn content (`bbox_inches="tight"`), so legends below the axes
    stay in."""
    import matplotlib.pyplot as plt

    stem = Path(stem)
    paths = [stem.with_name(stem.name + ".png"), stem.with_name(stem.name + ".pdf")]
    extra = {"bbox_inches": "tight"} if tight else {}
    try:
        fig.savefig(paths[0], dpi=dpi or PRINT_DPI, **extra)
        fig.savefig(paths[1], **extra)
    finally:
        plt.close(fig)
    return paths


def latex_text(text: object) -> str:
    """`text` (already LaTeX-escaped by the Styler) with the symbols of `_LATEX_SYMBOLS` made typesettable."""
    text = str(text)
    for symbol, latex in _LATEX_SYMBOLS.items():
        text = text.replace(symbol, latex)
    return text


def _escape_caption(text: str) -> str:
    """`text` with LaTeX's special characters escaped as the Styler escapes cells (it leaves captions as they
    are), then `latex_text`."""
    specials = {"\\": r"\textbackslash ", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                "{": r"\{", "}": r"\}", "~": r"\textasciitilde ", "^": r"\textasciicircum "}
    return latex_text("".join(specials.get(ch, ch) for ch in text))


def table_latex(table: pd.DataFrame, marks: pd.DataFrame | None = None, caption: str | None = None,
                label: str | None = None) -> str:
    """The LaTeX of `table` (booktabs rules; a MultiIndex becomes \\multicolumn / \\multirow headers): every
    cell, index and column label and the caption escaped, **bold** where `marks` (same shape) is "best",
    underlined where it is "second". Text columns align left, the rest right."""
    styler = (table.style.format(latex_text, escape="latex")
              .format_index(latex_text, escape="latex", axis=0)
              .format_index(latex_text, escape="latex", axis=1))
    if marks is not None:
        if marks.shape != table.shape:
            raise ValueError(f"marks have shape {marks.shape}, the table {table.shape}: give one mark per cell")
        styles = pd.DataFrame(marks.to_numpy(), index=table.index, columns=table.columns)
        styler = styler.apply(lambda _: styles.map(lambda m: _MARK_STYLES.get(m, "")), axis=None)
    index_columns = table.index.nlevels
    column_format = "l" * index_columns + "".join(
        "l" if pd.api.types.is_object_dtype(dtype) and not _numeric_text(table.iloc[:, j]) else "r"
        for j, dtype in enumerate(table.dtypes))
    return styler.to_latex(hrules=True, column_format=column_format, multicol_align="c", multirow_align="t",
                           caption=None if caption is None else _escape_caption(caption), label=label,
                           position_float="centering" if caption or label else None)


def _numeric_text(column: pd.Series) -> bool:
    """Whether a text column shows numbers (e.g. "0.412 ± 0.003", "**—**"): they align right."""
    return all(any(ch.isdigit() for ch in str(v)) or str(v).strip() in ("—", "", "nan") for v in column)


def write_table(table: pd.DataFrame, stem: str | os.PathLike, *, marks: pd.DataFrame | None = None,
                caption: str | None = None, label: str | None = None, csv: bool = True) -> list[Path]:
    """Write `table` as `stem.tex` (`table_latex`; a comment line names the packages it needs) and, unless
    `csv` is False (a report that already writes its numbers in long form), as `stem.csv` with the cells as
    shown (index levels as the first columns, a MultiIndex header joined into one line); returns the paths
    written."""
    stem = Path(stem)
    paths = []
    if csv:
        flat = table.copy()
        if isinstance(flat.columns, pd.MultiIndex):  # one header line: ("H = 96", "MSE") -> "H = 96 MSE"
            flat.columns = [" ".join(str(part) for part in column if part != "") for column in flat.columns]
        paths.append(stem.with_name(stem.name + ".csv"))
        atomic_write_text(paths[-1], flat.to_csv())
    paths.append(stem.with_name(stem.name + ".tex"))
    atomic_write_text(paths[-1], f"% needs {LATEX_PREAMBLE}\n" + table_latex(table, marks, caption, label))
    return paths
