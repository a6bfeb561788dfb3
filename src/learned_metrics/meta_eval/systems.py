"""Which system is better, and is the difference real? Per-system means and paired tests on any metric's scores,
as ``comet-compare`` answers it for MT (docs/meta_eval.md, ``meta-eval systems``). One bootstrap of the documents
serves every system mean and pair difference, so a pair's two systems always see the same documents (one matrix
product per block; a pair's differences are 0 on the documents it does not share)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from learned_metrics.errors import UserError
from learned_metrics.io import iter_rows, numbered_rows
from learned_metrics.meta_eval.data import key_grid
from learned_metrics.meta_eval.multiple import adjust_p_values
from learned_metrics.meta_eval.options import SystemsSettings, baseline_names, confidence_level, resolution_note
from learned_metrics.meta_eval.resampling import (
    drawn_counts,
    interval,
    none_if_nan,
    records_frame,
    single_threaded_blas,
    swap_masks,
)
from learned_metrics.meta_eval.rows import CellScores, KeyFields, distinct, keyed_cells
from learned_metrics.meta_eval.significance import bootstrap_p, permutation_p
from learned_metrics.meta_eval.system_level import system_means
from learned_metrics.render import Cell, Column, Table, Tabular
from learned_metrics.settings import takes
from learned_metrics.validate import renamed_keywords

TEST_NAMES = {"permutation": "paired permutation test", "bootstrap": "paired bootstrap", "t": "paired t-test"}
SIDES = ("greater", "less", "two-sided")


@dataclass(frozen=True)
class SystemScores:
    """Scores on a (documents x systems) grid, NaN where a system did not score a document: from files
    (:func:`read_system_scores`), a long DataFrame, parallel arrays (:func:`system_scores`) or a matrix and names."""

    docs: list[str]
    systems: list[str]
    grid: np.ndarray
    notes: list[str] = field(default_factory=list)


def read_system_scores(paths: Sequence[str | Path], score_field: str = "score", keys: KeyFields = KeyFields(), *,
                       on_missing: str = "error") -> SystemScores:
    """Long-format rows (document key, system key, score) from one or more files, concatenated (one file per system
    is fine). A (document, system) key given twice, in one file or across files, is an error naming both rows
    (:func:`~.rows.keyed_cells`); a file without the document key says why it is needed."""
    paths = [paths] if isinstance(paths, (str, Path)) else paths
    try:
        return _grid(keyed_cells([(path, iter_rows(path)) for path in paths], score_field, keys, on_missing=on_missing))
    except UserError as exc:
        if exc.field != keys.doc or not exc.detail.startswith("missing field"):
            raise
        raise UserError(f"{exc.detail}; paired tests need a document key shared by the systems: name it with "
                        "--doc-field (a scored file without one cannot be paired)",
                        path=exc.path, row=exc.row, field=exc.field) from None


def system_scores(doc_ids: Sequence[Any], system_ids: Sequence[Any], scores: Sequence[Any], *,
                  on_missing: str = "error", source: str = "scores") -> SystemScores:
    """Parallel arrays, one entry per (document, system) score; errors name the 1-based position as the row."""
    keys = KeyFields()
    rows = numbered_rows({keys.doc: doc_ids, keys.system: system_ids, "score": scores})
    return _grid(keyed_cells([(source, rows)], "score", keys, on_missing=on_missing))


@renamed_keywords(doc="doc_field", system="system_field", score="score_field")
def system_scores_from_frame(frame: Any, *, doc_field: str = "doc_id", system_field: str = "system_id",
                             score_field: str = "score", on_missing: str = "error",
                             source: str = "DataFrame") -> SystemScores:
    """A long pandas DataFrame: one row per (document, system) with its score; errors name the 1-based row.
    The column keywords are the CLI's ``--doc-field``, ``--system-field`` and ``--score-field``."""
    missing = [c for c in (doc_field, system_field, score_field) if c not in frame.columns]
    if missing:
        raise UserError(f"{source}: no column '{missing[0]}' (columns: {', '.join(map(str, frame.columns))})")
    rows = numbered_rows(frame[[doc_field, system_field, score_field]])  # the file reader's checks and messages
    return _grid(keyed_cells([(source, rows)], score_field, KeyFields(doc_field, system_field), on_missing=on_missing))


def _grid(cells: CellScores) -> SystemScores:
    """Systems in first-seen order on one (documents x systems) grid."""
    values = cells.values
    return SystemScores(list(dict.fromkeys(k[0] for k in values)), list(dict.fromkeys(k[1] for k in values)),
                        key_grid(values), cells.notes)


@dataclass(frozen=True)
class SystemResult:
    """One system: its rank by mean score, the mean with its bootstrap CI, and whom it beats significantly."""

    rank: int
    system: str
    mean: float
    ci: tuple[float, float] | None
    n: int
    better_than: list[str]


