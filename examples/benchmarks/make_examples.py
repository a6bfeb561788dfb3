"""Write small stand-ins for the faithfulness benchmarks, each in its released layout (docs/benchmarks.md).

    python examples/benchmarks/make_examples.py

The texts are generated (the NLI demo's names, places and items; a claim is supported, contradicted or unverifiable),
so nothing here comes from the real benchmarks; only the layouts do. Several datasets per
benchmark, unbalanced classes, tied scores. Deterministic: the same files on every run.

- ``llm_aggrefact/dev-00000-of-00001.parquet``, ``llm_aggrefact/test-00000-of-00001.parquet``: LLM-AggreFact
  (``dataset, doc, claim, label``, 1 = supported), the split in the file name as on the Hugging Face hub. RAGTruth
  is in test only, and a few test rows repeat dev rows: the two pitfalls ``meta-eval benchmark`` reports.
- ``aggre_fact_final.csv`` and its SOTA subset ``aggre_fact_sota.csv``: AggreFact (``dataset, origin, id, doc,
  summary, model_name, label, cut`` and, per baseline, ``<Metric>_score`` and ``<Metric>_label``). The baseline
  scores are made up here, NOT the published ones: they only give the columns something to hold.
- ``summac/summac_val.jsonl``, ``summac/summac_test.jsonl``: the items SummaC's loader builds (``document, claim,
  label, dataset, origin`` and ``cut`` where its loader sets one), one file per cut.
- ``true/*.csv``: TRUE (``grounding, generated_text, label``), written by pandas with its unnamed index column.
- ``scored_overlap/``: every file above with a ``score`` column: the share of the claim's words found in the
  grounding (a lexical baseline that needs no model; its scores tie often).
"""

from __future__ import annotations

import json
import math
import random
import re
from pathlib import Path

import pandas as pd

from learned_metrics.data.demo import DAYS, ITEMS, NAMES, PLACES

HERE = Path(__file__).resolve().parent
SEED = 2207

# dataset -> share of supported rows (unbalanced on purpose)
LLM_AGGREFACT = {"AggreFact-CNN": 0.85, "TofuEval-MediaS": 0.7, "Wice": 0.35, "Reveal": 0.25, "RAGTruth": 0.9}
LLM_AGGREFACT_TEST_ONLY = ("RAGTruth",)
AGGREFACT = {"XSumFaith": ("xsum", 0.3), "Wang20": ("xsum", 0.4), "Cao22": ("xsum", 0.45), "Polytope": ("cnndm", 0.8),
             "FactCC": ("cnndm", 0.85), "SummEval": ("cnndm", 0.9), "FRANK": ("cnndm", 0.6)}
AGGREFACT_MODELS = {"SOTA": ["BART", "PegasusDynamic", "T5", "Pegasus"],
                    "XFORMER": ["BertSum", "BertExtAbs", "GPT2", "BERTS2S"],
                    "OLD": ["PtGen", "PtGenCoverage", "Seq2Seq", "TConvS2S"]}
AGGREFACT_BASELINES = {"DAE": 1.1, "QuestEval": 0.7, "SummaC-ZS": 0.9, "SummaC-Conv": 1.3, "QAFactEval": 1.2}
SUMMAC = {"cogensumm": ("cnndm", 0.55, False), "xsumfaith": ("xsum", 0.1, True), "polytope": ("cnndm", 0.9, True),
          "factcc": ("cnndm", 0.85, False), "summeval": ("cnndm", 0.9, True), "frank": ("cnndm", 0.35, True)}
TRUE = {"frank_valid_download": 0.35, "summeval_download": 0.8, "qags_c_download": 0.5, "paws_download": 0.45}


def pair(rng: random.Random, supported: bool) -> tuple[str, str]:
    """A (grounding, claim) pair. The grounding tells of two people, so a claim can use only its words and still be
    wrong (one person's item with the other's count); some supported claims are paraphrased."""
    (name, other), (place, place2), (item, item2) = (rng.sample(NAMES, 2), rng.sample(PLACES, 2),
                                                     rng.sample(ITEMS, 2))
    day = rng.choice(DAYS)
    count, count2 = rng.sample(range(2, 10), 2)
    grounding = (f"On {day}, {name} went to the {place} and bought {count} {item}. {other} went to the {place2} and "
                 f"bought {count2} {item2}. The weather was mild.")
    if supported:
        claims = [f"{name} bought {item}.", f"{name} went to the {place}.", f"{name} bought {count} {item} on {day}.",
                  f"{name} visited the {place}.", f"{other} purchased some {item2}.",
                  f"{other} bought {count2} {item2}."]
    else:
        claims = [f"{name} bought {count2} {item}.", f"{name} went to the {place2}.",
                  f"{other} bought {count} {item}.", f"{name} never went to the {place}.",
                  f"{name} likes {item} a lot.", f"{other} paid with a card."]
    return grounding, rng.choice(claims)


def rows_for(rng: random.Random, n: int, share: float) -> list[tuple[str, str, int]]:
    """``n`` labelled pairs, ``round(n * share)`` of them supported, in random order."""
    positives = round(n * share)
    labels = [1] * positives + [0] * (n - positives)
    rng.shuffle(labels)
    return [(*pair(rng, bool(label)), label) for label in labels]


