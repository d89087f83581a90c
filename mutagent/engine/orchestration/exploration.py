"""Fault exploration as a phase of the run: the explored runs as jobs of the warm workers.

Each run is a plain job of one test (``JobSpec.plain``, measured: per-test coverage as in the
baseline) carrying the fault in ``JobSpec.explore``: the child sets ``MUTAGENT_EXPLORE`` and the
``fake_model`` fixture inserts it and records the requests (``mutagent.fakeserver.inject``). The
runs are handed out one per free worker while the budget lasts (``explore.schedule``): the
budget is a multiple (``--explore-budget``, default 1×) of the baseline's wall time, in worker
seconds (that time × the workers, of which the runs' own time may fill 85 %: the rest is the
engine's work around each run and the last runs' tail), so exploration takes no longer than the
baseline did.
"""

from __future__ import annotations

import itertools
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.console import Console

from mutagent.engine.messages import JobEnd, JobResult, JobSpec
from mutagent.engine.orchestration.baseline import Baseline
from mutagent.engine.orchestration.plan import breadth_of
from mutagent.engine.orchestration.pool import Job, Pool
from mutagent.engine.orchestration.progress import RunProgress
from mutagent.engine.verdict import time_limit
from mutagent.explore.catalogue import scripts
from mutagent.explore.results import Exploration, ExploredRun
from mutagent.explore.schedule import Budget, Candidate, candidates
from mutagent.fakeserver.inject import STALL
from mutagent.model import Status

FORK_COST = 0.05  # seconds a run costs beyond its test: the fork, the coverage, the record
# the share of the workers' time the runs' own time may fill: the rest is what a run costs the
# engine around it (handing it out, reading its record) and the last runs' tail
HEADROOM = 0.85


def _lines_of(baseline: Baseline, tests: set[str]) -> dict[str, dict[str, set[int]]]:
    """Per test, the lines it runs without a fault (the baseline's coverage turned around)."""
    lines: dict[str, dict[str, set[int]]] = {test: {} for test in tests}
    for file, by_line in baseline.coverage.items():
        for line, covering in by_line.items():
            for test in covering:
                if test in lines:
                    lines[test].setdefault(file, set()).add(int(line))
    return lines


def _target_frames(raised: dict[str, Any] | None, sources: dict[str, str]) -> list[str]:
    """``file:line`` of each frame of the target's sources the exception passed through."""
    if not raised:
        return []
    frames = []
    for path, line, _ in raised.get("frames", []):
        relative = sources.get(os.path.realpath(str(path)))
        if relative is not None:
            frames.append(f"{relative}:{line}")
    return frames


def _run_of(
    candidate: Candidate,
    result: JobResult,
    record: dict[str, Any] | None,
    plain: dict[str, set[int]],
    sources: dict[str, str],
) -> ExploredRun:
    """The explored run from its job's result and the fixture's record."""
    measured = (result.baseline or {}).get("lines", {})
    lines = {
        file: sorted(int(line) for line, tests in by_line.items() if candidate.test in tests)
        for file, by_line in measured.items()
    }
    lines = {file: found for file, found in lines.items() if found}
    new = {file: sorted(set(found) - plain.get(file, set())) for file, found in lines.items()}
    test = result.record_of(candidate.test)
    if result.status is JobEnd.TIMEOUT:
        outcome = "timeout"
    elif test is None or result.status is not JobEnd.DONE:
        outcome = "error"
    else:
        outcome = test.outcome
    if record is not None and not record.get("fired"):
        outcome = "not-served"
    message = test.message if test is not None else result.last_detail_line()
    return ExploredRun(
        test=candidate.test,
        fault=candidate.fault,
        outcome=outcome,
        message=message,
        lines=lines,
        new={file: found for file, found in new.items() if found},
        requests=list((record or {}).get("requests", [])),
        fault_request=int((record or {}).get("fault_request", -1)),
        inserted=str((record or {}).get("inserted", "")),
        problems=list((record or {}).get("problems", [])),
        elapsed=result.elapsed,
        limit=result.elapsed if outcome == "timeout" else 0.0,
        raised=str(((record or {}).get("raised") or {}).get("type", "")),
        through=_target_frames((record or {}).get("raised"), sources),
    )


def _expected(candidate: Candidate, duration: float, stall: float | None = None) -> float:
    """What a run is expected to cost: a stall lasts as long as the client's read timeout (the
    allowance until a stall run has been measured, ``stall``: the longest measured since); a wait
    a server asks for may be faked by the test's own sleep (its time is in the limit, not here)."""
    if candidate.fault.kind != STALL:
        return duration + FORK_COST
    return duration + FORK_COST + (candidate.extra if stall is None else stall)


