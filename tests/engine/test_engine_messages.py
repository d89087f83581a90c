"""The typed messages and each side of the engine <-> worker <-> child boundaries, against fake peers.

The engine's ``Pool`` talks to a fake worker (a few lines of Python speaking the protocol), the
worker's ``_watch_child`` to a fake forked child, and the verdict rules get the results those
peers produce: no target, no pytest run inside.
"""

from __future__ import annotations

import os
import sys
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from mutagent.engine.harness import zygote
from mutagent.engine.harness.events import (
    BaselineMeasured,
    ChildDone,
    ChildError,
    ChildEvent,
    ChildOrder,
    Exited,
    Forked,
    ForkRequest,
    TestFinished,
    TestStarted,
    ZygoteFatal,
    ZygoteReady,
    child_event_from_wire,
    zygote_message_from_wire,
)
from mutagent.engine.harness.worker import Worker
from mutagent.engine.harness.zygote_client import ParentWatch, ZygoteClient, ZygoteLost
from mutagent.engine.messages import (
    CodeSwap,
    ForkWorker,
    FreshImportSource,
    JobEnd,
    JobResult,
    JobSpec,
    Launcher,
    Mode,
    ShadowedModule,
    Stop,
    TestRecord,
    WorkerConfig,
    WorkerFatal,
    WorkerReady,
    engine_message_from_wire,
    worker_message_from_wire,
)
from mutagent.engine.orchestration.pool import Job, Pool
from mutagent.engine.protocol import recv, send
from mutagent.engine.verdict import FORK_ALLOWANCE, classify, fresh_import_end, time_limit
from mutagent.errors import MutagentError, UsageError
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
    swapped = JobSpec(
        ("t::a",), 1.0, swap=(CodeSwap(("pkg/mod.py", "f", 3), b"\x00code"),), explore='{"fault": null}'
    )
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


def test_start_up_and_shutdown_messages_survive_the_wire() -> None:
    ready = WorkerReady(41, ("t::a", "t::b"), startup=1.5, cpu=1.2, live_functions=7, imports={"a.py": [1]})
    back = worker_message_from_wire(ready.to_wire())
    assert back == ready and isinstance(back, WorkerReady) and back.imports == {"a.py": [1]}
    shadowed = WorkerFatal.shadowing(
        [{"module": "pkg", "expected": "/copy/pkg.py", "actual": "/site/pkg.py"}]
    )
    assert worker_message_from_wire(shadowed.to_wire()) == shadowed
    assert shadowed.shadowed == (ShadowedModule("pkg", "/copy/pkg.py", "/site/pkg.py"),)
    assert worker_message_from_wire(WorkerFatal.collect_errors(2).to_wire()) == WorkerFatal.collect_errors(2)
    assert worker_message_from_wire({"type": "gossip"}) is None  # of no known type: ignored
    assert isinstance(engine_message_from_wire(Stop().to_wire()), Stop)
    assert isinstance(engine_message_from_wire(None), Stop)  # the engine is gone: same as stop
    spec = JobSpec.plain(["t::a"], 2.0)
    assert engine_message_from_wire(spec.to_wire("j7")) == ("j7", spec)
    fork = ForkWorker(1, "/aux/logs/worker-1-2.log")
    assert engine_message_from_wire(fork.to_wire()) == fork
    forked = WorkerReady(42, ("t::a",), startup=0.01, forked=True)
    assert worker_message_from_wire(forked.to_wire()) == forked


def test_the_harness_events_survive_the_wire_and_garbage_is_a_harness_error() -> None:
    events: list[ChildEvent] = [
        TestStarted("t::a"),
        TestFinished(TestRecord("t::a", "failed", 0.2, "boom", "tb", protocol=0.25)),
        BaselineMeasured({"lines": {}}),
        ChildDone(),
        ChildError("Traceback"),
    ]
    for event in events:
        assert child_event_from_wire(event.to_wire()) == event
    order = ChildOrder(("t::a",), ((("pkg/mod.py", "f", 3), b"code"),), True, False, "/aux/tmp/1-0")
    assert ChildOrder.from_wire(order.to_wire()) == order
    explored = ChildOrder(("t::a",), (), False, True, "/aux/tmp/1-1", explore='{"fault": null}')
    assert ChildOrder.from_wire(explored.to_wire()) == explored
    for garbage in [("stop",), ("test",), (), 42]:
        unreadable = child_event_from_wire(garbage)  # type: ignore[arg-type]
        assert isinstance(unreadable, ChildError) and "unreadable" in unreadable.traceback
    for message in [
        ZygoteReady(9, 3, ("broken_mod",), 0.5, 0.4),
        ZygoteFatal("preloading started threads"),
        ForkRequest(("tests", "-x"), {"A": "1"}, "/aux/log"),
        Forked(12),
        Exited(12, 256, 0.3),
    ]:
        assert zygote_message_from_wire(message.to_wire()) == message
    assert zygote_message_from_wire(None) is None and zygote_message_from_wire(("forked",)) is None


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
    from mutagent.engine.messages import (
        JobResult, Mode, Stop, TestRecord, WorkerReady, engine_message_from_wire,
    )
    from mutagent.engine.protocol import recv, send

    in_fd, out_fd = (int(fd) for fd in os.environ["MUTAGENT_WORKER_FDS"].split(","))
    send(out_fd, WorkerReady(os.getpid(), ("t::a", "t::die"), startup=0.1).to_wire())
    while True:
        message = engine_message_from_wire(recv(in_fd))
        if isinstance(message, Stop):
            sys.exit(0)
        job_id, job = message
        if "t::die" in job.tests:
            os._exit(9)  # the worker dies mid-job, as an OOM kill would leave it
        records = [TestRecord(nodeid, "failed" if job.fast else "passed", 0.01) for nodeid in job.tests]
        result = JobResult.done(records).but(job_id=job_id, mode=Mode.SWAP, elapsed=0.02, cpu=0.01)
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


