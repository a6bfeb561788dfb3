"""Our commands print their own progress; transformers' bars never leak into it (issue 23: portable and quiet)."""

from __future__ import annotations

from hostile.hostile_tools import craft_checkpoint

from learned_metrics.cli import main

LIBRARY_BARS = ("Writing model shards", "Loading weights", "it/s]")


def test_export_and_scoring_print_no_library_progress_bars(tiny_deberta_nli, tmp_path, capfd):
    checkpoint = craft_checkpoint(tiny_deberta_nli, tmp_path / "best.ckpt")
    assert main(["export", str(checkpoint), str(tmp_path / "export")]) == 0
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text('{"grounding": "Anna bought apples.", "generation": "Anna has apples."}\n')
    assert main(["score", "faithfulness", "--model", str(tmp_path / "export"), "--input", str(pairs), "--output",
                 str(tmp_path / "out.jsonl")]) == 0
    out, err = capfd.readouterr()
    assert "exported" in out + err and "scored 1 rows" in out + err  # control: our own lines are there
    for bar in LIBRARY_BARS:
        assert bar not in out + err


def test_the_library_setting_is_restored(tiny_deberta_nli):
    from transformers.utils import logging as hf_logging

    from learned_metrics.safety import load_classifier

    was = hf_logging.is_progress_bar_enabled()
    try:
        for enabled in (True, False):
            (hf_logging.enable_progress_bar if enabled else hf_logging.disable_progress_bar)()
            load_classifier(tiny_deberta_nli)
            assert hf_logging.is_progress_bar_enabled() is enabled
    finally:
        (hf_logging.enable_progress_bar if was else hf_logging.disable_progress_bar)()
