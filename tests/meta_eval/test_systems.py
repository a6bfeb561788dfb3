"""`meta-eval systems`: per-system means with CIs and paired tests between systems, checked against pandas, scipy
and plain loops written here, on random data with ties and missing cells; the CLI end to end; one-line errors."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import ttest_rel

from learned_metrics.cli import main
from learned_metrics.errors import UserError
from learned_metrics.meta_eval.resampling import bootstrap_indices, swap_masks
from learned_metrics.meta_eval.systems import (
    SystemScores,
    compare_systems,
    read_system_scores,
    system_scores,
    system_scores_from_frame,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "meta_eval"


def long_frame(seed: int = 0, docs: int = 25, systems: int = 4, missing: float = 0.15) -> pd.DataFrame:
    """Scores rounded to one decimal (ties within and across systems), some cells absent; doc-major row order."""
    rng = np.random.default_rng(seed)
    quality = np.linspace(0.4, 0, systems)
    rows = []
    for d in range(docs):
        for s in range(systems):
            if s > 0 and rng.random() < missing:  # system 0 scores every document, so every doc appears
                continue
            rows.append({"doc_id": f"d{d}", "system_id": f"s{s}",
                         "score": round(float(quality[s] + rng.normal(0, 0.5)), 1)})
    return pd.DataFrame(rows)


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["meta-eval", "systems", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


# --- statistics against pandas, scipy and plain loops --------------------------------------------------------------


def drawn_documents(n_docs: int, resamples: int, seed: int) -> list[np.ndarray]:
    """The library's documented draws (one index array per resample), so the loops below can redo the statistic."""
    return [row for idx, _ in bootstrap_indices(n_docs, 1, resamples, "documents", seed) for row in idx]


def test_system_means_and_cis_match_a_groupby_and_a_plain_loop_bootstrap():
    frame = long_frame(seed=1)
    result = compare_systems(frame, resamples=300, permutations=200, seed=7)
    means = frame.groupby("system_id")["score"].mean()
    counts = frame.groupby("system_id")["score"].size()
    assert [r.system for r in result.systems] == list(means.sort_values(ascending=False, kind="stable").index)
    docs = list(dict.fromkeys(frame["doc_id"]))
    cells = {(d, s): v for d, s, v in frame[["doc_id", "system_id", "score"]].itertuples(index=False)}
    draws = drawn_documents(len(docs), 300, seed=7)
    for r in result.systems:
        assert r.mean == pytest.approx(means[r.system]) and r.n == counts[r.system]
        resampled = []
        for idx in draws:  # a resample's mean over the drawn documents this system scored
            values = [cells[(docs[i], r.system)] for i in idx if (docs[i], r.system) in cells]
            resampled.append(sum(values) / len(values))
        assert r.ci == pytest.approx(tuple(np.percentile(resampled, [2.5, 97.5])))


def test_pair_statistics_match_scipy_and_plain_loops_on_shared_documents():
    frame = long_frame(seed=2, docs=30, systems=3)
    result = compare_systems(frame, resamples=250, permutations=300, seed=4)
    docs = list(dict.fromkeys(frame["doc_id"]))
    cells = {(d, s): v for d, s, v in frame[["doc_id", "system_id", "score"]].itertuples(index=False)}
    draws = drawn_documents(len(docs), 250, seed=4)
    signs = [1 - 2 * m[:, 0] for chunk in swap_masks(len(docs), 1, 300, "document", 4) for m in chunk]
    for p in result.pairs:
        shared = [i for i, d in enumerate(docs) if (d, p.a) in cells and (d, p.b) in cells]
        a = np.array([cells[(docs[i], p.a)] for i in shared])
        b = np.array([cells[(docs[i], p.b)] for i in shared])
        assert p.n == len(shared) and p.delta == pytest.approx(a.mean() - b.mean())
        assert p.delta >= 0  # A is the better of the two on their shared documents
        wins = ties = losses = 0
        for x, y in zip(a, b, strict=True):
            wins, ties, losses = wins + (x > y), ties + (x == y), losses + (x < y)
        assert (p.wins, p.ties, p.losses) == (wins, ties, losses) and ties > 0
        assert p.win_rate == pytest.approx(wins / len(shared))
        assert p.p_t == pytest.approx(ttest_rel(a, b, alternative="greater").pvalue)
        diff = {i: cells[(docs[i], p.a)] - cells[(docs[i], p.b)] for i in shared}
        boot = []
        for idx in draws:
            drawn = [diff[i] for i in idx if i in diff]
            boot.append(sum(drawn) / len(drawn))
        assert p.ci == pytest.approx(tuple(np.percentile(boot, [2.5, 97.5])))
        # the package's paired-bootstrap convention (significance.bootstrap_p): shifted null, (1 + #) / (1 + k)
        shifted_exceed = sum(b - p.delta >= p.delta - 1e-12 for b in boot)
        assert p.p_bootstrap == pytest.approx((1 + shifted_exceed) / (1 + len(boot)))
        exceed = sum(np.mean([sign[i] * diff[i] for i in shared]) >= p.delta - 1e-12 for sign in signs)
        assert p.p_permutation == pytest.approx((1 + exceed) / (1 + 300))


