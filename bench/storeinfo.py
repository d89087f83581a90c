"""What a finished ``mutagent run`` recorded, reduced to the numbers the benchmarks report.

Reads the target copy's store (``mutagent.store.load_run_data``) plus the ``finished`` column of
its ``results`` table (the time each result was committed), which bounds the mutant phase.
"""

from __future__ import annotations

import re
import sqlite3
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from common import mutagent_run

from mutagent.engine.discover import discover
from mutagent.model import RunData, Status
from mutagent.store import load_run_data, store_path


@dataclass
class RunInfo:
    """One mutagent run seen through its store and its closing line."""

    data: RunData
    wall: float  # end to end, as measured by the benchmark around the process
    workers: int
    statuses: Counter[str] = field(default_factory=Counter)
    test_time: float = 0.0  # Σ over mutants run of the baseline durations of the tests they ran
    overheads: list[float] = field(default_factory=list)  # per mutant: elapsed - baseline test time
    mutant_phase: float = float("nan")  # first result start .. last result commit
    ran: int = 0
    reused: int = 0
    engine_overhead_ms: float | None = None  # "median harness overhead N ms" from the closing line
    modules: dict[str, str] = field(default_factory=dict)  # source file -> dotted module name
    cpu: float = 0.0  # CPU seconds of the whole process tree, when measured
    peak_rss_mb: float = 0.0  # peak summed RSS of the process tree, when measured

    @property
    def mutants(self) -> int:
        return len(self.data.mutants)

    @property
    def efficiency(self) -> float:
        """Σ selected tests' baseline durations ÷ (end-to-end wall × workers)."""
        return self.test_time / (self.wall * self.workers) if self.wall > 0 else float("nan")

    @property
    def phase_efficiency(self) -> float:
        """The same over the mutant phase only (baseline, control run and start-up excluded)."""
        phase = self.mutant_phase
        return self.test_time / (phase * self.workers) if phase == phase and phase > 0 else float("nan")

    def outcome_of(self, mutant_id: str) -> str:
        result = self.data.results.get(mutant_id)
        return result.status.value if result else Status.PENDING.value


_CLOSING = re.compile(r"(\d+) run with (\d+) workers")
_REUSED = re.compile(r"(\d+) results reused")
_OVERHEAD = re.compile(r"median harness overhead (\d+) ms")


def read_run(target: Path, wall: float, workers: int, stdout: str = "") -> RunInfo:
    """Load the store of ``target`` after a run that took ``wall`` seconds (while the copy exists)."""
    data = load_run_data(target)
    info = RunInfo(data=data, wall=wall, workers=workers)
    found = discover(target)
    info.modules = {f: found.module_name(f)[0] for f in found.sources}
    durations = {t.nodeid: t.duration for t in data.tests}
    for mutant in data.mutants:
        result = data.result_of(mutant)
        info.statuses[result.status.value] += 1
        if result.tests_run:
            selected = sum(durations.get(nodeid, 0.0) for nodeid in result.tests_run)
            info.test_time += selected
            info.overheads.append(max(0.0, result.duration - selected))
    info.mutant_phase = _mutant_phase(target, data)
    text = " ".join(stdout.split())
    if match := _CLOSING.search(text):
        info.ran = int(match.group(1))
    if match := _REUSED.search(text):
        info.reused = int(match.group(1))
    if match := _OVERHEAD.search(text):
        info.engine_overhead_ms = float(match.group(1))
    return info


def _mutant_phase(target: Path, data: RunData) -> float:
    """Seconds from the first run mutant's start to the last result's commit (NaN if none ran)."""
    ran = {m.id: data.results[m.id].duration for m in data.mutants
           if m.id in data.results and data.results[m.id].tests_run}
    if not ran:
        return float("nan")
    connection = sqlite3.connect(f"file:{store_path(target)}?mode=ro", uri=True)
    try:
        rows = connection.execute("SELECT mutant_id, finished FROM results").fetchall()
    finally:
        connection.close()
    finished = {mutant_id: at for mutant_id, at in rows if mutant_id in ran}
    if not finished:
        return float("nan")
    start = min(at - ran[mutant_id] for mutant_id, at in finished.items())
    return max(finished.values()) - start


def measured_run(target: Path, workers: int, *args: str) -> RunInfo:
    """``mutagent run TARGET ARGS`` timed end to end, then read back from its store."""
    measurement = mutagent_run(target, *args, workers=workers)
    info = read_run(target, measurement.wall, workers, measurement.stdout)
    info.cpu = measurement.cpu
    info.peak_rss_mb = measurement.peak_rss_mb
    return info
