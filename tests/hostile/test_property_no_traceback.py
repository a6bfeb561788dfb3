"""Class 4: no traceback, whatever the bytes.

Rule: whatever a file holds and whatever an option says, a command either does its work or exits non-zero with one
line on standard error, never a traceback, and never changes its inputs. The error boundary
(``boundary.run_command``) turns the project's ``UserError`` and ``OSError`` into that line; everything else is a
bug and keeps its traceback, so these property tests (hypothesis generates the files and arguments) fail on any
reader or command that lets a library error through. Called in-process through ``learned_metrics.cli.main``, the
entry point of the console script.

Found before by hand, each a traceback: a 400-digit integer score (``OverflowError``), a sweep file that is not
UTF-8, a YAML file nested 5,000 levels deep (``RecursionError``), ``--joiner`` holding a lone surrogate. Their
fixed one-line answers are asserted below beside the generated cases.
"""

from __future__ import annotations

import hashlib
import json
import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from learned_metrics.cli import main
from learned_metrics.errors import UserError
from learned_metrics.io import iter_rows

FIELDS = ["doc_id", "system_id", "score", "label", "corpus", "text", "generation", "grounding", "id"]
HOSTILE_TEXT = st.one_of(st.text(max_size=12), st.sampled_from(["", " ", "\ud800", "n/a", "NaN", "1e999", "-0",
                                                                  "\x00", "é\u202e", "9" * 400]))
CONSTANTS = st.sampled_from([10 ** 400, -(10 ** 400), float("inf"), float("nan"), {}, [], "", True, "\ud800", 2 ** 63])
VALUES = st.one_of(
    CONSTANTS, CONSTANTS, CONSTANTS,  # the values that broke commands before, three times as likely as the others
    st.none(), st.booleans(), st.integers(min_value=-(10 ** 400), max_value=10 ** 400),
    st.floats(allow_nan=True, allow_infinity=True), HOSTILE_TEXT,
    st.lists(st.integers(0, 3), max_size=3), st.dictionaries(st.sampled_from(FIELDS), st.integers(0, 2), max_size=2),
)
DROP = object()


def base_rows() -> list[dict]:
    """A well-formed file every command accepts: 4 documents x 3 systems, labels, corpora, texts, an original and a
    shuffle per document."""
    return [{"doc_id": f"d{d}", "system_id": f"s{s}", "score": round(0.1 * d + 0.3 * s + 0.05 * (d * s % 3), 3),
             "label": (d + s) % 2, "corpus": f"c{d % 2}", "id": d * 3 + s, "text": "One. " * (s + 1),
             "generation": f"I think system {s} said {d}.", "grounding": f"System {s} said {d} and more."}
            for d in range(4) for s in range(3)]


# mostly well-formed files, with a few hostile values (or missing fields) where the commands read them
MUTATED_FIELDS = FIELDS + ["score", "score", "label", "doc_id", "system_id"]  # where most commands look
MUTATIONS = st.lists(st.tuples(st.integers(0, 11), st.sampled_from(MUTATED_FIELDS), st.one_of(VALUES, st.just(DROP))),
                     min_size=1, max_size=3)
ROWS = MUTATIONS.map(lambda changes: mutated(base_rows(), changes))


def mutated(rows: list[dict], changes) -> list[dict]:
    for index, field, value in changes:
        if value is DROP:
            rows[index].pop(field, None)
        else:
            rows[index][field] = value
    return rows
RAW = st.one_of(st.binary(max_size=200), st.text(alphabet=string.printable + "\ufeff\u2028é", max_size=200))

