"""Every scored file says how it was made: model, weights hash, resolved settings, input, version.

Runs call ``learned_metrics.cli.main`` in-process on the tiny exports of conftest.py.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from tiny_models import GENERATIONS, GROUNDINGS

from learned_metrics import __version__
from learned_metrics.cli import main
from learned_metrics.errors import UserError
from learned_metrics.provenance import (
    PARQUET_KEY,
    build_record,
    describe,
    differences,
    model_identity,
    read_provenance,
    sidecar_path,
    weights_sha256,
    write,
)


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def pairs(n: int) -> list[dict]:
    return [{"id": i, "grounding": " ".join(GROUNDINGS[j % len(GROUNDINGS)] for j in range(i % 4, i % 4 + 2)),
             "generation": GENERATIONS[i % len(GENERATIONS)]} for i in range(n)]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def score(kind: str, model: Path, source: Path, output: Path | str, *extra: str) -> int:
    return main(["score", kind, "--model", str(model), "--input", str(source), "--output", str(output),
                 "--no-progress", "--quiet", *extra])


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
def test_every_output_format_says_what_made_it(nli_export, tmp_path, suffix):
    source = write_jsonl(tmp_path / "in.jsonl", pairs(8))
    output = tmp_path / f"scored{suffix}"
    assert score("faithfulness", nli_export, source, output, "--mc-samples", "3", "--seed", "7", "--mode", "e",
                 "--max-length", "64", "--chunk-size", "5") == 0

    record = read_provenance(output)
    assert record["format"] == "learned-metrics/provenance" and record["version"] == 1
    assert record["model"] == str(nli_export.resolve()) and record["revision"] is None
    assert record["weights_sha256"] == sha256(nli_export / "model.safetensors")
    assert record["weights_files"] == ["model.safetensors"]
    assert record["labels"] == {"entailment": 0, "neutral": 1, "contradiction": 2}
    assert (record["metric"], record["mode"], record["mc_samples"], record["seed"]) == ("faithfulness", "e", 3, 7)
    assert (record["granularity"], record["premise_strategy"]) == ("document", "truncate")
    assert (record["max_length"], record["precision"], record["device"]) == (64, "fp32", "cpu")
    assert record["learned_metrics_version"] == __version__
    assert record["input"] == {"path": str(source.resolve()), "size": source.stat().st_size,
                               "sha256": sha256(source)}
    assert record["batching"]["chunk_size"] == 5 and record["batching"]["processes"] == 1
    assert record["fields"]["premise_field"] == "grounding"
    if suffix == ".parquet":
        import pyarrow.parquet as pq

        assert not sidecar_path(output).exists()  # kept inside the file
        assert json.loads(pq.read_schema(output).metadata[PARQUET_KEY.encode()]) == record
        assert record["created"] is None  # the same run gives the same bytes
        assert pq.read_table(output).num_rows == 8
    else:
        assert sidecar_path(output).name == f"scored{suffix}.provenance.json"
        assert json.loads(sidecar_path(output).read_text()) == record
        assert record["created"].endswith("+00:00")
        assert read_provenance(sidecar_path(output)) == record  # the sidecar named directly
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["in.jsonl", output.name, *([] if suffix == ".parquet" else [sidecar_path(output).name])])


def test_coherence_record_and_description(coherence_export, tmp_path):
    source = write_jsonl(tmp_path / "in.jsonl", [{"text": "One sentence here. Another one follows."}] * 3)
    output = tmp_path / "scored.jsonl"
    assert score("coherence", coherence_export, source, output) == 0
    record = read_provenance(output)
    assert (record["metric"], record["mode"], record["granularity"], record["premise_strategy"]) == (
        "coherence", None, None, None)
    assert (record["mc_samples"], record["max_length"], record["precision"]) == (1, 128, "fp32")
    assert record["fields"]["text_field"] == "text"  # settled from the first row
    line = describe(record)
    assert line.startswith(f"model {coherence_export.resolve()} (weights sha256 "
                           f"{sha256(coherence_export / 'model.safetensors')[:8]}…), coherence, deterministic")
    assert line.endswith(f"max length 128, fp32, learned-metrics {__version__}")


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_resume_gives_the_same_bytes_and_a_record(nli_export, tmp_path, monkeypatch, suffix):
    from learned_metrics.scoring.scorer import Scorer

    source = write_jsonl(tmp_path / "in.jsonl", pairs(12))
    extra = ("--chunk-size", "4", "--mc-samples", "2", "--seed", "5")
    whole, resumed = tmp_path / f"whole{suffix}", tmp_path / f"resumed{suffix}"
    assert score("faithfulness", nli_export, source, whole, *extra) == 0
    real, calls = Scorer.score_validated, []

    def crash_on_second_chunk(self, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("simulated crash")
        return real(self, **kwargs)

    monkeypatch.setattr(Scorer, "score_validated", crash_on_second_chunk)
    with pytest.raises(RuntimeError, match="simulated crash"):
        score("faithfulness", nli_export, source, resumed, *extra)
    assert not resumed.exists() and not sidecar_path(resumed).exists()  # written only when the output is final
    monkeypatch.setattr(Scorer, "score_validated", real)
    assert score("faithfulness", nli_export, source, resumed, *extra, "--resume") == 0
    assert resumed.read_bytes() == whole.read_bytes()  # Parquet: the embedded record included
    first, again = read_provenance(whole), read_provenance(resumed)
    assert again["mc_samples"] == 2 and again["seed"] == 5
    assert {**first, "created": None} == {**again, "created": None}


def test_a_sidecar_that_would_overwrite_an_input_is_refused_before_work(nli_export, tmp_path, monkeypatch, capsys):
    import learned_metrics.scoring.scorer as scorer_module
    from learned_metrics.scoring import load_scorer
    from learned_metrics.scoring.runner import FileRun, InputFields, score_file

    scorer = load_scorer(nli_export)

    def no_work(*args, **kwargs):
        raise AssertionError("the model was loaded before the outputs were checked")

    monkeypatch.setattr(scorer_module, "load_scorer", no_work)
    output = tmp_path / "out.jsonl"
    victim = write_jsonl(sidecar_path(output), pairs(3))  # an input that happens to have the sidecar's name
    before = victim.read_bytes()
    assert score("faithfulness", nli_export, victim, output, "--input-format", "jsonl") == 2
    assert "--output's provenance file is an input of this command" in capsys.readouterr().err
    assert victim.read_bytes() == before and not output.exists()
    with pytest.raises(UserError, match="provenance file is an input"):
        score_file(scorer, victim, output, InputFields("faithfulness"), FileRun(input_format="jsonl"))
    assert victim.read_bytes() == before and not output.exists()

    source = write_jsonl(tmp_path / "in.jsonl", pairs(3))
    assert main(["score", "faithfulness", "--model", str(nli_export), "--input", str(source), "--output",
                 str(tmp_path / "o.jsonl"), "--summary", str(tmp_path / "o.jsonl.provenance.json")]) == 2
    assert "name the same path" in capsys.readouterr().err
    (tmp_path / "p.csv.provenance.json").mkdir()  # handled exactly like the output: a folder is refused
    assert score("faithfulness", nli_export, source, tmp_path / "p.csv") == 2
    assert "provenance file is a folder" in capsys.readouterr().err
    assert not (tmp_path / "p.csv").exists() and not (tmp_path / "o.jsonl").exists()


def test_an_existing_sidecar_is_replaced_and_stdout_gets_none(nli_export, tmp_path, capsys):
    source = write_jsonl(tmp_path / "in.jsonl", pairs(3))
    output = tmp_path / "out.jsonl"
    sidecar_path(output).write_text("an earlier run's record")
    assert score("faithfulness", nli_export, source, output) == 0
    assert read_provenance(output)["metric"] == "faithfulness"
    capsys.readouterr()
    assert score("faithfulness", nli_export, source, "-") == 0
    assert len(capsys.readouterr().out.splitlines()) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl", "out.jsonl", "out.jsonl.provenance.json"]
    assert read_provenance("-") is None


def test_the_record_names_the_masks_the_scores_came_from(nli_export):
    """A compiled graph draws its own masks (inductor's generator: neither per-row nor eager torch's, 1e-3 apart on
    the tiny model), whatever --mc-masks says (found before: recorded as per-row, then as torch)."""
    from learned_metrics.scoring import load_scorer

    assert load_scorer(nli_export, mc_samples=3).provenance()["mc_masks"] == "per-row"  # control
    assert load_scorer(nli_export, mc_samples=3, mc_masks="torch").provenance()["mc_masks"] == "torch"
    assert load_scorer(nli_export, mc_samples=3, compile=True).provenance()["mc_masks"] == "compiled"


def test_python_api_gets_the_same_record(nli_export):
    from learned_metrics.scoring import load_scorer

    scorer = load_scorer(nli_export, mc_samples=4, seed=3, max_length=80)
    record = scorer.provenance()
    assert (record["mc_samples"], record["seed"], record["max_length"], record["mode"]) == (4, 3, 80, "e-c")
    assert record["weights_sha256"] == sha256(nli_export / "model.safetensors") and record["input"] is None
    result = scorer.score(groundings=GROUNDINGS[:2], generations=GENERATIONS[:2], mc_samples=1, mode="e")
    assert (result.provenance["mc_samples"], result.provenance["mode"]) == (1, "e")  # the call's own settings
    assert differences(record, result.provenance) == ["mode e-c vs e", "mc_samples 4 vs 1"]


def test_a_coherence_record_holds_no_nli_setting_a_call_names(coherence_export):
    """A coherence scorer ignores mode, granularity and premise_strategy: its record keeps them null, so two runs
    with the same scores are not told apart; the settings that apply (mc_samples, seed) still follow the call."""
    from learned_metrics.scoring import load_scorer

    scorer = load_scorer(coherence_export)
    record = scorer.provenance(mode="e-c", granularity="sentence", premise_strategy="chunk", mc_samples=3, seed=5)
    assert (record["mode"], record["granularity"], record["premise_strategy"]) == (None, None, None)
    assert (record["mc_samples"], record["seed"]) == (3, 5)  # control: what applies to coherence is recorded
    assert differences(scorer.provenance(), scorer.provenance(mode="e", granularity="paragraph")) == []


def test_reading_absent_and_damaged_records(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    plain = tmp_path / "plain.jsonl"
    plain.write_text("{}\n")
    assert read_provenance(plain) is None  # scored before provenance existed, or the sidecar was not copied
    for content, why in [("{not json", "invalid JSON"), ("[1, 2]", "a JSON list, not an object"),
                         ('{"format": "other"}', "format 'other'"),
                         ('{"format": "learned-metrics/provenance", "version": "1"}', "version '1'")]:
        sidecar_path(plain).write_text(content)
        with pytest.raises(UserError, match=why) as info:
            read_provenance(plain)
        assert str(info.value).startswith(f"{sidecar_path(plain)}: the provenance record is damaged")
        assert "\n" not in str(info.value)

    table = tmp_path / "table.parquet"
    pq.write_table(pa.table({"score": [0.5, 0.25]}), table)
    assert read_provenance(table) is None
    record = build_record(metric="coherence", model="owner/ccl", mc_samples=1, max_length=512, precision="bf16")
    assert write(record, table) == table  # a Parquet file written elsewhere gets it in its metadata
    assert read_provenance(table) == record and pq.read_table(table).column("score").to_pylist() == [0.5, 0.25]
    odd = tmp_path / "table.bin"  # Parquet whatever its name (--output-format parquet)
    odd.write_bytes(table.read_bytes())
    assert read_provenance(odd) == record
    damaged = tmp_path / "damaged.parquet"
    pq.write_table(pa.table({"x": [1]}).replace_schema_metadata({PARQUET_KEY: "{oops"}), damaged)
    with pytest.raises(UserError, match=r"damaged\.parquet: the 'learned_metrics' Parquet metadata is damaged"):
        read_provenance(damaged)


def test_sharded_weights_and_hub_revisions(tmp_path):
    folder = tmp_path / "sharded"
    folder.mkdir()
    index = {"weight_map": {"a.weight": "model-00002-of-00002.safetensors",
                            "b.weight": "model-00001-of-00002.safetensors",
                            "c.weight": "model-00002-of-00002.safetensors"}}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))
    (folder / "model-00001-of-00002.safetensors").write_bytes(b"first shard")
    (folder / "model-00002-of-00002.safetensors").write_bytes(b"second shard")
    digest, files = weights_sha256(folder)
    assert files == ["model.safetensors.index.json", "model-00001-of-00002.safetensors",
                     "model-00002-of-00002.safetensors"]
    assert digest == hashlib.sha256(b"".join((folder / name).read_bytes() for name in files)).hexdigest()
    assert weights_sha256(tmp_path / "empty-nothing") == (None, [])

    snapshot = tmp_path / "models--owner--nli" / "snapshots" / "0123456789abcdef"
    assert model_identity("owner/nli", snapshot) == ("owner/nli", "0123456789abcdef")
    assert model_identity(folder, folder) == (str(folder.resolve()), None)


def test_differences_name_only_what_makes_files_incomparable():
    base = build_record(metric="faithfulness", model="a", weights_sha256="1" * 64, mode="e-c", mc_samples=15, seed=0,
                        granularity="document", premise_strategy="truncate", max_length=512, precision="fp32")
    assert differences(base, {**base, "model": "b", "weights_sha256": "2" * 64, "created": "later"}) == []
    other = {**base, "mc_samples": 1, "seed": 1, "max_length": 256, "precision": "bf16", "granularity": "sentence"}
    assert differences(base, other) == ["mc_samples 15 vs 1", "granularity document vs sentence",
                                        "max_length 512 vs 256", "precision fp32 vs bf16"]  # no seed: one is not MC
    assert differences(base, {**base, "seed": 2}) == ["seed 0 vs 2"]
    assert differences({**base, "mc_samples": 1}, {**base, "mc_samples": 1, "seed": 2}) == []
    # the MC masks, as the seed: named when both use MC dropout (found before: never named, scores 1.6e-3 apart)
    per_row, torch_masks = {**base, "mc_masks": "per-row"}, {**base, "mc_masks": "torch"}
    assert differences(per_row, torch_masks) == ["mc_masks per-row vs torch"]
    assert differences({**per_row, "mc_samples": 1}, {**torch_masks, "mc_samples": 1}) == []
    assert "MC K=15 seed 0, torch masks," in describe(torch_masks)
    coherence = build_record(metric="coherence", model="c", mode=None, max_length=512, precision="fp32")
    assert differences(base, coherence)[:2] == ["metric faithfulness vs coherence", "mode e-c vs none"]
    older = {key: value for key, value in base.items() if key != "precision"}
    assert differences(base, older) == ["precision fp32 vs unknown"]

    assert describe(base) == ("model a (weights sha256 11111111…), faithfulness e-c, MC K=15 seed 0, granularity "
                              f"document, truncate, max length 512, fp32, learned-metrics {__version__}")
    assert describe({**base, "model": "owner/nli", "revision": "0123456789abcdef0123"}).startswith(
        "model owner/nli@0123456789ab (weights")
    assert describe({"format": "learned-metrics/provenance", "version": 1}) == "model unknown model, unknown metric"
