"""Every meta-evaluation option, declared once as a field of a settings class: the ``meta-eval`` flags, the API
keywords with their defaults and parsing, the JSON ``settings`` block and the captions' words. One class per analysis
and one per command, from shared parts, so a name means one thing everywhere (docs/meta_eval.md "Significance
defaults"). Importable without numpy, so ``--help`` stays fast."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

from learned_metrics.errors import UserError
from learned_metrics.settings import Settings, parse_setting, setting
from learned_metrics.text.proxies import FIRST_PERSON_FORMS
from learned_metrics.text.sentences import SPLITTERS

STATISTICS = ("tau_sys", "tau_sum", "tau_pair", "acc_pair", "tau_intra")
CORRELATION_TESTS = ("permutation", "bootstrap", "williams")

# How a coefficient is named for readers: words, the symbol a column heading takes, and its LaTeX.
COEFFICIENT_NAMES = {"kendall": ("Kendall tau-b", "tau", r"\tau"), "pearson": ("Pearson r", "r", "r"),
                     "spearman": ("Spearman rho", "rho", r"\rho")}


def baseline_names(value: str | Sequence[str] | None, among: Sequence[str] | None = None,
                   what: str = "metrics") -> tuple[str, ...]:
    """``--baseline``/``baseline=``: what the others are compared against, the same in ``report``, ``benchmark`` and
    ``systems``. One name or an ordered sequence of distinct names, each ``among`` the compared ones; () = every
    pair."""
    if value is None:
        return ()
    names = (value,) if isinstance(value, str) else value
    if not isinstance(names, Sequence) or not all(isinstance(name, str) and name for name in names):
        raise UserError(f"--baseline: expected a name or a list of names, got {value!r:.80}")
    if len(set(names)) != len(names):
        raise UserError(f"--baseline names a metric or system twice: {list(names)}")
    unknown = [name for name in names if among is not None and name not in among]
    if unknown:
        raise UserError(f"--baseline {unknown[0]!r} is not one of the {what} ({', '.join(among)})")
    return tuple(names)


def check(**values: Any) -> None:
    """Each value refused as its field's declaration refuses it (the general declaration first: ``systems``' 0
    permutations is its own), for the readers and statistics below the analyses that take one command option."""
    commands = (ReportCommand, BenchmarkCommand, ConfoundersCommand, ShuffleTestCommand, SystemLevelCommand,
                AucCommand, SystemsCommand, CompareCommand)
    for name, value in values.items():
        parse_setting(next(spec for cls in commands for spec in fields(cls) if spec.name == name), value, True)


def statistic_label(statistic: str, coefficient: str, latex: bool = False) -> str:
    """A statistic as a column heading names it for the coefficient used: ``r_sys`` for Pearson, ``tau_sys`` for
    Kendall (``acc_pair`` is no correlation); LaTeX ``$r_{sys}$``."""
    if not statistic.startswith("tau_"):
        return r"acc$_{pair}$" if latex and statistic == "acc_pair" else statistic
    _, symbol, tex = COEFFICIENT_NAMES[coefficient]
    level = statistic.split("_", 1)[1]
    return rf"${tex}_{{{level}}}$" if latex else f"{symbol}_{level}"


def confidence_level(confidence: float) -> str:
    """A confidence level as every caption and heading prints it: 95%, 99.9% (never rounded to a level not asked)."""
    return f"{confidence * 100:.10g}%"


def resolution_note(family: int, permutations: int, correction: str, alpha: float) -> str:
    """Say so when no test can be significant ('' otherwise): a permutation p is at least 1/(k+1), and Bonferroni
    and Holm multiply the smallest p by the family size m, so k must exceed m/alpha."""
    m = 1 if correction == "none" else family
    if family == 0 or m / (1 + permutations) < alpha:
        return ""
    needed = math.ceil(10 * m / alpha / 1000) * 1000
    return (f"no pair can be significant: with {permutations} permutations a p-value is at least "
            f"{1 / (1 + permutations):.1e}, and the {correction} correction over {m} tests needs p < "
            f"{alpha / m:.1e}; rerun with --permutations {needed} or more")


def resolution_sentence(family: int, permutations: int, correction: str, alpha: float, label: str = "Note") -> str:
    """:func:`resolution_note` as a caption's closing sentence (' Note: ....'), '' when a marker can appear."""
    note = resolution_note(family, permutations, correction, alpha)
    return f" {label}: {note}." if note else ""