def overlap(grounding: str, claim: str) -> float:
    """Share of the claim's words (lower-cased) that occur in the grounding."""
    words = re.findall(r"[a-z0-9']+", claim.lower())
    found = set(re.findall(r"[a-z0-9']+", grounding.lower()))
    return round(sum(w in found for w in words) / len(words), 4) if words else 0.0


def llm_aggrefact(rng: random.Random) -> dict[str, pd.DataFrame]:
    splits = {}
    for split, n in (("dev", 24), ("test", 40)):
        rows = []
        for dataset, share in LLM_AGGREFACT.items():
            if split == "dev" and dataset in LLM_AGGREFACT_TEST_ONLY:
                continue
            rows += [{"dataset": dataset, "doc": doc, "claim": claim, "label": label}
                     for doc, claim, label in rows_for(rng, n, share)]
        splits[split] = rows
    for i in range(3):  # rows released in both splits, as users of the real release found
        splits["test"][5 * i] = dict(splits["dev"][7 * i])
    return {split: pd.DataFrame(rows) for split, rows in splits.items()}


def aggrefact(rng: random.Random) -> pd.DataFrame:
    rows = []
    for dataset, (origin, share) in AGGREFACT.items():
        for cut, n in (("val", 16), ("test", 26)):
            for doc, summary, label in rows_for(rng, n, share):
                category = rng.choice(list(AGGREFACT_MODELS))
                row = {"dataset": dataset, "origin": origin, "id": f"{origin}-{len(rows):04d}", "doc": doc,
                       "summary": summary, "model_name": rng.choice(AGGREFACT_MODELS[category]), "label": label,
                       "cut": cut}
                for system, strength in AGGREFACT_BASELINES.items():
                    score = round(1 / (1 + math.exp(-(strength * (2 * label - 1) + rng.gauss(0, 1.2)))), 2)
                    row[f"{system}_score"] = score
                    row[f"{system}_label"] = None
                rows.append(row)
    frame = pd.DataFrame(rows)
    test = frame["cut"] == "test"
    for system in AGGREFACT_BASELINES:  # the release labels test rows only, at the val-tuned threshold
        frame[f"{system}_label"] = frame[f"{system}_label"].astype(object)
        frame.loc[test, f"{system}_label"] = (frame.loc[test, f"{system}_score"] > 0.5).astype(int)
    return frame


def summac(rng: random.Random) -> dict[str, list[dict]]:
    cuts: dict[str, list[dict]] = {"val": [], "test": []}
    for dataset, (origin, share, has_cut) in SUMMAC.items():
        for cut in cuts:
            for document, claim, label in rows_for(rng, 30, share):
                item = {"document": document, "claim": claim, "label": label, "dataset": dataset, "origin": origin}
                if has_cut:
                    item["cut"] = cut
                cuts[cut].append(item)
    return cuts


def true(rng: random.Random) -> dict[str, pd.DataFrame]:
    return {name: pd.DataFrame([{"grounding": g, "generated_text": c, "label": label}
                                for g, c, label in rows_for(rng, 40, share)]) for name, share in TRUE.items()}


def with_overlap(frame: pd.DataFrame, premise: str, hypothesis: str) -> pd.DataFrame:
    out = frame.copy()
    out["score"] = [overlap(g, c) for g, c in zip(frame[premise], frame[hypothesis], strict=True)]
    return out


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


def main() -> None:
    rng = random.Random(SEED)
    scored = HERE / "scored_overlap"
    for split, frame in llm_aggrefact(rng).items():
        name = f"{split}-00000-of-00001.parquet"
        for folder, table in ((HERE / "llm_aggrefact", frame), (scored / "llm_aggrefact",
                                                                 with_overlap(frame, "doc", "claim"))):
            folder.mkdir(parents=True, exist_ok=True)
            table.to_parquet(folder / name, index=False)
    final = aggrefact(rng)
    sota = final[final["model_name"].isin(AGGREFACT_MODELS["SOTA"])]
    for folder, transform in ((HERE, lambda f: f), (scored, lambda f: with_overlap(f, "doc", "summary"))):
        folder.mkdir(parents=True, exist_ok=True)
        transform(final).to_csv(folder / "aggre_fact_final.csv", index=False)
        transform(sota).to_csv(folder / "aggre_fact_sota.csv", index=False)
    for cut, items in summac(rng).items():
        write_jsonl(HERE / "summac" / f"summac_{cut}.jsonl", items)
        write_jsonl(scored / "summac" / f"summac_{cut}.jsonl",
                    [{**item, "score": overlap(item["document"], item["claim"])} for item in items])
    for name, frame in true(rng).items():
        for folder, table in ((HERE / "true", frame), (scored / "true", with_overlap(frame, "grounding",
                                                                                      "generated_text"))):
            folder.mkdir(parents=True, exist_ok=True)
            table.to_csv(folder / f"{name}.csv")  # pandas' unnamed index column, as the TRUE files have
    print(f"wrote the stand-in benchmarks under {HERE}")


if __name__ == "__main__":
    main()
