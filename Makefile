# One-command set-up and use. Everything runs offline (HF_HUB_OFFLINE=1).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export HF_HUB_OFFLINE := 1
export HF_DATASETS_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export WANDB_MODE ?= offline
export TOKENIZERS_PARALLELISM := false

.PHONY: help venv demo demo-nli test test-fast lint docs bench clean

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

DEMO_RUN := checkpoints/ccl_demo/latest
NLI_RUN := checkpoints/nli_demo/latest

demo: venv  ## offline demo: train the shipped MiniLM as a coherence classifier, export, score held-out texts, shuffle test
	$(BIN)/python train.py experiment=ccl_demo
	$(BIN)/learned-metrics score coherence --model $(DEMO_RUN)/export \
		--input examples/coherence_demo.jsonl --output $(DEMO_RUN)/demo_scores.jsonl
	$(BIN)/learned-metrics meta-eval shuffle-test --input $(DEMO_RUN)/demo_scores.jsonl

demo-nli: venv  ## offline NLI demo: augmented generated NLI set, fine-tune, score with MC dropout, ROC AUC
	$(BIN)/python train.py experiment=nli_demo
	$(BIN)/learned-metrics score faithfulness --model $(NLI_RUN)/export --mc-samples 15 \
		--input examples/faithfulness_demo.jsonl --output $(NLI_RUN)/demo_scores.jsonl \
		--system-field system --summary $(NLI_RUN)/demo_summary.json --resume
	$(BIN)/learned-metrics meta-eval auc --input $(NLI_RUN)/demo_scores.jsonl --score-field score --label-field label \
		--roc-plot $(NLI_RUN)/roc.png

# pytest-xdist workers: one per CPU the process may use, at most 8 (each holds torch in memory);
# TEST_WORKERS=0 runs everything in one process.
TEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); [ "$$n" -gt 8 ] && n=8; echo $$n)

# One test file per worker at a time, in collection order (tests/conftest.py puts slow tests first): a file's module
# fixtures (a Ray instance, a trained model) are built once, and the short files even out the workers at the end.
TEST_DIST := --dist loadfile --no-loadscope-reorder

# pytest keeps each test module with its assertions rewritten in __pycache__ (git ignores it), so later runs skip
# the rewriting (about 7 s of CPU per worker here); PYTHONDONTWRITEBYTECODE=1, which some machines set, turns that
# cache off, so the test targets run without it.
PYTEST := env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest

test: venv  ## the whole offline test suite, in parallel, listing the 15 slowest tests
	$(PYTEST) -q -n $(TEST_WORKERS) $(TEST_DIST) --durations=15 tests

test-fast: venv  ## everything not marked slow: the loop to run between edits (under a minute)
	$(PYTEST) -q -n $(TEST_WORKERS) $(TEST_DIST) -m "not slow" tests

lint: venv  ## ruff
	$(BIN)/ruff check src tests bench data_prep train.py

docs:  ## build the documentation site into site/ (mkdocs build --strict) with the venv you have; installs nothing
	@test -x $(BIN)/mkdocs || { echo "make docs: $(BIN)/mkdocs not found; run 'make venv' first (it installs the docs extra from the package index)" >&2; exit 1; }
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

bench: venv  ## the benchmarks (project vs naive way, one run each)
	$(BIN)/python bench/bench_scoring.py
	$(BIN)/python bench/bench_meta_eval.py
	$(BIN)/python bench/bench_data_prep.py

clean:  ## remove the venv and caches (keeps checkpoints/)
	rm -rf $(VENV) .pytest_cache .ruff_cache site
