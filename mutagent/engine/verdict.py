"""From a worker's report to a :class:`~mutagent.model.MutantResult`.

The one rule that keeps the score honest lives here: only a test that pytest itself reported as
failed kills a mutant. A child that died without reporting, an exception escaping pytest or a
lost worker is a RuntimeError, whatever else happened before it.

A timeout or a crash also ends the run of that mutant's remaining tests; ``tests_run`` then lists
exactly the tests that ran (the one running when it ended included) and the status reason says
how many of the selected tests that was, so a report never reads a test that never ran as one
that ran and passed.
"""

from __future__ import annotations

from typing import Any

from mutagent.engine.orchestration.plan import Plan
from mutagent.model import MutantResult, Status


def classify(plan: Plan, result: dict[str, Any]) -> MutantResult:
    """Turn a worker's report into a result. Only a test that pytest reported as failed is a kill;
    a child that died, a harness exception or a lost worker is a RuntimeError."""
    tests = result.get("tests", [])
    killers = [t for t in tests if t["outcome"] == "failed"]
    status_name = result["status"]
    mutant_result = MutantResult(
        mutant_id=plan.mutant.id,
        status=Status.RUNTIME_ERROR,
        killed_by=[t["nodeid"] for t in killers],
        covered_by=list(plan.covering),
        tests_run=[t["nodeid"] for t in tests],
        duration=float(result.get("elapsed", 0.0)),
    )
    if status_name == "done":
        if killers:
            mutant_result.status = Status.KILLED
            first = killers[0]
            mutant_result.status_reason = f"{first['nodeid']}: {first.get('message') or 'failed'}"
        else:
            mutant_result.status = Status.SURVIVED
            mutant_result.status_reason = f"{len(tests)} covering tests passed"
    elif status_name == "timeout":
        mutant_result.status = Status.TIMEOUT
        running = result.get("running")
        if running and running not in mutant_result.tests_run:
            mutant_result.tests_run.append(running)
        if result.get("overran") or result.get("mode") == "fallback":  # the worker's own words
            mutant_result.status_reason = f"timed out: {result.get('detail')}" + (
                f" while running {running}" if running and not result.get("overran") else ""
            )
        else:
            mutant_result.status_reason = f"timed out after {plan.timeout:.1f}s" + (
                f" while running {running}" if running else ""
            )
    else:
        running = result.get("running")
        if running and running not in mutant_result.tests_run:
            mutant_result.tests_run.append(running)  # it started: its outcome is what is unknown
        mutant_result.error = str(result.get("detail") or status_name)
        mutant_result.status_reason = (
            "the test process crashed"
            if status_name == "crash"
            else "the worker process died"
            if status_name == "worker_died"
            else "harness error"
        ) + (f" while running {running}" if running else "")
    if status_name != "done":
        # a timeout or a crash ends the mutant's process: the tests after it never ran, and the
        # kill matrix must not read them as run-and-passed (tests_run lists only those that ran)
        ran, selected = len(mutant_result.tests_run), len(plan.covering)
        mutant_result.status_reason += f" ({ran} of {selected} selected tests ran)"
    if result.get("mode") == "fallback" and result.get("fallback_reason"):
        mutant_result.status_reason = (
            f"{mutant_result.status_reason} [fresh import: {result['fallback_reason']}]"
        )
    return mutant_result
