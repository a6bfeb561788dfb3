"""Shuffle-set data prep: split hygiene, negatives, determinism, sources, bad input."""

from __future__ import annotations

import itertools
import json
import os
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

import datasets
import pytest
import scipy.stats

from learned_metrics.cli.prep import shuffle_set_script
from learned_metrics.data.demo import coherent_document, write_coherence_documents
from learned_metrics.data.shuffle import distinct_orderings, document_rng, multiset_permutations, shuffled_negatives
from learned_metrics.data.shuffle_set import build_shuffle_set

ROOT = Path(__file__).resolve().parents[2]


def _docs_file(tmp_path: Path, extra: list[dict] | None = None, n: int = 60) -> Path:
    path = write_coherence_documents(tmp_path / "docs.jsonl", n, seed=1)
    with path.open("a") as handle:
        for row in extra or []:
            handle.write(json.dumps(row) + "\n")
    return path


def _load(out: Path) -> datasets.DatasetDict:
    return datasets.load_from_disk(str(out))


def test_negatives_differ_from_original_even_with_repeated_sentences():
    sentences = ["A.", "A.", "B."]  # 6 permutations, only 3 distinct texts
    negatives = shuffled_negatives(sentences, 10, random.Random(0), "\n")
    assert sorted(negatives) == sorted({"A.\nB.\nA.", "B.\nA.\nA."})
    assert shuffled_negatives(["A.", "A."], 3, random.Random(0), "\n") == []


def test_negatives_differ_from_the_original_and_from_avoided_texts_whitespace_aside():
    """A shuffle differing from the original only in whitespace is the original (the split rule compares texts so);
    ``avoid`` (another document's original) is never drawn. Control: without them every ordering is drawn."""
    assert shuffled_negatives(["A  b.", "A b."], 5, random.Random(0), "\n") == []
    assert sorted(shuffled_negatives(["A.", "B.", "C."], 9, random.Random(0), " ", {"B. A. C."})) == [
        "A. C. B.", "B. C. A.", "C. A. B.", "C. B. A."]
    assert len(shuffled_negatives(["A.", "B.", "C."], 9, random.Random(0), " ")) == 5


def test_negatives_are_distinct_for_long_documents():
    sentences = [f"Sentence {i}." for i in range(12)]
    negatives = shuffled_negatives(sentences, 20, document_rng(0, "d"), " ")
    assert len(negatives) == 20 == len(set(negatives))
    assert " ".join(sentences) not in negatives


@pytest.mark.parametrize(
    "sentences", [["A.", "B.", "C."], ["A.", "A.", "B.", "B."], ["A."] * 11 + ["B."], list("ABCDEFG")]
)
def test_distinct_orderings_are_counted_and_listed_exactly(sentences):
    distinct = set(itertools.permutations(sentences)) if len(sentences) <= 8 else None
    listed = [tuple(order) for order in multiset_permutations(sentences)]
    assert len(listed) == len(set(listed)) == distinct_orderings(sentences)
    if distinct is not None:
        assert set(listed) == distinct


def test_negatives_are_uniform_over_distinct_texts():
    sentences = ["A.", "A.", "B.", "C."]  # 12 distinct texts, 11 negatives: sampled by rejection
    counts = Counter(shuffled_negatives(sentences, 1, document_rng(0, str(i)), " ")[0] for i in range(5500))
    assert len(counts) == 11 and " ".join(sentences) not in counts
    assert scipy.stats.chisquare(list(counts.values())).pvalue > 0.001


def test_few_orderings_of_many_sentences_are_all_found():
    sentences = ["Same."] * 11 + ["Other."]  # 12! permutations, 12 distinct texts
    negatives = shuffled_negatives(sentences, 20, random.Random(0), " ")
    assert len(negatives) == 11 == len(set(negatives))


