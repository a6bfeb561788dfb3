"""Write the demo scoring inputs (held-out generated texts, never seen in training).

    python examples/make_demo_inputs.py

- ``coherence_demo.jsonl``: per document, the original (label 1) and one shuffle (label 0),
  fields ``doc_id``, ``label``, ``text`` (sentences joined by newlines, as the demo model
  was trained). Score it, then run ``learned-metrics meta-eval shuffle-test`` on the output.
- ``faithfulness_demo.jsonl``: ``grounding``/``generation`` pairs with ``label`` 1 (entailed)
  or 0 (contradicted), for ``score faithfulness`` and ``meta-eval auc``, and a made-up
  ``system`` (``careful`` writes mostly faithful generations, ``sloppy`` mostly unfaithful ones)
  for ``score --system-field system``.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from learned_metrics.data.demo import coherent_document, nli_triple
from learned_metrics.data.shuffle import shuffled_negatives

HERE = Path(__file__).resolve().parent
SEED = 2026  # the demo training sets use other seeds
# Share of each made-up system among faithful and among unfaithful generations.
SYSTEMS = {"careful": (0.55, 0.15), "typical": (0.3, 0.35), "sloppy": (0.15, 0.5)}


def coherence_rows(n_docs: int, rng: random.Random) -> list[dict]:
    rows = []
    for i in range(n_docs):
        sentences = coherent_document(rng)
        (shuffled,) = shuffled_negatives(sentences, 1, rng, "\n")
        rows.append({"doc_id": f"demo{i:03d}", "label": 1, "text": "\n".join(sentences)})
        rows.append({"doc_id": f"demo{i:03d}", "label": 0, "text": shuffled})
    return rows


def faithfulness_rows(n_rows: int, rng: random.Random) -> list[dict]:
    rows = []
    while len(rows) < n_rows:
        triple = nli_triple(rng)
        if triple["label"] != "n":
            label = int(triple["label"] == "e")
            rows.append({"grounding": triple["context"], "generation": triple["hypothesis"], "label": label})
    return rows


def add_systems(rows: list[dict], rng: random.Random) -> list[dict]:
    """A system per row, drawn by label, so system means differ the way a metric should find."""
    names = list(SYSTEMS)
    for row in rows:
        weights = [SYSTEMS[name][0 if row["label"] == 1 else 1] for name in names]
        row["system"] = rng.choices(names, weights)[0]
    return rows


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


if __name__ == "__main__":
    rng = random.Random(SEED)
    write_jsonl(HERE / "coherence_demo.jsonl", coherence_rows(100, rng))
    faithfulness = add_systems(faithfulness_rows(200, rng), random.Random(SEED + 1))  # rows as before
    write_jsonl(HERE / "faithfulness_demo.jsonl", faithfulness)
    print(f"wrote {HERE / 'coherence_demo.jsonl'} and {HERE / 'faithfulness_demo.jsonl'}")
