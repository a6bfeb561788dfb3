"""The tokenized splits' cache key: built from what decides their content (rows, tokenizer, fields, length, label
ids), cheaply, so a second run reuses the cache and a changed setting never reads a stale one."""

from __future__ import annotations

import shutil

import pytest

from learned_metrics.train.datamodule import TextClassificationDataModule

LABELS = {"incoherent": 0, "coherent": 1}


def _set_up(path, tokenizer, label2id=LABELS, **kwargs) -> TextClassificationDataModule:
    module = TextClassificationDataModule(str(path), tokenizer, **kwargs)
    module.set_label_ids(label2id)
    module.setup()
    return module


def _column(module: TextClassificationDataModule, name: str) -> list:
    return module.splits["train"].with_format(None)[name]


def _cache_files(path) -> set:
    return {p.name for p in path.rglob("cache-*.arrow")}


@pytest.fixture
def data(ccl_data_dir, tmp_path):
    return shutil.copytree(ccl_data_dir, tmp_path / "set")


def test_second_set_up_reuses_the_tokenized_cache(data, tiny_roberta):
    first = _set_up(data, tiny_roberta)
    files = _cache_files(data)
    assert files  # a control: the first set-up wrote the cache
    second = _set_up(data, tiny_roberta)
    assert _cache_files(data) == files
    assert _column(second, "input_ids") == _column(first, "input_ids")


@pytest.mark.parametrize("change", ["max_length", "label ids", "tokenizer"])
def test_a_changed_setting_is_tokenized_anew(data, tiny_roberta, tmp_path, change):
    base = _set_up(data, tiny_roberta)
    files = _cache_files(data)
    if change == "max_length":
        other = _set_up(data, tiny_roberta, max_length=8)
        assert max(len(ids) for ids in _column(other, "input_ids")) <= 8
    elif change == "label ids":
        other = _set_up(data, tiny_roberta, label2id={"incoherent": 1, "coherent": 0})
        assert _column(other, "labels") == [1 - y for y in _column(base, "labels")]
    else:
        from transformers import AutoTokenizer

        changed = shutil.copytree(tiny_roberta, tmp_path / "changed")  # the same folder layout, one token more
        tokenizer = AutoTokenizer.from_pretrained(changed)
        tokenizer.add_tokens(["the"])
        tokenizer.save_pretrained(changed)
        other = _set_up(data, changed)
        assert _column(other, "input_ids") != _column(base, "input_ids")
    assert _cache_files(data) - files  # new cache files, not the old ones read back


def test_cache_key_follows_each_input(data, tiny_roberta):
    module = _set_up(data, tiny_roberta)
    ds = module._checked_splits()["train"]
    key = module._encoding_fingerprint(ds, ["incoherent", "coherent"])
    assert key == module._encoding_fingerprint(ds, ["incoherent", "coherent"])  # a control: stable
    assert key != module._encoding_fingerprint(ds.select(range(len(ds) - 1)), ["incoherent", "coherent"])
    assert key != module._encoding_fingerprint(ds, ["coherent", "incoherent"])
    module.text_fields = ["doc_id"]
    assert key != module._encoding_fingerprint(ds, ["incoherent", "coherent"])
