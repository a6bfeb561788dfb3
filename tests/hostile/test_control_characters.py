"""Names are shown literally in every rendered output: a group, system or experiment name read from a file that
holds control characters (an escape sequence, a bell, a NUL, a C1 control, a line break or a tab) reaches the
terminal, Markdown, LaTeX, figures and error lines as text (``\\x1b``; line breaks and tabs as spaces, but a figure
keeps a line break: ``learned_metrics.io.shown_text``), never as bytes a terminal obeys (colours, a cleared screen,
a rewritten title), a broken table row, an invalid LaTeX character or a font warning. JSON and CSV keep the name
exactly (they quote it themselves)."""

from __future__ import annotations

import csv
import json
import warnings
from pathlib import Path

import pytest

from learned_metrics.cli import main
from learned_metrics.io import shown_text
from learned_metrics.render.formats import latex_escape, markdown_escape

ESCAPE = "c\x1b[31mRED\x1b[0m"  # colours the rest of a terminal red
HOSTILE = {ESCAPE: "c\\x1b[31mRED\\x1b[0m", "bell\x07": "bell\\x07", "n\x00ul": "n\\x00ul", "c1\x9b2J": "c1\\x9b2J",
           "line\nbreak": "line break", "tab\there": "tab here", "del\x7f": "del\\x7f"}
PLAIN = {"corpus a": "corpus a", "naïve — ok": "naïve — ok"}  # the control: unchanged


def controls(text: str) -> list[str]:
    """The control characters in ``text`` other than the line breaks between lines."""
    return [ch for ch in text if (ord(ch) < 32 and ch != "\n") or 0x7F <= ord(ch) <= 0x9F]


@pytest.mark.parametrize("name, shown", [*HOSTILE.items(), *PLAIN.items()])
def test_shown_text_rule(name, shown):
    assert shown_text(name) == shown and not controls(shown_text(name))


def scored_rows(path: Path, names: list[str]) -> Path:
    with path.open("w", encoding="utf-8") as handle:
        for index in range(20 * len(names)):
            name = names[index // 20]
            handle.write(json.dumps({"id": index, "doc": index % 20, "score": (index * 37 % 101) / 101,
                                     "label": index % 2, "corpus": name, "system": name}) + "\n")
    return path


@pytest.mark.parametrize("names", [HOSTILE, PLAIN], ids=["hostile", "control"])
@pytest.mark.slow
def test_meta_eval_tables_show_names_literally_in_every_format(tmp_path, capsys, names):
    source = scored_rows(tmp_path / "scores.jsonl", list(names))
    out = {fmt: tmp_path / f"t.{fmt}" for fmt in ("json", "md", "tex", "csv")}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a font warning for a control character's missing glyph fails here
        assert main(["meta-eval", "auc", "--input", str(source), "--group-field", "corpus", "--system-field",
                     "system", "--json", str(out["json"]), "--markdown", str(out["md"]), "--latex", str(out["tex"]),
                     "--csv", str(out["csv"]), "--plot", str(tmp_path / "p.png"),
                     "--roc-plot", str(tmp_path / "r.png")]) == 0
    captured = capsys.readouterr()
    for text in (captured.out, captured.err, out["md"].read_text(), out["tex"].read_text()):
        assert not controls(text)
    assert all(shown in captured.out for shown in names.values())
    assert all(markdown_escape(name) in out["md"].read_text() for name in names)  # e.g. c\\x1b[31m...
    assert all(latex_escape(name) in out["tex"].read_text() for name in names)  # e.g. c\textbackslash{}x1b...
    assert "unexpected warning" not in captured.err and "Glyph" not in captured.err
    assert sorted(json.loads(out["json"].read_text())["groups"]) == sorted(names)  # JSON keeps the names exactly
    with out["csv"].open(newline="", encoding="utf-8") as handle:
        assert {row["group"] for row in csv.DictReader(handle)} >= set(names)  # and so does CSV


def test_figures_draw_names_literally(tmp_path):
    import matplotlib.pyplot as plt
    import matplotlib.text
    import numpy as np

    from learned_metrics.render.figures import roc_figure, score_histogram_figure

    names = [*HOSTILE, *PLAIN]
    groups = [name for name in names for _ in range(20)]
    labels = np.tile([1, 0], 10 * len(names))
    scores = np.linspace(0, 1, labels.size)
    for figure in (roc_figure(scores, labels, groups), score_histogram_figure(scores, labels, groups)):
        drawn = [t.get_text() for t in figure.findobj(matplotlib.text.Text) if t.get_text()]
        assert not [text for text in drawn if controls(text)]
        shown = ["\n".join(map(shown_text, name.split("\n"))) for name in names]  # a figure keeps line breaks
        assert all(any(name in text for text in drawn) for name in shown)
        plt.close(figure)


@pytest.mark.parametrize("name", [ESCAPE, "n\x00ul", "plain"], ids=["escape", "nul", "control"])
def test_runs_list_shows_names_literally(tmp_path, capsys, name):
    run = tmp_path / "checkpoints" / "exp" / "run"
    run.mkdir(parents=True)
    (run / "run_info.json").write_text(json.dumps({"experiment": name, "git_commit": "abc", "config": {"seed": 1}}))
    assert main(["runs", "list", str(tmp_path / "checkpoints"), "--json", str(tmp_path / "runs.json")]) == 0
    out = capsys.readouterr().out
    assert not controls(out) and shown_text(name) in out
    assert json.loads((tmp_path / "runs.json").read_text())[0]["experiment"] == name


@pytest.mark.parametrize("name", [ESCAPE, "line\nbreak", "plain"], ids=["escape", "line-break", "control"])
def test_an_error_naming_a_value_from_a_file_is_one_literal_line(tmp_path, capsys, name):
    """``--baseline`` names a system the file lacks: the refusal lists the file's systems, one of them hostile."""
    source = scored_rows(tmp_path / "scores.jsonl", [name, "other"])
    assert main(["meta-eval", "systems", "--input", str(source), "--doc-field", "doc", "--system-field", "system",
                 "--baseline", "missing"]) != 0
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "error" in line]
    assert len(lines) == 1 and len(err.strip().splitlines()) == 1, err
    assert not controls(err) and shown_text(name) in lines[0]


@pytest.mark.parametrize("systems", [["[/]", "[bold red]x", ESCAPE], ["system a", "system b"]],
                         ids=["markup-and-escape", "control"])
def test_score_summary_table_shows_system_names_literally(tiny_deberta_nli, tmp_path, capsys, systems):
    """rich reads ``[/]`` in a plain string as a closing tag: the summary table after scoring was a traceback."""
    source = tmp_path / "pairs.jsonl"
    source.write_text("".join(json.dumps({"grounding": "A cat sat on the mat.", "generation": "A cat sat.",
                                          "system": system}) + "\n" for system in systems * 2), encoding="utf-8")
    assert main(["score", "faithfulness", "--model", str(tiny_deberta_nli), "--input", str(source), "--output",
                 str(tmp_path / "scored.jsonl"), "--system-field", "system", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert not controls(err) and all(shown_text(system) in err for system in systems)


@pytest.mark.parametrize("name", [ESCAPE, "plain model"], ids=["escape", "control"])
def test_captions_show_names_literally_in_every_format(name):
    """A caption names what made the scores (a model path from a provenance sidecar): shown, never obeyed."""
    from learned_metrics.render.model import Column, Table
    from learned_metrics.render.text import latex, markdown

    table = Table([Column("group", kind="text")], [], caption=f"Scores by {name}.")
    for text in (markdown([table]), latex([table])):
        assert not controls(text)
    assert shown_text(name) in markdown([table])
