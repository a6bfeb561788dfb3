"""Any NLI data (files, folders, Hugging Face datasets, mixed) as the faithfulness metric's training set (rules in
docs/nli_data.md, 'prep nli'): labels by name (integers only through ``--label-order`` or a ``ClassLabel``), splits
by name or seeded by premise, caps and weights per source, pairs in two splits checked, augmented as ANLI is.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import datasets
import numpy as np

from learned_metrics import validate
from learned_metrics.data.anli import augmentation_settings, nli_features, save_augmented
from learned_metrics.data.choices import NLI_SOURCES, NOT_ENTAILMENT, NliSettings, data_label
from learned_metrics.data.common import SPLITS, drop_repeats, normalised, pair_text, text_key
from learned_metrics.data.sources import (
    Part,
    SplitWriter,
    check_named_splits,
    location_parts,
    missing_fields,
    split_of_name,
)
from learned_metrics.errors import UserError
from learned_metrics.io import DATA_SUFFIXES, plain_value
from learned_metrics.labels import NLI_LABELS
from learned_metrics.outputs import check_outputs, folder_output, scratch_folder
from learned_metrics.settings import takes

OUTPUT_KIND = "nli_set"
_LABEL_NAMES = "entailment, neutral, contradiction (or e, n, c), or not_entailment with --two-class"

FEATURES = nli_features("source")

# Per-source overrides a config's mapping may give (the rest of the settings are the build's).
_PER_SOURCE = ("premise_field", "hypothesis_field", "label_field", "id_field", "label_order", "two_class",
               "split_field")


@dataclasses.dataclass(frozen=True)
class Source:
    """One source of a build: where it is, its name, its cap/weight and its own field settings."""

    name: str
    location: str
    settings: NliSettings
    cap: int | None = None
    weight: float = 1.0


def _default_name(location: str) -> str:
    kind, _, rest = location.partition(":") if location.startswith(("hf:", "disk:")) else ("", "", location)
    if kind == "hf":
        return rest.split(":")[0].rstrip("/").split("/")[-1]
    path = Path(rest)
    return path.stem if path.suffix.lower() in DATA_SUFFIXES else path.name


def parse_sources(sources: Any, settings: NliSettings) -> list[Source]:
    """The build's sources: ``"[NAME=]SOURCE"`` texts, or mappings ``{location, name, cap, weight, <field
    options>}`` from a config; caps and weights of ``settings`` by name; names distinct."""
    items = (sources,) if isinstance(sources, (str, Mapping)) else validate.ordered(sources, "sources", also="--source")
    if not items:
        raise UserError(f"no --source given; expected {NLI_SOURCES}")
    parsed = []
    for item in items:
        if isinstance(item, Mapping):
            spec = {str(k): (list(v) if isinstance(v, (list, tuple)) or type(v).__name__ == "ListConfig" else v)
                    for k, v in item.items()}
            unknown = sorted(set(spec) - {"location", "name", "cap", "weight", *_PER_SOURCE})
            if unknown or "location" not in spec:
                raise UserError(f"a source mapping takes location (required), name, cap, weight and "
                                f"{', '.join(_PER_SOURCE)}; got {sorted(spec)}")
            location = str(spec.pop("location"))
            name = str(spec.pop("name", None) or _default_name(location))
            cap, weight = spec.pop("cap", None), spec.pop("weight", None)
            own = dataclasses.replace(settings, **spec)
        else:
            text = str(item)
            name, sep, location = text.partition("=")
            if not sep or "/" in name or ":" in name or not name.strip():
                name, location = _default_name(text), text
            cap, weight, own = None, None, settings
        if not location.strip():
            raise UserError(f"--source {item!r}: empty location; expected {NLI_SOURCES}")
        if weight is not None and validate.finite(weight, f"weight of source {name}") <= 0:
            raise UserError(f"weight of source {name} must be above 0, got {float(weight)}")
        parsed.append(Source(name.strip(), location.strip(), own,
                             None if cap is None else validate.int_at_least(cap, 1, f"cap of source {name}"),
                             1.0 if weight is None else float(weight)))
    names = [s.name for s in parsed]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise UserError(f"two sources are named {repeated[0]!r}; name them with --source NAME=SOURCE")
    caps, weights = _by_name(settings.cap, "cap", names), _by_name(settings.weight, "weight", names)
    return [dataclasses.replace(s, cap=int(caps[s.name]) if s.name in caps else s.cap,
                                weight=float(weights[s.name]) if s.name in weights else s.weight) for s in parsed]


def _by_name(items: tuple[str, ...] | None, what: str, names: list[str]) -> dict[str, str]:
    found = dict(item.split("=", 1) for item in items or ())
    unknown = sorted(set(found) - set(names))
    if unknown:
        raise UserError(f"--{what} names source {unknown[0]!r}; the sources are {', '.join(names)}")
    return found


def _label(value: Any, part: Part, s: NliSettings, row: int) -> str | None:
    """A row's canonical label; None for an unlabelled row (-1, as Hub test splits have)."""
    where = {"path": part.where, "row": row, "field": s.label_field}
    value = plain_value(value)
    if validate.is_missing(value) or isinstance(value, bool):
        raise UserError(f"label is {value!r}; expected {_LABEL_NAMES}", **where)
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()) or \
            (isinstance(value, str) and re.fullmatch(r"\s*-?\d+\s*", value) is not None):
        index = int(float(value))
        if index == -1:
            return None
        if s.label_order and part.names and tuple(map(data_label, s.label_order)) != tuple(map(data_label, part.names)):
            raise UserError(f"--label-order {','.join(s.label_order)} disagrees with the label names this data set "
                            f"stores ({','.join(part.names)}), which name its indices; drop --label-order, or give "
                            "it per source for the sources without names (docs/nli_data.md)", **where)
        order = part.names or s.label_order
        if order is None:
            raise UserError(f"integer label {index} needs --label-order: expected distinct class names in index "
                            "order such as entailment,neutral,contradiction (or e,n,c)", **where)
        if not 0 <= index < len(order):
            raise UserError(f"label {index} is outside --label-order {','.join(order)}", **where)
        value = order[index]
    name = data_label(value)
    if name == NOT_ENTAILMENT:
        if s.two_class is None:
            raise UserError(f"two-class label {value!r}: pass --two-class neutral or --two-class contradiction "
                            "(what not_entailment becomes; docs/nli_data.md)", **where)
        return s.two_class
    if name not in NLI_LABELS:
        raise UserError(f"unknown label {value!r}, expected {_LABEL_NAMES}", **where)
    return name