def test_identical_systems_differ_by_nothing():
    rng = np.random.default_rng(3)
    scores = rng.normal(size=40).round(1)
    data = SystemScores([f"d{i}" for i in range(40)], ["a", "b"], np.stack([scores, scores], axis=1))
    pair = compare_systems(data, resamples=200, permutations=500).pairs[0]
    assert pair.delta == 0 and pair.ci[0] <= 0 <= pair.ci[1]
    assert pair.p_permutation == 1.0 and pair.p_bootstrap == 1.0 and pair.p_t is None
    assert (pair.wins, pair.ties, pair.losses, pair.win_rate) == (0, 40, 0, 0.0)
    assert not pair.significant and pair.better is None


def test_a_system_one_point_better_everywhere_wins_every_test():
    rng = np.random.default_rng(4)
    base = rng.normal(size=30)
    data = SystemScores([f"d{i}" for i in range(30)], ["worse", "better"], np.stack([base, base + 1], axis=1))
    result = compare_systems(data, resamples=200, permutations=999, seed=1)
    pair = result.pairs[0]
    assert (pair.a, pair.b) == ("better", "worse")
    assert pair.delta == pytest.approx(1.0) and pair.win_rate == 1.0 and pair.ties == 0
    assert pair.p_permutation == pytest.approx(1 / 1000) and pair.p_bootstrap == pytest.approx(1 / 201)
    assert pair.p_t < 1e-12
    assert pair.significant and pair.better == "better"
    assert [(r.system, r.better_than) for r in result.systems] == [("better", ["worse"]), ("worse", [])]


def test_only_shared_documents_enter_a_pair_and_fewer_than_two_is_undefined():
    nan = np.nan
    grid = np.array([[5.0, nan, 0.0], [1.0, 2.0, nan], [3.0, 1.0, nan], [2.0, 2.0, nan], [nan, 4.0, 1.0]])
    data = SystemScores(["d0", "d1", "d2", "d3", "d4"], ["a", "b", "c"], grid)
    result = compare_systems(data, resamples=50, permutations=50)
    pairs = {frozenset((p.a, p.b)): p for p in result.pairs}
    ab = pairs[frozenset(("a", "b"))]
    assert ab.n == 3 and abs(ab.delta) == pytest.approx(abs((1 + 3 + 2) / 3 - (2 + 1 + 2) / 3))
    assert (ab.a, ab.wins, ab.ties, ab.losses) == ("a", 1, 1, 1)
    for key in (("a", "c"), ("b", "c")):  # one shared document each
        p = pairs[frozenset(key)]
        assert p.n == 1 and p.delta is None and p.p_adjusted is None and p.p_permutation is None
        assert not p.significant
    grid[0, 0] = 100.0  # a document b never scored moves a's mean, not the a-b comparison
    moved = compare_systems(SystemScores(data.docs, data.systems, grid), resamples=50, permutations=50)
    assert {frozenset((p.a, p.b)): p for p in moved.pairs}[frozenset(("a", "b"))] == ab
    assert next(r.mean for r in moved.systems if r.system == "a") != next(
        r.mean for r in result.systems if r.system == "a")


