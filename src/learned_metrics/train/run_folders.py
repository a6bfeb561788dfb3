"""Run folders: the check a training run's folder passes before anything is built (:func:`check_run_folder`), and
the rows of ``learned-metrics runs list [DIR]``: every folder under DIR, at any depth (single runs, multiruns,
sweeps), holding ``run_info.json`` (written when a run starts) or ``export/learned_metric.json`` (when it ends).
Only small files are read (card, ``csv/metrics.csv``, checkpoint *names*), never a checkpoint."""

from __future__ import annotations

import contextlib
import csv
import json
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from learned_metrics.boundary import is_main_process
from learned_metrics.errors import UserError
from learned_metrics.outputs import shown_names


@dataclass(frozen=True)
class RunFolder:
    """A training run's folder, checked before anything is built: ``train.py`` checks it before Lightning's import
    (seconds), so a refused folder is refused at once, and hands it to ``train``, which does not check it again."""

    output_dir: Path
    ckpt_path: str | None  # the checkpoint the run resumes from (``ckpt_path=last`` resolved); its file not yet read


def check_run_folder(cfg: Any) -> RunFolder:
    """A run writes into a folder of its own (else it mixes or overwrites checkpoints and exports): refuse one
    holding anything but Hydra's files, unless resuming in place (SLURM requeue: ``ckpt_path`` is
    ``<this folder>/checkpoints/*.ckpt``; a folder further up, such as the project's, is no run's own)."""
    output_dir, ckpt_path = Path(cfg.paths.output_dir), _resume_checkpoint(cfg)
    in_place = ckpt_path is not None and output_dir.resolve() == Path(ckpt_path).resolve().parent.parent
    if is_main_process() and not in_place and output_dir.exists():  # DDP workers start in rank 0's folder
        if not output_dir.is_dir():
            raise UserError("the run folder (hydra.run.dir) is a file", path=output_dir)
        foreign = [p.name for p in output_dir.iterdir() if p.name != ".hydra" and p.suffix != ".log"]  # Hydra's
        if foreign:
            raise UserError(f"the run folder already holds files ({shown_names(foreign)}); every run writes into a "
                            "new folder: leave hydra.run.dir at its timestamped default or name a new folder (to "
                            "resume in place, give ckpt_path=<this folder>/checkpoints/last.ckpt)", path=output_dir)
    return RunFolder(output_dir, ckpt_path)


def _resume_checkpoint(cfg: Any) -> str | None:
    """``ckpt_path``: ``None`` -> fresh run; ``last`` -> newest ``last.ckpt`` of this experiment; else as given."""
    ckpt_path = cfg.get("ckpt_path")
    if not ckpt_path:
        return None
    if ckpt_path == "last":
        root = Path(cfg.paths.checkpoints_dir) / cfg.task_name
        candidates = sorted(root.glob("*/checkpoints/last.ckpt"), key=lambda p: p.stat().st_mtime)
        if not candidates:
            raise UserError(f"ckpt_path=last: no last.ckpt under {root}/*/checkpoints/")
        return str(candidates[-1])
    return str(ckpt_path)


# What decides the weights a run trains (its data set and batches, the model it starts from, the optimiser, the
# seed) and which of them it keeps (the monitored target): a resumed run takes them from its checkpoint. How long it
# trains (trainer.max_steps/max_epochs), where it writes, how often it validates or saves, and how it reports may
# change on a resume.
RESUMED_SETTINGS = ("seed", "data.path", "data.tokenizer", "data.text_fields", "data.label_field", "data.batch_size",
                    "data.max_length", "data.seed", "data.max_train_rows", "data.length_grouped", "model.name_or_path",
                    "model.metric_kind", "model.head_labels", "model.lr", "model.weight_decay", "model.warmup_ratio",
                    "model.adam_epsilon", "model.betas", "trainer.accumulate_grad_batches",
                    "trainer.gradient_clip_val",
                    # what the best checkpoint is chosen by: the interrupted run's best value is the one to beat, so
                    # it must be a value of the same target (another benchmark's AUC beside this one's picks wrong)
                    "callbacks.model_checkpoint.monitor", "callbacks.model_checkpoint.mode", "faithfulness_benchmark",
                    *(f"callbacks.faithfulness_validation.{name}" for name in (
                        "layout", "split", "threshold_protocol", "threshold", "max_rows_per_dataset", "seed",
                        "premise_strategy", "granularity", "max_length")),
                    "callbacks.shuffle_validation.max_docs", "callbacks.shuffle_validation.seed")