class _StallCost:
    """The extra seconds a stall run takes, learnt from the stall runs made so far."""

    def __init__(self) -> None:
        self.measured: float | None = None
        self.in_flight = 0
        self.deferred: list[Candidate] = []

    def defer(self, candidate: Candidate) -> bool:
        """Keep ``candidate`` for later when a stall now running will tell its real cost."""
        if self.measured is None and self.in_flight > 0:
            self.deferred.append(candidate)
            return True
        return False

    def measure(self, extra: float) -> None:
        self.in_flight -= 1
        self.measured = max(self.measured or 0.0, extra, 0.0)

    def retry(self) -> Iterator[Candidate]:
        """The deferred stalls, once a stall has been measured (each is tried once more)."""
        while self.measured is not None and self.deferred:
            yield self.deferred.pop(0)


def _long_runs_first(planned: list[Candidate], duration: Any, budget: float) -> list[Candidate]:
    """The first run of each long fault (a stall) moved to the front when together they take at
    most half the budget: started first, they overlap the short runs instead of leaving one worker
    finishing alone at the end; otherwise they stay last and the short runs keep the budget."""
    long_first: list[Candidate] = []
    seen: set[str] = set()
    for candidate in planned:
        if candidate.fault.kind == STALL and candidate.fault.label not in seen:
            seen.add(candidate.fault.label)
            long_first.append(candidate)
    if sum(_expected(c, duration(c.test)) for c in long_first) > budget / 2:
        return planned
    return [*long_first, *(c for c in planned if c not in long_first)]


def explore(
    pool: Pool,
    baseline: Baseline,
    aux: Path,
    console: Console,
    *,
    budget_factor: float,
    baseline_wall: float | None,
    timeout_factor: float,
    timeout_constant: float,
    own_modules: list[str],
    sources: dict[str, str],
) -> Exploration:
    """Run the explored runs the budget allows on ``pool``; what they did, as an ``Exploration``
    (``sources``: each source file's path in the copy -> its path relative to the target)."""
    real_sources = {os.path.realpath(path): relative for path, relative in sources.items()}
    pool.wait_ready()  # after a cached baseline the workers are starting: their start is no run's
    started = time.monotonic()
    found = scripts(baseline.faults, baseline.passing)
    planned = list(candidates(found, baseline.duration, breadth_of(baseline.coverage)))
    # the baseline's time: the wall time its measured batches took (coverage included), or the
    # suite's summed test time when that was not measured (a baseline stored by an older run)
    baseline_time = baseline_wall or sum(baseline.duration(test) for test in baseline.passing)
    budget = Budget(budget_factor * baseline_time * pool.size * HEADROOM)
    planned = _long_runs_first(planned, baseline.duration, budget.seconds)
    plain = _lines_of(baseline, {c.test for c in planned})
    records = aux / "explore"
    records.mkdir(parents=True, exist_ok=True)
    runs: list[ExploredRun] = []
    waiting: Iterator[Candidate] = iter(planned)
    numbered = [0]
    # A stall's real cost is the client's read timeout, unknown until one stall has run: the
    # allowance stands in until then, and a stall that does not fit under the allowance while
    # another stall is still running waits for that one's measured cost instead of being dropped.
    stall = _StallCost()

    def next_job() -> Job | None:
        for candidate in itertools.chain(stall.retry(), waiting):
            duration = baseline.duration(candidate.test)
            expected = _expected(candidate, duration, stall.measured)
            if candidate.fault.kind == STALL and not budget.fits(expected) and stall.defer(candidate):
                continue  # not left out yet: tried again once a stall is measured
            if not budget.take(expected):
                progress.advance(Status.PENDING)
                continue
            if candidate.fault.kind == STALL:
                stall.in_flight += 1
            numbered[0] += 1
            path = records / f"run-{numbered[0]}.json"
            path.unlink(missing_ok=True)
            limit = time_limit(duration, timeout_factor, timeout_constant) + candidate.extra
            order = json.dumps({"fault": candidate.fault.to_json(), "record": str(path)})
            spec = JobSpec.plain([candidate.test], limit, measure_baseline=True).but(explore=order)
            return Job(f"explore:{numbered[0]}", spec, watchdog=limit + 5.0, data=(candidate, expected, path))
        return None

    def on_result(job: Job, result: JobResult) -> list[Job] | None:
        candidate, expected, path = job.data
        budget.settle(expected, result.elapsed)
        if candidate.fault.kind == STALL:
            stall.measure(result.elapsed - baseline.duration(candidate.test) - FORK_COST)
        try:
            record = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            record = None
        runs.append(_run_of(candidate, result, record, plain.get(candidate.test, {}), real_sources))
        progress.advance(Status.PENDING)
        following = next_job()
        return [following] if following is not None else None

    with RunProgress(console, len(planned), "fault exploration", show_counts=False) as progress:
        first = [job for job in (next_job() for _ in range(pool.size)) if job is not None]
        if first:
            pool.run(first, on_result)
    return Exploration(
        runs=runs,
        baseline_time=baseline_time,
        budget=budget.seconds,
        spent=budget.spent,
        left_out=budget.left_out,
        wall=time.monotonic() - started,
        own_modules=own_modules,
    )
