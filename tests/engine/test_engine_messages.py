"""The typed messages and each side of the engine <-> worker <-> child boundaries, against fake peers.

The engine's ``Pool`` talks to a fake worker (a few lines of Python speaking the protocol), the
worker's ``_watch_child`` to a fake forked child, and the verdict rules get the results those
peers produce: no target, no pytest run inside.
"""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest

from mutagent.engine.harness.worker import Worker
from mutagent.engine.messages import (
    CodeSwap,
    FreshImportSource,
    JobEnd,
    JobResult,
    JobSpec,
    Launcher,
    Mode,
    TestRecord,
    WorkerConfig,
)
from mutagent.engine.orchestration.pool import Job, Pool
from mutagent.engine.protocol import send
from mutagent.engine.verdict import FORK_ALLOWANCE, classify, fresh_import_end, time_limit
from mutagent.model import Status

# --- the messages ---------------------------------------------------------------------------


def test_a_job_spec_survives_the_wire() -> None:
    spec = JobSpec(
        tests=("t::a", "t::b"),
        timeout=3.5,
        fast=True,
        budgets={"t::a": 1.0, "t::b": 2.0},
        swap=None,
        fresh_import=FreshImportSource("pkg.mod", "/copy/pkg/mod.py", "X = 2\n"),
        fresh_import_timeout=9.0,
        fresh_import_reason="runs at import time",
        launcher=Launcher.FRESH_PROCESS,
    )
    wire = spec.to_wire("m1")
    assert wire["type"] == "job" and wire["id"] == "m1"
    assert JobSpec.from_wire(wire) == spec
    swapped = JobSpec(("t::a",), 1.0, swap=(CodeSwap(("pkg/mod.py", "f", 3), b"\x00code"),))
    assert JobSpec.from_wire(swapped.to_wire("m2")) == swapped
    assert not swapped.needs_fresh_import and spec.needs_fresh_import


def test_the_worker_configuration_survives_its_json_file() -> None:
    config = WorkerConfig(
        targets={"/w/copy/pkg/mod.py": "pkg/mod.py"},
        modules={"pkg.mod": "/w/copy/pkg/mod.py"},
        aux="/w/aux",
        root="/w/copy",
        fresh_import_args=("tests", "-p", "no:cacheprovider"),
        warm="/w/aux/warm.json",
        measure=True,
    )
    assert WorkerConfig.from_json(config.to_json()) == config


def test_a_job_result_survives_the_wire_and_unknown_values_fail_loudly() -> None:
    result = JobResult.timed_out(
        [TestRecord("t::a", "passed", 0.1)], "t::b", "t::b used 3.0s of CPU", overran="t::b"
    ).but(job_id="m1", mode=Mode.SWAP, elapsed=1.5, cpu=1.2, baseline={"lines": {}})
    back = JobResult.from_wire(result.to_wire())
    assert back == result and back.baseline == {"lines": {}}
    with pytest.raises(ValueError):
        JobResult.from_wire({**result.to_wire(), "status": "killed"})  # not a way a job ends


# --- the verdict rules ------------------------------------------------------------------------


def _plan(covering: list[str], timeout: float = 4.0) -> SimpleNamespace:
    return SimpleNamespace(mutant=SimpleNamespace(id="m1"), covering=covering, timeout=timeout)


def test_only_a_failed_test_kills_and_a_crash_is_a_runtime_error() -> None:
    failed = JobResult.done([TestRecord("t::a", "passed"), TestRecord("t::b", "failed", message="boom")])
    killed = classify(_plan(["t::a", "t::b"]), failed)  # type: ignore[arg-type]
    assert killed.status is Status.KILLED and killed.killed_by == ["t::b"]
    assert killed.status_reason == "t::b: boom"
    crashed = classify(_plan(["t::a", "t::b"]), JobResult.crashed([], "t::a", "exited"))  # type: ignore[arg-type]
    assert crashed.status is Status.RUNTIME_ERROR and crashed.killed_by == []
    assert crashed.status_reason == "the test process crashed while running t::a (1 of 2 selected tests ran)"
    lost = classify(_plan(["t::a"]), JobResult.worker_died("m1", "the worker died twice"))  # type: ignore[arg-type]
    assert lost.status is Status.RUNTIME_ERROR and lost.status_reason is not None
    assert lost.status_reason.startswith("the worker process died")


