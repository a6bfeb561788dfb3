"""Pieces every data-prep builder shares: the output check, atomic saving with a report, script entry."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from learned_metrics.io import dump_json, read_json_object
from learned_metrics.outputs import atomic_folder, check_outputs, folder_output

REPORT_NAME = "report.json"


def check_dataset_output(output: str | os.PathLike, kind: str, inputs: Sequence[str | os.PathLike | None],
                         overwrite: bool) -> None:
    """Before a build starts: ``output`` may not be (or contain) an input, nor a folder we did not write."""
    check_outputs([folder_output(output, kind)], inputs=inputs, overwrite=overwrite)


def save_dataset_with_report(dataset_dict: Any, report: dict[str, Any], output: str | Path, kind: str,
                             overwrite: bool = False) -> None:
    """Save a ``datasets.DatasetDict`` and its ``report.json`` into ``output`` atomically: an interrupted build never
    leaves a half-written set that a later training run would load."""
    with atomic_folder(Path(output), kind, overwrite) as tmp:
        dataset_dict.save_to_disk(str(tmp))
        (tmp / REPORT_NAME).write_text(dump_json(report) + "\n", encoding="utf-8")


def load_report(data_dir: str | Path) -> dict[str, Any] | None:
    """The ``report.json`` a builder wrote beside a data set, if any (one line if it is not a JSON object)."""
    return read_json_object(Path(data_dir) / REPORT_NAME)


@contextlib.contextmanager
def datasets_progress_bars_disabled() -> Iterator[None]:
    """Silence ``datasets`` bars around steps that may stop on a user error, so it prints alone."""
    from datasets.utils import logging as ds_logging

    enabled = ds_logging.is_progress_bar_enabled()
    ds_logging.disable_progress_bar()
    try:
        yield
    finally:
        if enabled:
            ds_logging.enable_progress_bar()
