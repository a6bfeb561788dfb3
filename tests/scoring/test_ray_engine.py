"""``score --engine ray`` on a local Ray instance with 2 CPU actors: the one-process engine's numbers, every row
exactly once through a killed actor and a killed driver, bad input refused in one line before scoring.

Tolerance: scores equal the one-process engine's to 1e-6 absolute (the actors run torch with one thread each, the
one-process run with the machine's threads: the sums of a forward are ordered differently, ~1e-10 apart here).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hostile.hostile_tools import write_jsonl
from hostile.test_resume_integrity import rows as pair_rows

from learned_metrics.cli import main
from learned_metrics.errors import UserError
from learned_metrics.io import iter_rows

ray = pytest.importorskip("ray", reason="the Ray engine is the optional extra learned-metrics[ray]")
pq = pytest.importorskip("pyarrow.parquet")

from learned_metrics.scoring import ray_engine  # noqa: E402  (after the skip: it is importable without ray too)

ROWS = 30
pytestmark = pytest.mark.slow  # every test here starts actors (seconds each): make test runs them, make test-fast not


@pytest.fixture(scope="module")
def kill_marker(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("ray-kill") / "kill-next-actor"


ENGINE = "learned_metrics.scoring.ray_engine"


def kill_hook(marker: str):
    """A Ray worker's setup (``worker_process_setup_hook``) for tests of lost actors: the first block an actor gets
    after the ``marker`` file appears kills it (kill -9). The engine is patched when a worker imports it (an actor
    does), so the instance's other workers never import it (and torch)."""

    def setup() -> None:
        import importlib.abc
        import importlib.util
        import sys

        def patch(engine) -> None:
            score = engine.ScoreBlocks.__call__

            def killed_when_marked(self, block):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(marker)  # only one actor wins the removal: one kill per marker
                    os.kill(os.getpid(), signal.SIGKILL)
                return score(self, block)

            engine.ScoreBlocks.__call__ = killed_when_marked

        class PatchOnImport(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path, target=None):
                if name != ENGINE:  # a name, not the module: pickling it would import the engine
                    return None
                sys.meta_path.remove(self)
                spec = importlib.util.find_spec(name)
                load = spec.loader.exec_module
                spec.loader.exec_module = lambda module: (load(module), patch(module))
                return spec

        sys.meta_path.insert(0, PatchOnImport())

    return setup


@pytest.fixture(scope="module", autouse=True)
def local_ray(kill_marker):
    """One local instance for the module: 2 CPUs, so 2 actors of 1 CPU; its workers take the kill hook."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR",
             runtime_env={"env_vars": {"OMP_NUM_THREADS": "1"},
                          "worker_process_setup_hook": kill_hook(str(kill_marker))})
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    return write_jsonl(tmp_path_factory.mktemp("ray-input") / "pairs.jsonl", pair_rows(ROWS))


def ray_args(model: Path, source: Path, output: Path, *extra: str) -> list[str]:
    return ["score", "faithfulness", "--model", str(model), "--input", str(source), "--output", str(output),
            "--engine", "ray", "--ray-actors", "2", "--chunk-size", "4", "--no-progress", *extra]


def local_scores(model: Path, source: Path, output: Path, *extra: str) -> list[dict]:
    assert main(["score", "faithfulness", "--model", str(model), "--input", str(source), "--output", str(output),
                 "--no-progress", *extra]) == 0
    return pq.read_table(output).to_pylist()


def ray_rows(output: Path) -> list[dict]:
    """The output folder's rows in input order; every input row exactly once."""
    rows = sorted(pq.read_table(output).to_pylist(), key=lambda row: row["input_row"])
    assert [row["input_row"] for row in rows] == list(range(1, ROWS + 1))
    return rows


def assert_same_scores(ray_output: list[dict], local: list[dict]) -> None:
    for column in ("score", "prob_entailment", "prob_neutral", "prob_contradiction", "score_std"):
        if column in local[0]:
            np.testing.assert_allclose([r[column] for r in ray_output], [r[column] for r in local], rtol=0,
                                       atol=1e-6, err_msg=column)
    kept = [{k: v for k, v in row.items() if k in ("id", "system", "tags", "grounding", "generation")}
            for row in ray_output]
    assert kept == [{k: row[k] for k in kept[0]} for row in local]  # every input field, unchanged


RESOLVED = ("model", "weights_sha256", "labels", "mode", "mc_samples", "max_length", "premise_strategy", "device",
            "precision", "max_tokens", "seed")


@pytest.fixture(scope="module")
def clean_run(tiny_deberta_nli, source, kill_marker, tmp_path_factory) -> tuple[Path, str, Path]:
    """One run shared by the tests below (each Ray run starts actors: seconds): 2 actors, JSONL into a folder, with
    a summary, and one actor killed with kill -9 mid-run. The settings are resolved on a Ray worker here, as on a
    cluster (a local instance resolves them in the driver: the MC test). Returns (output, stderr, folder)."""
    folder = tmp_path_factory.mktemp("ray-clean")
    kill_marker.write_text("armed")  # the next block an actor takes: it removes the marker and kill -9s itself
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ray_engine, "_this_machine_only", lambda ray: False)
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            code = main(ray_args(tiny_deberta_nli, source, folder / "scored", "--system-field", "system",
                                 "--summary", str(folder / "summary.json")))
    assert code == 0, err.getvalue()[-2000:]
    return folder / "scored", err.getvalue(), folder


