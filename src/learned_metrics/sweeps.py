"""wandb sweeps over ``train.py``: checks of a sweep file and the agent's command. A sweep file (``conf/sweep/*.yml``,
not ``.yaml``: no Hydra config group) names Hydra overrides, passed straight to ``train.py`` by ``${args_no_hyphens}``:
no argparse layer to keep in step with the configs. The run side lives with :mod:`learned_metrics.loggers`."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from learned_metrics.errors import UserError, first_line

METHODS = ("grid", "random", "bayes")
GOALS = {"maximize": "max", "minimize": "min"}
ARGS_MACRO = "${args_no_hyphens}"
REQUIRED_MACROS = ("${program}", ARGS_MACRO)
# wandb validates sweep files on its server; its client ships no schema, and the `sweeps` package that
# holds schema.json pins numpy<2. These are the distribution names of that schema (sweeps 0.3.0).
DISTRIBUTIONS = {"constant", "categorical", "int_uniform", "uniform", "q_uniform", "log_uniform", "log_uniform_values",
                 "q_log_uniform", "q_log_uniform_values", "inv_log_uniform", "inv_log_uniform_values", "normal",
                 "q_normal", "log_normal", "q_log_normal"}


@dataclass(frozen=True)
class Sweep:
    """A checked sweep file: what the wandb server and agent will read from it."""

    path: Path
    method: str
    metric: str
    goal: str
    program: str
    parameters: dict[str, dict[str, Any]]
    command: list[str]
    config: dict[str, Any] = field(repr=False)

    def fixed_overrides(self) -> list[str]:
        """Overrides the command adds to every run (``logger=wandb``, ``hydra.run.dir=...``)."""
        return [part for part in self.command if not _is_macro(part)]

    def grid_size(self) -> int | None:
        """Number of runs of a grid sweep (``None`` when a parameter is a distribution)."""
        sizes = [len(_discrete_values(spec)) for spec in self.parameters.values() if _discrete_values(spec)]
        return math.prod(sizes) if len(sizes) == len(self.parameters) else None


def _is_macro(part: str) -> bool:
    return part.startswith("${") and part.endswith("}")


def _discrete_values(spec: dict[str, Any]) -> list[Any]:
    return [spec["value"]] if "value" in spec else list(spec.get("values") or [])


def load_sweep(path: str | Path, *, check_config: bool = True, conf_dir: str | Path | None = None) -> Sweep:
    """Read a sweep file and check it now, as one line, where a run would fail late: at the server, or in run 37;
    with ``check_config`` the config is composed too (a misspelt key, a metric that is not the checkpoint monitor)."""
    path = Path(path)
    config = _read_yaml(path)
    metric, method, program = config.get("metric"), config.get("method"), config.get("program")
    if not isinstance(metric, dict) or not isinstance(metric.get("name"), str) or not metric["name"]:
        raise UserError("metric needs a name (e.g. val/f1) and a goal", path=path, field="metric")
    if metric.get("goal") not in GOALS:
        raise UserError(f"metric.goal must be maximize or minimize, got {metric.get('goal')!r}", path=path)
    if method not in METHODS:
        raise UserError(f"method must be one of {', '.join(METHODS)}, got {method!r}", path=path, field="method")
    if program != "train.py":
        raise UserError(f"program must be train.py (run from the repository root), got {program!r}", path=path)
    parameters = config.get("parameters")
    if not isinstance(parameters, dict) or not parameters:
        raise UserError("parameters: at least one Hydra override key is needed", path=path, field="parameters")
    for key, spec in parameters.items():
        _check_parameter(str(key), spec, path)
    sweep = Sweep(path=path, method=method, metric=metric["name"], goal=metric["goal"], program=program,
                  parameters={str(k): dict(v) for k, v in parameters.items()}, command=_check_command(config, path),
                  config=config)
    if sweep.method == "grid" and sweep.grid_size() is None:
        raise UserError("method 'grid' needs `values` (or `value`) for every parameter", path=path)
    if check_config:
        check_overrides(sweep, conf_dir=conf_dir)
    return sweep


def _read_yaml(path: Path) -> dict[str, Any]:
    import yaml

    if not path.is_file():
        raise UserError("sweep file not found", path=path)
    try:
        config = yaml.safe_load(path.read_text(encoding="utf-8"))  # as `wandb sweep` reads it
    except UnicodeDecodeError as exc:
        raise UserError(f"not UTF-8 text (byte {exc.start}); save the sweep file as UTF-8", path=path) from None
    except yaml.YAMLError as exc:
        raise UserError(f"not valid YAML: {first_line(exc)}", path=path) from None
    except RecursionError:
        raise UserError("YAML nested too deeply to be a sweep file", path=path) from None
    if not isinstance(config, dict):
        raise UserError("a sweep file is a YAML mapping (program, method, metric, parameters, command)", path=path)
    return config


def _check_parameter(key: str, spec: Any, path: Path) -> None:
    where = f"parameters.{key}"
    if key.startswith(("-", "~")) or "=" in key:
        raise UserError("a parameter is a Hydra key (model.lr, seed, experiment, +new.key)", path=path, field=where)
    if not isinstance(spec, dict):
        raise UserError("expected a mapping with value, values or distribution/min/max", path=path, field=where)
    if "value" in spec or "values" in spec:
        values = [spec["value"]] if "value" in spec else spec["values"]
        if not isinstance(values, list) or not values:
            raise UserError("values must be a non-empty list", path=path, field=where)
        if not all(isinstance(v, str | int | float) for v in values):
            raise UserError(f"values must be strings or numbers (the agent writes str(value)): {values}", path=path)
        return
    distribution = spec.get("distribution", "uniform" if "min" in spec else None)
    if distribution not in DISTRIBUTIONS:
        raise UserError(f"unknown or missing distribution {distribution!r}", path=path, field=where)
    if distribution.endswith("normal"):
        return
    low, high = spec.get("min"), spec.get("max")
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in (low, high)):
        raise UserError(f"min/max must be numbers, got {low!r}/{high!r} (YAML reads 1e-6 as text; write 1.0e-6)",
                        path=path, field=where)
    if low >= high:
        raise UserError(f"min {low} must be below max {high}", path=path, field=where)


def _check_command(config: dict[str, Any], path: Path) -> list[str]:
    command = config.get("command")
    if not isinstance(command, list) or not all(isinstance(part, str) for part in command):
        raise UserError("command must list ${env} ${interpreter} ${program} ${args_no_hyphens} (Hydra-style key=value)",
                        path=path, field="command")
    missing = [macro for macro in REQUIRED_MACROS if macro not in command]
    if missing:
        raise UserError(f"command lacks {', '.join(missing)}", path=path, field="command")
    if "${args}" in command:
        raise UserError("command passes --key=value (${args}); train.py takes ${args_no_hyphens}", path=path)
    return list(command)


def representative_combinations(sweep: Sweep, conf_dir: Path | None = None) -> list[dict[str, Any]]:
    """The combinations worth composing: each option of a config group (``experiment=nli_append`` changes the whole
    tree), one value of a plain key (``model.lr``: it shows the key exists); the others at their first value."""
    conf = conf_dir or _conf_dir(sweep.path, None)  # groups: experiment, trainer, ..., hydra/sweeper as hydra.sweeper
    groups = {str(p.relative_to(conf)).replace("/", ".") for p in conf.rglob("*") if p.is_dir()}
    choices = {key: _representative_values(spec) if key.lstrip("+") in groups else _representative_values(spec)[:1]
               for key, spec in sweep.parameters.items()}
    base = {key: values[0] for key, values in choices.items()}
    return [base, *({**base, key: value} for key, values in choices.items() for value in values[1:])]


def _representative_values(spec: dict[str, Any]) -> list[Any]:
    return _discrete_values(spec) or ([spec["min"], spec["max"]] if "min" in spec else [spec.get("mu", 0.0)])


def check_overrides(sweep: Sweep, *, conf_dir: str | Path | None = None) -> None:
    """Compose the config for each representative combination, one line per problem; the sweep must optimise what
    the run keeps: the checkpoint monitor, in the same direction."""
    from omegaconf import OmegaConf

    conf = _conf_dir(sweep.path, conf_dir)
    for params in representative_combinations(sweep, conf):
        overrides = format_overrides(params)
        try:
            cfg = compose_config(conf, [*overrides, *sweep.fixed_overrides()])
        except UserError as exc:
            raise UserError(f"{' '.join(overrides)}: {exc.detail}", path=sweep.path) from None
        monitor, mode = (OmegaConf.select(cfg, f"callbacks.model_checkpoint.{key}") for key in ("monitor", "mode"))
        if monitor != sweep.metric or mode != GOALS[sweep.goal]:
            raise UserError(f"metric {sweep.metric} ({sweep.goal}) differs from the checkpoint monitor {monitor} "
                            f"({mode}) with {' '.join(overrides)}", path=sweep.path, field="metric")


def _conf_dir(sweep_path: Path, conf_dir: str | Path | None) -> Path:
    """``conf/`` next to ``conf/sweep/NAME.yml`` unless given."""
    conf = Path(conf_dir) if conf_dir else sweep_path.resolve().parent.parent
    if not (conf / "train.yaml").is_file():
        raise UserError("no train.yaml in the config folder; pass conf_dir", path=conf)
    return conf


def compose_config(conf_dir: Path, overrides: Sequence[str]):
    """Compose ``train.yaml`` with ``overrides`` as ``python train.py OVERRIDES`` would (not resolved)."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    from learned_metrics.train.config import register_resolvers

    register_resolvers()
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(conf_dir.resolve()), version_base="1.3"):
            return compose("train", overrides=list(overrides), return_hydra_config=True)
    except (HydraException, OmegaConfBaseException) as exc:
        message = " ".join(str(exc).split("Config search path")[0].split())
        raise UserError(f"does not compose: {message}") from None
    finally:
        GlobalHydra.instance().clear()


