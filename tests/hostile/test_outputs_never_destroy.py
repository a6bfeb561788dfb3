"""Class 1: an output never destroys user data.

Found before: ``--output`` equal to the source deleted a corpus or an ANLI release, a folder of
unrelated files at ``--output`` was deleted, exporting into the run folder deleted the checkpoint,
and a plain file at a folder output was replaced. Every writing command now calls
``learned_metrics.outputs.check_outputs`` before any work.
"""

from __future__ import annotations

import pytest

from hostile.hostile_tools import (
    TRAIN,
    anli_augmented,
    assert_refused,
    cli,
    digest,
    run,
    shuffle_set,
    temporaries,
    write_jsonl,
)
from learned_metrics.data.demo import coherent_document, write_anli_layout


@pytest.fixture
def corpus(tmp_path):
    """A user's txtdir corpus: 12 documents of one sentence per line."""
    import random

    folder = tmp_path / "wsj"
    folder.mkdir()
    rng = random.Random(0)
    for i in range(12):
        (folder / f"doc{i:02d}.txt").write_text("\n".join(coherent_document(rng)) + "\n")
    return folder


def test_shuffle_set_output_equal_to_its_txtdir_source_is_refused(corpus, capsys):
    before = digest(corpus)
    result = shuffle_set(capsys, "--source", f"txtdir:{corpus}", "--output", str(corpus))
    assert_refused(result, str(corpus), "is an input")
    assert digest(corpus) == before


def test_shuffle_set_output_holding_its_jsonl_source_is_refused(tmp_path, corpus, capsys):
    (tmp_path / "docs").mkdir()
    docs = write_jsonl(tmp_path / "docs" / "documents.jsonl", [{"text": p.read_text()} for p in corpus.iterdir()])
    before = digest(tmp_path / "docs")
    result = shuffle_set(capsys, "--source", f"jsonl:{docs}", "--output", str(tmp_path / "docs"))
    assert_refused(result, "contains an input")
    assert digest(tmp_path / "docs") == before


def test_anli_output_equal_to_its_release_folder_is_refused(tmp_path, capsys):
    release = write_anli_layout(tmp_path / "anli_v1.0", {"train": 4, "dev": 2, "test": 2})
    before = digest(release)
    result = anli_augmented(capsys, "--source", f"jsonl:{release}", "--output", str(release))
    assert_refused(result, "is an input")
    assert digest(release) == before


@pytest.mark.parametrize("builder", ["shuffle", "anli"])
def test_data_prep_never_deletes_a_folder_of_unrelated_files(tmp_path, corpus, builder, capsys):
    theirs = tmp_path / "thesis"
    theirs.mkdir()
    (theirs / "chapter1.tex").write_text("precious")
    (theirs / "figures").mkdir()
    (theirs / "figures" / "plot.pdf").write_bytes(b"%PDF")
    if builder == "shuffle":
        script, argv = shuffle_set, ["--source", f"txtdir:{corpus}", "--output", theirs, "--overwrite"]
    else:
        release = write_anli_layout(tmp_path / "anli", {"train": 4, "dev": 2, "test": 2})
        script, argv = anli_augmented, ["--source", f"jsonl:{release}", "--output", theirs, "--overwrite"]
    before = digest(theirs)
    assert_refused(script(capsys, *argv), "did not write", "chapter1.tex")  # even --overwrite deletes nothing foreign
    assert digest(theirs) == before and temporaries(tmp_path) == []


def test_data_prep_never_replaces_a_plain_file_by_a_folder(tmp_path, corpus, capsys):
    notes = tmp_path / "notes.txt"
    notes.write_text("keep me")
    result = shuffle_set(capsys, "--source", f"txtdir:{corpus}", "--output", str(notes), "--overwrite")
    assert_refused(result, "is a file")
    assert notes.read_text() == "keep me"


