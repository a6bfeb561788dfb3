"""Logger factories that never hang a run.

wandb in ``online`` mode on a machine without network waits for its server;
here the server is probed first (2 s) and the run falls back to ``offline``
with a warning (sync later with ``wandb sync``). ``WANDB_MODE`` is respected:
``offline``/``disabled`` skip the probe.
"""

from __future__ import annotations

import logging
import os
import socket
from typing import Any
from urllib.parse import urlparse

log = logging.getLogger(__name__)


def wandb_reachable(timeout: float = 2.0) -> bool:
    url = urlparse(os.environ.get("WANDB_BASE_URL", "https://api.wandb.ai"))
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        with socket.create_connection((url.hostname or "api.wandb.ai", port), timeout=timeout):
            return True
    except OSError:
        return False


def resolve_wandb_mode(mode: str | None = None) -> str:
    """``online`` only when asked for and the server answers, else ``offline``/``disabled``."""
    mode = (mode or os.environ.get("WANDB_MODE") or "online").lower()
    if mode in ("offline", "disabled", "dryrun"):
        return "offline" if mode == "dryrun" else mode
    if not wandb_reachable():
        log.warning("wandb server unreachable: logging offline (sync later with `wandb sync`)")
        return "offline"
    return "online"


def wandb_logger(project: str = "learned-metrics", mode: str | None = None, **kwargs: Any):
    """A Lightning ``WandbLogger`` whose mode is resolved without ever blocking on the network."""
    from lightning.pytorch.loggers import WandbLogger

    resolved = resolve_wandb_mode(mode)
    os.environ["WANDB_MODE"] = resolved  # the agent/sweep child processes inherit it
    kwargs.setdefault("settings", None)
    settings = kwargs.pop("settings")
    if settings is None:
        import wandb

        settings = wandb.Settings(init_timeout=60, silent=True)
    return WandbLogger(project=project, mode=resolved, settings=settings, **kwargs)
