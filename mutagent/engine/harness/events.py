"""What crosses the pipes inside the harness, as frozen dataclasses: a worker's order to its
standby child, the child's reports to its worker, and the worker <-> zygote requests and answers.
None of these reach the engine (the engine <-> worker messages are in ``engine/messages.py``).

Each message is built in one place and turned into a tiny tuple (its name, then its fields) only
at the pipe: the child's events travel a few times per test on the per-mutant hot path, so the
wire stays as cheap as the untyped tuples it replaced. A message of no known name, or of the wrong
shape, reads as :class:`ChildError` / ``None``, never as an exception in the middle of a job.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mutagent.engine.messages import TestRecord

# --- a worker -> its standby child --------------------------------------------------------------


@dataclass(frozen=True)
class ChildOrder:
    """The job a standby child runs, sent once on its job pipe (``standby.start``)."""

    tests: tuple[str, ...]
    swaps: tuple[tuple[Any, bytes], ...]  # (code key, ``marshal.dumps`` of the mutated code)
    fast: bool
    measure: bool  # a measured baseline batch
    temp_root: str  # the tests' ``tmp_path`` root
    defaults: tuple[tuple[Any, bytes], ...] = ()  # (code key, ``DefaultsSwap.values``)
    values: tuple[tuple[str, str, str, str, str], ...] = ()  # (module, path, owner, name, expression)
    explore: str = ""  # ``JobSpec.explore``: set as ``MUTAGENT_EXPLORE`` before the tests run

    def to_wire(self) -> tuple[Any, ...]:
        order = (
            self.tests,
            self.swaps,
            self.fast,
            self.measure,
            self.temp_root,
            self.defaults,
            self.values,
            self.explore,
        )
        return ("order", *order)

    @classmethod
    def from_wire(cls, wire: tuple[Any, ...]) -> ChildOrder:
        _, tests, swaps, fast, measure, temp_root, defaults, values, explore = wire
        return cls(
            tuple(tests),
            tuple(swaps),
            bool(fast),
            bool(measure),
            str(temp_root),
            tuple(defaults),
            tuple(values),
            str(explore),
        )


# --- a forked child -> its worker ---------------------------------------------------------------


@dataclass(frozen=True)
class TestStarted:
    """The child is about to run ``nodeid`` (its CPU budget starts now)."""

    __test__ = False  # not a pytest test class, whatever its name

    nodeid: str

    def to_wire(self) -> tuple[Any, ...]:
        return ("start", self.nodeid)


@dataclass(frozen=True)
class TestFinished:
    """pytest reported ``record`` (setup, call and teardown folded into one)."""

    __test__ = False

    record: TestRecord

    def to_wire(self) -> tuple[Any, ...]:
        r = self.record
        return ("test", r.nodeid, r.outcome, r.duration, r.message, r.text, r.protocol)


@dataclass(frozen=True)
class BaselineMeasured:
    """A measured baseline batch's per-test lines and loads (``probe.ChildProbe.finish``)."""

    measured: dict[str, Any] = field(compare=False)

    def to_wire(self) -> tuple[Any, ...]:
        return ("baseline", self.measured)


@dataclass(frozen=True)
class ChildDone:
    """Every test of the job reported (or ``-x`` stopped at the first failure)."""

    def to_wire(self) -> tuple[Any, ...]:
        return ("done",)


@dataclass(frozen=True)
class ChildError:
    """The harness failed inside the child (or a mutant raised past pytest): a RuntimeError."""

    traceback: str

    def to_wire(self) -> tuple[Any, ...]:
        return ("error", self.traceback)


ChildEvent = TestStarted | TestFinished | BaselineMeasured | ChildDone | ChildError


def child_event_from_wire(wire: tuple[Any, ...]) -> ChildEvent:
    """The event a child sent; a message the worker cannot read is the child's harness error."""
    try:
        kind = wire[0]
        if kind == "start":
            return TestStarted(str(wire[1]))
        if kind == "test":
            return TestFinished(TestRecord(*wire[1:7]))
        if kind == "baseline":
            return BaselineMeasured(wire[1])
        if kind == "done":
            return ChildDone()
        if kind == "error":
            return ChildError(str(wire[1]))
    except (TypeError, IndexError, KeyError):
        pass
    return ChildError(f"the mutant's child sent an unreadable message: {wire!r:.200}")


# --- a worker <-> its zygote --------------------------------------------------------------------


@dataclass(frozen=True)
class ZygoteReady:
    """The zygote preloaded the third-party modules and waits for fork requests."""

    pid: int
    preloaded: int  # modules imported
    failed: tuple[str, ...]  # modules whose import failed (left to each child)
    startup: float  # wall seconds
    cpu: float  # CPU seconds of the zygote's start (counted once, in the worker's job CPU)

    def to_wire(self) -> tuple[Any, ...]:
        return ("ready", self.pid, self.preloaded, list(self.failed), self.startup, self.cpu)


@dataclass(frozen=True)
class ZygoteFatal:
    """The zygote cannot serve (a preload started threads or imported the target)."""

    message: str

    def to_wire(self) -> tuple[Any, ...]:
        return ("fatal", self.message)


@dataclass(frozen=True)
class ForkRequest:
    """Fork a child running ``pytest.main(args)`` with ``env`` added, its output into ``log``."""

    args: tuple[str, ...]
    env: dict[str, str] = field(compare=False)
    log: str

    def to_wire(self) -> tuple[Any, ...]:
        return ("fork", list(self.args), self.env, self.log)


@dataclass(frozen=True)
class Forked:
    """The child runs as ``pid`` (also its process group)."""

    pid: int

    def to_wire(self) -> tuple[Any, ...]:
        return ("forked", self.pid)


@dataclass(frozen=True)
class Exited:
    """The child ``pid`` is gone and reaped: its wait status and CPU seconds."""

    pid: int
    status: int
    cpu: float

    def to_wire(self) -> tuple[Any, ...]:
        return ("exited", self.pid, self.status, self.cpu)


ZygoteMessage = ZygoteReady | ZygoteFatal | ForkRequest | Forked | Exited


def zygote_message_from_wire(wire: Any) -> ZygoteMessage | None:
    """A message between a worker and its zygote; ``None`` at end-of-file or for one of no known
    name (both sides then treat the peer as gone)."""
    try:
        kind = wire[0]
        if kind == "fork":
            return ForkRequest(tuple(wire[1]), dict(wire[2]), str(wire[3]))
        if kind == "forked":
            return Forked(int(wire[1]))
        if kind == "exited":
            return Exited(int(wire[1]), int(wire[2]), float(wire[3]))
        if kind == "ready":
            return ZygoteReady(int(wire[1]), int(wire[2]), tuple(wire[3]), float(wire[4]), float(wire[5]))
        if kind == "fatal":
            return ZygoteFatal(str(wire[1]))
    except (TypeError, IndexError, ValueError):
        pass
    return None
