"""The shipped meta-eval example files are what examples/meta_eval/make_examples.py makes: the script runs (it had
stopped importing when two helpers moved modules) and reproduces every file byte for byte."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "meta_eval"


def test_make_examples_reproduces_the_shipped_files(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["make_examples.py", "--out", str(tmp_path)])
    runpy.run_path(str(EXAMPLES / "make_examples.py"), run_name="__main__")
    made = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert made, "the script wrote nothing"
    for name in made:
        assert (tmp_path / name).read_bytes() == (EXAMPLES / name).read_bytes(), name