def test_split_by_document_and_rows(tmp_path):
    extra = [{"id": "rep", "sentences": ["Same.", "Same.", "Other."]}]
    out = tmp_path / "set"
    report = build_shuffle_set(f"jsonl:{_docs_file(tmp_path, extra)}", out, shuffles_per_doc=2, seed=3)
    dd = _load(out)
    assert set(dd) == {"train", "validation", "test"}
    ids = {name: set(split["doc_id"]) for name, split in dd.items()}
    assert not (ids["train"] & ids["validation"] or ids["train"] & ids["test"] or ids["validation"] & ids["test"])
    for split in dd.values():
        by_doc: dict[str, dict[int, list[str]]] = {}
        for row in split:
            by_doc.setdefault(row["doc_id"], {}).setdefault(row["label"], []).append(row["text"])
        for doc in by_doc.values():
            (original,) = doc[1]
            assert 1 <= len(doc[0]) <= 2 and original not in doc[0] and len(set(doc[0])) == len(doc[0])
    assert dd["train"].features["label"].names == ["incoherent", "coherent"]
    assert report["documents_read"] == 61
    assert report["rows"]["train"]["total"] == len(dd["train"])
    assert json.loads((out / "report.json").read_text()) == report


def test_single_sentence_documents_skipped_and_reported(tmp_path):
    extra = [{"id": f"one-{i}", "sentences": ["Only one sentence."]} for i in range(5)]
    extra.append({"id": "dup", "sentences": ["Twice.", "Twice."]})
    report = build_shuffle_set(f"jsonl:{_docs_file(tmp_path, extra)}", tmp_path / "set")
    assert report["skipped_fewer_than_2_distinct_sentences"]["total"] == 6
    texts = [t for split in _load(tmp_path / "set").values() for t in split["text"]]
    assert "Only one sentence." not in texts and "Twice.\nTwice." not in texts


def test_deterministic_by_seed(tmp_path):
    source = f"jsonl:{_docs_file(tmp_path)}"
    build_shuffle_set(source, tmp_path / "a", seed=5)
    build_shuffle_set(source, tmp_path / "b", seed=5)
    build_shuffle_set(source, tmp_path / "c", seed=6)
    a, b, c = (_load(tmp_path / x) for x in "abc")
    for split in a:
        assert a[split].to_list() == b[split].to_list()
    assert a["train"].to_list() != c["train"].to_list()


def test_text_field_with_pysbd_and_joiner(tmp_path):
    path = tmp_path / "docs.jsonl"
    path.write_text(
        "\n".join(
            json.dumps({"id": str(i), "text": f"Dr. Smith arrived. He sat down. Then he left at {i}."})
            for i in range(10)  # distinct texts: a text in two splits is dropped (test_duplicates_in_one_source...)
        )
    )
    build_shuffle_set(
        f"jsonl:{path}", tmp_path / "set", splitter="pysbd", joiner=" ", val_fraction=0.2, test_fraction=0.2
    )
    originals = [r["text"] for s in _load(tmp_path / "set").values() for r in s if r["label"] == 1]
    assert sorted(originals) == [f"Dr. Smith arrived. He sat down. Then he left at {i}." for i in range(10)]


def test_txtdir_source(tmp_path):
    folder = tmp_path / "wsj"
    rng = random.Random(0)
    for i in range(12):
        sub = folder / f"{i // 6:02d}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"wsj_{i:04d}.txt").write_text("\n".join(coherent_document(rng)) + "\n")
    report = build_shuffle_set(f"txtdir:{folder}", tmp_path / "set", shuffles_per_doc=20, seed=0)
    dd = _load(tmp_path / "set")
    assert report["documents_read"] == 12
    assert "00/wsj_0000" in set(dd["train"]["doc_id"]) | set(dd["validation"]["doc_id"]) | set(dd["test"]["doc_id"])
    assert report["rows"]["train"]["incoherent"] > 5 * report["rows"]["train"]["coherent"]


def test_cnn_dailymail_through_local_stand_in(tmp_path, monkeypatch):
    """The hub path runs the real code; only `datasets.load_dataset` is replaced by local data."""
    calls = []
    rng = random.Random(0)

    def fake_load_dataset(name, config=None, **kwargs):
        calls.append((name, config))

        def split(n):
            return datasets.Dataset.from_dict(
                {
                    "article": ["..."] * n,
                    "highlights": ["\n".join(coherent_document(rng)) for _ in range(n)],
                    "id": [f"{rng.getrandbits(40):x}" for _ in range(n)],
                }
            )

        return datasets.DatasetDict({"train": split(20), "validation": split(5), "test": split(5)})

    monkeypatch.setattr(datasets, "load_dataset", fake_load_dataset)
    report = build_shuffle_set("cnn_dailymail", tmp_path / "set")
    assert calls == [("abisee/cnn_dailymail", "3.0.0")]
    assert report["documents_per_split"] == {"train": 20, "validation": 5, "test": 5}
    assert report["rows"]["validation"] == {"incoherent": 5, "coherent": 5, "total": 10}


