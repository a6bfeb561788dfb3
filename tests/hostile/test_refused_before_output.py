"""Class 6: everything is checked before anything is written.

Rule, part 1: a model, config or tokenizer source that looks local (starts with ``./``, ``../``,
``/`` or ``~``, or names a folder whose parent folder exists, like ``models/x`` beside ``models/``)
and does not exist is one line at once (``... folder not found``): it is never taken as a Hugging
Face Hub id, retried for 45 s and reported in 24 lines of noise. A plain hub-style id (``org/name``,
no such local folder) is still a Hub id (offline: the one-line offline error). One place:
``safety.check_source``, which every load in ``learned_metrics.safety`` runs first and
``scoring.loading.resolve_model_dir`` uses for ``score --model``.

Rule, part 2: every refusal of ``export`` comes before the first byte of output. The tokenizer
(custom code, missing files, a broken ``tokenizer.json``, an unreachable Hub id) is loaded and
checked before the export folder's temporary is created and the model is written, so no model
shard is ever written for a refused export; no output folder and no temporary are left.
One place: ``export.write_export`` (loads everything, then writes).
"""

from __future__ import annotations

import pytest

from hostile.hostile_tools import (
    assert_refused,
    cli,
    copy_model,
    craft_checkpoint,
    digest,
    make_remote_code_folder,
    temporaries,
    train_run,
    write_jsonl,
)

PAIR = [{"grounding": "Anna went to the market and bought apples.", "generation": "Anna bought apples."}]


@pytest.fixture
def written(monkeypatch):
    """Every model ``save_pretrained`` call (the first bytes an export writes), recorded."""
    from transformers import PreTrainedModel

    calls = []
    original = PreTrainedModel.save_pretrained

    def spy(self, save_directory, *args, **kwargs):
        calls.append(str(save_directory))
        return original(self, save_directory, *args, **kwargs)

    monkeypatch.setattr(PreTrainedModel, "save_pretrained", spy)
    return calls


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """The test's folder as the current directory and as $HOME (for ``~/...``), with a ``models/`` folder."""
    (tmp_path / "models").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


# --- part 1: a local-looking source that does not exist ---------------------------------------------------------

LOCAL_LOOKING = ["./missing", "../missing-beside", "~/missing", "models/missing"]


@pytest.mark.parametrize("source", [*LOCAL_LOOKING, "ABSOLUTE"])
def test_export_missing_local_tokenizer_is_one_line_at_once(workdir, nli_checkpoint, capsys, written, source):
    source = str(workdir / "nowhere") if source == "ABSOLUTE" else source
    before = digest(workdir)
    result = cli(capsys, "export", nli_checkpoint, workdir / "out", "--tokenizer", source)
    assert_refused(result, source, "tokenizer folder not found")
    assert written == [] and digest(workdir) == before and temporaries(workdir) == []


@pytest.mark.parametrize("source", [*LOCAL_LOOKING, "ABSOLUTE"])
def test_score_missing_local_model_is_one_line_at_once(workdir, capsys, source):
    source = str(workdir / "nowhere") if source == "ABSOLUTE" else source
    pairs = write_jsonl(workdir / "pairs.jsonl", PAIR)
    before = digest(workdir)
    result = cli(capsys, "score", "faithfulness", "--model", source, "--input", pairs, "--output", "out.jsonl")
    assert_refused(result, source, "model folder not found")
    assert digest(workdir) == before


def test_training_missing_local_model_is_one_line_at_once(workdir, train_config, capsys):
    cfg = train_config("experiment=nli_demo", "model.name_or_path=./nope", f"paths.data_dir={workdir / 'data'}",
                       "logger=csv")
    result = train_run(capsys, cfg)
    assert_refused(result, "./nope", "model folder not found")
    assert not (workdir / "data").exists() and not (workdir / "run").exists()


# --- part 1, controls: existing folders load, hub-style ids stay hub ids -----------------------------------------


def test_control_existing_relative_folders_still_load(workdir, tiny_deberta_nli, nli_checkpoint, capsys):
    copy_model(tiny_deberta_nli, workdir / "models" / "nli")
    pairs = write_jsonl(workdir / "pairs.jsonl", PAIR)
    result = cli(capsys, "score", "faithfulness", "--model", "models/nli", "--input", pairs, "--output", "o.jsonl")
    assert result.code == 0, result.err[-3000:]
    assert (workdir / "o.jsonl").is_file()
    for n, tokenizer in enumerate(["./models/nli", "~/models/nli"]):  # ~: transformers gets the expanded path
        result = cli(capsys, "export", nli_checkpoint, f"out{n}", "--tokenizer", tokenizer)
        assert result.code == 0, result.err[-3000:]
        assert (workdir / f"out{n}" / "model.safetensors").is_file()
        assert (workdir / f"out{n}" / "tokenizer.json").is_file()


