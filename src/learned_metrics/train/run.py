"""The training run, top to bottom: ``python train.py experiment=NAME`` composes the config and calls :func:`train`,
whose numbered steps (check, build, fit, best, export, report) docs/architecture.md's "Train path" describes: every
check comes before anything is built, and the export is the best checkpoint file, written as ``export`` writes it."""

from __future__ import annotations

import contextlib
import importlib.metadata
import logging
import subprocess
import time
from pathlib import Path
from typing import Any

import lightning as L
from hydra.utils import instantiate
from lightning.pytorch import Callback
from lightning.pytorch.callbacks import ModelCheckpoint
from omegaconf import DictConfig, OmegaConf

from learned_metrics.card import training_card
from learned_metrics.data.common import load_report
from learned_metrics.errors import UserError
from learned_metrics.export import (
    TOKENIZER_FOLDER,
    VALIDATION_METRICS_KEY,
    load_checkpoint,
    model_from_checkpoint,
    write_export,
)
from learned_metrics.io import write_json
from learned_metrics.loggers import log_sweep_objective, wandb_run_scope
from learned_metrics.outputs import atomic_folder
from learned_metrics.progress import StartUp
from learned_metrics.render.terminal import console, key_value_table
from learned_metrics.train.checkpointing import LastCheckpoint
from learned_metrics.train.config import check_values, register_resolvers
from learned_metrics.train.logs import tidy_logging
from learned_metrics.train.run_folders import RunFolder, check_resumed_settings, check_run_folder
from learned_metrics.train.target_metric import check_monitored
from learned_metrics.validate import flag

log = logging.getLogger(__name__)


@wandb_run_scope()
def train(cfg: DictConfig, startup: StartUp | None = None, folder: RunFolder | None = None) -> dict[str, float]:
    """Fit, select the best checkpoint on the monitored metric, export it; returns its metrics. A wandb run is finished
    cleanly either way (exit code 1 on a crash), so a sweep agent goes on; ``startup``: ``train.py``'s clock;
    ``folder``: the run folder as :func:`check_run_folder` checked it (``train.py`` checks it before the imports)."""
    startup = startup or StartUp()
    register_resolvers()
    tidy_logging()
    started = time.time()
    allow_pickle = flag(cfg.model.get("allow_pickle", False), "model.allow_pickle")  # "no" is not False

    # 1. check
    folder = folder or check_run_folder(cfg)
    check_values(cfg)
    kept = OmegaConf.select(cfg, "callbacks.model_checkpoint")
    if kept is not None:
        check_monitored(kept.get("monitor"), str(kept.get("mode", "min")), cfg)
    output_dir, ckpt_path = folder.output_dir, folder.ckpt_path
    resolved = OmegaConf.to_container(cfg, resolve=True)
    if ckpt_path is not None:  # read as `export` reads it (memory-mapped): a text file or a pickle is one line
        check_resumed_settings(load_checkpoint(ckpt_path, allow_pickle=allow_pickle), resolved, ckpt_path)
    datamodule = instantiate(cfg.data)  # reads nothing until checked or set up
    check_data = getattr(datamodule, "check_data", None)  # a datamodule of your own may not have one
    if check_data is not None:
        check_data(test=bool(cfg.get("test")))  # train, validation (+ test): exist, have rows and the columns
    L.seed_everything(cfg.seed, workers=True)

    # 2. build
    model = instantiate(cfg.model)
    startup.lap("model")  # with the checks before it
    record = RunRecord(output_dir, cfg, resolved, startup)
    callbacks = [*_instantiate_all(cfg.get("callbacks")), record, ValidationRecord()]
    callbacks.sort(key=lambda callback: isinstance(callback, LastCheckpoint))  # after the best: holds its state
    loggers = _instantiate_all(cfg.get("logger"))
    trainer = instantiate(cfg.trainer, callbacks=callbacks, logger=loggers or False)

    # 3. fit (checkpoints hold tensors and plain values: loaded without unpickling objects)
    trainer.fit(model, datamodule=datamodule, ckpt_path=ckpt_path, weights_only=not allow_pickle)

    # 4. best (memory-mapped: every rank reads whether it holds its validation metrics)
    monitored = next((cb for cb in callbacks if isinstance(cb, ModelCheckpoint) and cb.monitor), None)
    best_path = (monitored.best_model_path if monitored is not None else None) or None
    if best_path is None:
        log.warning("no best checkpoint (the monitored metric was never computed): exporting the final weights")
    best_checkpoint = load_checkpoint(best_path, allow_pickle) if best_path else None
    results = _evaluate(trainer, model, datamodule, best_path, best_checkpoint, bool(cfg.get("test")), not allow_pickle)
    metrics = {name: value for split in results.values() for name, value in split.items()}

    if trainer.is_global_zero:
        # 5. export: the best checkpoint file itself, as `learned-metrics export` reads it
        best_model = model_from_checkpoint(best_checkpoint, best_path) if best_checkpoint else model.model
        export_dir = output_dir / "export"
        card = {**record.card, "selection": selection_record(monitored, best_checkpoint)}
        write_export(best_model, output_dir / TOKENIZER_FOLDER, card, export_dir, best_path, results=results,
                     overwrite=True)  # a run resumed in place replaces its own earlier export
        # 6. report
        log_sweep_objective(loggers, metrics, cfg)  # the best checkpoint's value, not the last step's
        with contextlib.suppress(OSError):  # checkpoints/<experiment>/latest -> the newest run, for scripts
            (output_dir.parent / "latest").unlink(missing_ok=True)
            (output_dir.parent / "latest").symlink_to(output_dir.name)
        console().print(key_value_table(f"{cfg.task_name}: best checkpoint", {**metrics,
            "best checkpoint": best_path or "none (no validation during training): final weights",
            "global steps": trainer.global_step, "epochs": trainer.current_epoch,
            "truncated rows (train)": datamodule.truncated.get("train", 0), "export": export_dir,
            "elapsed": f"{time.time() - started:.0f} s"}))
    return metrics