def test_cnn_dailymail_unreachable_is_one_line(tmp_path, monkeypatch, capsys):
    def offline(*args, **kwargs):
        raise ConnectionError("Couldn't reach the Hugging Face Hub\nmore lines")

    monkeypatch.setattr(datasets, "load_dataset", offline)
    code = shuffle_set_script(["--source", "cnn_dailymail", "--output", str(tmp_path / "o")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "abisee/cnn_dailymail" in err


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"id": "a", "sentences": ["A.", "B."]}\n{"id": "b", "title": "x"}\n', ["row 2", "sentences"]),
        ('{"id": "a", "text": "   "}\n', ["row 1", "field 'text'", "empty"]),
        ("", ["empty"]),
        ('{"id": "a", "sentences": ["A.", "B."]}\n{"id": "b", "sentences": [\n', ["row 2", "invalid JSON"]),
        ('{"id": "a", "sentences": ["A.", "B."]}\n{"id": "a", "sentences": ["C.", "D."]}\n', ["row 2", "duplicate id"]),
    ],
    ids=["missing-field", "empty-text", "empty-file", "broken-json", "duplicate-id"],
)
def test_bad_input_one_line_error_and_no_output(tmp_path, capsys, content, expected):
    path = tmp_path / "docs.jsonl"
    path.write_text(content)
    out = tmp_path / "out"
    code = shuffle_set_script(["--source", f"jsonl:{path}", "--output", str(out)])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1 and str(path) in err
    for part in expected:
        assert part in err
    assert not out.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".out")]


