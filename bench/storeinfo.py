"""What a finished ``mutagent run`` recorded, reduced to the numbers the benchmarks report.

Reads the target copy's store (``mutagent.store.load_run_data``) plus the ``finished`` column of
its ``results`` table (the time each result was committed), which bounds the mutant phase.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from common import mutagent_run

from mutagent.engine.orchestration.plan import breadth_of
from mutagent.engine.selection.discover import discover
from mutagent.model import RunData, Status
from mutagent.store import load_run_data, store_path


@dataclass
class RunInfo:
    """One mutagent run seen through its store and its closing line.

    Test durations come from the cached baseline: ``plain`` is each test's duration in the
    measured baseline (tests in sequence in one process, per-test coverage on: a forked batch
    in a worker, or the plain pytest run when that one diagnosed the suite), ``forked`` its
    duration in the control run (alone, in a child forked from a warm worker, no coverage: what
    a mutant's test costs in the harness).
    """

    data: RunData
    wall: float  # end to end, as measured by the benchmark around the process
    workers: int
    statuses: Counter[str] = field(default_factory=Counter)
    test_time: float = 0.0  # Σ over mutants run of the plain baseline durations of the tests they ran
    forked_test_time: float = 0.0  # the same with the control-run (forked) durations
    suite_plain: float = 0.0  # Σ plain durations over the whole suite
    suite_forked: float = 0.0  # Σ control-run durations over the whole suite
    overheads: list[float] = field(default_factory=list)  # per mutant: elapsed - plain test time
    mutant_phase: float = float("nan")  # first result start .. last result commit
    ran: int = 0
    reused: int = 0
    swapped: int = 0  # mutants run by code swap in a forked child
    fresh_imports: int = 0  # mutants run by a fresh pytest process (import-time code)
    engine_overhead_ms: float | None = None  # "median harness overhead N ms" from the closing line
    engine_own_overhead_ms: float | None = None  # "(N ms without pytest's own work around each test)"
    remeasured: tuple[int, int] | None = None  # "baseline: re-measured N of M tests" (incremental)
    modules: dict[str, str] = field(default_factory=dict)  # source file -> dotted module name
    cpu: float = 0.0  # CPU seconds of the whole process tree, when measured
    peak_rss_mb: float = 0.0  # peak summed RSS of the process tree, when measured
    breadth: dict[str, int] = field(default_factory=dict)  # test -> source lines it covers (baseline)
    plain_durations: dict[str, float] = field(default_factory=dict)  # test -> plain baseline duration

    @property
    def mutants(self) -> int:
        return len(self.data.mutants)

    @property
    def efficiency(self) -> float:
        """Σ selected tests' (plain) baseline durations ÷ (end-to-end wall × workers)."""
        return _ratio(self.test_time, self.wall * self.workers)

    @property
    def phase_efficiency(self) -> float:
        """The same over the mutant phase only (start-up, baseline and control run excluded)."""
        return _ratio(self.test_time, self.mutant_phase * self.workers)

    @property
    def forked_slowdown(self) -> float:
        """How much longer the suite's tests take one by one in the harness than in a plain run."""
        return _ratio(self.suite_forked, self.suite_plain)

    def outcome_of(self, mutant_id: str) -> str:
        result = self.data.results.get(mutant_id)
        return result.status.value if result else Status.PENDING.value


def _ratio(a: float, b: float) -> float:
    return a / b if b == b and b > 0 else float("nan")


_CLOSING = re.compile(r"(\d+) run with (\d+) workers")
_MODES = re.compile(r"(\d+) by code swap, (\d+) by fresh import")
_REUSED = re.compile(r"(\d+) results reused")
_REMEASURED = re.compile(r"baseline: re-measured (\d+) of (\d+) tests")
_OVERHEAD = re.compile(r"median harness overhead (\d+) ms")
_OWN_OVERHEAD = re.compile(r"\((\d+) ms without pytest's own work around each test\)")


def read_run(target: Path, wall: float, workers: int, stdout: str = "") -> RunInfo:
    """Load the store of ``target`` after a run that took ``wall`` seconds (while the copy exists)."""
    data = load_run_data(target)
    info = RunInfo(data=data, wall=wall, workers=workers)
    found = discover(target)
    info.modules = {f: found.module_name(f)[0] for f in found.sources}
    plain, forked = _baseline_durations(target)
    fallback = {t.nodeid: t.duration for t in data.tests}
    plain = {n: plain.get(n, d) for n, d in fallback.items()}
    forked = {n: forked.get(n, d) for n, d in fallback.items()}
    info.suite_plain, info.suite_forked = sum(plain.values()), sum(forked.values())
    info.plain_durations = plain
    info.breadth = _baseline_breadth(target)
    for mutant in data.mutants:
        result = data.result_of(mutant)
        info.statuses[result.status.value] += 1
        if result.tests_run:
            selected = sum(plain.get(nodeid, 0.0) for nodeid in result.tests_run)
            info.test_time += selected
            info.forked_test_time += sum(forked.get(nodeid, 0.0) for nodeid in result.tests_run)
            info.overheads.append(max(0.0, result.duration - selected))
    info.mutant_phase = _mutant_phase(target, data)
    text = " ".join(stdout.split())
    if match := _CLOSING.search(text):
        info.ran = int(match.group(1))
    if match := _MODES.search(text):
        info.swapped, info.fresh_imports = int(match.group(1)), int(match.group(2))
    if match := _REUSED.search(text):
        info.reused = int(match.group(1))
    if match := _OVERHEAD.search(text):
        info.engine_overhead_ms = float(match.group(1))
    if match := _OWN_OVERHEAD.search(text):
        info.engine_own_overhead_ms = float(match.group(1))
    if match := _REMEASURED.search(text):
        info.remeasured = (int(match.group(1)), int(match.group(2)))
    return info


def _query(target: Path, sql: str) -> list[tuple]:
    connection = sqlite3.connect(f"file:{store_path(target)}?mode=ro", uri=True)
    try:
        return connection.execute(sql).fetchall()
    finally:
        connection.close()


def _baseline_durations(target: Path) -> tuple[dict[str, float], dict[str, float]]:
    """Per-test durations of the plain baseline run and of the forked control run."""
    rows = _query(target, "SELECT data FROM baseline")
    if not rows:
        return {}, {}
    data = json.loads(rows[0][0])
    plain = {n: float(v.get("duration", 0.0)) for n, v in data.get("tests", {}).items()}
    forked = {n: float(v.get("duration", 0.0)) for n, v in data.get("control", {}).items()}
    return plain, forked


def _baseline_breadth(target: Path) -> dict[str, int]:
    rows = _query(target, "SELECT data FROM baseline")
    if not rows:
        return {}
    coverage = json.loads(rows[0][0]).get("coverage", {})
    return breadth_of(
        {f: {int(line): tests for line, tests in lines.items()} for f, lines in coverage.items()}
    )


def _mutant_phase(target: Path, data: RunData) -> float:
    """Seconds from the first run mutant's start to the last result's commit (NaN if none ran)."""
    ran = {
        m.id: data.results[m.id].duration
        for m in data.mutants
        if m.id in data.results and data.results[m.id].tests_run
    }
    if not ran:
        return float("nan")
    rows = _query(target, "SELECT mutant_id, finished FROM results")
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
