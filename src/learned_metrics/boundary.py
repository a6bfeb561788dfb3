"""The error boundary every command runs inside (:func:`run_command`): one line for every failure a user can meet.

A stop signal unwinds (temporaries removed, exit 130/143); a UserError or OSError is ``PROG: error: ...`` and exit 2
(docs/safety.md); anything else is a bug in learned-metrics: its traceback is kept for the report."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from learned_metrics.errors import CommandInterrupted, UserError, cause_among, first_line

EXIT_USER_ERROR = 2
# Installed by `pip install 'learned-metrics[train]'` only (scoring and meta-evaluation do without them).
TRAIN_EXTRA_MODULES = {"lightning", "torchmetrics", "hydra", "omegaconf", "optuna", "wandb", "filelock", "yaml"}
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def is_main_process() -> bool:
    """Rank 0, or not distributed (``RANK``: torchrun/accelerate; ``LOCAL_RANK``: Lightning's DDP): only it reports."""
    return (os.environ.get("RANK") or os.environ.get("LOCAL_RANK") or "0").strip() == "0"


class CommandParser(argparse.ArgumentParser):
    """argparse, but a bad option is one line (``PROG: error: ...``), not the whole usage block."""

    def error(self, message: str) -> None:  # type: ignore[override]
        from learned_metrics.io import shown_text

        self.exit(EXIT_USER_ERROR, f"{self.prog}: error: {shown_text(message)} (see {self.prog} --help)\n")


def describe_os_error(exc: OSError) -> str:
    """``PATH: Permission denied`` (both paths of a rename), no ``[Errno 13]``; a full disk adds what was needed."""
    # the system's words for an error number (Arrow's "Error writing bytes to file. Detail: [errno 28] ..." too)
    known = isinstance(exc.errno, int) and exc.errno > 0 and not os.strerror(exc.errno).startswith("Unknown error")
    reason = os.strerror(exc.errno) if known else exc.strerror or first_line(exc)
    if needed := getattr(exc, "needed_bytes", None):
        reason += f" (writing it needs about {_human_bytes(needed)})"
    paths = [str(p) for p in (exc.filename, exc.filename2) if p is not None]
    return f"{' -> '.join(paths)}: {reason}" if paths else reason


def _human_bytes(count: int) -> str:
    if count < 1000:
        return f"{count:,} bytes"
    for unit in ("kB", "MB", "GB"):
        count /= 1000
        if count < 1000:
            return f"{count:,.1f} {unit}"
    return f"{count / 1000:,.1f} TB"


def exit_on_stop_signals(prog: str) -> None:
    """Until :func:`run_command` takes over, SIGINT/SIGTERM end the process at once with one line: entry points
    call this first, so a signal during the imports prints no traceback (nothing is written yet)."""

    def handler(signum: int, frame: Any) -> None:
        if is_main_process():
            os.write(2, f"{prog}: stopped by {signal.Signals(signum).name} before any work started\n".encode())
        os._exit(128 + signum)

    for signum in STOP_SIGNALS:
        with contextlib.suppress(ValueError):  # not the main thread: keep the defaults
            signal.signal(signum, handler)


@contextlib.contextmanager
def stop_signals_raise() -> Iterator[None]:
    """SIGINT/SIGTERM raise :class:`CommandInterrupted` in this process; a forked worker that inherits the handler
    restores the default action and re-sends the signal, so it dies quietly instead of printing a traceback."""
    owner = os.getpid()

    def handler(signum: int, frame: Any) -> None:
        if os.getpid() != owner:
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        raise CommandInterrupted(signum)

    previous = {}
    for signum in STOP_SIGNALS:
        with contextlib.suppress(ValueError):  # not the main thread (e.g. a notebook worker): keep the defaults
            previous[signum] = signal.signal(signum, handler)
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)


def report(prog: str, message: str) -> None:
    """The error's one line; a name it quotes from a file shows its control characters (``io.shown_text``)."""
    from learned_metrics.io import shown_text

    if is_main_process():
        print(f"{prog}: error: {shown_text(message)}", file=sys.stderr, flush=True)


def run_command(prog: str, fn: Callable[[], Any]) -> int:
    """Run ``fn`` and turn every failure a user can meet into one line and an exit code."""
    from learned_metrics.io import STDIO, writing

    try:
        with stop_signals_raise():
            result = fn()
            if sys.stdout is not None:  # what is buffered is written now, while a failure is still one line
                with writing(STDIO):
                    sys.stdout.flush()
    except UserError as exc:
        report(prog, str(exc))
        return EXIT_USER_ERROR
    except OSError as exc:
        try:  # what stdout still buffers would fail again at exit ("Exception ignored ... [Errno 28]", exit 120)
            if sys.stdout is not None:
                sys.stdout.flush()
        except (OSError, ValueError):  # so it goes to /dev/null instead
            with contextlib.suppress(OSError, ValueError, AttributeError):
                devnull = os.open(os.devnull, os.O_WRONLY)
                try:
                    os.dup2(devnull, sys.stdout.fileno())
                finally:
                    os.close(devnull)
        report(prog, describe_os_error(exc))
        return EXIT_USER_ERROR
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in TRAIN_EXTRA_MODULES:
            raise
        report(prog, f"this needs the training extra ({exc.name} is not installed): "
                     "pip install 'learned-metrics[train]'")
        return EXIT_USER_ERROR
    except Exception as exc:  # a library wrapped our error (Hydra's instantiate, datasets' generators)?
        cause = cause_among(exc, UserError)
        if cause is None:
            raise  # a bug in learned-metrics: keep the traceback for the report
        report(prog, str(cause))
        return EXIT_USER_ERROR
    except (CommandInterrupted, KeyboardInterrupt) as exc:
        code = 128 + (exc.signum if isinstance(exc, CommandInterrupted) else signal.SIGINT)  # shell: 130, 143
        if is_main_process():
            print(f"{prog}: stopped by {signal.Signals(code - 128).name}; unfinished outputs and temporary files "
                  "were removed", file=sys.stderr, flush=True)
        return code
    return int(result) if isinstance(result, int) else 0


def script_main(prog: str, add_arguments: Callable[[argparse.ArgumentParser], None],
                argv: Sequence[str] | None = None, **parser_kwargs: Any) -> int:
    """A stand-alone script (``data_prep/*.py``, sweeps): one command's arguments, parser and boundary, its own name."""
    parser = CommandParser(prog=prog, formatter_class=argparse.RawDescriptionHelpFormatter, **parser_kwargs)
    add_arguments(parser)
    args = parser.parse_args(argv)
    return run_command(prog, lambda: args.func(args))
