"""The Python API: ``load_scorer(...)`` and ``Scorer.score(...)``, scores in input order whatever the batching.

A scorer reads its kind, labels, preprocessing and default mode from the export's ``learned_metric.json``; a plain
transformers NLI folder (no card) is a faithfulness scorer with labels resolved from ``id2label`` by name."""

from __future__ import annotations

import dataclasses
import os
import time
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from learned_metrics import provenance, safety
from learned_metrics.card import read_card
from learned_metrics.errors import UserError
from learned_metrics.scoring import loading
from learned_metrics.scoring.batching import BatchSettings, FeedCounts, encode, predict_feed
from learned_metrics.scoring.distributed import launched_world_size, processes_on_this_machine
from learned_metrics.scoring.mc_dropout import DropoutStream, KeyedDropout, mc_dropout_mode
from learned_metrics.scoring.options import GRANULARITIES, MODES, PREMISE_STRATEGIES, ScoringOptions, of_kind
from learned_metrics.scoring.pipeline import (
    SliceFeed,
    Timings,
    TokenizerCopies,
    slices_longest_first,
    tokenizer_workers,
)
from learned_metrics.scoring.precision import resolve_device, resolve_dtype
from learned_metrics.scoring.units import aggregate_units, plan_units, sentence_details
from learned_metrics.settings import takes
from learned_metrics.text.encoding import check_max_length
from learned_metrics.text.sentences import DEFAULT_JOINER, get_splitter, join_sentences
from learned_metrics.validate import by_label, flag, int_at_least, one_of, sentence_lists, text_list

# Chunk strategy: pairs scored per stream; bounds the per-pass probabilities kept until aggregation.
MAX_PAIRS_PER_STREAM = 100_000
# Default token budget per forward: (tokens at the reference hidden size, reference hidden size, floor, ceiling).
# On CPU small batches stay in cache (MiniLM: 12-25% more rows/CPU-second at 1,024 tokens than at 4,096).
_CPU_BUDGET = (1024, 384, 1024, 4096)
_GPU_BUDGET = (32768, 1024, 8192, 131072)
_COLUMN_ORDER = ("coherent", "incoherent", "entailment", "neutral", "contradiction")


