"""A full-matrix mutant split across idle workers: how its tests are cut, and how the parts' results
merge into the one verdict a single job would give (``orchestration/split.py``)."""

from __future__ import annotations

from collections import deque
from pathlib import Path
from types import SimpleNamespace

from mutagent.engine.messages import CodeSwap, JobResult, JobSpec, TestRecord
from mutagent.engine.orchestration.plan import Plan
from mutagent.engine.orchestration.pool import Job, Pool
from mutagent.engine.orchestration.split import (
    MIN_PART_SECONDS,
    Part,
    classify_parts,
    part_specs,
    partition,
    splittable,
)
from mutagent.engine.verdict import classify, time_limit
from mutagent.model import Location, Mutant, Status, TextPatch

DURATIONS = {"t::a": 0.3, "t::b": 0.3, "t::c": 0.3, "t::d": 0.3, "t::slow": 1.2, "t::tiny": 0.01}


def duration(nodeid: str) -> float:
    return DURATIONS[nodeid]


def _plan(covering: list[str]) -> Plan:
    location = Location(1, 0, 1, 1)
    mutant = Mutant("m", "op", "a.py", (), location, "a", "b", "a -> b", TextPatch(0, 1, "b"))
    return Plan(mutant, None, covering, "fp", timeout=9.9)  # type: ignore[arg-type]


def _record(nodeid: str, outcome: str = "passed", message: str = "") -> TestRecord:
    return TestRecord(nodeid, outcome, DURATIONS.get(nodeid, 0.1), message)


def test_parts_are_contiguous_balanced_slices_in_the_covering_order() -> None:
    tests = ["t::a", "t::b", "t::c", "t::d"]
    assert partition(tests, duration, 2) == [["t::a", "t::b"], ["t::c", "t::d"]]
    parts = partition(["t::slow", "t::a", "t::b", "t::c", "t::d"], duration, 2)
    assert parts == [["t::slow"], ["t::a", "t::b", "t::c", "t::d"]]
    assert [t for part in partition(tests, duration, 3) for t in part] == tests  # order kept
    assert all(partition(tests, duration, 3))  # never an empty part


def test_no_split_when_tests_are_too_few_or_too_short() -> None:
    assert partition(["t::a"], duration, 2) == [["t::a"]]
    assert partition(["t::tiny", "t::tiny"], duration, 2) == [["t::tiny", "t::tiny"]]
    assert 0.02 < MIN_PART_SECONDS
    assert len(partition(["t::a", "t::b", "t::c", "t::d"], duration, 8)) == 4  # at most one part per test


def test_each_part_gets_its_own_time_limit_and_its_tests_budgets() -> None:
    spec = JobSpec(("t::slow", "t::a", "t::b"), 9.9, budgets={"t::slow": 5.0, "t::a": 2.0, "t::b": 2.0})
    (first, one), (second, two) = part_specs(spec, [["t::slow"], ["t::a", "t::b"]], duration, 2.0, 1.0)
    assert (first.index, first.of, second.index) == (0, 2, 1)
    assert one.tests == ("t::slow",) and dict(one.budgets or {}) == {"t::slow": 5.0}
    assert two.tests == ("t::a", "t::b") and dict(two.budgets or {}) == {"t::a": 2.0, "t::b": 2.0}
    assert one.timeout == first.timeout == time_limit(1.2, 2.0, 1.0)
    assert two.timeout == time_limit(0.6, 2.0, 1.0)


def test_only_full_matrix_code_swap_jobs_split() -> None:
    swap = (CodeSwap(("a.py", "f", 1), b""),)
    assert splittable(JobSpec(("t::a", "t::b"), 1.0, swap=swap))
    assert not splittable(
        JobSpec(("t::a", "t::b"), 1.0, fast=True, swap=swap)
    )  # tests depend on earlier ones
    assert not splittable(JobSpec(("t::a", "t::b"), 1.0, swap=None))  # fresh import: one process per job
    assert not splittable(JobSpec(("t::a",), 1.0, swap=swap))


def test_merged_parts_give_the_verdict_of_one_job() -> None:
    covering = ["t::a", "t::b", "t::c", "t::d"]
    plan = _plan(covering)
    first = JobResult.done([_record("t::a"), _record("t::b", "failed", "boom")]).but(elapsed=0.7, cpu=0.5)
    second = JobResult.done([_record("t::c"), _record("t::d", "failed", "bang")]).but(elapsed=0.8, cpu=0.6)
    parts = [(Part(1, 2, 2.0), second), (Part(0, 2, 2.0), first)]  # in the order they finished
    merged, _ = classify_parts(plan, parts)
    whole = classify(plan, JobResult.done([*first.tests, *second.tests]).but(elapsed=1.5))
    assert merged.status is whole.status is Status.KILLED
    assert merged.killed_by == whole.killed_by == ["t::b", "t::d"]
    assert merged.tests_run == whole.tests_run == covering
    assert merged.status_reason == whole.status_reason  # the first killer in the covering order
    assert merged.duration == 1.5  # the time spent on the mutant, over its parts


