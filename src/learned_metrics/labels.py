"""Label names: one place that maps a model's ``id2label`` onto canonical names.

NLI checkpoints disagree on label order (roberta-large-mnli: contradiction=0,
entailment=2; the DeBERTa NLI model: entailment=0, contradiction=2), so indices
are never hard-coded: they are resolved by name, case-insensitively, with the
common aliases. Coherence models use ``incoherent``/``coherent``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from learned_metrics.errors import UserError

NLI_LABELS = ("entailment", "neutral", "contradiction")
COHERENCE_LABELS = ("incoherent", "coherent")
METRIC_KINDS = {"coherence": COHERENCE_LABELS, "faithfulness": NLI_LABELS}
"""The label set each metric kind needs, by canonical name."""

_ALIASES: dict[str, str] = {
    "entailment": "entailment",
    "entail": "entailment",
    "entails": "entailment",
    "entailed": "entailment",
    "e": "entailment",
    "neutral": "neutral",
    "n": "neutral",
    "contradiction": "contradiction",
    "contradict": "contradiction",
    "contradicts": "contradiction",
    "contradictory": "contradiction",
    "c": "contradiction",
    "incoherent": "incoherent",
    "shuffled": "incoherent",
    "coherent": "coherent",
    "original": "coherent",
}


def canonical_label(name: object) -> str | None:
    """Return the canonical label for a name or alias (``"ENTAILMENT"`` -> ``"entailment"``), else None."""
    return _ALIASES.get(str(name).strip().lower().replace("-", "_"))


def resolve_label_ids(id2label: Mapping[int | str, str], required: Sequence[str]) -> dict[str, int]:
    """Map each required canonical label to the model's class index, by name.

    Raises a UserError listing the model's labels when a required one cannot
    be found or is ambiguous (e.g. ``LABEL_0``/``LABEL_1`` of an untuned head).
    """
    found: dict[str, int] = {}
    for idx, name in id2label.items():
        canon = canonical_label(name)
        if canon is None:
            continue
        if canon in found:
            raise UserError(f"model labels are ambiguous: two classes map to '{canon}' ({dict(id2label)})")
        found[canon] = int(idx)
    missing = [label for label in required if label not in found]
    if missing:
        raise UserError(
            f"cannot resolve label(s) {missing} from the model's id2label {dict(id2label)}; "
            "set config.id2label to names such as entailment/neutral/contradiction"
        )
    return {label: found[label] for label in required}


def id2label_for(labels: Sequence[str]) -> dict[int, str]:
    """``["incoherent", "coherent"]`` -> ``{0: "incoherent", 1: "coherent"}``."""
    return dict(enumerate(labels))
