"""Deprecated alias kept for one release: `python -m utils.compare` runs `python -m compare`.

The runner moved to the `compare/` package (the application floor above `exp/`); this module only
forwards the command line, so it imports nothing from that floor until it is run as a script.
"""

if __name__ == "__main__":
    import runpy
    import sys

    print("utils.compare is deprecated and will be removed in the next release: use `python -m compare`",
          file=sys.stderr)
    runpy.run_module("compare", run_name="__main__", alter_sys=True)
