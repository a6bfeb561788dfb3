"""Provenance: what made a scored file (model, weights, settings), kept with the file.

A score that cannot be traced cannot go in a paper (docs/scoring.md "Provenance: what made this file"); a damaged
record stops the reader. Imports no torch or pandas, pyarrow only for Parquet."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from learned_metrics.errors import UserError
from learned_metrics.io import dump_json, file_format, open_parquet, schema_with, write_json
from learned_metrics.outputs import atomic_file, check_outputs, file_output

FORMAT = "learned-metrics/provenance"
VERSION = 1
PARQUET_KEY = "learned_metrics"
SIDECAR_SUFFIX = ".provenance.json"
_HASH_BLOCK = 8 << 20  # bytes read at a time: a 1.7 GB checkpoint never sits in memory
_PARQUET_SUFFIXES = (".parquet", ".pq")
_PRECISIONS = {"torch.float32": "fp32", "torch.bfloat16": "bf16", "torch.float16": "fp16"}
# (single file, index of shards) that transformers loads weights from, in the order it prefers them.
_WEIGHTS = (("model.safetensors", "model.safetensors.index.json"),
            ("pytorch_model.bin", "pytorch_model.bin.index.json"))


def sha256_of(paths: list[Path]) -> str:
    """SHA-256 of the files' bytes one after the other, read in blocks."""
    digest = hashlib.sha256()
    for path in paths:
        with open(path, "rb") as handle:
            while block := handle.read(_HASH_BLOCK):
                digest.update(block)
    return digest.hexdigest()


def weights_files(model_dir: str | os.PathLike) -> list[Path]:
    """The files a model's weights load from, in hashing order (see the module docstring); [] when none."""
    folder = Path(model_dir)
    for single, index in _WEIGHTS:
        if (folder / single).is_file():
            return [folder / single]
        if (folder / index).is_file():
            try:
                weight_map = json.loads((folder / index).read_text(encoding="utf-8")).get("weight_map") or {}
            except (OSError, ValueError, AttributeError):
                raise UserError("damaged weights index (not a JSON object with a weight_map)",
                                path=folder / index) from None
            return [folder / index, *(folder / name for name in sorted(set(weight_map.values())))]
    return sorted(folder.glob("*.safetensors"))


def weights_sha256(model_dir: str | os.PathLike) -> tuple[str | None, list[str]]:
    """``(sha256, file names)`` of a model folder's weights; ``(None, [])`` when it has none."""
    files = weights_files(model_dir)
    return (sha256_of(files), [file.name for file in files]) if files else (None, [])


def model_identity(source: str | os.PathLike, model_dir: str | os.PathLike | None) -> tuple[str, str | None]:
    """``(model, revision)``: a local folder resolved (revision unknown), a Hub id with its snapshot's commit."""
    local = Path(source).expanduser()
    if local.exists():
        return str(local.resolve()), None
    snapshot = model_dir is not None and Path(model_dir).parent.name == "snapshots"
    return str(source), Path(model_dir).name if snapshot else None


def precision_name(dtype: Any) -> str:
    """``torch.float32`` -> ``fp32`` (``bf16``, ``fp16``); anything else as its string."""
    return _PRECISIONS.get(str(dtype), str(dtype))


def input_record(path: str | os.PathLike | None, *, hashed: bool = True) -> dict[str, Any] | str | None:
    """``{"path", "size", "sha256"}`` of an input file (``hashed=False``: no sha256, no read), ``"-"``, or None."""
    if path is None:
        return None
    if os.fspath(path) == "-":
        return "-"
    file = Path(path).expanduser()
    if not file.is_file():
        return {"path": str(file.resolve()), "size": None, "sha256": None}
    record = {"path": str(file.resolve()), "size": file.stat().st_size}
    return {**record, "sha256": sha256_of([file])} if hashed else record


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def build_record(*, metric: str, model: str, revision: str | None = None, weights_sha256: str | None = None,
                 weights_files: list[str] | None = None, labels: Mapping[str, int] | None = None, input: Any = None,
                 **settings: Any) -> dict[str, Any]:
    """A provenance record (version :data:`VERSION`): what made the scores, ``settings`` as given (a scorer's are
    ``ScoringOptions.applying(metric)``: null where they do not apply), the learned-metrics version, the time (UTC)."""
    from learned_metrics import __version__

    return {"format": FORMAT, "version": VERSION, "metric": metric, "model": model, "revision": revision,
            "weights_sha256": weights_sha256, "weights_files": list(weights_files or []),
            "labels": None if labels is None else dict(labels), "input": input, **settings,
            "learned_metrics_version": __version__, "created": now()}


