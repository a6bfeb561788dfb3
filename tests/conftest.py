"""Shared fixtures: tiny models built once per session, offline environment."""

from __future__ import annotations

import os

# Tiny models gain nothing from threads, and on a loaded 2-core machine OpenMP spin-waiting
# makes them up to 10x slower; subprocesses inherit the setting.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("WANDB_MODE", "offline")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

import contextlib  # noqa: E402
import logging  # noqa: E402
from collections.abc import Iterator  # noqa: E402

import pytest  # noqa: E402

# tiny_models (torch, transformers: about 2 s) is imported by the fixtures that build models, not here: with xdist
# the controller loads this file too, and it runs no test; it would import them before starting the workers.


@contextlib.contextmanager
def logged(level: int | str = logging.INFO, logger: str = "") -> Iterator[list[logging.LogRecord]]:
    """The records ``logger`` (and its children) emit at ``level`` or above while the block runs. pytest's logging
    plugin (``caplog``) is off (pyproject ``-p no:logging``): before and after every test phase it walks every logger
    torch, transformers and lightning create, several seconds of the fast suite."""
    records: list[logging.LogRecord] = []
    handler = logging.Handler(level)
    handler.emit = records.append
    target = logging.getLogger(logger)
    old_level = target.level
    target.addHandler(handler)
    target.setLevel(level)
    try:
        yield records
    finally:
        target.removeHandler(handler)
        target.setLevel(old_level)


def _tiny():
    import tiny_models

    return tiny_models


def pytest_collection_modifyitems(config, items):
    """Slow tests first (stable otherwise): xdist hands tests out in this order, so the long ones start while
    the thousands of short ones are left to even out the workers at the end, instead of one worker finishing a
    training run alone while the other waits."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session):
    """Hypothesis's pytest plugin imports Hypothesis in its terminal summary (over a second) in every process, the
    xdist workers and the controller, after the last test, though it only reports on Hypothesis tests. A process
    that never imported Hypothesis ran none, and where no report carries Hypothesis statistics or a failing example
    there is nothing to report: the plugin is unregistered before the summary instead of importing it."""
    import sys

    if "hypothesis" in sys.modules or session.config.getoption("hypothesis_show_statistics", default=False):
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    reports = [r for kind in (reporter.stats.values() if reporter is not None else ()) for r in kind]
    if any(key.startswith("_hypothesis_") for r in reports for key in getattr(r, "__dict__", {})):
        return
    plugin = session.config.pluginmanager.get_plugin("hypothesispytest")
    if plugin is not None:
        session.config.pluginmanager.unregister(plugin)


@pytest.fixture(scope="session")
def tiny_roberta(tmp_path_factory):
    """An untuned tiny RoBERTa encoder (2-label head with LABEL_0/LABEL_1), the CCL starting point."""
    return _tiny().build_model(tmp_path_factory.mktemp("tiny-roberta"), "roberta")


@pytest.fixture(scope="session")
def tiny_deberta_nli(tmp_path_factory):
    """A tiny DeBERTa-v2 NLI model with the DeBERTa label order (entailment=0, contradiction=2)."""
    tiny = _tiny()
    return tiny.build_model(tmp_path_factory.mktemp("tiny-deberta-nli"), "deberta", id2label=tiny.NLI_ORDER_DEBERTA)


@pytest.fixture(scope="session")
def tiny_roberta_nli(tmp_path_factory):
    """A tiny RoBERTa NLI model with the roberta-large-mnli order (contradiction=0, entailment=2)."""
    tiny = _tiny()
    return tiny.build_model(tmp_path_factory.mktemp("tiny-roberta-nli"), "roberta", id2label=tiny.NLI_ORDER_ROBERTA)


# --- data sets and Hydra composition shared by the training tests --------------------------------

from pathlib import Path  # noqa: E402

CONF_DIR = Path(__file__).resolve().parents[1] / "conf"


@pytest.fixture(scope="session")
def ccl_data_dir(tmp_path_factory):
    """A small shuffle set built by the real data-prep code from generated documents."""
    from learned_metrics.data.demo import build_coherence_demo_set

    out = tmp_path_factory.mktemp("ccl-data") / "set"
    build_coherence_demo_set(out, n_docs=80, seed=0)
    return out


@pytest.fixture(scope="session")
def nli_data_dir(tmp_path_factory):
    """A small augmented NLI set (generated triples in the ANLI layout, real augmentation)."""
    from learned_metrics.data.demo import build_nli_demo_set

    out = tmp_path_factory.mktemp("nli-data") / "set"
    build_nli_demo_set(out, sizes={"train": 20, "dev": 8, "test": 8}, seed=0)
    return out


def compose_train_config(overrides: list[str]):
    """Compose ``conf/train.yaml`` as ``python train.py OVERRIDES`` would, outside a Hydra run."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.hydra_config import HydraConfig
    from omegaconf import open_dict

    from learned_metrics.train.config import register_resolvers

    register_resolvers()
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("train", overrides=overrides, return_hydra_config=True)
    HydraConfig.instance().set_config(cfg)
    with open_dict(cfg):  # a real run hands the task its config without the `hydra` node
        del cfg["hydra"]
    return cfg


@pytest.fixture
def train_config(tmp_path):
    """Factory: compose a config whose run folder is the test's tmp dir."""

    def make(*overrides: str):
        return compose_train_config(
            [f"paths.output_dir={tmp_path / 'run'}", f"paths.checkpoints_dir={tmp_path}", *overrides]
        )

    return make


# --- scoring: exports with cards, a model whose only dropout is attention, a bare encoder -------------


@pytest.fixture(scope="session")
def coherence_export(tmp_path_factory, tiny_roberta):
    tiny = _tiny()
    base = tiny.build_model(tmp_path_factory.mktemp("ccl-base"), "roberta", id2label=tiny.COHERENCE_ORDER)
    return tiny.export_with_card(base, tmp_path_factory.mktemp("ccl") / "export", tiny.coherence_card())


@pytest.fixture(scope="session")
def nli_export(tmp_path_factory, tiny_deberta_nli):
    tiny = _tiny()
    return tiny.export_with_card(tiny_deberta_nli, tmp_path_factory.mktemp("nli") / "export", tiny.faithfulness_card())


@pytest.fixture(scope="session")
def attention_dropout_only(tmp_path_factory):
    """Hidden and classifier dropout 0, attention dropout 0.3: MC noise can only come from attention."""
    tiny = _tiny()
    return tiny.build_model(tmp_path_factory.mktemp("attn-drop"), "roberta", id2label=tiny.NLI_ORDER_ROBERTA,
                            hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.3)


@pytest.fixture(scope="session")
def bare_encoder(tmp_path_factory, tiny_roberta_nli):
    """An encoder saved with AutoModel (no classification head), labels named as NLI."""
    out = tmp_path_factory.mktemp("bare")
    from transformers import AutoConfig, AutoModel

    config = AutoConfig.from_pretrained(tiny_roberta_nli)
    AutoModel.from_config(config).save_pretrained(out)
    _tiny().copy_tokenizer(tiny_roberta_nli, out)
    return out