@pytest.fixture(scope="module")
def one_process(tiny_deberta_nli, source, tmp_path_factory) -> tuple[list[dict], Path]:
    """The one-process engine on the same rows and chunks: (rows, output)."""
    folder = tmp_path_factory.mktemp("ray-local")
    rows = local_scores(tiny_deberta_nli, source, folder / "local.parquet", "--chunk-size", "4", "--system-field",
                        "system", "--summary", str(folder / "local-summary.json"))
    return rows, folder / "local.parquet"


def test_deterministic_scores_equal_the_one_process_engine(clean_run, one_process):
    out, err, folder = clean_run
    assert f"scored {ROWS} rows" in err and "start-up" in err and "mean score per system" in err
    local, local_path = one_process
    assert_same_scores(ray_rows(out), local)
    # provenance once, beside the parts: the one-process record's model, weights and settings
    parts = sorted(p.name for p in out.iterdir())
    assert parts == [".learned-metrics-output.json", "_provenance.json",
                     *(f"part-{i:06d}.parquet" for i in range(8))]
    record = json.loads((out / "_provenance.json").read_text())
    from learned_metrics.provenance import read_provenance

    expected = read_provenance(local_path)
    assert {key: record[key] for key in RESOLVED} == {key: expected[key] for key in RESOLVED}
    assert record["batching"] == {"chunk_size": 4, "engine": "ray", "actors": 2}
    summary, one = (json.loads(path.read_text()) for path in (folder / "summary.json",
                                                              local_path.parent / "local-summary.json"))
    assert summary["rows"] == ROWS and [(s["system"], s["rows"]) for s in summary["systems"]] == [
        (s["system"], s["rows"]) for s in one["systems"]]
    np.testing.assert_allclose([summary["mean"], *(s["mean"] for s in summary["systems"])],
                               [one["mean"], *(s["mean"] for s in one["systems"])], rtol=0, atol=1e-6)
    assert not (folder / ".scored.lmresume").exists()


def test_an_actor_killed_mid_run_loses_and_duplicates_no_row(clean_run, one_process, kill_marker):
    assert not kill_marker.exists()  # control: an actor did die during the clean run
    assert_same_scores(ray_rows(clean_run[0]), one_process[0])  # every row once, the uninterrupted scores


def test_seeded_mc_scores_from_parquet_into_one_file_equal_the_one_process_engine(tiny_deberta_nli, source,
                                                                                   tmp_path):
    """Masks follow each row (seed, token ids, pass): 2 actors on blocks of 4 rows give what one process gives on
    chunks of 25 (other batches, other batch neighbours). Read from Parquet (JSONL above; CSV goes through the same
    one-process reader) into one output file holding the record in its metadata, rows in input order."""
    import pyarrow as pa

    from learned_metrics.provenance import read_provenance

    pq.write_table(pa.Table.from_pylist([row for _, row in iter_rows(source)]), tmp_path / "pairs.parquet")
    out = tmp_path / "mc.parquet"
    assert main(ray_args(tiny_deberta_nli, tmp_path / "pairs.parquet", out, "--ray-single-file", "--mc-samples", "5",
                         "--seed", "3")) == 0
    rows = pq.read_table(out).to_pylist()
    assert [row["input_row"] for row in rows] == list(range(1, ROWS + 1))
    local = local_scores(tiny_deberta_nli, source, tmp_path / "local.parquet", "--mc-samples", "5", "--seed", "3",
                         "--chunk-size", "25")
    record, expected = read_provenance(out), read_provenance(tmp_path / "local.parquet")  # resolved in the driver
    assert record["metric"] == "faithfulness" and record["mc_samples"] == 5
    assert {key: record[key] for key in RESOLVED} == {key: expected[key] for key in RESOLVED}
    assert_same_scores(rows, local)
    assert max(row["score_std"] for row in rows) > 0  # the passes did differ: MC dropout was on
    other = local_scores(tiny_deberta_nli, source, tmp_path / "other.parquet", "--mc-samples", "5", "--seed", "4")
    assert not np.allclose([r["score"] for r in rows], [r["score"] for r in other], atol=1e-6)  # the seed counts


def test_the_python_entry_takes_and_returns_a_dataset(tiny_deberta_nli, tmp_path):
    rows = pair_rows(8)
    scored = ray_engine.score_dataset(ray.data.from_items(rows), tiny_deberta_nli, kind="faithfulness", block_rows=3,
                                      ray_settings=ray_engine.RaySettings(ray_actors=1)).take_all()
    local = local_scores(tiny_deberta_nli, write_jsonl(tmp_path / "in.jsonl", rows), tmp_path / "local.parquet")
    by_id = {row["id"]: row for row in scored}
    assert sorted(by_id) == list(range(8))
    np.testing.assert_allclose([by_id[i]["score"] for i in range(8)], [r["score"] for r in local], rtol=0, atol=1e-6)


