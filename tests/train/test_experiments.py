"""Every experiment composes and runs (fast_dev_run) with a local tiny model in place of the hub name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from omegaconf import OmegaConf
from transformers import AutoConfig

from learned_metrics.train.run import train

EXPERIMENTS = sorted(p.stem for p in (Path(__file__).resolve().parents[2] / "conf" / "experiment").glob("*.yaml"))
REAL_DEFAULTS = {
    "ccl_cnndm": "roberta-large",
    "ccl_wsj": "roberta-large",
    "nli_anli_aug": "MoritzLaurer/DeBERTa-v3-large-mnli-fever-anli-ling-wanli",
}


def test_all_experiments_found():
    expected = {
        "ccl_cnndm",
        "ccl_wsj",
        "ccl_demo",
        "nli_anli_aug",
        "nli_demo",
        "nli_anli_only",
        "nli_statements",
        "nli_append",
        "nli_phrase_subset",
    }
    assert expected <= set(EXPERIMENTS)


@pytest.mark.parametrize("name", sorted(REAL_DEFAULTS))
def test_real_defaults_stay_in_configs(train_config, name):
    cfg = train_config(f"experiment={name}")
    assert cfg.model.name_or_path == REAL_DEFAULTS[name]
    assert cfg.logger.wandb._target_ == "learned_metrics.loggers.wandb_logger"


@pytest.mark.slow
def test_paper_hyperparameters(train_config):
    ccl = train_config("experiment=ccl_cnndm")
    assert (ccl.model.lr, ccl.trainer.max_epochs, ccl.callbacks.model_checkpoint.monitor) == (2e-6, 6, "val/f1")
    nli = train_config("experiment=nli_anli_aug")
    effective = nli.data.batch_size * nli.trainer.accumulate_grad_batches
    assert (nli.model.lr, nli.model.warmup_ratio, nli.model.weight_decay, effective) == (5e-6, 0.06, 0.01, 64)
    assert nli.trainer.max_steps == 2000 and nli.callbacks.model_checkpoint.mode == "min"
    assert nli.trainer.max_steps // nli.val_every_n_steps >= 4
    assert nli.trainer.val_check_interval == nli.val_every_n_steps * nli.trainer.accumulate_grad_batches
    assert train_config("experiment=nli_phrase_subset").data.builder.phrase_subset == 5
    assert train_config("experiment=nli_append").data.builder.position == "append"
    assert train_config("experiment=nli_statements").data.builder.phrases == "statements"
    assert train_config("experiment=nli_anli_only").data.builder.augment is False


@pytest.mark.slow
@pytest.mark.parametrize("name", EXPERIMENTS)
def test_experiment_fast_dev_run(train_config, name, tiny_roberta, tiny_deberta_nli, ccl_data_dir, nli_data_dir):
    nli = name.startswith("nli")
    model = tiny_deberta_nli if nli else tiny_roberta
    cfg = train_config(
        f"experiment={name}",
        f"model.name_or_path={model}",
        f"data.path={nli_data_dir if nli else ccl_data_dir}",
        "trainer=cpu",
        "logger=csv",
        "trainer.fast_dev_run=true",
    )
    assert OmegaConf.select(cfg, "trainer.accelerator") == "cpu"
    metrics = train(cfg)
    assert {"val/loss", "val/acc", "val/f1"} <= set(metrics)
    export = Path(cfg.paths.output_dir) / "export"
    card = json.loads((export / "learned_metric.json").read_text())
    assert card["kind"] == ("faithfulness" if nli else "coherence")
    labels = set(AutoConfig.from_pretrained(export).id2label.values())
    assert labels == ({"entailment", "neutral", "contradiction"} if nli else {"incoherent", "coherent"})
    assert (export / "model.safetensors").exists() and not list(export.glob("*.bin"))