def test_a_fresh_import_says_why_it_was_one() -> None:
    result = JobResult.done([TestRecord("t::a", "passed")]).but(
        mode=Mode.FRESH_IMPORT, fresh_import_reason="runs at import time"
    )
    survived = classify(_plan(["t::a"]), result)  # type: ignore[arg-type]
    assert survived.status is Status.SURVIVED
    assert survived.status_reason == "1 covering tests passed [fresh import: runs at import time]"


def test_timeout_means_hung_not_slower() -> None:
    """A mutant that makes its tests a little slower stays inside the limit; only one that takes
    far longer (the default factor 2 + 1 s) is a Timeout, which counts as detected."""
    factor, constant = 2.0, 1.0
    for baseline in (0.01, 0.5, 3.0, 30.0):
        limit = time_limit(baseline, factor, constant)
        assert limit == baseline * factor + constant + FORK_ALLOWANCE
        assert baseline * 1.5 + 0.5 < limit  # 50 % slower plus half a second: not a timeout
    assert time_limit(0.0, factor, constant) >= constant  # a fast test never gets a hair trigger


def test_a_fresh_import_that_died_without_reporting_is_a_crash() -> None:
    done = [TestRecord("t::a", "passed")]
    result = fresh_import_end(
        None, done, "t::b", "killed by signal SIGKILL", False, ["t::a", "t::b"], lambda: "log"
    )
    assert result.status is JobEnd.CRASH and result.tests == tuple(done) and result.running == "t::b"
    assert "killed by signal SIGKILL without reporting" in result.detail


def test_a_mutated_module_that_fails_to_import_fails_every_selected_test_only_if_pytest_said_so() -> None:
    report = {"partial": True, "import_error": "Traceback\nNameError: x"}
    failed = fresh_import_end(report, [], None, "exited with code 2", True, ["t::a", "t::b"], lambda: "")
    assert failed.status is JobEnd.DONE
    assert [(t.nodeid, t.outcome, t.message) for t in failed.tests] == [
        ("t::a", "failed", "import: NameError: x"),
        ("t::b", "failed", "import: NameError: x"),
    ]
    died = fresh_import_end(report, [], None, "killed by signal SIGSEGV", False, ["t::a"], lambda: "")
    assert died.status is JobEnd.CRASH


def test_a_fresh_import_that_never_loaded_the_mutant_is_a_harness_error() -> None:
    report = {"loaded": False, "tests": [{"nodeid": "t::a", "outcome": "passed"}]}
    result = fresh_import_end(report, [], None, "exited with code 0", False, ["t::a"], lambda: "")
    assert result.status is JobEnd.ERROR and [t.nodeid for t in result.tests] == ["t::a"]
    loaded = fresh_import_end(
        {**report, "loaded": True}, [], None, "exited with code 0", False, ["t::a"], str
    )
    assert loaded.status is JobEnd.DONE


# --- the engine's pool against a fake worker ------------------------------------------------

FAKE_WORKER = textwrap.dedent(
    """
    import os, sys
    from mutagent.engine.messages import JobResult, JobSpec, Mode, TestRecord
    from mutagent.engine.protocol import recv, send

    in_fd, out_fd = (int(fd) for fd in os.environ["MUTAGENT_WORKER_FDS"].split(","))
    send(out_fd, {"type": "ready", "pid": os.getpid(), "collected": ["t::a", "t::die"], "cpu": 0.0})
    while True:
        message = recv(in_fd)
        if message is None or message["type"] == "stop":
            sys.exit(0)
        job = JobSpec.from_wire(message)
        if "t::die" in job.tests:
            os._exit(9)  # the worker dies mid-job, as an OOM kill would leave it
        records = [TestRecord(nodeid, "failed" if job.fast else "passed", 0.01) for nodeid in job.tests]
        result = JobResult.done(records).but(job_id=message["id"], mode=Mode.SWAP, elapsed=0.02, cpu=0.01)
        send(out_fd, result.to_wire())
    """
)