# one folder named two ways is one folder
_PATH_SETTINGS = ("data.path", "data.tokenizer", "model.name_or_path", "faithfulness_benchmark")
_ABSENT = object()


def check_resumed_settings(checkpoint: Mapping[str, Any], resolved: Mapping[str, Any], ckpt_path: str | Path) -> None:
    """A resumed run is the interrupted run continued: each of :data:`RESUMED_SETTINGS` in ``resolved`` (this run's
    resolved config) equals the one the checkpoint's card records, and the data set's ``report.json`` is the one it
    trained on (not rebuilt since); else one line naming the setting and both values. A checkpoint whose card records
    no training config (written by hand, an older version) is not judged."""
    from learned_metrics.data.common import load_report

    card = checkpoint.get("learned_metric") or {}
    then = card.get("training_config") if isinstance(card, Mapping) else None
    if not isinstance(then, Mapping):
        return
    fix = ("a resumed run continues the interrupted one with its settings: drop the override, or start a new run "
           "from these weights (learned-metrics export CKPT DIR, then model.name_or_path=DIR without ckpt_path)")
    data_path, recorded = _setting(resolved, "data.path"), card.get("data_report")
    now = load_report(data_path) if isinstance(data_path, str) and isinstance(recorded, Mapping) else None
    for name in RESUMED_SETTINGS:
        old, new = _setting(then, name), _setting(resolved, name)
        if old is _ABSENT or new is _ABSENT:  # a setting the interrupted run's version did not have
            continue
        if name == "data.path" and now is not None and now == recorded:  # moved (another node's scratch): the same
            continue  # data set, as its report says; a different one is refused below, naming where it differs
        if name in _PATH_SETTINGS and isinstance(old, str) and isinstance(new, str):
            same = old == new or Path(old).expanduser().resolve() == Path(new).expanduser().resolve()
        else:
            same = old == new
        if not same:
            raise UserError(f"ckpt_path: the interrupted run trained with {name}={old!r}, this run asks for "
                            f"{name}={new!r}; {fix}", path=ckpt_path)
    if now is not None:
        where = _first_difference(recorded, now)
        if where is not None:
            raise UserError(f"ckpt_path: the data set at data.path={data_path} was rebuilt since the interrupted run "
                            f"trained on it (its report.json differs at '{where}'); a resumed run continues on the "
                            "same data: resume on the set it trained on, or start a new run", path=ckpt_path)


def _setting(config: Mapping[str, Any], dotted: str) -> Any:
    value: Any = config
    for part in dotted.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return _ABSENT
        value = value[part]
    return value


def _first_difference(then: Any, now: Any, where: str = "") -> str | None:
    """The dotted key of the first value that differs between two JSON values (``where`` itself for a leaf)."""
    if isinstance(then, Mapping) and isinstance(now, Mapping):
        for key in [*then, *(k for k in now if k not in then)]:
            found = _first_difference(then.get(key, _ABSENT), now.get(key, _ABSENT), f"{where}.{key}" if where
                                      else str(key))
            if found is not None:
                return found
        return None
    return None if then == now else (where or "the whole report")


RUN_MARKERS = ("run_info.json", "export/learned_metric.json")
TIMESTAMP_FORMAT = "%Y-%m-%d_%H-%M-%S"  # conf/hydra/default.yaml run folders
_STEP = re.compile(r"step[=_-]?(\d+)")


@dataclass
class RunRow:
    """One run as listed; the JSON output is a list of these."""

    experiment: str
    run: str
    path: str
    date: str | None
    git_commit: str | None
    seed: int | None
    metric: str | None
    mode: str | None
    best: float | None
    best_source: str | None  # "export" or "metrics.csv"
    best_step: int | None
    export: bool
    validation: dict[str, float] = field(default_factory=dict)


