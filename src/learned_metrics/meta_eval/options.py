"""Every meta-evaluation option, declared once: the ``meta-eval`` flags, the API keywords' defaults and checks.

An :class:`Option` carries its name, default, allowed values or range, help and check. The CLI builds its
arguments from it (:func:`add_options`), the Python API takes its defaults (``resamples: int =
DEFAULTS.resamples``) and its checks (:func:`check`) from it, so the parser and the API refuse the same values
with the same words. A name means one thing everywhere: ``--resamples`` counts bootstrap resamples and
``--permutations`` permutations, in every command. Importable without numpy, so ``--help`` stays fast.

Settings that differ between analyses for a reason (``systems`` runs many tests at once: 10,000 permutations and
Holm by default) are separate declarations here, not overrides written in a command.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from learned_metrics import validate
from learned_metrics.errors import UserError
from learned_metrics.text.proxies import FIRST_PERSON_FORMS
from learned_metrics.text.sentences import SPLITTERS
from learned_metrics.validate import int_option, one_of

COEFFICIENTS = ("kendall", "pearson", "spearman")
STATISTICS = ("tau_sys", "tau_sum", "tau_pair", "acc_pair", "tau_intra")
RESAMPLE_MODES = ("both", "systems", "documents")
SWAP_MODES = ("cell", "system", "document")
ALTERNATIVES = ("greater", "two-sided")
CORRECTIONS = ("none", "bonferroni", "holm")
CI_METHODS = ("bootstrap", "fisher")
WILLIAMS_MODES = ("abs", "signed")
CORRELATION_TESTS = ("permutation", "bootstrap", "williams")
SYSTEM_TESTS = ("permutation", "bootstrap", "t")
ON_MISSING = ("error", "drop")
HUMAN_FORMATS = ("rows", "summeval")
SCORED_FORMATS = ("rows", "true")
# ``meta-eval benchmark``: how the supported/unsupported threshold is set, the grid a tuning protocol searches,
# and the benchmark layouts (:mod:`learned_metrics.meta_eval.benchmarks_io`).
THRESHOLD_PROTOCOLS = ("fixed", "tune-on-val", "same-split")
THRESHOLD_GRIDS = ("percentile", "fixed-0.001")
TUNE_SCOPES = ("dataset", "global")
UNSEEN_DATASETS = ("error", "global")
BENCHMARK_LAYOUTS = ("auto", "llm-aggrefact", "aggrefact", "summac", "true")

# How a coefficient is named for readers: words, the symbol a column heading takes, and its LaTeX.
COEFFICIENT_NAMES = {"kendall": ("Kendall tau-b", "tau", r"\tau"), "pearson": ("Pearson r", "r", "r"),
                     "spearman": ("Spearman rho", "rho", r"\rho")}


@dataclass(frozen=True)
class Option:
    """One option: ``name`` is the API keyword (``--name-with-dashes`` on the command line).

    ``kind``: ``choice`` (one of ``choices``), ``list`` (comma-separated or an ordered sequence, each one of
    ``choices``), ``int`` (>= ``minimum``), ``fraction`` (strictly between 0 and 1), ``number`` (finite), ``field``
    (a field name), ``text``, ``flag`` (True or False).
    ``noun`` names the setting in messages; ``deprecated`` are old spellings that still work one release, with
    a line on standard error.
    """

    name: str
    default: Any
    help: str
    kind: str = "choice"
    choices: tuple[str, ...] | None = None
    minimum: int | None = None
    noun: str | None = None
    metavar: str | None = None
    deprecated: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def what(self) -> str:
        return self.noun or self.name.replace("_", " ")

    def check(self, value: Any) -> Any:
        """The value if allowed (ints normalized, lists as tuples), else a one-line :class:`UserError` naming the
        flag and the keyword: every kind goes through its strict parser in :mod:`learned_metrics.validate`."""
        if value is None and (self.default is None or self.kind in ("field", "text")):
            return value
        keyword = f"{self.name}="
        if self.kind == "choice":
            return one_of(value, self.choices, self.what)
        if self.kind == "list":
            items = validate.ordered(value, self.flag, also=keyword)
            unknown = [item for item in items if item not in self.choices]
            if unknown or not items:
                raise UserError(f"unknown {self.what} {unknown or list(items)}, expected some of: "
                                f"{', '.join(self.choices)}")
            return items
        if self.kind == "int":
            return validate.int_at_least(value, self.minimum, self.flag, also=keyword)
        if self.kind == "fraction":
            return validate.fraction(value, self.flag, also=keyword)
        if self.kind == "number":
            return validate.finite(value, self.flag, also=keyword)
        if self.kind == "flag":
            return validate.flag(value, self.flag, also=keyword)
        return value

    def add_to(self, parser: Any) -> None:
        """The ``argparse`` argument: type and range from the declaration, help ending with the default."""
        kwargs: dict[str, Any] = {"dest": self.name, "help": self._help()}
        if self.kind == "flag":
            parser.add_argument(self.flag, action="store_true", **kwargs)
            return
        kwargs["default"] = self.default
        if self.kind == "choice":
            kwargs["choices"] = self.choices
        elif self.kind == "int":
            kwargs["type"] = int_option(self.minimum)
            kwargs["metavar"] = self.metavar or "N"
        elif self.kind == "fraction":
            kwargs["type"] = fraction_type
        else:
            kwargs["metavar"] = self.metavar or ("F" if self.kind == "field" else "LIST")
        kwargs.update(self.extra)
        if self.deprecated:
            parser.add_argument(*self.deprecated, dest=self.name, type=kwargs.get("type"), help=argparse.SUPPRESS,
                                action=_deprecated(self.flag), default=argparse.SUPPRESS)
        parser.add_argument(self.flag, **kwargs)

    def _help(self) -> str:
        if self.kind == "flag" or self.default is None or "(default" in self.help:
            return self.help
        shown = ",".join(self.default) if isinstance(self.default, tuple) else self.default
        return f"{self.help} (default: {shown})".replace("%", "%%")


def fraction_type(text: str) -> float:
    """An argparse ``type`` for a level strictly between 0 and 1 (alpha, confidence)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1), got {text!r}") from None
    if not 0 < value < 1 or math.isnan(value):
        raise argparse.ArgumentTypeError(f"must be in (0, 1), got {text}")
    return value


