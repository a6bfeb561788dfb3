"""Class 2: nothing is written outside the requested output.

Found before: a checkpoint whose embedded tokenizer file names were ``../../X`` or ``/abs/X`` made
``learned-metrics export`` write those files anywhere (it passed the ``weights_only`` load). Checkpoints
no longer carry tokenizer files (the tokenizer is read from the run folder, ``--tokenizer`` or the base
model), and one that still embeds them (``tokenizer_files``) is refused before any name in it is read.
Names read from files elsewhere are checked by ``learned_metrics.validate.plain_file_name``.
"""

from __future__ import annotations

import base64

import pytest

from hostile.hostile_tools import assert_refused, cli, craft_checkpoint, digest
from learned_metrics.errors import UserError
from learned_metrics.validate import plain_file_name


@pytest.mark.parametrize("kind", ["parent", "absolute", "subfolder", "dotdot"])
def test_export_refuses_embedded_tokenizer_names_that_leave_the_export(tiny_deberta_nli, tmp_path, kind, capsys):
    victim = tmp_path / "outside" / "VICTIM"
    name = {"parent": "../outside/VICTIM", "absolute": str(victim), "subfolder": "sub/VICTIM", "dotdot": ".."}[kind]
    pwned = base64.b64encode(b"pwned").decode()
    files = {"tokenizer.json": base64.b64encode((tiny_deberta_nli / "tokenizer.json").read_bytes()).decode(),
             name: pwned}
    ckpt = craft_checkpoint(tiny_deberta_nli, tmp_path / "crafted.ckpt", tokenizer_files=files)
    before = digest(tmp_path)
    result = cli(capsys, "export", str(ckpt), str(tmp_path / "export" / "model"))
    assert_refused(result, "'tokenizer_files'", "no longer read", str(ckpt))
    assert not victim.exists() and not list(tmp_path.rglob("VICTIM"))
    assert digest(tmp_path) == before  # not even the export's parent folders were left behind


@pytest.mark.parametrize(
    "name", ["", ".", "..", "../x", "a/b", "a\\b", "/etc/passwd", "C:evil", "nul\x00", "tab\tname", 7, None]
)
def test_plain_file_name_refuses_everything_but_a_bare_name(name):
    with pytest.raises(UserError, match="not a plain file name"):
        plain_file_name(name, what="tokenizer file name")


@pytest.mark.parametrize("name", ["vocab.json", "tokenizer.json", "spm.model", "merges.txt", ".hidden", "a..b"])
def test_plain_file_name_keeps_ordinary_names(name):
    assert plain_file_name(name, what="tokenizer file name") == name
