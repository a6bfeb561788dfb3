"""Shuffle-set sources in a user's own layout (learned_metrics.data.shuffle_set): CSV, Parquet, folders with split
names, save_to_disk folders and a Hub set in a local datasets cache, each read by the real code offline; a file
that does not fit is one line naming the file, its fields and the option to pass, beside the fix that works."""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path

import datasets
import pandas as pd
import pytest
from omegaconf import OmegaConf, open_dict

from data.test_nli_sources import saved, write_jsonl
from learned_metrics.cli.prep import shuffle_set_script
from learned_metrics.data.demo import coherent_document
from learned_metrics.data.shuffle_set import build_shuffle_set
from learned_metrics.errors import UserError
from learned_metrics.train.run import train


def documents(n: int, tag: str, seed: int = 0) -> list[dict]:
    """``n`` generated documents: an id, the sentences, and the text (one sentence per line)."""
    rng = random.Random(f"{tag}{seed}")
    docs = [{"doc": f"{tag}-{i}", "sents": coherent_document(rng)} for i in range(n)]
    return [{**d, "body": "\n".join(d["sents"])} for d in docs]


def write_csv(path: Path, docs: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame([{"doc": d["doc"], "body": d["body"]} for d in docs]).to_csv(path, index=False)
    return path


def originals(out: Path) -> dict[str, dict[str, str]]:
    """Per split: doc_id -> the coherent text."""
    return {split: {r["doc_id"]: r["text"] for r in rows if r["label"] == 1} for split, rows in saved(out).items()}


def run_script(capsys, *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = shuffle_set_script(list(argv))
    return code, capsys.readouterr().err.strip()


# ------------------------------------------------------------- layouts ---


def test_csv_with_a_text_field_split_into_sentences(tmp_path):
    docs = documents(30, "csv")
    path = write_csv(tmp_path / "news.csv", docs)
    report = build_shuffle_set(str(path), tmp_path / "out", text_field="body", id_field="doc", seed=3)
    found = originals(tmp_path / "out")
    assert set(found) == {"train", "validation", "test"}  # no split names: the seeded document split
    assert {k: v for split in found.values() for k, v in split.items()} == {d["doc"]: d["body"] for d in docs}
    assert report["documents_read"] == 30 and report["documents_per_split"]["validation"] == 3
    again = build_shuffle_set(str(path), tmp_path / "again", text_field="body", id_field="doc", seed=3)
    assert again["documents_per_split"] == report["documents_per_split"]
    assert originals(tmp_path / "again") == found  # same seed, same split


def test_parquet_with_a_sentences_field(tmp_path):
    docs = documents(20, "pq")
    path = tmp_path / "docs.parquet"
    pd.DataFrame([{"key": d["doc"], "sents": d["sents"]} for d in docs]).to_parquet(path)
    report = build_shuffle_set(str(path), tmp_path / "out", sentences_field="sents", id_field="key", joiner=" ")
    found = {k: v for split in originals(tmp_path / "out").values() for k, v in split.items()}
    assert found == {d["doc"]: " ".join(d["sents"]) for d in docs}
    assert report["settings"]["sentences_field"] == "sents"


def test_folder_with_train_and_validation_file_names(tmp_path):
    root = tmp_path / "mine"
    write_csv(root / "train.csv", documents(12, "t"))
    write_jsonl(root / "validation.jsonl", [{"id": d["doc"], "body": d["body"]} for d in documents(4, "v")])
    report = build_shuffle_set(str(root), tmp_path / "out", text_field="body")
    assert report["documents_per_split"] == {"train": 12, "validation": 4}  # names decide; no test named, none made
    assert {k.split("-")[0] for k in originals(tmp_path / "out")["validation"]} == {"v"}
    assert report["splits_from"] == "names"


def test_a_named_train_split_without_validation_gives_a_seeded_validation_split(tmp_path):
    root = tmp_path / "mine"
    write_csv(root / "train.csv", documents(20, "t"))
    write_csv(root / "test.csv", documents(5, "x"))
    report = build_shuffle_set(str(root), tmp_path / "out", text_field="body", id_field="doc", val_fraction=0.25)
    assert report["splits_from"] == "names+seed"
    assert report["documents_per_split"] == {"train": 15, "validation": 5, "test": 5}  # test as named, not drawn
    found = originals(tmp_path / "out")
    assert {k.split("-")[0] for k in found["validation"]} == {"t"} and set(found["test"]) == {
        f"x-{i}" for i in range(5)}


def test_a_folder_mixing_named_and_unnamed_files_is_refused(tmp_path):
    root = tmp_path / "mine"
    write_csv(root / "train.csv", documents(12, "t"))
    write_csv(root / "extra.csv", documents(4, "x"))
    with pytest.raises(UserError, match=r"extra\.csv: names no split \(train, dev/validation, test\) while other "
                                        r"files of this source do; rename it"):
        build_shuffle_set(str(root), tmp_path / "out", text_field="body")
    (root / "extra.csv").rename(root / "dev.csv")  # control: every file named
    assert build_shuffle_set(str(root), tmp_path / "out", text_field="body")["documents_per_split"] == {
        "train": 12, "validation": 4}


def test_save_to_disk_folder_keeps_its_splits(tmp_path):
    def split(n, tag):
        return datasets.Dataset.from_list([{"id": d["doc"], "text": d["body"]} for d in documents(n, tag)])

    datasets.DatasetDict({"train": split(10, "a"), "validation": split(3, "b"), "test": split(3, "c")}).save_to_disk(
        str(tmp_path / "saved"))
    report = build_shuffle_set(f"disk:{tmp_path / 'saved'}", tmp_path / "out")
    assert report["documents_per_split"] == {"train": 10, "validation": 3, "test": 3}
    assert set(originals(tmp_path / "out")["test"]) == {f"c-{i}" for i in range(3)}
    plain = build_shuffle_set(str(tmp_path / "saved"), tmp_path / "plain")  # the folder itself is recognised too
    assert plain["documents_per_split"] == report["documents_per_split"]


def hub_cache(cache: Path, name: str, config: str, splits: dict[str, list[dict]]) -> None:
    """A Hub data set as ``datasets`` leaves it in its cache after a download (``NAMESPACE___NAME/CONFIG/VERSION/
    HASH`` with ``dataset_info.json`` and ``NAME-SPLIT.arrow``), built offline from local JSONL files."""
    files = {split: str(write_jsonl(cache.parent / "raw" / f"{split}.jsonl", rows)) for split, rows in splits.items()}
    builder = datasets.load_dataset_builder("json", data_files=files, cache_dir=str(cache.parent / "built"))
    builder.download_and_prepare()
    built = Path(builder.cache_dir)
    namespace, short = name.split("/")
    target = cache / f"{namespace}___{short}" / config / built.parent.name / built.name
    shutil.copytree(built, target)
    info = json.loads((target / "dataset_info.json").read_text())
    info.update(config_name=config, dataset_name=short, builder_name=short)
    (target / "dataset_info.json").write_text(json.dumps(info))
    for arrow in target.glob("json-*.arrow"):
        arrow.rename(target / arrow.name.replace("json-", f"{short}-", 1))


def test_hub_set_through_the_local_cache_with_a_text_field(tmp_path, monkeypatch):
    def rows(n, tag):
        return [{"article": "...", "highlights": d["body"], "id": d["doc"]} for d in documents(n, tag)]

    hub_cache(tmp_path / "cache", "abisee/cnn_dailymail", "3.0.0", {"train": rows(10, "h"), "validation": rows(4, "hv"),
                                                             "test": rows(4, "ht")})
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "cache")
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    report = build_shuffle_set("hf:abisee/cnn_dailymail:3.0.0", tmp_path / "out", text_field="highlights")
    assert report["documents_per_split"] == {"train": 10, "validation": 4, "test": 4}
    assert originals(tmp_path / "out")["validation"] == {d["doc"]: d["body"] for d in documents(4, "hv")}
    assert report["source"] == "hf:abisee/cnn_dailymail:3.0.0"


def test_hub_set_missing_from_the_cache_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "empty-cache")
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    code, err = run_script(capsys, "--source", "hf:someone/absent", "--output", str(tmp_path / "out"))
    assert code == 2 and len(err.splitlines()) == 1
    assert "cannot load the Hugging Face dataset 'someone/absent'" in err and "disk:DIR" in err