def _deprecated(new_flag: str) -> type[argparse.Action]:
    class Deprecated(argparse.Action):
        def __call__(self, parser, namespace, values, option_string=None):
            print(f"note: {option_string} is deprecated and will be removed in the next release; use {new_flag}",
                  file=sys.stderr)
            setattr(namespace, self.dest, values)

    return Deprecated


def split_list(text: str | None) -> list[str] | None:
    """``a,b , c`` -> ``["a", "b", "c"]`` (None stays None)."""
    return None if text is None else [part.strip() for part in text.split(",") if part.strip()]


def baseline_names(value: str | Sequence[str] | None) -> tuple[str, ...]:
    """``--baseline``/``baseline=``: what the others are compared against, the same in ``report``, ``benchmark`` and
    ``systems``. One name or an ordered sequence of distinct names; () = every pair."""
    if value is None:
        return ()
    names = (value,) if isinstance(value, str) else value
    if isinstance(names, (set, frozenset)) or not isinstance(names, Sequence) \
            or not all(isinstance(name, str) and name for name in names):
        raise UserError(f"--baseline: expected a name or a list of names, got {value!r:.80}")
    if len(set(names)) != len(names):
        raise UserError(f"--baseline names a metric or system twice: {list(names)}")
    return tuple(names)


def _declare(*options: Option) -> dict[str, Option]:
    return {option.name: option for option in options}


RESAMPLES_HELP = "bootstrap resamples behind every CI and the paired bootstrap test; 0 = neither"

