"""Pieces every data-prep builder shares: atomic saving with a report, and reading that report back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from learned_metrics.io import dump_json, read_json_object
from learned_metrics.outputs import atomic_folder

REPORT_NAME = "report.json"


def save_dataset_with_report(dataset_dict: Any, report: dict[str, Any], output: str | Path, kind: str,
                             overwrite: bool = False) -> None:
    """Save a ``datasets.DatasetDict`` and its ``report.json`` into ``output`` atomically: an interrupted build never
    leaves a half-written set that a later training run would load."""
    with atomic_folder(Path(output), kind, overwrite) as tmp:
        dataset_dict.save_to_disk(str(tmp))
        (tmp / REPORT_NAME).write_text(dump_json(report) + "\n", encoding="utf-8")


def normalised(text: str) -> str:
    """A text as the builders compare texts across splits: runs of whitespace as one space, none at the ends."""
    return " ".join(text.split())


def load_report(data_dir: str | Path) -> dict[str, Any] | None:
    """The ``report.json`` a builder wrote beside a data set, if any (one line if it is not a JSON object)."""
    return read_json_object(Path(data_dir) / REPORT_NAME)