# ------------------------------------------------------------- refusals ---


def missing_field(tmp: Path):
    path = write_csv(tmp / "news.csv", documents(20, "m"))
    return str(path), f"{path}: no field 'text' or 'sentences' (fields: doc, body); pass --text-field NAME or " \
        "--sentences-field NAME", ["--text-field", "body"]


def missing_named_field(tmp: Path):
    path = write_csv(tmp / "news.csv", documents(20, "m"))
    return str(path), f"{path}: no field 'article' (fields: doc, body); pass --text-field NAME", \
        ["--text-field", "body", "SWAP"]


def missing_id_field(tmp: Path):
    path = write_csv(tmp / "news.csv", documents(20, "m"))
    return str(path), f"{path}: no field 'key' (fields: doc, body); pass --id-field NAME", \
        ["--text-field", "body", "--id-field", "doc", "SWAP"]


def empty_file(tmp: Path):
    tmp.mkdir(parents=True)
    path = tmp / "empty.csv"
    path.write_text("")
    full = write_csv(tmp / "full.csv", documents(20, "f"))
    return str(path), f"{path}: file is empty (no data rows)", ["--source", str(full), "--text-field", "body", "SOURCE"]


def sentences_not_a_list(tmp: Path):
    tmp.mkdir(parents=True)
    rows = [{"id": d["doc"], "sents": d["sents"]} for d in documents(20, "s")]
    rows[3]["sents"] = 7
    path = write_jsonl(tmp / "docs.jsonl", rows)
    fixed = write_jsonl(tmp / "fixed.jsonl", [{"id": d["doc"], "sents": d["sents"]} for d in documents(20, "s")])
    return str(path), f"{path}, row 4, field 'sents': expected a list of strings", \
        ["--source", str(fixed), "--sentences-field", "sents", "SOURCE"]


