"""Rule: no NLI pair sits in two splits, augmented copies included. ``prep anli`` and ``prep nli`` (and the NLI demo,
through ``prep anli``) make one phrase-augmented copy of every row; a copy's pair (premise, hypothesis compared
whitespace-normalised, as shared pairs are) must be no original of another split and no copy of another split. A
copy that would be takes the next phrase after its seeded draw (counted in report.json's ``redrawn_phrases``); a row
that no phrase keeps apart is one line naming both rows, and nothing is written.
"""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path

import datasets
import pytest

from learned_metrics.cli.prep import anli_script, nli_script
from learned_metrics.data.anli import DIALOGUE_PHRASES, augment_hypothesis, build_anli_augmented, draw_phrases
from learned_metrics.data.common import pair_text
from learned_metrics.data.nli import build_nli

LABELS = ("entailment", "neutral", "contradiction")


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def rows(n: int, hypothesis: str, start: int = 0) -> list[dict]:
    return [{"premise": f"Premise number {i}.", "hypothesis": hypothesis.format(i=i), "label": LABELS[i % 3]}
            for i in range(start, start + n)]


def pairs_per_split(out: Path) -> dict[str, set[str]]:
    return {split: {pair_text(r["premise"], r["hypothesis"]) for r in ds} for split, ds in
            datasets.load_from_disk(str(out)).items()}


def assert_no_pair_in_two_splits(out: Path) -> None:
    pairs = pairs_per_split(out)
    for a, b in itertools.combinations(pairs, 2):
        assert not pairs[a] & pairs[b], (a, b, sorted(pairs[a] & pairs[b])[:3])


def assert_one_copy_each_label_kept(out: Path) -> None:
    for ds in datasets.load_from_disk(str(out)).values():
        n = len(ds) // 2
        for original, copy in zip(ds.select(range(n)), ds.select(range(n, 2 * n)), strict=True):
            assert not original["augmented"] and copy["augmented"] and copy["uid"] == original["uid"]
            assert copy["label"] == original["label"] and copy["phrase"] in DIALOGUE_PHRASES
            assert copy["hypothesis"] == augment_hypothesis(original["hypothesis"], copy["phrase"])


def anli_layout(root: Path, hypotheses: dict[str, str]) -> Path:
    """The official ANLI layout, every round's file of a split with the same premises and ``hypotheses[stem]``."""
    for rnd in ("R1", "R2", "R3"):
        for stem, hypothesis in hypotheses.items():
            write_jsonl(root / rnd / f"{stem}.jsonl", [
                {"uid": f"{rnd}-{stem}-{i}", "context": f"Premise {rnd} {i}.", "hypothesis": hypothesis.format(i=i),
                 "label": "ecn"[i % 3]} for i in range(30)])
    return root


# --- hostile: copies that would land on a pair of another split -------------------------------------------------


def test_nli_copy_of_a_train_pair_never_equals_a_validation_pair(tmp_path):
    """Train 'The cat N sat.' and validation 'the cat N sat.' (another pair: case differs) share every copy."""
    root = tmp_path / "set"
    write_jsonl(root / "train.jsonl", rows(60, "The cat {i} sat."))
    write_jsonl(root / "dev.jsonl", rows(60, "the cat {i} sat."))
    report = build_nli(str(root), tmp_path / "out", seed=1)
    assert_no_pair_in_two_splits(tmp_path / "out")
    assert_one_copy_each_label_kept(tmp_path / "out")
    assert report["redrawn_phrases"]["train"] > 0 and report["redrawn_phrases"]["validation"] == 0


def test_nli_copy_takes_the_one_phrase_no_other_split_holds(tmp_path):
    """Validation holds the train pair behind nine of the ten phrases: the train copy must take the tenth."""
    free = DIALOGUE_PHRASES[4]
    root = tmp_path / "set"
    write_jsonl(root / "train.jsonl", rows(20, "The cat {i} sat."))
    write_jsonl(root / "dev.jsonl", [row for phrase in DIALOGUE_PHRASES if phrase != free
                                     for row in rows(20, f"{phrase} the cat {{i}} sat.")])
    report = build_nli(str(root), tmp_path / "out", seed=5)
    train = datasets.load_from_disk(str(tmp_path / "out"))["train"]
    assert {r["phrase"] for r in train if r["augmented"]} == {free}
    assert_no_pair_in_two_splits(tmp_path / "out")
    assert report["splits"]["train"]["per_phrase"] == {free: 20}


def test_nli_copy_of_a_higher_split_never_equals_a_lower_original(tmp_path):
    """Train holds 'I think the cat N sat.': validation's copy of 'The cat N sat.' must not be that pair."""
    root = tmp_path / "set"
    write_jsonl(root / "train.jsonl", [row for phrase in DIALOGUE_PHRASES[:-1]
                                       for row in rows(20, f"{phrase} the cat {{i}} sat.")])
    write_jsonl(root / "dev.jsonl", rows(20, "The cat {i} sat."))
    report = build_nli(str(root), tmp_path / "out", seed=2)
    validation = datasets.load_from_disk(str(tmp_path / "out"))["validation"]
    assert {r["phrase"] for r in validation if r["augmented"]} == {DIALOGUE_PHRASES[-1]}
    assert_no_pair_in_two_splits(tmp_path / "out")
    assert report["redrawn_phrases"]["validation"] == sum(
        int(i) != len(DIALOGUE_PHRASES) - 1 for i in draw_phrases(20, "validation", len(DIALOGUE_PHRASES), 2))


