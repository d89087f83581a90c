"""Per-test CPU budgets, and what a timeout or a crash leaves in ``tests_run``.

A mutant that spins in the first of many covering tests is stopped once that test has burnt its
own allowance of CPU, long before the job's wall-clock budget for all its tests; a test that only
waits longer (sleeps) under a mutant keeps the job's budget and still gets to fail, so its kill is
reported as a kill. Whatever stops a mutant's process early, ``tests_run`` lists exactly the tests
that ran, and the status reason says how many of the selected ones that was.
"""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console
from testkit.engine_targets import HandMutant, HandMutants, write_target

from mutagent.config import EngineConfig
from mutagent.engine.messages import JobResult
from mutagent.engine.orchestration.baseline import Baseline
from mutagent.engine.orchestration.plan import FORK_ALLOWANCE, Plan, Planner
from mutagent.engine.orchestration.runner import Engine
from mutagent.engine.selection.imports import ImportGraph
from mutagent.engine.verdict import classify
from mutagent.model import Location, Mutant, Status, TextPatch
from mutagent.store import load_run_data

COUNT_TESTS = "".join(
    f"\n\ndef test_count_{i}():\n    time.sleep(0.3)\n    assert count(3) == 3\n" for i in range(12)
)
PAUSE_TESTS = "".join(
    f"\n\ndef test_pause_{i}():\n    time.sleep(0.3)\n    assert pause({i}) == 'done'\n" for i in range(8)
)
TARGET = {
    "calc/__init__.py": "",
    "calc/core.py": """
        import time


        def count(n):
            total = 0
            for _ in range(n):
                total += 1
            return total


        def pause(x):
            time.sleep(0.1)
            return "done"
    """,
    "tests/test_count.py": "import time\n\nfrom calc.core import count" + COUNT_TESTS,
    "tests/test_pause.py": "import time\n\nfrom calc.core import pause" + PAUSE_TESTS,
}


def test_a_spinning_test_is_stopped_by_its_cpu_budget_and_a_waiting_one_still_fails(tmp_path: Path) -> None:
    root = write_target(tmp_path / "project", TARGET)
    specs = [
        HandMutant("calc/core.py", "for _ in range(n):", "for _ in iter(int, 1):"),  # spins forever
        HandMutant(  # pause(0) waits 2.5 s longer, then fails: past its own budget, within the job's
            "calc/core.py",
            'time.sleep(0.1)\n    return "done"',
            'time.sleep(0.1 if x else 2.6)\n    return "done" if x else "late"',
        ),
    ]
    config = EngineConfig(root=root, workers=2, timeout_constant=1.0)
    Engine(config, Console(file=io.StringIO()), HandMutants(specs)).run()
    data = load_run_data(root)
    results = {m.replacement.split()[0]: data.result_of(m) for m in data.mutants}
    spinning, waiting = results["for"], results["time.sleep(0.1"]

    assert spinning.status is Status.TIMEOUT
    assert "of CPU, over its" in (spinning.status_reason or "")  # not the 12-test wall budget
    assert len(spinning.tests_run) == 1 and len(spinning.covered_by) == 12
    assert "(1 of 12 selected tests ran)" in (spinning.status_reason or "")

    assert waiting.status is Status.KILLED  # a wall-clock per-test budget would call it a Timeout
    assert waiting.killed_by == ["tests/test_pause.py::test_pause_0"]
    assert len(waiting.tests_run) == 8


def _plan(covering: list[str]) -> Plan:
    location = Location(1, 0, 1, 1)
    mutant = Mutant("m", "op", "a.py", (), location, "a", "b", "a -> b", TextPatch(0, 1, "b"))
    return Plan(mutant, None, covering, "fp", timeout=3.0)  # type: ignore[arg-type]


def test_a_crash_lists_the_tests_that_ran_and_the_one_running() -> None:
    plan = _plan(["t::a", "t::b", "t::c"])
    record = {"nodeid": "t::a", "outcome": "passed", "duration": 0.1, "message": ""}
    result = classify(
        plan, JobResult.from_wire({"status": "crash", "tests": [record], "running": "t::b", "detail": "died"})
    )
    assert result.status is Status.RUNTIME_ERROR
    assert result.tests_run == ["t::a", "t::b"]  # t::c never ran: reports must not read it as passed
    assert result.killed_by == []
    assert "(2 of 3 selected tests ran)" in (result.status_reason or "")


def test_a_finished_run_says_nothing_about_tests_not_run() -> None:
    plan = _plan(["t::a"])
    record = {"nodeid": "t::a", "outcome": "failed", "duration": 0.1, "message": "boom"}
    result = classify(
        plan, JobResult.from_wire({"status": "done", "tests": [record], "running": None, "detail": ""})
    )
    assert result.status is Status.KILLED
    assert "selected tests ran" not in (result.status_reason or "")


def test_a_test_keeping_several_cores_busy_gets_its_cpu_time_as_budget() -> None:
    baseline = Baseline(
        tests={
            "t::busy": {"outcome": "passed", "duration": 1.0},
            "t::idle": {"outcome": "passed", "duration": 1.0},
        },
        order=["t::busy", "t::idle"],
        coverage={},
        control={"t::busy": {"outcome": "passed", "duration": 1.0, "cpu": 3.0}, "t::idle": {"cpu": 0.2}},
    )
    planner = Planner({}, {}, baseline, set(), False, 2.0, 1.0, ImportGraph({}, {}))
    assert planner.test_budget("t::busy") == 3.0 * 2.0 + 1.0 + FORK_ALLOWANCE
    assert planner.test_budget("t::idle") == 1.0 * 2.0 + 1.0 + FORK_ALLOWANCE
