"""Rule: in a shuffle set a text sits in one split and under one label. A document whose sentences are another
document's in another order is the same document for the split rule: its original is one of the other's shuffles
(with two sentences, *the* shuffle), so with the two in train and test the test set's original was trained on as
incoherent. Within one split, no document's shuffle is another document's original. Every source (a file, a
folder of named splits, disk:, hf:) goes through the same check; controls: the same corpora without the reordered
copy build as before."""

from __future__ import annotations

import json
import random
from collections import defaultdict
from pathlib import Path

import datasets
import pytest

from learned_metrics.cli.prep import shuffle_set_script
from learned_metrics.data.common import normalised
from learned_metrics.data.demo import coherent_document
from learned_metrics.data.shuffle_set import build_shuffle_set


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "cache"))


def _docs(n: int = 40, seed: int = 5) -> list[list[str]]:
    rng = random.Random(seed)
    return [coherent_document(rng)[:3] for _ in range(n)]


def _write(path: Path, docs: list[list[str]], prefix: str = "d") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"id": f"{prefix}{i}", "sentences": d}) + "\n" for i, d in enumerate(docs)))
    return path


def _where(out: Path) -> dict[str, set[tuple[str, int]]]:
    """Each text (whitespace-normalised) -> the (split, label) places it has in the built set."""
    places = defaultdict(set)
    for name, split in datasets.load_from_disk(str(out)).items():
        for row in split:
            places[normalised(row["text"])].add((name, row["label"]))
    return places


def _assert_one_place(out: Path) -> None:
    places = _where(out)
    in_two_splits = [t for t, p in places.items() if len({s for s, _ in p}) > 1]
    under_two_labels = [t for t, p in places.items() if len({label for _, label in p}) > 1]
    assert not in_two_splits, f"{len(in_two_splits)} text(s) in two splits, e.g. {in_two_splits[0]!r}"
    assert not under_two_labels, f"{len(under_two_labels)} text(s) under two labels, e.g. {under_two_labels[0]!r}"


@pytest.mark.parametrize("reordered", [True, False], ids=["reordered-copies", "control"])
def test_seeded_splits_hold_no_text_in_two_splits(tmp_path, reordered):
    """No split named: two-sentence documents and their reversed copies, drawn into splits by the seed."""
    docs = [d[:2] for d in _docs()]
    copies = [d[::-1] for d in docs[:20]] if reordered else []
    report = build_shuffle_set(f"jsonl:{_write(tmp_path / 'docs.jsonl', docs + copies)}", tmp_path / "out",
                               seed=0, val_fraction=0.3, test_fraction=0.3)
    _assert_one_place(tmp_path / "out")
    assert report["documents_read"] == 40 + len(copies)
    dropped = report["dropped_shared_documents"]["total"]
    assert (dropped > 0) == reordered
    assert sum(report["documents_per_split"].values()) + dropped == report["documents_read"]


@pytest.mark.parametrize("reordered", [True, False], ids=["reordered-copies", "control"])
def test_named_splits_sharing_a_reordered_document_are_refused_in_one_line(tmp_path, capsys, reordered):
    docs = _docs()
    root = tmp_path / "corpus"
    dev = [docs[0][::-1], docs[1][1:] + docs[1][:1]] if reordered else []
    _write(root / "train.jsonl", docs[:30], "t")
    _write(root / "dev.jsonl", dev + docs[30:], "v")
    code = shuffle_set_script(["--source", str(root), "--output", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip()
    if not reordered:
        assert code == 0, err
        _assert_one_place(tmp_path / "out")
        return
    assert code == 2 and len(err.splitlines()) == 1, err
    assert str(root) in err and "2 document(s) of train also in validation" in err and "'v0'" in err, err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("reordered", [True, False], ids=["reordered-copies", "control"])
def test_one_split_never_holds_a_text_under_both_labels(tmp_path, reordered):
    """Named train and dev splits: train holds two-sentence documents and, in the same split, reversed copies
    (the one shuffle of each is the other's original), and three-sentence documents with a reordered copy, which
    keep their other shuffles."""
    docs = [d[:2] for d in _docs(30)] + _docs(10, seed=6)
    root = tmp_path / "corpus"
    copies = [d[::-1] for d in docs[:10]] + [d[1:] + d[:1] for d in docs[30:]] if reordered else []
    _write(root / "train.jsonl", docs + copies, "t")
    _write(root / "dev.jsonl", _docs(10, seed=8), "v")
    report = build_shuffle_set(str(root), tmp_path / "out", seed=0, shuffles_per_doc=5)
    _assert_one_place(tmp_path / "out")
    assert report["documents_per_split"]["train"] == 40 + (20 if reordered else 0)
    # two sentences and the reversed copy in the split: no shuffle is left for either document, and it says so;
    # three sentences: 5 orderings other than the original, 4 once the copy's is left out
    assert report["rows"]["train"]["coherent"] == 40
    assert report.get("skipped_no_distinct_shuffle", {}).get("train", 0) == (20 if reordered else 0)
    assert report["rows"]["train"]["incoherent"] == (20 * 1 + 20 * 4 if reordered else 30 * 1 + 10 * 5)


@pytest.mark.parametrize("form", ["disk", "hf"])
@pytest.mark.parametrize("reordered", [True, False], ids=["reordered-copies", "control"])
def test_saved_and_hub_sets_drop_a_reordered_document_of_a_lower_split(tmp_path, monkeypatch, form, reordered):
    docs = [d[:2] for d in _docs()]
    test = [d[::-1] for d in docs[:5]] if reordered else []
    loaded = datasets.DatasetDict({
        name: datasets.Dataset.from_dict({"id": [f"{name}{i}" for i in range(len(part))], "sentences": part})
        for name, part in (("train", docs[:30]), ("validation", docs[30:35]), ("test", test + docs[35:]))})
    if form == "disk":
        loaded.save_to_disk(str(tmp_path / "saved"))
        source = f"disk:{tmp_path / 'saved'}"
    else:
        monkeypatch.setattr(datasets, "load_dataset", lambda name, config=None, **kw: loaded)
        source = "hf:someone/docs"
    if form == "disk" and reordered:  # named splits the user can edit: refused, as for files
        with pytest.raises(Exception, match="the same document in two splits"):
            build_shuffle_set(source, tmp_path / "out")
        return
    report = build_shuffle_set(source, tmp_path / "out")
    _assert_one_place(tmp_path / "out")
    assert report["dropped_shared_documents"]["total"] == (5 if reordered else 0)