@dataclass(frozen=True)
class PairResult:
    """A against B on the documents both scored; every statistic is None when they share fewer than 2."""

    a: str
    b: str
    n: int
    delta: float | None = None
    ci: tuple[float, float] | None = None
    wins: int | None = None
    ties: int | None = None
    losses: int | None = None
    win_rate: float | None = None
    p_bootstrap: float | None = None
    p_permutation: float | None = None
    p_t: float | None = None
    p_adjusted: float | None = None
    significant: bool = False
    better: str | None = None  # the significantly better system of the two, if any

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "ci": None if self.ci is None else list(self.ci)}


@dataclass
class SystemComparison(Tabular):
    """Systems ranked by mean score and the pairwise tests; renderers for the terminal, papers and notebooks."""

    systems: list[SystemResult]
    pairs: list[PairResult]
    settings: dict[str, Any]
    notes: list[str] = field(default_factory=list)

    @property
    def caption(self) -> str:
        s = self.settings
        direction = "two-sided" if s["alternative"] == "two-sided" else "one-sided"
        against = (f"each system against the baseline{'s' if len(s['baseline']) > 1 else ''} "
                   f"{', '.join(s['baseline'])}" if s["baseline"]
                   else "every pair, A the better on shared documents, both directions counted in the correction")
        rounds = {"permutation": f", {s['permutations']} permutations", "bootstrap": f", {s['resamples']} resamples",
                  "t": ""}[s["test"]]
        return (f"Mean score per system with {confidence_level(s['confidence'])} bootstrap CIs ({s['resamples']} "
                "resamples, documents redrawn); better than: the systems (by rank) it beats significantly "
                f"({direction} {TEST_NAMES[s['test']]} on shared documents{rounds}, {s['correction']} correction, "
                f"adjusted p < {s['alpha']}; {against}).")

    def rank_of(self, system: str) -> int:
        return next(r.rank for r in self.systems if r.system == system)

    def to_json(self) -> dict[str, Any]:
        return {"systems": [{**asdict(r), "ci": None if r.ci is None else list(r.ci)} for r in self.systems],
                "pairs": [p.to_json() for p in self.pairs], "settings": self.settings, "notes": self.notes,
                "caption": self.caption}

    def to_frame(self, table: str = "systems"):
        """``"systems"``: one row per system (rank, mean, CI, n, better_than); ``"pairs"``: one row per test."""
        if table not in ("systems", "pairs"):
            raise UserError(f"table must be 'systems' or 'pairs', got {table!r}")
        return records_frame([asdict(item) for item in (self.systems if table == "systems" else self.pairs)])

    def tables(self) -> list[Table]:
        """The ranking (key ``systems``) and the pairwise tests (key ``pairs``)."""
        s = self.settings
        level = f"{confidence_level(s['confidence'])} CI"
        ranking = Table(
            [Column("rank", kind="count"), Column("system", kind="text"), Column("mean"),
             Column("ci", level, kind="ci"), Column("n", kind="count"),
             Column("better_than", "better than", kind="text")],
            [[r.rank, r.system, r.mean, Cell(ci=r.ci), r.n, ",".join(str(self.rank_of(b)) for b in r.better_than)]
             for r in self.systems],
            title=f"{s['systems']} systems x {s['documents']} documents · {s['resamples']} bootstrap resamples, "
            f"seed {s['seed']}", caption=self.caption, key="systems")
        against = f"against {', '.join(s['baseline'])}" if s["baseline"] else "all pairs"
        sided = "two-sided" if s["alternative"] == "two-sided" else "one-sided, A better than B"
        pairs = Table(
            [Column("a", "A", kind="text"), Column("b", "B", kind="text"), Column("n", kind="count"),
             Column("delta", "A - B"), Column("ci", level, kind="ci"),
             Column("record", "A>B/tie/A<B", kind="text"), Column("win_rate", "win rate"),
             Column("p_bootstrap", "p boot", kind="p"), Column("p_permutation", "p perm", kind="p"),
             Column("p_t", "p t", kind="p"), Column("p_adjusted", "p adj", kind="p")],
            [[p.a, p.b, p.n, p.delta, Cell(ci=p.ci), None if p.wins is None else f"{p.wins}/{p.ties}/{p.losses}",
              p.win_rate, p.p_bootstrap, p.p_permutation, p.p_t,
              Cell(p.p_adjusted, bold=p.significant, marks=("*",) if p.significant else ())] for p in self.pairs],
            title=f"{against} · {sided} · {s['test']} decides, {s['correction']} correction, alpha {s['alpha']}",
            caption=f"Pairwise tests on shared documents: {TEST_NAMES[s['test']]} decides, {s['correction']}-"
            f"adjusted p (*: < {s['alpha']}); A>B/tie/A<B: documents where A scores higher / the same / "
            "lower.", key="pairs", bold=f"adjusted p < {s['alpha']}")
        return [ranking, pairs]


