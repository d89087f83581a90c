"""A warm worker forks its siblings: the plugins are imported and the suite collected once per run.

Every ``python -m pytest`` start-up pays for the interpreter, every plugin installed where the
tests run (hypothesis, anyio, pytest-cov... seconds in a user's environment) and the suite's
collection. So the engine starts one worker only; once that worker has collected, the engine
asks it (a ``fork`` message) to fork each other worker. The engine creates the new worker's two
pipes itself and hands their far ends over an AF_UNIX socket (``MUTAGENT_WORKER_FORK_FD``,
``socket.send_fds``), so each worker keeps a private pipe pair with the engine, as a spawned
one has.

The new worker is forked twice (the middle process exits at once) so that it is nobody's child
to reap: the engine supervises it by its pipe (end-of-file when it dies) and its pid. It leads a
session of its own, as a spawned worker does (the engine kills its process group), and it dies
with the engine through that pipe: the engine is the only writer of its input pipe, so the
engine's death is end-of-file there, which the worker watches while idle and while a job runs
(``PR_SET_PDEATHSIG`` cannot name the engine for a process that is not its child).

A worker forks siblings only before its first job: then it has no zygote and no per-job
state, so the sibling is a worker exactly as a new ``pytest`` process would be after collection
(and the warm-up imports a run knew before it started, ``Worker._preload``), without paying for
it. Nor after an import started a thread: a fork copies only the thread that calls it. Asked
later, it closes the handed fds without forking; the engine sees the new worker's pipe close at
once and spawns a process instead.
"""

from __future__ import annotations

import os
import socket
import sys
import traceback
from typing import Any

from mutagent.engine.messages import ForkWorker, WorkerReady
from mutagent.engine.protocol import send

FORK_FD_ENV = "MUTAGENT_WORKER_FORK_FD"

# taken out of the environment when the worker plugin loads, before any conftest or test sees it
_named = os.environ.pop(FORK_FD_ENV, "")
_socket: socket.socket | None = socket.socket(fileno=int(_named)) if _named.isdigit() else None


def fork_sibling(worker: Any, message: ForkWorker) -> None:
    """Serve a ``fork`` request of the engine. Returns in both processes: in this worker at once,
    in the sibling once it has taken over the handed pipes and sent its own ``ready``."""
    if _socket is None:
        return
    try:
        _, fds, _, _ = socket.recv_fds(_socket, 1, 2)  # one byte: exactly this request's two fds
    except OSError:
        return
    busy = worker.jobs_done or worker.warm_file_read or worker.current_group
    if len(fds) != 2 or busy or worker.started_thread:
        for fd in fds:
            os.close(fd)
        return
    in_fd, out_fd = fds
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    try:
        middle = os.fork()
    except OSError:  # no process to spare: the engine sees the new worker's pipe close and spawns one
        middle = -1
    if middle == 0:
        try:
            if os.fork() != 0:
                os._exit(0)
            os.setsid()  # a group of its own, as a spawned worker has: the engine kills it by group
            _become_sibling(worker, message, in_fd, out_fd)
        except BaseException:  # noqa: B036 - a half-made sibling must not return into pytest
            traceback.print_exc()
            os._exit(70)
        return
    os.close(in_fd)
    os.close(out_fd)
    if middle > 0:
        os.waitpid(middle, 0)


def _become_sibling(worker: Any, message: ForkWorker, in_fd: int, out_fd: int) -> None:
    """Turn the forked copy of ``worker`` into a worker of its own: its pipes, its log, its
    fresh-import runner, its slot; then announce it as a started worker does."""
    from mutagent.engine.harness.fresh_import import FreshImportRunner
    from mutagent.engine.harness.zygote_client import ParentWatch

    global _socket
    os.close(worker.in_fd)  # the engine must see the first worker's death, not a copy's open end
    os.close(worker.out_fd)
    if _socket is not None:
        _socket.close()
        _socket = None
    _own_output(worker.session, message.log)
    os.environ["MUTAGENT_WORKER_FDS"] = f"{in_fd},{out_fd}"
    os.environ["MUTAGENT_WORKER_SLOT"] = str(message.slot)
    worker.in_fd, worker.out_fd = in_fd, out_fd
    runner = worker.fresh_imports
    worker.fresh_imports = FreshImportRunner(
        worker.config, runner.env, worker.startup, ParentWatch(in_fd, worker._engine_gone)
    )
    ready = WorkerReady(
        pid=os.getpid(),
        collected=tuple(worker.items),
        startup=worker.startup,
        cpu=0.0,  # a fork costs no start-up of its own
        live_functions=len(worker.index),
        forked=True,
    )
    send(out_fd, ready.to_wire())


def _own_output(session: Any, log: str) -> None:
    """Write to this worker's own log, with pytest's global capture restarted on fresh files:
    the copied capture would share its temporary files (and their offsets) with the first worker."""
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    capman = session.config.pluginmanager.getplugin("capturemanager")
    capturing = getattr(capman, "_global_capturing", None)
    try:
        if capturing is None:
            raise LookupError
        state, stdin_suspended = capturing._state, capturing._in_suspended
        capman.stop_global_capturing()  # puts the inherited descriptors 0-2 back
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        capman.start_global_capturing()
        if state == "suspended":
            capman.suspend_global_capture(in_=stdin_suspended)
    except (LookupError, AttributeError, OSError, ValueError):
        os.dup2(fd, 1)
        os.dup2(fd, 2)
    os.close(fd)