def read_source(source: Source, work: Path, tag: str = "0") -> tuple[dict[str, datasets.Dataset], dict[str, Any]]:
    """A source's rows in :data:`FEATURES`, per split; and what was read (files, rows, unlabelled rows dropped)."""
    s = source.settings
    parts = location_parts(source.location, NLI_SOURCES, s.label_field, source.name)
    if s.split_field is None:
        check_named_splits(parts, f"source {source.name!r}", "rename it or pass --split-field")
    wanted = [s.premise_field, s.hypothesis_field, s.label_field, *(f for f in (s.id_field, s.split_field) if f)]
    writer, read, unlabelled, copies = SplitWriter(work, tag, FEATURES), Counter(), 0, 0
    for part in parts:
        for i, (number, row) in enumerate(part.rows):
            if i == 0:  # the first row names the fields of a file; a Hub split's columns are known
                part.columns = part.columns or list(row)
                missing_fields(part, [(f, next(n for n in _PER_SOURCE if getattr(s, n) == f)) for f in wanted])
                built = {"augmented", "phrase"} <= set(part.columns)  # a set this builder (or prep anli) wrote
            if built and row.get("augmented") is True:  # its originals are augmented again here, never its copies
                copies += 1
                continue
            at = {"path": part.where, "row_number": number}
            premise = validate.row_text(row, s.premise_field, **at)
            hypothesis = validate.row_text(row, s.hypothesis_field, **at)
            label = _label(validate.field_value(row, s.label_field, **at), part, s, number)
            if label is None:
                unlabelled += 1
                continue
            if s.split_field is not None:
                value = validate.row_text(row, s.split_field, **at)
                split = split_of_name(value, part.where)
                if split is None:
                    raise UserError(f"split {value!r} is none of train, dev/validation, test", path=part.where,
                                    row=number, field=s.split_field)
            elif (split := part.split) is None:  # drawn from the premise and the seed: same premise, same split
                key = normalised(premise)  # as shared_pairs compares: spacing does not make another premise
                digest = hashlib.blake2b(f"{s.seed}\x00{key}".encode("utf-8", "surrogatepass"), digest_size=8)
                u = int.from_bytes(digest.digest(), "big") / 2**64
                split = ("test" if u < s.test_fraction else
                         "validation" if u < s.test_fraction + s.val_fraction else "train")
            uid = validate.row_key(row, s.id_field, **at) if s.id_field else f"{Path(part.where).name}:{number}"
            writer.add(split, {"premise": premise, "hypothesis": hypothesis, "label": label, "source": source.name,
                               "uid": f"{source.name}:{uid}", "augmented": False, "phrase": None})
            read[split] += 1
    splits = writer.close()
    if not splits:
        raise UserError(f"source {source.name!r} has no labelled rows", path=source.location)
    return splits, {"name": source.name, "location": source.location, "cap": source.cap, "weight": source.weight,
                    "parts": [p.where for p in parts], "rows_read": dict(read), "dropped_unlabelled": unlabelled,
                    "augmented_copies_left_out": copies}