OPTIONS = _declare(
    # what is computed
    Option("coefficient", "kendall", "correlation coefficient: kendall (tau-b), pearson (r) or spearman (rho)",
           choices=COEFFICIENTS),
    Option("stats", STATISTICS, "statistics to report, comma-separated", kind="list", choices=STATISTICS,
           noun="statistic(s)"),
    # resampling and tests
    Option("resamples", 1000, RESAMPLES_HELP, kind="int", minimum=0),
    Option("resample", "both", "what the bootstrap redraws with replacement (both: Deutsch et al. 2021's "
           "recommendation)", choices=RESAMPLE_MODES, noun="resample mode"),
    Option("permutations", 1000, "permutations of the permutation (approximate randomization) test", kind="int",
           minimum=1),
    Option("swap", "cell", "unit whose scores the two metrics trade in a permutation", choices=SWAP_MODES,
           noun="swap mode"),
    Option("seed", 0, "random seed of every resample and permutation", kind="int", minimum=0),
    Option("confidence", 0.95, "level of every confidence interval", kind="fraction"),
    Option("ci_method", "bootstrap", "bootstrap: percentile bootstrap; fisher: Fisher-z interval with Bonett & "
           "Wright's constants per coefficient, n = items of one correlation (none for acc_pair)",
           choices=CI_METHODS, noun="CI method"),
    Option("alternative", "greater", "greater: one-sided, 'A better than B'; two-sided: 'A and B differ'",
           choices=ALTERNATIVES),
    Option("correction", "none", "multiple-comparison correction of the p-values over the pairs compared",
           choices=CORRECTIONS),
    Option("williams", "abs", "Williams' test on |r| of all three correlations as the WMT scripts and nlpstats, "
           "or on signed r", choices=WILLIAMS_MODES, noun="Williams mode"),
    Option("test", "permutation", "the test behind the significance markers", choices=CORRELATION_TESTS),
    Option("alpha", 0.05, "significance level of the markers", kind="fraction"),
    Option("baseline", None, "compare against this one only (repeatable): report and benchmark mark significant "
           "improvements over it, systems tests every system against it (default: every pair)", kind="text",
           metavar="NAME", extra={"action": "append"}),
    Option("workers", None, "processes for the metric pairs (and report columns) run side by side; results do not "
           "depend on it (default: every core this process may use)", kind="int", minimum=1),
    # reading the files
    Option("on_missing", "error", "keys in one file only, duplicate metric rows, NaN scores: stop with an error, "
           "or drop them and print how many", choices=ON_MISSING, noun="--on-missing"),
    Option("human_format", "rows", "rows: one row per summary or per annotation; summeval: the SummEval release "
           "file", choices=HUMAN_FORMATS, noun="--human-format"),
    Option("format", "rows", "rows: any scored rows, the corpus from --group-field or the file name in a folder; "
           "true: TRUE benchmark files, the corpus from the file name", choices=SCORED_FORMATS, noun="--format"),
    Option("delta_band", None, "a band of |metric system-score difference|, LO <= |delta| < HI, HI may be inf "
           "(repeatable)", kind="text", extra={"nargs": 2, "action": "append", "type": float,
                                               "metavar": ("LO", "HI")}),
    Option("first_person", "all", "first-person forms the first_person proxy counts: all = I, me, my, mine, myself, "
           "we, us, our, ours, ourselves; i = the pronoun I only, as the coherence paper counts it",
           choices=tuple(FIRST_PERSON_FORMS), noun="--first-person"),
    # shuffle-test --length-gap: a bucket's CI is a proportion's; below ~30 comparisons it is a handful of values
    Option("min_bucket_pairs", 30, "length-gap buckets with fewer (original, shuffled) comparisons are merged with "
           "their smaller neighbour until each has at least N, so every bucket's CI means something; 0 = keep all "
           "21 buckets of 20 characters", kind="int", minimum=0),
    # benchmarks (meta-eval benchmark): the threshold protocol is a required, visible choice
    Option("threshold_protocol", None, "how the supported/unsupported threshold is set (required): fixed = "
           "--threshold, 0.5 unless given (MiniCheck/LLM-AggreFact; TRUE's accuracy); tune-on-val = tuned on "
           "--tune-split, applied to --split (AggreFact, AlignScore); same-split = tuned on the very rows it is "
           "judged on (SummaC's code: optimistic)", choices=THRESHOLD_PROTOCOLS, noun="threshold protocol",
           extra={"required": True}),
    Option("threshold", None, "the fixed threshold T: a row is predicted supported when its score > T (default "
           "with --threshold-protocol fixed: 0.5)", kind="number", metavar="T", extra={"type": float}),
    Option("grid", None, "thresholds a tuning protocol tries (default: percentile): percentile = the score "
           "percentiles 0, 0.2, ..., 99.8 of the tuning rows, ties to the later threshold (SummaC, AggreFact); "
           "fixed-0.001 = 0, 0.001, ..., 1, ties to the lowest (AlignScore)", choices=THRESHOLD_GRIDS,
           noun="threshold grid"),
    Option("split", None, "the split judged, from a cut/split field or a dev/val/test word in the file name "
           "(default: test when the rows have splits, else every row)", kind="text", metavar="NAME"),
    Option("tune_split", None, "the split tune-on-val tunes on (default: whichever of val, dev, valid, validation the "
           "rows have)", kind="text", metavar="NAME"),
    Option("tune_scope", None, "one threshold per dataset (default; every reference code) or one for all datasets "
           "pooled", choices=TUNE_SCOPES, noun="--tune-scope"),
    Option("unseen_dataset", None, "a dataset of --split without rows in --tune-split: error (default), or global = "
           "the threshold tuned on the whole --tune-split, said in a note", choices=UNSEEN_DATASETS,
           noun="--unseen-dataset"),
    Option("layout", "auto", "benchmark layout of the scored files: auto (from the columns), llm-aggrefact, "
           "aggrefact, summac or true", choices=BENCHMARK_LAYOUTS, noun="--layout"),
    Option("sota", False, "AggreFact: keep the SOTA subset only (model_name BART, PegasusDynamic, T5 or Pegasus), "
           "as aggre_fact_sota.csv", kind="flag"),
    Option("published_scores", False, "AggreFact: also judge every <Metric>_score column of the first --metric as a "
           "metric named <Metric> (the baselines the release ships)", kind="flag"),
)

