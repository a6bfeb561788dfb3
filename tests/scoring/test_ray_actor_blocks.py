"""The Ray engine's actor (``ray_engine.ScoreBlocks``) scores a block as one process scores the same chunk, whatever
blocks it scored before: a block may land on any actor, after any other, or again after a retry. Called here as
Ray Data calls it, without a Ray instance.

Found before: with ``--mc-masks torch`` an actor took its base seed from its scorer's stream, which the previous
block had reseeded to that block's chunk seed, so a block's MC scores depended on the actor's history (up to 1e-3
apart on the tiny model, exit 0)."""

from __future__ import annotations

import numpy as np
import pytest
from hostile.test_resume_integrity import rows as pair_rows

from learned_metrics.scoring import load_scorer
from learned_metrics.scoring.mc_dropout import chunk_seed
from learned_metrics.scoring.options import ScoringOptions
from learned_metrics.scoring.runner import InputFields

pa = pytest.importorskip("pyarrow")
ray_engine = pytest.importorskip("learned_metrics.scoring.ray_engine")

CHUNK = 4


def _block(rows: list[dict], index: int):
    """Chunk ``index`` of ``rows`` as the driver hands it to the actor pool (row numbers and chunk index)."""
    first = index * CHUNK
    return pa.Table.from_pylist([{**row, ray_engine.ROW: first + i + 1, ray_engine._CHUNK: index}
                                 for i, row in enumerate(rows[first:first + CHUNK])])


@pytest.mark.parametrize("masks", ["torch", "per-row"])
def test_a_blocks_mc_scores_do_not_depend_on_what_its_actor_scored_before(tiny_deberta_nli, masks):
    rows = pair_rows(4 * CHUNK)
    options = ScoringOptions(mc_samples=3, seed=2, mc_masks=masks)

    def actor():
        return ray_engine.ScoreBlocks(str(tiny_deberta_nli), "faithfulness", options, InputFields("faithfulness"))

    busy, fresh = actor(), actor()
    for index in (1, 0):
        busy(_block(rows, index))
    after_others = busy(_block(rows, 3)).column("score").to_pylist()
    scored = fresh(_block(rows, 3))
    alone = scored.column("score").to_pylist()
    np.testing.assert_array_equal(after_others, alone)
    assert max(scored.column("score_std").to_pylist()) > 0  # control: the passes differed (MC dropout was on)
    # and what one process gives for that chunk (the runner seeds chunk 3 so under torch masks)
    scorer = load_scorer(tiny_deberta_nli, settings=options)
    seed = chunk_seed(2, 3) if masks == "torch" else 2
    chunk = rows[3 * CHUNK:]
    one = scorer.score(groundings=[r["grounding"] for r in chunk], generations=[r["generation"] for r in chunk],
                       seed=seed).scores
    np.testing.assert_allclose(alone, one, rtol=0, atol=1e-6)


def test_a_block_is_one_chunk_or_the_run_stops(tiny_deberta_nli):
    """A block's seed (torch masks) and its counters are its chunk's: a block holding rows of two chunks would seed
    the second chunk's rows with the first's seed and book its truncations there. Ray Data hands whole blocks
    (batch_size=None); should it join two, the actor stops the run instead of scoring it (nothing is written)."""
    rows = pair_rows(2 * CHUNK)
    actor = ray_engine.ScoreBlocks(str(tiny_deberta_nli), "faithfulness", ScoringOptions(), InputFields("faithfulness"),
                                   counts=True)
    one = actor(_block(rows, 0))  # control: one chunk's block is scored, its counters on its first row
    assert one.num_rows == CHUNK and '"rows": 4' in one.column(ray_engine._COUNTS)[0].as_py()
    joined = pa.concat_tables([_block(rows, 0), _block(rows, 1)])
    with pytest.raises(RuntimeError, match=r"joined chunks \[0, 1\]"):
        actor(joined)
