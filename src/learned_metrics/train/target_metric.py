"""Validation on what a metric is judged by (BAcc and ROC AUC on a faithfulness benchmark, shuffle accuracy): the
model being trained scores rows through ``learned-metrics score``'s scorer and ``meta-eval``'s own functions judge
them, so a checkpoint or sweep optimises what the metric is judged by. The benchmark is checked before training."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np
from lightning.pytorch import Callback
from omegaconf import OmegaConf

from learned_metrics.errors import UserError
from learned_metrics.meta_eval.options import BenchmarkCommand
from learned_metrics.scoring.options import ScoringOptions
from learned_metrics.settings import Settings, setting, takes

PREFIX = "val/faithfulness"


def _benchmark_on(cfg: Any) -> bool:
    return OmegaConf.select(cfg, "faithfulness_benchmark") not in (None, "")


def _shuffle_on(cfg: Any) -> bool:
    return OmegaConf.select(cfg, "callbacks.shuffle_validation") is not None and \
        OmegaConf.select(cfg, "model.metric_kind") == "coherence"


# What a checkpoint can be chosen by: each validation metric a run logs, its better direction, and what must be
# on for the run to log it (the module logs loss, acc and f1; the callbacks below the rest; per-dataset
# val/faithfulness_auc/<dataset> follow their mean's rule).
MONITORED = {"val/loss": ("min", None), "val/acc": ("max", None), "val/f1": ("max", None),
             f"{PREFIX}_auc": ("max", _benchmark_on), f"{PREFIX}_bacc": ("max", _benchmark_on),
             "val/shuffle_acc": ("max", _shuffle_on)}


def check_monitored(monitor: str | None, mode: str, cfg: Any) -> None:
    """The kept checkpoint is the best of a metric the run logs, in its better direction: a monitor whose mode keeps
    the worst value, or one the run will not log (its benchmark or callback off), is one line before training."""
    if not monitor:
        return
    known = MONITORED.get(monitor) or next((rule for name, rule in MONITORED.items()
                                            if name.startswith(PREFIX) and monitor.startswith(f"{name}/")), None)
    where = "callbacks.model_checkpoint"
    if known is None and _logs_only_ours(cfg):  # no module or callback of the user's: nothing else is logged
        import difflib

        close = "".join(f"did you mean {name}? " for name in difflib.get_close_matches(monitor, MONITORED, n=1))
        raise UserError(f"{where}.monitor={monitor} is never logged by this run ({close}it logs "
                        f"{', '.join(MONITORED)}, the faithfulness ones with faithfulness_benchmark set)")
    if known is None:
        return  # a metric of your own module or callback: Lightning checks that it is logged
    better, needs = known
    if mode != better:
        raise UserError(f"{where}.monitor={monitor} with mode={mode} keeps the worst checkpoint: {monitor} is "
                        f"better {'lower' if better == 'min' else 'higher'}, set {where}.mode={better}")
    if needs is not None and not needs(cfg):
        what = "faithfulness_benchmark is not set" if needs is _benchmark_on else \
            "the shuffle validation is off (callbacks.shuffle_validation, coherence runs only)"
        raise UserError(f"{where}.monitor={monitor} is never logged: {what}; set it, or monitor val/loss or val/f1")


def _logs_only_ours(cfg: Any) -> bool:
    """The run's module is ours and every callback ours or Lightning's own (which log no validation metric)."""
    targets = [OmegaConf.select(cfg, "model._target_")] + [
        OmegaConf.select(cfg, f"callbacks.{name}._target_") for name in (OmegaConf.select(cfg, "callbacks") or {})]
    return all(isinstance(target, str) and target.startswith(("learned_metrics.", "lightning.pytorch.callbacks."))
               for target in targets if target is not None) and targets[0] is not None


PROTOCOLS = ("same-split", "fixed")  # tune-on-val would tune on dev and judge test: no test rows during training
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_SCORING = ScoringOptions.__dataclass_fields__


@dataclass(frozen=True)
class FaithfulnessValidationSettings(Settings):
    """``callbacks.faithfulness_validation`` but its benchmark and metric kind: the layout is ``meta-eval
    benchmark``'s, the scoring fields are ``learned-metrics score``'s own declarations."""

    layout: str = BenchmarkCommand.__dataclass_fields__["layout"]
    split: str | None = setting(None, "the split validated on (default: the first of val, dev, valid, validation "
                                "present; every row when the rows carry no split)", cli=False)
    threshold_protocol: str = setting("same-split", "BAcc's threshold: tuned on the rows judged, or fixed",
                                      choices=PROTOCOLS, noun="threshold_protocol", cli=False)
    threshold: float | None = setting(None, "threshold_protocol=fixed: the threshold (default 0.5)", kind="number",
                                      cli=False)
    max_rows_per_dataset: int | None = setting(200, "a seeded subsample per dataset bounds the cost (None: every "
                                               "row)", minimum=2, cli=False)
    seed: int = setting(0, "seed of the subsample", minimum=0, cli=False)
    premise_strategy: str = _SCORING["premise_strategy"]
    granularity: str = _SCORING["granularity"]
    max_length: int | None = _SCORING["max_length"]
    max_tokens: int | None = _SCORING["max_tokens"]
    batch_size: int | None = _SCORING["batch_size"]

    def __post_init__(self) -> None:
        if self.threshold_protocol == "tune-on-val":  # said before the choices: why it is not among them
            raise UserError("threshold_protocol=tune-on-val would tune on the dev split and judge the test split "
                            "while training; use same-split or fixed")
        super().__post_init__()
        if self.threshold_protocol != "fixed" and self.threshold is not None:
            raise UserError("threshold is for threshold_protocol=fixed")

    def scoring(self) -> ScoringOptions:
        """One deterministic e-c pass with the fields this object shares with ``learned-metrics score``."""
        shared = {spec.name: getattr(self, spec.name) for spec in fields(self) if _SCORING.get(spec.name) is spec}
        return ScoringOptions(mode="e-c", mc_samples=1, **shared)


@dataclass(frozen=True)
class ShuffleValidationSettings(Settings):
    """``callbacks.shuffle_validation`` but its metric kind."""

    max_docs: int | None = setting(200, "a seeded subsample of validation documents bounds the cost (None: every "
                                   "one)", minimum=1, cli=False)
    seed: int = setting(0, "seed of the subsample", minimum=0, cli=False)


def logged_name(dataset: str) -> str:
    """A dataset name loggers take as a metric-name part (wandb, CSV columns, TensorBoard tags)."""
    return _UNSAFE.sub("_", str(dataset)).strip("_") or "dataset"


@dataclass
class ValidationRows:
    """The labelled rows validation scores: texts, 0/1 labels, dataset and split of each row."""

    path: str
    split: str | None
    groundings: list[str]
    generations: list[str]
    labels: np.ndarray
    datasets: list[str]


def read_validation_rows(path: str | Path, s: FaithfulnessValidationSettings) -> ValidationRows:
    """The rows of one split of a benchmark, read by ``meta-eval benchmark``'s reader: ``s.split``, else the first
    of val, dev, valid, validation present (every row without splits, as TRUE); per dataset a seeded subsample."""
    from learned_metrics.io import iter_rows
    from learned_metrics.meta_eval.benchmarks_io import TUNE_SPLITS, read_source, split_of_name
    from learned_metrics.meta_eval.data import scored_files

    if not Path(path).exists():
        raise UserError("no such file or folder (faithfulness_benchmark: a benchmark file or folder in a layout "
                        "meta-eval benchmark reads)", path=path)
    source, _, found = read_source(path, [], layout=s.layout, group_field=None, on_missing="drop", published=False)
    texts = [(row.get(found.premise), row.get(found.hypothesis))  # the reader's files in order: row i is its row i
             for file in scored_files(path) for _, row in iter_rows(file)]
    present = list(dict.fromkeys(split for split in source.splits if split is not None))
    split = s.split
    if split is None and present:
        split = next((name for name in TUNE_SPLITS if name in present), None)
        if split is None:
            raise UserError(f"no validation split (val, dev, valid, validation) among the splits present "
                            f"({', '.join(present)}); name one with callbacks.faithfulness_validation.split", path=path)
    elif split is not None and split not in present:
        raise UserError(f"no rows of split '{split}' (splits present: {', '.join(present) or 'none'})", path=path)
    if split is not None and split_of_name(split) == "test":  # the one rule for split names (meta-eval's)
        raise UserError(f"callbacks.faithfulness_validation.split={split}: choosing the checkpoint on a test split "
                        "makes its test scores optimistic; validate on val/dev (the default), and keep the test split "
                        "for meta-eval benchmark", path=path)
    keep = [i for i in range(len(source.labels)) if split is None or source.splits[i] == split]
    unlabelled = [i for i in keep if source.labels[i] is None]
    if unlabelled:  # meta-eval benchmark refuses them too: the choice would rest on the labelled rows only
        file, row = source.where[unlabelled[0]]
        raise UserError(f"label is missing ({len(unlabelled)} of the validation rows); label them or remove them",
                        path=file, row=row, field="label")
    if (cap := s.max_rows_per_dataset) is not None:  # at most cap rows per dataset, drawn with the seed per dataset
        by_dataset: dict[str, list[int]] = {}
        for i in keep:
            by_dataset.setdefault(source.groups[i], []).append(i)
        drawn = [rows if len(rows) <= cap else np.random.default_rng([s.seed, index]).choice(rows, cap, replace=False)
                 for index, rows in enumerate(by_dataset.values())]
        keep = sorted(int(i) for rows in drawn for i in rows)  # file order
    if not keep:
        raise UserError(f"faithfulness validation benchmark {path}: no labelled rows to validate on", path=path)
    labels = np.array([source.labels[i] for i in keep], dtype=np.int64)
    datasets = [source.groups[i] for i in keep]
    if not any(len(set(labels[[d == name for d in datasets]])) == 2 for name in set(datasets)):
        raise UserError("no dataset has both labels in the validation rows: ROC AUC is undefined everywhere (raise "
                        "callbacks.faithfulness_validation.max_rows_per_dataset or choose another split)", path=path)
    for i in keep:
        for name, value in zip((found.premise, found.hypothesis), texts[i], strict=True):
            if not isinstance(value, str) or not value.strip():
                file, row = source.where[i]
                raise UserError("expected a non-empty text", path=file, row=row, field=name)
    return ValidationRows(str(path), split, [texts[i][0] for i in keep], [texts[i][1] for i in keep], labels, datasets)


class FaithfulnessValidation(Callback):
    """After every validation but the sanity check, logs ``val/faithfulness_auc``/``_bacc`` (means over datasets; per
    dataset as ``.../<dataset>``, no AUC for a one-class one), ``_seconds`` and ``_time_share`` (of the run's wall
    time) on the benchmark rows. The options: :class:`FaithfulnessValidationSettings`' fields, as keywords (Hydra's
    ``conf/callbacks`` entry) or one ``settings=`` object."""

    @takes(FaithfulnessValidationSettings)
    def __init__(self, benchmark: str | Path, *, settings: FaithfulnessValidationSettings):
        self.settings = settings
        self.options = self.settings.scoring()
        self.rows = read_validation_rows(benchmark, self.settings)
        self.logged: dict[str, str] = {}  # dataset -> logged name; two that sanitise alike get _2, _3
        for name in dict.fromkeys(self.rows.datasets):
            base = logged_name(name)
            candidates = (base, *(f"{base}_{count}" for count in range(2, len(self.rows.datasets) + 2)))
            self.logged[name] = next(candidate for candidate in candidates if candidate not in self.logged.values())
        self.seconds_total = 0.0
        self._fit_started: float | None = None

    def on_fit_start(self, trainer: Any, pl_module: Any) -> None:
        self._fit_started = time.perf_counter()

    def on_validation_epoch_end(self, trainer: Any, pl_module: Any) -> None:
        if trainer.sanity_checking:
            return
        start = time.perf_counter()
        values = diverged_as_nan(lambda: self.measure(pl_module.model, trainer.datamodule.tokenizer,
                                                      getattr(pl_module, "card", None)),
                                 {f"{PREFIX}_auc": float("nan"), f"{PREFIX}_bacc": float("nan")}, trainer)
        values[f"{PREFIX}_seconds"] = seconds = time.perf_counter() - start
        self.seconds_total += seconds
        if self._fit_started is not None and trainer.state.fn == "fit":
            values[f"{PREFIX}_time_share"] = self.seconds_total / max(time.perf_counter() - self._fit_started, 1e-9)
        for name, value in values.items():
            pl_module.log(name, value, on_step=False, on_epoch=True, sync_dist=False)

    def measure(self, model: Any, tokenizer: Any, card: dict[str, Any] | None = None) -> dict[str, float]:
        """The metrics of ``model`` on the rows: means and per dataset (AUC only where both classes are present)."""
        from learned_metrics.meta_eval.benchmark import benchmark

        scores = self.scores(model, tokenizer, card)
        rows = self.rows
        result = benchmark({"model": scores}, rows.labels, rows.datasets, [rows.split] * len(scores),
                           threshold_protocol=self.settings.threshold_protocol, threshold=self.settings.threshold,
                           split=rows.split, resamples=0, benchmark_name=rows.path).results["model"]
        values = {f"{PREFIX}_auc": _value(result.mean["auc"]), f"{PREFIX}_bacc": _value(result.mean["bacc"])}
        for entry in result.datasets:
            for statistic in ("auc", "bacc"):
                value = _value(entry.stats[statistic])
                if not np.isnan(value):
                    values[f"{PREFIX}_{statistic}/{self.logged[entry.dataset]}"] = value
        return values

    def scores(self, model: Any, tokenizer: Any, card: dict[str, Any] | None = None) -> np.ndarray:
        """e-c scores of the rows by ``learned-metrics score``'s scorer around the in-memory model."""
        return score_in_training(model, tokenizer, card, "faithfulness", self.options,
                                 groundings=self.rows.groundings, generations=self.rows.generations)


