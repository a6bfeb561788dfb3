"""The output policy: every file and folder a command writes goes through here (docs/safety.md "Outputs").

:func:`check_outputs` checks every rule before any work starts; everything is written to a hidden temporary (host and
PID in its name) renamed at the end, so no half-written output stays and nothing we did not write is deleted."""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import hashlib
import itertools
import json
import os
import secrets
import shutil
import socket
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from learned_metrics import validate
from learned_metrics.errors import UserError

MARKER_NAME = ".learned-metrics-output.json"
TEMP_TAG = "lmtmp"


@dataclass(frozen=True)
class Output:
    """One thing a command will write: a file, or a folder of a given kind (``export``, ``shuffle_set`` ...)."""

    path: Path
    kind: str | None = None  # None: a file
    option: str = "--output"  # how the user named it, for messages


def file_output(path: str | os.PathLike, option: str = "--output", kind: str | None = None) -> Output:
    if not str(os.fspath(path)).strip():
        raise UserError(f"{option}: empty path")
    return Output(Path(os.fspath(path)).expanduser(), kind, option)


def json_file_output(path: str | os.PathLike, option: str) -> Output:
    """A file written as JSON (``--summary``): a name without ``.json`` is refused, not written in another format."""
    if not os.fspath(path).lower().endswith(".json"):
        raise UserError(f"{option} is written as JSON: give a file name ending in .json", path=path)
    return file_output(path, option)


def folder_output(path: str | os.PathLike, kind: str, option: str = "--output") -> Output:
    return file_output(path, option, kind)


def _host_tag() -> str:
    return hashlib.sha1(socket.gethostname().encode("utf-8")).hexdigest()[:8]


def temp_sibling(target: Path) -> Path:
    """A fresh hidden name beside ``target`` that keeps its suffix (so format-by-suffix still works)."""
    tag = f"{TEMP_TAG}-{_host_tag()}-{os.getpid()}-{secrets.token_hex(4)}"
    return target.with_name(f".{target.name}.{tag}{target.suffix}")


def _fresh_temp(target: Path, folder: bool = False) -> tuple[Path, list[Path]]:
    """A new temporary beside ``target`` (a folder when ``folder``), stale ones removed, and the folders it created."""
    created = make_parents(target.parent)
    remove_stale_temps(target)
    tmp = temp_sibling(target)
    if folder:
        tmp.mkdir()
    return tmp, created


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        pass
    return True


def remove_stale_temps(target: Path) -> int:
    """Remove temporaries beside ``target`` left by a killed process of this host; returns how many."""
    if not target.parent.is_dir():
        return 0
    host, removed = _host_tag(), 0
    for entry in target.parent.glob(f".{target.name}.{TEMP_TAG}-*"):
        parts = entry.name.split(f".{TEMP_TAG}-", 1)[1].split("-")
        if len(parts) >= 3 and parts[0] == host and parts[1].isdigit() and not _pid_alive(int(parts[1])):
            _remove(entry)
            removed += 1
    return removed


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def make_parents(folder: Path) -> list[Path]:
    """``mkdir -p`` that returns the folders it created (outermost first), so a failure can remove them."""
    created = []
    for path in reversed(list(itertools.takewhile(lambda p: not p.exists(), (folder, *folder.parents)))):
        with contextlib.suppress(FileExistsError):  # made meanwhile by another process: not ours to remove
            path.mkdir()
            created.append(path)
    return created


def remove_created(created: list[Path]) -> None:
    for path in reversed(created):
        with contextlib.suppress(OSError):
            path.rmdir()


def apply_default_permissions(path: str | os.PathLike, directory: bool = False) -> None:
    """Temp files are private (0600/0700); results get the usual umask-based mode, readable by colleagues."""
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(path, (0o777 if directory else 0o666) & ~mask)


def _apply_permissions_tree(root: Path) -> None:
    """Every file and folder of a written folder: libraries (safetensors) write 0600 files."""
    apply_default_permissions(root, directory=True)
    for current, dirnames, filenames in os.walk(root):
        for path in map(Path(current).joinpath, dirnames + filenames):
            if not path.is_symlink():  # a link's mode is its target's, which may lie outside the folder
                apply_default_permissions(path, directory=path.is_dir())