def finish(record: Mapping[str, Any], fmt: str, **updates: Any) -> dict[str, Any]:
    """The record finalized into a ``fmt`` output: ``updates`` applied, ``created`` now (Parquet: null, same bytes)."""
    return {**record, **updates, "created": None if fmt == "parquet" else now()}


def sidecar_path(output: str | os.PathLike) -> Path:
    """``scores.jsonl`` -> ``scores.jsonl.provenance.json`` (beside it)."""
    output = Path(output)
    return output.with_name(output.name + SIDECAR_SUFFIX)


def outputs(output: str | os.PathLike, fmt: str) -> list:
    """The sidecar as an Output to check with the command's others before any work (none for Parquet or ``-``)."""
    if os.fspath(output) == "-" or fmt == "parquet":
        return []
    return [file_output(sidecar_path(output), "--output's provenance file")]


def sidecar_text(record: Mapping[str, Any]) -> str:
    return dump_json(record) + "\n"


def parquet_metadata(record: Mapping[str, Any]) -> dict[str, str]:
    """Schema metadata for a Parquet writer: the record as JSON under :data:`PARQUET_KEY`."""
    return {PARQUET_KEY: dump_json(record, indent=None, compact=True)}


def write(record: Mapping[str, Any], output: str | os.PathLike, fmt: str | None = None, *,
          stage: Callable[[Path], Path] | None = None) -> Path | None:
    """Attach ``record`` to a written output, atomically: a Parquet file's schema metadata (a scoring run's writer
    takes :func:`parquet_metadata` instead), else the sidecar (into ``stage`` if given); where it went, None for -."""
    if os.fspath(output) == "-":
        return None
    fmt = file_format(output, fmt)
    output = Path(output)
    if fmt == "parquet":
        if stage is not None:
            raise ValueError("Parquet keeps its provenance inside: pass parquet_metadata(record) to its writer")
        import pyarrow.parquet as pq

        with open_parquet(output) as source, atomic_file(output) as tmp:  # rewritten row group by row group
            schema = schema_with(source.schema_arrow, parquet_metadata(record))
            with pq.ParquetWriter(tmp, schema) as writer:
                for index in range(source.num_row_groups):
                    writer.write_table(source.read_row_group(index))
        return output
    target = sidecar_path(output)
    if stage is not None:
        stage(target).write_text(sidecar_text(record), encoding="utf-8")
        return target
    check_outputs(outputs(output, fmt), inputs=[output])
    write_json(target, record)
    return target


def _is_parquet(path: Path) -> bool:
    if path.suffix.lower() in _PARQUET_SUFFIXES:
        return True
    try:
        with path.open("rb") as handle:
            return handle.read(4) == b"PAR1"
    except OSError:
        return False


def read_provenance(path: str | os.PathLike) -> dict[str, Any] | None:
    """The record of a scored file (Parquet metadata or the sidecar), or of a sidecar named directly; None when
    there is none (``-``, a sidecar not copied along); a damaged one is a :class:`UserError` naming the file."""
    if os.fspath(path) == "-":
        return None
    path = Path(path).expanduser()
    if not path.name.endswith(SIDECAR_SUFFIX) and _is_parquet(path):
        if not path.exists():
            raise UserError("file not found", path=path)
        with open_parquet(path) as source:
            raw = (source.schema_arrow.metadata or {}).get(PARQUET_KEY.encode())
        return None if raw is None else _parse(raw, path, f"the '{PARQUET_KEY}' Parquet metadata")
    sidecar = path if path.name.endswith(SIDECAR_SUFFIX) else sidecar_path(path)
    try:
        raw = sidecar.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise UserError(f"cannot read the provenance record ({exc.strerror or exc})", path=sidecar) from None
    return _parse(raw, sidecar)


