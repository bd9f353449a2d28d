"""What each of CAPS's fast block forms buys: one CAPS model (ETTh1 H = 720 recipe, batch 32), its train step timed
with the forms switched on one after another, interleaved in one process.

Usage:  python benchmarks/bench_caps_parts.py [--threads 1 2] [--rounds 3]

Rows: "reference" = every block module by module on the autograd references; "fused norm + tiled MLP" = the
fused RMSNorm and the tiled MLP half (`layers/caps/mlp_branch.py`); "+ folded projections" = the attention half
with the norm folded into the input projections and c_proj in tiles (`projection.py`, `residual_linear.py`);
"+ recomputation" = the default: projections and native kernel as one function recomputing the projections in
backward (`recomputed.py`). The forms compute the same forward (tests/models/test_caps_fast_blocks.py); this
script only times them. Thread counts run in the order given, in one process (the 2-thread figures depend on
what ran before: see benchmarks/README.md). OpenMP settings such as GOMP_SPINCOUNT come from the environment.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from compare.grid.efficiency import build_model, make_train_step  # noqa: E402
from compare.grid.run_args import parse_run_args  # noqa: E402
from compare.recipes.tables import RECIPES  # noqa: E402
from layers.CAPS_Attention import CAPSAttention  # noqa: E402
from models.CAPS import MLP, CAPSBlock, RMSNorm  # noqa: E402
from utils.host_memory import configure_host_malloc  # noqa: E402

# row -> (fused norms and tiled MLP, attention half from the block input, recomputation)
ROWS = {"reference": (False, False, False), "fused norm + tiled MLP": (True, False, False),
        "+ folded projections": (True, True, False), "+ recomputation": (True, True, True)}


def _switch(model: torch.nn.Module, fast: bool, attention_half: bool, recompute: bool) -> None:
    """Sets the block forms of `model` (class-level switches stand in for the two halves' own checks)."""
    for module in model.modules():
        if isinstance(module, RMSNorm):
            module.fused = fast
        elif isinstance(module, MLP):
            module.tiled = fast
    CAPSBlock._attention_half_prenormed = _DEFAULTS[0] if attention_half else (lambda self, x: False)
    CAPSAttention._recomputes_on_native = _DEFAULTS[1] if recompute else (lambda self, x: False)


_DEFAULTS = (CAPSBlock._attention_half_prenormed, CAPSAttention._recomputes_on_native)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args(argv)
    configure_host_malloc("retain")
    configs = parse_run_args(RECIPES.recipe("CAPS", "ETTh1", 720).argv)
    model = build_model(configs, "cpu")
    _, step = make_train_step(configs, model, "cpu")
    spin = {k: os.environ[k] for k in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY") if k in os.environ}
    print(f"# bench_caps_parts  {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC  torch {torch.__version__}  "
          f"ETTh1 H = 720 batch {configs.batch_size}  OpenMP env {spin or 'default'}")
    for threads in args.threads:
        torch.set_num_threads(threads)
        for flags in ROWS.values():  # warm-up
            _switch(model, *flags)
            step()
        times: dict[str, list[float]] = {name: [] for name in ROWS}
        for _ in range(args.rounds):
            for name, flags in ROWS.items():
                _switch(model, *flags)
                start = time.perf_counter()
                step()
                times[name].append(time.perf_counter() - start)
        for name, seconds in times.items():
            print(f"threads {threads}  {name:24s} median {1e3 * statistics.median(seconds):7.0f} ms  "
                  f"min {1e3 * min(seconds):7.0f} ms")
    _switch(model, *ROWS["+ recomputation"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