def test_rebuilding_an_earlier_output_needs_overwrite_and_keeps_foreign_files(tmp_path, corpus, capsys):
    out = tmp_path / "set"
    build = ["--source", f"txtdir:{corpus}", "--output", str(out)]
    assert shuffle_set(capsys, *build).code == 0
    first = digest(out)
    assert_refused(shuffle_set(capsys, *build), "--overwrite")
    assert digest(out) == first
    assert shuffle_set(capsys, *build, "--seed", "7", "--overwrite").code == 0  # ours, replaced atomically
    assert digest(out) != first and temporaries(tmp_path) == []
    (out / "my_analysis.ipynb").write_text("{}")  # the user added a file: the folder is no longer only ours
    before = digest(out)
    assert_refused(shuffle_set(capsys, *build, "--overwrite"), "my_analysis.ipynb")
    assert digest(out) == before


def test_export_into_the_run_folder_of_its_checkpoint_is_refused(nli_checkpoint, tmp_path, capsys):
    import shutil

    run_dir = tmp_path / "run"
    (run_dir / "checkpoints").mkdir(parents=True)
    ckpt = shutil.copy(nli_checkpoint, run_dir / "checkpoints" / "last.ckpt")
    before = digest(run_dir)
    result = cli(capsys, "export", str(ckpt), str(run_dir), "--overwrite")
    assert_refused(result, "contains an input")
    assert digest(run_dir) == before


def test_export_never_replaces_a_plain_file(nli_checkpoint, tmp_path, capsys):
    target = tmp_path / "model"
    target.write_text("not a folder")
    assert_refused(cli(capsys, "export", str(nli_checkpoint), str(target)), "is a file")
    assert target.read_text() == "not a folder"


def test_score_output_equal_to_its_input_is_refused(tiny_deberta_nli, pairs_file, tmp_path, capsys):
    import shutil

    source = shutil.copy(pairs_file, tmp_path / "pairs.jsonl")
    before = digest(tmp_path)
    result = cli(capsys, "score", "faithfulness", "--model", str(tiny_deberta_nli), "--input",
                 str(source), "--output", str(source))
    assert_refused(result, "is an input")
    assert digest(tmp_path) == before


def test_meta_eval_json_onto_its_human_file_is_refused(tmp_path, capsys):
    rows = [{"doc_id": d, "system_id": s, "score": float(d + s)} for d in range(4) for s in range(3)]
    human = write_jsonl(tmp_path / "human.jsonl", rows)
    metric = write_jsonl(tmp_path / "metric.jsonl", rows)
    before = digest(tmp_path)
    result = cli(capsys, "meta-eval", "correlations", "--human", str(human), "--metric", str(metric),
                 "--json", str(human), "--resamples", "0")
    assert_refused(result, "--json is an input")
    assert digest(tmp_path) == before


# train.py as a user runs it, saying at exit whether Lightning (seconds of import) was imported
IMPORTS_AT_EXIT = ("import atexit, runpy, sys; atexit.register(lambda: print('lightning imported:', 'lightning' in "
                   "sys.modules, file=sys.stdout)); sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], "
                   "run_name='__main__')")


@pytest.mark.slow
def test_training_into_a_folder_of_user_files_is_refused(tiny_roberta, ccl_data_dir, tmp_path):
    """... before Lightning's import: the refusal takes a second, not the seconds of the import."""
    theirs = tmp_path / "results"
    theirs.mkdir()
    (theirs / "table.tex").write_text("precious")
    before = digest(theirs)
    result = run([TRAIN[0], "-c", IMPORTS_AT_EXIT, TRAIN[1], "experiment=ccl_demo",
                  f"model.name_or_path={tiny_roberta}", f"data.path={ccl_data_dir}", f"hydra.run.dir={theirs}"])
    assert_refused(result, "already holds files", "table.tex")
    assert result.out.strip().endswith("lightning imported: False")
    assert {k: v for k, v in digest(theirs).items() if ".hydra" not in k and not k.endswith(".log")} == before

