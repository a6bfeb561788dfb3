"""Regression tests for what the docs, help texts and messages say about the code (issue 23 item 7).

Each test pins one fix: captions name bold only where a format shows it; ``load_scorer``'s docstring and
docs/scoring.md name every scoring option; the ``score`` help lists every input format; every ``--flag`` that a
message, help text or docstring of the package names is an option that exists.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import io
import json
import re
from pathlib import Path

import pytest

from learned_metrics.render import Cell, Column, Table
from learned_metrics.render.model import caption_text
from learned_metrics.render.terminal import print_tables
from learned_metrics.render.text import csv_text, latex_table, markdown_table

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "meta_eval"


def bold_table() -> Table:
    return Table([Column("metric", kind="text"), Column("tau")], [["a", Cell(0.5, bold=True)], ["b", 0.25]],
                 caption="Kendall tau-b.", bold="best per column")


@pytest.mark.parametrize(("render", "shown"), [
    (markdown_table, True),
    (latex_table, True),
    (csv_text, False),  # no caption, no bold
])
def test_file_formats_name_bold_only_where_they_show_it(render, shown):
    text = render(bold_table())
    assert ("Bold: best per column." in text) is shown
    assert "bold:" not in text  # the old wording, mid-caption in every format


def console(**options):
    from rich.console import Console

    return Console(file=io.StringIO(), width=100, **options)


def test_terminal_names_bold_only_when_it_shows_styles():
    plain, styled = console(), console(force_terminal=True, color_system="standard")
    print_tables(plain, [bold_table()])
    print_tables(styled, [bold_table()])
    assert "Bold" not in plain.file.getvalue()  # a pipe or a log: rich drops the style, so the caption must too
    assert "\x1b[1m" in styled.file.getvalue() and "Bold: best per column." in styled.file.getvalue()
    assert caption_text(bold_table(), shows_bold=False) == "Kendall tau-b."


def test_report_json_caption_has_no_bold_and_markdown_says_what_bold_means(tmp_path, capsys):
    from learned_metrics.cli import main

    out = tmp_path / "out"
    code = main(["meta-eval", "report", "--human", str(EXAMPLES / "human.jsonl"),
                 "--metric", str(EXAMPLES / "metric_good.jsonl"), "--metric", str(EXAMPLES / "metric_weak.csv"),
                 "--resamples", "20", "--permutations", "20", "--json", str(out / "r.json"),
                 "--markdown", str(out / "r.md"), "--csv", str(out / "r.csv")])
    printed = capsys.readouterr().out
    assert code == 0
    assert "bold" not in json.loads((out / "r.json").read_text())["caption"].lower()
    assert "bold" not in (out / "r.csv").read_text().lower()
    assert (out / "r.md").read_text().rstrip().endswith("Bold: best per column.")
    assert "**" in (out / "r.md").read_text()
    assert "bold" not in printed.lower()  # captured stdout is not a terminal: no styles, no "Bold" in the caption


def test_systems_pairs_caption_names_bold_only_in_formats_that_show_it():
    from learned_metrics.meta_eval.systems import compare_systems, read_system_scores

    result = compare_systems(read_system_scores([str(EXAMPLES / "metric_good.jsonl")]), baseline="M00",
                             resamples=20, permutations=20)
    assert "bold" not in result.to_json()["caption"].lower()
    pairs = next(t for t in result.tables() if t.key == "pairs")
    assert "bold" not in pairs.caption.lower() and "(*: < 0.05)" in pairs.caption
    assert "Bold: adjusted p < 0.05." in markdown_table(pairs)


def test_load_scorer_signature_and_docs_name_every_scoring_option():
    from learned_metrics.scoring.options import ScoringOptions
    from learned_metrics.scoring.scorer import Scorer, load_scorer

    fields = [f.name for f in dataclasses.fields(ScoringOptions)]
    assert "granularity" in fields
    assert [f for f in fields if f not in inspect.signature(load_scorer).parameters] == []  # help(load_scorer)
    scoring_md = (ROOT / "docs" / "scoring.md").read_text()
    listed = scoring_md[scoring_md.index("`load_scorer(model, *, kind=None, **options)`"):]
    listed = " ".join(listed[: listed.index("`Scorer.score(")].split())
    assert [f for f in fields if f"{f}=" not in listed] == []
    documented = " ".join(scoring_md[scoring_md.index("`Scorer.score("):].split(")`")[0].split())
    spelled = {name: f"*{name}" if param.kind is param.VAR_POSITIONAL else f"{name}="
               for name, param in inspect.signature(Scorer.score).parameters.items() if name != "self"}
    assert [p for p, spelling in spelled.items() if spelling not in documented] == []


def test_score_help_lists_every_input_format():
    from learned_metrics.cli import build_parser

    score = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert ".parquet" in score._choices_actions[[c.dest for c in score._choices_actions].index("score")].help
    kinds = next(a for a in score.choices["score"]._actions if isinstance(a, argparse._SubParsersAction))
    for kind, parser in kinds.choices.items():
        help_text = parser._option_string_actions["--input"].help
        assert all(suffix in help_text for suffix in (".jsonl", ".csv", ".parquet")), kind


def all_option_strings() -> set[str]:
    from learned_metrics.cli import build_parser
    from learned_metrics.cli.prep import add_anli_arguments, add_shuffle_set_arguments

    def walk(parser: argparse.ArgumentParser, found: set[str]) -> set[str]:
        found |= set(parser._option_string_actions)
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    walk(sub, found)
        return found

    found = walk(build_parser(), set())
    for add in (add_anli_arguments, add_shuffle_set_arguments):
        parser = argparse.ArgumentParser()
        add(parser)
        found |= set(parser._option_string_actions)
    return found


# Named in text, not options of ours: argparse's own wording in a docstring, accelerate's flag, wandb's macro.
NOT_OURS = {"--name-with-dashes", "--flag", "--key", "--num_processes"}


def test_every_flag_the_package_names_exists():
    """Error messages, help texts and docstrings (the export refusals among them) name only options that exist."""
    known = all_option_strings()
    missing = []
    for path in sorted((ROOT / "src" / "learned_metrics").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                for flag in re.findall(r"(?<![\w-])--[a-z][\w-]*[a-z0-9]", node.value):
                    if flag not in known and flag not in NOT_OURS:
                        missing.append(f"{path.relative_to(ROOT)}:{node.lineno}: {flag}")
    assert missing == []


def test_export_refusals_name_export_options():
    export_source = (ROOT / "src" / "learned_metrics" / "export.py").read_text()
    named = set(re.findall(r"(?<![\w-])--[a-z][\w-]*[a-z0-9]", export_source))
    assert named and named <= all_option_strings()
    assert {"--tokenizer", "--allow-pickle"} <= named
