"""The output policy itself (learned_metrics.outputs), in process: every rule with hostile cases."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from learned_metrics.errors import UserError
from learned_metrics.outputs import (
    MARKER_NAME,
    atomic_file,
    atomic_folder,
    check_outputs,
    file_output,
    folder_output,
    remove_stale_temps,
    staged_files,
    temp_sibling,
)


def test_new_and_empty_outputs_pass(tmp_path):
    (tmp_path / "empty").mkdir()
    check_outputs([folder_output(tmp_path / "new" / "deeper", "export"), folder_output(tmp_path / "empty", "export"),
                   file_output(tmp_path / "scores.jsonl")])
    assert sorted(os.listdir(tmp_path)) == ["empty"]  # checking creates nothing


@pytest.mark.parametrize(
    ("setup", "message"),
    [("input-itself", "is an input"), ("input-inside", "contains an input"), ("foreign", "did not write"),
     ("plain-file", "exists and is a file"), ("ours-no-overwrite", "--overwrite"), ("other-kind", "did not write"),
     ("parent-file", "is a file, not a folder"), ("duplicate", "name the same path")],
)
def test_folder_outputs_refused(tmp_path, setup, message):
    out = tmp_path / "out"
    inputs, outputs = [], [folder_output(out, "shuffle_set")]
    if setup == "input-itself":
        out.mkdir()
        inputs = [out]
    elif setup == "input-inside":
        (out / "corpus").mkdir(parents=True)
        inputs = [out / "corpus"]
    elif setup == "foreign":
        out.mkdir()
        (out / "thesis.tex").write_text("x")
    elif setup == "plain-file":
        out.write_text("x")
    elif setup in ("ours-no-overwrite", "other-kind"):
        with atomic_folder(out, "shuffle_set" if setup == "ours-no-overwrite" else "export") as tmp:
            (tmp / "data.arrow").write_text("x")
    elif setup == "parent-file":
        (tmp_path / "file").write_text("x")
        outputs = [folder_output(tmp_path / "file" / "out", "shuffle_set")]
    elif setup == "duplicate":
        outputs.append(folder_output(tmp_path / "x" / ".." / "out", "shuffle_set", option="--other"))
    with pytest.raises(UserError, match=message) as info:
        check_outputs(outputs, inputs=inputs)
    assert "\n" not in str(info.value)


def test_symlinked_input_is_recognised(tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text("{}\n")
    (tmp_path / "link.jsonl").symlink_to(data)
    with pytest.raises(UserError, match="is an input"):
        check_outputs([file_output(tmp_path / "link.jsonl")], inputs=[data])


def test_overwrite_replaces_our_folder_atomically_and_keeps_nothing_stale(tmp_path):
    out = tmp_path / "set"
    with atomic_folder(out, "shuffle_set") as tmp:
        (tmp / "old.arrow").write_text("old")
    marker = json.loads((out / MARKER_NAME).read_text())
    assert marker["kind"] == "shuffle_set" and marker["entries"] == ["old.arrow"]
    check_outputs([folder_output(out, "shuffle_set")], overwrite=True)
    with atomic_folder(out, "shuffle_set", overwrite=True) as tmp:
        (tmp / "new.arrow").write_text("new")
    assert sorted(os.listdir(out)) == [MARKER_NAME, "new.arrow"] and sorted(os.listdir(tmp_path)) == ["set"]


def test_a_failed_block_leaves_nothing_and_keeps_the_old_output(tmp_path):
    out = tmp_path / "a" / "b" / "set"
    with pytest.raises(RuntimeError), atomic_folder(out, "export") as tmp:
        (tmp / "half").write_text("x")
        raise RuntimeError("build failed")
    assert not (tmp_path / "a").exists()  # the parents it created are gone too
    target = tmp_path / "scores.jsonl"
    target.write_text("previous run")
    with pytest.raises(RuntimeError), atomic_file(target) as tmp:
        tmp.write_text("partial")
        raise RuntimeError
    assert target.read_text() == "previous run" and os.listdir(tmp_path) == ["scores.jsonl"]


def test_staged_files_are_all_or_nothing(tmp_path):
    with pytest.raises(RuntimeError), staged_files() as stage:
        stage(tmp_path / "out.json").write_text("{}")
        raise RuntimeError("the plot failed")
    assert os.listdir(tmp_path) == []
    with staged_files() as stage:
        stage(tmp_path / "out.json").write_text("{}")
        stage(tmp_path / "plots" / "fig.png").write_bytes(b"png")
    assert sorted(os.listdir(tmp_path)) == ["out.json", "plots"] and os.listdir(tmp_path / "plots") == ["fig.png"]


def test_temporaries_of_killed_processes_are_removed_and_live_ones_kept(tmp_path):
    target = tmp_path / "scored.jsonl"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = temp_sibling(target).name.replace(f"-{os.getpid()}-", f"-{dead.stdout.strip()}-")
    (tmp_path / stale).write_text("left by kill -9")
    live = temp_sibling(target)
    live.write_text("a concurrent run of this process")
    other = tmp_path / ".scored.jsonl.notes"
    other.write_text("not ours")
    assert remove_stale_temps(target) == 1
    assert sorted(os.listdir(tmp_path)) == sorted([live.name, other.name])
    folder = tmp_path / "set"
    (tmp_path / temp_sibling(folder).name.replace(f"-{os.getpid()}-", f"-{dead.stdout.strip()}-")).mkdir()
    assert remove_stale_temps(folder) == 1  # a folder build killed half-way
