"""Notebook inputs: long-format DataFrames, and matrices whose axes are named rather than guessed.

Every statistic takes human and metric scores as (documents x systems)
matrices. nlpstats and others use (systems x inputs): a matrix passed that way
round would silently give a "system-level" correlation over documents. So the
API names the axes (``axes="documents x systems"``, the default, or
``"systems x documents"``), and a pandas DataFrame in long format (columns
``doc_id``, ``system_id`` and a score column) needs no axes at all: all frames
of a call are aligned on the same documents and systems, NaN where a summary
is absent, and a duplicate (document, system) row is an error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from learned_metrics.errors import UserError
from learned_metrics.io import plain_value
from learned_metrics.validate import number, numbers

DOC, SYSTEM = "doc_id", "system_id"
AXES = ("documents x systems", "systems x documents")


def is_long_frame(obj: Any) -> bool:
    columns = getattr(obj, "columns", None)
    return columns is not None and DOC in columns and SYSTEM in columns


def _score_column(frame: Any, name: str) -> str:
    others = [c for c in frame.columns if c not in (DOC, SYSTEM)]
    if "score" in others:
        return "score"
    numeric = [c for c in others if np.issubdtype(frame[c].dtype, np.number)]
    if len(numeric) != 1:
        raise UserError(f"{name}: a long DataFrame needs a 'score' column or exactly one numeric column besides "
                        f"{DOC} and {SYSTEM}; got {others}")
    return numeric[0]


def _matrix(values: Any, name: str, axes: str) -> np.ndarray:
    if axes not in AXES:
        raise UserError(f"axes must be one of {AXES}, got {axes!r}")
    grid = numbers(values, name)
    if grid.ndim != 2:
        raise UserError(f"{name}: expected a 2-D ({axes}) matrix, got shape {grid.shape}")
    return grid.T if axes == "systems x documents" else grid


def input_grids(human: Any, metrics: dict[str, Any], axes: str = "documents x systems"
                ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """(documents x systems) matrices for the human scores and every metric, from matrices or long DataFrames.

    Refused with one line, as the CLI refuses its files: metrics not given as a mapping of name -> scores, values
    that are not numbers, and inputs where no (document, system) cell has a human and a metric score."""
    if not isinstance(metrics, Mapping):
        raise UserError(f"metrics must be a mapping of name -> scores, e.g. {{'bleu': matrix}}, got "
                        f"{type(metrics).__name__}")
    named = [("human", human), *metrics.items()]  # a list: a metric may itself be called "human"
    frames = [is_long_frame(value) for _, value in named]
    if any(frames) and not all(frames):
        raise UserError(f"give every input as a long DataFrame ({DOC}, {SYSTEM}, score) or every one as a matrix")
    grids = _frames_to_grids(named) if all(frames) else [_matrix(value, name, axes) for name, value in named]
    if metrics and all(grid.shape == grids[0].shape for grid in grids):
        present = ~np.isnan(grids[0])
        for grid in grids[1:]:
            present &= ~np.isnan(grid)
        if not present.any():
            raise UserError("no (document, system) cell has both a human and a metric score (empty or disjoint "
                            "inputs)")
    return grids[0], dict(zip(metrics, grids[1:], strict=True))


def _frames_to_grids(frames: list[tuple[str, Any]]) -> list[np.ndarray]:
    docs: dict[Any, int] = {}
    systems: dict[Any, int] = {}
    for _, frame in frames:
        for value in frame[DOC]:
            docs.setdefault(value, len(docs))
        for value in frame[SYSTEM]:
            systems.setdefault(value, len(systems))
    grids = []
    for name, frame in frames:
        column = _score_column(frame, name)
        grid = np.full((len(docs), len(systems)), np.nan)
        seen = np.zeros(grid.shape, dtype=bool)
        for number_, (doc, system, score) in enumerate(zip(frame[DOC], frame[SYSTEM], frame[column], strict=True), 1):
            row, col = docs[doc], systems[system]
            if seen[row, col]:
                raise UserError(f"{name}: more than one row for ({DOC}={doc!r}, {SYSTEM}={system!r})")
            seen[row, col] = True
            value = number(plain_value(score), row=number_, field=f"{name}.{column}")
            grid[row, col] = np.nan if value is None else value
        grids.append(grid)
    return grids
