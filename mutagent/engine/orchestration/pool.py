"""The engine's side of the warm workers: start them, hand out jobs, stream results back.

One event loop (``selectors``) in the engine process, no threads: each worker is a separate
process with a pipe in each direction. A worker killed by the OS is restarted and its job
re-queued once; a second death makes that job a RuntimeError and the run goes on.

Only the first worker is a new ``python -m pytest`` process: once it has collected the suite it
forks the others (``harness/worker_fork``), so the plugins are imported and the suite collected
once per run. A forked worker is not the engine's child: the pool follows it by its pipe (end of
file when it dies) and a pidfd, and kills its process group as it kills a spawned one's. A
worker that replaces a dead one is spawned.
"""

from __future__ import annotations

import bisect
import os
import select
import selectors
import signal
import socket
import subprocess
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mutagent import exitcodes
from mutagent.engine.harness.worker_fork import FORK_FD_ENV
from mutagent.engine.messages import (
    FatalKind,
    ForkWorker,
    JobResult,
    JobSpec,
    Stop,
    WorkerFatal,
    WorkerReady,
    worker_message_from_wire,
)
from mutagent.engine.protocol import parent_pid_env, recv, send
from mutagent.errors import MutagentError, UsageError

MAX_STARTUP_FAILURES = 3
WATCHDOG_GRACE = 30.0
SPREAD_AFFINITY_AT = 4  # waiting jobs of one affinity that justify warming a second worker for it


@dataclass
class Job:
    """One unit of work for a worker; ``spec`` is what travels, ``data`` stays with the engine."""

    id: str
    spec: JobSpec
    watchdog: float  # seconds after which a silent worker is presumed hung and killed
    attempts: int = 0
    data: Any = None
    # jobs sharing an affinity go to the worker that already ran one when it can (its zygote is
    # warm); another worker takes them only when it has nothing else or many are waiting
    affinity: str | None = None
    # with ``Pool.run(by_rank=True)``: the higher, the earlier a worker takes it (see ``_enqueue``)
    rank: tuple[float, ...] = ()


@dataclass
class _Worker:
    slot: int
    process: subprocess.Popen[bytes] | None  # None: forked from the first worker, not our child
    to_worker: int
    from_worker: int
    log: Path
    spawned: float
    pid: int = 0  # 0 until a forked worker's ``ready`` names it
    pidfd: int | None = None  # a forked worker's: readable once it has exited
    state: str = "starting"  # starting | idle | busy | dead
    job: Job | None = None
    deadline: float = 0.0
    startup: float = 0.0
    ready: WorkerReady | None = None  # its start-up facts
    warm: dict[str, Any] | None = None  # what it preloaded at its first job (warm-up facts)
    served: set[str] = field(default_factory=set)  # affinities of the jobs it ran


def _log_tail(path: Path, limit: int = 2000) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return text[-limit:].strip()


