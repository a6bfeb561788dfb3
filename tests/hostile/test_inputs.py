"""Class 9: inputs as users really have them.

CSV files with a byte-order mark, texts made only of invisible characters, corpus folders with
symlinks, non-ASCII joiners, inputs too small to fill every split, AUC files without both classes.
Readers share ``learned_metrics.io`` (utf-8-sig) and ``learned_metrics.validate`` (``is_blank``).
"""

from __future__ import annotations

import json

import pytest

from hostile.hostile_tools import PAIRS, assert_refused, cli, digest, shuffle_set, write_jsonl

INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff \u00a0\u3164"


@pytest.mark.slow
def test_csv_with_a_byte_order_mark_is_read_by_every_reader(tiny_deberta_nli, tmp_path, capsys):
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("grounding,generation\n" + "".join(f'"{r["grounding"]}","{r["generation"]}"\n' for r in PAIRS),
                     encoding="utf-8-sig")
    result = cli(capsys, "score", "faithfulness", "--model", str(tiny_deberta_nli), "--input", str(pairs),
                 "--output", str(tmp_path / "scored.csv"))
    assert result.code == 0, result.err
    header = (tmp_path / "scored.csv").read_text(encoding="utf-8").splitlines()[0]
    assert header.startswith("grounding,generation,score")  # the BOM is not part of the first column's name
    human = tmp_path / "human.csv"
    human.write_text("doc_id,system_id,score\n" + "".join(f"d{d},s{s},{(d * 3 + s) % 4}\n" for d in range(5)
                                                           for s in range(3)), encoding="utf-8-sig")
    result = cli(capsys, "meta-eval", "correlations", "--human", str(human), "--metric", str(human),
                 "--resamples", "0")
    assert result.code == 0 and "tau_sys" in result.out, result.err


@pytest.mark.parametrize("field", ["grounding", "generation"])
def test_invisible_only_text_counts_as_empty(tiny_deberta_nli, tmp_path, field, capsys):
    rows = [*PAIRS, {**PAIRS[0], field: INVISIBLE}]
    source = write_jsonl(tmp_path / "pairs.jsonl", rows)
    result = cli(capsys, "score", "faithfulness", "--model", str(tiny_deberta_nli), "--input",
                 str(source), "--output", str(tmp_path / "out.jsonl"))
    assert_refused(result, str(source), "row 7", f"field '{field}'", "empty")


@pytest.mark.parametrize("row", [{"text": INVISIBLE}, {"sentences": [INVISIBLE, "\u200b"]}], ids=["text", "sentences"])
def test_shuffle_set_refuses_invisible_documents(tmp_path, row, capsys):
    docs = write_jsonl(tmp_path / "docs.jsonl", [{"text": "A came.\nB left.\nC slept."}] * 3 + [row])
    result = shuffle_set(capsys, "--source", f"jsonl:{docs}", "--output", str(tmp_path / "set"))
    assert_refused(result, "row 4", "empty" if "text" in row else "no non-empty sentences")


def test_txtdir_does_not_follow_links_out_of_the_corpus(tmp_path, capsys):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(20):
        (corpus / f"d{i}.txt").write_text(f"Doc {i} starts.\nIt goes on.\nIt ends {i}.\n")
    secret = tmp_path / "private" / "diary.txt"
    secret.parent.mkdir()
    secret.write_text("Dear diary.\nNot for the corpus.\n")
    (corpus / "inside.txt").symlink_to(corpus / "d0.txt")  # a link that stays inside is fine
    (corpus / "diary.txt").symlink_to(secret)
    result = shuffle_set(capsys, "--source", f"txtdir:{corpus}", "--output", str(tmp_path / "set"))
    assert_refused(result, "diary.txt", "outside the corpus folder")
    (corpus / "diary.txt").unlink()
    (corpus / "private").symlink_to(secret.parent)  # folder links are not descended into
    assert shuffle_set(capsys, "--source", f"txtdir:{corpus}", "--output", str(tmp_path / "set")).code == 0
    report = json.loads((tmp_path / "set" / "report.json").read_text())
    assert report["documents_read"] == 21


def test_non_ascii_joiner_round_trips(tmp_path, capsys):
    import datasets

    docs = write_jsonl(tmp_path / "docs.jsonl", [{"sentences": [f"Étape {i}.", "Puis la suite.", "Fin."]}
                                                 for i in range(20)])
    result = shuffle_set(capsys, "--source", f"jsonl:{docs}", "--output", str(tmp_path / "set"),
                         "--joiner", " — ")
    assert result.code == 0, result.err
    report = json.loads((tmp_path / "set" / "report.json").read_text(encoding="utf-8"))
    assert report["preprocessing"]["joiner"] == " — "
    texts = datasets.load_from_disk(str(tmp_path / "set"))["train"]["text"]
    assert any(text.startswith("Étape") and " — Puis la suite. — " in text for text in texts)


@pytest.mark.parametrize(
    ("rows", "extra", "message"),
    [([{"text": "One.\nTwo.\nThree."}], [], "split 'validation' would have no documents"),
     ([{"text": f"Only sentence {i}."} for i in range(30)], [], "split 'train' would have no rows"),
     ([{"text": f"Same {i}.\nSame {i}."} for i in range(30)], [], "has 2 or more distinct sentences")],
    ids=["one-document", "single-sentences", "repeated-sentences"],
)
def test_shuffle_set_never_writes_an_unusable_split(tmp_path, rows, extra, message, capsys):
    docs = write_jsonl(tmp_path / "docs.jsonl", rows)
    result = shuffle_set(capsys, "--source", f"jsonl:{docs}", "--output", str(tmp_path / "set"), *extra)
    assert_refused(result, message)
    assert not (tmp_path / "set").exists()


def test_shuffle_set_without_test_fraction_has_no_test_split(tmp_path, capsys):
    import datasets

    docs = write_jsonl(tmp_path / "docs.jsonl", [{"text": f"A{i}.\nB.\nC."} for i in range(20)])
    result = shuffle_set(capsys, "--source", f"jsonl:{docs}", "--output", str(tmp_path / "set"),
                         "--test-fraction", "0")
    assert result.code == 0, result.err
    assert sorted(datasets.load_from_disk(str(tmp_path / "set"))) == ["train", "validation"]


def test_auc_without_both_classes_is_an_error(tmp_path, capsys):
    rows = [{"score": i / 10, "label": 1, "corpus": c} for i in range(10) for c in ("frank", "qags_x")]
    source = write_jsonl(tmp_path / "scored.jsonl", rows)
    before = digest(tmp_path)
    result = cli(capsys, "meta-eval", "auc", "--input", str(source), "--group-field", "corpus",
                 "--json", str(tmp_path / "auc.json"))
    assert_refused(result, "no group has both labels", "20 positive and 0 negative")
    assert digest(tmp_path) == before
