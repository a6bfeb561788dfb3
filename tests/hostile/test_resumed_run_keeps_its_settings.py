"""Rule: a resumed run is the interrupted run continued. The settings that decide what is trained (the data set and its
content, batching, the model it started from, the optimiser, the seed) are the checkpoint's; a resume that asks for
others is refused before anything is built or written, in one line naming the setting, both values and the checkpoint.
Only how long it trains and where and how it reports may differ.

Before: ``ckpt_path=last data.batch_size=4 model.lr=1e-3 seed=7`` resumed a batch-8, lr-5e-6, seed-42 run with exit 0:
the sampler skipped the interrupted run's batch count in batches of another size, the optimizer kept the old learning
rate, and the export's card recorded the new settings for weights trained mostly under the old ones. ``ckpt_path=last``
(the newest ``last.ckpt`` of the experiment) took another configuration's run the same way, and so did a data set
rebuilt with ``prep ... --overwrite`` under the same ``data.path``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch
from omegaconf import OmegaConf

from learned_metrics.errors import UserError
from learned_metrics.train.run import train

QUIET = ["trainer.enable_progress_bar=false", "callbacks.model_summary=null", "logger=none"]


@pytest.fixture
def setup(tmp_path, train_config, tiny_roberta, ccl_data_dir):
    """An interrupted ccl_demo run's last.ckpt (a checkpoint as training writes it, but for its weights: the check
    reads the card alone) and the overrides that made it; the data set is a copy the test may rebuild."""
    data = tmp_path / "data"
    shutil.copytree(ccl_data_dir, data)
    base = ["experiment=ccl_demo", f"model.name_or_path={tiny_roberta}", f"data.path={data}", *QUIET]
    old = train_config(*base, f"paths.output_dir={tmp_path / 'old'}")
    resolved = OmegaConf.to_container(old, resolve=True)
    report = json.loads((data / "report.json").read_text())
    ckpt = tmp_path / "old" / "checkpoints" / "last.ckpt"
    ckpt.parent.mkdir(parents=True)
    torch.save({"hf_config": {}, "state_dict": {}, "global_step": 3,
                "learned_metric": {"training_config": resolved, "data_report": report}}, ckpt)
    return base, ckpt, data, resolved, report


@pytest.mark.parametrize(("override", "setting"), [
    ("data.batch_size=4", "data.batch_size"),
    ("model.lr=0.001", "model.lr"),
    ("seed=7", "seed"),
    ("data.max_length=64", "data.max_length"),
    ("trainer.accumulate_grad_batches=2", "trainer.accumulate_grad_batches"),
    # the target the best checkpoint is chosen by: the carried-over best must be a value of the same target
    ("callbacks.model_checkpoint.monitor=val/acc", "callbacks.model_checkpoint.monitor"),
    ("callbacks.shuffle_validation.max_docs=50", "callbacks.shuffle_validation.max_docs"),
])
@pytest.mark.slow
def test_a_resume_with_other_training_settings_is_refused(setup, train_config, tmp_path, override, setting):
    base, ckpt, *_ = setup
    new = tmp_path / "new"
    with pytest.raises(UserError) as caught:
        train(train_config(*base, f"ckpt_path={ckpt}", f"paths.output_dir={new}", override))
    message = str(caught.value)
    assert setting in message and "last.ckpt" in message and "\n" not in message, message
    assert not new.exists() or not any(new.iterdir())  # refused before anything was written


def test_a_resume_on_another_data_set_is_refused(setup, train_config, tmp_path, ccl_data_dir):
    base, ckpt, _, _, report = setup
    other = tmp_path / "other"
    shutil.copytree(ccl_data_dir, other)
    (other / "report.json").write_text(json.dumps({**report, "seed": report.get("seed", 0) + 1}))  # other content
    with pytest.raises(UserError, match=r"data\.path"):
        train(train_config(*base, f"data.path={other}", f"ckpt_path={ckpt}", f"paths.output_dir={tmp_path / 'new'}"))
    without_report = {"learned_metric": {"training_config": setup[3]}}  # an older card: the path itself must match
    from learned_metrics.train.run_folders import check_resumed_settings

    moved = OmegaConf.to_container(train_config(*base, f"data.path={tmp_path / 'moved'}", f"ckpt_path={ckpt}"),
                                   resolve=True)
    with pytest.raises(UserError, match=r"data\.path"):
        check_resumed_settings(without_report, moved, ckpt)


def test_a_resume_on_a_data_set_rebuilt_since_is_refused(setup, train_config, tmp_path):
    base, ckpt, data, _, report = setup
    rebuilt = {**report, "seed": report.get("seed", 0) + 1}  # prep ... --overwrite with another seed, same folder
    (data / "report.json").write_text(json.dumps(rebuilt))
    with pytest.raises(UserError, match=r"report\.json.*seed") as caught:
        train(train_config(*base, f"ckpt_path={ckpt}", f"paths.output_dir={tmp_path / 'new'}"))
    assert str(data) in str(caught.value)


def test_control_a_resume_that_only_trains_longer_or_reports_elsewhere_passes(setup, train_config, tmp_path):
    """The check itself on the settings a resume may change: how long (max_epochs, max_steps), where it writes,
    how often it validates and saves, how it reports. The end-to-end control is every slow resume test
    (tests/train/test_run.py, test_crash_resume.py, test_checkpointing.py), which resume with max_epochs raised."""
    from learned_metrics.train.run_folders import check_resumed_settings

    base, ckpt, data, resolved, report = setup
    now = train_config(*base, f"ckpt_path={ckpt}", f"paths.output_dir={tmp_path / 'new'}", "trainer.max_epochs=5",
                       "trainer.max_steps=99", "trainer.log_every_n_steps=1", "trainer.val_check_interval=0.5",
                       "callbacks.last_checkpoint.every_n_train_steps=7", "data.eval_batch_size=3",
                       "data.num_workers=1")
    checkpoint = {"learned_metric": {"training_config": resolved, "data_report": report}}
    check_resumed_settings(checkpoint, OmegaConf.to_container(now, resolve=True), ckpt)
    # the same data folder named another way is the same data set
    relative = train_config(*base, f"data.path={Path(data).parent / '.' / 'data'}", f"ckpt_path={ckpt}",
                            f"paths.output_dir={tmp_path / 'new'}")
    check_resumed_settings(checkpoint, OmegaConf.to_container(relative, resolve=True), ckpt)
    # the same data set moved (another node's scratch folder): its report is the one the run trained on
    moved = tmp_path / "moved"
    shutil.copytree(data, moved)
    elsewhere = train_config(*base, f"data.path={moved}", f"ckpt_path={ckpt}", f"paths.output_dir={tmp_path / 'new'}")
    check_resumed_settings(checkpoint, OmegaConf.to_container(elsewhere, resolve=True), ckpt)
    # a checkpoint whose card records no training config (written by hand, an older version) is not judged
    check_resumed_settings({"learned_metric": {}}, OmegaConf.to_container(now, resolve=True), ckpt)


def test_a_resume_chosen_by_another_faithfulness_benchmark_is_refused(tmp_path):
    """The interrupted run's best val/faithfulness_auc was measured on its benchmark: a resume on another one kept
    that best (measured elsewhere) as the one to beat, exit 0. Control: the same benchmark named another way."""
    from learned_metrics.train.run_folders import check_resumed_settings

    first, second = tmp_path / "bench1", tmp_path / "bench4"
    first.mkdir(), second.mkdir()
    then = {"faithfulness_benchmark": str(first), "callbacks": {"faithfulness_validation": {"seed": 0}}}
    checkpoint, ckpt = {"learned_metric": {"training_config": then}}, tmp_path / "last.ckpt"
    with pytest.raises(UserError, match="faithfulness_benchmark") as caught:
        check_resumed_settings(checkpoint, {**then, "faithfulness_benchmark": str(second)}, ckpt)
    assert "\n" not in str(caught.value)
    with pytest.raises(UserError, match=r"faithfulness_validation\.seed"):
        check_resumed_settings(checkpoint, {**then, "callbacks": {"faithfulness_validation": {"seed": 1}}}, ckpt)
    check_resumed_settings(checkpoint, {**then, "faithfulness_benchmark": str(tmp_path / "." / "bench1")}, ckpt)
