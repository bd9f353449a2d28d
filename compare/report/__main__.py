"""`python -m compare.report --out DIR`: rewrite a comparison folder's report from its records
(`compare.report.build`)."""

import sys

from compare.report.build import main

sys.exit(main())