def test_control_hub_style_id_is_still_a_hub_id(workdir, nli_checkpoint, capsys):
    pairs = write_jsonl(workdir / "pairs.jsonl", PAIR)
    result = cli(capsys, "score", "faithfulness", "--model", "org/name", "--input", pairs, "--output", "o.jsonl")
    assert_refused(result, "'org/name'", "nor in the Hugging Face cache, and Hub downloads are off")
    result = cli(capsys, "export", nli_checkpoint, "out", "--tokenizer", "org/name")
    assert_refused(result, "org/name", "cannot load the tokenizer")
    assert "not found" not in result.err


def test_control_training_hub_style_id_is_still_a_hub_id(workdir, train_config, capsys):
    cfg = train_config("experiment=nli_demo", "model.name_or_path=org/name", f"paths.data_dir={workdir / 'data'}",
                       "logger=csv")
    result = train_run(capsys, cfg)
    assert_refused(result, "org/name", "cannot load the model config")
    assert "not found" not in result.err


# --- part 2: export refuses before the first byte ----------------------------------------------------------------


def _no_tokenizer_files(folder):
    for name in ("tokenizer.json", "vocab.json", "merges.txt"):
        (folder / name).unlink(missing_ok=True)


def _broken_tokenizer_json(folder):
    (folder / "tokenizer.json").write_text('{"version": "1.0", "model": {"type": "BPE", "vocab": ')


@pytest.mark.parametrize(
    ("damage", "message"),
    [("auto_map", "auto_map"), ("no-files", "no tokenizer files"), ("broken", "cannot load the tokenizer")],
)
@pytest.mark.parametrize("how", ["--tokenizer", "base_model"])
def test_export_tokenizer_refused_before_any_output(tiny_deberta_nli, nli_checkpoint, tmp_path, capsys, written,
                                                     damage, message, how):
    marker = tmp_path / "PWNED"
    if damage == "auto_map":
        tokenizer = make_remote_code_folder(tiny_deberta_nli, tmp_path / "tok", marker, where="tokenizer")
    else:
        tokenizer = copy_model(tiny_deberta_nli, tmp_path / "tok")
        (_no_tokenizer_files if damage == "no-files" else _broken_tokenizer_json)(tokenizer)
    if how == "base_model":  # the tokenizer export finds by itself: the card's base model
        ckpt = craft_checkpoint(tiny_deberta_nli, tmp_path / "run.ckpt",
                                learned_metric={"kind": "faithfulness", "base_model": str(tokenizer)})
        args = [ckpt, tmp_path / "out"]
    else:
        args = [nli_checkpoint, tmp_path / "out", "--tokenizer", tokenizer]
    before = digest(tmp_path)
    result = cli(capsys, "export", *args)
    assert_refused(result, str(tokenizer), message)
    assert written == [], "model shards were written before the refusal"
    assert not (tmp_path / "out").exists() and temporaries(tmp_path) == [] and digest(tmp_path) == before
    assert not marker.exists()


def test_export_unreachable_hub_tokenizer_refused_before_any_output(workdir, nli_checkpoint, capsys, written):
    result = cli(capsys, "export", nli_checkpoint, "out", "--tokenizer", "org/name")
    assert_refused(result, "org/name", "cannot load the tokenizer")
    assert written == [] and not (workdir / "out").exists() and temporaries(workdir) == []


def test_export_refusal_leaves_an_earlier_export_alone(tiny_deberta_nli, nli_checkpoint, tmp_path, capsys, written):
    result = cli(capsys, "export", nli_checkpoint, tmp_path / "out")
    assert result.code == 0, result.err[-3000:]
    tokenizer = make_remote_code_folder(tiny_deberta_nli, tmp_path / "tok", tmp_path / "PWNED", where="tokenizer")
    written.clear()
    before = digest(tmp_path)
    result = cli(capsys, "export", nli_checkpoint, tmp_path / "out", "--overwrite", "--tokenizer", tokenizer)
    assert_refused(result, "auto_map")
    assert written == [] and digest(tmp_path) == before and temporaries(tmp_path) == []


def test_control_export_writes_when_everything_checks(nli_checkpoint, tmp_path, capsys, written):
    """The spy sees the write of a good export: the refusals above are not an export that never writes."""
    result = cli(capsys, "export", nli_checkpoint, tmp_path / "out")
    assert result.code == 0, result.err[-3000:]
    assert len(written) == 1 and (tmp_path / "out" / "model.safetensors").is_file()
    assert temporaries(tmp_path) == []
