"""Write the small synthetic files the meta-evaluation docs run on (deterministic, seed 0).

    python examples/meta_eval/make_examples.py [--out examples/meta_eval]

Files (all synthetic; no real data set is redistributed):

* ``human.jsonl``        16 systems x 100 documents, 3 annotators per summary
                          (Likert 1-5, one row per annotation: the reader averages them)
* ``metric_good.jsonl``  a metric that tracks the latent quality, but over-rates system M13
* ``metric_weak.csv``    a noisier metric (CSV, to show both formats)
* ``summeval_annotations.jsonl`` / ``summeval_metric.jsonl``
                          8 systems x 10 documents in the SummEval release layout
                          (``id``, ``model_id``, ``expert_annotations``) and a metric for them
* ``faithfulness.jsonl`` TRUE-style rows: ``corpus``, ``system``, ``label`` (1 = faithful), ``score``
* ``shuffle.jsonl``      originals and their shuffled copies, scored by a toy order measure
* ``shuffle_length_gap.jsonl``  each original paired with the shuffle of a *different* document
"""

from __future__ import annotations

import argparse
import csv
import json
import random
from pathlib import Path

import numpy as np

from learned_metrics.data.demo import coherent_document

N_SYSTEMS, N_DOCS, N_ANNOTATORS = 16, 100, 3
MARKERS = ["First,", "Then", "After that,", "Later,", "Soon after,", "Finally,"]


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, separators=(",", ":")) + "\n")


def latent_quality(rng: np.random.Generator, n_docs: int, n_systems: int) -> np.ndarray:
    """True quality per (document, system): a system effect, a document effect and noise."""
    system_effect = np.linspace(-1.0, 1.0, n_systems)[rng.permutation(n_systems)]
    doc_effect = rng.normal(0, 0.5, n_docs)[:, None]
    return system_effect[None, :] + doc_effect + rng.normal(0, 0.7, (n_docs, n_systems))


def human_rows(rng: np.random.Generator, quality: np.ndarray, docs: list[str], systems: list[str]) -> list[dict]:
    """One row per annotation: Likert 1-5 around the latent quality."""
    rows = []
    for d, doc in enumerate(docs):
        for s, system in enumerate(systems):
            for annotator in range(1, N_ANNOTATORS + 1):
                score = int(np.clip(np.rint(3 + quality[d, s] + rng.normal(0, 0.6)), 1, 5))
                rows.append({"doc_id": doc, "system_id": system, "annotator": annotator, "score": score})
    return rows


def write_correlation_files(out: Path, rng: np.random.Generator) -> None:
    docs = [f"d{i:03d}" for i in range(N_DOCS)]
    systems = [f"M{i:02d}" for i in range(N_SYSTEMS)]
    quality = latent_quality(rng, N_DOCS, N_SYSTEMS)
    _write_jsonl(out / "human.jsonl", human_rows(rng, quality, docs, systems))
    good = quality + rng.normal(0, 0.6, quality.shape)
    good[:, systems.index("M13")] += 0.8  # a metric bias the bias matrix should reveal
    weak = 0.3 * quality + rng.normal(0, 0.8, quality.shape)
    _write_jsonl(
        out / "metric_good.jsonl",
        [
            {"doc_id": doc, "system_id": system, "score": round(float(good[d, s]), 4)}
            for d, doc in enumerate(docs)
            for s, system in enumerate(systems)
        ],
    )
    with (out / "metric_weak.csv").open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["doc_id", "system_id", "score"])
        for d, doc in enumerate(docs):
            for s, system in enumerate(systems):
                writer.writerow([doc, system, round(float(weak[d, s]), 4)])