def test_anli_copy_of_a_train_pair_never_equals_a_dev_or_test_pair(tmp_path):
    raw = anli_layout(tmp_path / "raw", {"train": "The cat {i} sat.", "dev": "the cat {i} sat.",
                                         "test": "THE cat {i} sat."})
    report = build_anli_augmented(f"jsonl:{raw}", tmp_path / "out", seed=3)
    assert_no_pair_in_two_splits(tmp_path / "out")  # 'the cat' and 'THE cat' differ; their copies too
    assert_one_copy_each_label_kept(tmp_path / "out")
    assert report["redrawn_phrases"]["train"] > 0


def test_no_free_phrase_is_one_line_naming_both_rows_and_nothing_written(tmp_path, capsys):
    root = tmp_path / "set"
    write_jsonl(root / "train.jsonl", rows(6, "The cat {i} sat."))
    write_jsonl(root / "dev.jsonl", rows(6, "the cat {i} sat."))
    capsys.readouterr()
    code = nli_script(["--source", str(root), "--output", str(tmp_path / "out"), "--phrase-subset", "1"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    assert "set:train.jsonl:" in err and "(train)" in err and "(validation)" in err and "--phrase-subset" in err
    assert sorted(os.listdir(tmp_path)) == ["set"]


def test_anli_no_free_phrase_is_one_line(tmp_path, capsys):
    raw = anli_layout(tmp_path / "raw", {"train": "The cat {i} sat.", "dev": "the cat {i} sat.",
                                         "test": "A dog {i} ran."})
    capsys.readouterr()
    code = anli_script(["--source", f"jsonl:{raw}", "--output", str(tmp_path / "out"), "--phrase-subset", "1"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "R1-train-0 (train)" in err, err
    assert sorted(os.listdir(tmp_path)) == ["raw"]


# --- controls ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 7])
def test_control_pairs_apart_keep_the_seeded_draw(tmp_path, seed):
    """Nothing to keep apart: every copy has the phrase of the seeded draw, none redrawn; same seed, same set."""
    root = tmp_path / "set"
    write_jsonl(root / "train.jsonl", rows(40, "The cat {i} sat."))
    write_jsonl(root / "dev.jsonl", rows(20, "A dog {i} ran.", start=100))
    report = build_nli(str(root), tmp_path / "out", seed=seed)
    again = build_nli(str(root), tmp_path / "again", seed=seed)
    out = datasets.load_from_disk(str(tmp_path / "out"))
    for split, ds in out.items():
        n = len(ds) // 2
        drawn = [DIALOGUE_PHRASES[int(i)] for i in draw_phrases(n, split, len(DIALOGUE_PHRASES), seed)]
        assert ds["phrase"][n:] == drawn
    assert report.get("redrawn_phrases", {"train": 0, "validation": 0}) == {"train": 0, "validation": 0}
    assert again["splits"] == report["splits"] and out["train"]["hypothesis"] == \
        datasets.load_from_disk(str(tmp_path / "again"))["train"]["hypothesis"]


def test_control_repeats_inside_one_split_are_left(tmp_path):
    """A copy equal to another pair of its own split is no leak: kept, not redrawn."""
    root = tmp_path / "set"
    write_jsonl(root / "train.jsonl", rows(20, "The cat {i} sat.") + rows(20, "I think the cat {i} sat."))
    write_jsonl(root / "dev.jsonl", rows(10, "A dog {i} ran.", start=100))
    build_nli(str(root), tmp_path / "out", seed=0)
    train = datasets.load_from_disk(str(tmp_path / "out"))["train"]
    assert train["phrase"][40:] == [DIALOGUE_PHRASES[int(i)] for i in draw_phrases(40, "train", 10, 0)]


def test_control_an_original_released_in_two_anli_splits_keeps_its_seeded_copies(tmp_path):
    """ANLI's splits are taken as released (prep nli refuses shared originals; prep anli does not judge them): a row
    whose original is in another split too has no phrase that keeps its copy apart, so it keeps its seeded draw
    instead of stopping the build (the tiny ANLI stand-ins of the training tests repeat pairs across splits)."""
    root = anli_layout(tmp_path / "anli", {"train": "Hypothesis {i}.", "dev": "Dev hypothesis {i}.",
                                           "test": "Hypothesis {i}."})  # test repeats train's pairs
    report = build_anli_augmented(f"jsonl:{root}", tmp_path / "out", seed=3)
    built = datasets.load_from_disk(str(tmp_path / "out"))
    for split in ("train", "test"):
        ds = built[split]
        n = len(ds) // 2
        expected = [DIALOGUE_PHRASES[i] for i in draw_phrases(n, split, len(DIALOGUE_PHRASES), 3)]
        assert ds.select(range(n, 2 * n))["phrase"] == expected  # the seeded draw, no redraw
    assert report["redrawn_phrases"]["train"] == report["redrawn_phrases"]["test"] == 0
