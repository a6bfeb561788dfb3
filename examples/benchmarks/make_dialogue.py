"""Write the dialogue stand-ins: knowledge-grounded responses, and the same rows in TRUE's layout.

    python examples/benchmarks/make_dialogue.py

- ``dialogue/begin_style.csv``: ``knowledge, history, response, label`` as the dialogue benchmarks give
  them (BEGIN, Q2, DialFact keep the knowledge and the dialogue history apart); label 1 = the response is
  supported by the knowledge, 0 = it is not (contradicted, or not attributable: BEGIN's generic and
  unattributable, DialFact's refuted and not-enough-info).
- ``dialogue/true/begin_download.csv``: the same rows in TRUE's layout, ``grounding, generated_text,
  label``, the grounding being the knowledge, a newline, then the history (``JOINER``): exactly what the
  pandas step of docs/benchmarks.md ("Dialogue: knowledge and history as the grounding") writes.
"""

from __future__ import annotations

import csv
import random
from pathlib import Path

from learned_metrics.data.demo import nli_triple

HERE = Path(__file__).resolve().parent / "dialogue"
SEED = 2027  # the other stand-ins and the demo training sets use other seeds
JOINER = "\n"  # between the knowledge and the history, and between turns
OPENERS = [("User: Any news from town this week?", "Bot: Quite a lot, actually."),
           ("User: I love hearing about people's errands.", "Bot: Then I have one for you."),
           ("User: What did your friends do lately?", "Bot: Let me tell you about one of them.")]


def dialogue_rows(n_rows: int, rng: random.Random) -> list[dict]:
    """Knowledge (a demo NLI context), two turns of history, a response and its 0/1 label."""
    rows = []
    for _ in range(n_rows):
        triple = nli_triple(rng)
        rows.append({"knowledge": triple["context"], "history": JOINER.join(rng.choice(OPENERS)),
                     "response": triple["hypothesis"], "label": int(triple["label"] == "e")})
    return rows


def true_layout(rows: list[dict]) -> list[dict]:
    """TRUE's columns: the grounding is the knowledge, JOINER, the history; the response is generated_text."""
    return [{"grounding": row["knowledge"] + JOINER + row["history"], "generated_text": row["response"],
             "label": row["label"]} for row in rows]


def write_csv(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    rows = dialogue_rows(48, random.Random(SEED))
    write_csv(HERE / "begin_style.csv", rows)
    write_csv(HERE / "true" / "begin_download.csv", true_layout(rows))
    print(f"wrote {HERE / 'begin_style.csv'} and {HERE / 'true' / 'begin_download.csv'}")