def read_marker(folder: Path) -> dict[str, Any] | None:
    """The marker of a folder we wrote, or None (missing, unreadable, or not ours)."""
    try:
        data = json.loads((folder / MARKER_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    ours = isinstance(data, dict) and isinstance(data.get("kind"), str) and isinstance(data.get("entries"), list)
    return data if ours else None


def write_marker(folder: Path, kind: str) -> None:
    from learned_metrics import __version__

    entries = sorted(p.name for p in folder.iterdir() if p.name != MARKER_NAME)
    marker = {"kind": kind, "entries": entries, "written_by": f"learned-metrics {__version__}",
              "written_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")}
    (folder / MARKER_NAME).write_text(json.dumps(marker, indent=2) + "\n", encoding="utf-8")


def foreign_entries(folder: Path, kind: str) -> list[str]:
    """Entries of an existing folder that an earlier ``kind`` output of ours did not write (all, if not ours)."""
    present = [p.name for p in folder.iterdir() if not (p.name.startswith(".") and f".{TEMP_TAG}-" in p.name)]
    marker = read_marker(folder)
    if marker is None or marker["kind"] != kind:
        return present
    ours = {*marker["entries"], MARKER_NAME}
    return [name for name in present if name not in ours]


class InputPath(str):
    """A path a command reads, which no output may equal, contain or lie inside; as the argparse ``type`` of every
    option naming one (:data:`input_path`), a command cannot forget to hand it to :func:`check_outputs`."""


input_path = InputPath


def inputs_of(args: Any) -> list[str]:
    """Every path a parsed command line reads, collected by type (options holding one path or a list of them)."""
    values = [item for value in vars(args).values() for item in (value if isinstance(value, list) else [value])]
    return [str(item) for item in values if isinstance(item, InputPath)]


def _resolved(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _overlap(output: Path, source: Path) -> str | None:
    """How an output would touch an input: it ``is`` it, ``contains`` it, or lies ``inside`` it (a folder)."""
    out, src = _resolved(output), _resolved(source)
    if out == src:
        return "is"
    if out in src.parents:
        return "contains"
    if src in out.parents and src.is_dir():  # below a file is no place at all: the folder check says so
        return "lies inside"
    with contextlib.suppress(OSError):
        if output.exists() and os.path.samefile(output, source):
            return "is"
    return None


def _check_one(output: Output, inputs: Sequence[Path], overwrite: bool) -> None:
    path = output.path
    for source in inputs:
        if what := _overlap(path, source):
            raise UserError(f"{output.option} {what} an input of this command ({source}); writing it would destroy "
                            "the input. Choose another location", path=path)
    ancestor = Path(os.path.abspath(path.parent))
    while not ancestor.exists() and ancestor.parent != ancestor:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise UserError(f"{output.option}: {ancestor} is a file, not a folder", path=path)
    if path.exists() or path.is_symlink():
        if output.kind is not None:
            _check_existing_folder(output, overwrite)
        elif path.is_dir():
            raise UserError(f"{output.option} is a folder; give a file name", path=path)
        elif not path.is_file():
            raise UserError(f"{output.option} exists and is not a regular file", path=path)
    try:  # a real write probe: ``os.access`` says yes to root on read-only mounts and 0555 folders
        fd, probe = tempfile.mkstemp(prefix=f".{TEMP_TAG}-probe-", dir=ancestor)
    except OSError as exc:
        raise UserError(f"cannot write into {ancestor} ({exc.strerror or exc})", path=path) from None
    os.close(fd)
    os.unlink(probe)


def shown_names(names: Iterable[str]) -> str:
    """The first three names (sorted) of a folder a message points at, and how many more."""
    names = sorted(names)
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def _check_existing_folder(output: Output, overwrite: bool) -> None:
    path = output.path
    if not path.is_dir():
        raise UserError(f"{output.option} exists and is a file; a folder is written here. Choose another name",
                        path=path)
    foreign = foreign_entries(path, output.kind)
    if foreign:
        raise UserError(f"{output.option} holds files that learned-metrics did not write as a {output.kind} output "
                        f"({shown_names(foreign)}); nothing is deleted: choose a new or empty folder", path=path)
    if read_marker(path) is not None and not overwrite:
        raise UserError(f"{output.option} holds an earlier {output.kind} output; pass --overwrite to replace it",
                        path=path)


def check_outputs(outputs: Sequence[Output], *, inputs: Iterable[str | os.PathLike | None] = (),
                  overwrite: bool = False) -> None:
    """Every rule of this module for every output of a command, before any work: one line for the first broken one."""
    overwrite = validate.flag(overwrite, "overwrite", also="--overwrite")  # "no" would replace a folder
    sources = [Path(p).expanduser() for p in inputs if p is not None and str(p) and Path(p).expanduser().exists()]
    seen: dict[Path, Output] = {}
    for output in outputs:
        key = _resolved(output.path)
        if key in seen:
            raise UserError(f"{seen[key].option} and {output.option} name the same path", path=output.path)
        seen[key] = output
        _check_one(output, sources, overwrite)


@contextlib.contextmanager
def atomic_file(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; it is renamed onto ``path`` only if the block succeeds."""
    with staged_files() as stage:
        yield stage(path)


@contextlib.contextmanager
def atomic_folder(path: str | os.PathLike, kind: str, overwrite: bool = False) -> Iterator[Path]:
    """A temporary folder beside ``path``, marked and swapped in at the end (an earlier ``kind``: overwrite)."""
    path = _resolved(Path(path))
    with scratch_folder(path) as tmp:  # once swapped in, nothing is left for it to remove
        yield tmp
        write_marker(tmp, kind)
        _apply_permissions_tree(tmp)
        if not (path.exists() or path.is_symlink()):
            try:
                os.rename(tmp, path)  # rename, not replace: never lands on something that appeared meanwhile
            except OSError as exc:
                if exc.errno in (errno.EEXIST, errno.ENOTEMPTY):
                    raise UserError("appeared while this command ran; nothing was replaced", path=path) from None
                raise
        else:
            _check_existing_folder(Output(path, kind), overwrite)
            old = temp_sibling(path)
            os.replace(path, old)
            os.replace(tmp, path)
            _remove(old)


@contextlib.contextmanager
def staged_files() -> Iterator[Callable[[str | os.PathLike], Path]]:
    """Several file outputs as one: ``stage(target)`` gives a temp path; all are renamed only if the block succeeds."""
    staged: list[tuple[Path, Path, list[Path]]] = []

    def stage(target: str | os.PathLike) -> Path:
        tmp, created = _fresh_temp(Path(target))
        staged.append((tmp, Path(target), created))
        return tmp

    try:
        yield stage
        for tmp, target, _ in staged:
            if tmp.exists():
                apply_default_permissions(tmp)
                os.replace(tmp, target)
    except BaseException:  # a stop signal too: nothing half-written stays
        for tmp, _, created in staged:
            _remove(tmp)
            remove_created(created)
        raise


@contextlib.contextmanager
def scratch_folder(target: str | os.PathLike) -> Iterator[Path]:
    """A hidden working folder beside ``target`` (same file system), removed with the empty folders made for it."""
    work, created = _fresh_temp(_resolved(Path(target)), folder=True)
    try:
        yield work
    finally:
        _remove(work)
        remove_created(created)
