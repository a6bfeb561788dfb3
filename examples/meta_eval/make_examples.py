"""Write the small synthetic files the meta-evaluation docs run on (deterministic, seed 0).

    python examples/meta_eval/make_examples.py [--out examples/meta_eval]

Files (all synthetic; no real data set is redistributed):

* ``human.jsonl``        16 systems x 100 documents, 3 annotators per summary
                          (Likert 1-5, one row per annotation: the reader averages them)
* ``metric_good.jsonl``  a metric that tracks the latent quality, but over-rates system M13
* ``metric_weak.csv``    a noisier metric (CSV, to show both formats)
* ``metric_ensemble.jsonl``, ``metric_lexical.jsonl``, ``metric_length.jsonl``
                          three more metrics of the same summaries (five for the paper table)
* ``metric_good_full.jsonl``  metric_good on a 400-document "full test set" (the judged 100 first)
* ``summeval_annotations.jsonl`` / ``summeval_metric.jsonl``
                          8 systems x 10 documents in the SummEval release layout
                          (``id``, ``model_id``, ``expert_annotations``) and a metric for them
* ``faithfulness.jsonl`` TRUE-style rows: ``corpus``, ``system``, ``label`` (1 = faithful), ``score``
* ``shuffle.jsonl``      originals and their shuffled copies, scored by a toy order measure
* ``shuffle_length_gap.jsonl``  each original paired with the shuffle of a *different* document
* ``true_scored/<metric>/<corpus>_download.csv``  TRUE benchmark layout (``grounding``, ``generated_text``,
                          ``label``) plus ``score``, for 3 metrics x 3 corpora (``--format true``)
* ``confounders.jsonl``  faithfulness rows (``grounding``, ``generation``, ``label``, ``first_error``) scored by
                          ``score_nli`` (tracks the label) and ``score_overlap`` (follows length and overlap)
"""

from __future__ import annotations

import argparse
import csv
import json
import random
from pathlib import Path

import numpy as np

from learned_metrics.data.anli import augment_hypothesis
from learned_metrics.data.choices import HEDGING_PHRASES, INTRODUCTION_PHRASES
from learned_metrics.data.demo import DAYS, ITEMS, NAMES, PLACES, coherent_document
from learned_metrics.text.proxies import first_person_count, overlap_share

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


def write_correlation_files(out: Path, rng: np.random.Generator) -> np.ndarray:
    """human.jsonl, metric_good.jsonl, metric_weak.csv; returns the latent quality the other metrics follow."""
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
    return quality


def _grid_rows(grid: np.ndarray, docs: list[str], systems: list[str]) -> list[dict]:
    return [{"doc_id": doc, "system_id": system, "score": round(float(grid[d, s]), 4)}
            for d, doc in enumerate(docs) for s, system in enumerate(systems)]


def write_paper_table_metrics(out: Path, quality: np.ndarray, n_full_docs: int = 400) -> None:
    """Three more metrics on the same summaries (five in all, for the paper table), and metric_good on a
    full test set of ``n_full_docs`` documents (the judged 100 first) for realistic system-level correlations."""
    rng = np.random.default_rng(2)  # its own generator: the files above stay as they were
    docs = [f"d{i:03d}" for i in range(N_DOCS)]
    systems = [f"M{i:02d}" for i in range(N_SYSTEMS)]
    system_effect = quality.mean(axis=0)
    ensemble = quality + rng.normal(0, 0.45, quality.shape)  # the best one
    lexical = system_effect[None, :] + rng.normal(0, 1.0, quality.shape)  # right systems, noisy summaries
    length = 0.15 * quality + rng.normal(0, 1.0, quality.shape)  # barely related
    for name, grid in (("metric_ensemble", ensemble), ("metric_lexical", lexical), ("metric_length", length)):
        _write_jsonl(out / f"{name}.jsonl", _grid_rows(grid, docs, systems))
    extra = n_full_docs - N_DOCS
    unjudged = (system_effect[None, :] + rng.normal(0, 0.5, (extra, 1)) + rng.normal(0, 0.7, (extra, N_SYSTEMS))
                + rng.normal(0, 0.6, (extra, N_SYSTEMS)))
    unjudged[:, systems.index("M13")] += 0.8  # the same bias as on the judged documents
    good = _read_good(out, docs, systems)
    _write_jsonl(out / "metric_good_full.jsonl",
                 _grid_rows(np.vstack([good, unjudged]), docs + [f"d{i:03d}" for i in range(N_DOCS, n_full_docs)],
                            systems))


