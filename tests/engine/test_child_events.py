"""What a forked child writes to its worker, and how cheaply: events in order, a test's end
travelling with the next event in one write, and failures described by their exception only."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

from mutagent.engine.harness.child import run_child
from mutagent.engine.harness.events import (
    BaselineMeasured,
    ChildDone,
    TestFinished,
    TestStarted,
    child_event_from_wire,
)
from mutagent.engine.messages import JobResult, Mode, TestRecord
from mutagent.engine.orchestration.run_stats import RunStats
from mutagent.engine.protocol import recv, send_all

pytest_plugins = ["pytester"]


def test_messages_sent_together_go_in_one_write_and_are_read_one_by_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    read_fd, write_fd = os.pipe()
    writes: list[int] = []
    real_write = os.write

    def counting_write(fd: int, data: Any) -> int:
        writes.append(fd)
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", counting_write)
    send_all(write_fd, [("test", "a"), ("start", "b"), {"big": "x" * 20_000}])  # within a pipe's buffer
    monkeypatch.undo()
    os.close(write_fd)
    assert writes == [write_fd]
    assert recv(read_fd) == ("test", "a")
    assert recv(read_fd) == ("start", "b")
    assert recv(read_fd) == {"big": "x" * 20_000}
    assert recv(read_fd) is None  # the writer is gone
    os.close(read_fd)


# --- run_child against fake pytest items ---------------------------------------------------------


def _record(nodeid: str, outcome: str) -> dict[str, Any]:
    """What ``add_report`` folds pytest's reports into: phases took 0.01 s."""
    return {"nodeid": nodeid, "outcome": outcome, "duration": 0.01, "message": "", "text": ""}


def _fake_item(nodeid: str, config: Any, protocol: Callable[[Any, Any], None]) -> Any:
    return SimpleNamespace(
        nodeid=nodeid, config=config, ihook=SimpleNamespace(pytest_runtest_protocol=protocol)
    )


def _item(nodeid: str, outcome: str, reports: dict[str, dict[str, Any]], config: Any) -> Any:
    def protocol(item: Any, nextitem: Any) -> None:
        reports[nodeid] = _record(nodeid, outcome)

    return _fake_item(nodeid, config, protocol)


def _run_in_fork(body: Callable[[int], None]) -> list[Any]:
    """Fork, run ``body(write_fd)`` there (it must not return), and read every event it sends."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(read_fd)
        try:
            body(write_fd)
        finally:
            os._exit(99)
    os.close(write_fd)
    events = []
    while (wire := recv(read_fd)) is not None:
        events.append(child_event_from_wire(wire))
    os.close(read_fd)
    os.waitpid(pid, 0)
    return events


def _slow_item(nodeid: str, reports: dict[str, dict[str, Any]], config: Any) -> Any:
    """A test whose phases took 0.01 s while pytest's protocol around them took 0.05 s."""

    def protocol(item: Any, nextitem: Any) -> None:
        time.sleep(0.05)
        reports[nodeid] = _record(nodeid, "passed")

    return _fake_item(nodeid, config, protocol)


def _names(events: list[Any]) -> list[str]:
    return [
        f"start {e.nodeid}"
        if isinstance(e, TestStarted)
        else f"end {e.record.nodeid} {e.record.outcome}"
        if isinstance(e, TestFinished)
        else type(e).__name__
        for e in events
    ]


def test_a_child_reports_every_test_in_order_and_ends_with_done() -> None:
    reports: dict[str, dict[str, Any]] = {}
    config = SimpleNamespace(option=SimpleNamespace(tbstyle="native"))
    items = [_item("t::a", "passed", reports, config), _item("t::b", "failed", reports, config)]

    events = _run_in_fork(lambda fd: run_child(fd, (), lambda: None, items, reports, fast=False, forked=True))

    assert _names(events) == ["start t::a", "end t::a passed", "start t::b", "end t::b failed", "ChildDone"]


def test_a_child_measures_pytests_whole_protocol_beside_the_phases() -> None:
    reports: dict[str, dict[str, Any]] = {}
    config = SimpleNamespace(option=SimpleNamespace(tbstyle="native"))
    items = [_slow_item("t::a", reports, config)]

    events = _run_in_fork(lambda fd: run_child(fd, (), lambda: None, items, reports, fast=False, forked=True))

    record = next(e.record for e in events if isinstance(e, TestFinished))
    assert record.duration == pytest.approx(0.01)  # the phases, as pytest timed them
    assert 0.05 <= record.protocol < 5.0  # the whole protocol, as the child timed it


def test_the_run_stats_tell_mutagents_part_of_the_overhead_from_pytests() -> None:
    stats = RunStats()
    tests = [
        TestRecord("t::a", "passed", 0.010, protocol=0.012),
        TestRecord("t::b", "failed", 0.020, protocol=0.025),
    ]
    stats.record_job(JobResult.done(tests).but(mode=Mode.SWAP, elapsed=0.040))
    unmeasured = [TestRecord("t::a", "passed", 0.010)]  # protocol 0.0: nothing to take off
    stats.record_job(JobResult.done(unmeasured).but(mode=Mode.SWAP, elapsed=0.014))

    assert stats.overheads == pytest.approx([0.010, 0.004])  # elapsed - the tests' phases
    assert stats.own_overheads == pytest.approx([0.003, 0.004])  # elapsed - pytest's whole protocol
    assert stats.median_own_overhead == pytest.approx(0.0035)


