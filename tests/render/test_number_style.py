"""``--number-style percent``: rates printed as the leaderboards and papers print them (x 100, one decimal), the
same in every table format; other numbers (counts, p-values, correlations) untouched."""

from __future__ import annotations

import csv
import io

from learned_metrics.render import Cell, Column, Table, in_percent
from learned_metrics.render.terminal import console, print_tables
from learned_metrics.render.text import csv_text, latex, markdown


def render_table(table: Table) -> str:
    buffer = io.StringIO()
    out = console(width=160)
    out.file = buffer
    print_tables(out, [table])
    return buffer.getvalue()


def _table() -> Table:
    columns = [Column("metric", kind="text"), Column("bacc", "BAcc", kind="estimate", share=True),
               Column("tau", kind="number"), Column("n", kind="count"), Column("p", kind="p")]
    rows = [["nli", Cell(0.74712, ci=(0.70018, 0.79051)), 0.41234, 120, 0.0312],
            ["overlap", Cell(None), -0.05, 80, None]]
    return Table(columns, rows, caption="Balanced accuracy.", key="demo")


def test_share_columns_become_percent_with_one_decimal_in_every_text_format():
    table = in_percent(_table())
    assert "74.7" in markdown([table]) and "[70.0, 79.1]" in markdown([table])
    assert "74.7" in latex([table]) and "[70.0, 79.1]" in latex([table])
    terminal = render_table(table)
    assert "74.7" in terminal and "[70.0, 79.1]" in terminal
    row = next(csv.DictReader(io.StringIO(csv_text(table))))
    assert float(row["bacc"]) == 74.712 and float(row["bacc_ci_low"]) == 70.018


def test_other_columns_and_missing_values_are_untouched():
    table = in_percent(_table())
    text = markdown([table])
    assert "0.412" in text and "0.0312" in text and "120" in text  # correlation, p-value, count as before
    assert "—" in text  # an undefined rate stays undefined
    assert table.caption == "Balanced accuracy. BAcc in percent."


def test_fractions_stay_the_default():
    """Control: without the style the same table prints fractions with three decimals."""
    text = markdown([_table()])
    assert "0.747" in text and "74.7" not in text


def test_a_table_without_rates_comes_back_unchanged():
    table = Table([Column("tau")], [[0.5]], caption="c")
    assert in_percent(table) is table


def test_every_meta_eval_command_takes_the_style_and_keeps_json_in_fractions(tmp_path):
    """The CLI's one output policy applies it: terminal, Markdown, LaTeX and CSV in percent, the JSON's numbers in
    fractions with the style recorded in its settings block."""
    import json
    from pathlib import Path

    from learned_metrics.cli import main

    true = Path(__file__).resolve().parents[2] / "examples" / "meta_eval" / "true_scored" / "nli_aug"
    out = {suffix: tmp_path / f"auc.{suffix}" for suffix in ("md", "tex", "csv", "json")}
    argv = ["meta-eval", "auc", "--format", "true", "--input", str(true), "--resamples", "20", "--markdown",
            str(out["md"]), "--latex", str(out["tex"]), "--csv", str(out["csv"]), "--json", str(out["json"]),
            "--on-missing", "drop"]  # the shipped summeval file holds duplicated rows
    assert main([*argv, "--number-style", "percent"]) == 0
    document = json.loads(out["json"].read_text())
    auc = document["mean"]["value"]
    assert 0 < auc < 1 and document["settings"]["number_style"] == "percent"
    shown = f"{auc * 100:.1f}"
    assert shown in out["md"].read_text() and shown in out["tex"].read_text()
    rows = list(csv.DictReader(io.StringIO(out["csv"].read_text())))
    assert max(float(r["auc"]) for r in rows) > 1  # CSV numbers x 100 too
    mean = next(r for r in rows if r["group"].startswith("mean"))["auc"]
    assert float(mean) == float(f"{auc * 100:.15g}") and len(mean) <= 17  # full precision, no x100 noise digits
    for path in out.values():
        path.unlink()
    assert main(argv) == 0  # control: the default stays fractions
    assert f"{auc:.3f}" in out["md"].read_text() and shown not in out["md"].read_text()
