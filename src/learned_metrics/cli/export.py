"""``learned-metrics export CHECKPOINT OUTPUT``: a Lightning checkpoint -> a plain transformers folder."""

from __future__ import annotations

import argparse


def _run_export(args: argparse.Namespace) -> int:
    from learned_metrics.export import export_checkpoint

    out = export_checkpoint(args.checkpoint, args.output, allow_pickle=args.allow_pickle, overwrite=args.overwrite,
                            tokenizer=args.tokenizer)
    print(f"exported {args.checkpoint} -> {out}")
    return 0


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "export",
        help="export a Lightning checkpoint to a plain transformers folder",
        description="Rebuild a transformers folder (safetensors, tokenizer, id2label) plus learned_metric.json "
        "from any learned-metrics Lightning checkpoint, offline. Training runs already do this for the "
        "best checkpoint (checkpoints/<experiment>/<run>/export/).",
    )
    parser.add_argument(
        "checkpoint", help="path to a .ckpt file (e.g. checkpoints/ccl_cnndm/<run>/checkpoints/last.ckpt)"
    )
    parser.add_argument("output", help="new or empty folder to write (never the checkpoint's own run folder)")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace an earlier export in OUTPUT atomically (a folder holding anything else is "
                        "never touched)")
    parser.add_argument("--tokenizer", metavar="DIR",
                        help="folder with the tokenizer (default: the run's tokenizer/ beside checkpoints/, else the "
                        "model the run started from)")
    parser.add_argument(
        "--allow-pickle",
        action="store_true",
        help="allow loading pickled objects from the checkpoint (only for trusted files)",
    )
    parser.set_defaults(func=_run_export)
