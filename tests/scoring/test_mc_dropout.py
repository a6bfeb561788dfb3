"""Per-row Monte-Carlo dropout masks (scoring/mc_dropout.py): a row's MC score is a function of the seed and the
row alone, not of the rows beside it, the batch budget, the chunk or the process that scores it."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from tiny_models import GENERATIONS, GROUNDINGS

from learned_metrics.cli import main
from learned_metrics.scoring import load_scorer
from learned_metrics.scoring.mc_dropout import KeyedDropout, mc_dropout_mode, row_keys

MORE_GROUNDINGS = GROUNDINGS * 3
MORE_GENERATIONS = [f"{g} {'Really.' * i}" for i, g in enumerate(GENERATIONS * 3)]


def _mc(model, groundings, generations, **options):
    scorer = load_scorer(model, mc_samples=6, seed=11, **options)
    return scorer.score(groundings=groundings, generations=generations)


@pytest.mark.parametrize("model", ["tiny_roberta_nli", "tiny_deberta_nli"])
@pytest.mark.slow
def test_a_rows_mc_score_does_not_depend_on_its_batch(request, model):
    path = request.getfixturevalue(model)
    scorer = load_scorer(path, mc_samples=6, seed=11)  # one load: a call repeats its masks (test below)
    together = scorer.score(groundings=MORE_GROUNDINGS, generations=MORE_GENERATIONS)
    alone = [scorer.score(groundings=[p], generations=[h]).scores[0]
             for p, h in zip(MORE_GROUNDINGS, MORE_GENERATIONS, strict=True)]
    reversed_order = scorer.score(groundings=MORE_GROUNDINGS[::-1], generations=MORE_GENERATIONS[::-1]).scores[::-1]
    small_budget = _mc(path, MORE_GROUNDINGS, MORE_GENERATIONS, max_tokens=64, batch_size=1)
    np.testing.assert_allclose(alone, together.scores, atol=1e-6)
    np.testing.assert_allclose(reversed_order, together.scores, atol=1e-6)
    np.testing.assert_allclose(small_budget.scores, together.scores, atol=1e-6)
    np.testing.assert_allclose(small_budget.score_std, together.score_std, atol=1e-6)
    assert (together.score_std > 0).all()  # control: dropout is on


@pytest.mark.parametrize("model", ["tiny_roberta_nli", "tiny_deberta_nli"])
def test_rows_padded_to_one_width_share_a_forward_and_keep_their_masks(request, monkeypatch, model):
    """On a GPU every batch is padded to a multiple of 8 tokens: rows whose lengths pad to one width share a forward
    (a row's masks depend on its padded width alone), not one forward per distinct length, which left a GPU scoring
    batches of a row or two (1.6-1.9 rows/s at K=15 on an H100). Control: without the padding, one length a batch."""
    from learned_metrics.scoring import batching
    from learned_metrics.scoring import scorer as scorer_module

    scorer = load_scorer(request.getfixturevalue(model), mc_samples=3, seed=11)
    widths: list[int] = []
    scorer.model.register_forward_pre_hook(lambda module, args, kwargs: widths.append(kwargs["input_ids"].shape[1]),
                                           with_kwargs=True)
    exact = scorer.score(groundings=MORE_GROUNDINGS, generations=MORE_GENERATIONS)
    exact_widths, widths[:] = list(widths), []
    monkeypatch.setattr(scorer_module, "BatchSettings", lambda *args: batching.BatchSettings(*args[:4], 8))
    padded = scorer.score(groundings=MORE_GROUNDINGS, generations=MORE_GENERATIONS)
    padded_widths = list(widths)
    alone = [scorer.score(groundings=[p], generations=[h]).scores[0]
             for p, h in zip(MORE_GROUNDINGS, MORE_GENERATIONS, strict=True)]
    assert len(padded_widths) < len(exact_widths) and all(width % 8 == 0 for width in padded_widths)
    assert len(set(exact_widths)) > 3  # control: the rows have several lengths, one forward width each unpadded
    np.testing.assert_allclose(alone, padded.scores, atol=1e-6)
    assert not np.allclose(padded.scores, exact.scores, atol=1e-6)  # other widths, other masks: the padding counts


def test_the_seed_decides_the_masks_and_a_repeated_call_repeats_them(tiny_roberta_nli):
    scorer = load_scorer(tiny_roberta_nli, mc_samples=6, seed=11)
    first = scorer.score(groundings=GROUNDINGS, generations=GENERATIONS)
    again = scorer.score(groundings=GROUNDINGS, generations=GENERATIONS)
    other = scorer.score(groundings=GROUNDINGS, generations=GENERATIONS, seed=12)
    np.testing.assert_array_equal(first.scores, again.scores)
    assert not np.allclose(first.scores, other.scores)


def test_identical_rows_get_identical_scores_and_different_rows_different_masks(tiny_roberta_nli):
    result = _mc(tiny_roberta_nli, [GROUNDINGS[0]] * 3 + [GROUNDINGS[1]], [GENERATIONS[0]] * 3 + [GENERATIONS[1]])
    assert result.scores[0] == result.scores[1] == result.scores[2]
    assert result.scores[0] != result.scores[3]


def test_a_file_scored_in_small_chunks_equals_the_api_and_one_chunk(tmp_path, tiny_roberta_nli):
    rows = [{"grounding": p, "generation": h} for p, h in zip(MORE_GROUNDINGS, MORE_GENERATIONS, strict=True)]
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    scores = []
    for chunk in ("2", "1000"):
        out = tmp_path / f"out{chunk}.jsonl"
        assert main(["score", "faithfulness", "--model", str(tiny_roberta_nli), "--input", str(source), "--output",
                     str(out), "--mc-samples", "6", "--seed", "11", "--chunk-size", chunk, "--no-progress",
                     "--quiet"]) == 0
        scores.append([json.loads(line)["score"] for line in out.read_text().splitlines()])
    np.testing.assert_allclose(scores[0], scores[1], atol=1e-6)
    np.testing.assert_allclose(scores[0], _mc(tiny_roberta_nli, MORE_GROUNDINGS, MORE_GENERATIONS).scores, atol=1e-6)


def test_row_keys_ignore_padding_and_see_every_token():
    batch = {"input_ids": torch.tensor([[5, 6, 7, 0], [5, 6, 7, 8], [0, 5, 6, 7]]),
             "attention_mask": torch.tensor([[1, 1, 1, 0], [1, 1, 1, 1], [0, 1, 1, 1]])}
    keys = row_keys(batch)
    assert keys[0] == keys[2] != keys[1]  # right or left padding: the same row


def test_keyed_masks_are_bernoulli_keep_masks_per_block():
    masks = KeyedDropout(3)
    masks.start([1, 2], range(0, 2))  # 2 passes x 2 rows = 4 blocks
    x = torch.ones(4, 250_000)
    out = masks(x, 0.1)
    kept = out != 0
    assert abs(1 - kept.float().mean().item() - 0.1) < 0.002
    assert torch.allclose(out[kept], torch.full_like(out[kept], 1 / 0.9))
    assert all(not torch.equal(kept[i], kept[j]) for i in range(4) for j in range(i))  # every block its own mask
    again = KeyedDropout(3)
    again.start([2], range(1, 2))  # row 2, pass 1 alone: block 3 of the stacked forward
    torch.testing.assert_close(again(torch.ones(1, 250_000), 0.1)[0], out[3])
    second_call = masks(x, 0.1)  # the next dropout layer of the same forward: the blocks' streams continue
    assert not torch.equal(second_call != 0, kept)
    masks.start([1, 2], range(0, 2))  # the next forward of the same rows and passes repeats them
    assert torch.equal(masks(x, 0.1), out) and torch.equal(masks(x, 0.1), second_call)
    other = KeyedDropout(4)
    other.start([1, 2], range(0, 2))
    assert not torch.equal(other(x, 0.1), out)  # another seed, other masks
    assert torch.equal(masks(x, 0.0), x) and not masks(x, 1.0).any()


def test_deberta_relative_position_dropout_is_found_shared(tiny_deberta_nli):
    scorer = load_scorer(tiny_deberta_nli)
    batch = scorer.tokenizer(GROUNDINGS[:1], GENERATIONS[:1], return_tensors="pt")
    masks = KeyedDropout(0)
    with mc_dropout_mode(scorer.model, masks), torch.inference_mode():
        masks.probe(scorer.model, dict(batch))
    names = {id(m): n for n, m in scorer.model.named_modules()}
    shared = sorted(names[m] for m in masks.shared)
    assert shared and all(name.endswith("pos_dropout") for name in shared)
    assert masks.batched  # control: the per-row dropouts are found per row


def test_torch_masks_are_seeded_batch_dependent_and_recorded(tmp_path, tiny_roberta_nli):
    """``mc_masks='torch'``: torch's generator, as the paper code (a GPU draws per-row masks row by row: 5-10x slower
    there, bench/README.md). Seeded runs repeat; a row's score then depends on its batch (the documented price);
    provenance and the --resume fingerprint name the choice. Control: per-row masks are batch-independent."""
    def scores(rows: slice, masks: str, seed: int = 3) -> np.ndarray:
        scorer = load_scorer(tiny_roberta_nli, mc_samples=5, seed=seed, mc_masks=masks)
        return scorer.score(groundings=MORE_GROUNDINGS[rows], generations=MORE_GENERATIONS[rows]).scores

    torch_all, per_row_all = scores(slice(None), "torch"), scores(slice(None), "per-row")
    np.testing.assert_array_equal(torch_all, scores(slice(None), "torch"))  # seeded: repeats
    assert not np.allclose(torch_all, scores(slice(None), "torch", seed=4))
    assert not np.allclose(torch_all, per_row_all)  # other masks
    assert not np.allclose(torch_all[:2], scores(slice(0, 2), "torch"))  # the batch counts
    np.testing.assert_allclose(per_row_all[:2], scores(slice(0, 2), "per-row"), atol=1e-6)  # control
    source = tmp_path / "pairs.jsonl"
    source.write_text("".join(json.dumps({"grounding": g, "generation": h}) + "\n"
                              for g, h in zip(MORE_GROUNDINGS, MORE_GENERATIONS, strict=True)))
    assert main(["score", "faithfulness", "--model", str(tiny_roberta_nli), "--input", str(source), "--output",
                 str(tmp_path / "out.jsonl"), "--mc-samples", "5", "--seed", "3", "--mc-masks", "torch",
                 "--no-progress", "--quiet"]) == 0
    from learned_metrics.provenance import read_provenance

    assert read_provenance(tmp_path / "out.jsonl")["mc_masks"] == "torch"  # the fingerprint: test_resume_fingerprint
