"""Any NLI data as a training set (learned_metrics.data.nli): layouts, labels, splits, mixes, refusals.

Every source is written here in the layout a user would bring (CSV, JSONL, Parquet, a folder with split names, a
save_to_disk folder, a Hub set through a stand-in for the cache), so the real reading code runs offline.
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import datasets
import pandas as pd
import pytest

from learned_metrics.cli.prep import nli_script
from learned_metrics.data.anli import DIALOGUE_PHRASES, STATEMENT_PHRASES
from learned_metrics.data.nli import build_nli
from learned_metrics.errors import UserError

LABELS = ("entailment", "neutral", "contradiction")
SPELLINGS = {"entailment": ("E", "entailment", "Entails"), "neutral": ("n", "NEUTRAL", "neutral"),
             "contradiction": ("c", "Contradiction", "contradicts")}


def triples(n: int, tag: str, start: int = 0) -> list[dict]:
    return [{"premise": f"{tag} premise number {i}.", "hypothesis": f"The {tag} hypothesis {i}.",
             "label": LABELS[i % 3]} for i in range(start, start + n)]


def write_csv(path: Path, rows: list[dict], spell: bool = True) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        for i, row in enumerate(rows):
            writer.writerow({**row, "label": SPELLINGS[row["label"]][i % 3] if spell else row["label"]})
    return path


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def saved(out: Path) -> dict[str, list[dict]]:
    return {split: ds.to_list() for split, ds in datasets.load_from_disk(str(out)).items()}


def run_script(capsys, *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = nli_script(list(argv))
    return code, capsys.readouterr().err.strip()


# ------------------------------------------------------------- layouts ---


def test_csv_with_spelled_string_labels_splits_by_premise(tmp_path):
    rows = triples(60, "csv")
    report = build_nli(str(write_csv(tmp_path / "mine.csv", rows)), tmp_path / "out", val_fraction=0.25, seed=3)
    out = saved(tmp_path / "out")
    assert set(out) == {"train", "validation"}  # no test share asked for: no test split
    originals = [r for split in out.values() for r in split if not r["augmented"]]
    by_pair = {(r["premise"], r["hypothesis"]): r["label"] for r in originals}
    assert by_pair == {(r["premise"], r["hypothesis"]): r["label"] for r in rows}  # every spelling canonical
    assert {r["source"] for r in originals} == {"mine"}
    assert 5 <= report["splits"]["validation"]["original"] <= 25
    again = build_nli(str(tmp_path / "mine.csv"), tmp_path / "again", val_fraction=0.25, seed=3)
    assert again["splits"] == report["splits"]  # seeded: same seed, same split


def test_folder_with_split_names_jsonl_and_parquet(tmp_path):
    root = tmp_path / "mine"
    write_jsonl(root / "train.jsonl", triples(12, "a"))
    pd.DataFrame(triples(6, "b")).to_parquet(root / "dev_matched.parquet")
    write_jsonl(root / "test" / "part-0.jsonl", triples(6, "c"))
    report = build_nli(str(root), tmp_path / "out", augment=False)
    assert {s: c["rows"] for s, c in report["splits"].items()} == {"train": 12, "validation": 6, "test": 6}
    assert {r["premise"].split()[0] for r in saved(tmp_path / "out")["validation"]} == {"b"}


def test_a_split_field_decides_the_split(tmp_path):
    rows = [{**r, "part": "train" if i % 2 else "dev"} for i, r in enumerate(triples(20, "s"))]
    report = build_nli(str(write_jsonl(tmp_path / "all.jsonl", rows)), tmp_path / "out", split_field="part",
                       augment=False)
    assert (report["splits"]["train"]["rows"], report["splits"]["validation"]["rows"]) == (10, 10)


def test_disk_and_hub_sources_with_class_labels(tmp_path, monkeypatch):
    features = datasets.Features({"premise": datasets.Value("string"), "hypothesis": datasets.Value("string"),
                                  "label": datasets.ClassLabel(names=["contradiction", "neutral", "entailment"])})

    def as_dict(rows, extra_unlabelled=False):
        data = {k: [r[k] for r in rows] for k in ("premise", "hypothesis")}
        data["label"] = [features["label"].str2int(r["label"]) for r in rows]
        if extra_unlabelled:
            data = {k: v + (["P?"] if k != "label" else [-1]) for k, v in data.items()}
        return datasets.Dataset.from_dict(data, features=features)

    datasets.DatasetDict({"train": as_dict(triples(9, "d")), "validation": as_dict(triples(3, "dv"))}).save_to_disk(
        str(tmp_path / "saved"))
    hub = datasets.DatasetDict({"train_r1": as_dict(triples(9, "h")), "dev_r1": as_dict(triples(3, "hv")),
                                "test_r1": as_dict(triples(3, "ht"), extra_unlabelled=True)})
    requested = []
    monkeypatch.setattr(datasets, "load_dataset", lambda name, config=None: requested.append((name, config)) or hub)
    report = build_nli([f"disk:{tmp_path / 'saved'}", "anli=hf:facebook/anli:plain"], tmp_path / "out",
                       augment=False)
    assert requested == [("facebook/anli", "plain")]
    out = saved(tmp_path / "out")
    expected = {(r["premise"], r["label"]) for r in triples(9, "d") + triples(9, "h")}
    assert {(r["premise"], r["label"]) for r in out["train"]} == expected  # ClassLabel names, not positions
    assert report["splits"]["train"]["per_source"] == {"anli": 9, "saved": 9}
    assert [s["dropped_unlabelled"] for s in report["sources"]] == [0, 1]


def test_hub_set_missing_from_the_cache_is_one_line(tmp_path, monkeypatch):
    def offline(*args, **kwargs):
        raise ConnectionError("Couldn't reach the Hub\nmore")

    monkeypatch.setattr(datasets, "load_dataset", offline)
    with pytest.raises(UserError, match=r"^cannot load the Hugging Face dataset 'org/set' .*disk:DIR") as caught:
        build_nli("hf:org/set", tmp_path / "out")
    assert "\n" not in str(caught.value) and not (tmp_path / "out").exists()


# -------------------------------------------------------- labels, mixes ---


def test_two_class_set_is_mapped_as_declared(tmp_path, capsys):
    rows = [{"sentence1": f"P {i}.", "sentence2": f"H {i}.", "label": i % 2} for i in range(20)]
    path = write_jsonl(tmp_path / "rte.jsonl", rows)
    base = ["--source", str(path), "--premise-field", "sentence1", "--hypothesis-field", "sentence2",
            "--val-fraction", "0.3", "--no-augment"]
    code, err = run_script(capsys, *base, "--label-order", "entailment,not_entailment", "--output",
                           str(tmp_path / "refused"))
    assert code == 2 and len(err.splitlines()) == 1
    assert "row 2, field 'label': two-class label 'not_entailment': pass --two-class neutral or" in err
    assert not (tmp_path / "refused").exists()
    for target in ("neutral", "contradiction"):
        code, err = run_script(capsys, *base, "--label-order", "entailment,not_entailment", "--two-class", target,
                               "--output", str(tmp_path / target))
        assert code == 0, err
        labels = {r["premise"]: r["label"] for split in saved(tmp_path / target).values() for r in split}
        assert labels == {f"P {i}.": ("entailment" if i % 2 == 0 else target) for i in range(20)}


def test_two_mixed_sources_cap_weight_and_augmentation(tmp_path):
    a = write_csv(tmp_path / "a" / "train.csv", triples(30, "a"))
    write_csv(tmp_path / "a" / "dev.csv", triples(6, "av"))
    b = write_jsonl(tmp_path / "b.jsonl", triples(40, "b"))
    report = build_nli([f"mine={a.parent}", f"other={b}"], tmp_path / "out", cap=("mine=20",), weight=("other=1.5",),
                       val_fraction=0.25)
    out = saved(tmp_path / "out")
    b_train = report["sources"][1]["rows_read"]["train"]
    original = {s: c["per_source"] for s, c in report["splits"].items()}
    assert original["train"] == {"mine": 2 * 20, "other": 2 * round(1.5 * b_train)}  # x2: augmented copies
    assert original["validation"]["mine"] == 2 * 6  # weight touches training rows only
    train = out["train"]
    n = len(train) // 2
    for original_row, copy in zip(train[:n], train[n:], strict=True):
        assert copy["source"] == original_row["source"] and copy["label"] == original_row["label"]
        assert copy["augmented"] and copy["phrase"] in DIALOGUE_PHRASES
        assert copy["hypothesis"].startswith(copy["phrase"] + " ")
    assert [s["name"] for s in report["sources"]] == ["mine", "other"]


@pytest.mark.parametrize("settings, check", [
    ({"position": "append"}, lambda r: r["hypothesis"].endswith(" " + r["phrase"])),
    ({"phrases": "statements"}, lambda r: r["phrase"] in STATEMENT_PHRASES),
    ({"phrase_subset": 2, "seed": 5}, lambda r: r["phrase"] in DIALOGUE_PHRASES),
])
def test_every_ablation_applies_to_any_source(tmp_path, settings, check):
    report = build_nli(str(write_csv(tmp_path / "x.csv", triples(30, "x"))), tmp_path / "out", **settings)
    copies = [r for r in saved(tmp_path / "out")["train"] if r["augmented"]]
    assert copies and all(check(r) for r in copies)
    if "phrase_subset" in settings:
        assert len({r["phrase"] for r in copies}) <= 2 and len(report["augmentation"]["subset"]) == 2
    plain = build_nli(str(tmp_path / "x.csv"), tmp_path / "plain", augment=False)
    assert plain["splits"]["train"]["augmented"] == 0 and plain["augmentation"]["augment"] is False


def test_shared_pairs_dropped_from_the_lower_split_and_counted(tmp_path, capsys):
    root = tmp_path / "set"
    write_jsonl(root / "train.jsonl", triples(10, "t") + triples(2, "v"))  # two validation pairs leak into train
    write_jsonl(root / "dev.jsonl", triples(4, "v"))
    report = build_nli(str(root), tmp_path / "out", shared_pairs="drop", augment=False)
    assert report["dropped_shared_pairs"] == {"validation": 0, "train": 2}
    assert report["splits"]["train"]["rows"] == 10


def test_a_pair_hidden_by_an_invisible_character_is_still_a_shared_pair(tmp_path):
    """A zero-width space, soft hyphen or byte-order mark made the same pair a new one: it leaked into train."""
    root = tmp_path / "set"
    leaked = [{**row, "premise": row["premise"].replace(" premise", mark + " premise")}
              for row, mark in zip(triples(2, "v"), ("\u200b", "\u00ad"), strict=True)]
    write_jsonl(root / "train.jsonl", triples(10, "t") + leaked)
    write_jsonl(root / "dev.jsonl", triples(4, "v"))
    report = build_nli(str(root), tmp_path / "out", shared_pairs="drop", augment=False)
    assert report["dropped_shared_pairs"] == {"validation": 0, "train": 2}


def test_a_pair_given_twice_in_a_split_with_two_labels_is_counted(tmp_path):
    """Label noise training learns both ways: kept as the source gives it, counted in report.json. Control: 0."""
    rows = triples(12, "c")
    rows.append({**rows[0], "label": "neutral" if rows[0]["label"] != "neutral" else "contradiction"})
    root = tmp_path / "set"
    write_jsonl(root / "train.jsonl", rows)
    write_jsonl(root / "dev.jsonl", triples(3, "d"))
    report = build_nli(str(root), tmp_path / "out", augment=False)
    assert report["pairs_with_another_label"] == {"train": 1, "validation": 0}


# ------------------------------------------------------------- refusals ---


def missing_field(tmp: Path):
    rows = [{"sentence1": r["premise"], "hypothesis": r["hypothesis"], "label": r["label"]} for r in triples(9, "m")]
    path = write_jsonl(tmp / "m.jsonl", rows)
    return [str(path)], f"{path}: no field 'premise' (fields: sentence1, hypothesis, label); pass --premise-field " \
        "NAME", ["--premise-field", "sentence1"]


def integer_labels(tmp: Path):
    path = write_jsonl(tmp / "i.jsonl", [{**r, "label": i % 3} for i, r in enumerate(triples(9, "i"))])
    return [str(path)], f"{path}, row 1, field 'label': integer label 0 needs --label-order: expected distinct " \
        "class names in index order such as entailment,neutral,contradiction (or e,n,c)", ["--label-order", "e,n,c"]


def unknown_label(tmp: Path):
    rows = triples(9, "u")
    rows[4]["label"] = "maybe"
    path = write_jsonl(tmp / "u.jsonl", rows)
    fixed = write_jsonl(tmp / "fixed.jsonl", triples(9, "u"))
    return [str(path)], f"{path}, row 5, field 'label': unknown label 'maybe', expected entailment, neutral, " \
        "contradiction (or e, n, c), or not_entailment with --two-class", ["--source", str(fixed), "SWAP"]


def empty_file(tmp: Path):
    path = tmp / "empty.jsonl"
    tmp.mkdir(parents=True)
    path.write_text("")
    fixed = write_jsonl(tmp / "full.jsonl", triples(9, "f"))
    return [str(path)], f"{path}: file is empty (no data rows)", ["--source", str(fixed), "SWAP"]


def pair_in_two_splits(tmp: Path):
    write_jsonl(tmp / "set" / "train.jsonl", triples(8, "t") + triples(1, "v", start=2))
    write_jsonl(tmp / "set" / "dev.jsonl", triples(4, "v"))
    return [str(tmp / "set")], "the pair of set:train.jsonl:9 (train) is also in validation (set:dev.jsonl:3); " \
        "pass --shared-pairs drop to drop such pairs from the lower split, counted in report.json", \
        ["--shared-pairs", "drop"]


@pytest.mark.parametrize("layout", [missing_field, integer_labels, unknown_label, empty_file, pair_in_two_splits])
def test_a_layout_that_does_not_fit_is_one_line_and_the_fix_works(tmp_path, capsys, layout):
    sources, line, fix = layout(tmp_path / "in")
    source_args = [a for s in sources for a in ("--source", s)]
    code, err = run_script(capsys, *source_args, "--output", str(tmp_path / "out"))
    assert code == 2 and err == f"build_nli.py: error: {line}"
    assert not (tmp_path / "out").exists() and not [p for p in os.listdir(tmp_path) if p.startswith(".")]
    fixed = fix[:2] if fix[-1] == "SWAP" else [*source_args, *fix]  # control: the option the line names works
    code, err = run_script(capsys, *fixed, "--output", str(tmp_path / "out"), "--val-fraction", "0.3")
    assert code == 0, err
    assert (tmp_path / "out" / "report.json").is_file()


def test_a_file_naming_no_split_beside_named_ones_is_refused(tmp_path):
    write_jsonl(tmp_path / "set" / "train.jsonl", triples(6, "t"))
    write_jsonl(tmp_path / "set" / "extra.jsonl", triples(6, "x"))
    with pytest.raises(UserError, match=r"extra\.jsonl: names no split .* pass --split-field"):
        build_nli(str(tmp_path / "set"), tmp_path / "out")
    write_jsonl(tmp_path / "ok" / "train.jsonl", triples(6, "t"))  # control: named files only
    write_jsonl(tmp_path / "ok" / "validation.jsonl", triples(3, "x"))
    assert build_nli(str(tmp_path / "ok"), tmp_path / "out")["splits"]["validation"]["original"] == 3


def test_unknown_source_names_the_forms(tmp_path):
    with pytest.raises(UserError, match=r"'nowhere\.csv' is not a file or folder here; expected .*hf:NAME"):
        build_nli("nowhere.csv", tmp_path / "out")
    with pytest.raises(UserError, match=r"--cap names source 'x'; the sources are a"):
        build_nli(f"a={write_jsonl(tmp_path / 'a.jsonl', triples(6, 'a'))}", tmp_path / "out", cap="x=3")


def test_label_order_that_disagrees_with_a_sets_own_names_is_refused(tmp_path):
    """Found before: --label-order c,n,e on a saved set whose ClassLabel names are e,n,c relabelled its indices by
    the option (36 of 50 labels swapped, exit 0). Controls: the same order as the names, and no order."""
    names = ["entailment", "neutral", "contradiction"]
    features = datasets.Features({"premise": datasets.Value("string"), "hypothesis": datasets.Value("string"),
                                  "label": datasets.ClassLabel(names=names)})
    rows = triples(9, "s")

    def as_set(part: list[dict]) -> datasets.Dataset:
        return datasets.Dataset.from_dict({"premise": [r["premise"] for r in part], "hypothesis": [
            r["hypothesis"] for r in part], "label": [names.index(r["label"]) for r in part]}, features=features)

    datasets.DatasetDict({"train": as_set(rows), "validation": as_set(triples(3, "v"))}).save_to_disk(
        str(tmp_path / "saved"))
    source = f"disk:{tmp_path / 'saved'}"
    with pytest.raises(UserError, match="disagrees with the label names this data set stores") as caught:
        build_nli([source], tmp_path / "swapped", augment=False, label_order=["contradiction", "neutral", "entailment"])
    assert "\n" not in str(caught.value) and not (tmp_path / "swapped").exists()
    expected = {(r["premise"], r["label"]) for r in rows}
    for order, out in ((["e", "n", "c"], "same"), (None, "none")):
        build_nli([source], tmp_path / out, augment=False, label_order=order)
        assert {(r["premise"], r["label"]) for r in saved(tmp_path / out)["train"]} == expected


def test_premises_that_differ_only_in_spacing_land_in_one_split(tmp_path):
    """The seeded split by premise reads the premise as shared_pairs compares it (spacing collapsed). Found before:
    15 of 80 premises written also with a trailing or doubled space were split into two splits (leakage)."""
    rows = []
    for i in range(80):
        premise = f"Premise   number {i} about things."
        rows += [{"premise": premise, "hypothesis": f"H {i}.", "label": LABELS[i % 3]},
                 {"premise": " ".join(premise.split()) + " ", "hypothesis": f"Other {i}.", "label": LABELS[i % 3]}]
    build_nli([str(write_csv(tmp_path / "ws.csv", rows, spell=False))], tmp_path / "out", augment=False,
              val_fraction=0.3)
    splits = {}
    for split, found in saved(tmp_path / "out").items():
        for row in found:
            splits.setdefault(" ".join(row["premise"].split()), set()).add(split)
    assert len(splits) == 80 and all(len(where) == 1 for where in splits.values())
    assert {s for where in splits.values() for s in where} == {"train", "validation"}  # control: both splits used


def test_a_built_set_as_a_source_gives_its_originals_augmented_once(tmp_path):
    """The README's mix (``--source mine=data/my_nli``, a set this builder wrote) augmented the set's copies a second
    time as originals ("yep. Also yep. Also ..."), exit 0. Its originals are read, its copies left out and counted;
    control: the same originals from their file give the same set."""
    write_jsonl(tmp_path / "mine.jsonl", triples(30, "m"))
    build_nli(str(tmp_path / "mine.jsonl"), tmp_path / "built", val_fraction=0.2, seed=3)
    again = build_nli(f"mine={tmp_path / 'built'}", tmp_path / "again", val_fraction=0.2, seed=3)
    direct = build_nli(f"mine={tmp_path / 'mine.jsonl'}", tmp_path / "direct", val_fraction=0.2, seed=3)
    assert again["sources"][0]["augmented_copies_left_out"] == 30
    assert {s: c["rows"] for s, c in again["splits"].items()} == {s: c["rows"] for s, c in direct["splits"].items()}
    for split, rows in saved(tmp_path / "again").items():
        copies = [row for row in rows if row["augmented"]]
        assert len(copies) * 2 == len(rows), split
        assert all(row["hypothesis"].count(row["phrase"]) == 1 for row in copies)  # one phrase, not two
        originals = sorted(row["hypothesis"] for row in rows if not row["augmented"])
        assert originals == sorted(row["hypothesis"] for row in saved(tmp_path / "direct")[split]
                                   if not row["augmented"])


def test_a_seeded_split_without_validation_rows_says_why(tmp_path):
    """Each premise is drawn into validation with chance --val-fraction: 3 premises at 0.1 can give none. The refusal
    said to 'give a source whose files name no split', which the source already was."""
    with pytest.raises(UserError, match="no validation rows") as caught:
        build_nli(str(write_jsonl(tmp_path / "few.jsonl", triples(3, "f"))), tmp_path / "out", val_fraction=0.01)
    message = str(caught.value)
    assert "chance --val-fraction (0.01)" in message and "raise --val-fraction or change --seed" in message
    assert "whose files name no split" not in message and not (tmp_path / "out").exists()
