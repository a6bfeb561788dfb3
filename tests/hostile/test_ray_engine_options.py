"""``score --engine ray``: the combinations that make no sense and the outputs it may not write, refused in one
line before Ray starts or a model loads (these tests need no Ray instance: nothing gets that far).

Rules: the ``--ray-*`` options say where the Ray engine's actors run, so they need ``--engine ray``; the engine
reads and writes files (Parquet output: a folder of parts, or one ``.parquet`` with ``--ray-single-file``); its
output never lands inside an input and never replaces a folder of files learned-metrics did not write. Each refusal
has its control beside it: the same command with the mistake corrected gets past the checks (to the Ray
connection, which the controls stop at).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hostile.hostile_tools import digest, write_jsonl
from learned_metrics.cli import main
from learned_metrics.errors import UserError

MISSING_MODEL = "/nonexistent/model-for-option-checks"


def one_line(capsys, argv: list[str]) -> str:
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    return err


MODEL = MISSING_MODEL  # past_the_checks: a real model, which the controls need to get past the model check


def score(source: Path, output: Path | str, *extra: str, model: str | None = None) -> list[str]:
    return ["score", "faithfulness", "--model", model or MODEL, "--input", str(source), "--output", str(output),
            "--no-progress", *extra]


@pytest.fixture
def source(tmp_path) -> Path:
    (tmp_path / "in").mkdir()
    return write_jsonl(tmp_path / "in" / "pairs.jsonl", [{"grounding": "A b.", "generation": "A."}])


@pytest.fixture
def past_the_checks(monkeypatch, tiny_deberta_nli):
    """Controls stop at the Ray connection: reaching it means every check before it passed (the model's too)."""
    from learned_metrics.scoring import ray_engine

    monkeypatch.setattr(f"{__name__}.MODEL", str(tiny_deberta_nli))
    def reached(*args, **kwargs):
        raise UserError("reached the engine")

    monkeypatch.setattr(ray_engine, "connect", reached)


@pytest.mark.parametrize("flag", [["--ray-actors", "2"], ["--ray-cpus-per-actor", "2"], ["--ray-gpus-per-actor", "1"],
                                  ["--ray-address", "ray://head:10001"], ["--ray-single-file"]])
def test_ray_options_without_the_ray_engine_are_refused(source, tmp_path, capsys, flag, past_the_checks):
    line = one_line(capsys, score(source, tmp_path / "out.parquet", *flag))
    assert flag[0] in line and "need --engine ray" in line
    # control: with --engine ray the same option gets past the checks
    output = tmp_path / ("one.parquet" if flag == ["--ray-single-file"] else "folder")
    assert "reached the engine" in one_line(capsys, score(source, output, "--engine", "ray", *flag))


def test_gpus_per_actor_with_device_cpu_is_refused(source, tmp_path, capsys, past_the_checks):
    line = one_line(capsys, score(source, tmp_path / "o", "--engine", "ray", "--device", "cpu",
                                  "--ray-gpus-per-actor", "1"))
    assert "--ray-gpus-per-actor" in line and "--device cpu" in line
    assert "reached the engine" in one_line(capsys, score(source, tmp_path / "o", "--engine", "ray", "--device", "cpu",
                                                          "--ray-gpus-per-actor", "0"))


def test_the_settings_refuse_wrong_kinds_in_one_line():
    from learned_metrics.scoring.options import RaySettings

    for bad in ({"ray_actors": 0}, {"ray_cpus_per_actor": 1.5}, {"ray_gpus_per_actor": -1}, {"ray_single_file": "no"}):
        with pytest.raises(UserError) as caught:
            RaySettings.from_keywords(**bad)
        assert next(iter(bad)) in str(caught.value) and "\n" not in str(caught.value)
    assert RaySettings.from_keywords(ray_actors=3).ray_actors == 3  # control


@pytest.mark.parametrize("output, extra, words", [
    ("-", [], "not -"),
    ("scored.jsonl", [], "folder name"),
    ("scored", ["--ray-single-file"], "ending in .parquet"),
])
def test_outputs_the_ray_engine_cannot_write_are_refused(source, tmp_path, capsys, output, extra, words,
                                                         past_the_checks):
    target = output if output == "-" else tmp_path / output
    assert words in one_line(capsys, score(source, target, "--engine", "ray", *extra))
    assert "reached the engine" in one_line(capsys, score(source, tmp_path / "scored.parquet", "--engine", "ray",
                                                          "--ray-single-file"))


def test_standard_input_is_refused(tmp_path, capsys, past_the_checks):
    assert "not -" in one_line(capsys, score(Path("-"), tmp_path / "out", "--engine", "ray"))


def test_an_output_inside_an_input_folder_or_the_model_is_refused_before_anything(tmp_path, capsys, tiny_deberta_nli,
                                                                                 past_the_checks):
    """The Ray engine reads a folder of Parquet parts (an earlier run's output): nothing may be written into it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    parts = tmp_path / "parts"
    parts.mkdir()
    pq.write_table(pa.Table.from_pylist([{"grounding": "A b.", "generation": "A."}]), parts / "part-0.parquet")
    before = digest(parts, tiny_deberta_nli)
    model = str(tiny_deberta_nli)
    line = one_line(capsys, score(parts, parts / "scored", "--engine", "ray", model=model))
    assert "--output lies inside an input" in line
    line = one_line(capsys, score(parts, tiny_deberta_nli / "scored", "--engine", "ray", model=model))
    assert "--output lies inside an input" in line
    line = one_line(capsys, score(parts, tmp_path / "m.parquet", "--engine", "ray", "--ray-single-file",
                                  "--summary", str(tiny_deberta_nli / "summary.json"), model=model))
    assert "--summary lies inside an input" in line
    assert digest(parts, tiny_deberta_nli) == before
    # control: beside the input folder
    assert "reached the engine" in one_line(capsys, score(parts, tmp_path / "scored", "--engine", "ray", model=model))


def test_a_folder_of_user_files_at_the_output_is_never_replaced(source, tmp_path, capsys, past_the_checks):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    line = one_line(capsys, score(source, folder, "--engine", "ray"))
    assert "did not write" in line and (folder / "notes.txt").read_text() == "mine"
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "reached the engine" in one_line(capsys, score(source, empty, "--engine", "ray"))  # control


def test_the_ray_engine_under_accelerate_launch_is_refused(source, tmp_path, capsys, past_the_checks, monkeypatch):
    """Every launched process would score the whole input into the same output: Ray is the launcher there."""
    monkeypatch.setenv("WORLD_SIZE", "2")
    line = one_line(capsys, score(source, tmp_path / "folder", "--engine", "ray"))
    assert "--engine ray" in line and "accelerate launch" in line
    monkeypatch.setenv("WORLD_SIZE", "1")  # control: one process gets past the checks
    assert "reached the engine" in one_line(capsys, score(source, tmp_path / "folder", "--engine", "ray"))


def test_load_scorer_refuses_the_ray_engine_and_loads_torch(tiny_roberta_nli):
    """``engine="ray"`` is the file engine of ``score --engine ray`` (and ray_engine.score_dataset): load_scorer
    would run one process on CPU while the record said ray."""
    from learned_metrics.scoring.scorer import load_scorer

    with pytest.raises(UserError, match="engine='ray'") as info:
        load_scorer(tiny_roberta_nli, engine="ray")
    assert "\n" not in str(info.value)
    assert load_scorer(tiny_roberta_nli, engine="torch").options.engine == "torch"  # control


@pytest.mark.parametrize("model, words", [(MISSING_MODEL, "model folder not found"), ("FILE", "got a file"),
                                          ("NO_CONFIG", "no config.json")])
def test_a_model_this_machine_cannot_load_is_refused_before_ray_starts(source, tmp_path, capsys, monkeypatch, model,
                                                                       words, tiny_deberta_nli):
    """A local instance's actors read the model folder this process sees: refused in one line before Ray starts (a
    missing folder used to cost a Ray start and an actor first). Control: joining a cluster (whose nodes may see
    other paths) leaves the check to the nodes, and a real model gets past it."""
    from learned_metrics.scoring import ray_engine

    def started(*args, **kwargs):
        raise UserError("reached the engine")

    monkeypatch.setattr(ray_engine, "connect", started)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    if model == "FILE":
        model = str(write_jsonl(tmp_path / "model.jsonl", [{"a": 1}]))
    elif model == "NO_CONFIG":
        (tmp_path / "empty-model").mkdir()
        model = str(tmp_path / "empty-model")
    line = one_line(capsys, score(source, tmp_path / "scored", "--engine", "ray", model=model))
    assert words in line and model in line
    cluster = score(source, tmp_path / "scored", "--engine", "ray", "--ray-address", "ray://head:10001", model=model)
    assert "reached the engine" in one_line(capsys, cluster)
    assert "reached the engine" in one_line(capsys, score(source, tmp_path / "scored", "--engine", "ray",
                                                          model=str(tiny_deberta_nli)))


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_a_local_folder_in_a_benchmark_layout_is_scored_chunked(tmp_path, capsys, monkeypatch, tiny_deberta_nli, fmt):
    """Benchmark documents are long: a file in a benchmark layout is scored with --premise-strategy chunk unless the
    flag says otherwise, and so is a local folder for --engine ray, probed by its first data file before Ray starts
    (it used to get truncate). Controls: the plain layout and an explicit flag keep truncate; object storage is not
    read ahead."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from learned_metrics.scoring import ray_engine

    chosen: list[str] = []

    def captured(model, input_path, output, fields, options, *args, **kwargs):
        chosen.append(options.premise_strategy)
        raise UserError("reached the engine")

    monkeypatch.setattr(ray_engine, "score_file", captured)
    layouts = {"llm-aggrefact": {"dataset": "x", "doc": "A b. C d.", "claim": "A b.", "label": 1},
               "plain": {"grounding": "A b. C d.", "generation": "A b."}}
    for name, row in layouts.items():
        folder = tmp_path / name
        (folder / "_logs").mkdir(parents=True)
        (folder / "_logs" / "x.jsonl").write_text('{"grounding": "not data", "generation": "."}\n')  # skipped
        if fmt == "parquet":
            pq.write_table(pa.Table.from_pylist([row]), folder / "part-0.parquet")
        else:
            write_jsonl(folder / "part-0.jsonl", [row])
        extra = [] if fmt == "parquet" else ["--input-format", "jsonl"]
        one_line(capsys, score(folder, tmp_path / f"out-{name}", "--engine", "ray", *extra,
                               model=str(tiny_deberta_nli)))
        one_line(capsys, score(folder, tmp_path / f"out-{name}", "--engine", "ray", *extra, "--premise-strategy",
                               "truncate", model=str(tiny_deberta_nli)))
    assert chosen == ["chunk", "truncate", "truncate", "truncate"]
    assert ray_engine.first_row("s3://bucket/pairs") is None and ray_engine.first_row(tmp_path / "none") is None


