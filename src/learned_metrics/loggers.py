"""Loggers of a training run: factories that never hang, and the wandb run's lifecycle.

wandb ``online`` without network waits for its server: the server is probed first (2 s), else the run logs
``offline`` with a warning. ``WANDB_MODE`` is respected (``offline``/``disabled`` skip the probe)."""

from __future__ import annotations

import logging
import os
import socket
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlparse

log = logging.getLogger(__name__)


def resolve_wandb_mode(mode: str | None = None) -> str:
    """``online`` only when asked for and the server answers, else ``offline``/``disabled``."""
    mode = (mode or os.environ.get("WANDB_MODE") or "online").lower()
    if mode in ("offline", "disabled", "dryrun"):
        return "offline" if mode == "dryrun" else mode
    url = urlparse(os.environ.get("WANDB_BASE_URL", "https://api.wandb.ai"))
    address = (url.hostname or "api.wandb.ai", url.port or (443 if url.scheme == "https" else 80))
    try:
        with socket.create_connection(address, timeout=2.0):  # a 2 s probe: offline wandb waits for its server
            return "online"
    except OSError:
        log.warning("wandb server unreachable: logging offline (sync later with `wandb sync`)")
        return "offline"


def wandb_logger(project: str = "learned-metrics", mode: str | None = None, **kwargs: Any):
    """A Lightning ``WandbLogger`` whose mode is resolved without ever blocking on the network."""
    from lightning.pytorch.loggers import WandbLogger

    resolved = resolve_wandb_mode(mode)
    os.environ["WANDB_MODE"] = resolved  # the agent/sweep child processes inherit it
    settings = kwargs.pop("settings", None)
    if settings is None:
        import wandb

        settings = wandb.Settings(init_timeout=60, silent=True)
    return WandbLogger(project=project, mode=resolved, settings=settings, **kwargs)


def log_sweep_objective(loggers: Iterable[Any], metrics: dict[str, float], cfg) -> dict[str, float]:
    """Write the best checkpoint's metrics into the wandb run summary (which holds the *last* logged value; the
    sweep must see the kept checkpoint's). Once, after its validation, on rank 0; returns what was written."""
    from omegaconf import OmegaConf

    # the metrics a sweep may optimise: the checkpoint monitor and ``optimized_metric`` (if set)
    names = (OmegaConf.select(cfg, "callbacks.model_checkpoint.monitor"), OmegaConf.select(cfg, "optimized_metric"))
    objective = {name: float(metrics[name]) for name in dict.fromkeys(names) if name and name in metrics}
    if "wandb" in sys.modules:
        from lightning.pytorch.loggers import WandbLogger
        from lightning.pytorch.utilities import rank_zero_only

        for logger in loggers if rank_zero_only.rank == 0 else ():
            if isinstance(logger, WandbLogger):
                logger.experiment.summary.update(objective)
    return objective


def finish_wandb(exit_code: int = 0) -> None:
    """End the active wandb run, so the next run of a multirun or agent starts its own (Lightning's WandbLogger
    reuses an active ``wandb.run``: every Optuna trial would log into the first trial's run)."""
    wandb = sys.modules.get("wandb")
    if wandb is not None and getattr(wandb, "run", None) is not None:
        wandb.finish(exit_code=exit_code)


def finish_wandb_on_error(exc: BaseException) -> None:
    """Mark the run failed (exit code 1; 130 on Ctrl-C) and finish it before the error propagates, so the agent
    starts the next one instead of a run left "running" until its heartbeat times out."""
    finish_wandb(exit_code=130 if isinstance(exc, KeyboardInterrupt) else 1)


@contextmanager
def wandb_run_scope() -> Iterator[None]:
    """``with wandb_run_scope(): ...`` finishes the wandb run on success and on any error."""
    try:
        yield
    except BaseException as exc:
        finish_wandb_on_error(exc)
        raise
    finish_wandb()
