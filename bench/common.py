"""Shared helpers of the benchmark scripts: timed subprocesses, temporary copies, figures, output.

Every benchmark works on temporary copies (``tempfile``) of its target; nothing here writes into
the repository except ``bench/RESULTS.md`` (written by ``run.py``).
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import psutil
from rich.console import Console
from rich.table import Table

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "bench"
GENERIC_TARGET = BENCH / "generic_target"
SAMPLE_AGENT = REPO / "sample_agent"
IGNORED_NAMES = (".mutagent", "__pycache__", ".pytest_cache", "mutants", ".hypothesis", "*.pyc")

console = Console(stderr=True, highlight=False)


# --- timing ---------------------------------------------------------------------------------
@dataclass
class Measurement:
    """One timed command: wall seconds, CPU seconds of its whole process tree, peak tree RSS."""

    command: list[str]
    wall: float
    cpu: float
    peak_rss_mb: float
    returncode: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def tail(self, lines: int = 15) -> str:
        text = (self.stdout + "\n" + self.stderr).strip().splitlines()
        return "\n".join(text[-lines:])


class _RssSampler(threading.Thread):
    """Samples the summed RSS of a process and all its descendants until stopped."""

    def __init__(self, pid: int, interval: float = 0.05) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.interval = interval
        self.peak = 0
        self._stop_event = threading.Event()

    def run(self) -> None:
        try:
            root = psutil.Process(self.pid)
        except psutil.NoSuchProcess:
            return
        while not self._stop_event.is_set():
            total = 0
            try:
                for proc in [root, *root.children(recursive=True)]:
                    try:
                        total += proc.memory_info().rss
                    except (psutil.NoSuchProcess, psutil.AccessDenied):
                        continue
            except psutil.NoSuchProcess:
                return
            self.peak = max(self.peak, total)
            self._stop_event.wait(self.interval)

    def stop(self) -> None:
        self._stop_event.set()
        self.join(timeout=2)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(
    command: Sequence[str], cwd: Path, env: dict[str, str] | None = None, timeout: float | None = None
) -> Measurement:
    """Run ``command`` to completion; CPU is the ``RUSAGE_CHILDREN`` delta (every descendant that
    was waited for), memory the peak of the sampled process-tree RSS."""
    cpu_before = _children_cpu()
    started = time.monotonic()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(
            list(command),
            cwd=cwd,
            env=env,
            stdout=out,
            stderr=err,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        sampler = _RssSampler(proc.pid)
        sampler.start()
        try:
            returncode = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_tree(proc)
            returncode = -9
        finally:
            sampler.stop()
        wall = time.monotonic() - started
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    return Measurement(
        list(command), wall, _children_cpu() - cpu_before, sampler.peak / 2**20, returncode, stdout, stderr
    )


def _kill_tree(proc: subprocess.Popen[str]) -> None:
    """Kill the process group we started for ``proc`` (it runs in its own session)."""
    try:
        os.killpg(proc.pid, 9)
    except ProcessLookupError:
        pass
    proc.wait()


def bench_env(**extra: str) -> dict[str, str]:
    """The environment for timed tools: no colour codes, no bytecode writes into copies' parents."""
    env = {**os.environ, "NO_COLOR": "1", "TERM": "dumb", "COLUMNS": "200", "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("FORCE_COLOR", None)
    env.update(extra)
    return env


class BenchError(RuntimeError):
    """A benchmark could not produce its figure (tool crash, red baseline...)."""


# --- temporary copies -----------------------------------------------------------------------
@contextmanager
def scratch(prefix: str) -> Iterator[Path]:
    """A temporary directory removed afterwards; kept (and named) when a benchmark fails in it, so a
    crash can be investigated, or always with ``MUTAGENT_BENCH_KEEP=1``."""
    path = Path(tempfile.mkdtemp(prefix=f"mutagent-bench-{prefix}-"))
    keep = bool(os.environ.get("MUTAGENT_BENCH_KEEP"))
    try:
        yield path
    except BenchError:
        keep = True
        raise
    finally:
        if keep:
            console.print(f"[dim]kept {path}[/]")
        else:
            shutil.rmtree(path, ignore_errors=True)


def copy_tree(source: Path, destination: Path) -> Path:
    """Copy a target without caches, stores and mutmut output."""
    shutil.copytree(source, destination, ignore=shutil.ignore_patterns(*IGNORED_NAMES))
    return destination


def copy_generic_target(parent: Path) -> Path:
    """``parent/generic_target``: the mutagent target and the mutmut project root at once."""
    return copy_tree(GENERIC_TARGET, parent / "generic_target")


def copy_sample_agent(parent: Path) -> Path:
    """``parent/sample_agent``: the mutagent target (a package whose tests live inside it);
    ``parent`` is its import root and the mutmut project root."""
    return copy_tree(SAMPLE_AGENT, parent / "sample_agent")


# --- mutagent ---------------------------------------------------------------------------------
def mutagent_run(target: Path, *args: str, workers: int, timeout: float | None = None) -> Measurement:
    """Time ``mutagent run TARGET ARGS --workers N`` end to end (a fresh interpreter)."""
    command = [sys.executable, "-m", "mutagent", "run", str(target), *args, "--workers", str(workers)]
    result = measure(command, cwd=target.parent, env=bench_env(), timeout=timeout)
    if not result.ok:
        crash = target / ".mutagent" / "crash.log"
        details = crash.read_text(encoding="utf-8", errors="replace")[-3000:] if crash.is_file() else ""
        raise BenchError(
            f"mutagent run failed (exit {result.returncode}): {' '.join(command)}\n{result.tail()}"
            + (f"\n--- {crash} (tail):\n{details}" if details else "")
        )
    return result


# --- figures -----------------------------------------------------------------------------------
def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


@dataclass
class Figure:
    """One reported number: the median of ``samples``, optionally checked against a target."""

    name: str
    samples: list[float]
    unit: str = ""
    target: str = ""
    passed: bool | None = None
    note: str = ""

    @property
    def value(self) -> float:
        return median(self.samples)

    def shown(self) -> str:
        return fmt(self.value, self.unit)

    def spread(self) -> str:
        if len(self.samples) < 2:
            return ""
        return f"{fmt(min(self.samples), self.unit)} – {fmt(max(self.samples), self.unit)}"


def fmt(value: float, unit: str = "") -> str:
    if value != value:  # NaN
        return "n/a"
    if unit == "x":
        return f"{value:.2f}×"
    if unit == "%":
        return f"{value * 100:.1f} %"
    if unit == "s":
        return f"{value:.1f} s" if value >= 10 else f"{value:.2f} s"
    if unit == "ms":
        return f"{value * 1000:.0f} ms"
    if unit == "MB":
        return f"{value:.0f} MB"
    if unit == "/s":
        return f"{value:.2f}/s"
    if isinstance(value, float) and value.is_integer():
        return f"{int(value)}{(' ' + unit) if unit else ''}"
    return f"{value:.2f}{(' ' + unit) if unit else ''}"


def check(value: float, *, at_least: float | None = None, at_most: float | None = None) -> bool | None:
    if value != value:
        return None
    if at_least is not None and value < at_least:
        return False
    if at_most is not None and value > at_most:
        return False
    return True


@dataclass
class Section:
    """What one benchmark script reports: headline figures, detail tables and notes."""

    key: str
    title: str
    figures: list[Figure] = field(default_factory=list)
    tables: list[tuple[str, list[str], list[list[str]]]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    error: str | None = None
    measured: str = ""  # when, and under which load average

    def to_json(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Section:
        figures = [Figure(**f) for f in data.pop("figures", [])]
        tables = [(t[0], list(t[1]), [list(r) for r in t[2]]) for t in data.pop("tables", [])]
        return cls(**data, figures=figures, tables=tables)

    def add_table(self, title: str, header: list[str], rows: list[list[str]]) -> None:
        self.tables.append((title, header, rows))


def print_section(section: Section, out: Console | None = None) -> None:
    """Render a section on the terminal with rich."""
    out = out or Console()
    out.rule(f"[bold]{section.title}")
    if section.error:
        out.print(f"[red]not measured: {section.error}[/]")
    if section.figures:
        table = Table(show_edge=False)
        for column in ("figure", "median", "range", "target", ""):
            table.add_column(column)
        for figure in section.figures:
            mark = {True: "[green]ok[/]", False: "[red]missed[/]", None: ""}[figure.passed]
            table.add_row(figure.name, figure.shown(), figure.spread(), figure.target, mark)
        out.print(table)
    for title, header, rows in section.tables:
        table = Table(title=title, show_edge=False, title_justify="left")
        for column in header:
            table.add_column(column)
        for row in rows:
            table.add_row(*row)
        out.print(table)
    for note in section.notes:
        out.print(f"[dim]- {note}[/]", soft_wrap=False)


# --- command line ------------------------------------------------------------------------------
def base_parser(description: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure; the median is reported")
    parser.add_argument("--workers", type=int, default=2, help="mutagent workers / mutmut children")
    parser.add_argument("--quick", action="store_true", help="smallest configuration, for smoke use")
    return parser


def machine_info() -> dict[str, str]:
    """nproc, CPU model, Python, OS, date and the current load average."""
    model = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return {
        "nproc": str(os.cpu_count()),
        "cpu": model,
        "python": platform.python_version(),
        "os": f"{platform.system()} {platform.release()}",
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
        "load average (1, 5, 15 min)": load,
    }
