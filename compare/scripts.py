"""`python -m compare.scripts [--check]`: write (or check) the TSLib-style `.sh` scripts from the recipe table
(`compare.recipes.scripts`)."""

import sys

from compare.recipes.scripts import main

if __name__ == "__main__":
    sys.exit(main())
