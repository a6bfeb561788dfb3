"""Rule: a data-prep report's settings come from the build's settings object, never from a hand-made list.

A shuffle set built with ``max_docs_per_split`` (or any field that changes the data) records it in
``report["settings"]``; ANLI's ``augmentation`` block and ``settings`` block are the object's fields; a field added
to a settings class appears in the report with no other step. Controls: the keys the reports always had keep their
values.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import pytest

from learned_metrics.data import anli, shuffle_set
from learned_metrics.data.choices import AnliSettings, ShuffleSetSettings
from learned_metrics.data.demo import write_anli_layout, write_coherence_documents
from learned_metrics.settings import setting, takes


@dataclass(frozen=True)
class _MoreShuffleSettings(ShuffleSetSettings):
    added_field: int = setting(3, "a field added to the settings object", minimum=0)


@dataclass(frozen=True)
class _MoreAnliSettings(AnliSettings):
    added_field: int = setting(3, "a field added to the settings object", minimum=0)


@pytest.fixture(scope="module")
def docs(tmp_path_factory):
    return write_coherence_documents(tmp_path_factory.mktemp("docs") / "docs.jsonl", 40, seed=1)


@pytest.fixture(scope="module")
def anli_dir(tmp_path_factory):
    return write_anli_layout(tmp_path_factory.mktemp("anli") / "raw", {"train": 6, "dev": 3, "test": 3}, seed=0)


def test_shuffle_set_records_every_field_that_changes_the_data(docs, tmp_path):
    report = shuffle_set.build_shuffle_set(f"jsonl:{docs}", tmp_path / "capped", max_docs_per_split=4, seed=2)
    assert report["settings"]["max_docs_per_split"] == 4
    assert report["documents_per_split"] == {"train": 4, "validation": 4, "test": 4}
    settings = report["settings"]
    assert (settings["splitter"], settings["joiner"]) == ("newline", "\n")
    # control: the keys the report always had, with their values
    assert {k: settings[k] for k in ("shuffles_per_doc", "seed", "val_fraction", "test_fraction", "text_field",
                                     "sentences_field", "id_field")} == \
        {"shuffles_per_doc": 1, "seed": 2, "val_fraction": 0.1, "test_fraction": 0.1, "text_field": None,
         "sentences_field": None, "id_field": None}
    assert report["preprocessing"] == {"splitter": "newline", "joiner": "\n"}


def test_a_field_added_to_the_shuffle_set_settings_reaches_the_report(docs, tmp_path):
    build = takes(_MoreShuffleSettings)(inspect.unwrap(shuffle_set.build_shuffle_set))  # declared with one more
    report = build(f"jsonl:{docs}", tmp_path / "out", added_field=5)
    assert report["settings"]["added_field"] == 5


def test_anli_report_blocks_are_the_settings_object(anli_dir, tmp_path):
    report = anli.build_anli_augmented(f"jsonl:{anli_dir}", tmp_path / "out", phrase_subset=4, seed=7)
    assert report["settings"] == AnliSettings(phrase_subset=4, seed=7).to_json()
    augmentation = report["augmentation"]
    assert {k: augmentation[k] for k in ("augment", "phrases", "position", "phrase_subset", "seed")} == \
        {"augment": True, "phrases": "dialogue", "position": "prepend", "phrase_subset": 4, "seed": 7}
    assert len(augmentation["subset"]) == 4 and augmentation["phrase_list"] == augmentation["subset"]
    # control: without augmentation the phrase fields are None, as they always were
    plain = anli.build_anli_augmented(f"jsonl:{anli_dir}", tmp_path / "plain", augment=False)["augmentation"]
    assert plain == {"augment": False, "phrases": None, "position": None, "phrase_subset": None, "subset": None,
                     "phrase_list": [], "seed": 42}


def test_a_field_added_to_the_anli_settings_reaches_the_report(anli_dir, tmp_path):
    report = anli.build_anli_augmented(f"jsonl:{anli_dir}", tmp_path / "out", settings=_MoreAnliSettings(added_field=5))
    assert report["settings"]["added_field"] == 5
