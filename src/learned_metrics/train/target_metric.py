"""Validation on the score a faithfulness metric is judged by: BAcc and ROC AUC on a labelled benchmark.

:class:`FaithfulnessValidation` scores the dev/val split of a faithfulness benchmark (any layout ``meta-eval
benchmark`` reads: LLM-AggreFact, AggreFact, SummaC, TRUE, or the user's rows in one of them) with the model being
trained, through the scorer of ``learned-metrics score`` (e-c, one deterministic pass, the premise strategy and
length as configured), and judges the scores with ``meta-eval benchmark``'s own :func:`~learned_metrics.meta_eval.
benchmark.benchmark` (no resamples, no tests: a validation metric). Logged to every logger at the end of each
validation, so ``ModelCheckpoint``/``EarlyStopping`` can monitor them and a sweep can optimise them:

- ``val/faithfulness_auc``, ``val/faithfulness_bacc``: the unweighted means over datasets;
- ``val/faithfulness_auc/<dataset>``, ``val/faithfulness_bacc/<dataset>`` (names sanitised for loggers;
  a dataset with one class in the rows has no AUC);
- ``val/faithfulness_seconds``: what this validation cost, and ``val/faithfulness_time_share`` the share of the
  run's wall time (since fitting started) spent on it so far.

The benchmark is read and checked when the callback is built, before any training: a wrong path, layout or split is
one line naming the path. ``max_rows_per_dataset`` bounds the cost (a seeded subsample, the same rows every time).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from lightning.pytorch import Callback

from learned_metrics.errors import UserError
from learned_metrics.validate import int_at_least, one_of

PREFIX = "val/faithfulness"
PROTOCOLS = ("same-split", "fixed")  # tune-on-val would tune on dev and judge test: no test rows during training
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def logged_name(dataset: str) -> str:
    """A dataset name loggers take as a metric-name part (wandb, CSV columns, TensorBoard tags)."""
    return _UNSAFE.sub("_", str(dataset)).strip("_") or "dataset"


@dataclass
class ValidationRows:
    """The labelled rows validation scores: texts, 0/1 labels, dataset and split of each row."""

    path: str
    layout: str
    split: str | None
    groundings: list[str]
    generations: list[str]
    labels: np.ndarray
    datasets: list[str]


def read_validation_rows(path: str | Path, *, layout: str = "auto", split: str | None = None,
                         max_rows_per_dataset: int | None = None, seed: int = 0) -> ValidationRows:
    """The rows of one split of a benchmark, read by ``meta-eval benchmark``'s reader (labels, datasets, splits).

    ``split`` None: the first of val, dev, valid, validation the rows carry (every row when they carry no split,
    as TRUE). Per dataset at most ``max_rows_per_dataset`` rows, a seeded subsample kept in file order.
    """
    from learned_metrics.io import iter_rows
    from learned_metrics.meta_eval.benchmarks_io import TUNE_SPLITS, read_source
    from learned_metrics.meta_eval.data import scored_files
    from learned_metrics.meta_eval.options import check

    check(layout=layout)
    where = f"faithfulness validation benchmark {path}"
    if not Path(path).exists():
        raise UserError("no such file or folder (faithfulness_benchmark: a benchmark file or folder in a layout "
                        "meta-eval benchmark reads)", path=path)
    source, _, found = read_source(path, [], layout=layout, group_field=None, on_missing="drop", published=False)
    premises: list[Any] = []
    hypotheses: list[Any] = []
    for file in scored_files(path):  # the reader's files in the reader's order: row i is the reader's row i
        for _, row in iter_rows(file):
            premises.append(row.get(found.premise))
            hypotheses.append(row.get(found.hypothesis))
    present = list(dict.fromkeys(s for s in source.splits if s is not None))
    if split is None and present:
        split = next((s for s in TUNE_SPLITS if s in present), None)
        if split is None:
            raise UserError(f"no validation split (val, dev, valid, validation) among the splits present "
                            f"({', '.join(present)}); name one with callbacks.faithfulness_validation.split", path=path)
    elif split is not None and split not in present:
        raise UserError(f"no rows of split '{split}' (splits present: {', '.join(present) or 'none'})", path=path)
    keep = [i for i, label in enumerate(source.labels) if label is not None and (split is None or
                                                                                 source.splits[i] == split)]
    if max_rows_per_dataset is not None:
        keep = _subsample(keep, source.groups, max_rows_per_dataset, seed)
    if not keep:
        raise UserError(f"{where}: no labelled rows to validate on", path=path)
    labels = np.array([source.labels[i] for i in keep], dtype=np.int64)
    datasets = [source.groups[i] for i in keep]
    if not any(len(set(labels[[d == name for d in datasets]])) == 2 for name in set(datasets)):
        raise UserError("no dataset has both labels in the validation rows: ROC AUC is undefined everywhere "
                        "(raise callbacks.faithfulness_validation.max_rows_per_dataset or choose another split)",
                        path=path)
    for i in keep:
        for name, value in ((found.premise, premises[i]), (found.hypothesis, hypotheses[i])):
            if not isinstance(value, str) or not value.strip():
                file, row = source.where[i]
                raise UserError("expected a non-empty text", path=file, row=row, field=name)
    return ValidationRows(str(path), found.key, split, [premises[i] for i in keep],
                          [hypotheses[i] for i in keep], labels, datasets)


def _subsample(rows: list[int], datasets: list[str], limit: int, seed: int) -> list[int]:
    """At most ``limit`` rows per dataset, drawn with ``seed`` per dataset, in file order."""
    by_dataset: dict[str, list[int]] = {}
    for i in rows:
        by_dataset.setdefault(datasets[i], []).append(i)
    kept: list[int] = []
    for index, members in enumerate(by_dataset.values()):
        if len(members) > limit:
            rng = np.random.default_rng([seed, index])
            members = sorted(rng.choice(members, size=limit, replace=False).tolist())
        kept.extend(members)
    return sorted(kept)


class FaithfulnessValidation(Callback):
    """After every validation (not the sanity check): the model scores the benchmark rows, BAcc and AUC are logged.

    Built by :func:`faithfulness_validation` (None when no benchmark is set).
    """

    def __init__(self, benchmark: str | Path, *, layout: str = "auto", split: str | None = None,
                 threshold_protocol: str = "same-split", threshold: float | None = None,
                 max_rows_per_dataset: int | None = 200, seed: int = 0, premise_strategy: str = "truncate",
                 granularity: str = "document", max_length: int | None = None, max_tokens: int | None = None,
                 batch_size: int | None = None):
        if threshold_protocol == "tune-on-val":
            raise UserError("callbacks.faithfulness_validation.threshold_protocol=tune-on-val would tune on the dev "
                            "split and judge the test split while training; use same-split or fixed")
        self.protocol = one_of(threshold_protocol, PROTOCOLS, "callbacks.faithfulness_validation.threshold_protocol")
        if self.protocol != "fixed" and threshold is not None:
            raise UserError("callbacks.faithfulness_validation.threshold is for threshold_protocol=fixed")
        self.threshold = threshold
        if max_rows_per_dataset is not None:
            max_rows_per_dataset = int_at_least(max_rows_per_dataset, 2,
                                                "callbacks.faithfulness_validation.max_rows_per_dataset")
        from learned_metrics.scoring.options import ScoringOptions

        # the options `learned-metrics score` takes, checked by the same declaration; one deterministic e-c pass
        self.options = ScoringOptions.from_keywords(mode="e-c", mc_samples=1, premise_strategy=premise_strategy,
                                                    granularity=granularity, max_length=max_length,
                                                    max_tokens=max_tokens, batch_size=batch_size)
        self.rows = read_validation_rows(benchmark, layout=layout, split=split,
                                         max_rows_per_dataset=max_rows_per_dataset, seed=seed)
        names = list(dict.fromkeys(self.rows.datasets))
        self.logged = _unique_names(names)
        self.seconds_total = 0.0
        self._fit_started: float | None = None
        self.last: dict[str, float] = {}

    # -- Lightning hooks -------------------------------------------------------------------------

    def on_fit_start(self, trainer: Any, pl_module: Any) -> None:
        self._fit_started = time.perf_counter()

    def on_validation_epoch_end(self, trainer: Any, pl_module: Any) -> None:
        if trainer.sanity_checking:
            return
        start = time.perf_counter()
        values = self.measure(pl_module.model, trainer.datamodule.tokenizer, getattr(pl_module, "card", None))
        seconds = time.perf_counter() - start
        self.seconds_total += seconds
        values[f"{PREFIX}_seconds"] = seconds
        if self._fit_started is not None and trainer.state.fn == "fit":
            values[f"{PREFIX}_time_share"] = self.seconds_total / max(time.perf_counter() - self._fit_started, 1e-9)
        self.last = values
        for name, value in values.items():
            pl_module.log(name, value, on_step=False, on_epoch=True, sync_dist=False)

    # -- the measurement -------------------------------------------------------------------------

    def measure(self, model: Any, tokenizer: Any, card: dict[str, Any] | None = None) -> dict[str, float]:
        """The metrics of ``model`` on the rows: means and per dataset (AUC only where both classes are present)."""
        from learned_metrics.meta_eval.benchmark import benchmark

        scores = self.scores(model, tokenizer, card)
        rows = self.rows
        report = benchmark({"model": scores}, rows.labels, rows.datasets, [rows.split] * len(scores),
                           threshold_protocol=self.protocol, threshold=self.threshold, split=rows.split,
                           resamples=0, benchmark_name=rows.path)
        result = report.results["model"]
        values = {f"{PREFIX}_auc": _value(result.mean["auc"]), f"{PREFIX}_bacc": _value(result.mean["bacc"])}
        for entry in result.datasets:
            for statistic in ("auc", "bacc"):
                value = _value(entry.stats[statistic])
                if not np.isnan(value):
                    values[f"{PREFIX}_{statistic}/{self.logged[entry.dataset]}"] = value
        return values

    def scores(self, model: Any, tokenizer: Any, card: dict[str, Any] | None = None) -> np.ndarray:
        """e-c scores of the rows by ``learned-metrics score``'s scorer around the in-memory model; the model's
        train/eval mode, dtype and device are left as they were, and no gradient is kept."""
        import torch

        from learned_metrics.scoring import loading
        from learned_metrics.scoring.scorer import Scorer

        parameter = next(model.parameters())
        limit = loading.model_input_limit(model.config, tokenizer)
        length = min(self.options.max_length or loading.preprocessing_of(card).get("max_length") or limit, limit)
        scorer = Scorer(model, tokenizer, kind="faithfulness",
                        label_ids=loading.resolve_labels(model.config, "faithfulness"), card=card or None,
                        device=parameter.device, dtype=parameter.dtype, max_length=length, source="training",
                        options=self.options)
        was_training = model.training
        try:
            with torch.no_grad():
                return scorer.score_validated(groundings=self.rows.groundings,
                                              generations=self.rows.generations).scores
        finally:
            model.train(was_training)


def _value(estimate: Any) -> float:
    return float("nan") if estimate.value is None else float(estimate.value)


def _unique_names(datasets: list[str]) -> dict[str, str]:
    """Dataset -> logged name; two datasets that sanitise alike get ``_2``, ``_3``."""
    out: dict[str, str] = {}
    taken: set[str] = set()
    for name in datasets:
        base = candidate = logged_name(name)
        count = 1
        while candidate in taken:
            count += 1
            candidate = f"{base}_{count}"
        taken.add(candidate)
        out[name] = candidate
    return out


def faithfulness_validation(benchmark: str | Path | None = None, metric_kind: str = "faithfulness",
                            **options: Any) -> FaithfulnessValidation | None:
    """The callback of ``conf/callbacks``: None (no validation on a benchmark) while ``benchmark`` is unset; a
    coherence run with a benchmark is refused here, before any training."""
    if benchmark is None or (isinstance(benchmark, str) and not benchmark.strip()):
        return None
    if metric_kind != "faithfulness":
        raise UserError(f"faithfulness_benchmark={benchmark}: validation on a faithfulness benchmark is for NLI "
                        f"(faithfulness) models; this run trains a {metric_kind} model")
    return FaithfulnessValidation(benchmark, **options)
