"""Compose-and-run: build everything from the Hydra config, fit, pick the best, export.

``train.py`` only calls :func:`train`. A run writes to ``paths.output_dir``
(``checkpoints/<experiment>/<timestamp>/``): Lightning checkpoints, logs, the
run info (git commit, package versions, data report) and ``export/``, the best
checkpoint as a plain transformers folder.
"""

from __future__ import annotations

import importlib.metadata
import logging
import subprocess
import time
from pathlib import Path
from typing import Any

import lightning as L
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf

from learned_metrics.boundary import is_main_process
from learned_metrics.errors import UserError
from learned_metrics.export import export_module, load_checkpoint
from learned_metrics.io import write_json
from learned_metrics.loggers import log_sweep_objective, wandb_run_scope
from learned_metrics.models.classifier import METRIC_KINDS
from learned_metrics.train.config import register_resolvers

log = logging.getLogger(__name__)

_VERSIONED_PACKAGES = ("learned-metrics", "torch", "transformers", "lightning", "datasets", "tokenizers", "hydra-core")


def _instantiate_all(group: DictConfig | None) -> list[Any]:
    """Instantiate every ``_target_`` entry of a config group (callbacks, loggers)."""
    if not group:
        return []
    return [instantiate(node) for node in group.values() if isinstance(node, DictConfig) and "_target_" in node]


def resolve_ckpt_path(ckpt_path: str | None, cfg: DictConfig) -> str | None:
    """``None`` -> fresh run; ``last`` -> newest ``last.ckpt`` of this experiment; else a file."""
    if not ckpt_path:
        return None
    if ckpt_path == "last":
        root = Path(cfg.paths.checkpoints_dir) / cfg.task_name
        candidates = sorted(root.glob("*/checkpoints/last.ckpt"), key=lambda p: p.stat().st_mtime)
        if not candidates:
            raise UserError(f"ckpt_path=last: no last.ckpt under {root}/*/checkpoints/")
        ckpt_path = str(candidates[-1])
    # the same checks as `learned-metrics export` (memory-mapped, so cheap): a text file, a truncated
    # archive or a pickle of Python objects is one line here instead of a traceback from inside fit()
    load_checkpoint(ckpt_path, allow_pickle=bool(cfg.model.get("allow_pickle", False)))
    return str(ckpt_path)


# Files Hydra writes into a run folder before the task starts.
HYDRA_RUN_FILES = (".hydra",)


def check_run_folder(output_dir: Path, resume_from: str | None = None) -> None:
    """A run writes into a folder of its own: refuse one that already holds anything but Hydra's files.

    ``paths.output_dir``/``hydra.run.dir`` pointing at an earlier run, a data folder or ``.``
    would otherwise mix or overwrite checkpoints and exports. The exception is resuming in place
    (SLURM requeue: the same ``hydra.run.dir`` and ``ckpt_path`` inside it).
    """
    if not output_dir.exists():
        return
    if resume_from is not None and output_dir.resolve() in Path(resume_from).resolve().parents:
        return
    if not output_dir.is_dir():
        raise UserError("the run folder (hydra.run.dir) is a file", path=output_dir)
    foreign = sorted(p.name for p in output_dir.iterdir() if p.name not in HYDRA_RUN_FILES and p.suffix != ".log")
    if foreign:
        shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
        raise UserError(f"the run folder already holds files ({shown}); every run writes into a new folder: leave "
                        "hydra.run.dir at its timestamped default or name a new folder (to resume in place, give "
                        "ckpt_path=<this folder>/checkpoints/last.ckpt)", path=output_dir)


def _git_commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, cwd=Path(__file__).parent
        )
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def run_info(cfg: DictConfig, report: dict[str, Any] | None, resolved: dict[str, Any]) -> dict[str, Any]:
    """What is needed to reproduce a run: commit, versions, resolved config, data report."""
    versions = {}
    for name in _VERSIONED_PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return {
        "experiment": cfg.task_name,
        "git_commit": _git_commit(),
        "packages": versions,
        "config": resolved,
        "data_report": report,
    }


def training_card(
    cfg: DictConfig, datamodule, report: dict[str, Any] | None, resolved: dict[str, Any]
) -> dict[str, Any]:
    """The metric card recorded in every checkpoint and export (completed by ``export.build_card``)."""
    report = report or {}
    kind = cfg.model.metric_kind
    pair = len(datamodule.text_fields) == 2
    preprocessing = {
        "splitter": None,
        "joiner": None,
        **report.get("preprocessing", {}),
        "max_length": datamodule.max_length,
        "text_fields": list(datamodule.text_fields),
        "truncation": "premise_only" if pair else "end",
    }
    return {
        "kind": kind,
        "experiment": cfg.task_name,
        "base_model": cfg.model.name_or_path,
        "label_names": list(METRIC_KINDS[kind]),
        "preprocessing": preprocessing,
        "scoring": {"default_mode": "e-c"} if kind == "faithfulness" else {"score": "P(coherent)"},
        "augmentation": report.get("augmentation"),
        "data_report": report or None,
        "training_config": resolved,
    }


