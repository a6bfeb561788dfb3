"""wandb sweep files, the commands the agent runs (offline), and the Optuna multirun."""

from __future__ import annotations

import itertools
import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from learned_metrics.errors import UserError
from learned_metrics.loggers import finish_wandb, finish_wandb_on_error, log_sweep_objective
from learned_metrics.sweeps import (
    agent_command,
    compose_config,
    format_overrides,
    load_sweep,
    representative_combinations,
)

REPO = Path(__file__).resolve().parents[1]
CONF = REPO / "conf"
SWEEPS = sorted((CONF / "sweep").glob("*.yml"))
SEARCHES = sorted((CONF / "hparams_search").glob("*.yaml"))
QUICK = [
    "trainer=cpu",
    "trainer.enable_progress_bar=false",
    "trainer.num_sanity_val_steps=0",
    "callbacks.model_summary=null",
    "data.max_train_rows=32",
    "data.max_eval_rows=16",
]


def _offline_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WANDB_")}
    return {**env, "WANDB_MODE": "offline", "HF_HUB_OFFLINE": "1", "WANDB_SILENT": "true", **extra}


# --- reading what wandb wrote offline (a .wandb file: LevelDB-style log of protobuf records) -------


def _wandb_records(path: Path):
    from wandb.proto import wandb_internal_pb2 as pb

    data = path.read_bytes()
    assert data[:4] == b":W&B", "not a wandb transaction log"
    pos, block, pending = 7, 32768, b""
    while pos + 7 <= len(data):
        left = block - pos % block
        _, length, kind = struct.unpack("<IHB", data[pos : pos + 7]) if left >= 7 else (0, 0, 0)
        if left < 7 or (length == 0 and kind == 0):  # block trailer / padding
            pos += left
            continue
        chunk, pos = data[pos + 7 : pos + 7 + length], pos + 7 + length
        pending = chunk if kind in (1, 2) else pending + chunk
        if kind in (1, 4):  # FULL or LAST
            record = pb.Record()
            record.ParseFromString(pending)
            yield record


def read_offline_run(run_dir: Path) -> dict[str, dict]:
    """Summary, config and exit code of the one offline wandb run under ``run_dir``."""
    (log,) = run_dir.glob("wandb/offline-run-*/run-*.wandb")
    out: dict[str, dict] = {"summary": {}, "config": {}, "exit": {}}
    for record in _wandb_records(log):
        kind = record.WhichOneof("record_type")
        if kind in ("summary", "config"):
            for item in getattr(record, kind).update:
                out[kind][item.key or "/".join(item.nested_key)] = json.loads(item.value_json)
        elif kind == "exit":
            out["exit"]["exit_code"] = record.exit.exit_code
    return out


# --- sweep files ---------------------------------------------------------------------------------


def test_sweep_folder_has_the_issue_sweeps():
    assert {"ccl_lr", "nli_lr", "nli_seeds"} <= {p.stem for p in SWEEPS}


@pytest.mark.parametrize("path", SWEEPS, ids=lambda p: p.stem)
def test_sweep_file_is_valid(path):
    sweep = load_sweep(path)  # composes the config for every value and range end
    assert sweep.metric in ("val/f1", "val/loss") and "logger=wandb" in sweep.fixed_overrides()
    first = representative_combinations(sweep)[0]
    argv = agent_command(sweep, first)
    assert argv[:3] == ["/usr/bin/env", "python", "train.py"]
    assert all(f"{k}={v}" in argv for k, v in first.items()) and not any(a.startswith("--") for a in argv)


def grid_combinations(sweep):
    """All combinations of a grid sweep, in the order of the file (what the wandb grid search runs)."""
    keys = list(sweep.parameters)
    values = [sweep.parameters[k].get("values", [sweep.parameters[k].get("value")]) for k in keys]
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*values)]


def test_nli_seeds_is_15_seeds_by_the_ablation_settings():
    sweep = load_sweep(CONF / "sweep" / "nli_seeds.yml", check_config=False)
    combos = list(grid_combinations(sweep))
    assert sweep.grid_size() == len(combos) == 60
    assert {c["seed"] for c in combos} == set(range(15))
    assert {c["experiment"] for c in combos} == {"nli_anli_aug", "nli_anli_only", "nli_statements", "nli_append"}


