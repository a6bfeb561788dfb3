"""``learned-metrics runs list``: every kind of run folder, the best value, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from learned_metrics.cli import main as cli_main
from learned_metrics.train.run import train


def _config(experiment: str, seed: int, monitor: str, mode: str) -> dict:
    return {
        "task_name": experiment,
        "seed": seed,
        "callbacks": {"model_checkpoint": {"monitor": monitor, "mode": mode}},
    }


def make_run(
    run_dir: Path,
    experiment: str,
    *,
    seed: int = 42,
    monitor: str = "val/f1",
    mode: str = "max",
    validation: dict | None = None,
    best_ckpt: str | None = None,
    csv_rows: list[str] | None = None,
) -> Path:
    """A run folder as training writes it: run_info.json, checkpoints/, export card, csv log."""
    run_dir.mkdir(parents=True)
    info = {
        "experiment": experiment,
        "git_commit": "0123456789abcdef",
        "packages": {},
        "config": _config(experiment, seed, monitor, mode),
        "data_report": None,
    }
    (run_dir / "run_info.json").write_text(json.dumps(info))
    if best_ckpt:
        (run_dir / "checkpoints").mkdir()
        (run_dir / "checkpoints" / best_ckpt).write_bytes(b"")
    if validation is not None:
        (run_dir / "export").mkdir()
        card = {"kind": "coherence", "experiment": experiment, "validation": validation}
        if best_ckpt:
            card["source_checkpoint"] = str(run_dir / "checkpoints" / best_ckpt)
        (run_dir / "export" / "learned_metric.json").write_text(json.dumps(card))
    if csv_rows:
        (run_dir / "csv").mkdir()
        (run_dir / "csv" / "metrics.csv").write_text("\n".join(csv_rows) + "\n")
    return run_dir


@pytest.fixture
def runs_root(tmp_path):
    root = tmp_path / "checkpoints"
    ccl = make_run(
        root / "ccl_demo" / "2026-01-02_10-00-00",
        "ccl_demo",
        validation={"val/loss": 0.2, "val/acc": 0.95, "val/f1": 0.94},
        best_ckpt="best-epoch01-step120.ckpt",
    )
    (root / "ccl_demo" / "latest").symlink_to(ccl.name)  # must not list the run twice
    make_run(
        root / "ccl_demo" / "2026-01-01_09-00-00",
        "ccl_demo",
        validation={"val/loss": 0.3, "val/acc": 0.9, "val/f1": 0.89},
        best_ckpt="best-epoch00-step60.ckpt",
    )
    make_run(  # a Hydra multirun trial
        root / "ccl_demo" / "multirun_2026-01-03_08-00-00" / "0",
        "ccl_demo",
        seed=7,
        validation={"val/f1": 0.5},
    )
    make_run(  # a wandb sweep run that crashed before exporting: best value from its CSV log
        root / "nli_anli_aug" / "sweep_abc123" / "run9xyz",
        "nli_anli_aug",
        seed=3,
        monitor="val/loss",
        mode="min",
        best_ckpt="best-epoch00-step500.ckpt",
        csv_rows=["epoch,step,train/loss,val/loss", "0,99,0.9,", "0,499,,0.61", "0,999,,0.72"],
    )
    return root


def test_runs_list_table_and_json(runs_root, tmp_path, capsys):
    out_json = tmp_path / "runs.json"
    assert cli_main(["runs", "list", str(runs_root), "--json", str(out_json)]) == 0
    table = capsys.readouterr().out
    assert "4 run(s)" in table and "0123456" in table and "val/loss ↓" in table and "0.6100 (csv)" in table

    rows = json.loads(out_json.read_text())
    assert [(r["experiment"], r["run"].split("/", 1)[1]) for r in rows] == [
        ("ccl_demo", "2026-01-01_09-00-00"),
        ("ccl_demo", "2026-01-02_10-00-00"),
        ("ccl_demo", "multirun_2026-01-03_08-00-00/0"),
        ("nli_anli_aug", "sweep_abc123/run9xyz"),
    ]
    first, second, trial, crashed = rows
    assert (second["best"], second["best_step"], second["export"], second["metric"]) == (0.94, 120, True, "val/f1")
    assert second["date"] == "2026-01-02 10:00" and trial["date"] == "2026-01-03 08:00" and trial["seed"] == 7
    assert (crashed["best"], crashed["best_source"], crashed["export"]) == (0.61, "metrics.csv", False)
    assert (crashed["best_step"], crashed["mode"], crashed["git_commit"]) == (500, "min", "0123456789abcdef")


@pytest.mark.parametrize("which", ["empty", "missing"])
def test_runs_list_without_runs_is_one_line_error(tmp_path, capsys, which):
    folder = tmp_path / which
    if which == "empty":
        (folder / "ccl_demo" / "2026-01-01_00-00-00").mkdir(parents=True)  # a folder, but no run files
    assert cli_main(["runs", "list", str(folder)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(folder) in err


@pytest.mark.slow
def test_runs_list_reads_a_real_run(train_config, tiny_roberta, ccl_data_dir, tmp_path, capsys):
    cfg = train_config(
        "experiment=ccl_demo",
        f"model.name_or_path={tiny_roberta}",
        f"data.path={ccl_data_dir}",
        f"paths.output_dir={tmp_path / 'ccl_demo' / '2026-02-03_04-05-06'}",
        "trainer.fast_dev_run=true",
        "trainer.enable_progress_bar=false",
        "callbacks.model_summary=null",
    )
    metrics = train(cfg)
    capsys.readouterr()
    out_json = tmp_path.parent / f"{tmp_path.name}-runs.json"  # beside the runs it lists, never inside (safety rule 1)
    assert cli_main(["runs", "list", str(tmp_path), "--json", str(out_json)]) == 0
    (row,) = json.loads(out_json.read_text())
    assert row["experiment"] == "ccl_demo" and row["export"] is True and row["metric"] == "val/f1"
    assert row["best"] == pytest.approx(metrics["val/f1"]) and row["seed"] == 42
    assert row["date"] == "2026-02-03 04:05" and len(row["git_commit"] or "x" * 40) == 40
