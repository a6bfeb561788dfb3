"""train/checkpointing.py: last.ckpt knows the best checkpoint of its step, and the best checkpoint of a run resumed
into a new folder is the best of the whole training.

Lightning's ModelCheckpoint forgets the best score when the checkpoint folder changes (it keeps only the path), so a
resumed run took its first validation as the best and exported it, even when the interrupted run had saved a better
checkpoint. Here the interrupted run's best score is set to the metric's ceiling (or floor) in the checkpoint the
run resumes from: the resumed run must export that file (nothing later beats it), or its own better one. The state
is kept under ModelCheckpoint's key, so checkpoints written before BestCheckpoint (or with a plain ModelCheckpoint)
resume with their best too.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from conftest import compose_train_config, logged

from learned_metrics.train.run import train

QUIET = ["trainer.enable_progress_bar=false", "callbacks.model_summary=null"]


def _common(model: Path, data: Path, root: Path) -> list[str]:
    return ["experiment=ccl_demo", f"model.name_or_path={model}", f"data.path={data}", f"paths.checkpoints_dir={root}",
            "model.warmup_ratio=0.0", *QUIET]


@pytest.fixture(scope="module")
def interrupted(tiny_roberta, ccl_data_dir, tmp_path_factory) -> tuple[Path, Path]:
    """One epoch of ccl_demo (val/f1, max): (its last.ckpt, its best checkpoint)."""
    root = tmp_path_factory.mktemp("interrupted")
    train(compose_train_config([*_common(tiny_roberta, ccl_data_dir, root), "trainer.max_epochs=1",
                                f"paths.output_dir={root / 'a'}"]))
    (best,) = (root / "a" / "checkpoints").glob("best-*.ckpt")
    return root / "a" / "checkpoints" / "last.ckpt", best


def _with_best_score(last: Path, score: float, out: Path) -> Path:
    """``last`` with the monitored checkpoint callback's best score replaced everywhere it is kept (path kept)."""
    state = torch.load(last, weights_only=True)
    (key,) = [key for key in state["callbacks"] if key.startswith("ModelCheckpoint")]
    kept = state["callbacks"][key]
    kept["best_model_score"] = kept["kth_value"] = torch.tensor(score)
    kept["best_k_models"] = {kept["best_model_path"]: torch.tensor(score)}
    torch.save(state, out)
    return out


@pytest.mark.slow  # two training runs each (a few seconds)
@pytest.mark.parametrize(("score", "exported"), [(1.0, "interrupted"), (-1.0, "resumed")],
                         ids=["unbeaten", "control-beaten"])
def test_a_run_resumed_into_a_new_folder_exports_the_best_of_the_whole_training(interrupted, score, exported,
                                                                                 tiny_roberta, ccl_data_dir, tmp_path):
    last, best = interrupted
    resume_from = _with_best_score(last, score, tmp_path / "interrupted.ckpt")
    run = tmp_path / "b"
    train(compose_train_config([*_common(tiny_roberta, ccl_data_dir, tmp_path), "trainer.max_epochs=2",
                                f"ckpt_path={resume_from}", f"paths.output_dir={run}"]))
    card = json.loads((run / "export" / "learned_metric.json").read_text())
    own = sorted((run / "checkpoints").glob("best-*.ckpt"))
    if exported == "interrupted":  # f1 never exceeds 1.0: no later validation is better, nothing saved here
        assert card["source_checkpoint"] == str(best) and not own
        assert card["selection"]["best_value"] == 1.0
    else:  # any f1 beats -1.0: the resumed run's own best is saved and exported
        assert len(own) == 1 and card["source_checkpoint"] == str(own[0])
        assert card["selection"]["best_value"] >= 0.0
    assert best.exists()  # the interrupted run's file is never deleted by the resumed run


@pytest.mark.slow  # the interrupted run: a training run
def test_last_ckpt_holds_the_best_checkpoint_saved_at_its_step(interrupted):
    """last.ckpt is written after the best checkpoint of the same step (the epoch end here), so resuming from it knows
    that best; it was written before, and a one-epoch run's last.ckpt named no best checkpoint at all."""
    last, best = interrupted
    callbacks = torch.load(last, weights_only=True)["callbacks"]
    (kept,) = [state for key, state in callbacks.items() if key.startswith("ModelCheckpoint")]
    assert kept["best_model_path"] == str(best) and list(kept["best_k_models"]) == [str(best)]


@pytest.mark.parametrize("inside", [True, False], ids=["inside-its-folder", "control-elsewhere"])
def test_the_best_of_another_folder_is_carried_only_where_lightning_cannot_delete_it(tmp_path, inside):
    """Lightning deletes a replaced best file that lies inside its own folder: a file of the interrupted run under
    the new run's checkpoint folder (a run folder set above the old one) is not taken over, so it is never deleted."""
    from learned_metrics.train.checkpointing import BestCheckpoint

    here = tmp_path / "new" / "checkpoints"
    old = (here / "old-run" if inside else tmp_path / "old-run") / "checkpoints"
    old.mkdir(parents=True)
    (old / "best.ckpt").write_bytes(b"weights")
    callback = BestCheckpoint(dirpath=here, monitor="val/f1", mode="max")
    callback.load_state_dict({"dirpath": str(old), "best_model_path": str(old / "best.ckpt"),
                              "best_model_score": torch.tensor(0.9),
                              "best_k_models": {str(old / "best.ckpt"): torch.tensor(0.9)}})
    assert callback.best_k_models == ({} if inside else {str(old / "best.ckpt"): torch.tensor(0.9)})