class NonFiniteScores(UserError):
    """The model being trained scored rows NaN or infinite: it has diverged, no validation metric is defined."""


def diverged_as_nan(measure: Any, nan: Any, trainer: Any) -> Any:
    """``measure()``, or ``nan`` (and one warning line) when the model scored a row NaN: the checkpoint monitor ranks
    NaN worst, and the run goes on (early stopping, if on, stops it by its own check of finite values)."""
    from lightning.pytorch.utilities import rank_zero_warn

    try:
        return measure()
    except NonFiniteScores as error:
        rank_zero_warn(f"step {trainer.global_step}: {error}; its validation metrics are logged as NaN")
        return nan


def score_in_training(model: Any, tokenizer: Any, card: dict[str, Any] | None, kind: str, options: Any,
                      **inputs: Any) -> np.ndarray:
    """Scores of ``inputs`` by ``learned-metrics score``'s scorer around the in-memory model being trained; the
    model's train/eval mode, dtype and device are left as they were, and no gradient is kept."""
    import torch

    from learned_metrics.scoring import loading
    from learned_metrics.scoring.scorer import Scorer

    parameter = next(model.parameters())
    limit = loading.model_input_limit(model.config, tokenizer)
    length = min(options.max_length or loading.preprocessing_of(card).get("max_length") or limit, limit)
    scorer = Scorer(model, tokenizer, kind=kind, label_ids=loading.resolve_labels(model.config, kind),
                    card=card or None, device=parameter.device, dtype=parameter.dtype, max_length=length,
                    source="training", options=options)
    was_training = model.training
    try:
        with torch.no_grad():
            scores = np.asarray(scorer.score_validated(**inputs).scores, dtype=np.float64)
    finally:
        model.train(was_training)
    bad = int((~np.isfinite(scores)).sum())
    if bad:  # one rule for both validations: never a metric computed from NaN scores (nor a stop of the run)
        raise NonFiniteScores(f"the model scored {bad} of {scores.size} {kind} validation rows NaN or infinite "
                              "(it has diverged: lower model.lr, or raise model.warmup_ratio)")
    return scores


