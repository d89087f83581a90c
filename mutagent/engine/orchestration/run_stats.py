"""Numbers about a run itself (not about the suite's quality): the closing line, the benchmarks.

CPU seconds are recorded per kind of job (control run, code swap, fresh import by zygote or new
process...): workers measure each job's CPU (their own plus their children's), which is how the
cost of each path is compared on a loaded machine where wall-clock time is noise.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from mutagent.engine.messages import JobEnd, JobResult, Launcher, Mode


@dataclass
class RunStats:
    """Counts, timings and per-kind CPU of one ``mutagent run``."""

    mutants: int = 0  # the mutants of this run (after --since / --shard)
    generated: int = 0  # every mutant the operators produced, before --since / --shard
    files_scanned: int = 0  # source files the operators were applied to
    ran: int = 0
    reused: int = 0
    decided: int = 0  # Ignored / CompileError / NoCoverage without running
    baseline_cached: bool = False
    baseline_remeasured: tuple[int, int] | None = None  # (tests measured again, of all): incremental
    workers: int = 0
    swapped: int = 0
    fresh_imports: int = 0  # mutants applied by a fresh import (zygote child or new process)
    zygote_imports: int = 0  # of those, forked from a zygote
    zygote_boots: int = 0
    fresh_import_costs: list[float] = field(default_factory=list)  # per fresh import: elapsed - zygote boot
    overheads: list[float] = field(default_factory=list)  # per forked mutant: elapsed - test time
    # the same without pytest's own work around each test's phases (``TestRecord.protocol``):
    # what mutagent adds (fork, code swap, pipes, the result) beyond any pytest run of those tests
    own_overheads: list[float] = field(default_factory=list)
    cpu: dict[str, list[float]] = field(default_factory=dict)  # job kind -> CPU seconds per job
    wall: float = 0.0
    worker_startup: float = 0.0
    worker_restarts: int = 0
    split: int = 0  # full-matrix mutants whose tests ran in parts on several workers (``split``)
    # fault exploration: (runs, wall seconds, cached), None when it did not take place
    exploration: tuple[int, float, bool] | None = None
    baseline_wall: float = 0.0  # wall seconds of the baseline's measured batches (0: cached)

    @property
    def median_overhead(self) -> float | None:
        return statistics.median(self.overheads) if self.overheads else None

    @property
    def median_own_overhead(self) -> float | None:
        return statistics.median(self.own_overheads) if self.own_overheads else None

    def record_cpu(self, kind: str, result: JobResult) -> None:
        self.cpu.setdefault(kind, []).append(result.cpu)

    def record_job(self, result: JobResult) -> str | None:
        """Account one mutant's job; returns a warning when a fresh import could not use the zygote."""
        mode, launcher = result.mode, result.launcher
        self.record_cpu(f"{mode.value}:{launcher.value}" if launcher else mode.value, result)
        self.ran += 1
        elapsed = result.elapsed
        if mode is Mode.FRESH_IMPORT:
            self.fresh_imports += 1
            boot = result.zygote_boot
            self.zygote_boots += 1 if boot else 0
            self.fresh_import_costs.append(max(0.0, elapsed - boot))
            if launcher is Launcher.ZYGOTE:
                self.zygote_imports += 1
            elif result.zygote_problem:
                return f"fresh imports run as new processes (slower): {result.zygote_problem}"
        elif mode is Mode.SWAP:
            self.swapped += 1
            if result.status is JobEnd.DONE:
                test_time = sum(t.duration for t in result.tests)
                self.overheads.append(max(0.0, elapsed - test_time))
                in_pytest = sum(max(t.protocol, t.duration) for t in result.tests)
                self.own_overheads.append(max(0.0, elapsed - in_pytest))
        return None