@pytest.mark.slow  # a training run
def test_last_ckpt_is_written_while_fitting_only(tiny_roberta, ccl_data_dir, tmp_path, monkeypatch):
    """A run that never validated while fitting is validated after it for the export's metrics: that validation is no
    reason to write last.ckpt again (a full checkpoint with the optimizer: seconds and gigabytes for a large model)."""
    from learned_metrics.train.checkpointing import LastCheckpoint

    writes, real = [], LastCheckpoint._save

    def counted(self, trainer, again=False):
        before = self.path.stat().st_mtime_ns if self.path.exists() else None
        real(self, trainer, again)
        if self.path.exists() and self.path.stat().st_mtime_ns != before:
            writes.append(str(trainer.state.fn))

    monkeypatch.setattr(LastCheckpoint, "_save", counted)
    train(compose_train_config([*_common(tiny_roberta, ccl_data_dir, tmp_path), "trainer.max_epochs=1",
                                "trainer.check_val_every_n_epoch=5", f"paths.output_dir={tmp_path / 'a'}"]))
    assert writes == ["TrainerFn.FITTING"]  # the epoch end's; the validation after fit wrote it again before


@pytest.mark.parametrize("kept", [True, False], ids=["carried", "files-gone"])
def test_a_resume_into_a_new_folder_says_what_it_carried_not_lightnings_untrue_warning(tmp_path, kept):
    """Lightning warns that the best scores "won't be reloaded" whenever the folder changes; BestCheckpoint does
    reload them, so that warning is replaced by one line saying which best is the one to beat (or that none of the
    interrupted run's best files is still there)."""
    import warnings

    from learned_metrics.train.checkpointing import BestCheckpoint

    old = tmp_path / "old-run" / "checkpoints"
    old.mkdir(parents=True)
    if kept:
        (old / "best.ckpt").write_bytes(b"weights")
    callback = BestCheckpoint(dirpath=tmp_path / "new" / "checkpoints", monitor="val/f1", mode="max")
    with warnings.catch_warnings(record=True) as caught, logged("INFO") as records:
        warnings.simplefilter("always")
        callback.load_state_dict({"dirpath": str(old), "best_model_path": str(old / "best.ckpt"),
                                  "best_model_score": torch.tensor(0.9),
                                  "best_k_models": {str(old / "best.ckpt"): torch.tensor(0.9)}})
    assert not [w for w in caught if "dirpath has changed" in str(w.message)]
    said = " ".join(record.getMessage() for record in records)
    assert ("val/f1 = 0.9" in said and str(old / "best.ckpt") in said) if kept else "no best checkpoint" in said


@pytest.mark.parametrize("original", ["moved", "copied"])
def test_a_run_folder_moved_or_copied_with_its_checkpoints_resumes_in_place(tmp_path, original):
    """The state records the old folder's absolute paths: resumed in a moved copy, its own best file was passed over
    ("no best checkpoint of the interrupted run is still there") and a worse later one exported; in a copy beside the
    original, the original's file was taken. Every recorded best is here under its name: the run resumes in place.
    Control: a file of that name missing here keeps the resume-elsewhere rule (the test above)."""
    import shutil

    from learned_metrics.train.checkpointing import BestCheckpoint

    old = tmp_path / "r2" / "checkpoints"
    old.mkdir(parents=True)
    for name in ("best-step2.ckpt", "best-step4.ckpt"):
        (old / name).write_bytes(b"weights")
    state = {"dirpath": str(old), "best_model_path": str(old / "best-step2.ckpt"),
             "kth_best_model_path": str(old / "best-step4.ckpt"), "best_model_score": torch.tensor(0.95),
             "kth_value": torch.tensor(1.1), "best_k_models": {str(old / "best-step2.ckpt"): torch.tensor(0.95),
                                                               str(old / "best-step4.ckpt"): torch.tensor(1.1)}}
    shutil.copytree(tmp_path / "r2", tmp_path / "r2mv")
    if original == "moved":
        shutil.rmtree(tmp_path / "r2")
    here = tmp_path / "r2mv" / "checkpoints"
    callback = BestCheckpoint(dirpath=here, monitor="val/loss", mode="min", save_top_k=2)
    callback.load_state_dict(state)
    assert callback.best_model_path == str(here / "best-step2.ckpt")
    assert callback.kth_best_model_path == str(here / "best-step4.ckpt")
    assert set(callback.best_k_models) == {str(here / "best-step2.ckpt"), str(here / "best-step4.ckpt")}
    assert float(callback.best_model_score) == pytest.approx(0.95)
    (here / "best-step4.ckpt").unlink()  # control: not every recorded best is here
    control = BestCheckpoint(dirpath=here, monitor="val/loss", mode="min", save_top_k=2)
    control.load_state_dict(state)
    assert control.best_model_path == str(old / "best-step2.ckpt")  # Lightning's rule: the recorded path