# Field names: which field of the input rows holds what.
FIELDS = _declare(
    Option("doc_field", "doc_id", "document key field", kind="field"),
    Option("system_field", "system_id", "system key field", kind="field"),
    Option("human_field", "score", "human score field; with --human-format summeval one of coherence, consistency, "
           "fluency, relevance", kind="field"),
    Option("metric_field", "score", "metric score field", kind="field"),
    Option("score_field", "score", "score field", kind="field"),
    Option("label_field", "label", "0/1 label field (1 = faithful/consistent; in a shuffle test 1 = original, 0 = "
           "shuffled)", kind="field"),
    Option("pair_field", "doc_id", "comparison-set id field: an original and its shuffles share it", kind="field"),
    Option("text_field", "text", "text whose length in characters is used", kind="field"),
    Option("length_field", None, "numeric length field (characters), instead of the text", kind="field"),
    Option("group_field", None, "corpus/group field, e.g. corpus (default: the file name inside a folder, else one "
           "group)", kind="field"),
    Option("names", None, "comma-separated metric names (default: file stems)", kind="text", metavar="A,B"),
)

# ``meta-eval systems`` compares many systems at once: more permutations, Holm by default, 0 skips a statistic.
SYSTEM_OPTIONS = _declare(
    Option("test", "permutation", "the test whose p decides significance", choices=SYSTEM_TESTS),
    Option("correction", "holm", "multiple-comparison correction of the p-values over all tests",
           choices=CORRECTIONS),
    Option("permutations", 10000, "permutations per pair; 0 = no p perm. A p-value is at least 1/(k+1), which the "
           "correction multiplies by the number of tests", kind="int", minimum=0),
)

# ``meta-eval confounders``: the human column is a label (or score) of the same rows, not a separate file.
CONFOUNDER_OPTIONS = _declare(
    Option("human_field", "label", "human label/score, reported as the row 'human'", kind="field"),
    Option("generation_field", None, "the scored text (default: generation; with --format true: generated_text; "
           "coherence files: text)", kind="field"),
    Option("grounding_field", "grounding", "the source text, for the overlap proxy", kind="field"),
    Option("proxies", None, "built-in proxies (default: chars,tokens,sentences,overlap,first_person; overlap only "
           "when the rows have the grounding field); '' for none", kind="text", metavar="LIST"),
    Option("splitter", "pysbd", "sentence splitter of the sentences proxy", choices=SPLITTERS,
           noun="sentence splitter"),
)

# ``meta-eval benchmark``: the dataset of a row comes from the layout unless a field is named.
BENCHMARK_GROUP_FIELD = Option("group_field", None, "field naming each row's dataset (default: dataset; AggreFact: "
                               "origin, as its CNN/DM and XSum tables; TRUE: the file name)", kind="field")

# ``meta-eval compare``: its bootstrap was ``--bootstrap-resamples`` before every command used ``--resamples``; the
# same declaration with the old spelling kept one release.
COMPARE_RESAMPLES = dataclasses.replace(OPTIONS["resamples"], deprecated=("--bootstrap-resamples",))

# The defaults as attributes, for API signatures: ``def correlations(..., resamples: int = DEFAULTS.resamples)``.
DEFAULTS = SimpleNamespace(**{name: option.default for name, option in OPTIONS.items()})
SYSTEM_DEFAULTS = SimpleNamespace(**{name: option.default for name, option in {**OPTIONS, **SYSTEM_OPTIONS}.items()})