def test_the_pool_turns_a_workers_answers_and_its_death_into_typed_results(tmp_path: Path) -> None:
    pool = Pool(1, [sys.executable, "-c", FAKE_WORKER], tmp_path, dict(os.environ), tmp_path)
    jobs = [
        Job("plain", JobSpec.plain(["t::a"], 5.0), watchdog=5.0),
        Job("fast", JobSpec(("t::a",), 5.0, fast=True), watchdog=5.0),
        Job("dies", JobSpec.plain(["t::die"], 5.0), watchdog=5.0),
    ]
    seen: dict[str, JobResult] = {}
    pool.start()
    try:
        pool.run(jobs, lambda job, result: seen.__setitem__(job.id, result))
    finally:
        pool.close()
    assert seen["plain"].status is JobEnd.DONE and seen["plain"].tests == (
        TestRecord("t::a", "passed", 0.01),
    )
    assert seen["plain"].mode is Mode.SWAP and seen["plain"].job_id == "plain"
    assert seen["fast"].tests[0].outcome == "failed"  # the spec's fields arrived as sent
    assert seen["dies"].status is JobEnd.WORKER_DIED and seen["dies"].mode is Mode.UNKNOWN
    assert "exited with code 9" in seen["dies"].detail and "twice" in seen["dies"].detail
    assert pool.restarts == 2  # re-queued once, then given up


# --- the worker against a fake forked child -------------------------------------------------


@pytest.fixture
def worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Worker:
    engine_read, engine_write = os.pipe()  # the engine's end stays open: the worker's parent lives
    monkeypatch.setenv("MUTAGENT_WORKER_FDS", f"{engine_read},{engine_write}")
    session = SimpleNamespace(items=[], testsfailed=0)
    config = WorkerConfig({}, {}, str(tmp_path), str(tmp_path), (), str(tmp_path / "warm.json"))
    return Worker(session, config, {}, started=0.0)


def _fake_child(messages: list[tuple], exit_code: int = 0) -> tuple[int, int]:
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the fake child
        os.close(read_fd)
        for message in messages:
            send(write_fd, message)
        os._exit(exit_code)
    os.close(write_fd)
    return pid, read_fd


def test_the_worker_reads_a_childs_reports_into_a_result(worker: Worker) -> None:
    record = {"nodeid": "t::a", "outcome": "failed", "duration": 0.2, "message": "boom", "text": "tb"}
    pid, read_fd = _fake_child(
        [("start", "t::a"), ("test", record), ("baseline", {"modules": ["x"]}), ("done",)]
    )
    result = worker._watch_child(pid, read_fd, timeout=10.0)
    assert result.status is JobEnd.DONE
    assert result.tests == (TestRecord("t::a", "failed", 0.2, "boom", "tb"),)
    assert result.baseline == {"modules": ["x"]} and result.running is None
    assert [child.pid for child in worker.reaper.pending] == [pid]  # reaped off the critical path
    assert worker.reaper.collect(block=True) == 1


def test_a_child_that_dies_mid_test_is_a_crash_naming_the_running_test(worker: Worker) -> None:
    record = {"nodeid": "t::a", "outcome": "passed", "duration": 0.1}
    pid, read_fd = _fake_child([("start", "t::a"), ("test", record), ("start", "t::b")], exit_code=3)
    result = worker._watch_child(pid, read_fd, timeout=10.0)
    assert result.status is JobEnd.CRASH and result.running == "t::b"
    assert [t.nodeid for t in result.tests] == ["t::a"]
    assert "exited with code 3 without reporting" in result.detail


def test_a_harness_error_in_the_child_is_reported_as_an_error(worker: Worker) -> None:
    pid, read_fd = _fake_child([("start", "t::a"), ("error", "Traceback: LookupError")])
    result = worker._watch_child(pid, read_fd, timeout=10.0)
    assert result.status is JobEnd.ERROR and result.detail == "Traceback: LookupError"
    assert result.running == "t::a"


def test_a_job_naming_tests_the_worker_never_collected_is_a_harness_error(worker: Worker) -> None:
    result = worker.handle("m1", JobSpec.plain(["t::nowhere"], 5.0))
    assert result.status is JobEnd.ERROR and "t::nowhere" in result.detail
    assert result.job_id == "m1" and result.mode is Mode.NONE
