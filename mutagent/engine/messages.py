"""What crosses the pipe between the engine and a warm worker, as frozen dataclasses (and the
worker's configuration, which crosses as a JSON file named by ``MUTAGENT_WORKER``).

Two named messages carry the work: the engine sends a ``job`` (:class:`JobSpec`), the worker
answers with a ``result`` (:class:`JobResult`, holding one :class:`TestRecord` per test that
finished); three frame it: ``ready`` (:class:`WorkerReady`) or ``fatal`` (:class:`WorkerFatal`)
when the worker starts, ``stop`` (:class:`Stop`) at the end. Each is built in one place on its
side and turned into plain data only at the pipe (``to_wire``/``from_wire``), so both ends agree
on one list of fields and a misspelt key fails here, not three files away.

The wire keys are the historical ones (``fallback`` for the fresh-import source, mode
``"fallback"`` for a fresh-import run): they are what stored CPU figures and older logs use.
"""

from __future__ import annotations

import dataclasses
import json
import marshal
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class JobEnd(str, Enum):
    """How a job ended, as the worker saw it (the verdict rules turn this into a status)."""

    DONE = "done"  # every selected test reported (or ``-x`` stopped at the first failure)
    TIMEOUT = "timeout"  # the job's wall-clock budget or a test's CPU budget ran out
    CRASH = "crash"  # the test process died without reporting
    ERROR = "error"  # the harness itself failed (fork, pipes, a test not collected...)
    WORKER_DIED = "worker_died"  # the engine lost the worker twice while it ran this job


class Mode(str, Enum):
    """How a worker applied the mutant of a job."""

    NONE = "none"  # not applied: the job failed before choosing
    PLAIN = "plain"  # nothing to swap (baseline and control jobs)
    SWAP = "swap"  # code objects swapped in a forked child
    FRESH_IMPORT = "fallback"  # a fresh-import run (zygote child or new process); historical wire value
    UNKNOWN = "?"  # the worker died: nobody knows


class Launcher(str, Enum):
    """The names of the launchers (``harness/launchers.py``); a ``JobResult`` names the launcher of
    a fresh import only (code swap leaves it empty, as the run's numbers and the store read it)."""

    CODE_SWAP = "swap"  # a child of the warm worker with the mutated code objects swapped in
    ZYGOTE = "zygote"  # a child forked from the worker's zygote
    FRESH_PROCESS = "fresh"  # a new ``python -m pytest``


