"""Scoring engine, Python API: labels, modes, MC dropout, batching identities, chunking, bad inputs.

The identity tests carry the weight: whatever the batching (sorted or not,
token budget large or one row at a time), the scores equal those of plain
transformers run one pair at a time.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from tiny_models import DOCUMENTS, GENERATIONS, GROUNDINGS, biased_copy
from torch import nn
from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer

from learned_metrics.errors import UserError
from learned_metrics.scoring import ScoreResult, TruncationWarning, load_scorer
from learned_metrics.scoring.batching import encode, plan_batches
from learned_metrics.scoring.mc_dropout import DropoutStream, mc_dropout_mode
from learned_metrics.scoring.scorer import default_max_tokens
from learned_metrics.scoring.units import ChunkPlan, aggregate_units, pack_sentences


def reference_probabilities(model_dir: Path, first: list[str], second: list[str] | None = None,
                            max_length: int = 128) -> np.ndarray:
    """Plain transformers, one input at a time: what another tool would compute."""
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForSequenceClassification.from_pretrained(model_dir).eval()
    out = []
    with torch.no_grad():
        for i, text in enumerate(first):
            args = (text,) if second is None else (text, second[i])
            enc = tokenizer(*args, truncation="only_first" if second else True, max_length=max_length,
                            return_tensors="pt")
            out.append(model(**enc).logits.double().softmax(-1)[0].numpy())
    return np.stack(out)


def count_forwarded_rows(model: nn.Module) -> list[int]:
    """Rows seen by every forward of ``model`` (stacked MC copies included)."""
    seen: list[int] = []
    model.register_forward_hook(lambda module, args, kwargs, out: seen.append(kwargs["input_ids"].shape[0]),
                                with_kwargs=True)
    return seen


# -- labels and modes ---------------------------------------------------------------------------


@pytest.mark.parametrize("order", ["deberta", "roberta"])
def test_labels_resolved_by_name_for_both_orders(tmp_path, request, order):
    src = request.getfixturevalue("tiny_deberta_nli" if order == "deberta" else "tiny_roberta_nli")
    entails = load_scorer(biased_copy(src, tmp_path / "e", "entailment"))
    contradicts = load_scorer(biased_copy(src, tmp_path / "c", "contradiction"))
    assert entails.kind == "faithfulness" and entails.label_names == ["entailment", "neutral", "contradiction"]
    expected_ids = {"entailment": 0, "contradiction": 2} if order == "deberta" else {"entailment": 2,
                                                                                     "contradiction": 0}
    assert {k: entails.label_ids[k] for k in expected_ids} == expected_ids
    e = entails.score(groundings=GROUNDINGS, generations=GENERATIONS)
    c = contradicts.score(groundings=GROUNDINGS, generations=GENERATIONS)
    assert (e.scores > 0.99).all() and (e.probabilities["entailment"] > 0.99).all()
    assert (c.scores < -0.99).all() and (c.probabilities["contradiction"] > 0.99).all()


def test_unresolvable_labels_give_a_clear_error(tiny_roberta):
    with pytest.raises(UserError, match=r"cannot resolve label\(s\) \['entailment', 'contradiction'\]"):
        load_scorer(tiny_roberta)


def test_mode_e_is_entailment_and_e_c_subtracts_contradiction(nli_export):
    scorer = load_scorer(nli_export)
    assert scorer.mode == "e-c"  # from the card
    ec = scorer.score(groundings=GROUNDINGS, generations=GENERATIONS)
    e = scorer.score(groundings=GROUNDINGS, generations=GENERATIONS, mode="e")
    probs = ec.probabilities
    np.testing.assert_allclose(ec.scores, probs["entailment"] - probs["contradiction"], atol=1e-12)
    np.testing.assert_allclose(e.scores, probs["entailment"], atol=1e-12)
    assert not np.allclose(e.scores, ec.scores)
    np.testing.assert_allclose(sum(probs.values()), 1.0, atol=1e-9)
    assert load_scorer(nli_export, mode="e").score(groundings=GROUNDINGS, generations=GENERATIONS).mode == "e"
    with pytest.raises(UserError, match="unknown mode"):
        scorer.score(groundings=GROUNDINGS, generations=GENERATIONS, mode="c")


# -- batching identities ------------------------------------------------------------------------


@pytest.mark.parametrize("fixture", ["tiny_deberta_nli", "tiny_roberta_nli"])
def test_scores_equal_plain_transformers_one_pair_at_a_time(request, fixture):
    model_dir = request.getfixturevalue(fixture)
    expected = reference_probabilities(model_dir, GROUNDINGS, GENERATIONS)
    big = load_scorer(model_dir).score(groundings=GROUNDINGS, generations=GENERATIONS)
    ids = load_scorer(model_dir).label_ids
    got = np.stack([big.probabilities[label] for label in sorted(ids, key=ids.get)], axis=1)
    np.testing.assert_allclose(got, expected, atol=1e-5)


def test_length_sorting_and_token_budget_do_not_change_scores(tiny_deberta_nli):
    order = np.random.default_rng(0).permutation(len(GROUNDINGS))
    grounds, gens = [GROUNDINGS[i] for i in order], [GENERATIONS[i] for i in order]
    base = load_scorer(tiny_deberta_nli).score(groundings=grounds, generations=gens)
    one_at_a_time = load_scorer(tiny_deberta_nli, batch_size=1).score(groundings=grounds, generations=gens)
    tight_budget = load_scorer(tiny_deberta_nli, max_tokens=64).score(groundings=grounds, generations=gens)
    sorted_input = load_scorer(tiny_deberta_nli).score(groundings=GROUNDINGS, generations=GENERATIONS)
    for other in (one_at_a_time, tight_budget):
        np.testing.assert_allclose(other.scores, base.scores, atol=1e-6)
    np.testing.assert_allclose(sorted_input.scores[order], base.scores, atol=1e-6)


def test_plan_batches_respects_the_token_budget_and_covers_every_row():
    lengths = np.array([5, 50, 7, 120, 33, 8, 64, 1])
    batches = plan_batches(lengths, max_tokens=128, max_rows=3)
    assert sorted(np.concatenate(batches).tolist()) == list(range(len(lengths)))
    for rows in batches:
        assert len(rows) <= 3
        assert len(rows) == 1 or len(rows) * lengths[rows].max() <= 128
    assert lengths[batches[0][0]] == lengths.max()  # longest first: out-of-memory shows at once


@pytest.mark.parametrize(("device", "hidden", "budget"), [
    ("cpu", 32, 4096), ("cpu", 384, 1024), ("cpu", 1024, 1024),
    ("cuda", 1024, 32768), ("cuda", 384, 87381), ("cuda", 32, 131072), ("cuda", 8192, 8192),
])
def test_default_token_budget_follows_device_and_hidden_size(device, hidden, budget):
    config = AutoConfig.for_model("bert", hidden_size=hidden)
    assert default_max_tokens(config, torch.device(device)) == budget


def test_tokenization_truncates_premise_only_and_counts_it(tiny_deberta_nli):
    tokenizer = AutoTokenizer.from_pretrained(tiny_deberta_nli)
    long_premise = " ".join(GROUNDINGS * 6)
    encoded = encode(tokenizer, [long_premise, GROUNDINGS[0]], [GENERATIONS[0]] * 2, max_length=128)
    assert encoded.truncated.tolist() == [True, False]
    first = encoded.ids[encoded.offsets[0]:encoded.offsets[1]].tolist()
    expected = tokenizer(long_premise, GENERATIONS[0], truncation="only_first", max_length=128)["input_ids"]
    assert first == expected and len(first) == 128
    with pytest.warns(TruncationWarning, match="1 of 2 rows were longer than max_length=128"):
        result = load_scorer(tiny_deberta_nli).score(groundings=[long_premise, GROUNDINGS[0]],
                                                     generations=GENERATIONS[:2])
    assert result.truncated == 1


# -- Monte-Carlo dropout ------------------------------------------------------------------------


@pytest.mark.parametrize("max_tokens", [100_000, 100])
def test_mc_runs_exactly_k_passes(tiny_roberta_nli, max_tokens):
    scorer = load_scorer(tiny_roberta_nli, mc_samples=15, max_tokens=max_tokens)
    seen = count_forwarded_rows(scorer.model)
    result = scorer.score(groundings=GROUNDINGS, generations=GENERATIONS)
    assert sum(seen) == 15 * len(GROUNDINGS)
    assert result.passes == 15 and "score_std" in result.columns
    if max_tokens == 100_000:  # all 15 passes of the rows of one length in one stacked forward
        lengths = {len(ids) for ids in scorer.tokenizer(GROUNDINGS, GENERATIONS)["input_ids"]}
        assert len(seen) == len(lengths)
    assert not scorer.model.training  # eval mode restored


def test_mc_std_is_positive_with_dropout_and_zero_for_one_pass(tiny_roberta_nli):
    scorer = load_scorer(tiny_roberta_nli)
    mc = scorer.score(groundings=GROUNDINGS, generations=GENERATIONS, mc_samples=8)
    single = scorer.score(groundings=GROUNDINGS, generations=GENERATIONS, mc_samples=1)
    deterministic = scorer.score(groundings=GROUNDINGS, generations=GENERATIONS, mc_samples=0)
    assert (mc.score_std > 0).all()
    assert (single.score_std == 0).all() and single.passes == 1 and "score_std" not in single.columns
    np.testing.assert_array_equal(single.scores, deterministic.scores)
    assert not np.allclose(mc.scores, single.scores)


def test_attention_only_dropout_still_gives_different_passes(attention_dropout_only):
    scorer = load_scorer(attention_dropout_only, mc_samples=6)
    result = scorer.score(groundings=GROUNDINGS, generations=GENERATIONS)
    assert (result.score_std > 0).all()
    # The pitfall this guards against: switching on only the nn.Dropout modules leaves the passes identical.
    model = scorer.model
    for module in model.modules():
        module.train(isinstance(module, nn.Dropout))
    batch = AutoTokenizer.from_pretrained(attention_dropout_only)(GROUNDINGS, GENERATIONS, padding=True,
                                                                  return_tensors="pt")
    with torch.inference_mode():
        first, second = model(**batch).logits, model(**batch).logits
    model.eval()
    torch.testing.assert_close(first, second)


def test_mc_is_reproducible_with_a_seed(tiny_roberta_nli):
    runs = [load_scorer(tiny_roberta_nli, mc_samples=5, seed=7).score(groundings=GROUNDINGS, generations=GENERATIONS)
            for _ in range(2)]
    other = load_scorer(tiny_roberta_nli, mc_samples=5, seed=8).score(groundings=GROUNDINGS, generations=GENERATIONS)
    np.testing.assert_array_equal(runs[0].scores, runs[1].scores)
    np.testing.assert_array_equal(runs[0].score_std, runs[1].score_std)
    assert not np.array_equal(runs[0].scores, other.scores)
    global_state = torch.get_rng_state()
    load_scorer(tiny_roberta_nli, mc_samples=3, seed=1).score(groundings=GROUNDINGS, generations=GENERATIONS)
    assert torch.equal(torch.get_rng_state(), global_state)  # the caller's RNG is left alone


def test_dropout_stream_continues_across_calls():
    stream = DropoutStream(3, torch.device("cpu"))
    with stream.active():
        first = torch.rand(4)
    with stream.active():
        second = torch.rand(4)
    stream.reseed(3)
    with stream.active():
        again = torch.rand(4)
    assert not torch.equal(first, second) and torch.equal(first, again)


def test_mc_mode_keeps_batch_norm_in_eval_and_restores_modes():
    model = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4), nn.Dropout(0.5)).eval()
    with mc_dropout_mode(model):
        assert model.training and model[2].training and not model[1].training
    assert not any(m.training for m in model.modules())


# -- long groundings: chunking ------------------------------------------------------------------


def test_chunk_strategy_scores_groundings_longer_than_the_model(tiny_deberta_nli):
    long_grounding = " ".join(sentence for _ in range(8) for sentence in GROUNDINGS)
    scorer = load_scorer(tiny_deberta_nli)
    generation = "Anna bought apples. Ben went to the library."
    assert len(AutoTokenizer.from_pretrained(tiny_deberta_nli)(long_grounding)["input_ids"]) > 3 * scorer.max_length
    groundings, generations = [*GROUNDINGS, long_grounding], [*GENERATIONS, generation]
    chunked = scorer.score(groundings=groundings, generations=generations, premise_strategy="chunk",
                           mc_samples=3)
    assert chunked.truncated == 0 and chunked.details["chunked_rows"] == 1
    assert np.isfinite(chunked.scores).all() and (chunked.score_std[-1] > 0)
    chunk_det = scorer.score(groundings=groundings, generations=generations, premise_strategy="chunk")
    with pytest.warns(TruncationWarning):
        truncate = scorer.score(groundings=groundings, generations=generations, premise_strategy="truncate")
    np.testing.assert_allclose(chunk_det.scores[:-1], truncate.scores[:-1], atol=1e-6)  # fitting pairs: identical
    assert truncate.truncated == 1


def test_chunk_pairs_streamed_in_groups_give_the_same_scores(tiny_deberta_nli, monkeypatch):
    long_grounding = " ".join(sentence for _ in range(4) for sentence in GROUNDINGS)
    groundings = [long_grounding, *GROUNDINGS, long_grounding]
    generations = ["Anna bought apples. Ben went to the library.", *GENERATIONS, "Elif bought bread."]
    scorer = load_scorer(tiny_deberta_nli)
    whole = scorer.score(groundings=groundings, generations=generations, premise_strategy="chunk")
    monkeypatch.setattr("learned_metrics.scoring.scorer.MAX_PAIRS_PER_STREAM", 3)
    grouped = scorer.score(groundings=groundings, generations=generations, premise_strategy="chunk")
    np.testing.assert_allclose(grouped.scores, whole.scores, atol=1e-6)
    assert grouped.details == whole.details and whole.details["chunked_rows"] == 2


def test_unit_aggregation_takes_the_best_unit_per_sentence_by_the_mode_then_the_mean():
    # one row, two hypothesis sentences, three units each; classes (entailment, neutral, contradiction)
    probs = np.array([[[.1, .1, .8], [.7, .2, .1], [.3, .3, .4],
                       [.2, .2, .6], [.45, .55, 0.], [.5, .1, .4]]])
    plan = ChunkPlan(["p"] * 6, ["h"] * 6, np.array([0, 0, 0, 1, 1, 1]), np.array([0, 0]), 1, 1)
    e_minus_c = probs[..., 0] - probs[..., 2]
    out, choice = aggregate_units(probs, plan, e_minus_c)
    # sentence 2: unit 3 has the higher e (.5) but unit 2 the higher e-c (.45 vs .1): SummaC-ZS takes the max of e-c
    np.testing.assert_allclose(out[0, 0], (np.array([.7, .2, .1]) + np.array([.45, .55, 0.])) / 2)
    assert list(choice.best_pair) == [1, 4] and choice.sentence_scores == pytest.approx([.6, .45])
    by_entailment, _ = aggregate_units(probs, plan, probs[..., 0])
    np.testing.assert_allclose(by_entailment[0, 0], (np.array([.7, .2, .1]) + np.array([.5, .1, .4])) / 2)


def test_pack_sentences_fills_chunks_in_order_and_cuts_overlong_sentences():
    assert pack_sentences(["a.", "b.", "c."], [4, 4, 4], budget=8) == ["a. b.", "c."]
    pieces = pack_sentences([" ".join(["w"] * 30)], [30], budget=10)
    assert len(pieces) >= 3 and " ".join(pieces).split() == ["w"] * 30


# -- coherence ----------------------------------------------------------------------------------


def test_coherence_applies_the_cards_splitter_and_joiner(coherence_export):
    scorer = load_scorer(coherence_export)
    assert scorer.kind == "coherence" and scorer.splitter == "pysbd" and scorer.joiner == "\n"
    as_sentences = scorer.score(sentences=DOCUMENTS)
    as_running_text = scorer.score(texts=[" ".join(doc) for doc in DOCUMENTS])
    as_lines = scorer.score(texts=["\n".join(doc) for doc in DOCUMENTS])
    np.testing.assert_array_equal(as_running_text.scores, as_sentences.scores)
    np.testing.assert_array_equal(as_lines.scores, as_sentences.scores)
    assert scorer.coherence_inputs(texts=["One. Two."]) == ["One.\nTwo."]
    expected = reference_probabilities(coherence_export, ["\n".join(doc) for doc in DOCUMENTS])
    np.testing.assert_allclose(as_sentences.scores, expected[:, 1], atol=1e-5)
    np.testing.assert_allclose(as_sentences.probabilities["incoherent"], expected[:, 0], atol=1e-5)
    assert list(as_sentences.probabilities) == ["coherent", "incoherent"]


def test_coherence_and_faithfulness_calls_are_not_mixed_up(coherence_export, nli_export):
    with pytest.raises(UserError, match="coherence model"):
        load_scorer(coherence_export).score(groundings=["a"], generations=["b"])
    with pytest.raises(UserError, match="faithfulness"):
        load_scorer(nli_export).score(texts=["a"])
    with pytest.raises(UserError, match="score it with `score faithfulness`"):
        load_scorer(nli_export, kind="coherence")


# -- loading and bad inputs ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "message"),
    [(None, "missing"), (math.nan, "missing"), ("   ", "text is empty"), (3, "expected text")],
)
def test_bad_api_inputs_name_argument_and_row(tiny_deberta_nli, value, message):
    scorer = load_scorer(tiny_deberta_nli)
    with pytest.raises(UserError, match=rf"row 2, field 'generations': .*{message}"):
        scorer.score(groundings=GROUNDINGS[:3], generations=[GENERATIONS[0], value, GENERATIONS[2]])
    with pytest.raises(UserError, match="differ in length"):
        scorer.score(groundings=GROUNDINGS, generations=GENERATIONS[:2])


def test_bare_encoder_is_refused_instead_of_scored_with_a_random_head(bare_encoder, tmp_path):
    with pytest.raises(UserError, match="not a sequence classifier"):
        load_scorer(bare_encoder)
    # the same weights with the architecture name edited away: caught by the missing head weights
    config = json.loads((bare_encoder / "config.json").read_text())
    config["architectures"] = None
    disguised = tmp_path / "disguised"
    shutil.copytree(bare_encoder, disguised)
    (disguised / "config.json").write_text(json.dumps(config))
    with pytest.raises(UserError, match="no trained sequence-classification head"):
        load_scorer(disguised)


def test_missing_folders_and_offline_hub_ids_give_one_line_errors(tmp_path, monkeypatch):
    with pytest.raises(UserError, match="model folder not found"):
        load_scorer(str(tmp_path / "nope"))
    with pytest.raises(UserError, match="no config.json"):
        load_scorer(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(UserError, match="nor in the Hugging Face cache, and Hub downloads are off") as err:
        load_scorer("someone-offline/not-cached-nli-model")
    assert "\n" not in str(err.value)


def test_precision_and_device_choices(tiny_deberta_nli):
    assert load_scorer(tiny_deberta_nli).dtype == torch.float32  # auto on CPU
    with pytest.raises(UserError, match="fp16 needs a GPU"):
        load_scorer(tiny_deberta_nli, precision="fp16")
    with pytest.raises(UserError, match="batch_size must be an integer >= 1"):
        load_scorer(tiny_deberta_nli, batch_size=-1)
    for bad in (-8, 0):  # 0 used to mean "the default" silently
        with pytest.raises(UserError, match="max_tokens must be an integer >= 1"):
            load_scorer(tiny_deberta_nli, max_tokens=bad)
    with pytest.raises(UserError, match="max_length 3 is too small"):
        load_scorer(tiny_deberta_nli, max_length=3)
    with pytest.raises(UserError, match="unknown device"):
        load_scorer(tiny_deberta_nli, device="tpu")
    if not torch.cuda.is_available():
        with pytest.raises(UserError, match="no CUDA GPU"):
            load_scorer(tiny_deberta_nli, device="cuda")
    bf16 = load_scorer(tiny_deberta_nli, precision="bf16").score(groundings=GROUNDINGS, generations=GENERATIONS)
    fp32 = load_scorer(tiny_deberta_nli).score(groundings=GROUNDINGS, generations=GENERATIONS)
    np.testing.assert_allclose(bf16.scores, fp32.scores, atol=0.05)


def test_results_merge_back_into_input_order():
    def part(values):
        values = np.asarray(values, dtype=float)
        return ScoreResult("coherence", values, {"coherent": values, "incoherent": 1 - values}, values * 0, 1,
                           tokens=len(values))
    merged = ScoreResult.merge([(np.array([0, 2]), part([0.1, 0.3])), (np.array([1]), part([0.2]))], 3)
    np.testing.assert_allclose(merged.scores, [0.1, 0.2, 0.3])
    assert merged.tokens == 3 and merged.rows()[1] == {"score": 0.2, "prob_coherent": 0.2, "prob_incoherent": 0.8}


def test_plain_nli_folder_and_export_score_the_same(tiny_deberta_nli, nli_export):
    plain = load_scorer(tiny_deberta_nli).score(groundings=GROUNDINGS, generations=GENERATIONS)
    exported = load_scorer(nli_export).score(groundings=GROUNDINGS, generations=GENERATIONS)
    np.testing.assert_allclose(plain.scores, exported.scores, atol=1e-7)
    assert load_scorer(tiny_deberta_nli).card is None and load_scorer(nli_export).card["kind"] == "faithfulness"



@pytest.mark.parametrize("strategy", ["truncate", "chunk"])
def test_empty_input_gives_an_empty_result(tiny_deberta_nli, strategy):
    """A process can get no rows of a small last chunk under accelerate; that must not fail."""
    result = load_scorer(tiny_deberta_nli, mc_samples=3).score(groundings=[], generations=[],
                                                                premise_strategy=strategy)
    assert len(result) == 0 and result.rows() == []


# -- dropout masks -------------------------------------------------------------------------------


@pytest.mark.parametrize("mask_kind", ["bool", "additive", "none"])
def test_attention_with_keyed_dropout_is_transformers_sdpa_when_nothing_is_dropped(mask_kind):
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    from learned_metrics.scoring.mc_dropout import KeyedDropout, _attention_with_keyed_dropout

    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 4, 9, 8) for _ in range(3))
    keep = torch.ones(2, 1, 9, 9, dtype=torch.bool)
    keep[0, ..., 6:] = False  # padding of the first row
    mask = {"bool": keep, "additive": torch.zeros(2, 1, 9, 9).masked_fill(~keep, torch.finfo(torch.float32).min),
            "none": None}[mask_kind]
    module = nn.Module()
    module.is_causal = False
    expected, _ = sdpa_attention_forward(module, q, k, v, mask, dropout=0.0, scaling=0.3)
    masks = KeyedDropout(0)
    masks.start([1, 2], range(1))
    attention = _attention_with_keyed_dropout(sdpa_attention_forward, masks)
    got, _ = attention(module, q, k, v, mask, dropout=1e-12, scaling=0.3)  # our path, nothing dropped
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-5)
