"""Rule: every command's --help shows its text as written. argparse %-formats ``help=`` strings (so they write
``%%`` for a percent sign) but prints an epilog or a description as is unless it names ``%(prog)``, so an epilog
that writes ``%%`` shows a doubled percent sign."""

from __future__ import annotations

import argparse

import pytest

from learned_metrics.cli import build_parser


def _parsers(parser: argparse.ArgumentParser, name: str = "learned-metrics") -> dict[str, argparse.ArgumentParser]:
    found = {name: parser}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub, child in action.choices.items():
                found.update(_parsers(child, f"{name} {sub}"))
    return found


PARSERS = _parsers(build_parser())


@pytest.mark.parametrize("name", sorted(PARSERS))
def test_help_never_shows_a_doubled_percent_sign(name):
    assert "%%" not in PARSERS[name].format_help()


def _shown(name: str) -> str:
    return " ".join(PARSERS[name].format_help().split())  # wrapped to the terminal's width


def test_percent_signs_are_shown_once_in_help_and_epilog():
    # controls: a help= string that writes %% (the meta-eval listing) and an epilog that means one percent sign
    assert "with bootstrap 95% CIs" in _shown("learned-metrics meta-eval")
    assert "95% percentile bootstrap CI" in _shown("learned-metrics meta-eval systems")


def test_every_command_is_walked():
    assert {"learned-metrics score", "learned-metrics meta-eval systems", "learned-metrics prep"} <= set(PARSERS)
