"""Validation on the score a faithfulness metric is judged by (train/target_metric.py): the logged BAcc/AUC are
``meta-eval benchmark``'s (and sklearn's) on the model's ``score`` scores, the checkpoint kept is the one with the
best target value, the card says what chose it, and a bad benchmark stops before training."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.metrics import balanced_accuracy_score, roc_auc_score

from learned_metrics.boundary import run_command
from learned_metrics.errors import UserError
from learned_metrics.export import load_checkpoint
from learned_metrics.meta_eval.benchmark import benchmark
from learned_metrics.scoring import load_scorer
from learned_metrics.train.run import train
from learned_metrics.train.target_metric import (
    FaithfulnessValidation,
    check_monitored,
    faithfulness_validation,
    logged_name,
)

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "examples" / "benchmarks"
LLM_AGGREFACT = BENCH / "llm_aggrefact"
QUIET = ["trainer.enable_progress_bar=false", "callbacks.model_summary=null"]


def _dev_rows() -> pd.DataFrame:
    """LLM-AggreFact's dev split read independently of the callback (pandas)."""
    return pd.read_parquet(LLM_AGGREFACT / "dev-00000-of-00001.parquet")


def _reference(scores: np.ndarray, frame: pd.DataFrame) -> dict[str, float]:
    """meta-eval benchmark (the Python function) on these scores, checked against sklearn dataset by dataset."""
    labels = frame["label"].to_numpy()
    report = benchmark({"m": scores}, labels, list(frame["dataset"]), ["dev"] * len(frame),
                       threshold_protocol="same-split", split="dev", resamples=0)
    result = report.results["m"]
    out = {"val/faithfulness_auc": result.mean["auc"].value, "val/faithfulness_bacc": result.mean["bacc"].value}
    aucs, baccs = [], []
    for entry in result.datasets:
        member = (frame["dataset"] == entry.dataset).to_numpy()
        auc = roc_auc_score(labels[member], scores[member])
        bacc = balanced_accuracy_score(labels[member], scores[member] > entry.threshold)
        assert entry.stats["auc"].value == pytest.approx(auc, abs=1e-12)
        assert entry.stats["bacc"].value == pytest.approx(bacc, abs=1e-12)
        aucs.append(auc)
        baccs.append(bacc)
        out[f"val/faithfulness_auc/{logged_name(entry.dataset)}"] = auc
        out[f"val/faithfulness_bacc/{logged_name(entry.dataset)}"] = bacc
    assert out["val/faithfulness_auc"] == pytest.approx(np.mean(aucs), abs=1e-12)
    assert out["val/faithfulness_bacc"] == pytest.approx(np.mean(baccs), abs=1e-12)
    return out


def test_measure_equals_meta_eval_benchmark_and_sklearn(nli_export):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    callback = FaithfulnessValidation(LLM_AGGREFACT, max_rows_per_dataset=None)
    model = AutoModelForSequenceClassification.from_pretrained(nli_export).train()
    dtype, device = next(model.parameters()).dtype, next(model.parameters()).device
    card = json.loads((nli_export / "learned_metric.json").read_text())
    values = callback.measure(model, AutoTokenizer.from_pretrained(nli_export), card)
    # left as it was: training mode, dtype, device, no gradient
    assert model.training and next(model.parameters()).dtype == dtype and next(model.parameters()).device == device
    assert all(p.grad is None for p in model.parameters())

    frame = _dev_rows()
    scores = load_scorer(nli_export).score(list(frame["doc"]), list(frame["claim"])).scores  # `score`'s path
    expected = _reference(scores, frame)
    assert set(values) == set(expected) and len(values) == 2 + 2 * frame["dataset"].nunique()
    for name, value in expected.items():
        assert values[name] == pytest.approx(value, abs=1e-9), name


@pytest.mark.parametrize("path, split, column", [
    ("llm_aggrefact", "dev", None), ("aggre_fact_final.csv", "val", "cut"), ("summac", "val", None),
    ("true", None, None)])
def test_every_benchmark_layout_gives_its_validation_split(path, split, column):
    callback = FaithfulnessValidation(BENCH / path, max_rows_per_dataset=None)
    files = sorted((BENCH / path).iterdir()) if (BENCH / path).is_dir() else [BENCH / path]
    frames = [pd.read_parquet(f) if f.suffix == ".parquet" else pd.read_json(f, lines=True) if f.suffix == ".jsonl"
              else pd.read_csv(f) for f in files]
    if split is not None and column is None:  # the split is a word of the file name
        words = [set(name.stem.replace("-", "_").split("_")) for name in files]
        frames = [f for f, names in zip(frames, words, strict=True) if split in names]
    frame = pd.concat(frames)
    if column is not None:
        frame = frame[frame[column] == split]
    assert callback.rows.split == split and len(callback.rows.labels) == len(frame)
    assert callback.rows.labels.sum() == frame["label"].astype(int).sum()


