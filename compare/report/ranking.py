"""Marks and ranks of one table line: **bold** best, _underline_ second, ≈ within seed noise, and the
competition rank of each row.

Every judgement is made at the printed precision (`DECIMALS`), so numbers that print alike share a mark
and a rank. With several seeds per cell a mark needs Welch's t-test over the seeds (`compare.report.significance`)
to separate the rows; otherwise it follows the values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from compare.report import significance

__all__ = ["AVG", "DECIMALS", "Cell", "competition_ranks", "mark_best", "mark_with_seeds"]

#: decimals every table prints, and at which ties are judged
DECIMALS = 3
#: the label of a line that averages a dataset's horizons (or mask rates)
AVG = "Avg"


@dataclass
class Cell:
    """One table cell: a value (None = missing) and its mark ('best', 'second', '' or, with seeds,
    'tied': the lowest mean or within seed noise of it, so no row wins)."""

    value: float | None
    mark: str = ""


def mark_best(values: Sequence[float | None], higher_is_better: bool = False) -> list[Cell]:
    """Cells with 'best' on the smallest value (the largest when `higher_is_better`) and 'second' on the
    next distinct one, judged at the printed precision (ties share a mark)."""
    rounded = [None if v is None else round(v, DECIMALS) for v in values]
    distinct = sorted({v for v in rounded if v is not None}, reverse=higher_is_better)
    marks = {distinct[0]: "best"} if distinct else {}
    if len(distinct) > 1:
        marks[distinct[1]] = "second"
    return [Cell(v, marks.get(r, "") if r is not None else "") for v, r in zip(values, rounded, strict=True)]


def mark_with_seeds(values: Sequence[float | None], samples: Sequence[dict], higher_is_better: bool = False
                    ) -> tuple[list[Cell], bool]:
    """Marks of one table line from the means `values` and each row's per-seed values `samples`
    ({seed: value}); returns (cells, tested).

    When every present row has at least two seeds, two rows are *apart* when their means differ at the
    printed precision and Welch's t-test over their seeds gives p < ALPHA. The lowest mean is 'best'
    only when it is apart from every other row; otherwise it and the rows not apart from it are 'tied'
    (within seed noise: nobody wins). 'second' goes to the second-lowest mean when the best is 'best'
    and it is apart from every row after it. With a row of a single seed nothing is tested
    (tested = False) and the marks are `mark_best`'s. higher_is_better: the highest mean is the best."""
    present = [i for i, v in enumerate(values) if v is not None]
    if len(present) < 2 or any(len(samples[i]) < 2 for i in present):
        return mark_best(values, higher_is_better), len(present) < 2
    rounded = {i: round(values[i], DECIMALS) for i in present}
    sign = -1.0 if higher_is_better else 1.0
    order = sorted(present, key=lambda i: (sign * rounded[i], sign * values[i]))

    def apart(i: int, j: int) -> bool:
        p = significance.welch_p(list(samples[i].values()), list(samples[j].values()))
        return rounded[i] != rounded[j] and p is not None and p < significance.ALPHA

    cells = [Cell(v) for v in values]
    best, rest = order[0], order[1:]
    tied = [i for i in rest if not apart(i, best)]
    if tied:
        for i in [best, *tied]:
            cells[i].mark = "tied"
        return cells, True
    cells[best].mark = "best"
    if rest and all(apart(rest[0], j) for j in rest[1:]):
        cells[rest[0]].mark = "second"
    return cells, True


def competition_ranks(values: Sequence[float | None], higher_is_better: bool = False) -> list[int | None]:
    """Rank 1 = smallest (largest when `higher_is_better`) at the printed precision; ties share the lowest
    rank (1, 1, 3)."""
    sign = -1.0 if higher_is_better else 1.0
    rounded = [None if v is None else sign * round(v, DECIMALS) for v in values]
    present = [v for v in rounded if v is not None]
    return [None if v is None else 1 + sum(u < v for u in present) for v in rounded]
