"""``score --engine ray``: the one-process scorer's batches on a pool of Ray Data actors (docs/scaling.md). Each
actor loads the model through ``load_scorer`` and scores blocks through ``Scorer.score_validated``; finished chunks
are kept in the one-process engine's ``ChunkStore`` under their index, so a retried block rewrites its own part.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import itertools
import json
import logging
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from learned_metrics import provenance
from learned_metrics.errors import UserError, cause_among, first_line
from learned_metrics.io import check_input_file, dump_json, file_format, iter_row_chunks, iter_rows, parquet_table
from learned_metrics.outputs import (
    atomic_folder,
    check_outputs,
    file_output,
    folder_output,
    json_file_output,
    staged_files,
)
from learned_metrics.progress import RowProgress
from learned_metrics.safety import ModelFolder, check_model_folder
from learned_metrics.scoring import runner
from learned_metrics.scoring.mc_dropout import chunk_seed
from learned_metrics.scoring.options import DEFAULT_CHUNK_SIZE, FileRun, RaySettings, ScoringOptions
from learned_metrics.scoring.resume import ChunkStore
from learned_metrics.scoring.runner import InputFields, RunSummary, hash_rows, run_fingerprint
from learned_metrics.scoring.summary import ScoreCollector
from learned_metrics.settings import takes

Model = str | ModelFolder  # what the driver and the actors load: a checked local folder, or a cluster node's name
ROW = "input_row"  # the row's number in the input, as a refusal names it: sorting on it gives the input order
_CHUNK = "__lm_chunk"  # which chunk a row belongs to (dropped before the part is written)
_COUNTS = "__lm_counts"  # a scored block's counters, on its first row (dropped before the part is written)
OUTPUT_KIND = "scores"
PROVENANCE_NAME = "_provenance.json"  # in a folder output ('_': Parquet readers skip it)


def require_ray():
    """The ``ray`` module, or one line saying how to install it."""
    try:
        import ray
    except ImportError:
        raise UserError("--engine ray needs Ray Data: pip install 'learned-metrics[ray]'") from None
    return ray


class ScoreBlocks:
    """One Ray actor: the model loaded once, each block scored as the one-process engine scores a chunk."""

    def __init__(self, model: Model, kind: str, options: ScoringOptions, fields: InputFields, details: bool = False,
                 path: str = "input", counts: bool = False):
        from learned_metrics.scoring.scorer import load_scorer

        self.scorer = load_scorer(model, kind=kind, settings=dataclasses.replace(options, engine="torch"))
        self.fields, self.details, self.path, self.counts = fields, details, path, counts
        self.base_seed = self.scorer.dropout_stream.seed  # read once: scoring a block reseeds the stream

    def __call__(self, block):
        rows = block.to_pylist()
        numbers = [row[ROW] for row in rows] if ROW in block.column_names else range(1, len(rows) + 1)
        inputs = [{k: v for k, v in row.items() if k not in (_CHUNK, _COUNTS)} for row in rows]
        self.fields.settle(inputs[0])
        kwargs, _ = self.fields.extract(list(zip(numbers, inputs, strict=True)), Path(self.path))
        chunks = set(block.column(_CHUNK).to_pylist()) if _CHUNK in block.column_names else set()
        if len(chunks) > 1:  # the seed and the counters below are a chunk's: one block must be one chunk
            raise RuntimeError(f"Ray Data joined chunks {sorted(chunks)} into one block; nothing was written")
        seed = self.base_seed  # torch's masks: seeded per chunk as one process seeds them, whatever ran before
        if self.scorer.options.torch_masks and seed is not None and chunks:
            seed = chunk_seed(seed, chunks.pop())
        result = self.scorer.score_validated(**kwargs, seed=seed, details=self.details)
        out = [{**row, **result.row(i)} for i, row in enumerate(rows)]
        if self.counts:
            counts = {"truncated": result.truncated, "details": result.details, "tokens": result.tokens,
                      "rows": len(rows)}
            out = [{**row, _COUNTS: dump_json(counts, indent=None) if i == 0 else None} for i, row in enumerate(out)]
        return parquet_table(out, path=self.path, first_row=numbers[0])


def connect(settings: RaySettings) -> Any:
    """Join ``--ray-address`` (else ``$RAY_ADDRESS``, else start a local instance); quiet Ray Data's own output."""
    ray = require_ray()
    if not ray.is_initialized():
        address = settings.ray_address or os.environ.get("RAY_ADDRESS") or None
        try:
            ray.init(address=address, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
        except (ConnectionError, ValueError, RuntimeError) as exc:
            raise UserError(f"cannot join the Ray cluster at {address} ({first_line(exc, 160)}); check "
                            "--ray-address / RAY_ADDRESS, or leave both unset for a local instance") from None
    context = ray.data.DataContext.get_current()  # importing ray.data configures its loggers: quiet them after
    logging.getLogger("ray.data").setLevel(logging.ERROR)  # the CLI reports progress and errors itself
    context.enable_progress_bars = False
    context.print_on_execution_start = False
    return ray


def _resources(ray: Any, settings: RaySettings, options: ScoringOptions, fits: bool = False) -> tuple[int, int, int]:
    """(actors, CPUs per actor, GPUs per actor): the defaults fill the cluster's cores or GPUs. ``fits``: more per
    actor than the cluster has is refused (an instance nothing will join: an actor it cannot place would wait for
    ever)."""
    cluster = ray.cluster_resources()
    gpus = settings.ray_gpus_per_actor
    if gpus is None:
        gpus = 1 if cluster.get("GPU", 0) >= 1 and options.device != "cpu" else 0
    cpus = settings.ray_cpus_per_actor
    for name, flag, wanted in (("CPU", "--ray-cpus-per-actor", cpus), ("GPU", "--ray-gpus-per-actor", gpus)):
        if fits and wanted > cluster.get(name, 0):
            raise UserError(f"{flag} {wanted}: this machine has {cluster.get(name, 0):g} {name}s for Ray; ask for "
                            "at most that, or join a larger cluster with --ray-address")
    actors = settings.ray_actors or max(1, int(cluster.get("GPU", 0) // gpus if gpus else
                                               cluster.get("CPU", 1) // cpus))
    return actors, cpus, gpus


@takes(ScoringOptions)
def score_dataset(dataset: Any, model: str | os.PathLike, *, kind: str | None = None, fields: InputFields | None = None,
                  ray_settings: RaySettings | None = None, block_rows: int = DEFAULT_CHUNK_SIZE,
                  details: bool = False, settings: ScoringOptions) -> Any:
    """Score a ``ray.data.Dataset``: rows in, the same rows with the score columns out (lazily, as Ray Data does).

    ``fields`` names the input columns (default: as the CLI's, from the first row); the scoring options are
    :class:`ScoringOptions`' fields, as keywords or one ``settings=`` object; ``ray_settings`` sizes the actor pool;
    each batch is at most ``block_rows``."""
    ray_settings = ray_settings or RaySettings()
    model = _check_model_here(model, ray_settings)
    ray = connect(ray_settings)
    kind = kind or ("faithfulness" if fields is None else fields.kind)
    return _map(ray, dataset, model, fields or InputFields(kind), settings, ray_settings, details=details,
                batch_size=block_rows)


def _map(ray: Any, dataset: Any, model: Model, fields: InputFields, options: ScoringOptions, settings: RaySettings, *,
         details: bool, batch_size: int | None, path: str = "input", counts: bool = False) -> Any:
    actors, cpus, gpus = _resources(ray, settings, options)
    return dataset.map_batches(
        ScoreBlocks, batch_format="pyarrow", batch_size=batch_size, num_cpus=cpus, num_gpus=gpus,
        compute=ray.data.ActorPoolStrategy(size=actors),
        fn_constructor_kwargs={"model": model, "kind": fields.kind, "options": options,
                               "fields": fields, "details": details, "path": path, "counts": counts})


def _check_model_here(model: str | os.PathLike, settings: RaySettings) -> Model:
    """Actors on this machine read the model folder this process sees: a missing or unsafe one is refused here in
    one line, before Ray starts, and the checked folder is what the driver and the actors load (no second check);
    a cluster's nodes may see paths this process does not, so they get the name and check it there."""
    ray = require_ray()
    here = _this_machine_only(ray) if ray.is_initialized() else not (
        settings.ray_address or os.environ.get("RAY_ADDRESS"))
    return check_model_folder(model) if here else str(model)


def _this_machine_only(ray: Any) -> bool:
    """Every live node of the cluster is this machine (a local instance): its actors see what this process sees."""
    here = ray.util.get_node_ip_address()
    return all(node["NodeManagerAddress"] == here for node in ray.nodes() if node["Alive"])


def _describe(model: Model, kind: str, options: ScoringOptions, record: dict[str, Any], **override: Any) -> tuple:
    """Loaded as an actor loads it: the provenance record and what the fingerprint reads of the scorer."""
    from learned_metrics.scoring.scorer import load_scorer

    scorer = load_scorer(model, kind=kind, settings=dataclasses.replace(options, engine="torch", **override))
    return scorer.provenance(**record), SimpleNamespace(source=scorer.source, label_ids=scorer.label_ids,
                                                        options=scorer.options, kind=scorer.kind,
                                                        dropout_stream=SimpleNamespace(seed=scorer.dropout_stream.seed))


@contextlib.contextmanager
def _unwrapped(ray: Any) -> Iterator[None]:
    """A UserError raised in a Ray worker inside the block re-raised as itself (one line, not a remote traceback)."""
    try:
        yield
    except Exception as exc:
        cause = exc
        while isinstance(cause, ray.exceptions.RayTaskError) and cause.cause is not None and cause.cause is not cause:
            cause = cause.cause
        error = cause_among(cause, UserError)
        if error is not None:
            raise UserError(error.detail, path=error.path, row=error.row, field=error.field) from None
        raise


def _is_remote(path: str | os.PathLike) -> bool:
    return "://" in os.fspath(path)


def through_ray(path: str | os.PathLike) -> bool:
    """Read by Ray Data's readers: object storage (s3://, gs://, ...) or a local folder of files (Parquet parts)."""
    return _is_remote(path) or Path(path).is_dir()


def _input_format(path: str | os.PathLike, declared: str | None) -> str:
    """A folder or a suffix-less object-storage prefix holds Parquet unless --input-format says otherwise."""
    return declared or (file_format(path) if Path(os.fspath(path)).suffix and not Path(path).is_dir() else "parquet")


# The file names Ray Data reads in a folder for each format, passed to its readers (read_csv alone would read
# every file: a README beside the parts) and used to probe the folder before Ray starts: one list, so both agree.
FOLDER_SUFFIXES = {"parquet": ("parquet",), "jsonl": ("jsonl", "json"), "csv": ("csv",)}


def _data_files(root: Path, fmt: str) -> list[Path]:
    """A local folder's data files for the format, in path order, as Ray Data lists them: a path relative to the
    folder that starts with ``.`` or ``_`` is skipped (``_provenance.json``, ``.crc`` files, ``_logs/``); deeper
    names are not looked at (``sub/_part.csv`` is read)."""
    suffixes = tuple(f".{suffix}" for suffix in FOLDER_SUFFIXES[fmt])
    return sorted(p for p in root.rglob("*") if p.is_file() and p.name.lower().endswith(suffixes)
                  and not p.relative_to(root).parts[0].startswith((".", "_")))


def check_folder_input(path: str | os.PathLike, declared: str | None) -> None:
    """A local folder input holds files of its format, else one line before Ray starts (which suffixes it holds)."""
    if _is_remote(path) or not Path(path).is_dir():
        return
    if _data_files(Path(path), fmt := _input_format(path, declared)):
        return
    others = [name for name in FOLDER_SUFFIXES if name != fmt and _data_files(Path(path), name)]
    hint = f"; it holds {others[0]} files: pass --input-format {others[0]}" if others else ""
    wanted = "/".join(f".{suffix}" for suffix in FOLDER_SUFFIXES[fmt])
    raise UserError(f"no {wanted} files in this folder (--engine ray reads a folder's {fmt} parts{hint})",
                    path=path)


def first_row(path: str | os.PathLike, declared: str | None = None) -> dict[str, Any] | None:
    """The first row of a local folder input (its first data file: :func:`_data_files`), read here before Ray
    starts, for the layout check; None for object storage or a folder without a readable row (the scoring pass
    says why)."""
    if _is_remote(path):
        return None
    fmt = _input_format(path, declared)
    for file in _data_files(Path(path), fmt):
        try:  # the one-process readers (io): the same rows and refusals (an empty file is one)
            with contextlib.closing(iter_rows(str(file), fmt)) as rows:
                return next(rows)[1]
        except (OSError, ValueError, NotImplementedError, UserError):  # unreadable: the next file may do
            continue
    return None


def check_paths(input_path: str, output: str, summary: str | None, inputs: list[str], settings: RaySettings,
                declared: str | None = None) -> None:
    """The output rules of the one-process engine, before any work: never inside an input, never over files
    learned-metrics did not write (an earlier scores folder of ours is replaced, as a file output is)."""
    if os.fspath(input_path) == "-" or os.fspath(output) == "-":
        raise UserError("--engine ray reads and writes files (Parquet output): give paths, not -")
    if not through_ray(input_path):
        check_input_file(input_path, declared)
    check_folder_input(input_path, declared)
    if settings.ray_single_file and Path(output).suffix.lower() != ".parquet":
        raise UserError("--ray-single-file writes one Parquet file: give an --output ending in .parquet", path=output)
    if not settings.ray_single_file and Path(output).suffix.lower() in (".jsonl", ".csv", ".parquet", ".json"):
        raise UserError("--engine ray writes a folder of Parquet parts: give a folder name, or --ray-single-file "
                        "for one .parquet file", path=output)
    target = file_output(output) if settings.ray_single_file else folder_output(output, OUTPUT_KIND)
    outputs = [target, json_file_output(summary, "--summary")] if summary else [target]
    check_outputs(outputs, inputs=[p for p in inputs if not _is_remote(p)], overwrite=True)


def _read_chunks(ray: Any, path: str, chunk_size: int, declared: str | None) -> Iterator[list[tuple[int, dict]]]:
    """The input in chunks of numbered rows: a local file through the one-process readers (the same rows, numbers
    and refusals), any other path Ray reads (s3://, gs://, ...) through Ray Data's reader of its format."""
    if not through_ray(path):
        yield from iter_row_chunks(path, chunk_size, declared)
        return
    fmt = _input_format(path, declared)
    reader = {"jsonl": ray.data.read_json, "csv": ray.data.read_csv, "parquet": ray.data.read_parquet}[fmt]
    try:
        rows = enumerate(reader(path, file_extensions=list(FOLDER_SUFFIXES[fmt])).iter_rows(), start=1)
        while chunk := [(number, dict(row)) for number, row in itertools.islice(rows, chunk_size)]:
            yield chunk
    except UserError:
        raise
    except Exception as exc:  # Ray Data's readers raise many types (pyarrow's, its own): one line, as io's do
        cause = cause_among(exc, (ValueError, OSError)) or exc
        raise UserError(f"Ray Data could not read it as {fmt} ({first_line(cause)})",
                        path=path) from None


def score_file(model: str | os.PathLike, input_path: str, output: str, fields: InputFields, options: ScoringOptions,
               run: FileRun, settings: RaySettings, progress: RowProgress | None = None,
               say: Callable[[str], None] | None = None, lap: Callable[[str], None] | None = None) -> RunSummary:
    """Score ``input_path`` into ``output`` (Parquet parts, or one file) on a Ray actor pool, paths checked by
    :func:`check_paths`. A local instance started here is shut down at the end; a running one is left as it was."""
    started = not require_ray().is_initialized()
    model = _check_model_here(model, settings)
    ray = connect(settings)
    lap = lap or (lambda phase: None)
    lap("ray start")
    try:
        actors, cpus, gpus = _resources(ray, settings, options, fits=started)  # started here: nothing joins it
        in_format = _input_format(input_path, run.input_format)
        record_input = {"path": input_path} if _is_remote(input_path) else provenance.input_record(input_path)
        check = (model, fields.kind, options,
                 {"input": record_input, "batching": {"chunk_size": run.chunk_size, "engine": "ray", "actors": actors}})
        if gpus == 0 and _this_machine_only(ray):  # CPU actors here resolve what a CPU load in this process resolves
            record, scorer = _describe(*check, device="cpu" if options.device == "auto" else options.device)
        else:  # the actors' nodes or GPUs may resolve other settings: ask one of them
            describe = ray.remote(num_cpus=cpus, num_gpus=gpus)(_describe)
            with _unwrapped(ray):
                record, scorer = ray.get(describe.remote(*check))
        lap("model check")
        fingerprint = {**run_fingerprint(scorer, input_path, fields, run, 1, [in_format, "parquet"]), "engine": "ray"}
        store = ChunkStore(Path(output).resolve(), "parquet", fingerprint)
        store.open(resume=run.resume, restart=run.restart)
        with runner.kept_for_resume(store, say):
            summary, chunks = _score_chunks(ray, model, input_path, fields, options, run, settings, store,
                                            progress or RowProgress(None, enabled=False), say)
        summary.provenance = provenance.finish(record, "parquet", fields=dataclasses.asdict(fields))
        try:
            _write_output(store, Path(output), chunks, summary.provenance, settings.ray_single_file)
        except BaseException:
            runner.keep_folder(store, say)
            raise
        store.remove()
        return summary
    finally:
        if started:
            ray.shutdown()


def _score_chunks(ray: Any, model: Model, input_path: str, fields: InputFields, options: ScoringOptions, run: FileRun,
                  settings: RaySettings, store: ChunkStore, progress: RowProgress,
                  say: Callable[[str], None] | None) -> tuple[RunSummary, list[int]]:
    """Check and put every chunk (refusing a bad row before any model work), score the unfinished ones on the
    actor pool, save each as it completes; returns the summary and every chunk's row count."""
    parts = list(store.state.get("parts") or [])
    collector = ScoreCollector(run.system_field)
    read, refs, hashes, sizes, summary = hashlib.sha256(), [], {}, [], RunSummary()
    for index, chunk in enumerate(_read_chunks(ray, input_path, run.chunk_size, run.input_format)):
        if index == 0 and (note := fields.settle(chunk[0][1])) and say:
            say(runner.layout_note(note, options.premise_strategy))
        hash_rows(read, chunk)
        fields.extract(chunk, Path(input_path))
        collector.systems_of(chunk, input_path)
        if number := next((n for n, row in chunk if ROW in row), None):
            raise UserError(f"the input has a field named '{ROW}', which --engine ray adds (each row's number): "
                            "rename it", path=input_path, row=number, field=ROW)
        sizes.append(len(chunk))
        if index < len(parts) and parts[index] is not None:
            summary.add_resumed(parts[index], read.hexdigest(), chunk, input_path)
            continue
        hashes[index] = read.hexdigest()
        refs.append(ray.put(parquet_table([{**row, ROW: number, _CHUNK: index} for number, row in chunk],
                                          path=input_path, first_row=chunk[0][0])))  # the object store spills
    if len(parts) > len(sizes) and any(parts[len(sizes):]):
        raise UserError(f"cannot resume: {input_path} ended after {sum(sizes):,} rows, but the interrupted run scored "
                        "more of it; give the same input, or pass --restart instead of --resume")
    if summary.resumed_rows and say:
        say(runner.resuming_line(summary.resumed_rows, len(store.finished())))
    progress.total = progress.total or sum(sizes)  # a folder or object storage: counted by the pass above
    progress.skip(summary.resumed_rows)
    start = time.perf_counter()
    scores: dict[int, list[dict]] = {}  # what the summary reads of the chunks this run scored: no second read
    if refs:
        scored = _map(ray, ray.data.from_arrow_refs(refs), model, fields, options, settings,
                      details=run.details, batch_size=None, path=str(input_path), counts=True)
        # scored rows as they stream back, gathered by chunk (Ray may split or join blocks); a complete chunk is
        # saved under its index, once: rows of a block Ray ran again are the same rows and are dropped
        pending: dict[int, dict[int, dict]] = {}
        counts: dict[int, dict] = {}
        with progress, _unwrapped(ray):
            for batch in scored.iter_batches(batch_size=None, batch_format="pyarrow"):
                for row in batch.to_pylist():
                    index, count = row.pop(_CHUNK), row.pop(_COUNTS)
                    if index in store.finished():
                        continue
                    pending.setdefault(index, {})[row[ROW]] = row
                    if count is not None:
                        counts[index] = json.loads(count)
                    if len(pending[index]) < sizes[index]:
                        continue
                    rows = [row for _, row in sorted(pending.pop(index).items())]
                    done = counts.pop(index, {"rows": None})
                    if done.pop("rows") != len(rows):  # a chunk's counters come from the one block that held it
                        raise RuntimeError(f"Ray Data split chunk {index} into several blocks; nothing was written")
                    store.save(rows, {**done, "input_sha256": hashes[index]}, index, first_row=rows[0][ROW])
                    summary.add_counts(len(rows), done["truncated"], done["details"])
                    summary.tokens += done["tokens"]
                    scores[index] = [{key: row[key] for key in (ROW, "score", run.system_field) if key in row}
                                     for row in rows]
                    progress.advance(len(rows))
    missing = sorted(set(range(len(sizes))) - store.finished())
    if missing or any(store.state["parts"][index]["rows"] != sizes[index] for index in store.finished()):
        raise RuntimeError(f"the Ray run returned chunks {missing[:5]} incomplete or not at all; nothing was written: "
                           "run the same command with --resume")
    summary.seconds = time.perf_counter() - start
    for index in range(len(sizes)):  # the summary in input order, as the one-process engine adds it
        rows = scores.pop(index, None) or list(store.iter_part_rows(index))  # a resumed chunk: from its part
        collector.add([row["score"] for row in rows], collector.systems_of(
            [(row[ROW], row) for row in rows], input_path))
    summary.scores = collector.summary()
    return summary, sizes


def _write_output(store: ChunkStore, output: Path, chunks: list[int], record: dict[str, Any], single: bool) -> None:
    """Every chunk's verified part, in order: one Parquet file with the record in its metadata, or a folder of the
    parts with the record once beside them (``_provenance.json``); staged, then renamed."""
    if single:
        with staged_files() as stage:
            store.join_into(stage(output), None, provenance.parquet_metadata(record), chunks=len(chunks))
        return
    with atomic_folder(output, OUTPUT_KIND, overwrite=True) as folder:
        for index in range(len(chunks)):
            (folder / store.part_path(index).name).write_bytes(store.verified_bytes(index))
        (folder / PROVENANCE_NAME).write_text(provenance.sidecar_text(record), encoding="utf-8")
