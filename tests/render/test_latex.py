"""Every LaTeX table the meta-evaluation writes compiles as is (with booktabs), including names that need
escaping. Compiled with pdflatex when a TeX engine is installed (`apt-get install texlive-latex-recommended`,
which .ci/run does when it can); without one the structural checks of each command's own tests remain."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from learned_metrics.meta_eval.confounders import confounders
from learned_metrics.meta_eval.data import read_scored_corpora
from learned_metrics.meta_eval.report import auc_report, correlation_report
from learned_metrics.meta_eval.systems import compare_systems, system_scores

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "meta_eval"
AWKWARD = ["A&B_50%", "x^2 {new}", "$cheap~#1", "back\\slash <v2>"]

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("pdflatex") is None, reason="no pdflatex (TeX not installed)")]


def latex_tables() -> dict[str, str]:
    rng = np.random.default_rng(0)
    quality = np.linspace(-1, 1, 6)[None, :] + rng.normal(0, 0.7, (20, 6))
    human = np.rint(quality * 2) / 2
    metrics = {name: quality + rng.normal(0, noise, quality.shape) for name, noise in zip(AWKWARD, (0.3, 0.6, 1.0,
                                                                                                    2.0), strict=True)}
    tables = {"report": correlation_report(human, metrics, resamples=50, permutations=50, workers=1).to_latex()}
    folders = [EXAMPLES / "true_scored" / name for name in ("nli_aug", "nli_base", "overlap")]
    scored = read_scored_corpora(folders, AWKWARD[:3], fmt="true", on_missing="drop")
    tables["auc_report"] = auc_report(scored, resamples=50, permutations=50)[0].to_latex()
    docs = [f"d{i}" for i in range(20) for _ in range(4)]
    systems = [AWKWARD[j] for _ in range(20) for j in range(4)]
    scores = system_scores(docs, systems, list(rng.normal(size=80)))
    tables["systems"] = compare_systems(scores, resamples=50, permutations=100).to_latex()
    rows = [json.loads(line) for line in (EXAMPLES / "confounders.jsonl").read_text().splitlines()]
    tables["confounders"] = confounders(rows, metric_fields=["score_nli", "score_overlap"], names=AWKWARD[:2],
                                        proxy_fields=["first_error"], resamples=20, by_label=True).to_latex()
    return tables


def test_every_latex_table_compiles(tmp_path):
    for name, table in latex_tables().items():
        (tmp_path / f"{name}.tex").write_text(table, encoding="utf-8")
        document = tmp_path / f"doc_{name}.tex"
        document.write_text("\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n"
                            f"\\input{{{name}.tex}}\n\\end{{document}}\n", encoding="utf-8")
        result = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", document.name],
                                cwd=tmp_path, capture_output=True, text=True, timeout=120)
        errors = [line for line in result.stdout.splitlines() if line.startswith("!")]
        assert result.returncode == 0, f"{name}: {errors or result.stdout[-2000:]}"
        assert (tmp_path / f"doc_{name}.pdf").stat().st_size > 1000
