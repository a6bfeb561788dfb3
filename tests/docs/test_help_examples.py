"""Every example in a ``--help`` epilog runs as shown (or, for a user's own files, parses), like the docs' examples:
an example on the shipped files that fails is a user's first error."""

from __future__ import annotations

import argparse

import pytest

from docs import test_examples as doc_examples
from docs.test_examples import Context, check_doc, extract_commands
from learned_metrics.cli import build_parser

workdir = doc_examples.workdir  # the docs examples' fixture: a folder that sees examples/ and takes every output


def epilogs(parser: argparse.ArgumentParser, prog: str = "learned-metrics") -> dict[str, str]:
    """Every (sub)command's epilog by its command line."""
    found = {prog: parser.epilog} if parser.epilog else {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.update(epilogs(sub, f"{prog} {name}"))
    return found


def examples(epilog: str) -> str:
    """The example lines of an epilog (a ``learned-metrics`` line and its continuations) as a bash block."""
    lines, keep = [], False
    for line in epilog.splitlines():
        keep = line.startswith("  learned-metrics ") or (keep and lines[-1].endswith("\\"))
        if keep:
            lines.append(line.strip())
    return "```bash\n" + "\n".join(lines) + "\n```\n" if lines else ""


# The reader's own files that help examples name (a model folder, the outputs to score and what that writes).
HELP_PLACEHOLDERS = {"DIR", "outputs.jsonl", "scored.jsonl", "scored_coherence.jsonl", "summaries.csv", "frank.csv"}
HELP = {prog: examples(epilog) for prog, epilog in epilogs(build_parser()).items()}


def test_the_examples_are_found():
    """Control: the extraction finds the examples (a changed epilog layout would silently check nothing)."""
    with_examples = [prog for prog, block in HELP.items() if block]
    assert {"learned-metrics meta-eval auc", "learned-metrics meta-eval report",
            "learned-metrics score faithfulness"} <= set(with_examples)
    assert len(extract_commands(HELP["learned-metrics meta-eval auc"])) == 3  # 2 + the TRUE format's
    assert [c.argv for c in extract_commands(examples("x `learned-metrics z`\n  learned-metrics a \\\n      --b c\n"
                                                       "not this\n"))] == [["learned-metrics", "a", "--b", "c"]]


@pytest.mark.slow
@pytest.mark.parametrize("prog", sorted(prog for prog, block in HELP.items() if block))
def test_help_examples_run_as_shown(prog, workdir, capsys, coherence_export, nli_export, monkeypatch):
    monkeypatch.setattr(doc_examples, "PLACEHOLDER_INPUTS", doc_examples.PLACEHOLDER_INPUTS | HELP_PLACEHOLDERS)
    ctx = Context(models={"coherence": coherence_export, "faithfulness": nli_export}, capsys=capsys)
    check_doc(extract_commands(HELP[prog], f"{prog} --help"), ctx)
