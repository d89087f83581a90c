"""The zygote's trust check: are the tests that judge fresh-import mutants green in a zygote child?

A zygote imports the suite's third-party modules *before* the target's conftest runs, where a
plain ``python -m pytest`` imports them from inside it. A suite whose setup depends on that order
(a conftest setting an environment variable a library reads at import, say) could fail in a
zygote child without any mutant, and every such failure would be a false kill. So before the
first fresh-import mutant of a run, every test those mutants select that was never checked runs
once, unmutated, in a zygote child. Outcomes are stored with the baseline, so a re-run checks
only tests it never checked. A mutant judged by any test not green there runs in a new
``python -m pytest`` process instead, exactly as without the zygote.
"""

from __future__ import annotations

from collections.abc import Callable

from mutagent.engine.messages import FreshImportSource, JobEnd, JobResult, JobSpec, Launcher
from mutagent.engine.orchestration.baseline import Baseline
from mutagent.engine.orchestration.pool import Job

CONTROL_ID = "zygote-control"
AFFINITY = "zygote"  # the worker whose zygote is warm keeps getting the fresh-import jobs


def tests_to_check(baseline: Baseline, jobs: list[Job]) -> list[str]:
    """Tests the fresh-import jobs select that no control run checked yet, in collection order."""
    needed = {nodeid for job in jobs for nodeid in job.spec.tests}
    return [nodeid for nodeid in baseline.order if nodeid in needed and nodeid not in baseline.zygote_control]


def control_job(tests: list[str], timeout: float, allowance: float) -> Job:
    """One fresh-import job with nothing mutated (``control``) that must run in the zygote."""
    spec = JobSpec(
        tests=tuple(tests),
        timeout=timeout,
        budgets=None,
        swap=None,
        fresh_import=FreshImportSource("", "", "", control=True),
        fresh_import_timeout=timeout + allowance,
        fresh_import_reason="zygote control run",
        launcher=Launcher.ZYGOTE,
    )
    return Job(CONTROL_ID, spec, watchdog=timeout + 2 * allowance, affinity=AFFINITY)


def record(baseline: Baseline, tests: list[str], result: JobResult) -> str | None:
    """Store each checked test's outcome in ``baseline``; returns why the zygote cannot be
    trusted at all in this run (it did not start, the control run crashed...), else ``None``."""
    if result.status is not JobEnd.DONE or result.launcher is not Launcher.ZYGOTE:
        lines = str(result.detail or result.status.value).strip().splitlines()
        return lines[-1] if lines else result.status.value
    reported = {t.nodeid: t for t in result.tests}
    for nodeid in tests:
        record = reported.get(nodeid)
        baseline.zygote_control[nodeid] = {
            "outcome": record.outcome if record else "not run",
            "message": record.message if record else "",
        }
    return None


def untrusted(baseline: Baseline) -> set[str]:
    """Tests whose unmutated outcome in a zygote child was not a pass."""
    return {n for n, info in baseline.zygote_control.items() if info.get("outcome") != "passed"}


def assign_launchers(jobs: list[Job], bad: set[str], zygote: bool) -> int:
    """Set each fresh-import job's launcher; returns how many must use a new process."""
    fresh = 0
    for job in jobs:
        use_zygote = zygote and not (set(job.spec.tests) & bad)
        job.spec = job.spec.but(launcher=Launcher.ZYGOTE if use_zygote else Launcher.FRESH_PROCESS)
        job.affinity = AFFINITY if use_zygote else None
        fresh += 0 if use_zygote else 1
    return fresh


def control_for(
    baseline: Baseline | None,
    jobs: list[Job],
    enabled: bool,
    timeout_of: Callable[[list[str]], float],
    allowance: float,
) -> Job | None:
    """The control job the fresh-import ``jobs`` must wait for; ``None`` when there is nothing to
    check (then ``settle`` them at once), or when the zygote is off (then they are settled here)."""
    if not jobs or baseline is None or not enabled:
        assign_launchers(jobs, set(), zygote=False)
        return None
    unchecked = tests_to_check(baseline, jobs)
    return control_job(unchecked, timeout_of(unchecked), allowance) if unchecked else None


def settle(baseline: Baseline, jobs: list[Job], checked: list[str], result: JobResult | None) -> str | None:
    """Record the control ``result`` for the ``checked`` tests (if any) and set every job's
    launcher; returns a warning for the user, if one is due."""
    if result is not None:
        problem = record(baseline, checked, result)
        if problem:
            assign_launchers(jobs, set(), zygote=False)
            return f"fresh imports run as new processes (slower): zygote control run failed: {problem}"
    bad = untrusted(baseline)
    if assign_launchers(jobs, bad, zygote=True):
        shown = ", ".join(sorted(bad)[:3]) + (f" and {len(bad) - 3} more" if len(bad) > 3 else "")
        return (
            f"{len(bad)} tests do not pass unmutated in the fresh-import zygote ({shown}); "
            "the mutants they judge run in new processes instead"
        )
    return None