def _kill(worker: _Worker, sig: int = signal.SIGKILL) -> None:
    if worker.pid <= 0:  # a forked worker not yet ready; never killpg(0), the engine's own group
        return
    if worker.process is None and (worker.pidfd is None or select.select([worker.pidfd], [], [], 0)[0]):
        return  # a forked worker that has exited: init reaped it, its pid may be another's now
    try:
        os.killpg(worker.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _wait(worker: _Worker, timeout: float) -> None:
    """Wait up to ``timeout`` seconds for the worker to exit (and reap it if it is our child)."""
    if worker.process is not None:
        try:
            worker.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pass
    elif worker.pidfd is not None:
        select.select([worker.pidfd], [], [], timeout)


class Pool:
    """``size`` warm workers running ``command`` in ``cwd``."""

    def __init__(
        self,
        size: int,
        command: list[str],
        cwd: Path,
        env: dict[str, str],
        log_dir: Path,
        before_restart: Callable[[], None] | None = None,
    ) -> None:
        """``before_restart`` runs before a dead worker is replaced (the engine repairs the copy
        there: a mutant that deleted a file of the copy must not break every later start)."""
        self.size = size
        self.command = command
        self.cwd = cwd
        self.env = env
        self.log_dir = log_dir
        self.before_restart = before_restart
        self.on_assign: Callable[[Job], None] | None = None
        self.by_rank = False  # ``run``: the queue ordered by ``Job.rank``
        self.selector = selectors.DefaultSelector()
        self.workers: list[_Worker] = []
        self.startup_failures = 0
        self.spawn_count = 0
        self.restarts = 0
        self.startup_times: list[float] = []
        self.startup_cpu: list[float] = []  # CPU seconds each worker spent starting (imports, collection)
        self.forked = 0  # workers forked from the first one instead of started as processes
        self._template: _Worker | None = None  # the worker that forks the others once it is ready
        self._fork_socket: socket.socket | None = None  # hands it the far ends of their pipes
        self._to_fork: list[int] = []  # slots it is to fork

    # --- processes ---------------------------------------------------------------------
    def start(self) -> None:
        """Start the first worker; the others are forked from it once it has collected."""
        if self.size == 1:
            self.workers.append(self._spawn(0))
            return
        self._fork_socket, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._template = self._spawn(0, fork_fd=theirs.fileno())
        finally:
            theirs.close()
        self.workers.append(self._template)
        self._to_fork = list(range(1, self.size))

    def _fork_siblings(self) -> None:
        """Ask the ready first worker to fork the others; each gets two new pipes of its own."""
        template, fork_socket, slots = self._template, self._fork_socket, self._to_fork
        self._template, self._fork_socket, self._to_fork = None, None, []
        assert template is not None and fork_socket is not None
        for slot in slots:
            to_read, to_write = os.pipe()
            from_read, from_write = os.pipe()
            self.spawn_count += 1
            log = self.log_dir / f"worker-{slot}-{self.spawn_count}.log"
            try:  # the fds first: the worker reads them when the message arrives
                socket.send_fds(fork_socket, [b"f"], [to_read, from_write])
                send(template.to_worker, ForkWorker(slot, str(log)).to_wire())
            except OSError:
                pass  # the new worker's pipe closes at once: it is replaced by a spawned one
            finally:
                os.close(to_read)
                os.close(from_write)
            worker = _Worker(slot, None, to_write, from_read, log, time.monotonic())
            self.selector.register(from_read, selectors.EVENT_READ, worker)
            self.workers.append(worker)
            self.forked += 1
        fork_socket.close()

    def _spawn_unforked(self) -> None:
        """The first worker died before forking the others: start them as processes."""
        slots = self._to_fork
        if self._fork_socket is not None:
            self._fork_socket.close()
        self._template, self._fork_socket, self._to_fork = None, None, []
        for slot in slots:
            self.workers.append(self._spawn(slot))

    def _spawn(self, slot: int, fork_fd: int | None = None) -> _Worker:
        to_read, to_write = os.pipe()
        from_read, from_write = os.pipe()
        self.spawn_count += 1
        log = self.log_dir / f"worker-{slot}-{self.spawn_count}.log"
        env = dict(self.env)
        env["MUTAGENT_WORKER_FDS"] = f"{to_read},{from_write}"
        env["MUTAGENT_WORKER_SLOT"] = str(slot)
        env.update(parent_pid_env())
        passed = (to_read, from_write)
        if fork_fd is not None:
            env[FORK_FD_ENV] = str(fork_fd)
            passed += (fork_fd,)
        with open(log, "wb") as handle:
            process = subprocess.Popen(
                self.command,
                cwd=self.cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=handle,
                stderr=subprocess.STDOUT,
                pass_fds=passed,
                start_new_session=True,
            )
        os.close(to_read)
        os.close(from_write)
        worker = _Worker(slot, process, to_write, from_read, log, time.monotonic(), pid=process.pid)
        self.selector.register(from_read, selectors.EVENT_READ, worker)
        return worker

    def _retire(self, worker: _Worker) -> None:
        worker.state = "dead"
        try:
            self.selector.unregister(worker.from_worker)
        except (KeyError, ValueError):
            pass
        for fd in (worker.to_worker, worker.from_worker):
            try:
                os.close(fd)
            except OSError:
                pass
        _kill(worker)
        _wait(worker, 5)
        if worker.pidfd is not None:
            os.close(worker.pidfd)
            worker.pidfd = None

    def close(self, force: bool = False) -> None:
        """Stop every worker: politely after a finished run, SIGTERM then SIGKILL when interrupted."""
        live = [w for w in self.workers if w.state != "dead"]
        for worker in live:
            if force:
                _kill(worker, signal.SIGTERM)
            else:
                try:
                    send(worker.to_worker, Stop().to_wire())
                except OSError:
                    pass
        deadline = time.monotonic() + (1.0 if force else 3.0)
        for worker in live:
            _wait(worker, max(0.05, deadline - time.monotonic()))
            self._retire(worker)
        if self._fork_socket is not None:
            self._fork_socket.close()
            self._fork_socket = None
        self.selector.close()

    def wait_ready(self) -> None:
        """Block until every worker has started (collected the suite); a worker that cannot
        start raises as it would in ``run``."""
        idle: deque[Job] = deque()
        while any(w.state == "starting" for w in self.workers):
            for key, _ in self.selector.select(timeout=0.25):
                self._on_readable(key.data, idle, lambda job, result: None)

    # --- the loop ------------------------------------------------------------------------
    def run(
        self,
        jobs: list[Job],
        on_result: Callable[[Job, JobResult], list[Job] | None],
        on_tick: Callable[[], None] | None = None,
        on_assign: Callable[[Job], None] | None = None,
        split: Callable[[Job, int], list[Job] | None] | None = None,
        by_rank: bool = False,
    ) -> None:
        """Run every job; ``on_result`` gets each worker's result (or a synthetic ``worker_died``)
        and may return follow-up jobs, which run next (jobs that had to wait for that result), or
        with ``by_rank`` take their place by ``Job.rank`` among the waiting jobs (highest first,
        in arrival order among equals); ``on_assign`` may still adjust a job's spec the moment a
        worker takes it; ``split`` may cut a job a worker takes into parts when fewer jobs wait
        than there are other idle workers (the first part runs there, the others on those
        workers)."""
        self.on_assign = on_assign
        self.by_rank = by_rank
        queue: deque[Job] = deque(sorted(jobs, key=lambda job: job.rank, reverse=True) if by_rank else jobs)
        while queue or any(w.state == "busy" for w in self.workers):
            for worker in self.workers:
                if worker.state == "idle" and queue:
                    job = self._pick(worker, queue)
                    if job is not None and split is not None:
                        job = self._split(worker, job, queue, split)
                    if job is not None:
                        self._assign(worker, job)
            for key, _ in self.selector.select(timeout=0.25):
                self._on_readable(key.data, queue, on_result)
            now = time.monotonic()
            for worker in list(self.workers):
                if worker.state == "busy" and now > worker.deadline:
                    _kill(worker)  # the worker enforces timeouts itself; silence this long means it hangs
                    self._on_death(worker, queue, on_result, "stopped answering")
            if on_tick:
                on_tick()

    def _enqueue(self, queue: deque[Job], follow: list[Job]) -> None:
        """Follow-up jobs: next in line, or (``by_rank``) each after the waiting jobs ranked at
        least as high, so a long job released late still starts before short ones."""
        if not self.by_rank:
            queue.extendleft(reversed(follow))
            return
        for job in follow:  # the queue is in rank order: find the place by bisection
            queue.insert(bisect.bisect_left(queue, True, key=lambda waiting: waiting.rank < job.rank), job)

    def _pick(self, worker: _Worker, queue: deque[Job]) -> Job | None:
        """The first queued job this worker should run (removed from ``queue``), or ``None`` to
        leave it idle: jobs of an affinity another live worker serves are left to that worker
        unless this one has nothing else to do and enough of them wait to pay for warming up."""
        claimed = {a for w in self.workers if w is not worker and w.state != "dead" for a in w.served}
        waiting: dict[str, int] = {}
        for job in queue:
            if job.affinity is None or job.affinity in worker.served or job.affinity not in claimed:
                queue.remove(job)
                return job
            waiting[job.affinity] = waiting.get(job.affinity, 0) + 1
        for job in queue:
            if job.affinity is not None and waiting[job.affinity] >= SPREAD_AFFINITY_AT:
                queue.remove(job)
                return job
        return None

    def _split(
        self, worker: _Worker, job: Job, queue: deque[Job], split: Callable[[Job, int], list[Job] | None]
    ) -> Job:
        """``job``, or its first part when other workers are idle and outnumber the waiting jobs
        (its other parts go first in the queue, for them). Only idle workers count: a busy one
        may stay busy longer than the whole job, and a part waiting for it would cost a fork for
        nothing."""
        spare = sum(1 for w in self.workers if w is not worker and w.state == "idle") - len(queue)
        if spare < 1:
            return job
        parts = split(job, spare + 1)
        if not parts:
            return job
        for part in parts:
            part.rank = part.rank or job.rank
        queue.extendleft(reversed(parts[1:]))
        return parts[0]

    def _assign(self, worker: _Worker, job: Job) -> None:
        if self.on_assign is not None:
            self.on_assign(job)
        worker.state, worker.job = "busy", job
        if job.affinity is not None:
            worker.served.add(job.affinity)
        worker.deadline = time.monotonic() + job.watchdog + WATCHDOG_GRACE
        try:
            send(worker.to_worker, job.spec.to_wire(job.id))
        except OSError:
            pass  # its death shows up as end-of-file on the other pipe

    def _on_readable(
        self, worker: _Worker, queue: deque[Job], on_result: Callable[[Job, JobResult], list[Job] | None]
    ) -> None:
        message = recv(worker.from_worker)
        if message is None:
            self._on_death(worker, queue, on_result, None)
            return
        event = worker_message_from_wire(message)
        if isinstance(event, WorkerReady):
            worker.state, worker.ready = "idle", event
            worker.startup = time.monotonic() - worker.spawned
            if worker.process is None:
                self._follow(worker, event.pid)
            self.startup_times.append(worker.startup)
            self.startup_cpu.append(event.cpu)
            self.startup_failures = 0
            if worker is self._template:  # before its first job, which would end its forking
                self._fork_siblings()
        elif isinstance(event, WorkerFatal):
            self._fatal(worker, event)
        elif isinstance(event, JobResult) and worker.job is not None:
            result = event
            if result.warm is not None:
                worker.warm = result.warm
            job = worker.job
            worker.state, worker.job = "idle", None
            self._enqueue(queue, on_result(job, result) or [])

    @staticmethod
    def _follow(worker: _Worker, pid: int) -> None:
        """Take a forked worker's pid and a pidfd on it (its exit is seen without being its parent)."""
        if pid <= 0:
            return
        try:
            worker.pidfd = os.pidfd_open(pid)
        except (OSError, AttributeError):  # gone already, or no pidfd here: kill by group only
            return
        worker.pid = pid

    def _fatal(self, worker: _Worker, fatal: WorkerFatal) -> None:
        self._retire(worker)
        if fatal.kind is FatalKind.SHADOWED and fatal.shadowed:
            first = fatal.shadowed[0]
            raise UsageError(
                f"module {first.module} is imported from {first.actual} instead of the isolated copy "
                f"{first.expected} (an installed copy of the target shadows it; uninstall it or run "
                "mutagent from another environment)"
            )
        raise MutagentError(
            f"a worker could not start: {fatal.message}: {_log_tail(worker.log, 500)}",
            exitcodes.INTERNAL_ERROR,
        )

    def _on_death(
        self,
        worker: _Worker,
        queue: deque[Job],
        on_result: Callable[[Job, JobResult], list[Job] | None],
        why: str | None,
    ) -> None:
        was_starting = worker.state == "starting"
        job = worker.job
        self._retire(worker)
        if worker is self._template:
            self._spawn_unforked()
        code = worker.process.returncode if worker.process is not None else None
        if why:
            how = why
        elif worker.process is None:  # not our child: its exit status is not ours to read
            how = "died (its pipe to the engine closed)"
        elif code is not None and code < 0:
            how = f"was killed by signal {signal.Signals(-code).name}"
        else:
            how = f"exited with code {code}"
        if was_starting:
            self.startup_failures += 1
            if self.startup_failures >= MAX_STARTUP_FAILURES:
                raise MutagentError(
                    f"worker processes keep dying at startup (last one {how}): {_log_tail(worker.log, 800)}",
                    exitcodes.INTERNAL_ERROR,
                )
        self.restarts += 1
        if self.before_restart is not None:
            self.before_restart()
        self.workers[self.workers.index(worker)] = self._spawn(worker.slot)
        if job is None:
            return
        job.attempts += 1
        if job.attempts < 2:
            queue.appendleft(job)
        else:
            follow = on_result(
                job, JobResult.worker_died(job.id, f"the worker process {how} while running this job, twice")
            )
            self._enqueue(queue, follow or [])

    def ready_info(self) -> list[WorkerReady]:
        """The ``ready`` message of every live worker (start-up facts: collection, import lines)."""
        return [w.ready for w in self.workers if w.state != "dead" and w.ready is not None]

    def warm_info(self) -> list[dict[str, Any]]:
        """What every live worker preloaded at its first job (``JobResult.warm``)."""
        return [w.warm for w in self.workers if w.state != "dead" and w.warm is not None]

    def worker_startup(self) -> float:
        """Longest observed worker start (interpreter + imports + collection), in seconds."""
        return max(self.startup_times, default=0.0)
