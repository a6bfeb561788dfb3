"""Pieces every data-prep builder shares: atomic saving with a report, script entry."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from learned_metrics.errors import UserError
from learned_metrics.io import atomic_dir

REPORT_NAME = "report.json"


def save_dataset_with_report(dataset_dict: Any, report: dict[str, Any], output: str | Path) -> Path:
    """Save a ``datasets.DatasetDict`` and its ``report.json`` into ``output`` atomically.

    The folder appears only once everything is written, so an interrupted
    build never leaves a half-written set that a later training run would load.
    """
    output = Path(output)
    with atomic_dir(output) as tmp:
        dataset_dict.save_to_disk(str(tmp))
        (tmp / REPORT_NAME).write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return output


def load_report(data_dir: str | Path) -> dict[str, Any] | None:
    """The ``report.json`` a builder wrote beside a data set, if any."""
    path = Path(data_dir) / REPORT_NAME
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def run_script(main: Callable[[Sequence[str] | None], Any], argv: Sequence[str] | None = None) -> int:
    """Run a data-prep ``main``; a UserError becomes one line on stderr and exit code 2."""
    prog = Path(sys.argv[0]).name
    try:
        main(argv)
    except UserError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    return 0


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
