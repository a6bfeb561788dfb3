"""Text the project generates itself, for the offline demos and the tests: raw inputs in the layouts a user would
bring (a ``.jsonl`` of documents; the official ANLI release folder), then the *real* data-prep code on them.
Coherent documents are narratives ordered by discourse markers and time, so an original differs from its shuffles.
"""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

from learned_metrics.errors import UserError
from learned_metrics.io import json_line

NAMES = ["Anna", "Ben", "Carla", "David", "Elif", "Farid", "Grace", "Hugo", "Ines", "Jonas", "Kira", "Liam"]
PLACES = ["market", "library", "station", "harbour", "museum", "bakery", "garden", "office", "stadium", "school"]
ITEMS = ["apples", "books", "tickets", "flowers", "bread", "stamps", "paint", "coffee", "maps", "shoes"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

# One step of a narrative per entry; {n} name, {p} place, {i} item, {h} hour.
_STEPS = [
    "{n} woke up at {h} o'clock and got ready to leave.",
    "{n} walked to the {p} to buy {i}.",
    "At the {p}, {n} met an old friend and they talked for a while.",
    "The {i} were cheaper than {n} had expected.",
    "{n} paid for the {i} and put them in a bag.",
    "On the way back, it started to rain.",
    "{n} waited under a roof until the rain stopped.",
    "Back at home, {n} put the {i} on the kitchen table.",
    "In the evening, {n} told the family about the trip.",
]
_MIDDLE_MARKERS = ["Then", "After that,", "Later,", "Soon after,"]


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text and not text.startswith(tuple(NAMES)) else text


def coherent_document(rng: random.Random) -> list[str]:
    """One coherent narrative of 3-6 sentences with ordered discourse markers."""
    n_sent = rng.randint(3, 6)
    steps = sorted(rng.sample(range(len(_STEPS)), n_sent))
    slots = {"n": rng.choice(NAMES), "p": rng.choice(PLACES), "i": rng.choice(ITEMS), "h": rng.randint(5, 9)}
    markers = ["First,", *_MIDDLE_MARKERS[: n_sent - 2], "Finally,"]
    return [f"{marker} {_lower_first(_STEPS[s].format(**slots))}" for marker, s in zip(markers, steps, strict=True)]


def write_coherence_documents(path: str | Path, n_docs: int, seed: int = 0) -> Path:
    """Write ``n_docs`` generated documents as ``.jsonl`` rows ``{"id", "sentences"}``."""
    rng = random.Random(seed)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = (json_line({"id": f"demo-{i:05d}", "sentences": coherent_document(rng)}) for i in range(n_docs))
    path.write_text("".join(rows), encoding="utf-8")
    return path


def nli_triple(rng: random.Random) -> dict[str, str]:
    """One (context, hypothesis, label) triple in the official ANLI letter convention (e/n/c)."""
    name, place, item, day = rng.choice(NAMES), rng.choice(PLACES), rng.choice(ITEMS), rng.choice(DAYS)
    count = rng.randint(2, 9)
    context = f"On {day}, {name} went to the {place} and bought {count} {item}. The weather was mild."
    label = rng.choice("enc")
    if label == "e":
        hypothesis = rng.choice([f"{name} bought {item}.", f"{name} went to the {place}.",
                                 f"{name} bought {count} {item} on {day}."])
    elif label == "c":
        other = rng.choice([c for c in range(2, 10) if c != count])
        other_day = rng.choice([d for d in DAYS if d != day])
        hypothesis = rng.choice([f"{name} bought {other} {item}.", f"{name} never went to the {place}.",
                                 f"{name} went there on {other_day}."])
    else:
        hypothesis = rng.choice([f"{name} likes {item} a lot.", f"{name} paid with a card.",
                                 f"{name} went there with a friend."])
    return {"context": context, "hypothesis": hypothesis, "label": label}


def write_anli_layout(root: str | Path, sizes: dict[str, int] | None = None, seed: int = 0) -> Path:
    """Write generated NLI triples in the official ANLI release layout (``R1/train.jsonl``, ...); ``sizes`` maps
    split names (train/dev/test) to rows per round."""
    sizes = sizes or {"train": 300, "dev": 60, "test": 60}
    rng = random.Random(seed)
    root = Path(root)
    for rnd in ("R1", "R2", "R3"):
        (root / rnd).mkdir(parents=True, exist_ok=True)
        for split, n_rows in sizes.items():
            rows = (json_line({"uid": f"{rnd.lower()}-{split}-{i:05d}", **nli_triple(rng)}) for i in range(n_rows))
            (root / rnd / f"{split}.jsonl").write_text("".join(rows), encoding="utf-8")
    return root


def build_coherence_demo_set(output: str | Path, n_docs: int = 600, seed: int = 0) -> dict:
    """Generate documents, then build the shuffle set with the real data-prep code."""
    from learned_metrics.data.shuffle_set import build_shuffle_set

    with tempfile.TemporaryDirectory() as tmp:
        docs = write_coherence_documents(Path(tmp) / "documents.jsonl", n_docs, seed)
        return build_shuffle_set(f"jsonl:{docs}", output, shuffles_per_doc=1, seed=seed, splitter="newline")


def build_nli_demo_set(output: str | Path, sizes: dict[str, int] | None = None, seed: int = 0,
                       source: str = "generated", **augmentation) -> dict:
    """Generate NLI triples in the official ANLI layout, then augment them with the real builder (``augmentation``:
    its keywords, so the ablations work on the demo too; ``source`` only names the origin: always generated)."""
    from learned_metrics.data.anli import build_anli_augmented

    if source != "generated":
        raise UserError(f"source {source!r}: the NLI demo set is generated; expected source 'generated'")
    with tempfile.TemporaryDirectory() as tmp:
        root = write_anli_layout(Path(tmp) / "anli", sizes, seed)
        return build_anli_augmented(f"jsonl:{root}", output, seed=seed, **augmentation)