def _checkpoint_callback(callbacks: list[Any]):
    from lightning.pytorch.callbacks import ModelCheckpoint

    return next((cb for cb in callbacks if isinstance(cb, ModelCheckpoint) and cb.monitor), None)


def _link_latest(output_dir: Path) -> None:
    """``checkpoints/<experiment>/latest`` -> the newest run, for scripts and the README."""
    link = output_dir.parent / "latest"
    try:
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(output_dir.name)
    except OSError:
        pass


def _as_floats(metrics: dict[str, Any]) -> dict[str, float]:
    return {k: float(v) for k, v in metrics.items()}


def print_summary(title: str, rows: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, show_header=True)
    table.add_column("item")
    table.add_column("value", overflow="fold")
    for key, value in rows.items():
        table.add_row(key, f"{value:.4f}" if isinstance(value, float) else str(value))
    Console().print(table)


def train(cfg: DictConfig) -> dict[str, float]:
    """Fit, select the best checkpoint on the monitored metric, export it; returns its metrics.

    A wandb run is finished cleanly either way (exit code 1 on a crash), so a
    sweep agent goes on with its next run and Optuna trials get one run each.
    """
    with wandb_run_scope():
        return _fit_and_export(cfg)


def _fit_and_export(cfg: DictConfig) -> dict[str, float]:
    register_resolvers()
    started = time.time()
    output_dir = Path(cfg.paths.output_dir)
    ckpt_path = resolve_ckpt_path(cfg.get("ckpt_path"), cfg)
    if is_main_process():  # DDP workers start later, in the folder rank 0 has begun to fill
        check_run_folder(output_dir, ckpt_path)
    output_dir.mkdir(parents=True, exist_ok=True)
    L.seed_everything(cfg.seed, workers=True)

    model = instantiate(cfg.model)
    datamodule = instantiate(cfg.data)
    datamodule.set_label_ids(model.label_ids)
    datamodule.prepare_data()
    report = datamodule.report  # read once: card, run info and the run folder's copy share it
    resolved = OmegaConf.to_container(cfg, resolve=True)
    model.card = training_card(cfg, datamodule, report, resolved)

    callbacks = _instantiate_all(cfg.get("callbacks"))
    loggers = _instantiate_all(cfg.get("logger"))
    for logger in loggers:
        logger.log_hyperparams(resolved)
    trainer = instantiate(cfg.trainer, callbacks=callbacks, logger=loggers or False)
    if trainer.is_global_zero:
        write_json(output_dir / "run_info.json", run_info(cfg, report, resolved))
        if report is not None:  # the data-prep report this run trained on, beside its results
            write_json(output_dir / "data_report.json", report)

    # checkpoints hold tensors and plain values only: load them without unpickling arbitrary objects
    weights_only = not cfg.model.get("allow_pickle", False)
    trainer.fit(model, datamodule=datamodule, ckpt_path=ckpt_path, weights_only=weights_only)

    checkpoint_cb = _checkpoint_callback(callbacks)
    best_path = checkpoint_cb.best_model_path if checkpoint_cb and checkpoint_cb.best_model_path else None
    if best_path is None:  # no validation during training (short run, fast_dev_run): keep the final weights
        log.warning("no best checkpoint (the monitored metric was never computed): exporting the final weights")
    validation = trainer.validate(
        model, datamodule=datamodule, ckpt_path=best_path, verbose=False, weights_only=weights_only
    )
    model.card["validation"] = _as_floats(validation[0]) if validation else {}
    metrics = dict(model.card["validation"])
    if cfg.get("test") and "test" in datamodule.splits:
        tested = trainer.test(model, datamodule=datamodule, verbose=False)
        model.card["test"] = _as_floats(tested[0]) if tested else {}
        metrics.update(model.card["test"])

    export_dir = output_dir / "export"
    if trainer.is_global_zero:
        log_sweep_objective(loggers, metrics, cfg)  # the best checkpoint's value, not the last step's
        export_module(model, export_dir, source_checkpoint=best_path)
        _link_latest(output_dir)
        print_summary(
            f"{cfg.task_name}: best checkpoint",
            {
                **metrics,
                "best checkpoint": best_path or "none (no validation during training): final weights",
                "global steps": trainer.global_step,
                "epochs": trainer.current_epoch,
                "truncated rows (train)": datamodule.truncated.get("train", 0),
                "export": export_dir,
                "elapsed": f"{time.time() - started:.0f} s",
            },
        )
    return metrics


def optimized_metric_value(cfg: DictConfig, metrics: dict[str, float]) -> float | None:
    """The value Hydra sweepers (Optuna) optimise: ``optimized_metric`` of the config."""
    name = cfg.get("optimized_metric")
    if not name:
        return None
    if name not in metrics:
        raise UserError(f"optimized_metric '{name}' not among the run's metrics {sorted(metrics)}")
    return metrics[name]
