"""``learned-metrics export CHECKPOINT OUTPUT``: a Lightning checkpoint -> a plain transformers folder."""

from __future__ import annotations

import argparse

from learned_metrics.errors import UserError


def _run_export(args: argparse.Namespace) -> int:
    from learned_metrics.export import ExportSettings, export_checkpoint

    settings = ExportSettings.from_arguments(args)
    if settings.onnx_from is not None and args.checkpoint is None:  # the graph added to an existing export
        from learned_metrics.onnx_export import add_onnx

        written = add_onnx(settings.onnx_from, int8=settings.onnx_int8, overwrite=settings.overwrite)
        print(f"wrote {', '.join(str(path) for path in written)}")
        return 0
    if args.checkpoint is None or args.output is None:
        raise UserError("give CHECKPOINT OUTPUT, or --onnx-from EXPORT_DIR to add the ONNX graph to an export")
    out = export_checkpoint(args.checkpoint, args.output, settings=settings)
    print(f"exported {args.checkpoint} -> {out}")
    return 0


def register(subparsers) -> None:
    from learned_metrics.export import ExportSettings

    parser = subparsers.add_parser(
        "export", help="export a Lightning checkpoint to a plain transformers folder",
        description="Rebuild a transformers folder (safetensors, tokenizer, id2label) plus learned_metric.json "
        "from any learned-metrics Lightning checkpoint, offline. Training runs already do this for the "
        "best checkpoint (checkpoints/<experiment>/<run>/export/).")
    parser.add_argument("checkpoint", nargs="?",
                        help="path to a .ckpt file (e.g. checkpoints/ccl_cnndm/<run>/checkpoints/last.ckpt)")
    parser.add_argument("output", nargs="?", help="new or empty folder to write (never the checkpoint's own run "
                        "folder)")
    ExportSettings.add_arguments(parser)
    parser.set_defaults(func=_run_export)