@pytest.mark.slow
def test_overrides_are_written_as_the_agent_writes_them():
    from wandb.sdk.launch.sweeps.utils import create_sweep_command_args

    params = {"experiment": "nli_append", "seed": 3, "model.lr": 3.2e-06, "model.warmup_ratio": 0.06}
    agent = create_sweep_command_args({"args": {k: {"value": v} for k, v in params.items()}})
    assert format_overrides(params) == agent["args_no_hyphens"]


BROKEN = {
    "unknown key": ({"parameters": {"model.lrr": {"values": [1.0e-5]}}}, "model.lrr"),
    "unknown experiment": ({"parameters": {"experiment": {"values": ["nli_nope"]}}}, "nli_nope"),
    "metric not the monitor": ({"metric": {"name": "val/f1", "goal": "maximize"}}, "checkpoint monitor val/loss"),
    "goal against the mode": ({"metric": {"name": "val/loss", "goal": "maximize"}}, "(min)"),
    "YAML text number": ({"parameters": {"model.lr": {"distribution": "uniform", "min": "1e-6", "max": 1}}}, "1.0e-6"),
    "argparse flags": ({"command": ["${env}", "${interpreter}", "${program}", "${args}"]}, "${args_no_hyphens}"),
    "bad method": ({"method": "hyperband"}, "method"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
@pytest.mark.slow
def test_broken_sweep_file_is_one_line_error(case, tmp_path):
    change, expected = BROKEN[case]
    config = yaml.safe_load((CONF / "sweep" / "nli_seeds.yml").read_text())
    config.update(change)
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(config))
    with pytest.raises(UserError) as err:
        load_sweep(path, conf_dir=CONF)
    assert expected in str(err.value) and "\n" not in str(err.value)


# --- Optuna search configs -----------------------------------------------------------------------


@pytest.mark.parametrize("path", SEARCHES, ids=lambda p: p.stem)
def test_hparams_search_optimises_the_monitored_metric(path):
    experiment = {"ccl": "ccl_cnndm", "nli": "nli_anli_aug"}[path.stem.split("_")[0]]
    cfg = compose_config(CONF, [f"hparams_search={path.stem}", f"experiment={experiment}"])
    monitor = cfg.callbacks.model_checkpoint
    assert cfg.optimized_metric == monitor.monitor
    assert cfg.hydra.sweeper.direction == {"max": "maximize", "min": "minimize"}[monitor.mode]
    assert cfg.hydra.sweeper.sampler.seed is not None and "model.lr" in cfg.hydra.sweeper.params


# --- inside a run: the objective and a clean finish ----------------------------------------------


@pytest.mark.slow
def test_objective_is_the_best_value_and_a_crash_finishes_failed(tmp_path, train_config):
    from learned_metrics.loggers import wandb_logger

    cfg = train_config("experiment=ccl_demo")
    logger = wandb_logger(save_dir=str(tmp_path), mode="offline", name="objective")
    logger.log_metrics({"val/f1": 0.9}, step=1)
    logger.log_metrics({"val/f1": 0.4}, step=2)  # the last value is not the best checkpoint's
    assert log_sweep_objective([logger], {"val/f1": 0.9, "val/loss": 0.3}, cfg) == {"val/f1": 0.9}
    try:
        raise RuntimeError("CUDA out of memory")
    except RuntimeError as exc:
        finish_wandb_on_error(exc)
    finish_wandb()  # nothing left to finish: a no-op
    import wandb

    wandb.teardown()  # the wandb service writes the log asynchronously; teardown waits, as process exit does

    logged = read_offline_run(tmp_path)
    assert logged["summary"]["val/f1"] == 0.9 and logged["exit"]["exit_code"] == 1


# --- the agent's commands, run offline -----------------------------------------------------------


@pytest.mark.slow
def test_agent_commands_run_offline(tmp_path, tiny_deberta_nli, nli_data_dir):
    """Two nli_seeds runs started at once, as two agents on one machine would.

    Slow on purpose (20-35 s on 2 cores): two concurrent ``train.py`` processes, each a real (tiny) training run
    with wandb offline; concurrency between processes is what is under test."""
    sweep = load_sweep(CONF / "sweep" / "nli_seeds.yml", check_config=False)
    combos = {"run-a": {"experiment": "nli_anli_aug", "seed": 0}, "run-b": {"experiment": "nli_anli_only", "seed": 1}}
    local = [
        f"model.name_or_path={tiny_deberta_nli}",
        "model.head_labels=null",
        f"data.path={nli_data_dir}",
        f"paths.checkpoints_dir={tmp_path}",
        "trainer.max_steps=2",
        "val_every_n_steps=1",
        "trainer.accumulate_grad_batches=1",
        *QUICK,
    ]
    procs = {
        run_id: subprocess.Popen(
            [*agent_command(sweep, params, interpreter=sys.executable), *local],
            cwd=REPO,
            env=_offline_env(WANDB_RUN_ID=run_id),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for run_id, params in combos.items()
    }
    outputs = {run_id: proc.communicate(timeout=300)[0] for run_id, proc in procs.items()}
    for run_id, params in combos.items():
        assert procs[run_id].returncode == 0, outputs[run_id][-3000:]
        run_dir = tmp_path / params["experiment"] / "sweep_none" / run_id  # hydra.run.dir of the sweep command
        card = json.loads((run_dir / "export" / "learned_metric.json").read_text())
        assert card["experiment"] == params["experiment"] and (run_dir / "export" / "model.safetensors").exists()
        logged = read_offline_run(run_dir)
        assert logged["summary"]["val/loss"] == pytest.approx(card["validation"]["val/loss"])
        assert logged["config"]["seed"] == params["seed"] and logged["config"]["task_name"] == params["experiment"]
        assert logged["config"]["model"]["lr"] == 5e-6  # the resolved Hydra config, not only the swept keys


@pytest.mark.slow
def test_optuna_multirun_two_trials(tmp_path, tiny_roberta, ccl_data_dir):
    """Slow on purpose (15-22 s on 2 cores): ``train.py -m`` with the Optuna sweeper is a real process that
    trains two trials; Hydra's multirun launcher is what is under test."""
    argv = [
        sys.executable,
        "train.py",
        "-m",
        "hparams_search=ccl_optuna",
        "experiment=ccl_demo",
        "hydra.sweeper.n_trials=2",
        f"model.name_or_path={tiny_roberta}",
        f"data.path={ccl_data_dir}",
        f"paths.checkpoints_dir={tmp_path}",
        "trainer.max_epochs=1",
        "logger=wandb",
        *QUICK,
    ]
    out = subprocess.run(argv, cwd=REPO, env=_offline_env(), capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, (out.stdout + out.stderr)[-3000:]
    (sweep_dir,) = (tmp_path / "ccl_demo").glob("multirun_*")
    trials = sorted(p for p in sweep_dir.iterdir() if p.is_dir() and p.name.isdigit())
    assert [p.name for p in trials] == ["0", "1"]
    f1 = [json.loads((t / "export" / "learned_metric.json").read_text())["validation"]["val/f1"] for t in trials]
    lrs = [yaml.safe_load((t / ".hydra" / "config.yaml").read_text())["model"]["lr"] for t in trials]
    assert lrs[0] != lrs[1] and all(1e-6 <= lr <= 1e-4 for lr in lrs)
    results = yaml.safe_load((sweep_dir / "optimization_results.yaml").read_text())
    assert results["best_value"] == pytest.approx(max(f1))
    assert set(results["best_params"]) == {"model.lr", "model.warmup_ratio", "model.weight_decay"}
    for trial in trials:  # each trial finished its own wandb run instead of logging into trial 0's
        assert len(list(trial.glob("wandb/offline-run-*/run-*.wandb"))) == 1, trial


def test_sweep_files_are_not_a_hydra_config_group():
    """`train.py --help` must not offer `sweep=...`: wandb sweep files are not Hydra configs."""
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        loader = GlobalHydra.instance().config_loader()
        assert loader.get_group_options("sweep") == [] and "experiment" in loader.list_groups("")
    GlobalHydra.instance().clear()
    assert SWEEPS  # the files are still there for `wandb sweep`
