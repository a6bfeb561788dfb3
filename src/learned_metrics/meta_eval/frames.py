"""Notebook inputs: long-format DataFrames, and matrices whose axes are named rather than guessed: nlpstats and
others use (systems x inputs) where every statistic here takes (documents x systems), and a matrix passed that way
round would silently give a "system-level" correlation over documents. Long frames are read as files are.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from learned_metrics.errors import UserError
from learned_metrics.io import numbered_rows
from learned_metrics.meta_eval.data import key_grid
from learned_metrics.meta_eval.rows import DOC, SYSTEM, by_index, is_long_frame, keyed_cells
from learned_metrics.validate import flag, numbers

AXES = ("documents x systems", "systems x documents")


def _score_column(frame: Any, name: str) -> str:
    others = [c for c in frame.columns if c not in (DOC, SYSTEM)]
    numeric = ["score"] if "score" in others else [c for c in others if np.issubdtype(frame[c].dtype, np.number)]
    if len(numeric) != 1:
        raise UserError(f"{name}: a long DataFrame needs a 'score' column or exactly one numeric column besides "
                        f"{DOC} and {SYSTEM}; got {others}")
    return numeric[0]


def input_grids(human: Any, metrics: dict[str, Any], axes: str = "documents x systems", *,
                annotators: bool = True) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """(documents x systems) human and metric matrices from matrices or long DataFrames, refused as the CLI refuses its
    files. ``annotators``: the first input's rows sharing a key are averaged (False: a metric, one row per key)."""
    return labelled_grids(human, metrics, axes, annotators=annotators)[:2]


def labelled_grids(human: Any, metrics: dict[str, Any], axes: str = "documents x systems", *, annotators: bool = True
                   ) -> tuple[np.ndarray, dict[str, np.ndarray], list[str] | None, list[str] | None]:
    """:func:`input_grids` with the documents' and systems' names: a long frame's ``doc_id``/``system_id`` values
    in first-seen order, a wide DataFrame's index and columns; None for plain arrays."""
    annotators = flag(annotators, "annotators")
    if not isinstance(metrics, Mapping):
        raise UserError(f"metrics must be a mapping of name -> scores, e.g. {{'bleu': matrix}}, got "
                        f"{type(metrics).__name__}")
    named = [("human", human), *metrics.items()]  # a list: a metric may itself be called "human"
    frames = [is_long_frame(value) for _, value in named]
    if any(frames) and not all(frames):
        raise UserError(f"give every input as a long DataFrame ({DOC}, {SYSTEM}, score) or every one as a matrix")
    if all(frames):  # the one keyed-row reader: a key given twice is refused, only human annotator rows averaged
        cells = [keyed_cells([(name, numbered_rows(frame[[DOC, SYSTEM, column]]))], column,
                             average=annotators and not i, nan_absent=True)
                 for i, (name, frame) in enumerate(named) for column in [_score_column(frame, name)]]
        docs, systems = (list(dict.fromkeys(key[k] for cell in cells for key in cell.rows)) for k in (0, 1))
        grids = [key_grid(cell.values, docs, systems) for cell in cells]
    else:
        if axes not in AXES:
            raise UserError(f"axes must be one of {AXES}, got {axes!r}")
        values = by_index(*named)  # wide DataFrames: the same documents and systems, whatever their order
        grids = [numbers(value, name) for (name, _), value in zip(named, values, strict=True)]
        for (name, _), grid in zip(named, grids, strict=True):
            if grid.ndim != 2:
                raise UserError(f"{name}: expected a 2-D ({axes}) matrix, got shape {grid.shape}")
        first = values[0]
        labelled = hasattr(first, "columns") and hasattr(first, "index")  # a wide DataFrame's labels name the axes
        docs, systems = ([str(v) for v in first.index], [str(v) for v in first.columns]) if labelled else (None, None)
        if axes == "systems x documents":
            grids, docs, systems = [grid.T for grid in grids], systems, docs
    for (name, _), grid in zip(named[1:], grids[1:], strict=True):
        if grid.shape != grids[0].shape:
            raise UserError(f"{name}: shape {grid.shape} differs from the human matrix {grids[0].shape}")
    if metrics and not (~np.isnan(np.stack(grids))).all(axis=0).any():
        raise UserError("no (document, system) cell has both a human and a metric score (empty or disjoint inputs)")
    return grids[0], dict(zip(metrics, grids[1:], strict=True)), docs, systems