def holm(p_values: list[float]) -> list[float]:
    """Holm's step-down by hand: the i-th smallest times (m - i), running maximum, capped at 1."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted, running = [0.0] * m, 0.0
    for step, i in enumerate(order):
        running = max(running, (m - step) * p_values[i])
        adjusted[i] = min(1.0, running)
    return adjusted


def test_holm_against_a_baseline_equals_a_hand_computation():
    frame = long_frame(seed=5, docs=40, systems=5, missing=0)
    result = compare_systems(frame, baseline="s4", resamples=100, permutations=400, seed=2)
    assert [p.b for p in result.pairs] == ["s4"] * 4 and {p.a for p in result.pairs} == {"s0", "s1", "s2", "s3"}
    expected = holm([p.p_permutation for p in result.pairs])
    assert [p.p_adjusted for p in result.pairs] == pytest.approx(expected)
    assert [p.significant for p in result.pairs] == [q < 0.05 for q in expected]


def test_all_pairs_bonferroni_counts_both_directions_and_two_sided_counts_each_pair_once():
    frame = long_frame(seed=6, docs=40, systems=4, missing=0)
    one_sided = compare_systems(frame, correction="bonferroni", test="bootstrap", resamples=400, seed=3)
    m = len(one_sided.pairs)
    assert m == 6
    for p in one_sided.pairs:
        assert p.p_adjusted == pytest.approx(min(1.0, 2 * m * p.p_bootstrap))
    two_sided = compare_systems(frame, correction="holm", alternative="two-sided", test="t")
    assert [p.p_adjusted for p in two_sided.pairs] == pytest.approx(holm([p.p_t for p in two_sided.pairs]))
    for p in two_sided.pairs:
        a = frame[frame.system_id == p.a].score.to_numpy()
        b = frame[frame.system_id == p.b].score.to_numpy()
        assert p.p_t == pytest.approx(ttest_rel(a, b).pvalue)
    uncorrected = compare_systems(frame, correction="none", permutations=300)
    assert [p.p_adjusted for p in uncorrected.pairs] == [p.p_permutation for p in uncorrected.pairs]


def test_the_ranking_marks_exactly_the_significant_pairs():
    frame = long_frame(seed=7, docs=60, systems=5, missing=0.05)
    frame.loc[frame.system_id == "s0", "score"] += 0.6
    result = compare_systems(frame, permutations=2000, resamples=100)
    beaten = {(p.better, p.b if p.better == p.a else p.a) for p in result.pairs if p.significant}
    assert beaten and beaten == {(r.system, loser) for r in result.systems for loser in r.better_than}
    for r in result.systems:
        assert [result.rank_of(x) for x in r.better_than] == sorted(result.rank_of(x) for x in r.better_than)


def test_too_few_permutations_for_the_correction_is_said():
    frame = long_frame(seed=8, docs=30, systems=6, missing=0)
    assert any("no pair can be significant" in n for n in compare_systems(frame, permutations=200).notes)
    assert not any("significant" in n for n in compare_systems(frame, permutations=5000, resamples=50).notes)


def test_the_same_seed_gives_the_same_result_and_inputs_agree():
    frame = long_frame(seed=9)
    first = compare_systems(frame, resamples=100, permutations=100, seed=5)
    assert compare_systems(frame, resamples=100, permutations=100, seed=5).to_json() == first.to_json()
    from_arrays = system_scores(frame.doc_id.to_numpy(), frame.system_id.to_numpy(), frame.score.to_numpy())
    renamed = frame.rename(columns={"doc_id": "id", "system_id": "model", "score": "bleurt"})
    from_frame = system_scores_from_frame(renamed, doc="id", system="model", score="bleurt")
    for data in (from_arrays, from_frame):
        assert compare_systems(data, resamples=100, permutations=100, seed=5).to_json() == first.to_json()
    assert compare_systems(renamed, doc="id", system="model", score="bleurt", resamples=100, permutations=100,
                           seed=5).to_json() == first.to_json()


def assert_latex_compiles(latex: str) -> None:
    """What breaks a LaTeX run here: unbalanced braces or environments, and rows with the wrong number of cells."""
    plain = re.sub(r"\\[{}&%_$#]", "", latex)
    depth = 0
    for char in plain:
        depth += {"{": 1, "}": -1}.get(char, 0)
        assert depth >= 0
    assert depth == 0
    stack = []
    for kind, name in re.findall(r"\\(begin|end)\{(\w+)\}", latex):
        if kind == "begin":
            stack.append(name)
        else:
            assert stack.pop() == name
    assert not stack
    for spec, body in re.findall(r"\\begin\{tabular\}\{(\w+)\}(.*?)\\end\{tabular\}", plain, flags=re.S):
        rows = [line for line in body.splitlines() if line.rstrip().endswith("\\\\")]
        assert rows and all(line.count("&") == len(spec) - 1 for line in rows)


def test_renderers_escape_names_and_agree_with_the_results():
    frame = long_frame(seed=10, systems=3, missing=0)
    frame["system_id"] = frame["system_id"].map({"s0": "ours_v2 & co", "s1": "50%", "s2": "base"})
    result = compare_systems(frame, resamples=100, permutations=100)
    latex = result.to_latex()
    assert r"ours\_v2 \& co" in latex and r"50\%" in latex and latex.count(r"\begin{tabular}") == 2
    assert "—" not in latex
    assert_latex_compiles(latex)
    markdown = result.to_markdown()
    assert "| 1 | ours_v2 & co |" in markdown and result.caption in markdown
    ranking = list(csv.DictReader(io.StringIO(result.to_csv())))
    assert [row["system"] for row in ranking] == [r.system for r in result.systems]
    assert float(ranking[0]["ci_low"]) == pytest.approx(result.systems[0].ci[0], rel=1e-5)
    pairs = list(csv.DictReader(io.StringIO(result.to_csv("pairs"))))
    assert len(pairs) == 3 and float(pairs[0]["delta"]) == pytest.approx(result.pairs[0].delta, rel=1e-5)
    assert list(result.to_frame("pairs").columns[:6]) == ["a", "b", "n", "delta", "ci_low", "ci_high"]
    assert result.to_frame()["system"].tolist() == [r.system for r in result.systems]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"baseline": "nope"}, "--baseline 'nope' is not one of the systems"),
        ({"test": "wilcoxon"}, "unknown test"),
        ({"correction": "fdr"}, "unknown correction"),
        ({"alpha": 0}, "--alpha must be in (0, 1)"),
        ({"permutations": 0}, "--permutations must be >= 1"),
        ({"resamples": -1}, "resamples must be an integer >= 0"),
    ],
)
def test_bad_api_arguments_are_user_errors(kwargs, message):
    with pytest.raises(UserError, match=None) as info:
        compare_systems(long_frame(), **kwargs)
    assert message in str(info.value)


def test_api_inputs_are_validated_with_row_numbers():
    with pytest.raises(UserError, match=r"DataFrame, row 3: duplicate key \(doc_id='d1', system_id='a'\), first at "
                                        r"row 1"):
        system_scores_from_frame(pd.DataFrame({"doc_id": ["d1", "d2", "d1"], "system_id": ["a", "a", "a"],
                                               "score": [1.0, 2.0, 3.0]}))
    with pytest.raises(UserError, match=r"scores, row 2, field 'score': score is missing or NaN"):
        system_scores(["d1", "d1"], ["a", "b"], [1.0, float("nan")])
    with pytest.raises(UserError, match="at least two, found 1"):
        compare_systems(pd.DataFrame({"doc_id": ["d1", "d2"], "system_id": ["a", "a"], "score": [1.0, 2.0]}))


# --- command line --------------------------------------------------------------------------------------------------


def test_cli_concatenates_files_and_writes_every_format(tmp_path, capsys):
    frame = long_frame(seed=11, docs=20, systems=3)
    first = write_jsonl(tmp_path / "s0.jsonl", frame[frame.system_id == "s0"].to_dict("records"))
    rest = tmp_path / "rest.csv"
    frame[frame.system_id != "s0"].to_csv(rest, index=False)
    outputs = {attr: tmp_path / "out" / name for attr, name in
               (("json", "r.json"), ("markdown", "r.md"), ("latex", "r.tex"), ("csv", "r.csv"),
                ("pairs-csv", "p.csv"))}
    flags = [x for attr, path in outputs.items() for x in (f"--{attr}", path)]
    code, out, _ = run(capsys, "--input", first, "--input", rest, "--resamples", "200", "--permutations", "300",
                       "--seed", "2", *flags)
    assert code == 0
    assert "3 systems x 20 documents" in out and "p perm" in out and "better than" in out
    expected = compare_systems(frame, resamples=200, permutations=300, seed=2)
    written = json.loads(outputs["json"].read_text())
    settings = written.pop("settings")
    expected_json = json.loads(json.dumps(expected.to_json()))
    assert settings.items() >= expected_json.pop("settings").items()  # the CLI adds how the run was made
    assert written == expected_json
    assert outputs["markdown"].read_text() == expected.to_markdown()
    assert outputs["latex"].read_text() == expected.to_latex()
    assert outputs["csv"].read_bytes().decode() == expected.to_csv()  # bytes: csv rows end in \r\n
    assert outputs["pairs-csv"].read_bytes().decode() == expected.to_csv("pairs")
    for path in outputs.values():
        assert f": {path}" in out


def test_cli_on_the_shipped_example_with_a_baseline(tmp_path, capsys):
    out_json = tmp_path / "s.json"
    code, out, _ = run(capsys, "--input", EXAMPLES / "metric_good.jsonl", "--baseline", "M00", "--alternative",
                       "two-sided", "--resamples", "100", "--permutations", "2000", "--json", out_json)
    assert code == 0 and "against M00" in out
    data = json.loads(out_json.read_text())
    assert len(data["systems"]) == 16 and len(data["pairs"]) == 15
    assert all(p["b"] == "M00" and p["n"] == 100 for p in data["pairs"])
    assert data["settings"]["alternative"] == "two-sided" and data["settings"]["correction"] == "holm"


def test_cli_with_other_field_names(tmp_path, capsys):
    rows = [{"id": f"x{d}", "system": s, "consistency": float(d % 3 + (s == "big"))}
            for d in range(12) for s in ("big", "small")]
    path = write_jsonl(tmp_path / "scored.jsonl", rows)
    code, out, _ = run(capsys, "--input", path, "--doc-field", "id", "--system-field", "system",
                       "--score-field", "consistency", "--permutations", "500")
    assert code == 0 and "big" in out and "12/0/0" in out


def scored_rows(**overrides) -> list[dict]:
    rows = [{"doc_id": f"d{d}", "system_id": s, "score": float(d + j)} for d in range(5)
            for j, s in enumerate(("a", "b"))]
    for index, row in overrides.items():
        rows[int(index[1:])] = row
    return rows


@pytest.mark.parametrize(
    ("rows", "extra", "message"),
    [
        (scored_rows(r5={"doc_id": "d0", "system_id": "a", "score": 1.0}), [],
         "row 6: duplicate key (doc_id='d0', system_id='a'), first at row 1"),
        (scored_rows(r3={"doc_id": "d1", "system_id": "b", "score": None}), [],
         "row 4, field 'score': score is missing or NaN"),
        (scored_rows(r2={"doc_id": "d1", "system_id": "a"}), [], "row 3, field 'score': missing field"),
        (scored_rows(r0={"system_id": "a", "score": 1.0}), [],
         "row 1, field 'doc_id': missing field (fields present: score, system_id); paired tests need a document key"),
        (scored_rows(), ["--baseline", "c"], "--baseline 'c' is not one of the systems (a, b)"),
        ([{"doc_id": f"d{d}", "system_id": "a", "score": 1.0} for d in range(4)], [],
         "comparing systems needs at least two, found 1 ('a')"),
    ],
    ids=["duplicate", "nan", "missing score", "missing doc key", "unknown baseline", "single system"],
)
def test_cli_errors_are_one_line_and_write_nothing(tmp_path, capsys, rows, extra, message):
    path = write_jsonl(tmp_path / "bad.jsonl", rows)
    out_json = tmp_path / "never.json"
    code, _, err = run(capsys, "--input", path, "--json", out_json, "--permutations", "50", *extra)
    assert code == 2 and err.count("\n") == 1 and message in err, err
    assert not out_json.exists() and not list(tmp_path.glob(".never*"))


def test_cli_duplicate_across_files_names_both_files(tmp_path, capsys):
    first = write_jsonl(tmp_path / "one.jsonl", scored_rows())
    second = write_jsonl(tmp_path / "two.jsonl", [{"doc_id": "d9", "system_id": "c", "score": 0.0},
                                                  {"doc_id": "d2", "system_id": "b", "score": 1.0}])
    code, _, err = run(capsys, "--input", first, "--input", second)
    assert code == 2 and err.count("\n") == 1
    assert f"{second}, row 2: duplicate key (doc_id='d2', system_id='b'), first at {first} row 6" in err


def test_cli_drop_mode_prints_what_it_dropped(tmp_path, capsys):
    path = write_jsonl(tmp_path / "s.jsonl", scored_rows(r3={"doc_id": "d1", "system_id": "b", "score": None}))
    code, out, _ = run(capsys, "--input", path, "--on-missing", "drop", "--permutations", "50")
    assert code == 0 and "note: s.jsonl: dropped 1 row(s)" in out


def test_help_explains_the_tests_and_shows_an_example(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["meta-eval", "systems", "--help"])
    help_text = capsys.readouterr().out
    assert exit_info.value.code == 0
    for phrase in ("--doc-field", "p perm", "holm", "learned-metrics meta-eval systems --input"):
        assert phrase in help_text


def test_read_system_scores_keeps_first_seen_order():
    data = read_system_scores([EXAMPLES / "metric_good.jsonl"])
    assert data.grid.shape == (100, 16) and data.docs[0] == "d000" and data.systems[:2] == ["M00", "M01"]
    assert not np.isnan(data.grid).any()
