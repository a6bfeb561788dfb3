"""Scoring a whole file: streamed in chunks, validated, sharded, resumable, written in input order.

Memory is bounded by the chunk size; a chunk's rows are all validated before it is scored, and each finished chunk is
kept in a :class:`~learned_metrics.scoring.resume.ChunkStore` with the input's hash to its end (:func:`hash_rows`)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from learned_metrics import __version__, provenance, validate
from learned_metrics.errors import UserError
from learned_metrics.io import RowWriter, file_format, files_stamp, is_stdio, iter_row_chunks, writing
from learned_metrics.layouts import text_layout
from learned_metrics.outputs import check_outputs, file_output, staged_files
from learned_metrics.progress import RowProgress, human_duration, human_rate
from learned_metrics.scoring.distributed import Processes
from learned_metrics.scoring.mc_dropout import chunk_seed
from learned_metrics.scoring.options import FileRun
from learned_metrics.scoring.pipeline import Timings, prefetch
from learned_metrics.scoring.resume import ChunkStore
from learned_metrics.scoring.scorer import Scorer, ScoreResult, TruncationWarning
from learned_metrics.scoring.summary import ScoreCollector, ScoreSummary


@dataclass
class InputFields:
    """Which fields of a row hold the inputs (coherence, neither given: ``text`` if the first row has it, else
    ``sentences``)."""

    kind: str
    text_field: str | None = None
    sentences_field: str | None = None
    premise_field: str | None = None  # None: grounding, else the grounding column of a recognized benchmark layout
    hypothesis_field: str | None = None  # None: generation, else the benchmark layout's generation column

    def settle(self, first_row: dict[str, Any]) -> str | None:
        """Pick the fields once, from the first row, so every row is read the same way; a note when a faithfulness
        benchmark layout (LLM-AggreFact, AggreFact, SummaC, TRUE) supplied the fields the defaults lack."""
        if self.kind == "coherence":
            if self.text_field and self.sentences_field:
                raise UserError("give either --text-field or --sentences-field, not both")
            if not self.text_field and not self.sentences_field:
                sentences = "text" not in first_row and "sentences" in first_row
                self.text_field, self.sentences_field = (None, "sentences") if sentences else ("text", None)
            return None
        premise = self.premise_field or ("grounding" if "grounding" in first_row else None)
        hypothesis = self.hypothesis_field or ("generation" if "generation" in first_row else None)
        layout = text_layout(first_row) if premise is None or hypothesis is None else None
        self.premise_field = premise or (layout.premise if layout else "grounding")
        self.hypothesis_field = hypothesis or (layout.hypothesis if layout else "generation")
        if self.premise_field == self.hypothesis_field:
            raise UserError(f"--premise-field and --hypothesis-field both read '{self.premise_field}': every text "
                            "would be scored against itself; name the grounding's field and the generation's")
        if layout is None:
            return None
        return (f"{layout.name} layout recognized: grounding from '{self.premise_field}', generation from "
                f"'{self.hypothesis_field}' (--premise-field/--hypothesis-field choose others)")

    def extract(self, chunk: Sequence[tuple[int, dict[str, Any]]], path: Path) -> tuple[dict[str, list], list[int]]:
        """Validated scorer arguments for every row of the chunk, and each row's size (for balanced sharding)."""
        if self.kind == "coherence" and self.sentences_field:
            sentences = [validate.row_sentences(row, self.sentences_field, path=path, row_number=n) for n, row in chunk]
            return {"sentences": sentences}, [sum(map(len, s)) for s in sentences]
        if self.kind == "coherence":
            texts = [validate.row_text(row, self.text_field, path=path, row_number=n) for n, row in chunk]
            return {"texts": texts}, [len(t) for t in texts]
        pairs = [(validate.row_text(row, self.premise_field, path=path, row_number=n),
                  validate.row_text(row, self.hypothesis_field, path=path, row_number=n)) for n, row in chunk]
        return ({"groundings": [p for p, _ in pairs], "generations": [h for _, h in pairs]},
                [len(p) + len(h) for p, h in pairs])


