"""`python -m explain ...`: a look inside a trained CAPS checkpoint (`explain.cli`)."""

import sys

from explain.cli import main

sys.exit(main())
