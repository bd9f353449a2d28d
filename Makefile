# CAPS-TSLib developer commands. `make demo` and `make test` work from a fresh clone.
PYTHON ?= python3
TORCH_PIN ?= torch==2.13.0
# The dataset mirror beside the checkout (used by tests and `fetch`), when it exists.
MIRROR ?= $(firstword $(wildcard ../shared/datasets))
export TSLIB_DATA_MIRROR ?= $(MIRROR)

.PHONY: install install-dev demo test test-all lint bench clean

install:
	@$(PYTHON) -c "import torch" 2>/dev/null || $(PYTHON) -m pip install -q "$(TORCH_PIN)"
	$(PYTHON) -m pip install -q -r requirements.txt

install-dev: install
	$(PYTHON) -m pip install -q -r requirements-dev.txt

demo: install
	$(PYTHON) -m data_provider.fetch ETTh1 --root ./dataset
	$(PYTHON) -u run.py --task_name long_term_forecast --is_training 1 --root_path ./dataset/ETT-small/ \
	  --data_path ETTh1.csv --model_id demo_ETTh1_96_96 --model DLinear --data ETTh1 --features M \
	  --seq_len 96 --label_len 48 --pred_len 96 --enc_in 7 --dec_in 7 --c_out 7 --des Demo --itr 1 \
	  --train_epochs 3 --num_workers 0 --no_progress
	@echo "Metrics: result_long_term_forecast.txt and results.jsonl; plots: test_results/<setting>/*.pdf"

test: install-dev
	$(PYTHON) -m pytest -q

test-all: install-dev
	$(PYTHON) -m pytest -q -m "slow or not slow"

lint:
	$(PYTHON) -m ruff check .

clean:
	rm -rf checkpoints results test_results result_long_term_forecast.txt results.jsonl .pytest_cache