DRIVER = """
import os, signal, sys
from learned_metrics.scoring.resume import ChunkStore
real = ChunkStore.save
def save(self, *args, **kwargs):
    real(self, *args, **kwargs)
    if len(self.finished()) == 3:
        os.kill(os.getpid(), signal.SIGKILL)  # the driver dies with 3 parts kept
ChunkStore.save = save
from learned_metrics.cli import main
from learned_metrics.errors import UserError
sys.exit(main(sys.argv[1:]))
"""


def test_a_killed_driver_resumes_from_the_parts_it_kept(tiny_deberta_nli, source, one_process, tmp_path, capsys):
    """kill -9 of the driver with 3 of 8 chunks kept; another setting is refused (the parts kept); a damaged part
    is scored again, never trusted; the resumed output, on 1 actor instead of 2, is the uninterrupted run's, every
    row once."""
    out, folder = tmp_path / "resumed", tmp_path / ".resumed.lmresume"
    args = ray_args(tiny_deberta_nli, source, out)
    env = {**os.environ, "RAY_ADDRESS": ray.get_runtime_context().gcs_address}  # the driver joins this instance
    died = subprocess.run([sys.executable, "-c", DRIVER, *args], env=env, capture_output=True, text=True, timeout=600)
    assert died.returncode == -signal.SIGKILL, died.stderr[-2000:]
    kept = json.loads((folder / "progress.json").read_text())
    assert kept["chunks"] == 3 and not out.exists()

    line = _refused(capsys, ray_args(tiny_deberta_nli, source, out, "--mc-samples", "3", "--resume"))
    assert "cannot resume" in line and "mc_samples" in line
    assert json.loads((folder / "progress.json").read_text())["chunks"] == 3  # the interrupted work is kept

    damaged = next(index for index, part in enumerate(kept["parts"]) if part)
    part = folder / f"part-{damaged:06d}.parquet"
    part.write_bytes(part.read_bytes()[:-20])  # truncated
    assert main([*args, "--resume", "--ray-actors", "1"]) == 0  # the --ray-* options change no score: any pool
    err = capsys.readouterr().err
    assert f"part {damaged + 1} of the interrupted run" in err and "damaged" in err
    left = sum(part["rows"] for index, part in enumerate(kept["parts"]) if part and index != damaged)
    assert f"resuming after {left} rows (2 chunks)" in err
    assert_same_scores(ray_rows(out), one_process[0])
    assert not folder.exists()


def _refused(capsys, args: list[str]) -> str:
    capsys.readouterr()
    assert main(args) != 0
    lines = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
    assert len(lines) == 1, lines
    return lines[0]


def test_bad_input_is_one_line_naming_file_row_and_field_before_scoring(tiny_deberta_nli, source, clean_run,
                                                                        tmp_path, capsys):
    """Control: the same command on the valid rows scored (the clean run)."""
    assert len(ray_rows(clean_run[0])) == ROWS
    rows = [row for _, row in iter_rows(source)]
    bad_source, out = tmp_path / "bad.jsonl", tmp_path / "scored"
    for bad, field in (({"generation": ""}, "generation"), ({"grounding": None}, "grounding"),
                       ({"input_row": 5}, "input_row")):
        write_jsonl(bad_source, [*rows[:6], {**rows[6], **bad}, *rows[7:]])
        line = _refused(capsys, ray_args(tiny_deberta_nli, bad_source, out))
        assert str(bad_source) in line and "row 7" in line and field in line, line
        assert not out.exists() and not (tmp_path / ".scored.lmresume").exists()


def test_a_folder_is_read_by_ray_data_as_its_layout_probe_reads_it(tmp_path):
    """Ray Data reads only the parts of the format (read_csv alone reads every file: a README beside CSV parts was
    a traceback with 4 remote errors); a part it cannot read is one line naming the folder. No actors start."""
    csv_parts = tmp_path / "csv"
    csv_parts.mkdir()
    for index in range(2):
        (csv_parts / f"part-{index}.csv").write_text(f"grounding,generation\nA {index}.,B {index}.\n")
    (csv_parts / "README.md").write_text("# the TRUE parts\n\nnot a CSV row, a, b, c\n")
    rows = [row for chunk in ray_engine._read_chunks(ray, str(csv_parts), 10, "csv") for _, row in chunk]
    assert rows == [{"grounding": f"A {i}.", "generation": f"B {i}."} for i in range(2)]
    assert ray_engine.first_row(csv_parts, "csv") == rows[0]  # the probe before Ray starts: the same first row

    damaged = tmp_path / "parquet"
    damaged.mkdir()
    (damaged / "part-0.parquet").write_bytes(b"PAR1 not really parquet")
    with pytest.raises(UserError) as caught:
        list(ray_engine._read_chunks(ray, str(damaged), 10, None))
    assert "Ray Data could not read it as parquet" in str(caught.value) and "\n" not in str(caught.value)