def _value(estimate: Any) -> float:
    return float("nan") if estimate.value is None else float(estimate.value)


def faithfulness_validation(benchmark: str | Path | None = None, metric_kind: str = "faithfulness",
                            **options: Any) -> FaithfulnessValidation | None:
    """The ``conf/callbacks`` entry: None while ``benchmark`` is unset; refused for a coherence run, before training."""
    if benchmark is None or (isinstance(benchmark, str) and not benchmark.strip()):
        return None
    if metric_kind != "faithfulness":
        raise UserError(f"faithfulness_benchmark={benchmark}: validation on a faithfulness benchmark is for NLI "
                        f"(faithfulness) models; this run trains a {metric_kind} model")
    return FaithfulnessValidation(benchmark, **options)


class ShuffleValidation(Callback):
    """The coherence paper's shuffle test (``val/shuffle_acc``, ``_seconds``) on held-out documents, by ``meta-eval
    shuffle-test``'s own function. The options: :class:`ShuffleValidationSettings`' fields, as keywords or one
    ``settings=`` object."""

    @takes(ShuffleValidationSettings)
    def __init__(self, *, settings: ShuffleValidationSettings):
        self.settings = settings
        self._pairs: tuple[list[str], np.ndarray, np.ndarray, np.ndarray] | None = None

    def on_validation_epoch_end(self, trainer: Any, pl_module: Any) -> None:
        if trainer.sanity_checking:
            return
        start = time.perf_counter()
        accuracy = diverged_as_nan(lambda: self.measure(pl_module.model, trainer.datamodule.tokenizer,
                                                        getattr(pl_module, "card", None), trainer.datamodule.path),
                                   float("nan"), trainer)
        pl_module.log("val/shuffle_acc", accuracy, on_step=False, on_epoch=True, sync_dist=False)
        pl_module.log("val/shuffle_seconds", time.perf_counter() - start, on_step=False, on_epoch=True, sync_dist=False)

    def measure(self, model: Any, tokenizer: Any, card: dict[str, Any] | None, data_path: str | Path) -> float:
        from learned_metrics.meta_eval.shuffle_test import shuffle_test

        if self._pairs is None:  # the validation rows scored, read once
            self._pairs = validation_pairs(data_path, self.settings.max_docs, self.settings.seed)
        texts, is_original, pair_of, original_of = self._pairs
        scores = score_in_training(model, tokenizer, card, "coherence", ScoringOptions(mc_samples=1), texts=texts)
        shuffled = ~is_original
        return float(shuffle_test(scores[original_of[shuffled]], scores[shuffled], pair_index=pair_of[shuffled],
                                  resamples=0).accuracy.value)