SETTINGS = settings(max_examples=40, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def jsonl(rows: list[dict]) -> bytes:
    return "".join(json.dumps(row) + "\n" for row in rows).encode()


def commands(path: str, other: str) -> dict[str, list[str]]:
    """Every meta-eval subcommand reading the hostile file(s), cheap settings."""
    grid = ["--human", path, "--metric", other]
    return {
        "correlations": ["meta-eval", "correlations", *grid, "--resamples", "3"],
        "compare": ["meta-eval", "compare", *grid, "--metric", path, "--permutations", "3", "--resamples", "2",
                    "--workers", "1"],
        "report": ["meta-eval", "report", *grid, "--metric", path, "--permutations", "3", "--resamples", "2",
                   "--workers", "1"],
        "report-auc": ["meta-eval", "report", "--auc", "--metric", path, "--metric", other, "--permutations", "3",
                       "--resamples", "2"],
        "system-level": ["meta-eval", "system-level", *grid, "--resamples", "2", "--delta-band", "0", "inf"],
        "systems": ["meta-eval", "systems", "--input", path, "--resamples", "2", "--permutations", "3"],
        "bias-matrix": ["meta-eval", "bias-matrix", *grid],
        "auc": ["meta-eval", "auc", "--input", path, "--group-field", "corpus", "--system-field", "system_id",
                "--resamples", "2"],
        "shuffle-test": ["meta-eval", "shuffle-test", "--input", path, "--resamples", "2", "--length-gap"],
        "confounders": ["meta-eval", "confounders", "--input", path, "--resamples", "2", "--proxy-field", "id"],
    }


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def assert_done_or_one_line(capsys, argv: list[str], inputs: list[Path]) -> None:
    before = [digest(p) for p in inputs]
    code = main(argv)  # a library error escaping the boundary fails the test with its traceback
    err = capsys.readouterr().err
    assert code in (0, 2), (argv, code, err)
    if code == 2:
        assert err.count("\n") == 1 and "Traceback" not in err, err
    assert [digest(p) for p in inputs] == before


@pytest.mark.parametrize("command", list(commands("x", "y")))
@pytest.mark.slow
def test_every_meta_eval_command_on_generated_rows(command, tmp_path_factory, capsys):
    folder = tmp_path_factory.mktemp(command)

    @SETTINGS
    @given(first=ROWS, second=ROWS, suffix=st.sampled_from([".jsonl", ".csv"]))
    def check(first, second, suffix):
        paths = []
        for name, rows in (("a", first), ("b", second)):
            path = folder / f"{name}{suffix}"
            if suffix == ".jsonl":
                path.write_bytes(jsonl(rows))
            else:
                import csv
                import io

                buffer = io.StringIO()
                writer = csv.DictWriter(buffer, fieldnames=FIELDS)
                writer.writeheader()
                for row in rows:
                    writer.writerow({k: json.dumps(v) if isinstance(v, (list, dict)) else v for k, v in row.items()})
                path.write_text(buffer.getvalue(), encoding="utf-8", errors="surrogatepass")
            paths.append(path)
        assert_done_or_one_line(capsys, commands(str(paths[0]), str(paths[1]))[command], paths)

    check()


@SETTINGS
@given(raw=RAW, suffix=st.sampled_from([".jsonl", ".csv", ".parquet"]))
def test_the_reader_on_arbitrary_bytes_yields_rows_or_one_user_error(tmp_path_factory, raw, suffix):
    path = tmp_path_factory.mktemp("raw") / f"input{suffix}"
    path.write_bytes(raw if isinstance(raw, bytes) else raw.encode("utf-8"))
    try:
        rows = list(iter_rows(path))
    except UserError as exc:
        assert "\n" not in str(exc) and str(path) in str(exc)
        return
    assert all(isinstance(number, int) and isinstance(row, dict) for number, row in rows)


ARGUMENTS = st.lists(st.sampled_from(["--seed", "--resamples", "--permutations", "--confidence", "--alpha",
                                      "--coefficient", "--stats", "--human-field", "--doc-field", "--resample",
                                      "--correction", "--alternative", "--workers"]).flatmap(
    lambda flag: st.tuples(st.just(flag), HOSTILE_TEXT)), max_size=3)


@SETTINGS
@given(arguments=ARGUMENTS)
@pytest.mark.slow
def test_hostile_option_values_are_refused_in_one_line(tmp_path_factory, capsys, arguments):
    examples = Path(__file__).resolve().parents[2] / "examples" / "meta_eval"
    argv = ["meta-eval", "report", "--human", str(examples / "human.jsonl"), "--metric",
            str(examples / "metric_good.jsonl"), "--resamples", "2", "--permutations", "2", "--workers", "1"]
    flat = [part for pair in arguments for part in pair]
    try:
        assert_done_or_one_line(capsys, [*argv, *flat], [examples / "human.jsonl"])
    except SystemExit as exc:  # argparse refuses in one line and exits 2
        assert exc.code == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.slow
def test_the_cases_found_by_hand(tmp_path, capsys):
    bad = tmp_path / "sweep.yml"
    bad.write_bytes(b"method: grid\n\xff\xfe\n")
    deep = tmp_path / "deep.yml"
    deep.write_text("a: " + "[" * 5000 + "]" * 5000 + "\n")
    for path, message in ((bad, "not UTF-8 text"), (deep, "nested too deeply")):
        assert main(["sweep", "check", str(path)]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1
    from learned_metrics.text.sentences import parse_joiner

    with pytest.raises(UserError, match="lone surrogate"):
        parse_joiner("\\ud800")
    assert parse_joiner("\\U0001F600") == "\U0001f600" and parse_joiner(" \\u2014 ") == " \u2014 "  # controls


@pytest.mark.parametrize("command", ["correlations", "bias-matrix", "system-level"])
def test_control_well_formed_files_pass_the_same_check(command, capsys):
    examples = Path(__file__).resolve().parents[2] / "examples" / "meta_eval"
    human, metric = examples / "human.jsonl", examples / "metric_good.jsonl"
    before = [digest(human), digest(metric)]
    assert main(commands(str(human), str(metric))[command]) == 0
    assert [digest(human), digest(metric)] == before
