"""Meta-evaluation benchmark: vectorized bootstrap vs the naive way, on the same data and resamples.

    .venv/bin/python bench/bench_meta_eval.py [--resamples 1000] [--naive-resamples 1000] [--no-readme]

Data: 16 systems x 100 documents (SummEval's shape); human scores are means of
three Likert ratings (many ties), the metric is continuous. Both ways compute
all five statistics (Kendall tau-b) on the same BOOT-BOTH resamples (the same
index arrays from :func:`bootstrap_indices`), so point estimates must be equal
and the CIs equal up to floating-point ties.

The naive way is the original paper code's: per resample, index the score
matrices, build a pandas frame, ``groupby`` document / system and call
``scipy.stats.kendalltau`` per group. If ``--naive-resamples`` is smaller than
``--resamples``, its time is extrapolated per resample and the table says so.

Also measured: peak RSS of 10,000 resamples in a fresh process (the resamples
are index arrays evaluated in blocks, so memory does not grow with them).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from common import README, TIME_V, machine, replace_section, run_fresh
from scipy import stats as scipy_stats

from learned_metrics.meta_eval import STATISTICS, bootstrap_indices, correlations, percentile_interval

N_DOCS, N_SYSTEMS = 100, 16
SECTION = "## Meta-evaluation"


def make_data(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(documents x systems) human means of 3 Likert ratings and a continuous metric."""
    rng = np.random.default_rng(seed)
    quality = (
        np.linspace(-1, 1, N_SYSTEMS)[None, :]
        + rng.normal(0, 0.5, (N_DOCS, 1))
        + rng.normal(0, 0.7, (N_DOCS, N_SYSTEMS))
    )
    ratings = np.clip(np.rint(3 + quality[..., None] + rng.normal(0, 0.6, (N_DOCS, N_SYSTEMS, 3))), 1, 5)
    human = ratings.mean(axis=-1)
    metric = quality + rng.normal(0, 0.6, quality.shape)
    return human, metric


def _kendall(x: pd.Series | np.ndarray, y: pd.Series | np.ndarray) -> float:
    return float(scipy_stats.kendalltau(x, y).statistic)


def naive_statistics(human: np.ndarray, metric: np.ndarray) -> dict[str, float]:
    """All five statistics the paper-code way: a long frame, groupby, scipy per group."""
    n_docs, n_systems = human.shape
    frame = pd.DataFrame(
        {
            "doc": np.repeat(np.arange(n_docs), n_systems),
            "system": np.tile(np.arange(n_systems), n_docs),
            "human": human.ravel(),
            "metric": metric.ravel(),
        }
    )
    means = frame.groupby("system")[["human", "metric"]].mean()
    per_doc = frame.groupby("doc").apply(lambda g: _kendall(g["metric"], g["human"]), include_groups=False)
    per_system = frame.groupby("system").apply(lambda g: _kendall(g["metric"], g["human"]), include_groups=False)
    agree = strict = 0
    for _, group in frame.groupby("doc"):
        h, m = group["human"].to_numpy(), group["metric"].to_numpy()
        upper = np.triu_indices(len(h), 1)
        sign_h = np.sign(h[:, None] - h[None, :])[upper]
        sign_m = np.sign(m[:, None] - m[None, :])[upper]
        strict += int((sign_h != 0).sum())
        agree += int(((sign_h != 0) & (sign_h == sign_m)).sum())
    return {
        "tau_sys": _kendall(means["metric"], means["human"]),
        "tau_sum": _kendall(frame["metric"], frame["human"]),
        "tau_pair": float(np.nanmean(per_doc)),
        "acc_pair": agree / strict if strict else float("nan"),
        "tau_intra": float(np.nanmean(per_system)),
    }


def naive_bootstrap(human: np.ndarray, metric: np.ndarray, resamples: int, seed: int) -> dict[str, np.ndarray]:
    """The same BOOT-BOTH resamples, one resample and one group at a time."""
    out: dict[str, list[float]] = {name: [] for name in STATISTICS}
    for doc_idx, sys_idx in bootstrap_indices(N_DOCS, N_SYSTEMS, resamples, "both", seed):
        for docs, systems in zip(doc_idx, sys_idx, strict=True):
            values = naive_statistics(human[docs][:, systems], metric[docs][:, systems])
            for name, value in values.items():
                out[name].append(value)
    return {name: np.array(values) for name, values in out.items()}


def time_ours(human: np.ndarray, metric: np.ndarray, resamples: int, seed: int, repeats: int = 3):
    """Median wall time of :func:`correlations` over a few runs, and its report."""
    times, report = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        report = correlations(human, metric, resamples=resamples, resample="both", seed=seed)
        times.append(time.perf_counter() - start)
    return float(np.median(times)), report


