"""Datamodule: an on-demand build runs once even when several runs start at the same time."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from learned_metrics.train.datamodule import TextClassificationDataModule


def test_concurrent_prepare_data_builds_once(tmp_path):
    calls = []

    def slow_builder(output: str) -> None:
        calls.append(output)
        time.sleep(0.3)  # long enough for the other runs to arrive while the set is being built
        Path(output).mkdir()

    target = tmp_path / "data" / "set"
    modules = [TextClassificationDataModule(str(target), tokenizer="unused", builder=slow_builder) for _ in range(3)]
    threads = [threading.Thread(target=m.prepare_data) for m in modules]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert calls == [str(target)] and target.is_dir()


def test_a_set_built_from_another_builder_is_refused_not_reused(tmp_path):
    """Found before: changing data.builder's source (or a setting that changes the data) trained on the set built
    for the old one, exit 0, the card naming the new source. Controls: the same request reuses the set; a set not
    built on first use (no data_builder.json: prepared with data_prep) is taken as it is."""
    import functools

    from learned_metrics.data.demo import write_coherence_documents
    from learned_metrics.data.shuffle_set import build_shuffle_set
    from learned_metrics.errors import UserError

    first = write_coherence_documents(tmp_path / "a.jsonl", 30, seed=1)
    other = write_coherence_documents(tmp_path / "b.jsonl", 30, seed=2)
    target = tmp_path / "data" / "set"

    def module(source, **settings) -> TextClassificationDataModule:
        builder = functools.partial(build_shuffle_set, source=f"jsonl:{source}", splitter="newline", **settings)
        return TextClassificationDataModule(str(target), tokenizer="unused", builder=builder)

    built = module(first)
    built.prepare_data()
    built.check_data()
    module(first).check_data()  # control: the same builder reuses it
    for changed, words in ((module(other), "source 'jsonl:"), (module(first, seed=7), "seed 42 then, 7 now")):
        with pytest.raises(UserError, match="built by another data.builder") as caught:
            changed.check_data()
        assert words in str(caught.value) and "\n" not in str(caught.value)
        with pytest.raises(UserError):
            changed.prepare_data()
    module(first, seed=42).check_data()  # control: the default given explicitly is the same request
    # the same request on a source edited since: the set holds the old rows (was reused, exit 0)
    first.write_text(first.read_text().replace("The", "A", 1))
    with pytest.raises(UserError, match="which has changed since") as caught:
        module(first).check_data()
    assert str(first) in str(caught.value) and "\n" not in str(caught.value)
    (target / "data_builder.json").unlink()
    module(other).check_data()  # control: a set prepared otherwise (data_prep) and named by data.path: as it is


def test_a_builder_refusal_names_the_config_keys_train_py_takes(tmp_path):
    """Built on first use, a source with integer labels was refused with 'pass --label-order', a flag train.py has
    no use for; it names data.builder.label_order. Control: the key given builds the set."""
    import functools
    import json

    from learned_metrics.data.nli import build_nli
    from learned_metrics.errors import UserError

    source = tmp_path / "ints.jsonl"
    source.write_text("".join(json.dumps({"premise": f"Premise {i} here.", "hypothesis": f"Claim {i}.",
                                          "label": i % 3}) + "\n" for i in range(30)), encoding="utf-8")

    def module(**settings) -> TextClassificationDataModule:
        builder = functools.partial(build_nli, sources=[str(source)], augment=False, val_fraction=0.3, **settings)
        return TextClassificationDataModule(str(tmp_path / "set" / "nli"), tokenizer="unused",
                                            text_fields=("premise", "hypothesis"), builder=builder)

    with pytest.raises(UserError, match="data.builder.label_order") as caught:
        module().prepare_data()
    assert "--label-order" not in str(caught.value) and str(source) in str(caught.value)
    module(label_order=["entailment", "neutral", "contradiction"]).prepare_data()
    assert (tmp_path / "set" / "nli" / "dataset_dict.json").is_file()
