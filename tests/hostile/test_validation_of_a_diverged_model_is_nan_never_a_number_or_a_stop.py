"""Rule: a validation whose model scores a row NaN (a diverged model) logs its target metrics (val/faithfulness_*,
val/shuffle_acc) as NaN, which the checkpoint monitor ranks worst; it never stops the run and never logs a number
computed from NaN scores (a NaN original counted as a lost shuffle comparison). Enforced in ``score_in_training``,
the one scoring path of both validation callbacks."""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import json
import math
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from learned_metrics.export import load_checkpoint
from learned_metrics.scoring.scorer import Scorer
from learned_metrics.train.run import train

ROOT = Path(__file__).resolve().parents[2]
LLM_AGGREFACT = ROOT / "examples" / "benchmarks" / "llm_aggrefact"
QUIET = ["trainer.enable_progress_bar=false", "callbacks.model_summary=null"]


def _diverge_at(monkeypatch, calls_to_spoil: set[int], how: str) -> list[int]:
    """The real scorer runs; its scores at the chosen calls (1-based) get NaN (every row, or the first only)."""
    real = Scorer.score_validated
    calls: list[int] = []

    def scored(self, **inputs):
        result = real(self, **inputs)
        calls.append(len(calls) + 1)
        if calls[-1] not in calls_to_spoil:
            return result
        scores = np.array(result.scores, dtype=np.float64)
        if how == "all":
            scores[:] = np.nan
        else:
            scores[0] = np.nan
        return dataclasses.replace(result, scores=scores)

    monkeypatch.setattr(Scorer, "score_validated", scored)
    return calls


@contextlib.contextmanager
def said_diverged(spoiled: set[int]):
    """A spoiled validation warns the user in one line per validation; the control run says no such thing."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    said = [w for w in caught if re.search(r"NaN or infinite \(it has diverged.*logged as NaN", str(w.message))]
    assert len(said) == len(spoiled), [str(w.message) for w in said]


def _logged(run_dir: Path, name: str) -> list[dict[str, str]]:
    with (run_dir / "csv" / "metrics.csv").open() as handle:
        return [row for row in csv.DictReader(handle) if row.get(name)]


@pytest.mark.parametrize("spoiled, how", [(set(), "all"), ({2}, "all"), ({2}, "one")],
                         ids=["control", "every-row-nan", "one-row-nan"])
@pytest.mark.slow
def test_faithfulness_validation_of_a_diverged_model(train_config, tiny_deberta_nli, nli_data_dir, monkeypatch,
                                                     spoiled, how):
    calls = _diverge_at(monkeypatch, spoiled, how)
    cfg = train_config("experiment=nli_demo", f"model.name_or_path={tiny_deberta_nli}", "model.head_labels=null",
                       f"data.path={nli_data_dir}", f"faithfulness_benchmark={LLM_AGGREFACT}",
                       "callbacks.faithfulness_validation.max_rows_per_dataset=4", "trainer.max_steps=6",
                       "val_every_n_steps=2", "trainer.num_sanity_val_steps=0", *QUIET)
    with said_diverged(spoiled):
        train(cfg)  # the run finishes and exports
    run_dir = Path(cfg.paths.output_dir)
    rows = _logged(run_dir, "val/faithfulness_auc")[:-1]  # the last: the kept checkpoint again
    assert len(rows) == 3 and len(calls) >= 3
    aucs = [float(r["val/faithfulness_auc"]) for r in rows]
    assert [math.isnan(v) for v in aucs] == [i + 1 in spoiled for i in range(3)]
    assert all(math.isnan(float(r["val/faithfulness_bacc"])) == math.isnan(float(r["val/faithfulness_auc"]))
               for r in rows)
    finite = [i for i, v in enumerate(aucs) if not math.isnan(v)]
    best = max(finite, key=lambda i: (aucs[i], -i))
    card = json.loads((run_dir / "export" / "learned_metric.json").read_text())
    assert card["selection"]["best_value"] == pytest.approx(aucs[best])
    assert load_checkpoint(card["source_checkpoint"])["global_step"] == int(rows[best]["step"]) + 1


@pytest.mark.parametrize("spoiled, how", [(set(), "all"), ({1}, "all"), ({1}, "one")],
                         ids=["control", "every-row-nan", "one-row-nan"])
@pytest.mark.slow
def test_shuffle_validation_of_a_diverged_model(train_config, tiny_roberta, ccl_data_dir, monkeypatch, spoiled,
                                                how):
    _diverge_at(monkeypatch, spoiled, how)
    cfg = train_config("experiment=ccl_demo", f"model.name_or_path={tiny_roberta}", f"data.path={ccl_data_dir}",
                       "trainer.max_epochs=2", "trainer.num_sanity_val_steps=0",
                       "callbacks.model_checkpoint.monitor=val/shuffle_acc", *QUIET)
    with said_diverged(spoiled):
        train(cfg)
    run_dir = Path(cfg.paths.output_dir)
    values = [float(r["val/shuffle_acc"]) for r in _logged(run_dir, "val/shuffle_acc")]
    assert len(values) == 3
    assert [math.isnan(v) for v in values[:2]] == [i + 1 in spoiled for i in range(2)]
    finite = [v for v in values[:2] if not math.isnan(v)]
    assert values[-1] == pytest.approx(max(finite))  # the kept checkpoint is the best finite validation
