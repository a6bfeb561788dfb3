"""The NLI metric trained from data in a user's own layout, through the nli_own_data and nli_base_mix experiments:
the configs compose, the builder reads local stand-ins for the sources, training runs and the card records it."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pytest
from omegaconf import OmegaConf, open_dict

from data.test_nli_sources import triples, write_csv, write_jsonl
from learned_metrics.train.run import train

QUIET = ("trainer=cpu", "logger=csv", "trainer.fast_dev_run=true")


def trained(train_config, model, data_path: Path, experiment: str, **builder):
    cfg = train_config(f"experiment={experiment}", f"model.name_or_path={model}", f"data.path={data_path}", *QUIET)
    with open_dict(cfg):
        for key, value in builder.items():
            OmegaConf.update(cfg, f"data.builder.{key}", value, merge=False)
    metrics = train(cfg)
    card = json.loads((Path(cfg.paths.output_dir) / "export" / "learned_metric.json").read_text())
    report = json.loads((data_path / "report.json").read_text())
    return metrics, card, report


@pytest.mark.slow
def test_trained_from_a_csv_with_string_labels(train_config, tiny_deberta_nli, tmp_path):
    source = write_csv(tmp_path / "mine.csv", triples(40, "csv"))
    metrics, card, report = trained(train_config, tiny_deberta_nli, tmp_path / "set", "nli_own_data",
                                    sources=[str(source)])
    assert {"val/loss", "val/acc"} <= set(metrics)
    assert card["kind"] == "faithfulness" and card["augmentation"]["augment"] is True
    assert report["builder"] == "nli" and report["splits"]["train"]["per_source"] == {"mine": report["splits"][
        "train"]["rows"]}


@pytest.mark.slow
def test_trained_from_a_two_class_set(train_config, tiny_deberta_nli, tmp_path):
    rows = [{"s1": f"P {i}.", "s2": f"H {i}.", "label": ["entailment", "not_entailment"][i % 2]} for i in range(30)]
    source = write_jsonl(tmp_path / "rte.jsonl", rows)
    _, card, report = trained(train_config, tiny_deberta_nli, tmp_path / "set", "nli_own_data", sources=[str(source)],
                              premise_field="s1", hypothesis_field="s2", two_class="neutral")
    labels = {k for split in report["splits"].values() for k, n in split["per_label"].items() if n}
    assert labels == {"entailment", "neutral"} and card["kind"] == "faithfulness"


@pytest.mark.slow
def test_base_mix_composes_and_trains_on_local_stand_ins(train_config, tiny_deberta_nli, tmp_path):
    """The five hub sources of nli_base_mix replaced by local files of the same names: the mix, its per-source
    fields (WANLI's gold), the augmentation and report.json's per-source counts."""
    cfg = train_config("experiment=nli_base_mix")
    names = [s["name"] for s in cfg.data.builder.sources]
    assert names == ["mnli", "fever", "anli", "lingnli", "wanli"]
    assert all(s["location"].startswith("hf:") for s in cfg.data.builder.sources)
    stand_ins = []
    for name in names:
        rows = triples(12, name)
        if name == "wanli":
            rows = [{"premise": r["premise"], "hypothesis": r["hypothesis"], "gold": r["label"]} for r in rows]
        if name == "mnli":  # a Hub-like save_to_disk folder with split names
            split = {"train": triples(9, "mnli"), "validation_matched": triples(3, "mnliv")}
            datasets.DatasetDict({k: datasets.Dataset.from_list(v) for k, v in split.items()}).save_to_disk(
                str(tmp_path / "mnli"))
            stand_ins.append({"name": name, "location": f"disk:{tmp_path / 'mnli'}"})
            continue
        spec = {"name": name, "location": str(write_jsonl(tmp_path / f"{name}.jsonl", rows))}
        stand_ins.append({**spec, "label_field": "gold"} if name == "wanli" else spec)
    _, card, report = trained(train_config, tiny_deberta_nli, tmp_path / "set", "nli_base_mix", sources=stand_ins,
                              val_fraction=0.25)
    assert set(report["splits"]["train"]["per_source"]) == set(names)
    assert report["augmentation"]["augment"] is True and card["augmentation"]["phrase_list"]