@renamed_keywords(doc="doc_field", system="system_field", score="score_field")
@takes(SystemsSettings)
def compare_systems(scores: Any, *, baseline: str | Sequence[str] | None = None, doc_field: str = "doc_id",
                    system_field: str = "system_id", score_field: str = "score",
                    settings: SystemsSettings) -> SystemComparison:
    """Rank systems by mean score and test every pair (or every system against each ``baseline``, one name or a list)
    on shared documents. ``scores``: a :class:`SystemScores` or a long DataFrame with the columns ``doc_field``,
    ``system_field`` and ``score_field``; 0 ``resamples``/``permutations`` skips that statistic (not the ``test``'s)."""
    o = settings
    data = _as_system_scores(scores, doc_field, system_field, score_field)
    baseline = baseline_names(baseline)
    if len(data.systems) < 2:
        found = f" ({data.systems[0]!r})" if data.systems else ""
        raise UserError(f"comparing systems needs at least two, found {len(data.systems)}{found}; check "
                        "--system-field")
    distinct(data.systems, "system names", "each system's scores are one column of the grid")
    baseline_names(baseline, data.systems, "systems")
    if (o.test == "bootstrap" and o.resamples < 1) or (o.test == "permutation" and o.permutations < 1):
        count = "--resamples" if o.test == "bootstrap" else "--permutations"
        raise UserError(f"the {TEST_NAMES[o.test]} decides significance: {count} must be >= 1")
    present = ~np.isnan(data.grid)
    filled = np.where(present, data.grid, 0.0)
    means = filled.sum(axis=0) / present.sum(axis=0)
    order = sorted(range(len(data.systems)), key=lambda j: -means[j])
    pairs = _oriented_pairs(data, order, baseline)
    with single_threaded_blas():
        results, other_way = _pair_statistics(filled, present, pairs, data.systems, o)
        system_boot = _document_bootstrap(data.grid, o.resamples, o.seed)
    results, family = _adjusted(results, other_way, o, one_direction_planned=bool(baseline))
    ranking = _ranking(data.systems, means, present.sum(axis=0), system_boot, order, results, o.confidence)
    record = {"baseline": list(baseline) or None, **o.to_json(), "documents": len(data.docs),
              "systems": len(data.systems)}
    note = resolution_note(family, o.permutations, o.correction, o.alpha) if o.test == "permutation" else ""
    return SystemComparison(ranking, results, record, [*data.notes, *([note] if note else [])])


def _as_system_scores(scores: Any, doc: str, system: str, score: str) -> SystemScores:
    if isinstance(scores, SystemScores):
        grid = np.asarray(scores.grid, dtype=np.float64)
        if grid.shape != (len(scores.docs), len(scores.systems)):
            raise UserError(f"SystemScores.grid has shape {grid.shape}, expected (documents, systems) = "
                            f"({len(scores.docs)}, {len(scores.systems)})")
        if np.isinf(grid).any():
            raise UserError("SystemScores.grid holds an infinite score")
        if np.isnan(grid).all(axis=0).any():
            raise UserError("SystemScores.grid has a system without any score")
        return SystemScores(list(map(str, scores.docs)), list(map(str, scores.systems)), grid, list(scores.notes))
    if hasattr(scores, "columns"):
        return system_scores_from_frame(scores, doc_field=doc, system_field=system, score_field=score)
    raise UserError(f"scores must be a SystemScores or a long DataFrame ({doc}, {system}, {score}), "
                    f"got {type(scores).__name__}")


def _oriented_pairs(data: SystemScores, order: list[int], baseline: tuple[str, ...]) -> list[tuple[int, int]]:
    """(A, B) column pairs: (system, baseline) in rank order for each baseline; else every pair, A the system with
    the higher mean on the documents both scored (ties: the higher-ranked), so "A better than B" is the direction
    the data point to (the same as the ranking when every system scored every document)."""
    if baseline:
        return [(a, b) for b in map(data.systems.index, baseline) for a in order if a != b]
    pairs = []
    for i, a in enumerate(order):
        for b in order[i + 1:]:
            shared = ~np.isnan(data.grid[:, a]) & ~np.isnan(data.grid[:, b])
            flip = shared.any() and data.grid[shared, a].mean() < data.grid[shared, b].mean()
            pairs.append((b, a) if flip else (a, b))
    return pairs


