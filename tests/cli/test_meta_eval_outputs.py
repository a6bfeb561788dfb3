"""Every meta-eval output describes itself: the JSON settings block of every subcommand, captions that name the
coefficient, renderers that escape names, and the provenance of scored files read back through meta-eval."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from pathlib import Path

import pytest

from learned_metrics.cli import main
from learned_metrics.render import Cell, Column, Table
from learned_metrics.render.formats import format_p
from learned_metrics.render.text import csv_text, latex_table, markdown_table

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "meta_eval"
GRID = ["--human", str(EXAMPLES / "human.jsonl"), "--metric", str(EXAMPLES / "metric_good.jsonl")]
TRUE = EXAMPLES / "true_scored"

# subcommand, its arguments, the inputs it reads, the settings it must record
SUBCOMMANDS = {
    "correlations": (GRID + ["--resamples", "20", "--coefficient", "spearman"], ["human.jsonl", "metric_good.jsonl"],
                     {"coefficient": "spearman", "resamples": 20, "resample": "both", "seed": 0, "confidence": 0.95}),
    "compare": (GRID + ["--metric", str(EXAMPLES / "metric_weak.csv"), "--permutations", "20", "--resamples", "10",
                        "--stats", "tau_sys,tau_pair", "--workers", "1"],
                ["human.jsonl", "metric_good.jsonl", "metric_weak.csv"],
                {"permutations": 20, "resamples": 10, "alternative": "greater", "correction": "holm",
                 "stats": ["tau_sys", "tau_pair"]}),
    "report": (GRID + ["--metric", str(EXAMPLES / "metric_weak.csv"), "--resamples", "10", "--permutations", "10",
                       "--stats", "tau_sys", "--workers", "1", "--seed", "4"],
               ["human.jsonl", "metric_good.jsonl", "metric_weak.csv"],
               {"resamples": 10, "permutations": 10, "seed": 4, "alpha": 0.05, "test": "permutation"}),
    "system-level": (GRID + ["--delta-band", "0", "inf", "--resamples", "10"], ["human.jsonl", "metric_good.jsonl"],
                     {"resamples": 10, "coefficient": "kendall", "delta_band": [[0.0, None]]}),
    "systems": (["--input", str(EXAMPLES / "metric_good.jsonl"), "--resamples", "10", "--permutations", "50"],
                ["metric_good.jsonl"], {"resamples": 10, "permutations": 50, "correction": "holm"}),
    "confounders": (["--input", str(EXAMPLES / "confounders.jsonl"), "--metric-field", "score_nli", "--resamples",
                     "10", "--first-person", "i"], ["confounders.jsonl"],
                    {"resamples": 10, "first_person": "i", "correction": "holm"}),
    "bias-matrix": (GRID, ["human.jsonl", "metric_good.jsonl"], {"on_missing": "error"}),
    "auc": (["--format", "true", "--input", str(TRUE / "nli_aug"), "--resamples", "10", "--on-missing", "drop"],
            ["frank_valid_download.csv", "paws_download.csv", "summeval_download.csv"],
            {"format": "true", "resamples": 10}),
    "shuffle-test": (["--input", str(EXAMPLES / "shuffle.jsonl"), "--resamples", "10"], ["shuffle.jsonl"],
                     {"resamples": 10, "seed": 0}),
    "benchmark": (["--metric", str(EXAMPLES.parent / "benchmarks" / "scored_overlap" / "summac"),
                   "--threshold-protocol", "tune-on-val", "--grid", "fixed-0.001", "--resamples", "10"],
                  ["summac_test.jsonl", "summac_val.jsonl"],
                  {"threshold_protocol": "tune-on-val", "grid": "fixed-0.001", "resamples": 10, "layout": "auto",
                   "threshold": None}),
}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("command", list(SUBCOMMANDS))
@pytest.mark.slow
def test_every_subcommand_writes_a_settings_block(command, tmp_path, capsys):
    arguments, inputs, expected = SUBCOMMANDS[command]
    out = tmp_path / "out.json"
    assert main(["meta-eval", command, *arguments, "--json", str(out)]) == 0
    settings = json.loads(out.read_text())["settings"]
    assert settings["command"].startswith(f"learned-metrics meta-eval {command} ")
    assert f"--json {out}" in settings["command"]
    assert settings["learned_metrics_version"]
    for key, value in expected.items():
        assert settings[key] == value, key
    recorded = {Path(item["path"]).name: item for item in settings["inputs"]}
    assert sorted(recorded) == sorted(inputs)
    for item in recorded.values():
        path = Path(item["path"])
        assert item["size"] == path.stat().st_size and item["sha256"] == sha256(path)


def test_a_pearson_run_is_labelled_r_everywhere(tmp_path, capsys):
    outputs = {kind: tmp_path / f"t.{kind}" for kind in ("json", "markdown", "latex")}
    assert main(["meta-eval", "report", *GRID, "--coefficient", "pearson", "--resamples", "10", "--stats",
                 "tau_sys,tau_pair,acc_pair", *(x for kind, p in outputs.items() for x in (f"--{kind}", str(p)))]) == 0
    printed = capsys.readouterr().out
    assert "r_sys" in printed and "tau_sys" not in printed and "Pearson r" in printed
    markdown = outputs["markdown"].read_text()
    assert "| r_sys | r_pair | acc_pair |" in markdown and "tau" not in markdown
    latex = outputs["latex"].read_text()
    assert r"$r_{sys}$" in latex and r"\tau" not in latex and "Pearson r" in latex
    data = json.loads(outputs["json"].read_text())
    assert data["settings"]["coefficient"] == "pearson" and data["settings"]["labels"]["tau_sys"] == "r_sys"
    assert list(data["cells"]["metric_good"]) == ["tau_sys", "tau_pair", "acc_pair"]  # JSON keys stay stable


def test_compare_counts_resamples_and_permutations_apart_and_keeps_the_old_spelling(tmp_path, capsys):
    out = tmp_path / "c.json"
    base = ["meta-eval", "compare", *GRID, "--metric", str(EXAMPLES / "metric_weak.csv"), "--stats", "tau_sys",
            "--permutations", "30", "--workers", "1"]
    assert main([*base, "--resamples", "7", "--json", str(out)]) == 0
    first = json.loads(out.read_text())["tau_sys"][0]
    assert first["permutations"] == 30 and first["resamples"] == 7
    capsys.readouterr()
    old = tmp_path / "old.json"
    assert main([*base, "--bootstrap-resamples", "9", "--json", str(old)]) == 0
    err = capsys.readouterr().err
    assert "--bootstrap-resamples is deprecated" in err and "use --resamples" in err
    assert json.loads(old.read_text())["tau_sys"][0]["resamples"] == 9


# --- renderers --------------------------------------------------------------------------------


def hostile_table(wide: bool = False) -> Table:
    names = ["a|b", "line\nbreak", "50% & $x_1$ {#}"]
    columns = [Column("#", kind="count"), Column("metric", kind="text"), Column("tau", kind="estimate"),
               Column("p", kind="p")]
    if wide:
        columns += [Column(f"extra_{i}", kind="estimate") for i in range(6)]
    rows = [[i + 1, name, Cell(-0.25 * i, (-0.5, 0.1), bold=i == 0, marks=("2",) if i == 0 else ()), 0.00001,
             *([Cell(-0.123, (-0.2, -0.1))] * 6 if wide else [])] for i, name in enumerate(names)]
    return Table(columns, rows, caption="A caption with 5% and a_b.", key="my table", mark_names=names)


def test_markdown_escapes_pipes_and_line_breaks_in_names():
    text = markdown_table(hostile_table())
    lines = [line for line in text.splitlines() if line.startswith("|")]
    assert all(line.count("|") - line.count("\\|") == 5 for line in lines)  # 4 columns: every row 5 bars
    assert r"a\|b" in text and "line break" in text and "**0.000**<sup>2</sup>" in text


def test_latex_escapes_names_uses_a_real_minus_a_label_and_table_star_when_wide():
    narrow = latex_table(hostile_table())
    assert r"50\% \& \$x\_1\$ \{\#\}" in narrow and "line break" in narrow
    assert "$-$0.250" in narrow and "[$-$0.500, 0.100]" in narrow and " -0." not in narrow
    assert r"\label{tab:my-table}" in narrow and r"\begin{table}[t]" in narrow
    plain = re.sub(r"\\[{}&%_$#]", "", narrow)
    assert plain.count("{") == plain.count("}")
    wide = latex_table(hostile_table(wide=True))
    assert r"\begin{table*}[t]" in wide and wide.rstrip().endswith(r"\end{table*}")


def test_p_values_print_in_one_format_in_every_renderer(capsys):
    from learned_metrics.render.terminal import console, rich_table

    table = hostile_table()
    console(width=200).print(rich_table(table))
    shown = format_p(0.00001)
    assert shown == "1.0e-05"
    assert shown in capsys.readouterr().out and shown in markdown_table(table)
    assert shown.replace("-", "$-$") in latex_table(table)
    header, first, *_ = csv.reader(io.StringIO(csv_text(table)))
    assert first[header.index("p")] == "1e-05" and first[header.index("tau")] == "0"  # full precision, no -0
    assert first[header.index("tau_better_than")] == "line\nbreak"  # marks as the names of the rows beaten


# --- provenance of scored files, read back through meta-eval ----------------------------------------


@pytest.fixture(scope="module")
def scored_twice(tmp_path_factory, nli_export):
    """The same labelled pairs scored deterministically and with 3 MC passes."""
    folder = tmp_path_factory.mktemp("scored")
    rows = [{"id": i, "corpus": "c1" if i % 2 else "c2", "label": i % 3 != 0,
             "grounding": f"Anna bought {i} apples at the market on Monday.",
             "generation": f"Anna bought {i if i % 3 else i + 1} apples."} for i in range(12)]
    source = folder / "pairs.jsonl"
    source.write_text("".join(json.dumps({**r, "label": int(r["label"])}) + "\n" for r in rows))
    outputs = {}
    for name, passes in (("deterministic", "1"), ("mc", "3")):
        outputs[name] = folder / f"{name}.jsonl"
        assert main(["score", "faithfulness", "--model", str(nli_export), "--input", str(source), "--output",
                     str(outputs[name]), "--mc-samples", passes, "--quiet"]) == 0
    return outputs


def test_meta_eval_reads_provenance_into_captions_and_json_and_warns_on_different_settings(scored_twice, tmp_path,
                                                                                           capsys, nli_export):
    out, md = tmp_path / "auc.json", tmp_path / "auc.md"
    capsys.readouterr()
    assert main(["meta-eval", "report", "--auc", "--metric", str(scored_twice["deterministic"]), "--metric",
                 str(scored_twice["mc"]), "--group-field", "corpus", "--resamples", "10", "--permutations", "10",
                 "--json", str(out), "--markdown", str(md)]) == 0
    printed = capsys.readouterr().out
    assert "warning: deterministic.jsonl and mc.jsonl were scored with different settings: mc_samples 1 vs 3" \
        in " ".join(printed.split())
    inputs = {Path(item["path"]).name: item for item in json.loads(out.read_text())["settings"]["inputs"]}
    assert inputs["mc.jsonl"]["provenance"]["mc_samples"] == 3
    assert inputs["deterministic.jsonl"]["provenance"]["mc_samples"] == 1
    assert inputs["mc.jsonl"]["provenance"]["model"] == str(Path(nli_export).resolve())
    caption = md.read_text()
    assert "mc.jsonl: scored with model" in caption and "MC K=3" in caption and "faithfulness e-c" in caption
