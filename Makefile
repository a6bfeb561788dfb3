# One-command set-up and use. Everything runs offline (HF_HUB_OFFLINE=1).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export HF_HUB_OFFLINE := 1
export HF_DATASETS_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export WANDB_MODE ?= offline
export TOKENIZERS_PARALLELISM := false

.PHONY: help venv demo test lint bench clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-8s %s\n", $$1, $$2}'

$(BIN)/.installed: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	# CPU torch first, pinned: an unpinned torch pulls a multi-GB CUDA build.
	$(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $@

venv: $(BIN)/.installed  ## create .venv and install the project (CPU torch 2.13.0)

demo: venv  ## offline demo: fine-tune the shipped MiniLM as a coherence classifier, export, score
	$(BIN)/python train.py experiment=ccl_demo
	$(BIN)/learned-metrics score coherence --model checkpoints/ccl_demo/latest/export \
		--input examples/coherence_demo.jsonl --output checkpoints/ccl_demo/latest/demo_scores.jsonl

test: venv  ## the whole offline test suite
	$(BIN)/python -m pytest -q tests

lint: venv  ## ruff
	$(BIN)/ruff check src tests bench data_prep train.py

bench: venv  ## the benchmarks (project vs naive way, one run each)
	$(BIN)/python bench/bench_scoring.py
	$(BIN)/python bench/bench_meta_eval.py

clean:  ## remove the venv and caches (keeps checkpoints/)
	rm -rf $(VENV) .pytest_cache .ruff_cache
