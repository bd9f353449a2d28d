"""How many token rows the CAPS blocks' tiled functions take at a time (`mlp`, `mlp_branch`, `projection`,
`residual_linear`, `recomputed`).

A tile's wide intermediates should stay in one core's L2 cache: 1 024 rows x 4D = 128 floats is 512 KiB at the
recipe's D = 32, and 1 024 was the fastest of 256 / 1 024 / 4 096 rows on this project's CPU with one thread.
With several intra-op threads every thread should get such a tile: torch splits each op over its threads (each
split a fork and a join), and a tile sized for one thread would leave each thread a sliver per split.
"""

from __future__ import annotations

import torch

#: token rows per tile and intra-op thread
TILE_ROWS_PER_THREAD = 1024


def tile_rows() -> int:
    """Rows per tile now: TILE_ROWS_PER_THREAD x torch.get_num_threads()."""
    return TILE_ROWS_PER_THREAD * torch.get_num_threads()


def checked_tile_rows(rows: int | None) -> int:
    """`rows`, or `tile_rows()` for None; ValueError below 1."""
    if rows is None:
        return tile_rows()
    if rows < 1:
        raise ValueError(f"tile_rows must be >= 1, got {rows}")
    return rows