@dataclass(frozen=True)
class MetaSettings(Settings):
    """Base of the meta-eval settings: help lines end with the default, integers read ``N``."""

    show_defaults = True
    int_metavar = "N"
    flag_first = True


@dataclass(frozen=True)
class OutputStyle(MetaSettings):
    """How every meta-eval command writes its tables (no value changes a result)."""

    number_style: str = setting("fraction", "rates (AUC, BAcc, accuracy) as fractions with 3 decimals, or in percent "
                                "with 1 decimal as the leaderboards and papers print them; every table format "
                                "(terminal, --markdown, --latex, --csv), the --json stays in fractions",
                                choices=("fraction", "percent"), scores=False)


@dataclass(frozen=True)
class Resampling(MetaSettings):
    """The bootstrap behind every CI: resamples, the seed of every draw, the CI level."""

    resamples: int = setting(1000, "bootstrap resamples behind every CI and the paired bootstrap test; 0 = neither",
                             minimum=0)
    seed: int = setting(0, "random seed of every resample and permutation", minimum=0)
    confidence: float = setting(0.95, "level of every confidence interval", kind="fraction")

    def intervals(self, what: str = "", ci_method: str = "bootstrap") -> str:
        """The caption's words for the intervals: ``95% bootstrap CIs (1000 resamples, both)``."""
        if ci_method == "fisher":
            return f"{confidence_level(self.confidence)} Fisher-z CIs (Bonett & Wright)"
        if not self.resamples:
            return "no CIs (0 resamples)"
        what = f", {what}" if what else ""
        return f"{confidence_level(self.confidence)} bootstrap CIs ({self.resamples} resamples{what})"


@dataclass(frozen=True)
class Significance(MetaSettings):
    """A test's sides, its correction over many tests and the level of its markers."""

    alternative: str = setting("greater", "greater: one-sided, 'A better than B'; two-sided: 'A and B differ'",
                               choices=("greater", "two-sided"))
    correction: str = setting("holm", "multiple-comparison correction of the p-values over the pairs compared",
                              choices=("none", "bonferroni", "holm"))
    alpha: float = setting(0.05, "significance level of the markers", kind="fraction")

    def corrected(self) -> str:
        """The caption's words for the correction of the p-values ('' for none)."""
        return {"none": "", "bonferroni": "Bonferroni-corrected ", "holm": "Holm-corrected "}[self.correction]

    def sided(self) -> str:
        return "two-sided" if self.alternative == "two-sided" else "one-sided"


@dataclass(frozen=True)
class Permutations(MetaSettings):
    permutations: int = setting(1000, "permutations of the permutation (approximate randomization) test", minimum=1)


@dataclass(frozen=True)
class Correlating(MetaSettings):
    """Which coefficient, which statistics, what the bootstrap redraws."""

    coefficient: str = setting("kendall", "correlation coefficient: kendall (tau-b), pearson (r) or spearman (rho)",
                               choices=tuple(COEFFICIENT_NAMES))
    stats: tuple[str, ...] = setting(STATISTICS, "statistics to report, comma-separated", kind="list",
                                     choices=STATISTICS, noun="statistic(s)", metavar="LIST")
    resample: str = setting("both", "what the bootstrap redraws with replacement (both: Deutsch et al. 2021's "
                            "recommendation)", choices=("both", "systems", "documents"), noun="resample mode")

    def words(self) -> str:
        """The coefficient as captions name it: ``Kendall tau-b``."""
        return COEFFICIENT_NAMES[self.coefficient][0]

    def label(self, statistic: str) -> str:
        """A statistic as a column heading names it under this coefficient: ``r_sys`` for Pearson."""
        return statistic_label(statistic, self.coefficient)


CI_METHOD = setting("bootstrap", "bootstrap: percentile bootstrap; fisher: Fisher-z interval with Bonett & Wright's "
                    "constants per coefficient, n = items of one correlation (none for acc_pair)",
                    choices=("bootstrap", "fisher"), noun="CI method")
WORKERS = setting(None, "processes for the metric pairs (and report columns) run side by side; results do not depend "
                  "on it (default: every core this process may use)", minimum=1)
BASELINE = setting(None, "compare against this one only (repeatable): report and benchmark mark significant "
                   "improvements over it, systems tests every system against it (default: every pair)",
                   metavar="NAME", check=lambda value: baseline_names(value) or None, argparse={"action": "append"})


@dataclass(frozen=True)
class CorrelationSettings(Resampling, Correlating):
    """``correlations``: one metric against the humans at five levels."""

    ci_method: str = CI_METHOD


