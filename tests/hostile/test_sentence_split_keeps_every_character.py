"""Rule: a sentence split never drops text: the sentences, put back together, are the text (whitespace aside).
pysbd (clean=False) loses a trailing run of punctuation after a sentence ('Done. ?!' -> ['Done.']) and other
pieces, and whatever splits a text (the shuffle set's --splitter pysbd, scoring's re-split with the card's
splitter, the sentences proxy) went on with the shorter text. Controls: texts pysbd splits whole keep its split."""

from __future__ import annotations

import json
import re

import datasets
import pytest

from learned_metrics.data.shuffle_set import build_shuffle_set
from learned_metrics.text.sentences import get_splitter, split_pysbd

LOSSY = ["He won the race. Done. ?!", "It rained all day. Then it stopped. ?!",
         "First part. - * ?! ] \n ' Hello No. \n . ? ?!", "?!No. “ U.S. \" \n a 1. ?!"]
WHOLE = ["Hello world. This is Mr. Smith. He lives in the U.S.A. and works at 3.5 p.m.",
         "First line without period\nSecond line here. Third one!", "He said \"Stop.\" Then he left. Done."]


def _bare(text: str) -> str:
    return re.sub(r"\s+", "", text)


@pytest.mark.parametrize("text", LOSSY + WHOLE)
def test_pysbd_sentences_hold_the_whole_text(text):
    sentences = get_splitter("pysbd")(text)
    assert _bare("".join(sentences)) == _bare(text), sentences
    assert all(s == s.strip() and s for s in sentences)


@pytest.mark.parametrize("text", WHOLE)
def test_control_a_text_pysbd_keeps_whole_is_split_as_pysbd_splits_it(text):
    import pysbd

    assert split_pysbd(text) == [s.strip() for s in pysbd.Segmenter(language="en", clean=False).segment(text)]


@pytest.mark.parametrize("lossy", [True, False], ids=["lossy", "control"])
def test_shuffle_set_originals_hold_the_whole_document(tmp_path, monkeypatch, lossy):
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "cache"))
    texts = [f"Story {i} begins here. It goes on for a while. It ends. {'?!' if lossy else ''}" for i in range(20)]
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps({"id": f"d{i}", "text": t}) + "\n" for i, t in enumerate(texts)))
    build_shuffle_set(f"jsonl:{path}", tmp_path / "out", splitter="pysbd", seed=0, val_fraction=0.25,
                      test_fraction=0.25)
    originals = {row["doc_id"]: row["text"] for split in datasets.load_from_disk(str(tmp_path / "out")).values()
                 for row in split if row["label"] == 1}
    assert len(originals) == 20
    assert all(_bare(originals[f"d{i}"]) == _bare(t) for i, t in enumerate(texts))
