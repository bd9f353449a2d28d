"""The comparison floor: runs models side by side from the recipe table and reports the results.

Above `exp/` (it launches `run.py` and reads the experiment's flags); nothing below imports it.
`python -m compare ...` runs `compare.runner`; `python -m compare.report` rewrites a report.
"""