FATAL_WORKER = textwrap.dedent(
    """
    import os, sys
    from mutagent.engine.messages import WorkerFatal
    from mutagent.engine.protocol import send

    in_fd, out_fd = (int(fd) for fd in os.environ["MUTAGENT_WORKER_FDS"].split(","))
    shadowed = [{"module": "pkg", "expected": "/copy/pkg.py", "actual": "/site/pkg.py"}]
    fatal = WorkerFatal.shadowing(shadowed) if sys.argv[1] == "shadowed" else WorkerFatal.collect_errors(2)
    send(out_fd, fatal.to_wire())
    """
)


def test_a_worker_that_cannot_start_stops_the_run_with_its_reason(tmp_path: Path) -> None:
    shadowed = Pool(1, [sys.executable, "-c", FATAL_WORKER, "shadowed"], tmp_path, dict(os.environ), tmp_path)
    shadowed.start()
    with pytest.raises(UsageError, match="module pkg is imported from /site/pkg.py instead of the isolated"):
        shadowed.wait_ready()
    broken = Pool(1, [sys.executable, "-c", FATAL_WORKER, "collect"], tmp_path, dict(os.environ), tmp_path)
    broken.start()
    with pytest.raises(MutagentError, match="a worker could not start: 2 errors while collecting the tests"):
        broken.wait_ready()


# --- the worker against a fake forked child -------------------------------------------------


@pytest.fixture
def worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Worker:
    engine_read, engine_write = os.pipe()  # the engine's end stays open: the worker's parent lives
    monkeypatch.setenv("MUTAGENT_WORKER_FDS", f"{engine_read},{engine_write}")
    session = SimpleNamespace(items=[], testsfailed=0)
    config = WorkerConfig({}, {}, str(tmp_path), str(tmp_path), (), str(tmp_path / "warm.json"))
    return Worker(session, config, {}, started=0.0)