def test_survivors_only_when_every_part_passed() -> None:
    plan = _plan(["t::a", "t::b"])
    parts = [
        (Part(0, 2, 2.0), JobResult.done([_record("t::a")])),
        (Part(1, 2, 2.0), JobResult.done([_record("t::b")])),
    ]
    result, _ = classify_parts(plan, parts)
    assert result.status is Status.SURVIVED
    assert result.status_reason == "2 covering tests passed"


def test_a_timeout_in_any_part_wins_with_that_parts_limit() -> None:
    plan = _plan(["t::a", "t::b", "t::c", "t::d"])
    killed = JobResult.done([_record("t::a", "failed", "boom"), _record("t::b")])
    hung = JobResult.timed_out([_record("t::c")], "t::d", "no result within 1.6s")
    result, merged = classify_parts(plan, [(Part(0, 2, 2.2), killed), (Part(1, 2, 1.6), hung)])
    assert result.status is Status.TIMEOUT
    assert result.killed_by == ["t::a"]  # it ran and failed: honest, as in one job
    assert result.tests_run == ["t::a", "t::b", "t::c", "t::d"]
    assert result.status_reason == "timed out after 1.6s while running t::d (4 of 4 selected tests ran)"
    assert merged.status.value == "timeout"


def test_the_first_abnormal_part_in_test_order_decides() -> None:
    plan = _plan(["t::a", "t::b", "t::c", "t::d"])
    crashed = JobResult.crashed([], "t::a", "the mutant's test process was killed by SIGSEGV")
    hung = JobResult.timed_out([_record("t::c")], "t::d", "no result within 1.6s")
    result, _ = classify_parts(plan, [(Part(1, 2, 1.6), hung), (Part(0, 2, 2.2), crashed)])
    assert result.status is Status.RUNTIME_ERROR  # never a kill
    assert result.killed_by == []
    assert result.tests_run == ["t::a", "t::c", "t::d"]  # the hung part's running test ran too
    assert result.status_reason == "the test process crashed while running t::a (3 of 4 selected tests ran)"


def test_a_part_lost_with_its_worker_is_a_runtime_error() -> None:
    plan = _plan(["t::a", "t::b"])
    parts = [
        (Part(0, 2, 2.0), JobResult.done([_record("t::a", "failed", "boom")])),
        (Part(1, 2, 2.0), JobResult.worker_died("m#1", "the worker process died twice")),
    ]
    result, _ = classify_parts(plan, parts)
    assert result.status is Status.RUNTIME_ERROR
    assert result.error == "the worker process died twice"


def test_the_pool_splits_only_for_idle_workers_with_nothing_else_to_take(tmp_path: Path) -> None:
    pool = Pool(4, [], tmp_path, {}, tmp_path)
    states = ("idle", "idle", "busy", "dead")
    pool.workers = [SimpleNamespace(state=state) for state in states]  # type: ignore[misc]
    taker = pool.workers[0]
    asked: list[int] = []

    def split(job: Job, ways: int) -> list[Job]:
        asked.append(ways)
        return [Job(f"{job.id}#{i}", job.spec, 1.0) for i in range(ways)]

    spec = JobSpec(("t::a", "t::b"), 1.0)
    queue: deque[Job] = deque([Job("next", spec, 1.0)])
    assert pool._split(taker, Job("m", spec, 1.0), queue, split).id == "m"  # the idle one takes "next"
    assert asked == []
    queue.clear()
    taken = pool._split(taker, Job("m", spec, 1.0), queue, split)
    assert asked == [2] and taken.id == "m#0"  # the busy and the dead worker do not count
    assert [job.id for job in queue] == ["m#1"]  # for the other idle worker, in this same round
    pool.workers[1].state = "busy"
    assert pool._split(taker, Job("m", spec, 1.0), deque(), split).id == "m"  # nobody idle to help


def test_ranked_follow_ups_take_their_place_among_the_waiting_jobs(tmp_path: Path) -> None:
    pool = Pool(2, [], tmp_path, {}, tmp_path)
    spec = JobSpec(("t::a",), 1.0)
    queue: deque[Job] = deque([Job("x", spec, 1.0, rank=(0, 9.0)), Job("y", spec, 1.0, rank=(0, 2.0))])
    pool._enqueue(queue, [Job("follow", spec, 1.0)])
    assert [job.id for job in queue] == ["follow", "x", "y"]  # unranked: next in line
    queue.popleft()
    pool.by_rank = True
    pool._enqueue(queue, [Job("long", spec, 1.0, rank=(0, 5.0)), Job("tie", spec, 1.0, rank=(0, 2.0))])
    assert [job.id for job in queue] == ["x", "long", "y", "tie"]  # after equals: arrival order kept
