"""Rule: a hidden file or folder (a name starting with ``.``: ``.ipynb_checkpoints/``, editor and OS files) in a data
folder is never data, in every command that reads a folder (io.data_files). Before: ``build_nli`` read a stale
notebook copy ``.ipynb_checkpoints/dev-checkpoint.jsonl`` as more validation rows (each dev pair twice, with other
labels) and a ``.hidden_test.jsonl`` as the test split, exit 0. Control: the same folder without them."""

from __future__ import annotations

import random
import shutil

from data.test_nli_sources import saved, triples, write_jsonl

from learned_metrics.cli import main
from learned_metrics.data.demo import coherent_document
from learned_metrics.data.nli import build_nli
from learned_metrics.data.shuffle_set import build_shuffle_set


def test_build_nli_leaves_out_hidden_files_and_folders(tmp_path):
    root = tmp_path / "mine"
    write_jsonl(root / "train.jsonl", triples(12, "a"))
    write_jsonl(root / "dev.jsonl", triples(6, "b"))
    control = build_nli(str(root), tmp_path / "control", augment=False)
    stale = [{**row, "label": "contradiction"} for row in triples(6, "b")]
    write_jsonl(root / ".ipynb_checkpoints" / "dev-checkpoint.jsonl", stale)
    write_jsonl(root / ".hidden_test.jsonl", triples(3, "h"))
    write_jsonl(root / "sub" / ".cache" / "test.jsonl", triples(3, "z"))
    report = build_nli(str(root), tmp_path / "out", augment=False)
    assert report["splits"] == control["splits"] and set(saved(tmp_path / "out")) == {"train", "validation"}
    assert report["sources"][0]["parts"] == [str(root / "dev.jsonl"), str(root / "train.jsonl")]


def test_a_text_corpus_leaves_out_hidden_files(tmp_path):
    folder = tmp_path / "wsj"
    rng = random.Random(0)
    for i in range(9):
        (folder / "00").mkdir(parents=True, exist_ok=True)
        (folder / "00" / f"wsj_{i:04d}.txt").write_text("\n".join(coherent_document(rng)) + "\n")
    (folder / ".git").mkdir()
    shutil.copy(folder / "00" / "wsj_0000.txt", folder / ".git" / "copy.txt")
    shutil.copy(folder / "00" / "wsj_0001.txt", folder / "00" / ".wsj_0001.txt")
    report = build_shuffle_set(f"txtdir:{folder}", tmp_path / "set", shuffles_per_doc=5, seed=0)
    assert report["documents_read"] == 9


def test_a_scored_folder_leaves_out_hidden_files(tmp_path, capsys):
    folder = tmp_path / "scored"
    rows = [{"grounding": f"Source {i}.", "generation": f"Claim {i}.", "label": i % 2, "score": i / 10}
            for i in range(10)]
    write_jsonl(folder / "frank.jsonl", rows)
    auc = ["meta-eval", "auc", "--input", str(folder), "--resamples", "0", "--json"]
    assert main([*auc, str(tmp_path / "a.json")]) == 0
    control = (tmp_path / "a.json").read_text()
    write_jsonl(folder / ".frank.jsonl", [{**row, "label": 1 - row["label"]} for row in rows])
    assert main([*auc, str(tmp_path / "b.json")]) == 0
    assert (tmp_path / "b.json").read_text().replace("b.json", "a.json") == control
