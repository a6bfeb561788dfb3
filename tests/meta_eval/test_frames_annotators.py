"""The API averages annotator rows like the CLI's loaders (issue 23 item 3): three annotators per (document, system)
in a long human DataFrame give what ``load_grid`` gives for the same rows in a file."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from learned_metrics.errors import UserError
from learned_metrics.meta_eval import bias_matrix, compare, correlations, load_grid
from learned_metrics.meta_eval.frames import input_grids

DOCS, SYSTEMS, ANNOTATORS = 8, 4, 3


def _rows(seed: int = 0):
    rng = np.random.default_rng(seed)
    human = [{"doc_id": f"d{d}", "system_id": f"s{s}", "annotator": a, "score": float(rng.integers(1, 6))}
             for d in range(DOCS) for s in range(SYSTEMS) for a in range(ANNOTATORS)]
    metric = [{"doc_id": f"d{d}", "system_id": f"s{s}", "score": float(rng.normal())}
              for d in range(DOCS) for s in range(SYSTEMS)]
    return human, metric


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_three_annotators_are_averaged_as_the_cli_averages_a_human_file(tmp_path):
    human, metric = _rows()
    grid = load_grid(_write(tmp_path / "human.jsonl", human), [_write(tmp_path / "metric.jsonl", metric)])
    human_frame = pd.DataFrame(human).drop(columns="annotator")
    api_human, api_metrics = input_grids(human_frame, {"metric": pd.DataFrame(metric)})
    np.testing.assert_allclose(api_human, grid.human)
    np.testing.assert_allclose(api_metrics["metric"], grid.metrics["metric"])
    by_hand = human_frame.groupby(["doc_id", "system_id"], sort=False)["score"].mean().unstack()
    np.testing.assert_allclose(api_human, by_hand.to_numpy())

    from_api = correlations(human_frame, pd.DataFrame(metric), resamples=50, seed=3)
    from_files = correlations(grid.human, grid.metrics["metric"], resamples=50, seed=3)
    assert from_api.stats == from_files.stats
    matrix = bias_matrix(human_frame, pd.DataFrame(metric))
    np.testing.assert_array_equal(matrix.pairs, bias_matrix(grid.human, grid.metrics["metric"], grid.systems).pairs)
    compare(human_frame, {"a": pd.DataFrame(metric), "b": pd.DataFrame(metric).assign(score=lambda f: -f.score)},
            resamples=10, permutations=10)


def test_an_annotator_without_a_score_is_left_out_of_the_mean():
    frame = pd.DataFrame({"doc_id": ["d0"] * 3 + ["d1"] * 3, "system_id": ["s0"] * 6,
                          "score": [1.0, np.nan, 3.0, 2.0, 2.0, 5.0]})
    human, _ = input_grids(frame, {})
    np.testing.assert_allclose(human[:, 0], [2.0, 3.0])


def test_a_metric_frame_still_needs_one_row_per_summary():
    human, metric = _rows()
    doubled = pd.concat([pd.DataFrame(metric), pd.DataFrame(metric).head(1)])
    with pytest.raises(UserError, match=r"more than one row for .*\(a metric needs one row per summary"):
        correlations(pd.DataFrame(human), doubled, resamples=10)