def _parse(raw: bytes, path: Path, where: str = "the provenance record") -> dict[str, Any]:
    def damaged(why: str) -> UserError:
        return UserError(f"{where} is damaged ({why}); delete or regenerate it", path=path)

    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise damaged("not UTF-8") from None
    except json.JSONDecodeError as exc:
        raise damaged(f"invalid JSON: {exc.msg}") from None
    if not isinstance(data, dict):
        raise damaged(f"a JSON {type(data).__name__}, not an object")
    if data.get("format") != FORMAT:
        raise damaged(f"format {data.get('format')!r}, expected {FORMAT!r}")
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise damaged(f"version {version!r}, expected a positive integer")
    return data


def describe(record: Mapping[str, Any]) -> str:
    """One line for people, missing settings left out: ``model runs/nli/export (weights sha256 3f2a9c1b…),
    faithfulness e-c, MC K=15 seed 0, per-row masks, granularity document, truncate, max length 512, fp32,
    learned-metrics 0.1.0``."""
    revision = record.get("revision")
    model = str(record.get("model") or "unknown model") + (f"@{str(revision)[:12]}" if revision else "")
    weights = record.get("weights_sha256")
    parts = [f"model {model}" + (f" (weights sha256 {str(weights)[:8]}…)" if weights else "")]
    metric = record.get("metric") or "unknown metric"
    parts.append(f"{metric} {record['mode']}" if record.get("mode") else str(metric))
    passes = record.get("mc_samples")
    if isinstance(passes, int) and passes > 1:
        masks = f", {record['mc_masks']} masks" if record.get("mc_masks") else ""
        parts.append(f"MC K={passes} seed {record.get('seed')}{masks}")
    elif passes is not None:
        parts.append("deterministic")
    for key, template in _DESCRIBED:
        value = record.get(key)
        if value or (key == "max_length" and value is not None):
            parts.append(template.format(value))
    return ", ".join(parts)


_DESCRIBED = (("granularity", "granularity {}"), ("premise_strategy", "{}"), ("chunk_tokens", "chunks of {} tokens"),
              ("max_length", "max length {}"), ("precision", "{}"), ("learned_metrics_version", "learned-metrics {}"))


# Settings that change what a score means; the model is not among them (it is what two files compare).
_COMPARED = ("metric", "mode", "mc_samples", "seed", "mc_masks", "granularity", "premise_strategy", "max_length",
             "precision")
MC_ONLY = ("seed", "mc_masks")  # what only Monte-Carlo dropout reads: compared (and resumed) only where it is used


def uses_mc(settings: Mapping[str, Any]) -> bool:
    """Whether scores made with these settings drew dropout masks (K > 1): else :data:`MC_ONLY` changes no score."""
    return isinstance(settings.get("mc_samples"), int) and settings["mc_samples"] > 1


def differences(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    """Settings of :data:`_COMPARED` that differ between two records (the seed and the masks only when both use MC
    dropout), each as a short phrase (``mc_samples 15 vs 1``); a setting absent from a record reads ``unknown``."""
    out = []
    for key in _COMPARED:
        if key in MC_ONLY and not (uses_mc(a) and uses_mc(b)):
            continue
        if a.get(key, _MISSING) != b.get(key, _MISSING):
            left, right = ("unknown" if key not in r else "none" if r[key] is None else str(r[key]) for r in (a, b))
            out.append(f"{key} {left} vs {right}")
    return out


_MISSING = object()
