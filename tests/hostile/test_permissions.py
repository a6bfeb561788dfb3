"""Class 10: outputs are readable by colleagues like any other file the user writes.

Found before: an export's ``model.safetensors`` was mode 0600 (transformers 5 writes it that way)
while the rest was 0644. ``outputs.atomic_folder`` now gives every written file and folder the
usual umask-based mode.
"""

from __future__ import annotations

import os
import stat

import pytest

from hostile.hostile_tools import anli_augmented, cli
from learned_metrics.data.demo import write_anli_layout


def _modes(folder):
    return {str(p.relative_to(folder)): stat.S_IMODE(p.stat().st_mode) for p in [folder, *folder.rglob("*")]}


@pytest.mark.slow
def test_export_and_data_sets_get_umask_modes(nli_checkpoint, tmp_path, capsys):
    """In process: the commands write with the umask of the process that runs them, set here."""
    old = os.umask(0o022)
    try:
        assert cli(capsys, "export", nli_checkpoint, tmp_path / "export").code == 0
        layout = write_anli_layout(tmp_path / "anli", {"train": 4, "dev": 2, "test": 2})
        assert anli_augmented(capsys, "--source", f"jsonl:{layout}", "--output", tmp_path / "set").code == 0
    finally:
        os.umask(old)
    for folder in (tmp_path / "export", tmp_path / "set"):
        modes = _modes(folder)
        files = {name: mode for name, mode in modes.items() if (folder / name).is_file()}
        folders = {name: mode for name, mode in modes.items() if (folder / name).is_dir()}
        assert set(files.values()) == {0o644}, files
        assert set(folders.values()) == {0o755}, folders
    assert _modes(tmp_path / "export")["model.safetensors"] == 0o644
