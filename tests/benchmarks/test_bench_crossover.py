"""`benchmarks/bench_crossover.py`: its softmax row computes the repository's Attn+RoPE, its table has one
row per (T, layer) with positive finite values, and the crossover and CSV helpers read that table.
No timing is asserted: only the table's shape and sanity."""

from __future__ import annotations

import csv
import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.bench_crossover import (  # noqa: E402
    COLUMNS,
    ROWS,
    crossover,
    measure_table,
    patch_count,
    softmax_matches_attn_rope,
    write_csv,
)


@pytest.fixture(scope="module")
def table() -> list[dict]:
    return measure_table([24, 40], batch=1, repeats=1, threads=1, max_step_s=60.0)


def test_sdpa_row_is_attn_rope() -> None:
    assert softmax_matches_attn_rope(T=33) <= 1e-10


def test_patch_count_follows_patchtst() -> None:
    # models/PatchTST.py: (seq_len + stride - patch_len) // stride + 1 patches, 12 at seq_len 96.
    assert [patch_count(T) for T in (96, 816, 16384)] == [12, 102, 2048]


def test_table_has_every_row_with_positive_finite_values(table: list[dict]) -> None:
    assert [(row["T"], row["row"]) for row in table] == [(T, name) for T in (24, 40) for name in ROWS]
    for row in table:
        assert set(row) == set(COLUMNS)
        assert row["threads"] == 1
        assert row["tokens"] == (patch_count(row["T"]) if row["row"] == ROWS[2] else row["T"])
        for key in ("step_ms", "peak_mib"):
            assert math.isfinite(row[key]) and row[key] > 0, (row["row"], row["T"], key, row[key])


def test_csv_round_trips_the_table(table: list[dict], tmp_path: Path) -> None:
    write_csv(table, tmp_path / "crossover.csv")
    with (tmp_path / "crossover.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert tuple(rows[0]) == COLUMNS
    assert [(int(r["T"]), r["row"]) for r in rows] == [(r["T"], r["row"]) for r in table]


def test_crossover_is_the_first_t_from_which_caps_stays_below() -> None:
    def rows(values: dict[int, tuple[float, float]]) -> list[dict]:
        return [{"threads": 1, "T": T, "row": name, "step_ms": v}
                for T, pair in values.items() for name, v in zip(ROWS[:2], pair, strict=True)]

    assert crossover(rows({96: (2, 1), 192: (1, 2), 384: (3, 2), 816: (1, 2), 1536: (1, 3)}), 1, "step_ms") == 816
    assert crossover(rows({96: (2, 1), 192: (3, 2)}), 1, "step_ms") is None
