"""`python -m compare ...`: the comparison runner (`compare.run.runner`); `python -m compare pack ...` and
`python -m compare restore ...` move a comparison folder between machines (`compare.run.archive`);
`python -m compare tune ...` tunes every model on the same budget, then compares (`compare.tune.equal_budget`).

A runner command line starts with flags (`--data ...`), so a first word `pack` or `restore` is
unambiguous."""

import sys

if sys.argv[1:2] in (["pack"], ["restore"]):
    from compare.run.archive import main
elif sys.argv[1:2] == ["tune"]:
    from compare.tune.equal_budget import main
else:
    from compare.run.runner import main

sys.exit(main())