@dataclass(frozen=True)
class ComparisonSettings(Resampling, Permutations, Correlating):
    """``compare``: the paired tests between metrics."""

    swap: str = setting("cell", "unit whose scores the two metrics trade in a permutation",
                        choices=("cell", "system", "document"), noun="swap mode")
    alternative: str = Significance.__dataclass_fields__["alternative"]
    correction: str = Significance.__dataclass_fields__["correction"]
    williams: str = setting("abs", "Williams' test on |r| of all three correlations as the WMT scripts and nlpstats, "
                            "or on signed r", choices=("abs", "signed"), noun="Williams mode")
    workers: int | None = WORKERS

    corrected = Significance.corrected
    sided = Significance.sided

    def test_words(self, test: str) -> str:
        """The caption's words for one test."""
        return self.sided() + {"permutation": f" permutation test, {self.permutations} permutations swapping per "
                                              f"{self.swap}",
                               "bootstrap": f" paired bootstrap test, {self.resamples} resamples ({self.resample})",
                               "williams": f" Williams test on {'|r|' if self.williams == 'abs' else 'signed r'}"}[test]

    def tests(self) -> list[str]:
        """The caption's words for each test run (the bootstrap only with resamples)."""
        return [self.test_words(test) for test in CORRELATION_TESTS if test != "bootstrap" or self.resamples]


@dataclass(frozen=True)
class ReportSettings(ComparisonSettings, Significance):
    """``report``: correlations with CIs and the markers of one test."""

    test: str = setting("permutation", "the test behind the significance markers", choices=CORRELATION_TESTS)
    ci_method: str = CI_METHOD


@dataclass(frozen=True)
class AucReportSettings(Resampling, Permutations, Significance):
    """``report --auc``: AUC per corpus, paired tests between metrics."""


@dataclass(frozen=True)
class AucSettings(Resampling):
    """``auc``: ROC AUC per group."""


@dataclass(frozen=True)
class ShuffleTestSettings(Resampling):
    """``shuffle-test``; a length-gap bucket's CI is a proportion's: below ~30 comparisons a handful of values."""

    min_bucket_pairs: int = setting(30, "length-gap buckets with fewer (original, shuffled) comparisons are merged "
                                    "with their smaller neighbour until each has at least N, so every bucket's CI "
                                    "means something; 0 = keep all 21 buckets of 20 characters", minimum=0)


@dataclass(frozen=True)
class SystemLevelSettings(Resampling):
    """``system-level``: the coefficient of tau_sys and tau_sys_full."""

    coefficient: str = Correlating.__dataclass_fields__["coefficient"]

    words = Correlating.words
    label = Correlating.label


@dataclass(frozen=True)
class SystemsSettings(Resampling, Significance):
    """``systems``: the decisive test, and 0 permutations skips the permutation test."""

    test: str = setting("permutation", "the test whose p decides significance",
                        choices=("permutation", "bootstrap", "t"))
    permutations: int = setting(1000, "permutations per pair; 0 = no p perm. A p-value is at least 1/(k+1), which "
                                "the correction multiplies by the number of tests", minimum=0)


@dataclass(frozen=True)
class ConfounderSettings(Resampling):
    """``confounders``: the tests' correction."""

    correction: str = Significance.__dataclass_fields__["correction"]


@dataclass(frozen=True)
class BenchmarkSettings(Resampling, Permutations, Significance):
    """``benchmark``: the threshold protocol is a required, visible choice."""

    threshold_protocol: str | None = setting(
        None, "how the supported/unsupported threshold is set (required): fixed = --threshold, 0.5 unless given "
        "(MiniCheck/LLM-AggreFact; TRUE's accuracy); tune-on-val = tuned on --tune-split, applied to --split "
        "(AggreFact, AlignScore); same-split = tuned on the very rows it is judged on (SummaC's code: optimistic)",
        choices=("fixed", "tune-on-val", "same-split"), noun="threshold protocol")
    threshold: float | None = setting(None, "the fixed threshold T: a row is predicted supported when its score > T "
                                      "(default with --threshold-protocol fixed: 0.5)", kind="number", metavar="T")
    grid: str | None = setting(None, "thresholds a tuning protocol tries (default: percentile): percentile = the score "
                               "percentiles 0, 0.2, ..., 99.8 of the tuning rows, ties to the later threshold (SummaC, "
                               "AggreFact); fixed-0.001 = 0, 0.001, ..., 1, ties to the lowest (AlignScore)",
                               choices=("percentile", "fixed-0.001"), noun="threshold grid")
    split: str | None = setting(None, "the split judged, from a cut/split field or a dev/val/test word in the file "
                                "name (default: test when the rows have splits, else every row)", metavar="NAME")
    tune_split: str | None = setting(None, "the split tune-on-val tunes on (default: whichever of val, dev, valid, "
                                     "validation the rows have)", metavar="NAME")
    tune_scope: str | None = setting(None, "one threshold per dataset (default; every reference code) or one for all "
                                     "datasets pooled", choices=("dataset", "global"), noun="--tune-scope")
    unseen_dataset: str | None = setting(None, "a dataset of --split without rows in --tune-split: error (default), "
                                         "or global = the threshold tuned on the whole --tune-split, said in a note",
                                         choices=("error", "global"), noun="--unseen-dataset")
    baseline: tuple[str, ...] | None = BASELINE


