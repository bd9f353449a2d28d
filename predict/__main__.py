"""`python -m predict CHECKPOINT_FOLDER FILE [--out DIR] [--rolling [--rolling_split test]]` (`predict.cli`)."""

import sys

from predict.cli import main

sys.exit(main())