@dataclass(frozen=True)
class TestRecord:
    """One test that finished in a job's process, as pytest reported it."""

    __test__ = False  # not a pytest test class, whatever its name

    nodeid: str
    outcome: str  # passed | failed | skipped
    duration: float = 0.0
    message: str = ""  # one line: why it failed
    text: str = ""  # the failure's text (truncated; the exception alone from a forked child); unread yet
    # wall seconds of pytest's whole protocol for the test: its phases (``duration``) and pytest's
    # own work around them (hooks, report objects, the failure's description); 0.0: not measured
    protocol: float = 0.0

    def to_wire(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> TestRecord:
        return cls(
            nodeid=str(data["nodeid"]),
            outcome=str(data["outcome"]),
            duration=float(data.get("duration") or 0.0),
            message=str(data.get("message") or ""),
            text=str(data.get("text") or ""),
            protocol=float(data.get("protocol") or 0.0),
        )


@dataclass(frozen=True)
class JobResult:
    """A worker's answer to one job."""

    status: JobEnd
    tests: tuple[TestRecord, ...] = ()  # the tests that finished, in order
    running: str | None = None  # the test that started and never finished (timeout, crash)
    detail: str = ""  # for anything but DONE: what happened, in the harness's words
    overran: str | None = None  # the test that burnt more CPU than its budget
    job_id: str = ""
    mode: Mode = Mode.NONE
    elapsed: float = 0.0  # wall seconds the worker spent on the job
    cpu: float = 0.0  # CPU seconds of the worker and every process it started for the job
    launcher: Launcher | None = None  # fresh imports only
    zygote_boot: float = 0.0  # seconds spent starting the zygote for this job
    zygote_problem: str | None = None  # why a fresh import wanted the zygote and got a new process
    fresh_import_reason: str = ""  # why only a fresh import could apply the mutant
    baseline: dict[str, Any] | None = field(default=None, compare=False)  # a measured batch's lines
    warm: dict[str, Any] | None = field(default=None, compare=False)  # the worker's warm-up facts

    # --- built in one place per way a job can end ----------------------------------------
    @classmethod
    def done(cls, tests: list[TestRecord] | tuple[TestRecord, ...]) -> JobResult:
        return cls(JobEnd.DONE, tuple(tests))

    @classmethod
    def timed_out(
        cls, tests: list[TestRecord], running: str | None, detail: str, overran: str | None = None
    ) -> JobResult:
        return cls(JobEnd.TIMEOUT, tuple(tests), running, detail, overran)

    @classmethod
    def crashed(cls, tests: list[TestRecord], running: str | None, detail: str) -> JobResult:
        return cls(JobEnd.CRASH, tuple(tests), running, detail)

    @classmethod
    def harness_error(cls, detail: str, tests: list[TestRecord] | tuple[TestRecord, ...] = ()) -> JobResult:
        return cls(JobEnd.ERROR, tuple(tests), None, detail)

    @classmethod
    def worker_died(cls, job_id: str, detail: str) -> JobResult:
        return cls(JobEnd.WORKER_DIED, (), None, detail, job_id=job_id, mode=Mode.UNKNOWN)

    def but(self, **changes: Any) -> JobResult:
        """This result with ``changes`` (what the worker adds around a launcher's result)."""
        return dataclasses.replace(self, **changes)

    # --- the pipe --------------------------------------------------------------------------
    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {
            "type": "result",
            "id": self.job_id,
            "status": self.status.value,
            "tests": [t.to_wire() for t in self.tests],
            "running": self.running,
            "detail": self.detail,
            "overran": self.overran,
            "mode": self.mode.value,
            "elapsed": self.elapsed,
            "cpu": self.cpu,
            "launcher": self.launcher.value if self.launcher else None,
            "zygote_boot": self.zygote_boot,
            "zygote_problem": self.zygote_problem,
            "fallback_reason": self.fresh_import_reason,
        }
        if self.baseline is not None:
            wire["baseline"] = self.baseline
        if self.warm is not None:
            wire["warm"] = self.warm
        return wire

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> JobResult:
        launcher = data.get("launcher")
        return cls(
            status=JobEnd(data["status"]),
            tests=tuple(TestRecord.from_wire(t) for t in data.get("tests") or ()),
            running=data.get("running"),
            detail=str(data.get("detail") or ""),
            overran=data.get("overran"),
            job_id=str(data.get("id") or ""),
            mode=Mode(data.get("mode") or Mode.NONE.value),
            elapsed=float(data.get("elapsed") or 0.0),
            cpu=float(data.get("cpu") or 0.0),
            launcher=Launcher(launcher) if launcher else None,
            zygote_boot=float(data.get("zygote_boot") or 0.0),
            zygote_problem=data.get("zygote_problem"),
            fresh_import_reason=str(data.get("fallback_reason") or ""),
            baseline=data.get("baseline"),
            warm=data.get("warm"),
        )

    def record_of(self, nodeid: str) -> TestRecord | None:
        return next((t for t in self.tests if t.nodeid == nodeid), None)

    def last_detail_line(self) -> str:
        lines = self.detail.strip().splitlines()
        return lines[-1] if lines else ""


@dataclass(frozen=True)
class CodeSwap:
    """One code object to swap in a forked child: the live function at ``key`` gets ``code``."""

    key: tuple[str, str, int]  # (file, qualified name, first line)
    code: bytes  # ``marshal.dumps`` of the mutated code object

    def to_wire(self) -> dict[str, Any]:
        return {"key": self.key, "code": self.code}

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> CodeSwap:
        file, name, line = data["key"]
        return cls((str(file), str(name), int(line)), bytes(data["code"]))


@dataclass(frozen=True)
class DefaultsSwap:
    """New default values for the live function at ``key`` (``selection/defaults.py``): the
    import-time value a mutant changed, applied without a fresh import."""

    key: tuple[str, str, int]  # (file, def name, first line), as for ``CodeSwap``
    values: bytes  # ``marshal.dumps`` of ([[index, value], ...], [[keyword, value], ...])

    def to_wire(self) -> dict[str, Any]:
        return {"key": self.key, "values": self.values}

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> DefaultsSwap:
        file, name, line = data["key"]
        return cls((str(file), str(name), int(line)), bytes(data["values"]))

    def decoded(self) -> tuple[dict[int, Any], dict[str, Any]]:
        """The new values: by index into ``__defaults__``, by keyword-only parameter name."""
        positional, keyword = marshal.loads(self.values)
        return {int(i): v for i, v in positional}, {str(k): v for k, v in keyword}


@dataclass(frozen=True)
class ValueSwap:
    """A constant's new value (``selection/module_values.py``): the module global (or attribute
    of ``owner``, a top-level class) ``name`` of ``module`` is set to ``expression``, evaluated
    in the module's namespace, instead of importing the mutated module afresh."""

    module: str
    path: str  # the module's file in the copy: the live module must come from it
    owner: str  # "" for a module global
    name: str
    expression: str

    def to_wire(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> ValueSwap:
        return cls(*(str(data[k]) for k in ("module", "path", "owner", "name", "expression")))

    def as_order(self) -> tuple[str, str, str, str, str]:
        return (self.module, self.path, self.owner, self.name, self.expression)


@dataclass(frozen=True)
class FreshImportSource:
    """What a fresh-import run imports instead of the module on disk."""

    module: str
    path: str
    source: str
    control: bool = False  # the zygote trust check: nothing is mutated

    def to_wire(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> FreshImportSource:
        return cls(str(data["module"]), str(data["path"]), str(data["source"]), bool(data.get("control")))


@dataclass(frozen=True)
class JobSpec:
    """A job as the worker receives it: which tests to run and what to change before."""

    tests: tuple[str, ...]
    timeout: float
    fast: bool = False
    budgets: Mapping[str, float] | None = None  # CPU seconds per test (mutant jobs)
    swap: tuple[CodeSwap, ...] | None = ()  # ``None``: only a fresh import can apply the mutant
    defaults: tuple[DefaultsSwap, ...] = ()  # default values to swap with the code (``swap`` not None)
    values: tuple[ValueSwap, ...] = ()  # constants to rebind with the code (``swap`` not None)
    measure_baseline: bool = False  # a measured baseline batch (per-test lines and loads)
    fresh_import: FreshImportSource | None = None
    fresh_import_timeout: float | None = None
    fresh_import_reason: str = ""
    launcher: Launcher | None = None  # fresh imports: ``None`` means the zygote if it can
    # fault exploration and ``suggest``: the ``MUTAGENT_EXPLORE`` value the tests run under (a
    # fault for ``fake_model`` to insert, where to record the requests), "" for none
    explore: str = ""

    @classmethod
    def plain(cls, tests: list[str], timeout: float, measure_baseline: bool = False) -> JobSpec:
        """A baseline batch or a control run: the tests as they are, in a forked child."""
        return cls(tuple(tests), timeout, measure_baseline=measure_baseline)

    @property
    def needs_fresh_import(self) -> bool:
        return self.swap is None

    def but(self, **changes: Any) -> JobSpec:
        return dataclasses.replace(self, **changes)

    def to_wire(self, job_id: str) -> dict[str, Any]:
        return {
            "type": "job",
            "id": job_id,
            "tests": list(self.tests),
            "fast": self.fast,
            "timeout": self.timeout,
            "budgets": dict(self.budgets) if self.budgets is not None else None,
            "swap": None if self.swap is None else [s.to_wire() for s in self.swap],
            "defaults": [d.to_wire() for d in self.defaults],
            "values": [v.to_wire() for v in self.values],
            "baseline": self.measure_baseline,
            "fallback": self.fresh_import.to_wire() if self.fresh_import else None,
            "fallback_timeout": self.fresh_import_timeout,
            "fallback_reason": self.fresh_import_reason,
            "launcher": self.launcher.value if self.launcher else None,
            "explore": self.explore,
        }

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> JobSpec:
        swap = data.get("swap")
        fresh = data.get("fallback")
        launcher = data.get("launcher")
        budgets = data.get("budgets")
        return cls(
            tests=tuple(data["tests"]),
            timeout=float(data["timeout"]),
            fast=bool(data.get("fast")),
            budgets=dict(budgets) if budgets is not None else None,
            swap=None if swap is None else tuple(CodeSwap.from_wire(s) for s in swap),
            defaults=tuple(DefaultsSwap.from_wire(d) for d in data.get("defaults") or ()),
            values=tuple(ValueSwap.from_wire(v) for v in data.get("values") or ()),
            measure_baseline=bool(data.get("baseline")),
            fresh_import=FreshImportSource.from_wire(fresh) if fresh else None,
            fresh_import_timeout=data.get("fallback_timeout"),
            fresh_import_reason=str(data.get("fallback_reason") or ""),
            launcher=Launcher(launcher) if launcher else None,
            explore=str(data.get("explore") or ""),
        )


@dataclass(frozen=True)
class WorkerConfig:
    """What every warm worker of a run is told at start (written once by the engine)."""

    targets: Mapping[str, str]  # absolute path in the copy -> path relative to the target
    modules: Mapping[str, str]  # module name -> file it must be imported from (shadow check)
    aux: str  # the workspace's aux directory (run files, logs, tmp roots)
    root: str  # the isolated copy of the target
    fresh_import_args: tuple[str, ...]  # pytest arguments of a fresh-import run
    warm: str  # the warm-up file the engine writes once the baseline knows what to preload
    measure: bool = False  # the first worker measures its start-up for a fresh baseline
    zygote: str | None = None  # the zygote's configuration file, when fresh imports may use one

    def to_json(self) -> str:
        return json.dumps({**dataclasses.asdict(self), "fresh_import_args": list(self.fresh_import_args)})

    @classmethod
    def from_json(cls, text: str) -> WorkerConfig:
        data = json.loads(text)
        return cls(
            targets=dict(data["targets"]),
            modules=dict(data["modules"]),
            aux=str(data["aux"]),
            root=str(data["root"]),
            fresh_import_args=tuple(data["fresh_import_args"]),
            warm=str(data["warm"]),
            measure=bool(data.get("measure")),
            zygote=data.get("zygote"),
        )


# --- start-up and shutdown ----------------------------------------------------------------------


@dataclass(frozen=True)
class ShadowedModule:
    """A module of the target that the worker imported from somewhere other than the copy."""

    module: str
    expected: str  # the file in the isolated copy
    actual: str  # where Python found it (an installed copy of the target, say)


@dataclass(frozen=True)
class WorkerReady:
    """A worker collected the suite and waits for jobs: its start-up facts."""

    pid: int
    collected: tuple[str, ...]  # node ids, in collection order
    startup: float  # wall seconds from the worker's start to this message
    cpu: float = 0.0  # CPU seconds the worker spent starting (imports, collection)
    live_functions: int = 0  # functions of the target files a code swap can reach
    imports: dict[str, Any] | None = field(default=None, compare=False)  # import-time lines (measure)
    forked: bool = False  # forked from the first worker (no start-up of its own), not spawned

    def to_wire(self) -> dict[str, Any]:
        return {
            "type": "ready",
            "pid": self.pid,
            "collected": list(self.collected),
            "startup": self.startup,
            "cpu": self.cpu,
            "live_functions": self.live_functions,
            "imports": self.imports,
            "forked": self.forked,
        }

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> WorkerReady:
        return cls(
            pid=int(data["pid"]),
            collected=tuple(data.get("collected") or ()),
            startup=float(data.get("startup") or 0.0),
            cpu=float(data.get("cpu") or 0.0),
            live_functions=int(data.get("live_functions") or 0),
            imports=data.get("imports"),
            forked=bool(data.get("forked")),
        )


class FatalKind(str, Enum):
    """Why a worker cannot start."""

    COLLECT = "collect"  # pytest reported errors while collecting the suite
    SHADOWED = "shadowed"  # a target module is imported from outside the copy


@dataclass(frozen=True)
class WorkerFatal:
    """A worker cannot serve jobs; it exits after sending this."""

    kind: FatalKind
    message: str = ""
    shadowed: tuple[ShadowedModule, ...] = ()

    @classmethod
    def collect_errors(cls, count: int) -> WorkerFatal:
        return cls(FatalKind.COLLECT, f"{count} errors while collecting the tests")

    @classmethod
    def shadowing(cls, shadowed: list[dict[str, str]]) -> WorkerFatal:
        """From ``pytest_support.shadow_check``'s findings."""
        modules = tuple(ShadowedModule(**s) for s in shadowed)
        return cls(FatalKind.SHADOWED, "", modules)

    def to_wire(self) -> dict[str, Any]:
        return {
            "type": "fatal",
            "kind": self.kind.value,
            "message": self.message,
            "shadowed": [dataclasses.asdict(s) for s in self.shadowed],
        }

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> WorkerFatal:
        return cls(
            FatalKind(data["kind"]),
            str(data.get("message") or ""),
            tuple(ShadowedModule(**s) for s in data.get("shadowed") or ()),
        )


@dataclass(frozen=True)
class Stop:
    """The engine ends the run: the worker stops its zygote and exits."""

    def to_wire(self) -> dict[str, Any]:
        return {"type": "stop"}


@dataclass(frozen=True)
class ForkWorker:
    """The engine asks the first worker, before its first job, to fork worker ``slot`` (whose
    two pipe ends travel beside this message over the fork socket, ``harness/worker_fork``)."""

    slot: int
    log: str  # the new worker's own log file

    def to_wire(self) -> dict[str, Any]:
        return {"type": "fork", "slot": self.slot, "log": self.log}

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> ForkWorker:
        return cls(int(data["slot"]), str(data["log"]))


WorkerMessage = WorkerReady | WorkerFatal | JobResult
# a job with its id, a request to fork another worker, or the end of the run
EngineMessage = tuple[str, JobSpec] | ForkWorker | Stop


def worker_message_from_wire(data: Mapping[str, Any]) -> WorkerMessage | None:
    """What a worker sent, typed; ``None`` for a message of no known type (ignored)."""
    kind = data.get("type")
    if kind == "result":
        return JobResult.from_wire(data)
    if kind == "ready":
        return WorkerReady.from_wire(data)
    if kind == "fatal":
        return WorkerFatal.from_wire(data)
    return None


def engine_message_from_wire(data: Mapping[str, Any] | None) -> EngineMessage:
    """What the engine sent, typed; end-of-file (``None``) means the same as :class:`Stop`."""
    if data is not None and data.get("type") == "fork":
        return ForkWorker.from_wire(data)
    if data is None or data.get("type") != "job":
        return Stop()
    return str(data["id"]), JobSpec.from_wire(data)
