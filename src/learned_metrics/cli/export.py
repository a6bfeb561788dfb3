"""``learned-metrics export CHECKPOINT OUTPUT``: a Lightning checkpoint -> a plain transformers folder."""

from __future__ import annotations

import argparse


def _run_export(args: argparse.Namespace) -> int:
    from learned_metrics.export import ExportSettings, export_checkpoint

    out = export_checkpoint(args.checkpoint, args.output, **ExportSettings.from_arguments(args).to_json())
    print(f"exported {args.checkpoint} -> {out}")
    return 0


def register(subparsers) -> None:
    from learned_metrics.export import ExportSettings

    parser = subparsers.add_parser(
        "export", help="export a Lightning checkpoint to a plain transformers folder",
        description="Rebuild a transformers folder (safetensors, tokenizer, id2label) plus learned_metric.json "
        "from any learned-metrics Lightning checkpoint, offline. Training runs already do this for the "
        "best checkpoint (checkpoints/<experiment>/<run>/export/).")
    parser.add_argument("checkpoint",
                        help="path to a .ckpt file (e.g. checkpoints/ccl_cnndm/<run>/checkpoints/last.ckpt)")
    parser.add_argument("output", help="new or empty folder to write (never the checkpoint's own run folder)")
    ExportSettings.add_arguments(parser)
    parser.set_defaults(func=_run_export)
