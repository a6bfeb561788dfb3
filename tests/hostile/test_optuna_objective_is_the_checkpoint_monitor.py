"""Rule: a Hydra/Optuna search optimises what the run keeps: ``optimized_metric`` is the checkpoint monitor and
``hydra.sweeper.direction`` the monitor's mode, for every shipped search with every shipped experiment (and a
monitor the user overrides). Before, ``hparams_search=nli_optuna experiment=ccl_demo`` minimised val/f1 and
``hparams_search=ccl_optuna experiment=nli_*`` maximised val/f1 of checkpoints chosen by val/loss, exit 0.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from learned_metrics.sweeps import compose_config

CONF = Path(__file__).resolve().parents[2] / "conf"
EXPERIMENTS = sorted(p.stem for p in (CONF / "experiment").glob("*.yaml"))
SEARCHES = sorted(p.stem for p in (CONF / "hparams_search").glob("*.yaml"))


def objective(overrides: list[str]) -> tuple[str, str, str, str]:
    cfg = compose_config(CONF, overrides)
    monitor = cfg.callbacks.model_checkpoint
    return cfg.optimized_metric, str(cfg.hydra.sweeper.direction), monitor.monitor, monitor.mode


def expected(monitor: str, mode: str) -> tuple[str, str]:
    return monitor, {"max": "maximize", "min": "minimize"}[mode]


def own_search(experiment: str) -> str:
    return f"{experiment.split('_')[0]}_optuna"


# --- hostile: a search with an experiment of the other metric kind, or a monitor the user changed --------------


@pytest.mark.parametrize(("experiment", "search"), [(experiment, search) for experiment in EXPERIMENTS
                                                      for search in SEARCHES if search != own_search(experiment)])
def test_other_kinds_search_optimises_the_experiments_monitor(search, experiment):
    """Every experiment with each search of the other kind (its own search: the control below)."""
    metric, direction, monitor, mode = objective([f"hparams_search={search}", f"experiment={experiment}"])
    assert (metric, direction) == expected(monitor, mode)


@pytest.mark.parametrize("search", SEARCHES)
def test_an_overridden_monitor_is_what_the_search_optimises(search):
    metric, direction, monitor, mode = objective([f"hparams_search={search}", "experiment=ccl_demo",
                                                  "callbacks.model_checkpoint.monitor=val/loss",
                                                  "callbacks.model_checkpoint.mode=min"])
    assert (monitor, mode) == ("val/loss", "min") and (metric, direction) == ("val/loss", "minimize")


# --- control: each search with its own kind of experiment, with and without a benchmark ------------------------


@pytest.mark.parametrize(("experiment", "benchmark"), [(experiment, benchmark) for experiment in EXPERIMENTS
                                                         for benchmark in (None, "bench.csv")
                                                         if benchmark is None or experiment.startswith("nli")])
@pytest.mark.slow
def test_control_matching_search_optimises_the_monitor(experiment, benchmark):
    """Each experiment with its own search; an NLI one also with a faithfulness benchmark (the monitor it sets)."""
    extra = [f"faithfulness_benchmark={benchmark}"] if benchmark else []
    metric, direction, monitor, mode = objective([f"hparams_search={own_search(experiment)}",
                                                  f"experiment={experiment}", *extra])
    assert (metric, direction) == expected(monitor, mode)
    if extra:
        assert (monitor, direction) == ("val/faithfulness_auc", "maximize")