def find_run_dirs(root: Path) -> list[Path]:
    """Folders under ``root`` with a run marker; symlinks (``latest``) are not followed."""
    found = []
    for current, dirnames, _ in os.walk(root, followlinks=False):
        folder = Path(current)
        if any((folder / marker).is_file() for marker in RUN_MARKERS):
            found.append(folder)
            dirnames[:] = [d for d in dirnames if d not in ("export", "checkpoints", "wandb", "csv", ".hydra")]
    return found


def _read_json(path: Path) -> dict[str, Any]:
    try:
        return _mapping(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return {}


def _mapping(value: Any) -> dict[str, Any]:
    """Run files are written by us but read after anyone may have edited them: a non-mapping reads as empty."""
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _run_date(run_dir: Path, card: dict[str, Any]) -> datetime | None:
    """Start time: the timestamp folder name, else when ``run_info.json`` was written, else the export."""
    for name in (run_dir.name, run_dir.parent.name.removeprefix("multirun_")):
        with contextlib.suppress(ValueError):
            return datetime.strptime(name, TIMESTAMP_FORMAT)
    info = run_dir / "run_info.json"
    if info.is_file():
        return datetime.fromtimestamp(info.stat().st_mtime)
    try:
        return datetime.fromisoformat(card["exported_at"]).replace(tzinfo=None)
    except (KeyError, TypeError, ValueError):  # no export, or no ISO time in it
        return None


def best_from_metrics_csv(path: Path, metric: str, mode: str | None) -> float | None:
    """Best logged value of ``metric`` in a Lightning CSV log (for runs without an export)."""
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            values = [float(row[metric]) for row in csv.DictReader(handle) if row.get(metric) not in (None, "")]
    except (OSError, ValueError, KeyError, UnicodeDecodeError, csv.Error):
        return None
    return (min if mode == "min" else max)((v for v in values if not math.isnan(v)), default=None)


def read_run(run_dir: Path, root: Path) -> RunRow:
    """Everything the table shows about one run folder, from its small files only."""
    info = _read_json(run_dir / "run_info.json")
    card = _read_json(run_dir / "export" / "learned_metric.json")
    config = _mapping(info.get("config")) or _mapping(card.get("training_config"))
    checkpoint = _mapping(_mapping(config.get("callbacks")).get("model_checkpoint"))
    metric, mode = _text(checkpoint.get("monitor")), checkpoint.get("mode")
    mode = mode if mode in ("min", "max") else None
    validation = {str(k): float(v) for k, v in _mapping(card.get("validation")).items()
                  if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)}
    best, source = (validation[metric], "export") if metric in validation else (None, None)
    if best is None and metric:
        best = best_from_metrics_csv(run_dir / "csv" / "metrics.csv", metric, mode)
        source = "metrics.csv" if best is not None else None
    # the best step: in the name of the exported checkpoint, else of the last best*.ckpt
    name = _text(card.get("source_checkpoint")) or max((p.name for p in (run_dir / "checkpoints").glob("best*.ckpt")),
                                                        default=None)
    step = _STEP.search(Path(name).name) if name else None
    date = _run_date(run_dir, card)
    seed = config.get("seed")
    experiment = (_text(info.get("experiment")) or _text(card.get("experiment")) or _text(config.get("task_name"))
                  or run_dir.parent.name)
    return RunRow(experiment=experiment, run=str(run_dir.relative_to(root)), path=str(run_dir.resolve()),
                  date=date.isoformat(sep=" ", timespec="minutes") if date else None,
                  git_commit=_text(info.get("git_commit")),
                  seed=seed if isinstance(seed, int) and not isinstance(seed, bool) else None, metric=metric,
                  mode=mode, best=best, best_source=source, best_step=int(step.group(1)) if step else None,
                  export=(run_dir / "export" / "learned_metric.json").is_file(), validation=validation)


def list_runs(root: str | Path) -> list[RunRow]:
    """All runs under ``root``, sorted by experiment, then date, then folder."""
    root = Path(root)
    if not root.is_dir():
        raise UserError("no such folder (training runs are written to checkpoints/)", path=root)
    rows = [read_run(run_dir, root) for run_dir in find_run_dirs(root)]
    if not rows:
        raise UserError("no training runs found (no run_info.json or export/learned_metric.json below)", path=root)
    return sorted(rows, key=lambda r: (r.experiment, r.date or "", r.run))