def _fake_child(events: list[ChildEvent | tuple], exit_code: int = 0) -> tuple[int, int]:
    """A forked process that sends ``events`` (typed, or raw tuples as a broken child would)."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the fake child
        os.close(read_fd)
        for event in events:
            send(write_fd, event if isinstance(event, tuple) else event.to_wire())
        os._exit(exit_code)
    os.close(write_fd)
    return pid, read_fd


def test_the_worker_reads_a_childs_reports_into_a_result(worker: Worker) -> None:
    record = TestRecord("t::a", "failed", 0.2, "boom", "tb")
    pid, read_fd = _fake_child(
        [TestStarted("t::a"), TestFinished(record), BaselineMeasured({"modules": ["x"]}), ChildDone()]
    )
    result = worker._watch_child(pid, read_fd, timeout=10.0)
    assert result.status is JobEnd.DONE
    assert result.tests == (TestRecord("t::a", "failed", 0.2, "boom", "tb"),)
    assert result.baseline == {"modules": ["x"]} and result.running is None
    assert [child.pid for child in worker.reaper.pending] == [pid]  # reaped off the critical path
    assert worker.reaper.collect(block=True) == 1


def test_a_child_that_dies_mid_test_is_a_crash_naming_the_running_test(worker: Worker) -> None:
    record = TestRecord("t::a", "passed", 0.1)
    pid, read_fd = _fake_child([TestStarted("t::a"), TestFinished(record), TestStarted("t::b")], exit_code=3)
    result = worker._watch_child(pid, read_fd, timeout=10.0)
    assert result.status is JobEnd.CRASH and result.running == "t::b"
    assert [t.nodeid for t in result.tests] == ["t::a"]
    assert "exited with code 3 without reporting" in result.detail


def test_a_harness_error_in_the_child_is_reported_as_an_error(worker: Worker) -> None:
    pid, read_fd = _fake_child([TestStarted("t::a"), ChildError("Traceback: LookupError")])
    result = worker._watch_child(pid, read_fd, timeout=10.0)
    assert result.status is JobEnd.ERROR and result.detail == "Traceback: LookupError"
    assert result.running == "t::a"


def test_a_job_naming_tests_the_worker_never_collected_is_a_harness_error(worker: Worker) -> None:
    result = worker.handle("m1", JobSpec.plain(["t::nowhere"], 5.0))
    assert result.status is JobEnd.ERROR and "t::nowhere" in result.detail
    assert result.job_id == "m1" and result.mode is Mode.NONE


def test_a_child_that_sends_garbage_is_a_harness_error_not_a_kill(worker: Worker) -> None:
    pid, read_fd = _fake_child([TestStarted("t::a"), ("test", {"nodeid": "t::a"})])
    result = worker._watch_child(pid, read_fd, timeout=10.0)
    assert result.status is JobEnd.ERROR and "unreadable message" in result.detail


# --- the worker against a fake engine -------------------------------------------------------


def test_the_worker_says_ready_serves_jobs_and_stops(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    to_worker, from_engine = os.pipe()[::-1]
    from_worker, to_engine = os.pipe()
    monkeypatch.setenv("MUTAGENT_WORKER_FDS", f"{from_engine},{to_engine}")
    session = SimpleNamespace(items=[SimpleNamespace(nodeid="t::a")], testsfailed=0)
    config = WorkerConfig({}, {}, str(tmp_path), str(tmp_path), (), str(tmp_path / "warm.json"))
    worker = Worker(session, config, {}, started=0.0)
    send(to_worker, JobSpec.plain(["t::nowhere"], 5.0).to_wire("j1"))
    send(to_worker, Stop().to_wire())
    monkeypatch.setattr("signal.signal", lambda *args: None)  # the worker's SIGTERM handler stays its own
    monkeypatch.setattr(Worker, "_freeze", staticmethod(lambda: None))  # no gc.freeze in the test process
    worker.serve()  # returns at Stop
    assert worker.stopped  # so the plugin may leave without pytest's session end
    ready = worker_message_from_wire(recv(from_worker))
    assert isinstance(ready, WorkerReady) and ready.collected == ("t::a",) and ready.imports is None
    result = worker_message_from_wire(recv(from_worker))
    assert isinstance(result, JobResult) and result.job_id == "j1" and result.status is JobEnd.ERROR


def test_a_worker_whose_collection_failed_says_so_and_serves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from_worker, to_engine = os.pipe()
    monkeypatch.setenv("MUTAGENT_WORKER_FDS", f"{os.pipe()[0]},{to_engine}")
    config = WorkerConfig({}, {}, str(tmp_path), str(tmp_path), (), str(tmp_path / "warm.json"))
    worker = Worker(SimpleNamespace(items=[], testsfailed=3), config, {}, started=0.0)
    monkeypatch.setattr("signal.signal", lambda *args: None)
    worker.serve()
    assert worker_message_from_wire(recv(from_worker)) == WorkerFatal.collect_errors(3)
    assert not worker.stopped  # it ends as pytest ends, its log telling why


# --- the zygote against a fake worker, the worker's zygote client against a fake zygote ---------


def test_the_zygote_forks_a_pytest_run_per_request_and_reports_its_exit(tmp_path: Path) -> None:
    to_zygote, zygote_in = os.pipe()[::-1]
    zygote_out, from_zygote = os.pipe()[::-1]
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the zygote, serving until the fake worker closes its pipe
        os.close(to_zygote)
        os.close(from_zygote)
        zygote.serve(zygote_in, zygote_out)
        os._exit(0)
    os.close(zygote_in)
    os.close(zygote_out)
    try:
        probe = tmp_path / "test_probe.py"
        probe.write_text("import os\n\ndef test_env():\n    open(os.environ['OUT'], 'w').write('ran')\n")
        args = (str(probe), "-q", "-p", "no:cacheprovider", "-p", "no:randomly")
        request = ForkRequest(args, {"OUT": str(tmp_path / "out")}, str(tmp_path / "run.log"))
        send(to_zygote, request.to_wire())
        forked = zygote_message_from_wire(recv(from_zygote))
        assert isinstance(forked, Forked) and forked.pid > 0
        exited = zygote_message_from_wire(recv(from_zygote))
        assert isinstance(exited, Exited) and exited.pid == forked.pid
        assert os.waitstatus_to_exitcode(exited.status) == 0  # pytest's exit code: the test passed
        assert (tmp_path / "out").read_text() == "ran"  # in a child with the request's environment
    finally:
        os.close(to_zygote)
        os.waitpid(pid, 0)
        os.close(from_zygote)


def test_the_zygote_client_reads_typed_answers_and_loses_a_zygote_that_sends_garbage() -> None:
    client = ZygoteClient.__new__(ZygoteClient)  # its pipes only: no zygote process
    client.from_zygote, to_worker = os.pipe()
    parent = ParentWatch(os.pipe()[0], lambda: None)
    send(to_worker, Forked(5).to_wire())
    send(to_worker, ("forked", "not a pid"))
    deadline = time.monotonic() + 5.0
    assert client.receive(deadline, parent) == Forked(5)
    with pytest.raises(ZygoteLost, match="unreadable message"):
        client.receive(deadline, parent)