def field_name(default: str | None, help: str) -> Any:
    """A field of the input rows (``--doc-field F``)."""
    return setting(default, help, metavar="F")


ON_MISSING_SETTING = setting("error", "keys in one file only, duplicate metric rows, NaN scores: stop with an error, "
                             "or drop them and print how many", choices=("error", "drop"), noun="--on-missing")
FORMAT_SETTING = setting("rows", "rows: any scored rows, the corpus from --group-field or the file name in a folder; "
                         "true: TRUE benchmark files, the corpus from the file name", choices=("rows", "true"),
                         noun="--format")
NAMES = setting(None, "comma-separated metric names (default: file stems)", metavar="A,B")
LABEL_FIELD = field_name("label", "0/1 label field (1 = faithful/consistent; in a shuffle test 1 = original, 0 = "
                         "shuffled)")
GROUP_FIELD = field_name(None, "corpus/group field, e.g. corpus (default: the file name inside a folder, else one "
                         "group)")
SCORE_FIELD = field_name("score", "score field")


@dataclass(frozen=True)
class Keys(MetaSettings):
    """Which fields key a row to its (document, system), and what a missing or doubled key does."""

    doc_field: str = field_name("doc_id", "document key field")
    system_field: str = field_name("system_id", "system key field")
    on_missing: str = ON_MISSING_SETTING


def metric_fields(help: str) -> Any:
    """``--metric-field F``, once for all metric files or once per file."""
    return setting(None, help, kind="list", metavar="F", argparse={"action": "append"})


@dataclass(frozen=True)
class HumanReading(Keys):
    """The human file of the commands that align it with metric files by (document, system)."""

    human_field: str = field_name("score", "human score field; with --human-format summeval one of coherence, "
                                  "consistency, fluency, relevance")
    human_format: str = setting("rows", "rows: one row per summary or per annotation; summeval: the SummEval release "
                                "file", choices=("rows", "summeval"), noun="--human-format")


@dataclass(frozen=True)
class GridReading(HumanReading):
    """The human file and one metric file."""

    metric_field: str = field_name("score", "metric score field")


@dataclass(frozen=True)
class ManyGridReading(HumanReading):
    """The human file and several metric files."""

    metric_field: tuple[str, ...] | None = metric_fields("score field of the metric files: once for all, or once per "
                                                         "--metric (default: score)")
    names: str | None = NAMES


@dataclass(frozen=True)
class CorrelationsCommand(CorrelationSettings, GridReading):
    """``meta-eval correlations``."""


@dataclass(frozen=True)
class BiasMatrixCommand(GridReading):
    """``meta-eval bias-matrix``: no setting beyond how the files are read."""


@dataclass(frozen=True)
class CompareCommand(ComparisonSettings, ManyGridReading):
    """``meta-eval compare``: its bootstrap was ``--bootstrap-resamples`` before every command used ``--resamples``."""

    resamples: int = setting(1000, "bootstrap resamples behind every CI and the paired bootstrap test; 0 = neither",
                             minimum=0, aliases=("--bootstrap-resamples",))


@dataclass(frozen=True)
class ReportCommand(ReportSettings, ManyGridReading):
    """``meta-eval report``; the AUC mode's settings are its :class:`AucReportSettings`."""

    label_field: str = LABEL_FIELD
    group_field: str | None = GROUP_FIELD
    format: str = FORMAT_SETTING
    baseline: tuple[str, ...] | None = BASELINE