def test_the_layout_probe_reads_only_the_files_ray_data_reads(tmp_path):
    """Review finding: a README, a manifest or an unreadable part sorted before the data parts made the probe give
    up, so a benchmark folder got truncate. Ray Data reads *.parquet for Parquet and *.json/*.jsonl for JSONL."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from learned_metrics.scoring import ray_engine

    row = {"dataset": "x", "doc": "A b. C d.", "claim": "A b.", "label": 1}
    folder = tmp_path / "bench"
    folder.mkdir()
    (folder / "README.md").write_text("# not data\n")
    (folder / "a-manifest.json").write_text("not json at all")
    (folder / "a-broken.parquet").write_bytes(b"PAR1 broken")
    pq.write_table(pa.Table.from_pylist([row]), folder / "part-0.parquet")
    assert ray_engine.first_row(folder) == row
    write_jsonl(folder / "part-0.jsonl", [row])
    assert ray_engine.first_row(folder, "jsonl") == row  # the broken manifest is skipped
    assert ray_engine.first_row(folder, "csv") is None  # control: no CSV part


@pytest.mark.parametrize("parts, declared, words", [
    (["part-0.jsonl", "part-1.jsonl"], None, "pass --input-format jsonl"),  # a folder is Parquet by default
    (["part-0.csv", "README.md"], "jsonl", "pass --input-format csv"),
    (["notes.txt", "_part-0.parquet"], None, "no .parquet files"),  # Ray Data skips _names, so does the check
])
def test_a_folder_without_parts_of_its_format_is_one_line_before_ray_starts(tmp_path, capsys, parts, declared,
                                                                            words, past_the_checks):
    """Found before: Ray started, then a 36-line traceback ('no files found'). Control: the same folder with the
    format it holds gets past the checks."""
    folder = tmp_path / "in"
    folder.mkdir()
    for name in parts:
        (folder / name).write_text('{"grounding": "A b.", "generation": "A."}\n' if name.endswith(".jsonl") else
                                   "grounding,generation\nA b.,A.\n")
    extra = ["--input-format", declared] if declared else []
    line = one_line(capsys, score(folder, tmp_path / "scored", "--engine", "ray", *extra))
    assert words in line and "in" in line
    held = parts[0].rsplit(".", 1)[1]
    if held in ("jsonl", "csv"):
        assert "reached the engine" in one_line(capsys, score(folder, tmp_path / "scored", "--engine", "ray",
                                                              "--input-format", held))


def test_the_folder_check_lists_the_files_ray_data_reads(tmp_path):
    """The probe and the check before Ray starts see exactly the files Ray Data's folder listing (and the format's
    file_extensions) gives: hidden and underscore names skipped at the top of the folder only (found before: a
    nested sub/_part.csv, which Ray reads, was skipped and the folder refused)."""
    pytest.importorskip("ray")
    from pyarrow import fs
    from ray.data.datasource.file_meta_provider import _expand_directory
    from ray.data.datasource.path_util import _has_file_extension

    from learned_metrics.scoring import ray_engine

    names = ["part-0.csv", "README.md", "_provenance.json", ".hidden.csv", "_logs/a.csv", "sub/_part.csv",
             "sub/.x.csv", "sub/deeper/p.CSV", "notes.csv.bak"]
    for name in names:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("grounding,generation\nA.,B.\n")
    listed = [path for path, _ in _expand_directory(str(tmp_path), fs.LocalFileSystem())]
    ray_reads = sorted(p for p in listed if _has_file_extension(p, list(ray_engine.FOLDER_SUFFIXES["csv"])))
    assert [str(p) for p in ray_engine._data_files(tmp_path, "csv")] == ray_reads
    assert {Path(p).relative_to(tmp_path).as_posix() for p in ray_reads} == {"part-0.csv", "sub/_part.csv",
                                                                              "sub/.x.csv", "sub/deeper/p.CSV"}
