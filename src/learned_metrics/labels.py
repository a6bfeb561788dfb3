"""Label names: one place that maps a model's ``id2label`` onto canonical names.

NLI checkpoints disagree on label order (roberta-large-mnli: contradiction=0; the DeBERTa NLI model: entailment=0), so
indices are resolved by name, case-insensitively, with aliases."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from learned_metrics.errors import UserError
from learned_metrics.validate import ordered

NLI_LABELS = ("entailment", "neutral", "contradiction")
COHERENCE_LABELS = ("incoherent", "coherent")
METRIC_KINDS = {"coherence": COHERENCE_LABELS, "faithfulness": NLI_LABELS}
"""The label set each metric kind needs, by canonical name."""
NOT_ENTAILMENT_NAMES = frozenset({"not_entailment", "non_entailment", "not_entailed", "no_entailment", "not_entail"})
"""A two-class NLI head's or data set's other class (RTE, FEVER-style): neutral and contradiction in one."""
SCORE_MODES = ("e", "e-c")
"""What a faithfulness score is: P(entail), or P(entail) - P(contradict) (the paper's)."""

_SPELLINGS = {"entailment": ("entail", "entails", "entailed", "e"), "neutral": ("n",),
              "contradiction": ("contradict", "contradicts", "contradictory", "c"),
              "incoherent": ("shuffled",), "coherent": ("original",)}
_ALIASES = {alias: name for name, aliases in _SPELLINGS.items() for alias in (name, *aliases)}

_GENERIC = re.compile(r"label_?\d+", re.IGNORECASE)


def is_generic(id2label: Mapping[int | str, str]) -> bool:
    """``LABEL_0``, ``LABEL_1``, ...: a head whose config never named its classes (transformers' default)."""
    return bool(id2label) and all(_GENERIC.fullmatch(str(name).strip()) for name in id2label.values())


def parse_label_order(order: str | Sequence[str],
                      canonical: Callable[[object], str | None] | None = None) -> tuple[str, ...]:
    """``"entailment,neutral,contradiction"`` (or e,n,c), or a list/tuple -> canonical names in class-index order; one
    line when a name is unknown or repeated, or when they come as a set (set-iteration order is not the card's).
    ``canonical``: the names known (default :func:`canonical_label`; a data set's also knows ``not_entailment``)."""
    names = [str(name) for name in ordered(order, "label_order", also="--label-order")]
    canon = [(canonical or canonical_label)(name) for name in names]
    if not names or None in canon or len(set(canon)) != len(canon):
        raise UserError(f"--label-order: expected distinct class names in index order such as "
                        f"entailment,neutral,contradiction (or e,n,c), got {order!r}")
    return tuple(canon)


def ordered_id2label(id2label: Mapping[int | str, str], order: Sequence[str]) -> dict[int, str]:
    """The model's classes named by ``--label-order``; refused when the count differs, or when the config names its
    classes and disagrees (a wrong order swaps entailment and contradiction; ``not_entailment`` is no contradiction)."""
    if len(order) != len(id2label):
        raise UserError(f"--label-order names {len(order)} classes; the model has {len(id2label)} ({dict(id2label)})")
    if not is_generic(id2label):
        named = {int(i): canonical_label(name) for i, name in id2label.items()}
        i = next((i for i, name in enumerate(order) if named.get(i) != name), None)
        if i is not None:
            raise UserError(f"--label-order says class {i} is {order[i]}, but the model's config calls it "
                            f"{id2label.get(i, id2label.get(str(i)))!r}; drop --label-order (the config names its "
                            "labels)")
    return dict(enumerate(order))


def canonical_label(name: object) -> str | None:
    """Return the canonical label for a name or alias (``"ENTAILMENT"`` -> ``"entailment"``), else None."""
    return _ALIASES.get(str(name).strip().lower().replace("-", "_"))


def class_names_of(dataset: Any, field: str | None) -> list[str] | None:
    """The names of a ``datasets`` label column stored as ``ClassLabel`` indices, else None (texts as given)."""
    feature = dataset.features.get(field)
    return list(feature.names) if hasattr(feature, "names") else None


def named_label(value: object, class_names: Sequence[str] | None) -> str | None:
    """A label column's value as its canonical name (an index through the column's names, a text as given): what
    training and every check of a data set read, never the index alone, whose order is the data set's."""
    return canonical_label(class_names[value] if class_names is not None else value)


def resolve_label_ids(id2label: Mapping[int | str, str], required: Sequence[str],
                      option: str = "--label-order") -> dict[str, int]:
    """Each required label's class index, by name; one line naming the model's labels if one is missing or twice,
    and the ``option`` that names a generic head's classes (training's is ``model.head_labels``)."""
    found: dict[str, int] = {}
    for idx, name in id2label.items():
        canon = canonical_label(name)
        if canon in found:
            raise UserError(f"model labels are ambiguous: two classes map to '{canon}' ({dict(id2label)})")
        if canon is not None:
            found[canon] = int(idx)
    missing = [label for label in required if label not in found]
    if missing:
        raise UserError(f"cannot resolve label(s) {missing} from the model's " + (
            f"generic labels {dict(id2label)}: pass {option} with its class names in index order as its model "
            f"card states, e.g. {_spelled(option, required)}" if is_generic(id2label) else
            f"id2label {dict(id2label)}; set config.id2label to names such as entailment/neutral/contradiction"))
    return {label: found[label] for label in required}


def _spelled(option: str, required: Sequence[str]) -> str:
    """The option with an example value, as its surface spells it (a flag, or a Hydra override)."""
    names = "entailment,neutral,contradiction" if "entailment" in required else ",".join(required)
    return f"{option} {names}" if option.startswith("--") else f"{option}=[{names}]"
