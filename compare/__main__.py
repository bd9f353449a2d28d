"""`python -m compare ...`: the comparison runner (`compare.runner`)."""

import sys

from compare.runner import main

sys.exit(main())
