"""`python -m compare.naive_backfill FOLDER... [--root DATA_ROOT] [--dry-run]`: fill the naive forecasters' scores
into records written before runs recorded them, from each run's own flags (`compare.grid.naive_backfill`)."""

import sys

from compare.grid.naive_backfill import main

if __name__ == "__main__":
    sys.exit(main())