def test_bad_encoding_in_txtdir(tmp_path, capsys):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "bad.txt").write_bytes("Caf\xe9 au lait.\nSecond.".encode("latin-1"))
    code = shuffle_set_script(["--source", f"txtdir:{folder}", "--output", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2 and "bad.txt" in err and "UTF-8" in err


@pytest.mark.slow
def test_unknown_source_via_script(tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "data_prep" / "build_shuffle_set.py"),
            "--source",
            "wikipedia",
            "--output",
            str(tmp_path / "o"),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "unknown source 'wikipedia'" in proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "o").exists()


@pytest.mark.parametrize("form", ["jsonl", "txtdir", "folder"])
def test_documents_are_split_once_and_read_again_when_a_file_changes(tmp_path, monkeypatch, form):
    """Sentence splitting is the slow part of a build (pysbd: minutes on a large corpus): the split documents are
    kept in the datasets cache, keyed by the files' path and contents (SHA-256) and by the reading settings, so
    a rebuild with another --seed splits nothing and gives what a build without the cache gives. An edited file is
    read again (no stale documents); another splitter is another entry."""
    import learned_metrics.data.shuffle_set as shuffle_set

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "cache"))
    calls = Counter()
    real = shuffle_set.get_splitter

    def counting(name):
        split = real(name)
        return lambda text: calls.update([name]) or split(text)

    monkeypatch.setattr(shuffle_set, "get_splitter", counting)
    rng = random.Random(1)
    texts = ["\n".join(coherent_document(rng)) for _ in range(12)]
    if form == "txtdir":
        for i, text in enumerate(texts):
            (tmp_path / "src").mkdir(exist_ok=True)
            (tmp_path / "src" / f"d{i:02d}.txt").write_text(text)
        source, edited = f"txtdir:{tmp_path / 'src'}", tmp_path / "src" / "d00.txt"
    else:
        folder = tmp_path / "src"
        folder.mkdir()
        edited = folder / ("train.jsonl" if form == "folder" else "docs.jsonl")
        edited.write_text("".join(json.dumps({"id": str(i), "text": t}) + "\n" for i, t in enumerate(texts)))
        source = str(folder) if form == "folder" else f"jsonl:{edited}"

    first = build_shuffle_set(source, tmp_path / "a", seed=0)
    assert calls["newline"] == 12
    second = build_shuffle_set(source, tmp_path / "b", seed=1)
    assert calls["newline"] == 12  # nothing split again
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "empty-cache"))
    build_shuffle_set(source, tmp_path / "c", seed=1)  # control: the same build without the cache
    assert calls["newline"] == 24
    b, c = _load(tmp_path / "b"), _load(tmp_path / "c")
    assert {name: split.to_list() for name, split in b.items()} == {name: split.to_list() for name, split in c.items()}
    assert first["documents_read"] == second["documents_read"] == 12

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "cache"))
    lines = edited.read_text().splitlines()
    edited.write_text("\n".join(lines + ([json.dumps({"id": "new", "text": "One.\nTwo.\nThree."})] if form != "txtdir"
                                         else ["A new last sentence."])) + "\n")
    build_shuffle_set(source, tmp_path / "d", seed=0)
    assert calls["newline"] > 24  # the edited file is read again
    texts_d = [row["text"] for split in _load(tmp_path / "d").values() for row in split if row["label"] == 1]
    assert any("A new last sentence." in t or t == "One.\nTwo.\nThree." for t in texts_d)
    build_shuffle_set(source, tmp_path / "e", seed=0, splitter="pysbd")
    assert calls["pysbd"] > 0  # another splitter: another entry

    # an edit that keeps the size and the modification time (cp -p, rsync -a, touch -r): read again too
    stat, before = edited.stat(), edited.read_text()
    edited.write_text(before.replace("A new last sentence.", "A NEW last sentence.").replace("One.", "ONE."))
    os.utime(edited, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert edited.stat().st_size == stat.st_size and edited.stat().st_mtime_ns == stat.st_mtime_ns
    build_shuffle_set(source, tmp_path / "g", seed=0)
    texts_g = [row["text"] for split in _load(tmp_path / "g").values() for row in split if row["label"] == 1]
    assert any("A NEW last sentence." in t or t == "ONE.\nTwo.\nThree." for t in texts_g)


def test_a_cached_build_leaves_nothing_derived_in_the_cache_and_sees_code_and_name_changes(tmp_path, monkeypatch):
    """Review findings: a hit is copied into the build's scratch folder, so the shuffling ``map`` caches its rows
    there (they went into the cache entry, where a rebuild after a change of the shuffling code returned the old
    rows, and every seed left a copy of the set); a renamed symlink in a txtdir is another entry (its name is the
    document id, which seeds its shuffles). Controls: the same builds without the cache."""
    import learned_metrics.data.shuffle_set as shuffle_set

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "cache"))
    source = f"jsonl:{_docs_file(tmp_path)}"
    build_shuffle_set(source, tmp_path / "a", seed=0)
    entries = list((tmp_path / "cache" / "learned_metrics_documents").iterdir())
    before = sorted(p.name for p in entries[0].rglob("*"))
    build_shuffle_set(source, tmp_path / "b", seed=1)
    build_shuffle_set(source, tmp_path / "c", seed=0)
    assert sorted(p.name for p in entries[0].rglob("*")) == before  # nothing derived written into the entry
    real = shuffle_set.shuffled_negatives
    monkeypatch.setattr(shuffle_set, "shuffled_negatives", lambda *a: [t.upper() for t in real(*a)])
    build_shuffle_set(source, tmp_path / "d", seed=0)
    incoherent = [r["text"] for split in _load(tmp_path / "d").values() for r in split if r["label"] == 0]
    assert incoherent and all(text == text.upper() for text in incoherent)  # the changed code ran

    corpus = tmp_path / "corpus"
    (corpus / "store").mkdir(parents=True)
    (corpus / "store" / "s.text").write_text("One.\nTwo.\nThree.\n")  # not .txt: only the link is a document
    (corpus / "alpha.txt").symlink_to(corpus / "store" / "s.text")
    (corpus / "other.txt").write_text("Four.\nFive.\nSix.\n")
    build_shuffle_set(f"txtdir:{corpus}", tmp_path / "e", val_fraction=0.5, test_fraction=0.0, seed=0)
    (corpus / "alpha.txt").rename(corpus / "beta.txt")
    build_shuffle_set(f"txtdir:{corpus}", tmp_path / "f", val_fraction=0.5, test_fraction=0.0, seed=0)
    ids = {i for split in _load(tmp_path / "f").values() for i in split["doc_id"]}
    assert ids == {"beta", "other"}


