"""Names in benchmark results say what they are: a metric is named after the metric, not the benchmark, in the
folder layout the docs recommend (``out/nli/llm_aggrefact``), and the command says which names it used and how to
set them; AggreFact's datasets are printed as its tables name them (AggreFact-CNN, AggreFact-XSum)."""

from __future__ import annotations

import pandas as pd

from learned_metrics.cli import main
from learned_metrics.meta_eval.benchmarks_io import read_benchmark
from meta_eval.test_benchmark import write_layout


def test_a_folder_named_after_the_benchmark_is_named_after_the_folder_above(tmp_path):
    nli = write_layout("llm-aggrefact", tmp_path / "out" / "nli" / "llm_aggrefact")
    overlap = write_layout("llm-aggrefact", tmp_path / "out" / "overlap" / "LLM-AggreFact", seed=0)
    assert list(read_benchmark([nli, overlap], score_fields=["score", "score_b"]).scores) == ["nli", "overlap"]


def test_a_folder_named_after_the_metric_keeps_its_name(tmp_path):
    """Control: only a benchmark's name is passed over."""
    mine = write_layout("llm-aggrefact", tmp_path / "my_metric")
    assert list(read_benchmark([mine]).scores) == ["my_metric"]


def test_the_command_says_which_names_it_used_and_how_to_set_them(tmp_path, capsys):
    nli = write_layout("llm-aggrefact", tmp_path / "out" / "nli" / "llm_aggrefact")
    argv = ["meta-eval", "benchmark", "--metric", str(nli), "--threshold-protocol", "fixed", "--resamples", "10"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert f"note: metric names: nli ({nli}); --names A,B,... sets them" in out.replace("\n", " ").replace("  ", " ")
    assert main([*argv, "--names", "mine"]) == 0  # control: names given, nothing to say
    assert "metric names:" not in capsys.readouterr().out


def test_aggrefact_datasets_are_named_as_its_tables(tmp_path):
    path = tmp_path / "aggre_fact_final.csv"
    write_layout("aggrefact", tmp_path)
    frame = pd.read_csv(path)
    frame["origin"] = ["cnndm" if i % 2 else "xsum" for i in range(len(frame))]
    frame.to_csv(path, index=False)
    assert set(read_benchmark([path]).datasets) == {"AggreFact-CNN", "AggreFact-XSum"}
    # control: another grouping field is read as it is
    assert set(read_benchmark([path], group_field="origin").datasets) == {"cnndm", "xsum"}
