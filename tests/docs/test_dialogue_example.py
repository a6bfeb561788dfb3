"""The dialogue example of docs/benchmarks.md: its pandas step and the shipped stand-ins agree.

The docs' worked example scores ``examples/benchmarks/dialogue/true/begin_download.csv`` and says it is what
the doc's pandas step writes from ``begin_style.csv`` (knowledge, a newline, the history as the grounding).
Both claims are checked here: the step is run as written, and the generator rewrites the shipped files.
"""

from __future__ import annotations

import importlib.util
import random
import re
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
DIALOGUE = ROOT / "examples" / "benchmarks" / "dialogue"
SECTION = "## Dialogue: knowledge and history as the grounding"


def pandas_step() -> str:
    """The one python block of the dialogue section."""
    text = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    section = text[text.index(SECTION):]
    section = section[: section.index("\n## ", 1)]
    (block,) = re.findall(r"^```python\n(.*?)^```", section, re.S | re.M)
    return block


def run_step(tmp_path: Path, monkeypatch, source: Path) -> pd.DataFrame:
    (tmp_path / "examples" / "benchmarks" / "dialogue").mkdir(parents=True)
    (tmp_path / "examples" / "benchmarks" / "dialogue" / "begin_style.csv").write_bytes(source.read_bytes())
    monkeypatch.chdir(tmp_path)
    exec(compile(pandas_step(), "docs/benchmarks.md", "exec"), {})
    return pd.read_csv(tmp_path / "begin_download.csv")


def test_doc_pandas_step_writes_the_shipped_true_file(tmp_path, monkeypatch):
    written = run_step(tmp_path, monkeypatch, DIALOGUE / "begin_style.csv")
    shipped = pd.read_csv(DIALOGUE / "true" / "begin_download.csv")
    assert list(shipped.columns) == ["grounding", "generated_text", "label"]
    pd.testing.assert_frame_equal(written, shipped)
    assert shipped["grounding"].str.contains("\nUser: ").all()  # the history is in the grounding


def test_a_changed_dialogue_file_is_caught(tmp_path, monkeypatch):
    """Control: the comparison above fails when the knowledge/history file and the TRUE file disagree."""
    edited = pd.read_csv(DIALOGUE / "begin_style.csv")
    edited.loc[0, "history"] = "User: something else"
    source = tmp_path / "edited.csv"
    edited.to_csv(source, index=False)
    written = run_step(tmp_path, monkeypatch, source)
    shipped = pd.read_csv(DIALOGUE / "true" / "begin_download.csv")
    assert not written.equals(shipped)
    assert written.drop(index=0).equals(shipped.drop(index=0))


def test_generator_rewrites_the_shipped_files(tmp_path):
    spec = importlib.util.spec_from_file_location("make_dialogue", ROOT / "examples/benchmarks/make_dialogue.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rows = module.dialogue_rows(48, random.Random(module.SEED))
    module.write_csv(tmp_path / "begin_style.csv", rows)
    module.write_csv(tmp_path / "begin_download.csv", module.true_layout(rows))
    assert (tmp_path / "begin_style.csv").read_bytes() == (DIALOGUE / "begin_style.csv").read_bytes()
    assert (tmp_path / "begin_download.csv").read_bytes() == (DIALOGUE / "true" / "begin_download.csv").read_bytes()
    assert {row["label"] for row in rows} == {0, 1}
