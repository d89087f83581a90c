"""A warm worker: one pytest process that collected the suite once and serves jobs from the engine.

Per job ``launchers.choose_launcher`` picks how to run it: fork a child that swaps code objects and
runs the selected collected items (fast: no interpreter start, no imports, no collection), or, for
mutants only a fresh import can apply (module level, class bodies, functions not loaded at
collection, closure mismatch), a fresh pytest run with an import hook that loads the mutated
module from memory, forked from the worker's zygote or in a new process (``fresh_import``).

The worker enforces each job's timeout itself (SIGKILL to the child's process group) and watches
its own pipe from the engine: if the engine dies, the worker kills its child and exits.
"""

from __future__ import annotations

import gc
import json
import marshal
import os
import resource
import select
import shutil
import signal
import sys
import time
import traceback
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mutagent.engine.harness import child as child_mod
from mutagent.engine.harness import probe, standby, warm, worker_fork
from mutagent.engine.harness.events import (
    BaselineMeasured,
    ChildDone,
    ChildOrder,
    TestFinished,
    TestStarted,
    child_event_from_wire,
)
from mutagent.engine.harness.fresh_import import FreshImportRunner
from mutagent.engine.harness.launchers import choose_launcher
from mutagent.engine.harness.procs import describe_exit, kill_group, process_cpu
from mutagent.engine.harness.reaper import Reaper
from mutagent.engine.harness.zygote_client import ParentWatch
from mutagent.engine.messages import (
    DefaultsSwap,
    ForkWorker,
    JobResult,
    JobSpec,
    Mode,
    Stop,
    TestRecord,
    WorkerConfig,
    WorkerFatal,
    WorkerReady,
    engine_message_from_wire,
)
from mutagent.engine.orchestration.faults import EXPLORE_ENV, FAULT_LOG_FILE
from mutagent.engine.protocol import recv, send