def test_rows_per_dataset_bounded_by_a_seeded_subsample():
    small = FaithfulnessValidation(LLM_AGGREFACT, max_rows_per_dataset=5, seed=1)
    again = FaithfulnessValidation(LLM_AGGREFACT, max_rows_per_dataset=5, seed=1)
    other = FaithfulnessValidation(LLM_AGGREFACT, max_rows_per_dataset=5, seed=2)
    counts = pd.Series(small.rows.datasets).value_counts()
    assert set(counts) == {5} and len(counts) == 4
    assert small.rows.generations == again.rows.generations != other.rows.generations


@pytest.mark.parametrize("overrides, monitor, mode", [
    ([], "val/loss", "min"),  # control: without a benchmark, nothing changes
    ([f"faithfulness_benchmark={LLM_AGGREFACT}"], "val/faithfulness_auc", "max")])
def test_benchmark_option_sets_the_checkpoint_monitor(train_config, overrides, monitor, mode):
    cfg = train_config("experiment=nli_demo", *overrides)
    checkpoint = cfg.callbacks.model_checkpoint
    assert (checkpoint.monitor, checkpoint.mode) == (monitor, mode)
    assert cfg.callbacks.faithfulness_validation.benchmark == (str(LLM_AGGREFACT) if overrides else None)
    swept = train_config("experiment=nli_anli_aug", "hparams_search=nli_optuna", *overrides)
    assert swept.optimized_metric == monitor


def test_optuna_direction_follows_the_monitor():
    from conftest import CONF_DIR
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from learned_metrics.train.config import register_resolvers

    register_resolvers()
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        for extra, direction in (([], "minimize"), ([f"faithfulness_benchmark={LLM_AGGREFACT}"], "maximize")):
            cfg = compose("train", overrides=["experiment=nli_anli_aug", "hparams_search=nli_optuna", *extra],
                          return_hydra_config=True)
            assert cfg.hydra.sweeper.direction == direction
    GlobalHydra.instance().clear()


# --- refusals before training ---------------------------------------------------------------------


def _no_fit(monkeypatch):
    import lightning

    def fit(*args, **kwargs):
        raise AssertionError("training started")

    monkeypatch.setattr(lightning.Trainer, "fit", fit)


@pytest.mark.parametrize("make_bad, words", [
    (lambda tmp: tmp / "missing_folder", "no such file or folder"),
    (lambda tmp: _write(tmp / "rows.csv", "premise,hypothesis,gold\na,b,1\n"), "not a known benchmark layout"),
    (lambda tmp: _write(tmp / "notes.txt", "hello\n"), "unsupported file type"),
])
def test_bad_benchmark_is_one_line_naming_it_before_training(train_config, tiny_deberta_nli, nli_data_dir, tmp_path,
                                                              monkeypatch, capsys, make_bad, words):
    _no_fit(monkeypatch)
    bad = make_bad(tmp_path)
    cfg = train_config("experiment=nli_demo", f"model.name_or_path={tiny_deberta_nli}", "model.head_labels=null",
                       f"data.path={nli_data_dir}", f"faithfulness_benchmark={bad}", *QUIET)
    assert run_command("train.py", lambda: train(cfg)) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(bad) in err and words in err, err
    assert not (tmp_path / "run" / "checkpoints").exists()


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_the_valid_benchmark_is_built_control(train_config, tiny_deberta_nli, nli_data_dir, monkeypatch):
    _no_fit(monkeypatch)
    cfg = train_config("experiment=nli_demo", f"model.name_or_path={tiny_deberta_nli}", "model.head_labels=null",
                       f"data.path={nli_data_dir}", f"faithfulness_benchmark={LLM_AGGREFACT}", *QUIET)
    with pytest.raises(AssertionError, match="training started"):  # got as far as fitting
        train(cfg)


@pytest.mark.parametrize("options, words", [
    ({"split": "test2"}, "no rows of split 'test2'"),
    ({"threshold_protocol": "tune-on-val"}, "judge the test split"),
    ({"threshold_protocol": "best"}, "expected one of: same-split, fixed"),
    ({"metric_kind": "coherence"}, "this run trains a coherence model"),
    ({"max_rows_per_dataset": 1}, "max_rows_per_dataset"),
    ({"split": "test"}, "choosing the checkpoint on a test split"),  # found before: accepted, the card silent
])
def test_bad_options_refused_with_control(options, words):
    assert faithfulness_validation(None) is None and faithfulness_validation(LLM_AGGREFACT) is not None
    with pytest.raises(UserError, match=words):
        faithfulness_validation(LLM_AGGREFACT, **options)


