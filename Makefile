# CAPS-TSLib developer commands. `make demo` and `make test` work from a fresh clone.
PYTHON ?= python3
TORCH_PIN ?= torch==2.13.0
# The dataset mirror beside the checkout (used by tests and `fetch`), when it exists; made absolute once (a
# relative value given by hand too), so tests that change directory still find it.
MIRROR ?= $(firstword $(wildcard ../shared/datasets))
override TSLIB_DATA_MIRROR := $(abspath $(or $(TSLIB_DATA_MIRROR),$(MIRROR)))
export TSLIB_DATA_MIRROR

.PHONY: install install-dev demo demo-table test test-all lint bench clean

install:
	@$(PYTHON) -c "import torch" 2>/dev/null || $(PYTHON) -m pip install -q "$(TORCH_PIN)"
	$(PYTHON) -m pip install -q -r requirements.txt

install-dev: install
	$(PYTHON) -m pip install -q -r requirements-dev.txt

# The demo: CAPS beside three baselines on ETTh1, H = 96, through the comparison runner, at a smoke-size recipe
# (every model: 1 epoch, 1 layer, d_model 16, d_ff 32, batch 128), not the paper's; a rerun reuses finished runs.
DEMO_OUT ?= demo_comparison
DEMO_MODELS ?= CAPS DLinear PatchTST iTransformer
demo: install
	$(PYTHON) -m data_provider.fetch ETTh1 --root ./dataset
	@echo "Smoke-size recipe, not the paper's: 1 epoch, --e_layers 1 --d_model 16 --d_ff 32 --batch_size 128"
	$(PYTHON) -u -m compare --data ETTh1 --pred_lens 96 --models $(DEMO_MODELS) --epochs 1 \
	  --extra='--e_layers 1 --d_model 16 --d_ff 32 --batch_size 128' --no-timing --out $(DEMO_OUT)
	@$(MAKE) -s demo-table DEMO_OUT=$(DEMO_OUT)
	@echo; echo "Report: $(DEMO_OUT)/table.md (also table.csv, table.tex); plots: $(DEMO_OUT)/*.png and *.pdf"

# The first table of the demo's report (tests/compare/report/test_report.py runs it on a report).
demo-table:
	@echo; awk '/^\|/ {shown = 1; print; next} shown {exit}' $(DEMO_OUT)/table.md

# The mirror is named on the command line so `make -n test` shows which one the tests read.
# The suite runs in TEST_WORKERS processes (pytest-xdist; each test file stays in one process) and ends with its
# 25 slowest tests, so a suite that grows past its time budget shows where.
TEST_WORKERS ?= 2
test: install-dev
	TSLIB_DATA_MIRROR=$(TSLIB_DATA_MIRROR) $(PYTHON) -m pytest -q -n $(TEST_WORKERS) --dist loadfile --durations=25

test-all: install-dev
	TSLIB_DATA_MIRROR=$(TSLIB_DATA_MIRROR) $(PYTHON) -m pytest -q -n $(TEST_WORKERS) --dist loadfile -m "slow or not slow"

lint:
	$(PYTHON) -m ruff check .

clean:
	rm -rf checkpoints results test_results result_long_term_forecast.txt results.jsonl .pytest_cache \
	  $(DEMO_OUT)
