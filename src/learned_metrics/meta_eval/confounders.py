"""Why does a metric work? Correlate its scores (and the human labels) with simple text proxies (length, overlap
with the grounding, first-person pronouns, numeric fields) that can make a metric look good for the wrong reason
(the faithfulness thesis' Tables 5.5, 5.10 and 5.11). Proxies, statistics and the sign-aligned Williams test:
docs/meta_eval.md, ``meta-eval confounders``."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from learned_metrics.errors import UserError
from learned_metrics.io import iter_rows, numbered_rows
from learned_metrics.meta_eval.coefficients import FixedGroups
from learned_metrics.meta_eval.multiple import adjust_p_values
from learned_metrics.meta_eval.options import ConfoundersCommand, ConfounderSettings, check, confidence_level
from learned_metrics.meta_eval.resampling import (
    Estimate,
    bootstrap_weights,
    estimate_from,
    none_if_nan,
    records_frame,
    single_threaded_blas,
)
from learned_metrics.meta_eval.rows import distinct, distinct_names, read_scored
from learned_metrics.meta_eval.significance import williams_p
from learned_metrics.render import Cell, Column, Table, Tabular
from learned_metrics.settings import takes
from learned_metrics.text.proxies import PROXIES, text_proxies
from learned_metrics.validate import flag, number, one_of, ordered, row_text

HUMAN = "human"
ALL_ROWS = "all"
MIN_ROWS = 3  # fewer rows give no meaningful tau or p-value


@dataclass(frozen=True)
class ConfounderFields:
    """Which fields of a row hold what; ``human=None`` leaves the human row out."""

    metrics: tuple[str, ...] = ("score",)
    names: tuple[str, ...] | None = None
    human: str | None = "label"
    generation: str = "generation"
    grounding: str | None = "grounding"
    proxy_fields: tuple[str, ...] = ()
    label: str = "label"

    def metric_names(self) -> list[str]:
        """Display names of the metric columns: ``names`` if given, else the field names."""
        if not self.metrics:
            raise UserError("give at least one --metric-field (the score column of a metric)")
        names = distinct_names(self.names or None, len(self.metrics), inputs="--metric-field") or list(self.metrics)
        distinct(names, "metric names", "each metric's column is kept under its name; use --names")
        if self.human and HUMAN in names:
            raise UserError(f"'{HUMAN}' names the human row; give the metric another name with --names")
        return names


@dataclass(frozen=True)
class ConfounderData:
    """Parsed rows: score columns (the human one first), proxy values (NaN = missing) and 0/1 labels."""

    scores: dict[str, np.ndarray]
    proxies: dict[str, np.ndarray]
    labels: np.ndarray | None
    human: str | None
    notes: list[str] = field(default_factory=list)

    @property
    def metrics(self) -> list[str]:
        return [name for name in self.scores if name != self.human]


def check_proxy_names(proxies: Sequence[str] | None, proxy_fields: Sequence[str] = ()) -> list[str]:
    """The built-in proxies chosen; unknown ones, fields named like a built-in, and repeats: errors before any file
    is read."""
    chosen = [one_of(proxy, PROXIES, "proxy") for proxy in (PROXIES if proxies is None else proxies)]
    for name in proxy_fields:
        if name in PROXIES:
            raise UserError(f"--proxy-field '{name}' has the name of a built-in proxy; rename the field")
    if len(set(chosen)) != len(chosen) or len(set(proxy_fields)) != len(proxy_fields):
        raise UserError("a proxy is named twice")
    return chosen


def read_confounder_rows(path: str | Path | None, fields: ConfounderFields = ConfounderFields(), *,
                         proxies: Sequence[str] | None = None, by_label: bool = False, splitter: str = "pysbd",
                         first_person: str = ConfoundersCommand.first_person,
                         rows: Iterable[tuple[int, dict[str, Any]]] | None = None) -> ConfounderData:
    """Scores, proxies and labels of a scored ``.jsonl``/``.csv``/``.parquet`` file (or of numbered ``rows``), read by
    :func:`~.rows.read_scored`: a bad value is one line naming path, row and field; a human field that is the label
    field is read as its 0/1 label."""
    check(first_person=first_person)
    by_label = flag(by_label, "by_label", also="--by-label")
    iterator = iter(iter_rows(path) if rows is None else rows)
    first = next(iterator, None)
    if first is None:
        raise UserError("no rows", path=path)
    chosen, notes = check_proxy_names(proxies, fields.proxy_fields), []
    if "overlap" in chosen and proxies is None and (not fields.grounding or fields.grounding not in first[1]):
        chosen.remove("overlap")  # the default set goes without it when there is no grounding
        notes.append("overlap not computed: no grounding field"
                     + (f" '{fields.grounding}' in the rows" if fields.grounding else "")
                     + " (name one with --grounding-field)")
    if "overlap" in chosen and not fields.grounding:
        raise UserError("the overlap proxy needs --grounding-field")
    if not chosen and not fields.proxy_fields:
        raise UserError("no proxy to correlate with: give --proxies or --proxy-field")
    names = fields.metric_names()
    values: dict[str, list[float]] = {name: [] for name in [*chosen, *fields.proxy_fields]}
    seen: set[str] = set()

    def proxy_values(row: dict[str, Any], path: Any, row_number: int) -> None:
        if chosen:
            generation = row_text(row, fields.generation, path=path, row_number=row_number)
            grounding = None if "overlap" not in chosen else row_text(row, fields.grounding, path=path,
                                                                       row_number=row_number)
            for proxy, value in text_proxies(generation, grounding, chosen, splitter, first_person).items():
                values[proxy].append(value)
        seen.update(name for name in fields.proxy_fields if name in row)
        for name in fields.proxy_fields:  # absent, null, empty or NaN: missing (NaN); other non-numbers an error
            value = number(row.get(name), path=path, row=row_number, field=name)
            values[name].append(math.nan if value is None else value)

    human_label = fields.human is not None and fields.human == fields.label
    score_fields = [*fields.metrics, *([fields.human] if fields.human and not human_label else [])]
    read = read_scored([(path, None)], list(dict.fromkeys(score_fields)),
                       fields.label if by_label or human_label else None, extra=proxy_values,
                       records=itertools.chain([first], iterator))
    if len(read) < MIN_ROWS:
        raise UserError(f"needs at least {MIN_ROWS} rows for a correlation, got {len(read)}", path=path)
    unseen = [name for name in fields.proxy_fields if name not in seen]
    if unseen:
        present = ", ".join(sorted(map(str, first[1]))) or "none"
        raise UserError(f"no row has this --proxy-field (fields present: {present})", path=path, row=first[0],
                        field=unseen[0])
    proxy_arrays = {name: np.array(v, dtype=np.float64) for name, v in values.items()}
    for name, column in proxy_arrays.items():
        if np.isnan(column).any():
            what = "no word token in the generation" if name == "overlap" else "missing value"
            notes.append(f"{name}: {int(np.isnan(column).sum())} of {len(column)} row(s) left out ({what})")
    human = {HUMAN: read.labels if human_label else read.values[fields.human]} if fields.human else {}
    columns = {**human, **{name: read.values[field] for name, field in zip(names, fields.metrics, strict=True)}}
    return ConfounderData({name: np.array(v, dtype=np.float64) for name, v in columns.items()}, proxy_arrays,
                          np.array(read.labels, dtype=np.int64) if by_label else None, HUMAN if fields.human else None,
                          notes)


@dataclass(frozen=True)
class ProxyCorrelation:
    """tau-b of one score column with one proxy in one scope; ``tau.skipped`` = rows without the proxy."""

    scope: str
    column: str
    proxy: str
    tau: Estimate
    p_value: float | None


@dataclass(frozen=True)
class WilliamsTest:
    """H1: ``metric_a`` depends less on ``proxy`` than ``metric_b`` (|tau(B, P)| > |tau(A, P)|), one-sided."""

    scope: str
    proxy: str
    metric_a: str
    metric_b: str
    tau_a: float | None
    tau_b: float | None
    tau_ab: float | None
    n: int
    p: float | None
    p_adjusted: float | None


def _tau_and_p(x: np.ndarray, y: np.ndarray) -> tuple[float, float | None]:
    """scipy's tau-b and its p-value; NaN/None when fewer than 3 rows or a side is constant."""
    from scipy.stats import kendalltau

    if len(x) < MIN_ROWS or np.all(x == x[0]) or np.all(y == y[0]):
        return math.nan, None
    result = kendalltau(x, y)
    return float(result.statistic), float(result.pvalue)