@dataclass(frozen=True)
class SystemLevelCommand(SystemLevelSettings, GridReading):
    """``meta-eval system-level``."""

    delta_band: tuple[tuple[float, float], ...] | None = setting(
        None, "a band of |metric system-score difference|, LO <= |delta| < HI, HI may be inf (repeatable)",
        check=lambda bands: tuple(check_bands(bands)), argparse={"nargs": 2, "action": "append", "type": float,
                                                                 "metavar": ("LO", "HI")})


def band_edge(value: float) -> str:
    return "inf" if math.isinf(value) else f"{value:g}"


def check_bands(bands: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """Bands as (lo, hi) with 0 <= lo < hi (hi may be inf)."""
    checked = []
    for lo, hi in bands:
        lo, hi = float(lo), float(hi)
        if math.isnan(lo) or math.isnan(hi) or lo < 0 or not lo < hi:
            raise UserError(f"--delta-band {band_edge(lo)} {band_edge(hi)}: expected 0 <= LO < HI (HI may be inf)")
        checked.append((lo, hi))
    return checked


@dataclass(frozen=True)
class SystemsCommand(SystemsSettings, Keys):
    """``meta-eval systems``."""

    score_field: str = SCORE_FIELD
    baseline: tuple[str, ...] | None = BASELINE


@dataclass(frozen=True)
class AucCommand(AucSettings):
    """``meta-eval auc``."""

    format: str = FORMAT_SETTING
    score_field: str = SCORE_FIELD
    label_field: str = LABEL_FIELD
    group_field: str | None = GROUP_FIELD
    on_missing: str = ON_MISSING_SETTING


@dataclass(frozen=True)
class ShuffleTestCommand(ShuffleTestSettings):
    """``meta-eval shuffle-test``."""

    score_field: str = SCORE_FIELD
    label_field: str = LABEL_FIELD
    pair_field: str = field_name("doc_id", "comparison-set id field: an original and its shuffles share it")
    text_field: str = field_name("text", "text whose length in characters is used")
    length_field: str | None = field_name(None, "numeric length field (characters), instead of the text")


@dataclass(frozen=True)
class ConfoundersCommand(ConfounderSettings):
    """``meta-eval confounders``: the human column is a label (or score) of the same rows, not a separate file."""

    metric_field: tuple[str, ...] | None = metric_fields("a metric's score field; repeat for several metrics "
                                                         "(default: score)")
    names: str | None = NAMES
    human_field: str = field_name("label", "human label/score, reported as the row 'human'")
    generation_field: str | None = field_name(None, "the scored text (default: generation; with --format true: "
                                              "generated_text; coherence files: text)")
    format: str = FORMAT_SETTING
    grounding_field: str = field_name("grounding", "the source text, for the overlap proxy")
    label_field: str = LABEL_FIELD
    proxies: str | None = setting(None, "built-in proxies (default: chars,tokens,sentences,overlap,first_person; "
                                  "overlap only when the rows have the grounding field); '' for none", metavar="LIST")
    splitter: str = setting("pysbd", "sentence splitter of the sentences proxy", choices=SPLITTERS,
                            noun="sentence splitter")
    first_person: str = setting("all", "first-person forms the first_person proxy counts: all = I, me, my, mine, "
                                "myself, we, us, our, ours, ourselves; i = the pronoun I only, as the coherence paper "
                                "counts it", choices=tuple(FIRST_PERSON_FORMS), noun="--first-person")


@dataclass(frozen=True)
class BenchmarkCommand(BenchmarkSettings):
    """``meta-eval benchmark``: the dataset of a row comes from the layout unless a field is named."""

    metric_field: tuple[str, ...] | None = metric_fields("score field: once for all, or once per --metric (default: "
                                                         "score)")
    names: str | None = NAMES
    group_field: str | None = field_name(None, "field naming each row's dataset (default: dataset; AggreFact: "
                                         "origin, as its CNN/DM and XSum tables; TRUE: the file name)")
    layout: str = setting("auto", "benchmark layout of the scored files: auto (from the columns), llm-aggrefact, "
                          "aggrefact, summac or true", choices=("auto", "llm-aggrefact", "aggrefact", "summac", "true"),
                          noun="--layout")
    on_missing: str = ON_MISSING_SETTING
    sota: bool = setting(False, "AggreFact: keep the SOTA subset only (model_name BART, PegasusDynamic, T5 or "
                         "Pegasus), as aggre_fact_sota.csv", flag=True)
    published_scores: bool = setting(False, "AggreFact: also judge every <Metric>_score column of the first --metric "
                                     "as a metric named <Metric> (the baselines the release ships)", flag=True)