def default_max_tokens(config, device: torch.device) -> int:
    """Tokens per forward, scaled inversely with hidden size within the device's bounds (see the budgets above)."""
    budget, reference_hidden, low, high = _GPU_BUDGET if device.type == "cuda" else _CPU_BUDGET
    hidden = getattr(config, "hidden_size", None) or reference_hidden
    return int(min(high, max(low, budget * reference_hidden // hidden)))


class TruncationWarning(UserWarning):
    """Some inputs were longer than the model's limit and were truncated."""


@dataclass
class ScoreResult:
    """Scores of one call, in input order (fields: docs/scoring.md, "Python API"). ``score_std`` is the population
    std of the score across the MC passes (zeros when ``passes == 1``); ``tokens`` counts input tokens once per row."""

    kind: str
    scores: np.ndarray
    probabilities: dict[str, np.ndarray]
    score_std: np.ndarray
    passes: int
    mode: str | None = None
    tokens: int = 0
    truncated: int = 0
    details: dict[str, int] = field(default_factory=dict)
    sentences: list[list[dict[str, Any]]] | None = None
    provenance: dict[str, Any] | None = None
    index: Any = None  # the caller's pandas index, kept by to_frame()
    timings: dict[str, float] = field(default_factory=dict)  # seconds: tokenize, forward, wait (for tokens), wall

    def __len__(self) -> int:
        return len(self.scores)

    def to_frame(self):
        """One row per input, the output columns of :attr:`columns`, indexed like the caller's Series/DataFrame."""
        import pandas as pd

        return pd.DataFrame(self.rows(), columns=self.columns, index=self.index)

    @property
    def columns(self) -> list[str]:
        """Output columns: ``score``, ``prob_<label>`` ..., ``score_std`` under MC dropout, ``details`` when asked."""
        shown = {"score_std": self.passes > 1, "details": self.sentences is not None}
        return ["score", *(f"prob_{label}" for label in self.probabilities), *(name for name in shown if shown[name])]

    def row(self, i: int) -> dict[str, float]:
        values = {"score": self.scores, **{f"prob_{label}": p for label, p in self.probabilities.items()},
                  "score_std": self.score_std}
        return {name: self.sentences[i] if name == "details" else float(values[name][i]) for name in self.columns}

    def rows(self) -> list[dict[str, float]]:
        return [self.row(i) for i in range(len(self))]

    @classmethod
    def merge(cls, parts: Sequence[tuple[np.ndarray, ScoreResult]], n_rows: int) -> ScoreResult:
        """Reassemble shards scored elsewhere: ``(input indices, result)`` pairs -> one result in input order."""
        first = parts[0][1]
        scores, std = np.zeros(n_rows), np.zeros(n_rows)
        probs = {label: np.zeros(n_rows) for label in first.probabilities}
        sentences = None if first.sentences is None else [[] for _ in range(n_rows)]
        details: Counter[str] = Counter()
        for indices, part in parts:
            scores[indices], std[indices] = part.scores, part.score_std
            details.update(part.details)
            for label in probs:
                probs[label][indices] = part.probabilities[label]
            if sentences is not None:
                for index, row in zip(indices, part.sentences, strict=True):
                    sentences[index] = row
        return cls(first.kind, scores, probs, std, first.passes, first.mode,
                   sum(p.tokens for _, p in parts), sum(p.truncated for _, p in parts), dict(details), sentences,
                   first.provenance)


class Scorer:
    """A loaded metric: call :meth:`score`. Build it with :func:`load_scorer`."""

    def __init__(self, model, tokenizer, *, kind: str, label_ids: dict[str, int], card: dict[str, Any] | None,
                 device: torch.device, dtype: torch.dtype, max_length: int, source: str,
                 options: ScoringOptions | None = None, model_dir: str | os.PathLike | None = None):
        options = options or ScoringOptions()
        self.model, self.tokenizer, self.kind, self.label_ids = model, tokenizer, kind, label_ids
        self.card, self.device, self.dtype, self.source = card, device, dtype, source
        self.model_dir = Path(model_dir) if model_dir is not None else Path(source).expanduser()
        # (sha256, files), hashed once: when first asked, or by the ONNX engine, which checks its graph against them
        self._weights: tuple[str | None, list[str]] | None = model.weights if options.engine == "onnx" else None
        self.splitter, self.joiner = map(loading.preprocessing_of(card).get, ("splitter", "joiner"))
        card_mode = ((card or {}).get("scoring") or {}).get("default_mode")
        nli = kind == "faithfulness"
        # every default decided, once: provenance, the resume fingerprint and the accessors below read it
        self.options = dataclasses.replace(
            options, device=device.type, precision=provenance.precision_name(dtype),
            mode=one_of(options.mode or card_mode or "e-c", MODES, "mode") if nli else None,
            mc_samples=max(1, options.mc_samples),
            max_length=check_max_length(max_length, tokenizer, pair=nli, what="max_length"),
            max_tokens=options.max_tokens or default_max_tokens(model.config, device),
            label_order=tuple(sorted(label_ids, key=label_ids.__getitem__)) if nli else options.label_order,
            tokenizer_workers=tokenizer_workers(options.tokenizer_workers, device.type, torch.get_num_threads(),
                                                processes_on_this_machine()))
        self.max_tokens = self.options.max_tokens  # halved after an out-of-memory error, for the scorer's lifetime
        self.dropout_stream = DropoutStream(self.options.seed, device)
        # compiled once, sharing the model's weights and train/eval flags (--engine onnx: the ONNX Runtime session)
        self._forward_model = torch.compile(model, dynamic=True) if self.compiled else model
        self._tokenizers = TokenizerCopies(tokenizer)
        self.timings = Timings()  # the last call's

    mode = property(lambda self: self.options.mode)
    mc_samples = property(lambda self: self.options.mc_samples)
    premise_strategy = property(lambda self: self.options.premise_strategy)
    granularity = property(lambda self: self.options.granularity)
    max_length = property(lambda self: self.options.max_length)
    batch_size = property(lambda self: self.options.batch_size)
    tokenizer_workers = property(lambda self: self.options.tokenizer_workers)
    compiled = property(lambda self: self.options.compile)

    @staticmethod
    def _check_passes(mc_samples: int | None) -> int:
        """K Monte-Carlo passes; 0 and 1 both mean one deterministic pass."""
        return max(1, int_at_least(1 if mc_samples is None else mc_samples, 0, "mc_samples"))

    @property
    def label_names(self) -> list[str]:
        """Label names in output column order (``coherent`` first; ``entailment, neutral, contradiction``)."""
        return sorted(self.label_ids, key=_COLUMN_ORDER.index)

    def __repr__(self) -> str:
        return (f"Scorer(kind={self.kind!r}, source={self.source!r}, device={str(self.device)!r}, "
                f"dtype={self.dtype}, max_length={self.max_length}, mode={self.mode!r}, mc_samples={self.mc_samples})")

    def provenance(self, *, mode: str | None = None, mc_samples: int | None = None,
                   premise_strategy: str | None = None, granularity: str | None = None, seed: int | None = None,
                   **extra: Any) -> dict[str, Any]:
        """The provenance record of this scorer's scores, weights hashed once; arguments are a call's overrides (as in
        :meth:`score`), ``extra`` keys (``input=``, ...) are added. Without a per-call ``seed`` it names the scorer's:
        per-row masks repeat in every call (a compiled forward's torch stream continues from call to call instead)."""
        if self._weights is None:
            self._weights = provenance.weights_sha256(self.model_dir) if self.model_dir.is_dir() else (None, [])
        model, revision = provenance.model_identity(self.source, self.model_dir)
        calls = {"mode": mode, "premise_strategy": premise_strategy, "granularity": granularity,
                 "mc_samples": None if mc_samples is None else self._check_passes(mc_samples),
                 "seed": self.dropout_stream.seed if seed is None else seed}
        settings = self.options.applying(self.kind)
        if "mc_masks" in settings:  # the masks the scores came from: a compiled graph draws its own (inductor's)
            settings["mc_masks"] = "compiled" if self.options.compile else self.options.mc_masks
        if self.options.engine == "onnx":  # the graph that made the scores, beside the weights it came from
            settings["onnx_sha256"] = self._forward_model.sha256
        applies = {spec.name for spec in dataclasses.fields(self.options) if of_kind(self.kind)(spec)}
        settings.update({name: value for name, value in calls.items() if value is not None and name in applies})
        return provenance.build_record(
            metric=self.kind, model=model, revision=revision, weights_sha256=self._weights[0],
            weights_files=self._weights[1], labels={label: self.label_ids[label] for label in self.label_names},
            **settings, **extra)

    def coherence_inputs(self, texts: Sequence[str] | None = None,
                         sentences: Sequence[Sequence[str]] | None = None) -> list[str]:
        """Model inputs as in training (inputs already checked): ``text`` is split with the card's splitter and
        re-joined with its joiner; a ``sentences`` list is joined with the joiner."""
        joiner = self.joiner if self.joiner is not None else DEFAULT_JOINER
        if sentences is not None:
            return [join_sentences(s, joiner) for s in sentences]
        if self.splitter is None:
            return list(texts)
        split = get_splitter(self.splitter)
        return [join_sentences(split(text) or [text.strip()], joiner) for text in texts]

    def score(self, *positional: Any, texts: Sequence[str] | None = None,
              sentences: Sequence[Sequence[str]] | None = None,
              groundings: Sequence[str] | None = None, generations: Sequence[str] | None = None,
              mode: str | None = None, mc_samples: int | None = None, premise_strategy: str | None = None,
              granularity: str | None = None, details: bool = False, seed: int | None = None,
              progress: Callable[[float], None] | None = None) -> ScoreResult:
        """Score ``texts``/``sentences`` (coherence) or ``groundings``/``generations`` pairs, also positionally or as a
        DataFrame with the CLI's columns. ``mode`` ... ``granularity`` override the scorer's settings for this call;
        ``details=True`` fills ``result.sentences``; ``seed`` reseeds the MC masks from this call on."""
        details = flag(details, "details")  # True or False: 'no' is truthy
        texts, groundings, generations = self._positional(positional, texts, sentences, groundings, generations)
        if hasattr(texts, "columns"):  # a DataFrame with named columns, as the CLI reads a file
            texts, sentences, groundings, generations = self._columns(texts)
        groundings, generations = by_label(("groundings", groundings), ("generations", generations),
                                           same_as_given=True)
        index = next((v.index for v in (texts, sentences, groundings, generations) if hasattr(v, "iloc")), None)
        if self.kind == "coherence":
            if groundings is not None or generations is not None:
                raise UserError("this is a coherence model: pass texts= or sentences=, not groundings/generations")
            if (texts is None) == (sentences is None):
                raise UserError("pass exactly one of texts= or sentences=")
            inputs = {"sentences": sentence_lists(sentences, "sentences")} if sentences is not None else {
                "texts": text_list(texts, "texts")}
        else:
            if texts is not None or sentences is not None:
                raise UserError("this is a faithfulness (NLI) model: pass groundings= and generations=")
            if groundings is None or generations is None:
                raise UserError("pass both groundings= and generations=")
            inputs = {"groundings": text_list(groundings, "groundings"),
                      "generations": text_list(generations, "generations")}
        result = self.score_validated(**inputs, mode=mode, mc_samples=mc_samples, premise_strategy=premise_strategy,
                                      granularity=granularity, details=details, seed=seed, progress=progress)
        result.provenance = self.provenance(mode=mode, mc_samples=mc_samples, premise_strategy=premise_strategy,
                                            granularity=granularity, seed=seed)
        result.index = index
        return result

    def _positional(self, positional: tuple, texts: Any, sentences: Any, groundings: Any,
                    generations: Any) -> tuple[Any, Any, Any]:
        """(texts, groundings, generations) with the positional inputs of :meth:`score` put in their place."""
        if not positional:
            return texts, groundings, generations
        if any(value is not None for value in (texts, sentences, groundings, generations)):
            raise UserError("pass the inputs positionally or by keyword (texts=, groundings=, ...), not both")
        if len(positional) == 1 and (hasattr(positional[0], "columns") or self.kind == "coherence"):
            return positional[0], None, None
        if len(positional) == 2 and self.kind == "faithfulness":
            return None, positional[0], positional[1]
        expected = "score(texts) or score(frame)" if self.kind == "coherence" else (
            "score(groundings, generations) or score(frame)")
        raise UserError(f"a {self.kind} scorer takes {expected}; got {len(positional)} positional argument(s)")

    def _columns(self, frame: Any) -> tuple[Any, Any, Any, Any]:
        """(texts, sentences, groundings, generations) from a DataFrame's columns, named as the CLI's defaults."""
        wanted = ("text", "sentences") if self.kind == "coherence" else ("grounding", "generation")
        present = [name for name in wanted if name in frame.columns]
        if self.kind == "coherence" and present:
            return (frame[present[0]], None, None, None) if present[0] == "text" else (None, frame["sentences"],
                                                                                      None, None)
        if self.kind == "faithfulness" and len(present) == 2:
            return None, None, frame["grounding"], frame["generation"]
        need = "a 'text' or 'sentences' column" if self.kind == "coherence" else "'grounding' and 'generation' columns"
        raise UserError(f"a DataFrame to score needs {need}; it has {list(map(str, frame.columns))}")

    def score_validated(self, *, texts: list[str] | None = None, sentences: list[list[str]] | None = None,
                        groundings: list[str] | None = None, generations: list[str] | None = None,
                        mode: str | None = None, mc_samples: int | None = None, premise_strategy: str | None = None,
                        granularity: str | None = None, details: bool = False, seed: int | None = None,
                        progress: Callable[[float], None] | None = None) -> ScoreResult:
        """:meth:`score` for inputs a reader has already checked row by row (the file runner): no second pass."""
        passes = self._check_passes(mc_samples if mc_samples is not None else self.mc_samples)
        if self.kind == "coherence" and details:
            raise UserError("details= is for faithfulness scoring (per generation sentence)")
        if self.kind == "faithfulness":
            if len(groundings) != len(generations):
                raise UserError(f"groundings ({len(groundings)}) and generations ({len(generations)}) differ in length")
            # None: the scorer's setting; any other value is checked ('' was the scorer's setting, silently)
            strategy = one_of(self.premise_strategy if premise_strategy is None else premise_strategy,
                              PREMISE_STRATEGIES, "premise strategy")
            units = one_of(self.granularity if granularity is None else granularity, GRANULARITIES, "granularity")
            mode = one_of(self.mode if mode is None else mode, MODES, "mode")
        if progress is not None and not callable(progress):
            raise UserError(f"progress= takes a function of the rows done (or None), got {progress!r:.40}")
        if seed is not None:
            self.dropout_stream.reseed(ScoringOptions.checked_seed(seed))
        self.timings = Timings()
        start = time.perf_counter()
        try:
            if self.kind == "coherence":
                result = self._run_whole(self.coherence_inputs(texts, sentences), None, passes, None, progress)
            elif strategy == "truncate" and units == "document":
                result = self._run_whole(groundings, generations, passes, mode, progress)
                if details:
                    result.sentences = [[{"sentence": h, "score": float(s), "unit": 0, "support": p}]
                                        for p, h, s in zip(groundings, generations, result.scores, strict=True)]
            else:
                result = self._run_units(groundings, generations, units, mode, passes, progress, details)
        finally:
            self.timings.wall = time.perf_counter() - start
        result.timings = self.timings.to_json()
        return result

    def _batch_settings(self) -> BatchSettings:
        """How rows become batches on this scorer's device (bench/bench_pipeline.py times forwards with them)."""
        return BatchSettings(self.max_tokens, self.batch_size, self.tokenizer.pad_token_id or 0,
                             getattr(self.tokenizer, "padding_side", "right"),
                             8 if self.device.type == "cuda" else None)

    def _predict(self, first: list[str], second: list[str] | None, passes: int,
                 progress: Callable[[float], None] | None) -> tuple[np.ndarray, FeedCounts]:
        """Class probabilities ``(passes, rows, classes)`` of texts or pairs, tokenized slice by slice ahead of the
        model (:mod:`learned_metrics.scoring.pipeline`), and their token counts and truncation flags."""
        def encode_rows(tokenizer, rows):
            return encode(tokenizer, [first[i] for i in rows], None if second is None else [second[i] for i in rows],
                          self.max_length)

        columns = (first,) if second is None else (first, second)
        feed = SliceFeed(slices_longest_first(*columns), encode_rows, self._tokenizers, self.tokenizer_workers,
                         self.timings)
        settings = self._batch_settings()
        if self.options.engine == "onnx":
            dataclasses.replace(self.options, mc_samples=passes)  # a per-call --mc-samples: refused as at load
        try:
            if passes == 1:
                self.model.eval()
                return predict_feed(self._forward_model, feed, len(first), 1, settings, self.device, progress)
            if self.options.torch_masks:  # torch's own masks from the scorer's stream (a compiled graph cannot
                # take per-row masks; --mc-masks torch asks for them)
                with self.dropout_stream.active(), mc_dropout_mode(self.model):
                    return predict_feed(self._forward_model, feed, len(first), passes, settings, self.device, progress)
            seed = self.dropout_stream.seed
            masks = KeyedDropout(int(torch.randint(0, 2**62, (1,)).item()) if seed is None else seed)
            with mc_dropout_mode(self.model, masks):
                return predict_feed(self._forward_model, feed, len(first), passes, settings, self.device, progress,
                                    masks)
        finally:
            self.max_tokens = settings.max_tokens  # a budget halved after an out-of-memory error stays halved

    def _run_whole(self, first: list[str], second: list[str] | None, passes: int, mode: str | None,
                   progress) -> ScoreResult:
        """Each text, or each pair the paper's way: whole, the premise truncated when the pair is too long."""
        probs, encoded = self._predict(first, second, passes, progress)
        truncated = int(encoded.truncated.sum())
        if second is None:
            return self._result(probs, passes, mode, encoded.tokens, truncated, {}, "the end of the text was cut")
        both = int(encoded.second_truncated.sum())
        how = "the premise was truncated (use premise_strategy='chunk' to score whole groundings)" + (
            f"; in {both} of them the generation alone was too long and was cut as well" if both else "")
        return self._result(probs, passes, mode, encoded.tokens, truncated, {"generation_truncated": both}, how)

    def _run_units(self, premises: list[str], hypotheses: list[str], granularity: str, mode: str, passes: int,
                   progress, details: bool) -> ScoreResult:
        """Generation sentences against grounding units, best unit per sentence (:mod:`.units`)."""
        plan = plan_units(self.tokenizer, premises, hypotheses, self.max_length, get_splitter("pysbd"), granularity,
                          self.options.chunk_tokens, self.options.claim_split == "whole")
        probs = np.zeros((passes, len(premises), self.model.config.num_labels))
        rows: list[list[dict]] | None = [] if details else None
        tokens, truncated = 0, 0
        scale = len(premises) / max(1, len(plan))
        advance = (lambda n: progress(n * scale)) if progress else None
        for row_slice, group in plan.split(MAX_PAIRS_PER_STREAM):
            pair_probs, encoded = self._predict(group.premises, group.hypotheses, passes, advance)
            probs[:, row_slice, :], choice = aggregate_units(pair_probs, group,
                                                             self._scores_from_probs(pair_probs, mode))
            if rows is not None:
                rows.extend(sentence_details(group, choice))
            tokens += encoded.tokens
            truncated += len(np.unique(group.row_of_sentence[group.sentence_of_pair[encoded.truncated]]))
        return self._result(probs, passes, mode, tokens, truncated, {"chunked_rows": plan.chunked_rows,
                            "pairs": len(plan)}, "a unit or sentence longer than the limit was cut", rows)

    def _result(self, probs: np.ndarray, passes: int, mode: str | None, tokens: int, truncated: int,
                details: dict[str, int], how: str, sentences: list[list[dict]] | None = None) -> ScoreResult:
        """Average the probabilities over passes, then apply the mode; std of the per-pass scores. Truncated rows
        are reported once, saying ``how`` they were cut."""
        if truncated:
            warnings.warn(f"{truncated} of {probs.shape[1]} rows were longer than max_length={self.max_length} tokens; "
                          f"{how}", TruncationWarning, stacklevel=3)
        mean = probs.mean(axis=0)
        std = self._scores_from_probs(probs, mode).std(axis=0) if passes > 1 else np.zeros(probs.shape[1])
        probabilities = {label: mean[:, self.label_ids[label]] for label in self.label_names}
        return ScoreResult(self.kind, self._scores_from_probs(mean[None], mode)[0], probabilities, std, passes, mode,
                           tokens, truncated, details, sentences)

    def _scores_from_probs(self, probs: np.ndarray, mode: str | None) -> np.ndarray:
        if self.kind == "coherence":
            return probs[..., self.label_ids["coherent"]]
        entailment = probs[..., self.label_ids["entailment"]]
        return entailment if mode == "e" else entailment - probs[..., self.label_ids["contradiction"]]


@takes(ScoringOptions)
def load_scorer(model: str | os.PathLike | safety.ModelFolder, *, kind: str | None = None,
                settings: ScoringOptions) -> Scorer:
    """Load an export folder, a plain transformers classifier folder (faithfulness unless ``kind="coherence"``), or
    a Hub id; a local folder already checked (a :class:`~learned_metrics.safety.ModelFolder`) is not checked again.
    The options are :class:`~learned_metrics.scoring.options.ScoringOptions`' fields (the score flags), as keywords
    or one ``settings=`` object; ``max_length`` defaults to the card's training length, capped by the model's;
    ``seed=None``: the global RNG."""
    if settings.engine == "ray":
        raise UserError("engine='ray' is the file engine of `learned-metrics score --engine ray` and of "
                        "ray_engine.score_dataset; load_scorer runs the model in this process: engine='torch' or "
                        "'onnx'")
    # checked once, before anything reads it (no custom code, tokenizer files present); the loaders take it as is:
    # a checked local folder is kept as it is, a Hub id is downloaded, then its folder checked
    given = model.given if isinstance(model, safety.ModelFolder) else model
    if isinstance(model, safety.ModelFolder) and Path(model.source).is_dir():
        model_dir, folder = Path(model.source), safety.check_model_folder(model)
    else:
        model_dir = loading.resolve_model_dir(given)
        folder = safety.check_model_folder(model_dir)
    card = read_card(model_dir)
    config = safety.load_config(folder)
    metric_kind = loading.decide_kind(card, kind, model_dir)
    loading.require_classifier_architecture(config, model_dir)
    label_ids = loading.resolve_labels(config, metric_kind, settings.label_order)
    tokenizer = safety.load_tokenizer(folder)
    # under ``accelerate launch`` each process has its own device
    launched = launched_world_size() > 1 and torch.cuda.is_available()
    local = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0"))) if launched else None
    target = resolve_device(settings.device, local) if settings.engine == "torch" else torch.device("cpu")
    dtype = resolve_dtype(settings.precision, target)
    if settings.engine == "onnx":  # the graph replaces the weights: the PyTorch model is never loaded
        from learned_metrics.scoring.onnx_engine import OnnxClassifier

        classifier = OnnxClassifier(model_dir, settings.onnx_precision, config)
    else:
        classifier = loading.load_classifier(folder, config, dtype, settings.allow_pickle).to(target)
    limit = loading.model_input_limit(config, tokenizer)
    length = min(settings.max_length or loading.preprocessing_of(card).get("max_length") or limit, limit)
    return Scorer(classifier, tokenizer, kind=metric_kind, label_ids=label_ids, card=card, device=target,
                  dtype=dtype, max_length=length, source=str(given), options=settings, model_dir=model_dir)
