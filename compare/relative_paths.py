"""`python -m compare.relative_paths FOLDER...`: rewrite the machine paths of an old results folder's records
as repository-relative ones (`compare.grid.relative_paths`)."""

import sys

from compare.grid.relative_paths import main

if __name__ == "__main__":
    sys.exit(main())