@pytest.mark.parametrize("form", ["txtdir", "folder"])
def test_a_file_name_that_is_not_utf8_becomes_an_id_written_as_every_output_writes_it(tmp_path, monkeypatch, form):
    """A document id taken from a file name (a txtdir's file, a folder's file as the tag of its rows) that is not
    UTF-8 crashed the Arrow writer with a traceback; it is written as docs/safety.md says names are (\\xNN).
    Control: the UTF-8 names beside it are unchanged."""
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "cache"))
    folder = tmp_path / "src"
    folder.mkdir()
    odd = os.fsdecode(os.fsencode(str(folder)) + b"/\xff-doc")
    if form == "txtdir":
        for name in (odd, str(folder / "b"), str(folder / "c")):
            Path(name + ".txt").write_text("One.\nTwo.\nThree.\n" if name != odd else "Four.\nFive.\nSix.\n")
        source, expected = f"txtdir:{folder}", {"\\xff-doc", "b", "c"}
    else:
        for k, name in enumerate((odd, str(folder / "b"))):
            Path(name + ".jsonl").write_text("".join(json.dumps({"sentences": ["A.", "B.", f"C{k}{i}."]}) + "\n"
                                                     for i in range(3)))  # ids: FILE:row-N
        source, expected = str(folder), {f"{n}.jsonl:row-{i}" for n in ("\\xff-doc", "b") for i in range(1, 4)}
    build_shuffle_set(source, tmp_path / "out", val_fraction=0.34, test_fraction=0.0, seed=0)
    ids = {i for split in _load(tmp_path / "out").values() for i in split["doc_id"]}
    assert ids == expected


# ------------------------------------------- documents in two splits ---


def _split_files(root: Path, shared: int) -> tuple[list[list[str]], list[list[str]]]:
    """train.jsonl (30 documents) and dev.jsonl (10): ``shared`` of dev's are train's texts, spaced differently."""
    rng = random.Random(7)
    train = [coherent_document(rng) for _ in range(30)]
    dev = [[f" {s}  " for s in doc] for doc in train[:shared]] + [coherent_document(rng) for _ in range(10 - shared)]
    root.mkdir()
    for name, docs in (("train", train), ("dev", dev)):
        (root / f"{name}.jsonl").write_text("".join(json.dumps({"id": f"{name}-{i}", "sentences": d}) + "\n"
                                                    for i, d in enumerate(docs)))
    return train, dev


def _coherent_texts(out: Path) -> dict[str, list[str]]:
    dd = _load(out)
    return {name: [row["text"] for row in split if row["label"] == 1] for name, split in dd.items()}


def test_documents_shared_by_named_splits_are_refused_in_one_line(tmp_path, capsys):
    root = tmp_path / "corpus"
    _split_files(root, shared=10)
    out = tmp_path / "out"
    code = shuffle_set_script(["--source", str(root), "--output", str(out)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    assert str(root) in err and "10 document(s)" in err and "train" in err and "validation" in err, err
    assert "remove" in err and not out.exists()


def test_control_named_splits_without_shared_documents_build(tmp_path):
    root = tmp_path / "corpus"
    _split_files(root, shared=0)
    report = build_shuffle_set(str(root), tmp_path / "out")
    assert report["splits_from"] == "names" and report["documents_per_split"] == {"train": 30, "validation": 10}
    assert report.get("dropped_shared_documents", {}).get("total", 0) == 0
    texts = _coherent_texts(tmp_path / "out")
    assert not set(texts["train"]) & set(texts["validation"])


@pytest.mark.parametrize("copies", [5, 0], ids=["duplicates", "control"])
def test_duplicates_in_one_source_never_sit_in_two_seeded_splits(tmp_path, copies):
    """No split named: the seed draws the splits, so a document in two can only be a duplicate in the source; the
    copies are dropped from the lower split (train < validation < test) and counted in report.json."""
    rng = random.Random(3)
    docs = [coherent_document(rng) for _ in range(40)]
    rows = [{"id": f"d{i}", "sentences": d} for i, d in enumerate(docs)]
    rows += [{"id": f"copy{i}-{k}", "sentences": docs[i]} for i in range(8) for k in range(copies)]
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    report = build_shuffle_set(f"jsonl:{path}", tmp_path / "out", seed=0, val_fraction=0.3, test_fraction=0.3)
    texts = _coherent_texts(tmp_path / "out")
    where = Counter(text for name in texts for text in set(texts[name]))
    assert max(where.values()) == 1  # no text in two splits
    dropped = report.get("dropped_shared_documents", {}).get("total", 0)
    assert (dropped > 0) == (copies > 0)
    assert report["documents_read"] == len(rows)  # every document read, the copies dropped among them
    assert sum(len(v) for v in texts.values()) + dropped == report["documents_read"]