class Checked(SimpleNamespace):
    """Option values checked by their declarations: read as attributes (``o.resamples``); the settings block of a
    result and the keywords of the functions an analysis calls come from here, so no analysis lists them again."""

    def record(self, *leave_out: str, **extra: Any) -> dict[str, Any]:
        """The ``settings`` block: every checked value (lists as lists) but ``leave_out``, then ``extra``."""
        values = {name: list(value) if isinstance(value, tuple) else value for name, value in vars(self).items()
                  if name not in leave_out}
        return {**values, **extra}

    def keywords_for(self, function: Callable[..., Any], **overrides: Any) -> dict[str, Any]:
        """The checked values ``function`` takes as keywords (by its signature), then ``overrides``."""
        accepted = inspect.signature(function).parameters
        return {**{name: value for name, value in vars(self).items() if name in accepted}, **overrides}


def check(table: dict[str, Option] | None = None, **values: Any) -> Checked:
    """Every value checked by its declaration (``table``: :data:`OPTIONS` or :data:`SYSTEM_OPTIONS`)."""
    declared = OPTIONS if table is None else table
    return Checked(**{name: declared[name].check(value) for name, value in values.items()})


def checked(args: argparse.Namespace, *names: str, table: dict[str, Option] | None = None) -> dict[str, Any]:
    """The named options of a parsed command line, each checked by its declaration: the keywords of the API call
    the command makes (checked before any file is read)."""
    declared = OPTIONS if table is None else table
    return {name: declared[name].check(getattr(args, name)) for name in names}


def add_options(parser: Any, *options: str | Option) -> None:
    """Declared options as arguments of one command's parser: names (:data:`OPTIONS`, :data:`FIELDS`) or
    :class:`Option` objects (the ``systems`` variants)."""
    for option in options:
        (option if isinstance(option, Option) else {**FIELDS, **OPTIONS}[option]).add_to(parser)


def statistic_label(statistic: str, coefficient: str, latex: bool = False) -> str:
    """A statistic as a column heading names it for the coefficient used: ``r_sys`` for Pearson, ``tau_sys`` for
    Kendall (``acc_pair`` is no correlation); LaTeX ``$r_{sys}$``."""
    if not statistic.startswith("tau_"):
        return r"acc$_{pair}$" if latex and statistic == "acc_pair" else statistic
    _, symbol, tex = COEFFICIENT_NAMES[coefficient]
    level = statistic.split("_", 1)[1]
    return rf"${tex}_{{{level}}}$" if latex else f"{symbol}_{level}"


def coefficient_words(coefficient: str) -> str:
    return COEFFICIENT_NAMES[coefficient][0]


def interval_words(confidence: float, resamples: int, *, what: str = "", ci_method: str = "bootstrap") -> str:
    """How the intervals were made, for captions: ``95% bootstrap CIs (1000 resamples, both)``."""
    if ci_method == "fisher":
        return f"{confidence:.0%} Fisher-z CIs (Bonett & Wright)"
    if not resamples:
        return "no CIs (0 resamples)"
    return f"{confidence:.0%} bootstrap CIs ({resamples} resamples{', ' + what if what else ''})"


def test_words(test: str, alternative: str, *, permutations: int = 0, swap: str = "", resamples: int = 0,
               resample: str = "", williams: str = "abs") -> str:
    """The test behind a marker, for captions."""
    sided = "two-sided" if alternative == "two-sided" else "one-sided"
    return {"permutation": f"{sided} permutation test, {permutations} permutations"
                           + (f" swapping per {swap}" if swap else ""),
            "bootstrap": f"{sided} paired bootstrap test, {resamples} resamples" + (f" ({resample})" if resample
                                                                                     else ""),
            "williams": f"{sided} Williams test on {'|r|' if williams == 'abs' else 'signed r'}",
            "t": f"{sided} paired t-test"}[test]


def correction_words(correction: str) -> str:
    return {"none": "", "bonferroni": "Bonferroni-corrected ", "holm": "Holm-corrected "}[correction]


def settings_of(args: argparse.Namespace, names: Sequence[str] = ()) -> dict[str, Any]:
    """The declared options a parsed command line holds (for the JSON ``settings`` block)."""
    declared = {**OPTIONS, **SYSTEM_OPTIONS, **CONFOUNDER_OPTIONS, **FIELDS}
    wanted = names or list(declared)
    return {name: _as_recorded(declared.get(name), getattr(args, name)) for name in dict.fromkeys(wanted)
            if hasattr(args, name)}


def _as_recorded(option: Option | None, value: Any) -> Any:
    """A list option as the list it means (``--stats a,b`` -> ``["a", "b"]``), everything else as given."""
    return split_list(value) if option is not None and option.kind == "list" and isinstance(value, str) else value