def test_a_fast_child_stops_at_the_first_failure_and_still_reports_it() -> None:
    reports: dict[str, dict[str, Any]] = {}
    config = SimpleNamespace(option=SimpleNamespace(tbstyle="native"))
    items = [_item(f"t::{n}", "failed" if n == "b" else "passed", reports, config) for n in "abc"]

    events = _run_in_fork(lambda fd: run_child(fd, (), lambda: None, items, reports, fast=True, forked=True))

    assert _names(events) == ["start t::a", "end t::a passed", "start t::b", "end t::b failed", "ChildDone"]


def test_a_harness_error_after_a_test_still_delivers_that_tests_end_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reports: dict[str, dict[str, Any]] = {}
    config = SimpleNamespace(option=SimpleNamespace(tbstyle="native"))
    items = [_item("t::a", "passed", reports, config)]

    class BrokenProbe:
        def __init__(self, *args: Any) -> None:
            pass

        def switch(self, nodeid: str) -> None:
            pass

        def finish(self) -> dict[str, Any]:
            raise LookupError("probe broke")

    monkeypatch.setattr("mutagent.engine.harness.probe.ChildProbe", BrokenProbe)
    measure = {"sources": {}, "root": "/nowhere"}

    events = _run_in_fork(
        lambda fd: run_child(fd, (), lambda: None, items, reports, fast=False, measure=measure, forked=True)
    )

    assert _names(events) == ["start t::a", "end t::a passed", "ChildError"]
    assert "probe broke" in events[-1].traceback
    assert not any(isinstance(e, (BaselineMeasured, ChildDone)) for e in events)


def test_a_child_describes_failures_without_formatting_tracebacks() -> None:
    reports: dict[str, dict[str, Any]] = {}
    config = SimpleNamespace(option=SimpleNamespace(tbstyle="native"))

    def body(fd: int) -> None:
        def protocol(item: Any, nextitem: Any) -> None:  # says which style pytest would use now
            send_all(fd, [TestStarted(f"style-{config.option.tbstyle}").to_wire()])
            reports["t::a"] = {
                "nodeid": "t::a",
                "outcome": "passed",
                "duration": 0.0,
                "message": "",
                "text": "",
            }

        item = SimpleNamespace(
            nodeid="t::a", config=config, ihook=SimpleNamespace(pytest_runtest_protocol=protocol)
        )
        run_child(fd, (), lambda: None, [item], reports, fast=False, forked=True)

    events = _run_in_fork(body)

    assert _names(events) == ["start t::a", "start style-value", "end t::a passed", "ChildDone"]
    assert config.option.tbstyle == "native"  # the worker's copy never changes


# --- the failure messages stay the same ----------------------------------------------------------

FAILING_TESTS = """
import pytest


def _deep(n):
    if n == 0:
        raise KeyError("is_error")
    return _deep(n - 1)


def _wrapped():
    try:
        _deep(5)
    except KeyError as exc:
        raise RuntimeError("the reply had no is_error field") from exc


def test_chained():
    _wrapped()


def test_assertion():
    reply = {"stop_reason": "end_turn"}
    assert reply["stop_reason"] == "tool_use"


@pytest.fixture
def broken():
    raise ValueError("fixture broke")


def test_setup_error(broken):
    pass


def test_fail_without_trace():
    pytest.fail("stream ended without message_stop", pytrace=False)
"""

MESSAGE_PLUGIN = """
import os

from mutagent.engine.harness.pytest_support import plain_failure_reports, short_message


def pytest_configure(config):
    if os.environ.get("PLAIN_FAILURES"):
        plain_failure_reports(config)


def pytest_runtest_logreport(report):
    if report.failed:
        text = str(report.longreprtext)
        traced = "_deep(n - 1)" in text
        print(f"MSG {report.nodeid} {report.when}: {short_message(report)} | traceback: {traced}")
"""


def _messages(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, plain: bool) -> list[str]:
    monkeypatch.setenv("PLAIN_FAILURES", "1" if plain else "")
    result = pytester.runpytest_subprocess("-p", "no:randomly", "-p", "no:cacheprovider", "-s", "--tb=native")
    result.assert_outcomes(failed=3, errors=1)
    return sorted(line[line.index("MSG ") :] for line in result.outlines if "MSG " in line)


def test_plain_failure_reports_keep_every_crash_line_and_drop_the_traceback(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_fail=FAILING_TESTS)
    pytester.makeconftest(MESSAGE_PLUGIN)

    formatted = _messages(pytester, monkeypatch, plain=False)
    plain = _messages(pytester, monkeypatch, plain=True)

    assert len(formatted) == 4
    assert any("traceback: True" in line for line in formatted)  # the contrast: native formats frames
    assert not any("traceback: True" in line for line in plain)
    strip = [line.split(" | ")[0] for line in formatted]
    assert [line.split(" | ")[0] for line in plain] == strip  # the same crash line, test by test
    assert any("RuntimeError: the reply had no is_error field" in line for line in strip)
    assert any("ValueError: fixture broke" in line for line in strip)
