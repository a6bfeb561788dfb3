"""Default metric names are distinct: a repeated file stem is numbered, and a number another input already carries
as its name is skipped, so no metric's results overwrite another's (a third file called ``m#1.csv`` beside two
``m.jsonl`` made one of them vanish, exit 0)."""

from __future__ import annotations

import json
import shutil

import pytest

from learned_metrics.cli import main
from learned_metrics.meta_eval.rows import numbered_names

EXAMPLES = "examples/meta_eval"


@pytest.mark.parametrize(("names", "expected"), [
    (["a", "b"], ["a", "b"]),  # control: distinct names stay
    (["m", "m"], ["m#1", "m#2"]),
    (["m", "m", "m#1"], ["m#4", "m#2", "m#1"]),
    (["m#2", "m", "m", "m#3"], ["m#2", "m#6", "m#7", "m#3"]),
    (["x", "x", "x#2", "x#5"], ["x#1", "x#6", "x#2", "x#5"]),
])
def test_numbered_names_are_distinct_and_keep_every_given_name(names, expected):
    assert numbered_names(names) == expected
    assert len(set(expected)) == len(expected)


def test_a_file_named_like_a_numbered_stem_keeps_every_metric(tmp_path):
    for folder in ("e1", "e2"):
        (tmp_path / folder).mkdir()
        shutil.copy(f"{EXAMPLES}/metric_good.jsonl", tmp_path / folder / "m.jsonl")
    shutil.copy(f"{EXAMPLES}/metric_weak.csv", tmp_path / "m#1.csv")
    out = tmp_path / "compare.json"
    assert main(["meta-eval", "report", "--human", f"{EXAMPLES}/human.jsonl", "--metric", str(tmp_path / "e1/m.jsonl"),
                 "--metric", str(tmp_path / "e2/m.jsonl"), "--metric", str(tmp_path / "m#1.csv"), "--resamples", "0",
                 "--permutations", "10", "--json", str(out)]) == 0
    cells = json.loads(out.read_text())["cells"]
    assert len(cells) == 3
    tau_sum = {name: cell["tau_sum"]["value"] for name, cell in cells.items()}
    good = [value for name, value in tau_sum.items() if name != "m#1"]
    assert tau_sum["m#1"] < good[0] == good[1]  # m#1 is still the file called so (metric_weak)