class ValidationRecord(Callback):
    """A checkpoint saved right after a validation carries its metrics (``val/...``), read back for the best one
    instead of validating it again; one saved at another step (``last.ckpt``) gets none: other weights."""

    KEY = VALIDATION_METRICS_KEY

    def __init__(self) -> None:
        self._validated_at = -1

    def on_validation_end(self, trainer: L.Trainer, pl_module: Any) -> None:
        if not trainer.sanity_checking:
            self._validated_at = trainer.global_step

    def on_save_checkpoint(self, trainer: L.Trainer, pl_module: Any, checkpoint: dict[str, Any]) -> None:
        if trainer.global_step == self._validated_at:
            checkpoint[self.KEY] = {name: float(value) for name, value in trainer.callback_metrics.items()
                                    if name.startswith("val/")}


class RunRecord(Callback):
    """What a run folder records about its run, written once when fitting starts: after ``prepare_data`` (which may
    build the data set), so the data-prep report is there for the card the module and every checkpoint carry. Logs
    the start-up line after the first optimizer step (data, sanity check, first step: after ``train.py``'s phases)."""

    def __init__(self, output_dir: Path, cfg: DictConfig, resolved: dict[str, Any], startup: StartUp):
        self.output_dir = output_dir
        self.cfg = cfg
        self.resolved = resolved
        self.startup = startup
        self.card: dict[str, Any] = {}

    def on_fit_start(self, trainer: L.Trainer, pl_module: Any) -> None:
        datamodule = trainer.datamodule
        report = load_report(datamodule.path)  # the data-prep report.json (preprocessing, augmentation settings)
        self.card = training_card(kind=self.cfg.model.metric_kind, experiment=self.cfg.task_name,
                                  base_model=self.cfg.model.name_or_path, text_fields=list(datamodule.text_fields),
                                  max_length=datamodule.max_length, report=report, training_config=self.resolved)
        pl_module.card = self.card
        for logger in trainer.loggers:
            logger.log_hyperparams(self.resolved)
        if trainer.is_global_zero:
            write_json(self.output_dir / "run_info.json", run_info(self.cfg, report, self.resolved))
            if report is not None:  # the data-prep report this run trained on, beside its results
                write_json(self.output_dir / "data_report.json", report)
            with atomic_folder(self.output_dir / TOKENIZER_FOLDER, "tokenizer", overwrite=True) as tmp:
                datamodule.tokenizer.save_pretrained(tmp)
        self.startup.lap("data")  # prepare_data (a set built on first use) and setup (tokenizing) come before

    def on_sanity_check_end(self, trainer: L.Trainer, pl_module: Any) -> None:
        self.startup.lap("sanity check")  # trainer.num_sanity_val_steps validation batches

    def on_train_batch_end(self, trainer: L.Trainer, *args: Any) -> None:
        if not self.startup.reported:
            self.startup.lap("first step")
            self.startup.reported = True
            if trainer.is_global_zero:
                log.info(self.startup.line())