def peak_rss_mib(resamples: int) -> float | None:
    """Peak RSS (MiB) of a fresh process running ``resamples`` BOOT-BOTH resamples, via /usr/bin/time -v."""
    if not Path(TIME_V).exists():
        return None
    code = (  # numpy + the package only, so the figure is not inflated by pandas
        "import numpy as np; from learned_metrics.meta_eval import correlations; "
        f"rng = np.random.default_rng(0); h = np.rint(rng.normal(3, 1, ({N_DOCS}, {N_SYSTEMS}))); "
        f"correlations(h, h + rng.normal(size=h.shape), resamples={resamples})"
    )
    run = run_fresh([sys.executable, "-c", code], check=False)
    return run.peak_mib if run.proc.returncode == 0 else None


def render(rows: list[dict], agreement: dict, rss: dict, args: argparse.Namespace, machine_text: str) -> str:
    """The markdown section for bench/README.md (also printed)."""
    naive, ours = rows
    lines = [
        SECTION,
        "",
        f"Machine: {machine_text}. Data: {N_SYSTEMS} systems x {N_DOCS} documents (human = mean of 3 Likert ratings, "
        "so many ties; continuous metric). All five statistics, Kendall tau-b, BOOT-BOTH resamples, seed "
        f"{args.seed}; both ways use the same resample index arrays.",
        "",
        f"| way | resamples timed | seconds | ms / resample | seconds for {args.resamples:,} | speed-up |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(
            f"| {row['way']} | {row['timed']:,} | {row['seconds']:.2f} | {row['per_resample_ms']:.3f} | "
            f"{row['projected']:.2f}{' (extrapolated)' if row['extrapolated'] else ''} | "
            f"{naive['projected'] / row['projected']:.0f}x |"
        )
    lines += [
        "",
        f"Agreement: point estimates max |difference| {agreement['point']:.1e}; 95% CI bounds max |difference| "
        f"{agreement['ci']:.1e} over the {agreement['compared']:,} resamples both ways computed "
        f"(Monte-Carlo error of a CI bound at {args.resamples:,} resamples is about {agreement['mc_error']:.3f}).",
        "",
    ]
    if rss:
        lines.append(
            "Peak RSS of a fresh process running `correlations` (`/usr/bin/time -v`; 0 resamples = imports and "
            "point estimates only): "
            + ", ".join(f"{k:,} resamples {v:.0f} MiB" for k, v in rss.items())
            + ". Resamples are index arrays evaluated in blocks of 128, so memory does not grow with their number."
        )
        lines.append("")
    lines += ["Reproduce: `.venv/bin/python bench/bench_meta_eval.py` (or `make bench`).", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--naive-resamples", type=int, default=None, help="default: same as --resamples")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-readme", action="store_true", help="print only; leave bench/README.md alone")
    args = parser.parse_args(argv)
    naive_resamples = args.naive_resamples or args.resamples
    human, metric = make_data()
    started_on = machine("at start")

    seconds, report = time_ours(human, metric, args.resamples, args.seed)
    start = time.perf_counter()
    naive_point = naive_statistics(human, metric)
    naive_samples = naive_bootstrap(human, metric, naive_resamples, args.seed)
    naive_seconds = time.perf_counter() - start

    # Compare on exactly the resamples both computed.
    compared = min(naive_resamples, args.resamples)
    ours_subset = correlations(human, metric, resamples=compared, seed=args.seed)
    point_diff = max(abs(report.stats[n].value - naive_point[n]) for n in STATISTICS)
    ci_diff = max(
        abs(a - b)
        for n in STATISTICS
        for a, b in zip(ours_subset.stats[n].ci, percentile_interval(naive_samples[n]).ci, strict=True)
    )
    spread = max(float(np.std(naive_samples[n])) for n in STATISTICS)
    # Standard error of a 2.5% quantile: sqrt(p(1-p)/n) / density, density ~ normal pdf at 1.96 / sd.
    mc_error = np.sqrt(0.025 * 0.975 / args.resamples) / (0.0584 / spread)
    rows = [
        {
            "way": "naive (pandas groupby + scipy.stats.kendalltau per group per resample)",
            "timed": naive_resamples,
            "seconds": naive_seconds,
            "per_resample_ms": 1000 * naive_seconds / naive_resamples,
            "projected": naive_seconds * args.resamples / naive_resamples,
            "extrapolated": naive_resamples != args.resamples,
        },
        {
            "way": "learned_metrics.meta_eval.correlations (median of 3 runs)",
            "timed": args.resamples,
            "seconds": seconds,
            "per_resample_ms": 1000 * seconds / args.resamples,
            "projected": seconds,
            "extrapolated": False,
        },
    ]
    agreement = {"point": point_diff, "ci": ci_diff, "compared": compared, "mc_error": mc_error}
    rss = {k: v for k in (0, 1_000, 10_000) if (v := peak_rss_mib(k)) is not None}
    section = render(rows, agreement, rss, args, started_on)
    print(section)
    ok = seconds < 5 and rows[0]["projected"] / seconds >= 50 and point_diff < 1e-9 and ci_diff <= mc_error
    print("targets (< 5 s, >= 50x, equal points, CIs within Monte-Carlo error):", "met" if ok else "NOT met")
    if not args.no_readme:
        replace_section(section)
        print(f"updated {README}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
