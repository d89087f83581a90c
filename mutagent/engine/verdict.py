"""The verdict rules: how long a mutant may run, and what a job's result means.

Every rule that decides a mutant's status lives here, for every launcher (code swap in a forked
child, a zygote child, a new ``python -m pytest``):

* **Only a test that pytest itself reported as failed kills a mutant.** A child that died
  without reporting, an exception escaping pytest or a lost worker is a RuntimeError, whatever
  else happened before it (``classify``; ``fresh_import_end`` for the files a fresh-import run
  leaves behind).
* **Timeout means hung, not slower** (``time_limit``): a job may run ``factor`` times its tests'
  baseline time plus ``constant`` seconds plus a fixed allowance for the fork and the reporting
  (defaults 2.0 × + 1.0 s + 0.5 s; PIT uses 1.25 × + 4 s, Stryker 1.5 × + 5 s). A mutant that
  only makes its tests a little slower stays well inside that limit, runs to the end and is
  judged by its tests' outcomes; only a run that overshoots it by far is a Timeout, which counts
  as detected. The same rule gives each test its CPU budget inside a job (``cpu_budget``).
* A timeout or a crash also ends the run of that mutant's remaining tests; ``tests_run`` then
  lists exactly the tests that ran (the one running when it ended included) and the status
  reason says how many of the selected tests that was, so a report never reads a test that never
  ran as one that ran and passed.

Import-light on purpose (no libcst, no rich): ``fresh_import_end`` runs inside the workers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from mutagent.engine.messages import JobEnd, JobResult, Mode, TestRecord
from mutagent.model import MutantResult, Status

if TYPE_CHECKING:
    from mutagent.engine.orchestration.plan import Plan

FORK_ALLOWANCE = 0.5  # seconds per job for fork + code swap + reporting, on top of the tests


def time_limit(baseline_seconds: float, factor: float, constant: float) -> float:
    """Wall seconds a job whose tests took ``baseline_seconds`` unmutated may run before it is a
    Timeout: ``factor`` × the baseline + ``constant`` + the fork allowance (never less than the
    constant, so a mutant that slows a fast test down a little is not counted as detected)."""
    return baseline_seconds * factor + constant + FORK_ALLOWANCE


def cpu_budget(wall: float, cpu: float, factor: float, constant: float) -> float:
    """CPU seconds one test may burn in a mutant's process: ``time_limit`` applied to the larger
    of its baseline wall duration and its baseline CPU time (a test keeping several cores busy
    uses more CPU than wall time)."""
    return time_limit(max(wall, cpu), factor, constant)


def classify(plan: Plan, result: JobResult) -> MutantResult:
    """Turn a worker's report into a result. Only a test that pytest reported as failed is a kill;
    a child that died, a harness exception or a lost worker is a RuntimeError."""
    tests = result.tests
    killers = [t for t in tests if t.outcome == "failed"]
    mutant_result = MutantResult(
        mutant_id=plan.mutant.id,
        status=Status.RUNTIME_ERROR,
        killed_by=[t.nodeid for t in killers],
        covered_by=list(plan.covering),
        tests_run=[t.nodeid for t in tests],
        duration=result.elapsed,
    )
    running = result.running
    fresh_import = result.mode is Mode.FRESH_IMPORT
    if result.status is JobEnd.DONE:
        if killers:
            mutant_result.status = Status.KILLED
            first = killers[0]
            mutant_result.status_reason = f"{first.nodeid}: {first.message or 'failed'}"
        else:
            mutant_result.status = Status.SURVIVED
            mutant_result.status_reason = f"{len(tests)} covering tests passed"
    elif result.status is JobEnd.TIMEOUT:
        mutant_result.status = Status.TIMEOUT
        if running and running not in mutant_result.tests_run:
            mutant_result.tests_run.append(running)
        if result.overran or fresh_import:  # the worker's own words
            mutant_result.status_reason = f"timed out: {result.detail}" + (
                f" while running {running}" if running and not result.overran else ""
            )
        else:
            mutant_result.status_reason = f"timed out after {plan.timeout:.1f}s" + (
                f" while running {running}" if running else ""
            )
    else:
        if running and running not in mutant_result.tests_run:
            mutant_result.tests_run.append(running)  # it started: its outcome is what is unknown
        mutant_result.error = result.detail or result.status.value
        mutant_result.status_reason = (
            "the test process crashed"
            if result.status is JobEnd.CRASH
            else "the worker process died"
            if result.status is JobEnd.WORKER_DIED
            else "harness error"
        ) + (f" while running {running}" if running else "")
    if result.status is not JobEnd.DONE:
        # a timeout or a crash ends the mutant's process: the tests after it never ran, and the
        # kill matrix must not read them as run-and-passed (tests_run lists only those that ran)
        ran, selected = len(mutant_result.tests_run), len(plan.covering)
        mutant_result.status_reason += f" ({ran} of {selected} selected tests ran)"
    if fresh_import and result.fresh_import_reason:
        mutant_result.status_reason = (
            f"{mutant_result.status_reason} [fresh import: {result.fresh_import_reason}]"
        )
    return mutant_result


def fresh_import_end(
    report: Mapping[str, Any] | None,
    done: list[TestRecord],
    running: str | None,
    how: str,
    pytest_failure: bool,
    selected: list[str],
    log_tail: Callable[[], str],
) -> JobResult:
    """A finished (not timed-out) fresh-import run's result: ``report`` is what its plugin wrote
    (``None``: nothing), ``done``/``running`` its progress lines, ``how`` the way the process
    ended and ``pytest_failure`` whether pytest itself exited with a failure code (1-4)."""
    if report is None:
        return JobResult.crashed(
            done, running, f"fresh-import test process {how} without reporting\n" + log_tail()
        )
    if report.get("partial") and report.get("import_error"):
        if not pytest_failure:  # pytest did not end by reporting the failure: a crash
            return JobResult.crashed(
                done,
                running,
                f"fresh-import test process {how} after the mutated module failed to import\n"
                + report["import_error"],
            )
        # importing the mutated module raised and pytest stopped before running anything
        # (a conftest imports the target): every selected test fails to even load
        last = report["import_error"].strip().splitlines()[-1]
        return JobResult.done(
            [
                TestRecord(nodeid, "failed", 0.0, f"import: {last}", report["import_error"])
                for nodeid in selected
            ]
        )
    if report.get("harness_error"):
        return JobResult.harness_error(report["harness_error"])
    tests = [TestRecord.from_wire(t) for t in report.get("tests", [])]
    if not report.get("loaded"):
        return JobResult.harness_error("the selected tests never imported the mutated module", tests)
    return JobResult.done(tests)