@dataclass
class RunSummary:
    """What a file run did. ``rows`` counts the whole output, ``resumed_rows`` those an earlier, interrupted run
    scored; ``tokens`` and ``seconds`` are this process's own work."""

    rows: int = 0
    resumed_rows: int = 0
    tokens: int = 0
    seconds: float = 0.0
    truncated: int = 0
    details: dict[str, int] = field(default_factory=dict)
    replaced_columns: list[str] = field(default_factory=list)
    scores: ScoreSummary | None = None
    provenance: dict[str, Any] | None = None  # the record written with the output (process 0; None elsewhere)
    timings: Timings = field(default_factory=Timings)  # this process's tokenize/forward/wait seconds

    def line(self, output: str | Path) -> str:
        new = self.rows - self.resumed_rows
        resumed = f" (+{self.resumed_rows:,} rows scored before the interruption)" if self.resumed_rows else ""
        return (f"scored {new:,} rows ({self.tokens:,} tokens) in {human_duration(self.seconds)}: "
                f"{human_rate(new, self.seconds)}, {human_rate(self.tokens, self.seconds, 'tokens')}{resumed} "
                f"-> {output}")

    def add_counts(self, rows: int, truncated: int, details: dict[str, int]) -> None:
        self.rows += rows
        self.truncated += truncated
        self.details.update({key: self.details.get(key, 0) + value for key, value in details.items()})

    def add_resumed(self, record: dict[str, Any], read: str, chunk: list[tuple[int, dict]], source: object) -> None:
        """Either engine's chunk the interrupted run scored: its part ``record`` counts if the input up to the
        chunk's end (``read``, its hash) is the one it scored, else the resume is refused."""
        if len(chunk) < record["rows"]:  # the input ended inside a chunk the interrupted run scored whole
            raise UserError(f"cannot resume: {source} ended after row {chunk[-1][0]}, inside the chunk of "
                            f"{record['rows']:,} rows the interrupted run scored there; give the same input, or pass "
                            "--restart instead of --resume to score from the beginning")
        if record["input_sha256"] != read:
            raise UserError(f"cannot resume: rows {chunk[0][0]}-{chunk[-1][0]} of {source} differ from the rows the "
                            "interrupted run scored there; give the same input, or pass --restart instead of --resume "
                            "to score from the beginning")
        self.resumed_rows += record["rows"]
        self.add_counts(record["rows"], record["truncated"], record["details"])


def hash_rows(digest, chunk: Sequence[tuple[int, dict[str, Any]]]) -> None:
    """Feed a chunk's rows to ``digest`` as they were read (field order and value types count, row numbers not)."""
    for _, row in chunk:
        text = json.dumps(row, ensure_ascii=False,
                          default=lambda v: f"{type(v).__module__}.{type(v).__qualname__}:{v!r}")
        digest.update(text.encode("utf-8", "surrogatepass") + b"\n")


class _OutputRows:
    """Output rows (input fields + score columns); for CSV, the header fixed from the first chunk."""

    def __init__(self, csv_output: bool, fieldnames: list[str] | None = None, replaced: list[str] | None = None):
        self.csv = csv_output
        self.fieldnames = fieldnames
        self.replaced = replaced or []

    def build(self, chunk: Sequence[tuple[int, dict[str, Any]]], result: ScoreResult, path: Path) -> list[dict]:
        if self.fieldnames is None:
            inputs = dict.fromkeys(key for _, row in chunk for key in row)
            self.replaced = [c for c in result.columns if c in inputs]
            self.fieldnames = [*(k for k in inputs if k not in result.columns), *result.columns]
        rows = [{**row, **result.row(i)} for i, (_, row) in enumerate(chunk)]
        for (number, _), out in zip(chunk, rows, strict=True):
            if self.csv and (extra := [k for k in out if k not in self.fieldnames]):
                raise UserError(f"field(s) {extra} not present in the first chunk; CSV output needs one header "
                                "for all rows (write .jsonl output instead)", path=path, row=number)
        return rows


