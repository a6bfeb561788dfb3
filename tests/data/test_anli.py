"""Phrase-augmented ANLI: augmentation rules, ablation flags, both sources, bad input.

The raw data is generated in the official ANLI release layout
(``learned_metrics.data.demo.write_anli_layout``) and the Hub source is a local
stand-in with the ``facebook/anli`` schema, so the real code paths run offline.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import datasets
import pytest

from learned_metrics.cli.prep import anli_script
from learned_metrics.data.anli import (
    DIALOGUE_PHRASES,
    FEATURES,
    STATEMENT_PHRASES,
    augment_hypothesis,
    build_anli_augmented,
    lower_first,
)
from learned_metrics.data.common import load_report
from learned_metrics.data.demo import write_anli_layout
from learned_metrics.errors import UserError

REPO = Path(__file__).resolve().parents[2]
SIZES = {"train": 40, "dev": 10, "test": 10}  # rows per round
SPLITS = ("train", "validation", "test")
FILE_OF = {"train": "train", "validation": "dev", "test": "test"}


@pytest.fixture(scope="module")
def anli_dir(tmp_path_factory) -> Path:
    return write_anli_layout(tmp_path_factory.mktemp("anli") / "raw", SIZES, seed=0)


@pytest.fixture(scope="module")
def originals(anli_dir) -> dict[str, list[dict]]:
    """The raw rows per output split, R1-R3 in order, as the builder should read them."""
    rows: dict[str, list[dict]] = {}
    for split in SPLITS:
        rows[split] = []
        for rnd in ("R1", "R2", "R3"):
            with (anli_dir / rnd / f"{FILE_OF[split]}.jsonl").open() as handle:
                rows[split] += [json.loads(line) for line in handle]
    return rows


def build(anli_dir: Path, out: Path, **kwargs) -> tuple[dict, datasets.DatasetDict]:
    report = build_anli_augmented(f"jsonl:{anli_dir}", out, **kwargs)
    return report, datasets.load_from_disk(str(out))


@pytest.fixture(scope="module")
def default_build(anli_dir, tmp_path_factory):
    return build(anli_dir, tmp_path_factory.mktemp("default") / "out")


def matching_phrases(text: str, original: str, phrases, position: str) -> list[str]:
    """Every listed phrase that explains ``text`` as an augmentation of ``original``."""
    if position == "prepend":
        return [p for p in phrases if text == f"{p} {lower_first(original)}"]
    return [p for p in phrases if text == f"{original} {p}"]


# ------------------------------------------------------------ augmentation ---


def test_augment_hypothesis_prepend_and_append():
    assert augment_hypothesis("The cat sat.", "I think") == "I think the cat sat."
    assert augment_hypothesis("The cat sat.", "I think", "append") == "The cat sat. I think"


def test_phrase_lists_match_design():
    assert len(DIALOGUE_PHRASES) == len(STATEMENT_PHRASES) == 10
    assert {"Here is what I know:", "yep. Also", "I am not sure but I do know that", "I like that!"} <= set(
        DIALOGUE_PHRASES
    )
    assert STATEMENT_PHRASES[:3] == (
        "The woman is hungry.",
        "Canada is in North America.",
        "The cellar is below the house.",
    )
    assert not set(DIALOGUE_PHRASES) & set(STATEMENT_PHRASES)


def test_rows_doubled_labels_unchanged_originals_kept(default_build, originals):
    report, built = default_build
    assert list(built) == list(SPLITS)
    for split in SPLITS:
        raw, ds = originals[split], built[split]
        n = len(raw)
        assert len(ds) == 2 * n == report["splits"][split]["rows"]
        assert report["splits"][split]["augmented"] == n
        orig, aug = ds.select(range(n)), ds.select(range(n, 2 * n))
        assert orig["hypothesis"] == [r["hypothesis"] for r in raw]
        assert orig["premise"] == aug["premise"] == [r["context"] for r in raw]
        letters = {"entailment": "e", "neutral": "n", "contradiction": "c"}
        assert [letters[x] for x in orig["label"]] == [r["label"] for r in raw]
        assert orig["label"] == aug["label"] and orig["uid"] == aug["uid"] and orig["round"] == aug["round"]
        assert not any(orig["augmented"]) and all(aug["augmented"])
        assert set(orig["phrase"]) == {None}


def test_every_augmented_hypothesis_has_exactly_one_phrase(default_build, originals):
    report, built = default_build
    for split in SPLITS:
        n = len(originals[split])
        aug = built[split].select(range(n, 2 * n))
        for row, raw in zip(aug, originals[split], strict=True):
            assert matching_phrases(row["hypothesis"], raw["hypothesis"], DIALOGUE_PHRASES, "prepend") == [
                row["phrase"]
            ]
            assert row["hypothesis"][len(row["phrase"]) + 1].islower()
        assert sum(report["splits"][split]["per_phrase"].values()) == n
    assert report["augmentation"]["phrase_list"] == list(DIALOGUE_PHRASES)


def test_append_leaves_hypothesis_unchanged(anli_dir, originals, tmp_path):
    report, built = build(anli_dir, tmp_path / "out", position="append")
    n = len(originals["train"])
    for row, raw in zip(built["train"].select(range(n, 2 * n)), originals["train"], strict=True):
        assert matching_phrases(row["hypothesis"], raw["hypothesis"], DIALOGUE_PHRASES, "append") == [row["phrase"]]
    assert report["augmentation"]["position"] == "append"


def test_statements_list(anli_dir, tmp_path):
    report, built = build(anli_dir, tmp_path / "out", phrases="statements")
    used = {p for p in built["train"]["phrase"] if p is not None}
    assert used and used <= set(STATEMENT_PHRASES)
    assert report["augmentation"]["phrases"] == "statements"


def test_same_seed_same_build_other_seed_differs(anli_dir, default_build, tmp_path):
    _, again = build(anli_dir, tmp_path / "again", seed=42)
    _, other = build(anli_dir, tmp_path / "other", seed=7)
    for split in SPLITS:
        assert again[split].to_list() == default_build[1][split].to_list()
    assert other["train"]["hypothesis"] != again["train"]["hypothesis"]


def test_phrase_subset_recorded_and_respected(anli_dir, tmp_path):
    report, built = build(anli_dir, tmp_path / "out", phrase_subset=5, seed=3)
    subset = report["augmentation"]["subset"]
    assert len(subset) == 5 and set(subset) <= set(DIALOGUE_PHRASES)
    assert report["augmentation"]["phrase_subset"] == 5
    for split in SPLITS:
        used = {p for p in built[split]["phrase"] if p is not None}
        assert used <= set(subset)
    assert {p for p in built["train"]["phrase"] if p is not None} == set(subset)  # 120 draws cover all 5
    assert (
        build_anli_augmented(f"jsonl:{anli_dir}", tmp_path / "again", phrase_subset=5, seed=3)["augmentation"]["subset"]
        == subset
    )
    assert load_report(tmp_path / "out")["augmentation"] == report["augmentation"]


def test_no_augment_writes_anli_only(anli_dir, originals, tmp_path):
    report, built = build(anli_dir, tmp_path / "out", augment=False)
    for split in SPLITS:
        assert len(built[split]) == len(originals[split])
        assert not any(built[split]["augmented"])
    assert report["augmentation"]["augment"] is False and report["splits"]["train"]["per_phrase"] == {}


def test_report_counts_rounds_and_labels(default_build):
    report, built = default_build
    train = report["splits"]["train"]
    assert train["per_round"] == {"R1": 80, "R2": 80, "R3": 80}
    assert sum(train["per_label"].values()) == 240
    assert train["per_label"]["entailment"] == built["train"]["label"].count("entailment")
    assert report["seed"] == 42 and report["source"].startswith("jsonl:")


# ------------------------------------------------------------ Hub source ---


def hub_stand_in(originals: dict[str, list[dict]], names: list[str]) -> datasets.DatasetDict:
    """The same rows with the ``facebook/anli`` schema: splits train_r1.., integer ClassLabel labels, reason."""
    features = datasets.Features(
        {
            "uid": datasets.Value("string"),
            "premise": datasets.Value("string"),
            "hypothesis": datasets.Value("string"),
            "label": datasets.ClassLabel(names=names),
            "reason": datasets.Value("string"),
        }
    )
    full = {"e": "entailment", "n": "neutral", "c": "contradiction"}
    splits = {}
    for split, rows in originals.items():
        for rnd in ("r1", "r2", "r3"):
            part = [r for r in rows if r["uid"].startswith(f"{rnd}-")]
            columns = {
                "uid": [r["uid"] for r in part] + ["unlabelled"],
                "premise": [r["context"] for r in part] + ["A premise."],
                "hypothesis": [r["hypothesis"] for r in part] + ["A hypothesis."],
                "label": [names.index(full[r["label"]]) for r in part] + [-1],
                "reason": [""] * (len(part) + 1),
            }
            splits[f"{FILE_OF[split]}_{rnd}"] = datasets.Dataset.from_dict(columns, features=features)
    return datasets.DatasetDict(splits)


@pytest.mark.parametrize(
    "names", [["entailment", "neutral", "contradiction"], ["contradiction", "neutral", "entailment"]]
)
def test_hub_and_jsonl_sources_give_the_same_dataset(monkeypatch, originals, default_build, tmp_path, names):
    requested = []

    def fake_load_dataset(path, *args, **kwargs):
        requested.append(path)
        return hub_stand_in(originals, names)

    monkeypatch.setattr(datasets, "load_dataset", fake_load_dataset)
    report = build_anli_augmented("anli", tmp_path / "out")
    hub = datasets.load_from_disk(str(tmp_path / "out"))
    jsonl_report, jsonl = default_build
    assert requested == ["facebook/anli"]
    assert list(hub) == list(jsonl) == list(SPLITS)
    for split in SPLITS:
        assert hub[split].features == jsonl[split].features == FEATURES
        assert hub[split].to_list() == jsonl[split].to_list()
    assert report["dropped_unlabelled"] == {"train": 3, "validation": 3, "test": 3}
    assert report["splits"] == jsonl_report["splits"]


def test_hub_integer_labels_without_names_are_refused(monkeypatch, tmp_path):
    plain = datasets.Dataset.from_dict({"uid": ["a"], "premise": ["P."], "hypothesis": ["H."], "label": [0]})
    fake = datasets.DatasetDict({f"{s}_r{r}": plain for s in ("train", "dev", "test") for r in (1, 2, 3)})
    monkeypatch.setattr(datasets, "load_dataset", lambda *a, **k: fake)
    with pytest.raises(UserError, match="never by position"):
        build_anli_augmented("anli", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_hub_load_failure_is_a_user_error(monkeypatch, tmp_path):
    def offline(*args, **kwargs):
        raise ConnectionError("Couldn't reach the Hub\nmore detail")

    monkeypatch.setattr(datasets, "load_dataset", offline)
    with pytest.raises(UserError, match="jsonl:DIR"):
        build_anli_augmented("anli", tmp_path / "out")


# ------------------------------------------------------------- bad input ---


def rewrite_row(path: Path, row_number: int, change) -> None:
    lines = path.read_text().splitlines()
    row = json.loads(lines[row_number - 1])
    change(row)
    lines[row_number - 1] = json.dumps(row)
    path.write_text("\n".join(lines) + "\n")


def corrupt_unknown_label(root: Path) -> tuple[str, ...]:
    rewrite_row(root / "R2" / "dev.jsonl", 4, lambda row: row.update(label="x"))
    return ("dev.jsonl", "row 4", "field 'label'", "'x'")


def corrupt_missing_field(root: Path) -> tuple[str, ...]:
    rewrite_row(root / "R1" / "train.jsonl", 7, lambda row: row.pop("context"))
    return ("train.jsonl", "row 7", "field 'context'", "missing field")


def corrupt_empty_hypothesis(root: Path) -> tuple[str, ...]:
    rewrite_row(root / "R3" / "test.jsonl", 2, lambda row: row.update(hypothesis="  "))
    return ("test.jsonl", "row 2", "field 'hypothesis'", "empty")


def corrupt_missing_round_file(root: Path) -> tuple[str, ...]:
    (root / "R3" / "dev.jsonl").unlink()
    return ("R3", "dev.jsonl", "file not found")


@pytest.mark.parametrize(
    "corrupt", [corrupt_unknown_label, corrupt_missing_field, corrupt_empty_hypothesis, corrupt_missing_round_file]
)
def test_bad_input_one_line_error_and_no_output(tmp_path, capsys, corrupt):
    raw = write_anli_layout(tmp_path / "raw", {"train": 8, "dev": 5, "test": 5}, seed=1)
    expected = corrupt(raw)
    capsys.readouterr()
    code = anli_script(["--source", f"jsonl:{raw}", "--output", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.strip().splitlines()) == 1, err
    for part in expected:
        assert part in err
    assert sorted(os.listdir(tmp_path)) == ["raw"]  # no output, no temp folders left behind


def test_unknown_source_lists_valid_forms(tmp_path, capsys):
    code = anli_script(["--source", "hf:anli", "--output", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "'anli'" in err and "jsonl:DIR" in err
    assert not (tmp_path / "out").exists()


def test_phrase_subset_out_of_range(anli_dir, tmp_path):
    with pytest.raises(UserError, match="between 1 and 10"):
        build_anli_augmented(f"jsonl:{anli_dir}", tmp_path / "out", phrase_subset=11)
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_script_subprocess_bad_label_and_help(tmp_path):
    raw = write_anli_layout(tmp_path / "raw", {"train": 5, "dev": 5, "test": 3}, seed=2)
    expected = corrupt_unknown_label(raw)
    script = str(REPO / "data_prep" / "build_anli_augmented.py")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    bad = subprocess.run(
        [sys.executable, script, "--source", f"jsonl:{raw}", "--output", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert bad.returncode == 2
    assert len(bad.stderr.strip().splitlines()) == 1, bad.stderr
    assert bad.stderr.startswith("build_anli_augmented.py: error: ")
    for part in expected:
        assert part in bad.stderr
    assert sorted(os.listdir(tmp_path)) == ["raw"]

    shown = subprocess.run([sys.executable, script, "--help"], capture_output=True, text=True, env=env, timeout=120)
    assert shown.returncode == 0
    for flag in ("--source", "--phrases", "--position", "--phrase-subset", "--seed", "--no-augment"):
        assert flag in shown.stdout


def test_an_original_in_two_splits_of_the_release_is_counted(tmp_path):
    """ANLI's splits are kept as released, but a pair in train and dev (a user-edited release folder) was silent
    leakage; report.json counts it, in the lower split. Control: the release as written has none."""
    raw = write_anli_layout(tmp_path / "raw", {"train": 6, "dev": 4, "test": 4}, seed=3)
    control = build_anli_augmented(f"jsonl:{raw}", tmp_path / "control")
    assert control["originals_in_a_higher_split"] == {"train": 0, "validation": 0, "test": 0}
    dev_row = (raw / "R1" / "dev.jsonl").read_text().splitlines()[0]
    with (raw / "R2" / "train.jsonl").open("a") as handle:
        handle.write(json.dumps({**json.loads(dev_row), "uid": "copied-into-train"}) + "\n")
    report = build_anli_augmented(f"jsonl:{raw}", tmp_path / "out")
    assert report["originals_in_a_higher_split"] == {"train": 1, "validation": 0, "test": 0}