def _cpu() -> float:
    """CPU seconds of this worker and of every child it reaped (one job runs at a time, so the
    difference around a job is that job's cost: fork, tests, reporting, fresh processes)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


CPU_CHECK_INTERVAL = 0.25  # seconds between reads of a running test's CPU use


class Worker:
    """The job loop of one worker process (runs inside ``pytest_runtestloop``)."""

    def __init__(
        self,
        session: Any,
        config: WorkerConfig,
        reports: dict[str, dict[str, Any]],
        started: float,
        initial_env: dict[str, str] | None = None,
        import_coverage: Any = None,
    ) -> None:
        self.session = session
        self.config = config
        self.reports = reports
        self.in_fd, self.out_fd = (int(fd) for fd in os.environ["MUTAGENT_WORKER_FDS"].split(","))
        self.items = {item.nodeid: item for item in session.items}
        self.index: dict[child_mod.CodeKey, list[Any]] = {}
        self.startup = time.monotonic() - started
        self.current_group: int | None = None
        self.reaper = Reaper()  # mutant children killed after reporting, waited for off the critical path
        self.standby: standby.StandbyChild | None = None  # the next code-swap job's child, forked ahead
        self.busy_fds: tuple[int, ...] = ()  # the running child's pipe end: not for later children
        self.jobs_done = 0
        initial = os.environ if initial_env is None else initial_env
        fresh_env = {k: v for k, v in initial.items() if not k.startswith("MUTAGENT_WORKER")}
        watch = ParentWatch(self.in_fd, self._engine_gone)
        self.fresh_imports = FreshImportRunner(config, fresh_env, self.startup, watch)
        self.import_coverage = import_coverage
        self.coverage: Any = None
        self.warm_file_read = False
        self.started_thread: str | None = None  # warming stops at a module whose import starts a thread
        self.stopped = False  # the engine said ``Stop`` (not a fatal start): ``exit_now`` may follow
        self.preloaded: tuple[int, float] = (0, 0.0)  # models built, seconds: ``_preload``
        self.warm_plan: dict[str, Any] | None = None  # the warm-up file, once read

    # --- lifecycle -----------------------------------------------------------------------
    def serve(self) -> None:
        signal.signal(signal.SIGTERM, self._on_term)
        if self.session.testsfailed:
            send(self.out_fd, WorkerFatal.collect_errors(self.session.testsfailed).to_wire())
            return
        from mutagent.engine.harness.pytest_support import shadow_check

        shadowed = shadow_check(dict(self.config.modules))
        if shadowed:
            send(self.out_fd, WorkerFatal.shadowing(shadowed).to_wire())
            return
        imports = None
        if self.import_coverage is not None:
            imports = probe.measure_imports_finish(
                self.import_coverage, dict(self.config.targets), self.config.root
            )
            self.coverage, self.import_coverage = self.import_coverage, None  # warm: the children reuse it
        if imports is None:
            self._preload()
        self.index = child_mod.build_index(dict(self.config.targets))
        self._settle_items()
        self._freeze()
        ready = WorkerReady(
            pid=os.getpid(),
            collected=tuple(self.items),
            startup=self.startup,
            cpu=time.process_time(),
            live_functions=len(self.index),
            imports=imports,
        )
        send(self.out_fd, ready.to_wire())
        while True:
            message = engine_message_from_wire(recv(self.in_fd))
            if isinstance(message, ForkWorker):  # before the first job only
                worker_fork.fork_sibling(self, message)
                continue
            if isinstance(message, Stop):
                self.fresh_imports.stop()
                self._discard_standby()
                self.reaper.collect(block=True)
                self.stopped = True
                return
            job_id, job = message
            warmed = self._warm_up() if not self.warm_file_read else None
            if job.measure_baseline and self.coverage is None:  # an incremental baseline's worker
                self.coverage = probe.idle_coverage(dict(self.config.targets))
                self._discard_standby()  # forked without it
            result = self.handle(job_id, job)
            if result.baseline is not None:
                self._learn(result.baseline)
            if warmed is not None:
                result = result.but(warm=warmed)
            elif self.started_thread is not None:
                result = result.but(warm={"started_thread": self.started_thread})
            send(self.out_fd, result.to_wire())
            self.jobs_done += 1

    def _warm_up(self) -> dict[str, Any] | None:
        """Before a fork: import what the baseline's tests imported lazily and build the pydantic
        models they built (once here rather than in every child), then freeze the heap.

        Read from the engine's warm-up file at the first job that finds it: the worker starts
        before the baseline that finds these out has run (then ``_learn`` does it test by test).
        The file also names the copy's own modules the baseline's tests imported lazily: a plain
        pytest session has them loaded after the first test that needed them, while each forked
        child would import them again inside its first test (inside an ``anyio.fail_after(1)``
        there, an SDK's lazily loaded sub-clients and their pydantic models took seconds: a
        false flaky), and their functions would be missing from the index (a fresh import for
        every mutant). The zygote never loads them.
        """
        plan = self._read_warm_file()
        if plan is None:
            return None
        self.warm_file_read = True
        self.fresh_imports.use_zygote(plan.get("zygote"))
        started = time.monotonic()
        built = self._load([*plan.get("preload", []), *plan.get("targets", [])], plan.get("models", []))
        return {
            "models_built": built + self.preloaded[0],
            "seconds": time.monotonic() - started + self.preloaded[1],
            "started_thread": self.started_thread,
        }

    def _read_warm_file(self) -> dict[str, Any] | None:
        """The engine's warm-up file, read once it exists (``_preload`` and ``_warm_up`` both
        need it in an incremental run)."""
        if self.warm_plan is None:
            try:
                with open(self.config.warm, encoding="utf-8") as handle:
                    plan = json.load(handle)
            except (OSError, ValueError, KeyError):
                return None
            self.warm_plan = plan if isinstance(plan, dict) else None
        return self.warm_plan

    def _preload(self) -> None:
        """Before the first ``ready``: import and build what the warm-up file names, when the
        engine wrote it before starting the workers (an incremental run knows it from the stored
        baseline). The other workers are forked from this one right after ``ready``, so each of
        them has it without importing it again (about 0.3 s per worker on the sample agent).
        The first job still reads the file for the zygote; what it names is loaded by then. A
        module whose import starts a thread stops the preload, and this worker then forks no
        sibling (``worker_fork``): a fork copies only the thread that calls it."""
        plan = self._read_warm_file()
        if plan is None:
            return
        started = time.monotonic()
        built = self._import_and_build(
            [*plan.get("preload", []), *plan.get("targets", [])], plan.get("models", [])
        )
        self.preloaded = (built, time.monotonic() - started)

    def _learn(self, measured: dict[str, Any]) -> None:
        """After a baseline test: load what its child loaded, so that later children need not.

        Third-party modules only: the copy's modules a test imported lazily are loaded from the
        warm-up file once the measured batches are done (``_warm_up``), so that every batch
        measures the import-time lines of those modules as a plain session runs them."""
        if measured.get("modules") or measured.get("models"):
            self._load(measured.get("modules", []), measured.get("models", []))

    def _import_and_build(self, modules: list[str], models: list[str]) -> int:
        """Import ``modules`` (until one starts a thread, ever after: see ``worker_fork``) and build
        the pydantic ``models``; returns how many models were built."""
        if self.started_thread is None:
            self.started_thread = warm.import_all(modules).started_thread
        return warm.build_models(models)

    def _load(self, modules: list[str], models: list[str]) -> int:
        loaded = len(sys.modules)
        built = self._import_and_build(modules, models)
        if not built and len(sys.modules) == loaded:
            return 0  # nothing new (all loaded already): the standby, the index and the heap still hold
        self._discard_standby()  # forked before these imports: not the worker's state any more
        gc.unfreeze()  # gc.get_objects() does not see frozen objects: the index must see them all
        self.index = child_mod.build_index(dict(self.config.targets))
        self._freeze()
        return built

    def _settle_items(self) -> None:
        """Compute once, before any fork, what pytest caches lazily on each item (its location
        for the log hooks), instead of once in every child."""
        for item in self.session.items:
            try:
                item.location  # noqa: B018 - a cached property, filled here
            except Exception:  # noqa: BLE001 - a plugin's odd item: its children compute it
                pass

    @staticmethod
    def _freeze() -> None:
        gc.collect()
        gc.freeze()  # children then never walk (and copy-on-write) the worker's whole heap in a collection

    def _on_term(self, signum: int, frame: Any) -> None:
        if self.current_group:
            kill_group(self.current_group)
        self._discard_standby()
        self.reaper.kill_all()
        self.fresh_imports.stop()
        os._exit(128 + signum)

    def _parent_gone(self) -> bool:
        """The engine's end of our input pipe closed (it never writes to a busy worker)."""
        return recv(self.in_fd) is None

    def _engine_gone(self) -> None:
        """The engine died mid-job: stop what runs for it and leave."""
        if self.current_group:
            kill_group(self.current_group)
        self._discard_standby()
        self.reaper.kill_all()
        self.fresh_imports.stop()
        os._exit(1)

    # --- jobs ----------------------------------------------------------------------------
    def handle(self, job_id: str, job: JobSpec) -> JobResult:
        self.reaper.collect()  # the previous children that are gone by now
        started = time.monotonic()
        cpu_before = _cpu() + self.fresh_imports.child_cpu
        missing = [nodeid for nodeid in job.tests if nodeid not in self.items]
        mode = Mode.NONE
        if missing:
            result = JobResult.harness_error(f"tests not collected by the worker: {', '.join(missing)}")
        else:
            try:
                launcher, mode, why = choose_launcher(job, self.index, self._run_forked, self.fresh_imports)
                result = launcher.run(job)
                if mode is Mode.FRESH_IMPORT:
                    result = result.but(fresh_import_reason=why)
            except Exception:  # a failure of the worker itself (fork, pipes, disk): the job's error
                result = JobResult.harness_error(traceback.format_exc())
        cpu = _cpu() + self.fresh_imports.child_cpu - cpu_before
        return result.but(job_id=job_id, mode=mode, elapsed=time.monotonic() - started, cpu=cpu)

    def _temp_root(self) -> Path:
        """A fresh ``tmp_path`` root per child or fresh-import run, deleted right after it: a child
        leaves through ``os._exit``, so pytest's own cleanup of its numbered dirs never runs."""
        path = Path(self.config.aux) / "tmp" / f"{os.getpid()}-{self.jobs_done}"
        path.mkdir(parents=True, exist_ok=True)
        return path

    def _run_forked(self, job: JobSpec, swaps: list[tuple[Any, Any]]) -> JobResult:
        """The code-swap launcher (``launchers.CodeSwapLauncher``): run the job in the standby
        child (forked now if there is none), and fork the next job's standby while this one's
        tests run."""
        temp_root = str(self._temp_root())
        order = ChildOrder(
            tests=job.tests,
            swaps=tuple((key, marshal.dumps(code)) for key, code in swaps),
            fast=job.fast,
            measure=job.measure_baseline,
            temp_root=temp_root,
            defaults=tuple((d.key, d.values) for d in job.defaults),
            values=tuple(v.as_order() for v in job.values),
            explore=job.explore,
        ).to_wire()
        child = self._take_standby()
        try:
            read_fd = standby.start(child, order)
        except OSError:  # the standby died waiting (killed from outside): fork a new one
            self._drop(child)
            child = self._fork_standby()
            read_fd = standby.start(child, order)
        self.current_group = child.pid
        self.busy_fds = (read_fd,)
        try:
            self.standby = self._fork_standby()  # the next job's child, while this one's tests run
        except OSError:  # no process to spare now: the next job forks on demand
            self.standby = None
        try:
            return self._watch_child(child.pid, read_fd, job.timeout, job.budgets, temp_root)
        finally:
            self.current_group = None
            self.busy_fds = ()
            os.close(read_fd)

    def _take_standby(self) -> standby.StandbyChild:
        child, self.standby = self.standby, None
        return child if child is not None else self._fork_standby()

    def _fork_standby(self) -> standby.StandbyChild:
        close = [self.in_fd, self.out_fd, *self.busy_fds]
        if self.standby is not None:
            close += [self.standby.job_fd, self.standby.report_fd]
        return standby.fork_standby(close, self._child_body)

    def _discard_standby(self) -> None:
        if self.standby is not None:
            self._drop(self.standby)
            self.standby = None

    def _drop(self, child: standby.StandbyChild) -> None:
        """An unused standby: killed, the worker's pipe ends closed, reaped later."""
        standby.discard(child)
        self.reaper.defer(child.pid)

    def _child_body(self, wire: tuple[Any, ...], out_fd: int) -> None:
        """In a standby child that received its job: swap the code, run the tests, report."""
        order = ChildOrder.from_wire(wire)
        swaps = [(key, marshal.loads(code)) for key, code in order.swaps]
        defaults = [DefaultsSwap(key, values) for key, values in order.defaults]

        def prepare() -> None:
            os.environ["PYTEST_DEBUG_TEMPROOT"] = order.temp_root
            if order.explore:  # the fault ``fake_model`` inserts, where it records (``inject``)
                os.environ[EXPLORE_ENV] = order.explore
            child_mod.apply_swaps(self.index, swaps)
            for swap in defaults:
                child_mod.apply_defaults(self.index, swap.key, *swap.decoded())
            child_mod.apply_values(order.values)

        child_mod.run_child(
            out_fd,
            (),
            prepare,
            [self.items[nodeid] for nodeid in order.tests],
            self.reports,
            order.fast,
            measure={
                "sources": dict(self.config.targets),
                "root": self.config.root,
                "coverage": self.coverage,
                # an explored run's steps are not the suite's own: they stay out of the fault log
                "fault_log": "" if order.explore else os.path.join(self.config.aux, FAULT_LOG_FILE),
            }
            if order.measure
            else None,
            forked=True,
        )

    def _watch_child(
        self,
        pid: int,
        read_fd: int,
        timeout: float,
        budgets: Mapping[str, float] | None = None,
        temp_root: str | None = None,
    ) -> JobResult:
        """Follow the child's reports until it is done, dies, exceeds the job's ``timeout``, or
        burns more CPU in one test than that test's own budget.

        The per-test budget is CPU time on purpose: a mutant spinning in the first of 25 tests is
        a Timeout once it has burnt that test's allowance, not after all 25 tests' worth of CPU,
        while a test that only waits (a stall until a read timeout fails it) keeps the job's
        wall-clock budget and still gets to fail, so its kill is reported as a kill.
        """
        deadline = time.monotonic() + timeout
        budgets = budgets or {}
        tests: list[TestRecord] = []
        running: str | None = None
        overran: str | None = None
        started_cpu: float | None = None  # the child's CPU when the budgeted running test started
        status, detail = "crash", ""
        measured: dict[str, Any] | None = None
        while True:
            now = time.monotonic()
            if now >= deadline:
                status, detail = "timeout", f"no result within {timeout:.1f}s"
                break
            if started_cpu is not None and running is not None:
                used = (process_cpu(pid) or started_cpu) - started_cpu
                if used > budgets[running]:
                    status, overran = "timeout", running
                    detail = f"{running} used {used:.1f}s of CPU, over its {budgets[running]:.1f}s budget"
                    break
            wait = deadline - now if started_cpu is None else min(deadline - now, CPU_CHECK_INTERVAL)
            readable, _, _ = select.select([read_fd, self.in_fd], [], [], wait)
            if self.in_fd in readable and self._parent_gone():
                kill_group(pid)
                self.fresh_imports.stop()
                os._exit(1)
            if read_fd not in readable:
                continue
            wire = recv(read_fd)
            if wire is None:
                break
            event = child_event_from_wire(wire)
            if isinstance(event, TestStarted):
                running = event.nodeid
                started_cpu = process_cpu(pid) if running in budgets else None
            elif isinstance(event, TestFinished):
                tests.append(event.record)
                running, started_cpu = None, None
            elif isinstance(event, BaselineMeasured):
                measured = event.measured
            elif isinstance(event, ChildDone):
                status = "done"
                break
            else:
                status, detail = "error", event.traceback
                break
        if status == "crash":  # the child is gone already; how it ended is the verdict's detail
            kill_group(pid)  # and anything the tests started in its group
            _, wait_status = os.waitpid(pid, 0)
            if temp_root:
                shutil.rmtree(temp_root, ignore_errors=True)
            detail = f"the mutant's test process {describe_exit(wait_status)} without reporting"
        else:  # killed now (its whole group), its exit's teardown overlaps the next job
            self.reaper.defer(pid, temp_root)
        if status == "done":
            result = JobResult.done(tests)
        elif status == "timeout":
            result = JobResult.timed_out(tests, running, detail, overran)
        elif status == "crash":
            result = JobResult.crashed(tests, running, detail)
        else:
            result = JobResult.harness_error(detail, tests).but(running=running)
        return result.but(baseline=measured)