def write_summeval_files(out: Path, rng: np.random.Generator) -> None:
    """The SummEval release layout: one row per summary, a list of expert annotation dicts."""
    docs = [f"dm-test-{i:040x}" for i in range(1, 11)]
    systems = [f"M{i}" for i in (0, 1, 2, 5, 8, 11, 17, 23)]
    quality = latent_quality(rng, len(docs), len(systems))
    annotations, metric = [], []
    for d, doc in enumerate(docs):
        for s, system in enumerate(systems):
            experts = [
                {
                    dim: int(np.clip(np.rint(3 + quality[d, s] + rng.normal(0, 0.7)), 1, 5))
                    for dim in ("coherence", "consistency", "fluency", "relevance")
                }
                for _ in range(3)
            ]
            annotations.append({"id": doc, "model_id": system, "expert_annotations": experts})
            score = float(quality[d, s] + rng.normal(0, 0.5))
            metric.append({"doc_id": doc, "system_id": system, "score": round(score, 4)})
    _write_jsonl(out / "summeval_annotations.jsonl", annotations)
    _write_jsonl(out / "summeval_metric.jsonl", metric)


def write_faithfulness_file(out: Path, rng: np.random.Generator) -> None:
    """TRUE-style rows; corpora differ in size, class balance and difficulty."""
    corpora = {
        "frank": (160, 0.35, 1.6),
        "summeval": (160, 0.8, 1.2),
        "qags_x": (120, 0.5, 0.6),
        "paws": (160, 0.45, 2.0),
    }
    rows = []
    for corpus, (size, positive_rate, separation) in corpora.items():
        for i in range(size):
            label = int(rng.random() < positive_rate)
            system = f"sys{i % 5}"
            score = float(np.tanh(0.5 * (separation * (label - 0.5) + rng.normal(0, 1))))
            rows.append({"corpus": corpus, "system": system, "label": label, "score": round(score, 4)})
    _write_jsonl(out / "faithfulness.jsonl", rows)


def order_score(sentences: list[str], rng: np.random.Generator) -> float:
    """A toy coherence measure: are the discourse markers in order? Slightly biased towards long texts."""
    positions = [next(k for k, m in enumerate(MARKERS) if s.startswith(m)) for s in sentences]
    pairs = [(a, b) for i, a in enumerate(positions) for b in positions[i + 1 :]]
    order = sum(np.sign(b - a) for a, b in pairs) / max(len(pairs), 1)
    length = len(" ".join(sentences))
    return round(float(0.5 + 0.25 * order + 0.002 * (length - 300) + rng.normal(0, 0.15)), 4)


def shuffled_copy(sentences: list[str], rnd: random.Random) -> list[str]:
    """A permutation whose text differs from the original."""
    while True:
        copy = sentences[:]
        rnd.shuffle(copy)
        if copy != sentences:
            return copy


def write_shuffle_files(out: Path, rng: np.random.Generator, n_docs: int = 200) -> None:
    rnd = random.Random(0)
    documents = [coherent_document(rnd) for _ in range(n_docs)]
    shuffles = [shuffled_copy(doc, rnd) for doc in documents]
    same, gap = [], []
    for i, (doc, shuffle) in enumerate(zip(documents, shuffles, strict=True)):
        doc_id = f"doc{i:03d}"
        original = {"doc_id": doc_id, "label": 1, "score": order_score(doc, rng), "text": " ".join(doc)}
        same += [
            original,
            {"doc_id": doc_id, "label": 0, "score": order_score(shuffle, rng), "text": " ".join(shuffle)},
        ]
        other = shuffles[(i + 1 + rnd.randrange(n_docs - 1)) % n_docs]  # a different document's shuffle
        gap += [original, {"doc_id": doc_id, "label": 0, "score": order_score(other, rng), "text": " ".join(other)}]
    _write_jsonl(out / "shuffle.jsonl", same)
    _write_jsonl(out / "shuffle_length_gap.jsonl", gap)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(Path(__file__).parent), help="output folder (default: beside this script)")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    write_correlation_files(out, rng)
    write_summeval_files(out, rng)
    write_faithfulness_file(out, rng)
    write_shuffle_files(out, rng)
    for path in sorted(out.iterdir()):
        if path.suffix in (".jsonl", ".csv"):
            print(f"{path}  {path.stat().st_size / 1024:.0f} KiB")


if __name__ == "__main__":
    main()