LAYOUTS = {missing_field: [], missing_named_field: ["--text-field", "article"], missing_id_field: [
    "--text-field", "body", "--id-field", "key"], empty_file: [], sentences_not_a_list: ["--sentences-field", "sents"]}


@pytest.mark.parametrize("layout", list(LAYOUTS), ids=lambda f: f.__name__)
def test_a_layout_that_does_not_fit_is_one_line_and_the_fix_works(tmp_path, capsys, layout):
    source, line, fix = layout(tmp_path / "in")
    code, err = run_script(capsys, "--source", source, *LAYOUTS[layout], "--output", str(tmp_path / "out"))
    assert code == 2 and err == f"build_shuffle_set.py: error: {line}"
    assert not (tmp_path / "out").exists() and not [p for p in os.listdir(tmp_path) if p.startswith(".")]
    if fix[-1] == "SOURCE":  # control: the fixed file
        fixed = fix[:-1]
    elif fix[-1] == "SWAP":  # control: the option the line names, given the field the file has
        fixed = ["--source", source, *fix[:-1]]
    else:
        fixed = ["--source", source, *LAYOUTS[layout], *fix]
    code, err = run_script(capsys, *fixed, "--output", str(tmp_path / "out"))
    assert code == 0, err
    assert (tmp_path / "out" / "report.json").is_file()


def test_text_and_sentences_fields_together_are_refused(tmp_path, capsys):
    path = write_csv(tmp_path / "news.csv", documents(20, "b"))
    code, err = run_script(capsys, "--source", str(path), "--text-field", "body", "--sentences-field", "body",
                           "--output", str(tmp_path / "out"))
    assert code == 2 and err.endswith("pass --text-field or --sentences-field, not both")
    code, err = run_script(capsys, "--source", str(path), "--text-field", "body", "--output", str(tmp_path / "out"))
    assert code == 0, err


def test_unknown_source_names_every_form(tmp_path, capsys):
    code, err = run_script(capsys, "--source", str(tmp_path / "nowhere.csv"), "--output", str(tmp_path / "out"))
    assert code == 2 and "is not a file or folder here" in err and "hf:NAME[:CONFIG]" in err and "txtdir:" in err


# ------------------------------------------------------------- training ---


@pytest.mark.slow
def test_trained_from_a_shuffle_set_built_from_a_csv(train_config, tiny_roberta, tmp_path):
    source = write_csv(tmp_path / "news.csv", documents(40, "train"))
    cfg = train_config("experiment=ccl_cnndm", "trainer=cpu", "logger=csv", "trainer.fast_dev_run=true",
                       f"model.name_or_path={tiny_roberta}", f"data.path={tmp_path / 'set'}")
    with open_dict(cfg):
        OmegaConf.update(cfg, "data.builder.source", str(source), merge=False)
        OmegaConf.update(cfg, "data.builder.text_field", "body", merge=False)
        OmegaConf.update(cfg, "data.builder.id_field", "doc", merge=False)
    metrics = train(cfg)
    assert {"val/loss", "val/f1"} <= set(metrics)
    report = json.loads((tmp_path / "set" / "report.json").read_text())
    assert report["source"] == str(source) and report["settings"]["text_field"] == "body"
    card = json.loads((Path(cfg.paths.output_dir) / "export" / "learned_metric.json").read_text())
    assert card["kind"] == "coherence"
