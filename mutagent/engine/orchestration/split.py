"""A full-matrix mutant's tests split across idle workers, and the parts merged into one verdict.

In the full kill matrix (not ``--fast``) every covering test of a mutant runs whatever the others
do, so its job is a list of independent runs: when fewer jobs wait than there are workers (the
run's tail, or a re-run with one new mutant) the pool asks for a job in parts, each a contiguous
slice of the covering tests in their order, balanced by baseline duration, run by different
workers. Each part has its own time limit and CPU budgets from the same verdict rule
(``verdict.time_limit`` of its own tests' baseline time), so a part is judged exactly as a job of
those tests would be.

Merging keeps the verdict rules of one job (``merge_parts``):

* the tests that finished, in the covering order (part after part): only a test pytest reported
  as failed is a kill, as in one job;
* the first part (in test order) that did not end normally decides the end: a Timeout or a
  RuntimeError there ends the mutant as it would have ended one job that reached it, with that
  part's running test, detail and time limit; the tests other parts finished are listed too
  (they ran), and a test another abnormal part left running is added to ``tests_run``;
* ``duration`` (and the CPU) is the sum over the parts: the time spent on the mutant.

What a split cannot reproduce: in one job the tests share one process, so a test could see what
an earlier test of the same mutant left behind; in parts, each slice starts from the warm
worker's clean state. The baseline's control run has checked each test alone, so a part is a
configuration every one of its tests is known to pass in unmutated. ``--fast`` jobs (the first
failing test stops them, so their tests depend on each other) and fresh-import jobs (one new
import per job) are never split.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mutagent.engine.messages import JobEnd, JobResult, JobSpec
from mutagent.engine.verdict import classify, time_limit
from mutagent.model import MutantResult

if TYPE_CHECKING:
    from mutagent.engine.orchestration.plan import Plan

MIN_PART_SECONDS = 0.1  # baseline test time below which a part does not pay for its fork and report


def partition(tests: Sequence[str], duration: Callable[[str], float], ways: int) -> list[list[str]]:
    """``tests`` cut into at most ``ways`` contiguous slices of about equal baseline time (each
    non-empty, the order kept); fewer when the tests are too few or too short to be worth it."""
    total = sum(duration(t) for t in tests)
    ways = min(ways, len(tests), int(total / MIN_PART_SECONDS))
    if ways < 2:
        return [list(tests)]
    parts: list[list[str]] = [[]]
    done = 0.0
    for position, test in enumerate(tests):
        left_tests = len(tests) - position
        left_parts = ways - len(parts)
        # close the current part once it holds its share, or when each later part needs a test
        if parts[-1] and left_parts > 0 and (done >= total * len(parts) / ways or left_tests <= left_parts):
            parts.append([])
        parts[-1].append(test)
        done += duration(test)
    return parts


@dataclass(frozen=True)
class Part:
    """One slice of a split mutant job (what stays with the engine beside the part's job)."""

    index: int
    of: int
    timeout: float  # the part's own time limit (``verdict.time_limit`` of its tests)


def part_specs(
    spec: JobSpec, parts: list[list[str]], duration: Callable[[str], float], factor: float, constant: float
) -> list[tuple[Part, JobSpec]]:
    """One job spec per slice: its tests, its time limit and its tests' CPU budgets."""
    specs = []
    for index, tests in enumerate(parts):
        timeout = time_limit(sum(duration(t) for t in tests), factor, constant)
        budgets = None if spec.budgets is None else {t: spec.budgets[t] for t in tests}
        specs.append(
            (Part(index, len(parts), timeout), spec.but(tests=tuple(tests), timeout=timeout, budgets=budgets))
        )
    return specs


def splittable(spec: JobSpec) -> bool:
    """Only full-matrix code-swap jobs: ``--fast`` tests depend on the ones before them, and a
    fresh import is one new process per job."""
    return not spec.fast and not spec.needs_fresh_import and not spec.measure_baseline and len(spec.tests) > 1


def merge_parts(results: Sequence[tuple[Part, JobResult]]) -> tuple[JobResult, Part, list[str]]:
    """The parts' results as one job's: the merged result, the part that decided how it ended
    (the first abnormal one in test order, else the first) and the tests other abnormal parts
    left running."""
    ordered = sorted(results, key=lambda pair: pair[0].index)
    abnormal = [(part, result) for part, result in ordered if result.status is not JobEnd.DONE]
    deciding_part, deciding = abnormal[0] if abnormal else ordered[0]
    also_running = [r.running for _, r in abnormal[1:] if r.running]
    merged = dataclasses.replace(
        deciding,
        tests=tuple(t for _, r in ordered for t in r.tests),
        elapsed=sum(r.elapsed for _, r in ordered),
        cpu=sum(r.cpu for _, r in ordered),
        baseline=None,
        warm=None,
    )
    return merged, deciding_part, also_running


def classify_parts(plan: Plan, results: Sequence[tuple[Part, JobResult]]) -> tuple[MutantResult, JobResult]:
    """The mutant's result from its parts (``verdict.classify`` on the merged result, with the
    deciding part's time limit), and the merged job result (for the run's numbers)."""
    merged, part, also_running = merge_parts(results)
    judged = classify(dataclasses.replace(plan, timeout=part.timeout), merged)
    extra = [t for t in also_running if t not in judged.tests_run]
    position = {nodeid: i for i, nodeid in enumerate(plan.covering)}
    judged.tests_run = sorted([*judged.tests_run, *extra], key=lambda t: position.get(t, len(position)))
    if extra:
        ran, selected = len(judged.tests_run), len(judged.covered_by)
        reason = judged.status_reason or ""
        cut = reason.rfind(" (")
        if cut >= 0 and reason.endswith("selected tests ran)"):
            judged.status_reason = f"{reason[:cut]} ({ran} of {selected} selected tests ran)"
    return judged, merged
