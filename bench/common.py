"""What the benchmark scripts share: the machine description, timing helpers and bench/README.md sections.

Every script imports it as ``common``: ``python bench/bench_x.py`` puts bench/ first on ``sys.path``.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "bench" / "README.md"
TIME_V = "/usr/bin/time"


# --- the machine ---------------------------------------------------------------------------------


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / 2**20
    except (OSError, ValueError):
        pass
    return None


def _gpu() -> str:
    """The GPU torch sees when torch is loaded, else the first one ``nvidia-smi`` lists."""
    if "torch" in sys.modules:
        torch = sys.modules["torch"]
        return torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU"
    if shutil.which("nvidia-smi"):
        done = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                              text=True)
        names = done.stdout.strip().splitlines() if done.returncode == 0 else []
        if names:
            return names[0]
    return "no GPU"


def machine(when: str = "when the table was written", with_torch: bool = False) -> str:
    """The one description of the machine every table gives: cores this process may use, CPU model, memory, GPU,
    Python (and torch, with its threads, when loaded or ``with_torch``), and the load average ``when`` (the
    development machine is shared, so the load explains spread)."""
    if with_torch:
        import torch  # noqa: F401  (then in sys.modules)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    memory = _memory_gib()
    parts = [f"{cores} CPU cores ({_cpu_model()})"]
    if memory is not None:
        parts.append(f"{memory:.0f} GiB memory")
    parts += [_gpu(), f"Python {platform.python_version()}"]
    if "torch" in sys.modules:
        torch = sys.modules["torch"]
        threads = torch.get_num_threads()
        parts.append(f"torch {torch.__version__} ({threads} thread{'' if threads == 1 else 's'})")
    if hasattr(os, "getloadavg"):
        parts.append(f"load average {os.getloadavg()[0]:.1f} {when}")
    return ", ".join(parts)


# --- timing --------------------------------------------------------------------------------------


def timed(fn: Callable[[], object]) -> tuple[object, float, float]:
    """Result, CPU seconds of this process, wall seconds."""
    cpu, wall = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.process_time() - cpu, time.perf_counter() - wall


@dataclass
class FreshProcess:
    """One command run in a fresh process under ``/usr/bin/time -v``."""

    proc: subprocess.CompletedProcess
    wall: float
    peak_mib: float | None  # the whole process's peak resident memory


def run_fresh(argv: list[str], *, check: bool = True, **kwargs) -> FreshProcess:
    """Run ``argv`` under ``/usr/bin/time -v`` (output captured as text; ``kwargs`` go to ``subprocess.run``).
    ``check``: a failed command ends the benchmark with the end of its stderr."""
    start = time.perf_counter()
    proc = subprocess.run([TIME_V, "-v", *argv], capture_output=True, text=True, **kwargs)
    wall = time.perf_counter() - start
    if check and proc.returncode != 0:
        raise SystemExit(f"failed: {' '.join(argv)}\n{proc.stderr[-3000:]}")
    match = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    return FreshProcess(proc, wall, int(match.group(1)) / 1024 if match else None)


# --- bench/README.md -----------------------------------------------------------------------------


def _heading_level(heading: str) -> int:
    return len(heading) - len(heading.lstrip("#"))


def section_pattern(heading: str) -> re.Pattern[str]:
    """A section: its heading line up to the next heading of the same or a higher level (or the end)."""
    return re.compile(rf"^{re.escape(heading)}\n.*?(?=^#{{1,{_heading_level(heading)}}} |\Z)", re.S | re.M)


def replace_section(block: str, readme: Path = README) -> None:
    """Put ``block`` (starting with its ``##``/``###`` heading line) in place of the section with that heading
    in ``readme``, or append it; the other sections stay as they are."""
    heading = block.splitlines()[0]
    block = block.strip("\n") + "\n"
    text = readme.read_text(encoding="utf-8") if readme.exists() else "# Benchmarks\n"
    pattern = section_pattern(heading)
    if pattern.search(text):
        text = pattern.sub(lambda _: block + "\n", text, count=1)
    else:
        text = text.rstrip("\n") + "\n\n" + block
    readme.write_text(text.rstrip("\n") + "\n", encoding="utf-8")