def _document_bootstrap(grid: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """(resamples x columns) means of every column over redrawn documents, each over the drawn documents it has (not
    NaN); NaN where a resample drew none of them. One draw per seed serves every system and pair."""
    blocks = [system_means(grid, counts) for (counts,) in drawn_counts((grid.shape[0],), resamples, seed)]
    return np.concatenate(blocks) if blocks else np.empty((0, grid.shape[1]))


def _pair_statistics(filled: np.ndarray, present: np.ndarray, pairs: list[tuple[int, int]], systems: list[str],
                     o: SystemsSettings) -> tuple[list[PairResult], list[float | None]]:
    """Every pair's statistics on the documents both systems scored (undefined below 2 of them), and the decisive
    test's p in the other direction ("less"), which a post-hoc one-sided family also counts."""
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    shared = present[:, a] & present[:, b]
    diffs = np.where(shared, filled[:, a] - filled[:, b], 0.0)
    n = shared.sum(axis=0)
    boot = _document_bootstrap(np.where(shared, diffs, np.nan), o.resamples, o.seed)
    # permuted mean differences: each document's sign flipped at random (A and B swapped), one product for all pairs
    perm = [(1.0 - 2.0 * swap[:, :, 0]) @ diffs / np.maximum(n, 1)
            for swap in swap_masks(diffs.shape[0], 1, o.permutations, "document", o.seed)]
    perm = np.concatenate(perm) if perm else np.empty((0, diffs.shape[1]))
    results, other_way = [], []
    for k, (i, j) in enumerate(pairs):
        if n[k] < 2:
            results.append(PairResult(systems[i], systems[j], int(n[k])))
            other_way.append(None)
            continue
        d = diffs[shared[:, k], k]
        delta = float(d.mean())
        ci = interval(boot[:, k], o.confidence).ci if o.resamples else None
        wins, ties, losses = int((d > 0).sum()), int((d == 0).sum()), int((d < 0).sum())
        p = {"bootstrap": _sides(bootstrap_p, boot[:, k], delta) if o.resamples else dict.fromkeys(SIDES),
             "permutation": _sides(lambda *args: permutation_p(*args)[0], perm[:, k], delta) if o.permutations
             else dict.fromkeys(SIDES),
             "t": _t_test(d)}
        side = o.alternative
        results.append(PairResult(systems[i], systems[j], int(n[k]), delta, ci, wins, ties, losses, wins / int(n[k]),
                                  p["bootstrap"][side], p["permutation"][side], p["t"][side]))
        other_way.append(p[o.test]["less"])
    return results, other_way


def _t_test(d: np.ndarray) -> dict[str, float | None]:
    """scipy's paired t-test (one-sample on the differences); None where it is undefined (constant differences).
    Its precision warning for near-constant differences is silenced: the p-value itself is what we report."""
    from scipy.stats import ttest_1samp

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return {side: none_if_nan(ttest_1samp(d, 0.0, alternative=side).pvalue) for side in SIDES}


def _sides(p: Callable[..., float | None], samples: np.ndarray, delta: float) -> dict[str, float | None]:
    """One test's p per alternative (:func:`.significance.bootstrap_p`, or ``permutation_p``'s p); "less" flips the
    signs."""
    return {"greater": p(delta, samples), "less": p(-delta, -samples), "two-sided": p(delta, samples, "two-sided")}


def _adjusted(results: list[PairResult], other_way: list[float | None], o: SystemsSettings, *,
              one_direction_planned: bool) -> tuple[list[PairResult], int]:
    """The pairs with the corrected p of the decisive test and who is significantly better, and the family size;
    post-hoc one-sided directions enter the family both ways."""
    family = [getattr(r, f"p_{o.test}") for r in results]
    if o.alternative == "greater" and not one_direction_planned:
        family += other_way
    out = []
    for r, p in zip(results, adjust_p_values(family, o.correction)[: len(results)], strict=True):
        better = None
        if p is not None and p < o.alpha:
            better = r.a if o.alternative == "greater" or r.delta > 0 else r.b if r.delta < 0 else None
        out.append(replace(r, p_adjusted=p, significant=better is not None, better=better))
    return out, sum(p is not None for p in family)


def _ranking(systems: list[str], means: np.ndarray, counts: np.ndarray, boot: np.ndarray, order: list[int],
             pairs: list[PairResult], confidence: float) -> list[SystemResult]:
    """Systems best first, each with its bootstrap CI (None below 2 documents) and the systems it beats."""
    beaten: dict[str, list[str]] = {name: [] for name in systems}
    for p in pairs:
        if p.better is not None:
            beaten[p.better].append(p.b if p.better == p.a else p.a)
    rank = {systems[j]: r for r, j in enumerate(order, start=1)}
    return [SystemResult(r, systems[j], float(means[j]), interval(boot[:, j], confidence).ci if counts[j] >= 2
                         else None, int(counts[j]), sorted(beaten[systems[j]], key=rank.__getitem__))
            for r, j in enumerate(order, start=1)]