def test_a_validation_row_without_a_label_is_refused_naming_it(tmp_path):
    """Found before: dropped without a word (meta-eval benchmark refuses the same rows). Control: labelled rows."""
    frame = _dev_rows().astype({"label": "float64"})
    frame.to_parquet(tmp_path / "dev.parquet")
    assert FaithfulnessValidation(tmp_path).rows.labels.size == len(frame)  # control
    frame.loc[3, "label"] = np.nan
    frame.to_parquet(tmp_path / "dev.parquet")
    with pytest.raises(UserError, match="label is missing") as caught:
        FaithfulnessValidation(tmp_path)
    assert "dev.parquet" in str(caught.value) and "row 4" in str(caught.value) and "label" in str(caught.value)


def test_a_split_with_one_class_everywhere_is_refused(tmp_path):
    frame = _dev_rows()
    frame[frame["label"] == 1].to_parquet(tmp_path / "dev.parquet")
    with pytest.raises(UserError, match="no dataset has both labels") as caught:
        FaithfulnessValidation(tmp_path)
    assert str(tmp_path) in str(caught.value)


# --- training runs ---------------------------------------------------------------------------------

OBVIOUS = {"e": "The red kite flies over the hill.", "n": "Birds migrate south every winter.",
           "c": "Nothing is flying, the hill is empty."}


