"""--host_malloc: glibc keeps freed large blocks, so a repeated step stops paging memory in."""

from __future__ import annotations

import platform
import subprocess
import sys
from pathlib import Path

import pytest

from exp.arguments import build_parser
from utils.host_memory import configure_host_malloc, retain_freed_memory

ROOT = Path(__file__).resolve().parents[2]

# A step that allocates and frees three 32 MiB tensors; prints the page faults of 5 steps after 10 warm-ups
# (with retain the heap reaches its steady size within ~5 steps; then measured 0 or 8 192 faults, one block).
STEP_FAULTS = """
import resource, sys, torch
from utils.host_memory import configure_host_malloc
configure_host_malloc(sys.argv[1])
x = torch.ones(1 << 23)
def step():
    h = x * 2
    return (h.relu() + h).sum()
for _ in range(10):
    step()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(5):
    step()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _step_faults(choice: str) -> int:
    out = subprocess.run([sys.executable, "-c", STEP_FAULTS, choice], cwd=ROOT, capture_output=True, text=True,
                         check=True, env={"PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"})
    return int(out.stdout.strip())


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="the tuning applies to glibc's malloc only")
def test_retain_stops_paging_in_freed_activations():
    retained, system = _step_faults("retain"), _step_faults("system")
    # system: each of the 15 blocks is a fresh mapping, paged in at least once per 2 MiB (transparent
    # huge pages) and here once per 4 KiB page (8 192 faults per block, ~120 000 in all).
    assert system >= 15 * 16
    assert retained * 5 < system, (retained, system)


REQUIRED = ["--task_name", "long_term_forecast", "--is_training", "1", "--model_id", "x", "--model", "DLinear",
            "--data", "ETTh1"]


def test_flag_default_and_choices():
    parser = build_parser()
    assert parser.parse_args(REQUIRED).host_malloc == "retain"
    assert parser.parse_args(REQUIRED + ["--host_malloc", "system"]).host_malloc == "system"
    with pytest.raises(ValueError, match="valid choices: retain, system"):
        configure_host_malloc("jemalloc")
    assert configure_host_malloc("system") is False


def test_limit_must_fit_a_c_int():
    with pytest.raises(ValueError, match="C int"):
        retain_freed_memory(1 << 31)
    with pytest.raises(ValueError, match="C int"):
        retain_freed_memory(0)