def validation_pairs(data_path: str | Path, max_docs: int | None, seed: int
                     ) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """Documents of a shuffle set's validation split with their original and a shuffle (at most ``max_docs``, drawn
    with ``seed``): texts, an original mask, each row's document number and the row of its document's original."""
    import datasets

    from learned_metrics.labels import COHERENCE_LABELS, class_names_of, named_label

    split = datasets.load_from_disk(str(Path(data_path) / "validation"))
    by_doc: dict[str, list[int]] = {}
    for i, doc in enumerate(list(split["doc_id"])):
        by_doc.setdefault(doc, []).append(i)
    names = class_names_of(split, "label")  # by name, as training maps them: never the index alone
    labels = [named_label(value, names) for value in split["label"]]
    unknown = sorted({str(value) for value, name in zip(split["label"], labels, strict=True)
                      if name not in COHERENCE_LABELS})
    if unknown:
        raise UserError(f"validation labels {unknown[:3]} are not coherent/incoherent: no shuffle accuracy",
                        path=data_path, field="label")
    coherent = "coherent"
    docs = [d for d, rows in by_doc.items() if sum(labels[i] == coherent for i in rows) == 1 and len(rows) > 1]
    if not docs:
        raise UserError("the validation split has no document with its original and a shuffle: no shuffle "
                        "accuracy (null the callbacks.shuffle_validation entry)", path=data_path)
    if max_docs is not None and len(docs) > max_docs:
        keep = set(np.random.default_rng(seed).choice(len(docs), size=max_docs, replace=False).tolist())
        docs = [d for i, d in enumerate(docs) if i in keep]
    rows = [i for d in docs for i in by_doc[d]]
    column = list(split["text"])
    is_original = np.array([labels[i] == coherent for i in rows])
    pair_of = np.array([k for k, d in enumerate(docs) for _ in by_doc[d]])
    # rows are grouped by document, one original each: the k-th original is document k's
    return [column[i] for i in rows], is_original, pair_of, np.flatnonzero(is_original)[pair_of]


def shuffle_validation(metric_kind: str = "coherence", **options: Any) -> ShuffleValidation | None:
    """The callback of ``conf/callbacks``: on for coherence runs, None for NLI runs (they monitor the benchmark)."""
    return ShuffleValidation(**options) if metric_kind == "coherence" else None