def selection_record(monitored: ModelCheckpoint | None, best_checkpoint: dict[str, Any] | None) -> dict[str, Any]:
    """What chose the exported weights, for the card: the monitored metric, its mode, the best value and the
    optimizer step of that checkpoint (``monitor`` None: no validation ran, the final weights)."""
    if monitored is None or best_checkpoint is None or monitored.best_model_score is None:
        return {"monitor": None, "mode": None, "best_value": None, "step": None, "note": "final weights"}
    return {"monitor": monitored.monitor, "mode": monitored.mode, "best_value": float(monitored.best_model_score),
            "step": int(best_checkpoint.get("global_step", -1))}


def _evaluate(trainer: L.Trainer, model: Any, datamodule: Any, best_path: str | None,
              best_checkpoint: dict[str, Any] | None, test: bool, weights_only: bool) -> dict[str, dict[str, float]]:
    """Validation (and test) metrics of the best checkpoint: those it was chosen on travel in it
    (:class:`ValidationRecord`); only one without them (the final weights, an older file) is validated again."""
    known = (best_checkpoint or {}).get(ValidationRecord.KEY)
    if known:
        results = {"validation": {name: float(value) for name, value in known.items()}}
        for logger in trainer.loggers:  # the row a second validation logged: the chosen checkpoint's metrics last
            logger.log_metrics(results["validation"], step=trainer.global_step)
            logger.save()
    else:
        results = {"validation": _first(trainer.validate(model, datamodule=datamodule, ckpt_path=best_path,
                                                         verbose=False, weights_only=weights_only))}
    if test:  # check_data made sure the set has a test split
        results["test"] = _first(trainer.test(model, datamodule=datamodule, ckpt_path=best_path, verbose=False,
                                              weights_only=weights_only))
    return results


def _first(outputs: list[dict[str, Any]]) -> dict[str, float]:
    return {k: float(v) for k, v in outputs[0].items()} if outputs else {}


def _instantiate_all(group: DictConfig | None) -> list[Any]:
    """Instantiate every ``_target_`` entry of a config group (callbacks, loggers)."""
    if not group:
        return []
    built = [instantiate(node) for node in group.values() if isinstance(node, DictConfig) and "_target_" in node]
    return [item for item in built if item is not None]  # a factory may decline (progress_bar when disabled)


def run_info(cfg: DictConfig, report: dict[str, Any] | None, resolved: dict[str, Any]) -> dict[str, Any]:
    """What is needed to reproduce a run: commit, versions, resolved config, data report."""
    versions = dict.fromkeys(("learned-metrics", "torch", "transformers", "lightning", "datasets", "tokenizers",
                              "hydra-core"))
    for name in versions:
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            versions[name] = importlib.metadata.version(name)
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5,
                                cwd=Path(__file__).parent).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        commit = None
    return {"experiment": cfg.task_name, "git_commit": commit, "packages": versions, "config": resolved,
            "data_report": report}


def optimized_metric_value(cfg: DictConfig, metrics: dict[str, float]) -> float | None:
    """The value Hydra sweepers (Optuna) optimise: ``optimized_metric`` of the config."""
    name = cfg.get("optimized_metric")
    if not name:
        return None
    if name not in metrics:
        raise UserError(f"optimized_metric '{name}' not among the run's metrics {sorted(metrics)}")
    return metrics[name]
