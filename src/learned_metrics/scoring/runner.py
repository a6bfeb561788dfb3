"""Scoring a whole file: streamed in chunks, validated, sharded, written in input order.

Memory is bounded by the chunk size (and the token budget), not the input
size: rows are read ``chunk_size`` at a time, every row of a chunk is
validated before anything of it is scored, the chunk is scored (sorted by
length inside the scorer), and its rows are appended to a temporary file that
is renamed onto the output only when the whole input has been scored. Any
error leaves no output file at all.
"""

from __future__ import annotations

import contextlib
import json
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from learned_metrics import validate
from learned_metrics.errors import UserError
from learned_metrics.io import RowWriter, file_format, iter_row_chunks
from learned_metrics.outputs import check_outputs, file_output
from learned_metrics.scoring.distributed import Processes
from learned_metrics.scoring.options import DEFAULT_CHUNK_SIZE
from learned_metrics.scoring.scorer import Scorer, ScoreResult, TruncationWarning


@dataclass
class InputFields:
    """Which fields of a row hold the inputs. Coherence: ``text_field`` or ``sentences_field``
    (neither given: ``text`` if the first row has it, else ``sentences``)."""

    kind: str
    text_field: str | None = None
    sentences_field: str | None = None
    premise_field: str = "grounding"
    hypothesis_field: str = "generation"

    def settle(self, first_row: dict[str, Any]) -> None:
        """Pick the coherence field once, from the first row, so every row is read the same way."""
        if self.kind != "coherence":
            return
        if self.text_field and self.sentences_field:
            raise UserError("give either --text-field or --sentences-field, not both")
        if not self.text_field and not self.sentences_field:
            if "text" not in first_row and "sentences" in first_row:
                self.sentences_field = "sentences"
            else:
                self.text_field = "text"

    def extract(self, chunk: Sequence[tuple[int, dict[str, Any]]], path: Path) -> tuple[dict[str, list], list[int]]:
        """Validated scorer arguments for every row of the chunk, and each row's size (for balanced sharding)."""
        if self.kind == "coherence" and self.sentences_field:
            sentences = [validate.row_sentences(row, self.sentences_field, path=path, row_number=n) for n, row in chunk]
            return {"sentences": sentences}, [sum(map(len, s)) for s in sentences]
        if self.kind == "coherence":
            texts = [validate.row_text(row, self.text_field, path=path, row_number=n) for n, row in chunk]
            return {"texts": texts}, [len(t) for t in texts]
        premises, hypotheses = [], []
        for n, row in chunk:
            premises.append(validate.row_text(row, self.premise_field, path=path, row_number=n))
            hypotheses.append(validate.row_text(row, self.hypothesis_field, path=path, row_number=n))
        sizes = [len(p) + len(h) for p, h in zip(premises, hypotheses, strict=True)]
        return {"groundings": premises, "generations": hypotheses}, sizes


@dataclass
class RunSummary:
    """What a file run did: rows, model input tokens, wall time, truncated rows."""

    rows: int = 0
    tokens: int = 0
    seconds: float = 0.0
    truncated: int = 0
    details: dict[str, int] = field(default_factory=dict)
    replaced_columns: list[str] = field(default_factory=list)

    def line(self, output: str | Path) -> str:
        seconds = max(self.seconds, 1e-9)
        return (f"scored {self.rows:,} rows ({self.tokens:,} tokens) in {self.seconds:.1f} s: "
                f"{self.rows / seconds:,.1f} rows/s, {self.tokens / seconds:,.0f} tokens/s -> {output}")


def _shard(kwargs: dict[str, list], indices) -> dict[str, list]:
    return {name: [values[i] for i in indices] for name, values in kwargs.items()}


def _csv_value(value: Any) -> Any:
    """CSV cells: lists and objects as JSON (not Python reprs), so they read back."""
    return json.dumps(value, ensure_ascii=False) if isinstance(value, (list, dict)) else value


class _OutputRows:
    """Builds output rows (input fields + score columns) and, for CSV, fixes the header from the first chunk."""

    def __init__(self, output: Path):
        self.csv = file_format(output) == "csv"
        self.fieldnames: list[str] | None = None
        self.replaced: list[str] = []

    def build(self, chunk: Sequence[tuple[int, dict[str, Any]]], result: ScoreResult, path: Path) -> list[dict]:
        if self.fieldnames is None:
            inputs: dict[str, None] = {}
            for _, row in chunk:
                inputs.update(dict.fromkeys(row))
            self.replaced = [c for c in result.columns if c in inputs]
            self.fieldnames = [*(k for k in inputs if k not in result.columns), *result.columns]
        rows = []
        for i, (number, row) in enumerate(chunk):
            out = {**row, **result.row(i)}
            if self.csv:
                extra = [k for k in out if k not in self.fieldnames]
                if extra:
                    raise UserError(f"field(s) {extra} not present in the first chunk; CSV output needs one header "
                                    "for all rows (write .jsonl output instead)", path=path, row=number)
                out = {k: _csv_value(v) for k, v in out.items()}
            rows.append(out)
        return rows


@contextlib.contextmanager
def _quiet_truncation() -> Iterator[None]:
    """The file run reports truncation once at the end, not once per chunk."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TruncationWarning)
        yield


def score_file(scorer: Scorer, input_path: str | Path, output_path: str | Path, fields: InputFields,
               chunk_size: int = DEFAULT_CHUNK_SIZE, processes: Processes | None = None,
               progress: Callable[[float], None] | None = None) -> RunSummary:
    """Score every row of ``input_path`` into ``output_path`` (``.jsonl``/``.csv``), keeping rows and order.

    Under several processes each scores its share of every chunk and process 0
    writes; the other processes return the same summary without writing.
    """
    validate.int_at_least(chunk_size, 1, "--chunk-size")
    input_path, output_path = Path(input_path), Path(output_path)
    processes = processes or Processes()
    file_format(output_path)  # unsupported output suffix: fail before scoring anything
    check_outputs([file_output(output_path)], inputs=[input_path, getattr(scorer, "source", None)])
    summary = RunSummary()
    builder = _OutputRows(output_path)
    start = time.perf_counter()
    writer_ctx = RowWriter(output_path, None) if processes.is_main else contextlib.nullcontext()
    with writer_ctx as writer, _quiet_truncation():
        for chunk in iter_row_chunks(input_path, chunk_size):
            if summary.rows == 0:
                fields.settle(chunk[0][1])
            kwargs, sizes = fields.extract(chunk, input_path)
            share = processes.share(sizes)
            advance = None if progress is None else (lambda n: progress(n * processes.world))
            part = scorer.score_validated(**_shard(kwargs, share), progress=advance)
            result = ScoreResult.merge(processes.gather((share, part)), len(chunk))
            if writer is not None:
                rows = builder.build(chunk, result, input_path)
                if writer.fieldnames is None and builder.csv:
                    writer.fieldnames = builder.fieldnames
                writer.write(rows)
            summary.rows += len(chunk)
            summary.tokens += result.tokens
            summary.truncated += result.truncated
            for key, value in result.details.items():
                summary.details[key] = summary.details.get(key, 0) + value
    summary.seconds = time.perf_counter() - start
    summary.replaced_columns = builder.replaced
    return summary