def _read_good(out: Path, docs: list[str], systems: list[str]) -> np.ndarray:
    """metric_good's judged scores as written, so the full set contains exactly them."""
    grid = np.full((len(docs), len(systems)), np.nan)
    for line in (out / "metric_good.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        grid[docs.index(row["doc_id"]), systems.index(row["system_id"])] = row["score"]
    return grid


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


# TRUE corpora (file name as published -> rows, share of consistent rows, difficulty for the NLI-like metrics)
TRUE_CORPORA = {"frank_valid_download": (120, 0.35, 1.0), "summeval_download": (150, 0.85, 0.8),
                "paws_download": (100, 0.45, 1.4)}
TRUE_METRICS = {"nli_aug": 1.5, "nli_base": 1.0}  # separation of the synthetic NLI-like scores


def true_pair(rnd: random.Random, consistent: bool) -> tuple[str, str]:
    """A grounding and a generation that restates it, or restates it with one detail swapped."""
    slots = {"n": rnd.choice(NAMES), "p": rnd.choice(PLACES), "d": rnd.choice(DAYS), "i": rnd.choice(ITEMS)}
    grounding = "{n} went to the {p} on {d} and bought {i}. It was busy, so {n} left early.".format(**slots)
    if not consistent:
        slot = rnd.choice("npdi")
        pool = {"n": NAMES, "p": PLACES, "d": DAYS, "i": ITEMS}[slot]
        slots[slot] = rnd.choice([v for v in pool if v != slots[slot]])
    generation = rnd.choice(["On {d}, {n} bought {i} at the {p}.", "{n} bought {i} at a busy {p}.",
                             "{n} left the {p} early on {d}."]).format(**slots)
    return grounding, generation


def write_true_files(out: Path) -> None:
    """TRUE files as `learned-metrics score faithfulness --hypothesis-field generated_text` leaves them, one
    folder per metric; every metric scores the same rows."""
    rng, rnd = np.random.default_rng(1), random.Random(1)
    scores: dict[str, dict[str, list[float]]] = {name: {} for name in [*TRUE_METRICS, "overlap"]}
    pairs: dict[str, list[tuple[str, str, int]]] = {}
    for corpus, (size, positive_rate, difficulty) in TRUE_CORPORA.items():
        labels = [int(rnd.random() < positive_rate) for _ in range(size)]
        pairs[corpus] = [(*true_pair(rnd, bool(label)), label) for label in labels]
        for name, separation in TRUE_METRICS.items():
            noise = rng.normal(0, 1, size)
            scores[name][corpus] = [round(float(np.tanh(0.6 * (separation * (y - 0.5) / difficulty + e))), 4)
                                    for y, e in zip(labels, noise, strict=True)]
        scores["overlap"][corpus] = [round(overlap_share(t, g), 4) for g, t, _ in pairs[corpus]]
    for name, per_corpus in scores.items():
        folder = out / "true_scored" / name
        folder.mkdir(parents=True, exist_ok=True)
        for corpus, rows in pairs.items():
            with (folder / f"{corpus}.csv").open("w", encoding="utf-8", newline="") as handle:
                writer = csv.writer(handle)
                writer.writerow(["grounding", "generated_text", "label", "score"])
                writer.writerows([*row, score] for row, score in zip(rows, per_corpus[corpus], strict=True))


def corrupted(sentence: str, rnd: random.Random) -> str:
    """The sentence with one detail changed: its person swapped for another, else rain turned into snow."""
    name = next((n for n in NAMES if n in sentence), None)
    if name is None:
        return sentence.replace("rain", "snow")
    return sentence.replace(name, rnd.choice([n for n in NAMES if n != name]))


def write_confounders_file(out: Path, n_rows: int = 300) -> None:
    """Rows for ``meta-eval confounders``: a generation copies 1-6 sentences of its grounding, an unfaithful one
    (label 0) has one detail changed (``first_error``: that sentence's 1-based position, null when faithful),
    a quarter start with a chat phrase ("I think", "Here is what I know:"). ``score_nli`` tracks the label and
    dips on first-person phrases; ``score_overlap`` follows the length and the word overlap (confounded)."""
    rng, rnd = np.random.default_rng(4), random.Random(4)  # its own generators: the files above stay as they were
    phrases = HEDGING_PHRASES + INTRODUCTION_PHRASES
    rows = []
    for i in range(n_rows):
        grounding = coherent_document(rnd)
        kept = sorted(rnd.sample(range(len(grounding)), rnd.randint(1, len(grounding))))
        generation = [grounding[k] for k in kept]
        label = int(rng.random() < 0.5)
        first_error = None if label else int(rng.integers(len(generation))) + 1
        if first_error:
            generation[first_error - 1] = corrupted(generation[first_error - 1], rnd)
        text = " ".join(generation)
        if rng.random() < 0.25:
            text = augment_hypothesis(text, rnd.choice(phrases))
        nli = np.tanh(1.5 * (label - 0.5) - 0.4 * first_person_count(text) + rng.normal(0, 0.5))
        overlap = 0.6 * overlap_share(text, " ".join(grounding)) + 0.0015 * len(text) + rng.normal(0, 0.08)
        rows.append({"id": f"ex{i:03d}", "grounding": " ".join(grounding), "generation": text, "label": label,
                     "first_error": first_error, "score_nli": round(float(nli), 4),
                     "score_overlap": round(float(overlap), 4)})
    _write_jsonl(out / "confounders.jsonl", rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(Path(__file__).parent), help="output folder (default: beside this script)")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    quality = write_correlation_files(out, rng)
    write_summeval_files(out, rng)
    write_faithfulness_file(out, rng)
    write_shuffle_files(out, rng)
    write_true_files(out)  # its own generators: the files above stay as they were
    write_confounders_file(out)
    write_paper_table_metrics(out, quality)
    for path in sorted(out.iterdir()):
        if path.suffix in (".jsonl", ".csv"):
            print(f"{path}  {path.stat().st_size / 1024:.0f} KiB")


if __name__ == "__main__":
    main()