def _obvious_nli_set(tmp_path: Path) -> Path:
    """Official ANLI layout with lexically obvious pairs (the loss falls as it trains), real augmentation code."""
    from learned_metrics.data.anli import build_anli_augmented

    root = tmp_path / "anli"
    for rnd in ("R1", "R2", "R3"):
        (root / rnd).mkdir(parents=True)
        for split in ("train", "dev", "test"):
            rows = [{"uid": f"{rnd}-{split}-{label}-{i}", "context": "The red kite flies over the hill.",
                     "hypothesis": OBVIOUS[label], "label": label} for i in range(4) for label in "enc"]
            (root / rnd / f"{split}.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    build_anli_augmented(f"jsonl:{root}", tmp_path / "set", seed=0)
    return tmp_path / "set"


def _metrics_rows(run_dir: Path) -> list[dict[str, str]]:
    with (run_dir / "csv" / "metrics.csv").open() as handle:
        return list(csv.DictReader(handle))


def test_logged_values_are_meta_eval_benchmark_on_the_exported_model(train_config, tiny_deberta_nli, nli_data_dir):
    cfg = train_config("experiment=nli_demo", f"model.name_or_path={tiny_deberta_nli}", "model.head_labels=null",
                       f"data.path={nli_data_dir}", f"faithfulness_benchmark={LLM_AGGREFACT}", "trainer.max_steps=4",
                       "val_every_n_steps=2", "trainer.num_sanity_val_steps=0", *QUIET)
    metrics = train(cfg)
    run_dir = Path(cfg.paths.output_dir)
    logged = [r for r in _metrics_rows(run_dir) if r.get("val/faithfulness_auc")]
    assert len(logged) == 3  # two validations while training, then the kept checkpoint's re-validation
    assert float(logged[-1]["val/faithfulness_seconds"]) > 0 and float(logged[0]["val/faithfulness_time_share"]) > 0
    frame = _dev_rows()
    export = run_dir / "export"
    expected = _reference(load_scorer(export).score(list(frame["doc"]), list(frame["claim"])).scores, frame)
    for name, value in expected.items():
        assert float(logged[-1][name]) == pytest.approx(value, abs=1e-6), name
        assert metrics[name] == pytest.approx(value, abs=1e-6), name


def test_checkpoint_kept_has_the_best_target_not_the_lowest_loss(train_config, tiny_deberta_nli, tmp_path,
                                                                 monkeypatch):
    """Control: the target is steered (scores with noise of a chosen size: AUC falls as the noise grows) so that
    its best validation is the second, while the loss keeps falling; monitoring val/loss would keep another."""
    noise_scale = [3.0, 0.01, 2.0, 4.0, 5.0]  # per validation: the second is the best (AUC 1.0), the rest lower
    calls = []

    def steered(self, model, tokenizer, card=None):
        noise = np.random.default_rng(0).standard_normal(len(self.rows.labels))
        calls.append(len(calls))
        return self.rows.labels + noise_scale[len(calls) - 1] * noise

    monkeypatch.setattr(FaithfulnessValidation, "scores", steered)
    cfg = train_config("experiment=nli_demo", f"model.name_or_path={tiny_deberta_nli}", "model.head_labels=null",
                       f"data.path={_obvious_nli_set(tmp_path)}", f"faithfulness_benchmark={LLM_AGGREFACT}",
                       "model.lr=2e-3", "model.warmup_ratio=0.0", "trainer.max_steps=16", "val_every_n_steps=4",
                       "trainer.num_sanity_val_steps=0", *QUIET)
    train(cfg)
    run_dir = Path(cfg.paths.output_dir)
    rows = [r for r in _metrics_rows(run_dir) if r.get("val/loss")][:-1]  # the last: the kept checkpoint again
    assert len(rows) == 4
    losses = [float(r["val/loss"]) for r in rows]
    aucs = [float(r["val/faithfulness_auc"]) for r in rows]
    steps = [int(r["step"]) + 1 for r in rows]  # logged at step N - 1 after N optimizer steps
    best = int(np.argmax(aucs))
    assert best == 1 and aucs[1] == 1.0 and max(aucs[:1] + aucs[2:]) < 1.0
    assert int(np.argmin(losses)) != best, losses  # the control: the loss would choose another checkpoint
    card = json.loads((run_dir / "export" / "learned_metric.json").read_text())
    assert load_checkpoint(card["source_checkpoint"])["global_step"] == steps[best]
    assert card["selection"] == {"monitor": "val/faithfulness_auc", "mode": "max", "best_value": 1.0,
                                 "step": steps[best]}
    assert torch.tensor(aucs).argmax().item() == best


@pytest.mark.parametrize("experiment, overrides, words", [
    ("ccl_demo", ["callbacks.model_checkpoint.monitor=val/loss"], "mode=max keeps the worst checkpoint"),
    ("nli_demo", ["callbacks.model_checkpoint.monitor=val/f1"], "mode=min keeps the worst checkpoint"),
    ("nli_demo", ["callbacks.model_checkpoint.monitor=val/faithfulness_auc", "callbacks.model_checkpoint.mode=max"],
     "faithfulness_benchmark is not set"),
    ("nli_demo", ["callbacks.model_checkpoint.monitor=val/shuffle_acc", "callbacks.model_checkpoint.mode=max"],
     "shuffle validation is off"),
    # a typo: Lightning's check came at the first validation (a traceback after 500 steps of a real run)
    ("nli_demo", ["callbacks.model_checkpoint.monitor=val/los"], "never logged by this run .did you mean val/loss"),
    ("ccl_demo", ["callbacks.model_checkpoint.monitor=val_f1"], "did you mean val/f1"),
])
def test_a_monitor_that_keeps_the_worst_or_is_never_logged_is_one_line_before_training(train_config, tmp_path,
                                                                                       experiment, overrides, words):
    """Found before: monitor=val/loss on a coherence run kept the highest loss (mode max) without a word, and a
    never-logged val/faithfulness_auc ended in a MisconfigurationException traceback after training started,
    leaving a run folder behind. Controls: the experiments' own monitors pass the check."""
    cfg = train_config(f"experiment={experiment}", *overrides)
    code = run_command("train.py", lambda: train(cfg))
    assert code == 2 and not (tmp_path / "run").exists()
    with pytest.raises(UserError, match=words):
        check_monitored(cfg.callbacks.model_checkpoint.monitor, cfg.callbacks.model_checkpoint.mode, cfg)


@pytest.mark.parametrize("experiment, overrides", [
    ("ccl_demo", []), ("nli_demo", []), ("nli_demo", [f"faithfulness_benchmark={LLM_AGGREFACT}"]),
    ("ccl_demo", ["callbacks.model_checkpoint.monitor=val/shuffle_acc"]),
    ("nli_demo", [f"faithfulness_benchmark={LLM_AGGREFACT}", "callbacks.model_checkpoint.monitor="
                  "val/faithfulness_auc/llm_aggrefact"]),
    # a callback of the user's may log a metric of its own: Lightning checks it
    ("nli_demo", ["+callbacks.mine._target_=my_package.MyCallback", "callbacks.model_checkpoint.monitor=val/mine"]),
])
def test_the_experiments_monitors_pass_the_check(train_config, experiment, overrides):
    cfg = train_config(f"experiment={experiment}", *overrides)
    check_monitored(cfg.callbacks.model_checkpoint.monitor, cfg.callbacks.model_checkpoint.mode, cfg)