@contextlib.contextmanager
def _run_warnings(say: Callable[[str], None] | None) -> Iterator[None]:
    """Truncation is reported once at the end, not per chunk; other warnings (an out-of-memory retry) as a line."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TruncationWarning)
        warnings.showwarning = lambda message, *_args, **_kwargs: say and say(f"warning: {message}")
        yield


def run_fingerprint(scorer: Scorer, input_path: str | Path, fields: InputFields, run: FileRun, world: int,
                    formats: list[str]) -> dict[str, Any]:
    """Everything that changes a run's output: ``--resume`` continues only a run with the same fingerprint (the
    settings as in provenance, ``ScoringOptions.applying``: a new option is in it without an edit here; the seed the
    masks are drawn from, which ``Scorer.score(seed=)`` may have changed since the load)."""
    stdin = is_stdio(input_path)
    settings = {**scorer.options.applying(scorer.kind), "seed": scorer.dropout_stream.seed}
    return {"input": "-" if stdin else str(Path(input_path).resolve()),
            "input_file": None if stdin else files_stamp(input_path), "model": scorer.source,
            "model_files": files_stamp(scorer.source), "labels": scorer.label_ids, "fields": asdict(fields),
            "processes": world, "formats": formats, **run.affecting(),
            **settings, "version": __version__}


def resuming_line(rows: int, chunks: int) -> str:
    """What either engine says when it continues an interrupted run."""
    return f"resuming after {rows:,} rows ({chunks} chunk{'s' if chunks > 1 else ''}) scored by the interrupted run"


def layout_note(note: str, premise_strategy: str) -> str:
    """Either engine's note on an input in a benchmark layout (:meth:`InputFields.settle`'s note)."""
    why = " (benchmark documents are long; truncate is the paper's rule)" if premise_strategy == "chunk" else ""
    return f"note: {note}; --premise-strategy {premise_strategy}{why}"


def score_file(scorer: Scorer, input_path: str | Path, output_path: str | Path, fields: InputFields,
               run: FileRun | None = None, processes: Processes | None = None, progress: RowProgress | None = None,
               say: Callable[[str], None] | None = None) -> RunSummary:
    """Score every row of ``input_path`` into ``output_path`` (``.jsonl``/``.csv``/``.parquet``, or ``-``), rows
    and order kept. Under several processes each scores its share of every chunk and process 0 writes. ``say``
    receives the notes of a resumed run; ``summary.provenance`` is the record written with the output."""
    run = run or FileRun()
    processes = processes or Processes()
    progress = progress or RowProgress(None, enabled=False)
    out_format = file_format(output_path, run.output_format)  # an unsupported output: fail before scoring
    in_format = file_format(input_path, run.input_format)
    streamed = is_stdio(output_path)
    if streamed and (run.resume or run.restart):
        raise UserError("--resume and --restart need an output file to keep finished chunks beside, not -")
    if not streamed:
        output_path = Path(output_path)
        check_outputs([file_output(output_path), *provenance.outputs(output_path, out_format)],
                      inputs=[input_path, getattr(scorer, "source", None)])
    # the record as the run starts (weights and input hashed once; the batching MC masks depend on)
    record = scorer.provenance(input=provenance.input_record(input_path), batching={
        "chunk_size": run.chunk_size, "processes": processes.world}) if processes.is_main else None
    store = None
    if processes.is_main and not streamed:
        store = ChunkStore(output_path.resolve(), out_format,
                           run_fingerprint(scorer, input_path, fields, run, processes.world, [in_format, out_format]))
        store.open(resume=run.resume, restart=run.restart)
    state = processes.gather(dict(store.state) if store else {"parts": []})[0]
    with kept_for_resume(store, say):
        summary = _score_chunks(scorer, input_path, output_path, fields, run, processes, progress, store, state,
                                (in_format, out_format), say)
    if record is not None:
        summary.provenance = provenance.finish(record, out_format, fields=asdict(fields))
    if store is not None:
        parquet = out_format == "parquet"
        try:
            with staged_files() as stage:  # the output and its sidecar land together or not at all
                store.join_into(stage(output_path), store.state.get("fieldnames"),
                                provenance.parquet_metadata(summary.provenance) if parquet else None)
                if not parquet:
                    with writing(provenance.sidecar_path(output_path)):
                        provenance.write(summary.provenance, output_path, out_format, stage=stage)
        except BaseException:
            keep_folder(store, say)  # every chunk is scored: a --resume only joins them (after freeing space ...)
            raise
        store.remove()
    return summary


@contextlib.contextmanager
def kept_for_resume(store: ChunkStore | None, say: Callable[[str], None] | None) -> Iterator[None]:
    """The store's notes said first (parts of the interrupted run scored again). A failed scoring keeps an
    interrupted run's work (this one's or an earlier one's) for ``--resume``; a run refused before it kept anything
    of its own (a bad row or setting: the rerun must change it) leaves nothing."""
    for note in store.notes if store is not None and say else ():
        say(f"note: {note}")
    try:
        yield
    except BaseException as error:
        refused = isinstance(error, UserError)
        if store is not None and not (store.resumed if refused else store.state.get("chunks")):
            store.remove()
        elif store is not None:
            keep_folder(store, say, "correct the command and run it again with --resume, or pass --restart"
                         if refused else None)
        raise


def keep_folder(store: ChunkStore, say: Callable[[str], None] | None, advice: str | None = None) -> None:
    store.close()
    if say:
        say(f"kept {store.state['rows']:,} scored rows in {store.folder}: "
            f"{advice or 'run the same command with --resume to continue'}")


def _score_chunks(scorer: Scorer, input_path, output_path, fields: InputFields, run: FileRun, processes: Processes,
                  progress: RowProgress, store: ChunkStore | None, state: dict[str, Any], formats: tuple[str, str],
                  say: Callable[[str], None] | None) -> RunSummary:
    parts = list(state.get("parts") or [])  # as the run started (the store adds the chunks scored now)
    finished = {index for index, part in enumerate(parts) if part is not None}
    summary = RunSummary()
    in_format, out_format = formats
    builder = _OutputRows(out_format == "csv", state.get("fieldnames"), state.get("replaced"))
    collector = ScoreCollector(run.system_field)
    resumed = sum(parts[index]["rows"] for index in finished)
    if finished and say:
        say(resuming_line(resumed, len(finished)))
    base_seed = scorer.dropout_stream.seed
    streamed = processes.is_main and store is None
    start = time.perf_counter()
    progress.skip(resumed)
    read = hashlib.sha256()  # the input rows so far: what a resumed run must find again
    source = "standard input" if is_stdio(input_path) else str(input_path)  # as resume refusals name it
    chunks = 0
    writer_ctx = RowWriter(output_path, None, out_format) if streamed else contextlib.nullcontext()
    try:
        # the next chunk is read while this one is scored (none ahead without tokenizer workers: sequential)
        chunks_read = prefetch(iter_row_chunks(input_path, run.chunk_size, in_format),
                               depth=1 if scorer.tokenizer_workers else 0)
        with progress, writer_ctx as writer, _run_warnings(say), contextlib.closing(chunks_read):
            for index, chunk in enumerate(chunks_read):
                chunks = index + 1
                if index == 0 and (note := fields.settle(chunk[0][1])) and say:
                    say(layout_note(note, scorer.premise_strategy))
                hash_rows(read, chunk)
                if index in finished:
                    summary.add_resumed(parts[index], read.hexdigest(), chunk, source)
                    systems = collector.systems_of(chunk, input_path)  # checked as in a whole run
                    if store is not None:
                        collector.add([row["score"] for row in store.iter_part_rows(index)], systems)
                    continue
                kwargs, sizes = fields.extract(chunk, input_path)
                systems = collector.systems_of(chunk, input_path)
                share = processes.share(sizes)
                # per-row masks need no chunk seed; torch's stream does (a resumed run has no state to continue)
                seed = chunk_seed(base_seed, index) if scorer.options.torch_masks and base_seed is not None else None
                advance = lambda n: progress.advance(n * processes.world)  # noqa: E731
                part = scorer.score_validated(**{name: [values[i] for i in share] for name, values in kwargs.items()},
                                              seed=seed, progress=advance, details=run.details)
                summary.timings.add(scorer.timings)
                result = ScoreResult.merge(processes.gather((share, part)), len(chunk))
                summary.add_counts(len(chunk), result.truncated, result.details)
                summary.tokens += result.tokens
                if processes.is_main:  # into the resume store (with the chunk's record), or straight to standard output
                    rows = builder.build(chunk, result, input_path)
                    if store is None:
                        writer.sink.fieldnames = builder.fieldnames  # CSV: the first chunk's header, kept
                        writer.write(rows)
                    else:
                        store.save(rows, {"truncated": result.truncated, "details": result.details,
                                          "input_sha256": read.hexdigest(), "fieldnames": builder.fieldnames,
                                          "replaced": builder.replaced}, index, first_row=summary.rows - len(chunk) + 1)
                collector.add(result.scores, systems)
            if finished and max(finished) >= chunks:
                raise UserError(f"cannot resume: {source} ended after {summary.rows:,} rows, but "
                                f"the interrupted run scored {max(finished) + 1} chunks of {run.chunk_size:,} rows "
                                "of it; give the same input, or pass --restart instead of --resume to score from "
                                "the beginning")
    finally:
        scorer.dropout_stream.reseed(base_seed)
    summary.seconds = time.perf_counter() - start
    summary.replaced_columns = builder.replaced
    summary.scores = collector.summary()
    return summary