def cap_and_weight(ds: datasets.Dataset, split: str, source: Source) -> datasets.Dataset:
    """At most ``cap`` rows (seeded sample, order kept); training rows times ``weight`` (whole copies, then a
    seeded sample for the fraction)."""
    names = [int.from_bytes(hashlib.blake2b(n.encode(), digest_size=4).digest(), "big") for n in (source.name, split)]
    rng = np.random.default_rng([source.settings.seed, *names])
    if source.cap is not None and len(ds) > source.cap:
        ds = ds.select(np.sort(rng.choice(len(ds), source.cap, replace=False)))
    if split != "train" or source.weight == 1.0:
        return ds
    whole, fraction = int(source.weight), source.weight - int(source.weight)
    indices = [np.arange(len(ds))] * whole
    indices.append(np.sort(rng.choice(len(ds), int(round(fraction * len(ds))), replace=False)))
    return ds.select(np.concatenate(indices))


def shared_pairs(splits: dict[str, datasets.Dataset], action: str) -> tuple[dict[str, datasets.Dataset],
                                                                            dict[str, int]]:
    """Pairs (premise, hypothesis) found in two splits: refused (one line naming both rows), or dropped from the
    lower split (train < validation < test) with a count per split."""
    kept, dropped, repeats = drop_repeats(splits, SPLITS, ("premise", "hypothesis", "uid"),
                                          lambda p, h, _: pair_text(p, h))
    if repeats and action == "refuse":
        split, uid, other_split, other_uid = repeats[0]
        raise UserError(f"the pair of {uid} ({split}) is also in {other_split} ({other_uid}); pass --shared-pairs "
                        "drop to drop such pairs from the lower split, counted in report.json")
    return kept, dropped


def pairs_with_another_label(splits: dict[str, datasets.Dataset]) -> dict[str, int]:
    """Per split, the rows whose pair (compared as shared pairs are) an earlier row of the split holds with another
    label: label noise training would learn both ways, counted in report.json (kept, as the source gives them)."""
    counts = {}
    for split, ds in splits.items():
        first: dict[bytes, str] = {}
        counts[split] = 0
        for batch in ds.select_columns(["premise", "hypothesis", "label"]).iter(batch_size=10_000):
            for premise, hypothesis, label in zip(batch["premise"], batch["hypothesis"], batch["label"], strict=True):
                counts[split] += first.setdefault(text_key(pair_text(premise, hypothesis)), label) != label
    return counts


@takes(NliSettings)
def build_nli(sources: Any, output: str | Path, *, settings: NliSettings) -> dict[str, Any]:
    """Build an (augmented) NLI DatasetDict (train/validation, test when any) from ``sources`` (``"[NAME=]SOURCE"``
    texts or mappings with per-source options) in ``output``; the settings are the fields of
    :class:`~learned_metrics.data.choices.NliSettings`, as keywords or one ``settings=`` object. Returns the report,
    also saved as ``report.json``."""
    s = settings
    parsed = parse_sources(sources, s)
    augmentation = augmentation_settings(s)
    local = [Path(src.location.removeprefix("disk:")).expanduser() for src in parsed
             if not src.location.startswith("hf:")]
    check_outputs([folder_output(output, OUTPUT_KIND)], inputs=local, overwrite=s.overwrite)
    with scratch_folder(output) as work:
        per_split: dict[str, list[datasets.Dataset]] = {}
        read = []
        for index, source in enumerate(parsed):
            splits, info = read_source(source, work, str(index))
            read.append(info)
            for split, ds in splits.items():
                per_split.setdefault(split, []).append(cap_and_weight(ds, split, source))
        merged = {split: datasets.concatenate_datasets(per_split[split]) for split in SPLITS if split in per_split}
        merged, dropped = shared_pairs(merged, s.shared_pairs)
        for split in ("train", "validation"):
            if not len(merged.get(split, [])):
                seeded = (f"; files that name no split are split by premise, each premise drawn into validation "
                          f"with chance --val-fraction ({s.val_fraction:g}), so a source of few premises can get "
                          "none: raise --val-fraction or change --seed") if split == "validation" else ""
                raise UserError(f"no {split} rows in {', '.join(src.location for src in parsed)}: name a "
                                f"{'dev/validation' if split == 'validation' else split} file or folder, or pass "
                                f"--split-field{seeded}")
        return save_augmented({split: ds for split, ds in merged.items() if len(ds)}, augmentation, s, output,
                              OUTPUT_KIND, {"builder": "nli", "sources": read}, "source", dropped_shared_pairs=dropped,
                              pairs_with_another_label=pairs_with_another_label(merged))