def format_overrides(params: dict[str, Any]) -> list[str]:
    """``key=value`` exactly as the agent's ``${args_no_hyphens}`` writes them (``str(value)``)."""
    return [f"{key}={value}" for key, value in params.items()]


def agent_command(sweep: Sweep, params: dict[str, Any], *, interpreter: str = "python",
                  env: str = "/usr/bin/env") -> list[str]:
    """The argv ``wandb agent`` runs for ``params`` (``interpreter``: ``python`` first on PATH, as the agent's)."""
    macros = {"${env}": [env], "${interpreter}": [interpreter], "${program}": [sweep.program],
              ARGS_MACRO: format_overrides(params)}
    return [arg for part in sweep.command for arg in macros.get(part, [] if _is_macro(part) else [part])]


CHECK_DESCRIPTION = ("Check wandb sweep files offline: method, metric, parameters, command macros, that every "
                     "parameter is an override train.py composes, and that the sweep metric is the checkpoint "
                     "monitor.")
CHECK_EPILOG = "example:\n  learned-metrics sweep check conf/sweep/nli_seeds.yml conf/sweep/ccl_lr.yml"


def describe(sweep: Sweep, shown: int = 3) -> list[str]:
    """A summary line and the commands the agent would start for the first checked settings."""
    import shlex

    runs = f"{sweep.grid_size()} runs" if sweep.method == "grid" else f"run_cap {sweep.config.get('run_cap', 'unset')}"
    combos = representative_combinations(sweep)
    return [f"{sweep.path}: {sweep.method}, {sweep.metric} ({sweep.goal}), {runs}; {len(combos)} composition(s) "
            "checked; e.g.", *("  " + shlex.join(agent_command(sweep, params)) for params in combos[:shown])]


def add_check_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of the check, shared by the CLI command and this module's script."""
    parser.add_argument("files", nargs="+", metavar="FILE", help="wandb sweep files (conf/sweep/*.yml)")
    parser.set_defaults(func=run_check)


def run_check(args: argparse.Namespace) -> int:
    for path in args.files:
        print("\n".join(describe(load_sweep(path))))
    return 0


def check_script(argv: Sequence[str] | None = None) -> int:
    """``python -m learned_metrics.sweeps FILE ...`` (the same as ``learned-metrics sweep check FILE ...``)."""
    from learned_metrics.boundary import script_main

    return script_main("sweep check", add_check_arguments, argv, description=CHECK_DESCRIPTION, epilog=CHECK_EPILOG)


if __name__ == "__main__":
    from learned_metrics.boundary import exit_on_stop_signals

    exit_on_stop_signals("sweep check")
    sys.exit(check_script())