def bootstrap_taus(x: np.ndarray, y: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """tau-b of every row of ``x`` (G, m) with ``y`` (m,) on ``resamples`` draws of the m rows: (resamples, G); one
    draw serves every score column, and a seed gives the same draws as everywhere else (``bootstrap_weights``)."""
    n_groups, m = x.shape
    if resamples == 0 or m < MIN_ROWS:
        return np.full((resamples, n_groups), np.nan)
    groups = FixedGroups(x, np.repeat(y[None, :], n_groups, axis=0), "kendall", correlation=True, accuracy=False)
    with single_threaded_blas():
        return np.concatenate([groups.correlation(np.broadcast_to(counts[:, None, :], (len(counts), n_groups, m)))
                               for counts, _ in bootstrap_weights(m, 1, resamples, "documents", seed)])


def _scope(data: ConfounderData, scope: str, rows: np.ndarray, o: ConfounderSettings
           ) -> tuple[list[ProxyCorrelation], list[WilliamsTest]]:
    """Every score column's tau-b with every proxy in a scope, and per ordered metric pair (A, B) the one-sided Williams
    p for |tau(B, P)| > |tau(A, P)|. |tau(P, X)| is tau(P, sign(tau(P, X)) * X), so tau(A, B) takes the same signs."""
    columns = list(data.scores) if scope == ALL_ROWS else data.metrics
    correlations, tests = [], []
    for proxy, values in data.proxies.items():
        used = rows & ~np.isnan(values)
        x = np.stack([data.scores[c][used] for c in columns])
        samples, taus = bootstrap_taus(x, values[used], o.resamples, o.seed), {}
        for g, column in enumerate(columns):
            taus[column], p = _tau_and_p(x[g], values[used])
            estimate = estimate_from(taus[column], samples[:, g], n=int(used.sum()),
                                     skipped=int((rows & ~used).sum()), confidence=o.confidence)
            correlations.append(ProxyCorrelation(scope, column, proxy, estimate, p))
        for a, b in itertools.permutations(data.metrics, 2):
            tau_ab = _tau_and_p(data.scores[a][used], data.scores[b][used])[0]
            signs = -1.0 if (taus[a] < 0) != (taus[b] < 0) else 1.0
            p = williams_p(abs(taus[b]), abs(taus[a]), signs * tau_ab, int(used.sum()))
            tests.append(WilliamsTest(scope, proxy, a, b, none_if_nan(taus[a]), none_if_nan(taus[b]),
                                      none_if_nan(tau_ab), int(used.sum()), p, p))
    return correlations, tests


@takes(ConfounderSettings)
def analyse(data: ConfounderData, *, settings: ConfounderSettings) -> ConfounderReport:
    """Correlations with every proxy per scope (all rows; label 1 and 0 when the data carry labels) and the
    Williams tests between every ordered pair of metrics."""
    masks = {ALL_ROWS: np.ones(len(next(iter(data.scores.values()))), dtype=bool)}
    if data.labels is not None:
        masks.update({"label=1": data.labels == 1, "label=0": data.labels == 0})
    notes = [*data.notes, *(f"{scope}: {int(rows.sum())} row(s), fewer than {MIN_ROWS}: its correlations are undefined"
                            for scope, rows in masks.items() if scope != ALL_ROWS and rows.sum() < MIN_ROWS)]
    if len(data.metrics) < 2:
        notes.append("Williams tests need at least two metrics (give --metric-field more than once)")
    found = [_scope(data, scope, rows, settings) for scope, rows in masks.items()]
    tests = [test for _, part in found for test in part]
    adjusted = adjust_p_values([t.p for t in tests], settings.correction)
    return ConfounderReport(list(data.scores), data.metrics, list(data.proxies), list(masks),
                            {(c.scope, c.column, c.proxy): c for part, _ in found for c in part},
                            [replace(t, p_adjusted=p) for t, p in zip(tests, adjusted, strict=True)], notes,
                            settings.to_json(), {scope: int(rows.sum()) for scope, rows in masks.items()})


@takes(ConfounderSettings)
def confounders(data: Any, *, metric_fields: Sequence[str] = ("score",), names: Sequence[str] | None = None,
                human_field: str | None = "label", generation_field: str = "generation",
                grounding_field: str | None = "grounding", proxy_fields: Sequence[str] = (),
                proxies: Sequence[str] | None = None, by_label: bool = False, label_field: str = "label",
                splitter: str = ConfoundersCommand.splitter, first_person: str = ConfoundersCommand.first_person,
                settings: ConfounderSettings) -> ConfounderReport:
    """``meta-eval confounders`` on a DataFrame, a mapping of column -> values or a list of row dicts (defaults: the
    fields ``score faithfulness`` writes). ``proxies=None``: every built-in proxy the data allow; ``first_person``:
    ``"all"`` counts every first-person pronoun, ``"i"`` the word I only."""
    names = None if names is None else ordered(names, "names", also="--names")
    fields = ConfounderFields(tuple(metric_fields), names or None, human_field, generation_field,
                              grounding_field, tuple(proxy_fields), label_field)
    parsed = read_confounder_rows(None, fields, proxies=proxies, by_label=by_label, splitter=splitter,
                                  first_person=first_person, rows=numbered_rows(data))
    report = analyse(parsed, settings=settings)
    report.settings["first_person"] = first_person
    return report


@dataclass(frozen=True)
class ConfounderReport(Tabular):
    """Result of :func:`confounders`: per scope a (score columns x proxies) table of tau-b with CIs, and the
    Williams tests. ``to_json()`` is the ``--json`` file; Markdown, LaTeX and CSV renderers for papers."""

    columns: list[str]
    metrics: list[str]
    proxies: list[str]
    scopes: list[str]
    correlations: dict[tuple[str, str, str], ProxyCorrelation]
    tests: list[WilliamsTest]
    notes: list[str]
    settings: dict[str, Any]
    rows: dict[str, int]

    def columns_of(self, scope: str) -> list[str]:
        """Score columns reported in a scope (no human row within a label class)."""
        return self.columns if scope == ALL_ROWS else self.metrics

    def correlation(self, scope: str, column: str, proxy: str) -> ProxyCorrelation:
        return self.correlations[(scope, column, proxy)]

    @property
    def caption(self) -> str:
        """What the correlation tables hold (plain text)."""
        resamples, level = self.settings["resamples"], confidence_level(self.settings['confidence'])
        ci = f"{level} percentile bootstrap CIs ({resamples} resamples of rows, seed {self.settings['seed']})" \
            if resamples else "no CIs (0 resamples)"
        return f"Kendall tau-b of each score with each proxy, {ci}."

    def to_json(self) -> dict[str, Any]:
        scopes = {scope: {column: {proxy: {**c.tau.to_json(), "p_value": c.p_value} for proxy in self.proxies
                                   for c in [self.correlation(scope, column, proxy)]}
                          for column in self.columns_of(scope)} for scope in self.scopes}
        return {"proxies": self.proxies, "columns": self.columns, "rows": self.rows, "scopes": scopes,
                "williams": [asdict(t) for t in self.tests], "notes": self.notes, "settings": self.settings}

    def tests_frame(self):
        """One row per Williams test (scope, proxy, metric A, metric B)."""
        return records_frame([asdict(t) for t in self.tests], list(WilliamsTest.__dataclass_fields__))

    def tables(self) -> list[Table]:
        """tau-b of every score column with every proxy, scopes as row groups (key ``correlations``), and the
        Williams tests (key ``williams``)."""
        rows, groups, titles = [], {}, {ALL_ROWS: "all rows", "label=1": "label 1 rows", "label=0": "label 0 rows"}
        for scope in self.scopes:
            groups[len(rows)] = f"{titles[scope]} ({self.rows[scope]})"
            for column in self.columns_of(scope):
                rows.append([column, *(Cell(tau.value, tau.ci) for tau in
                                       (self.correlation(scope, column, proxy).tau for proxy in self.proxies))])
        resamples, level = self.settings["resamples"], confidence_level(self.settings['confidence'])
        title = ("Kendall tau-b with proxies · " + (f"{level} CI from {resamples} bootstrap resamples, seed "
                                                    f"{self.settings['seed']}" if resamples else "no CI"))
        out = [Table([Column("score", kind="text"), *(Column(p, kind="estimate", digits=2) for p in self.proxies)],
                     rows, title=title, caption=self.caption, key="correlations", groups=groups)]
        if self.tests:
            correction, taus = self.settings["correction"], (("tau_a", "A"), ("tau_b", "B"), ("tau_ab", "A,B"))
            columns = [Column("scope", kind="text"), Column("proxy", kind="text"), Column("metric_a", "A", kind="text"),
                       Column("metric_b", "B", kind="text"), *(Column(key, f"tau({of})", latex=rf"$\tau({of})$")
                                                               for key, of in taus), Column("n", kind="count"),
                       Column("p", kind="p"), Column("p_adjusted", f"p {correction}", kind="p")]
            columns = [c for c in columns if not (c.key == "scope" and self.scopes == [ALL_ROWS]
                                                  or c.key == "p_adjusted" and correction == "none")]
            tests = [[getattr(t, c.key) for c in columns] for t in self.tests]  # the columns are WilliamsTest's fields
            out.append(Table(columns, tests, title="Williams: H1 = A depends less on the proxy than B (|tau(B)| > "
                             "|tau(A)|), one-sided", heading="Williams tests", key="williams",
                             caption="Williams' test, one-sided: A depends less on the proxy than B (|tau(B)| > "
                             f"|tau(A)|); p-value correction: {correction}."))
        return out

    def csv_tables(self) -> list[Table]:
        """The correlations in long format (one row per scope, column and proxy), then the Williams tests."""
        long = Table([Column("scope", kind="text"), Column("column", kind="text"), Column("proxy", kind="text"),
                      Column("tau"), Column("ci", kind="ci"), Column("p_value", kind="p"), Column("n", kind="count"),
                      Column("skipped", kind="count")],
                     [[c.scope, c.column, c.proxy, c.tau.value, Cell(ci=c.tau.ci), c.p_value, c.tau.n, c.tau.skipped]
                      for c in self.correlations.values()], key="correlations")
        return [long, *self.tables()[1:]]

