"""A mutant child forked ahead of its job, so that the fork is not between two mutants.

Forking a worker that imported an SDK costs milliseconds (page tables of its whole heap: about
2 ms at 76 MB, 6 ms at 230 MB). The worker's state does not change from one code-swap job to the
next (it never runs a test itself), so the child of the next job can be forked while the
current job's tests run: it leads its own process group, dies with the worker, and blocks on its
job pipe until the worker sends it the job (which tests, which code swaps, where its
``tmp_path`` lives). A child forked ahead is exactly the child the worker would have forked on
demand, only earlier; whenever the worker's state changes (modules imported after a baseline
test, the live-function index rebuilt), the standby is discarded and forked again.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from mutagent.engine.harness.procs import kill_group
from mutagent.engine.protocol import become_forked_child, recv, send


@dataclass(frozen=True)
class StandbyChild:
    pid: int
    job_fd: int  # the worker writes the job here, once
    report_fd: int  # the worker reads the child's reports here


def fork_standby(close_fds: Iterable[int], body: Callable[[Any, int], None]) -> StandbyChild:
    """Fork a child that waits for one job on its pipe, then runs ``body(job, report_fd)``.

    ``close_fds``: the worker's pipe ends that the child must not hold (its engine pipe, the
    pipes of other children). ``body`` must not return; if it does, the child exits 70. A child
    whose job pipe closes without a job exits quietly.
    """
    close = list(close_fds)
    job_read, job_write = os.pipe()
    report_read, report_write = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the standby child (tested through the worker)
        status = 70
        try:
            os.close(job_write)
            os.close(report_read)
            become_forked_child(close, parent)
            job = recv(job_read)
            os.close(job_read)
            if job is None:
                status = 0
            else:
                body(job, report_write)
        finally:
            os._exit(status)
    os.close(job_read)
    os.close(report_write)
    try:
        os.setpgid(pid, pid)  # also done by the child: whichever runs first
    except OSError:
        pass
    return StandbyChild(pid, job_write, report_read)


def start(child: StandbyChild, job: Any) -> int:
    """Hand ``child`` its job; returns the fd of its reports (the job pipe is closed here)."""
    try:
        send(child.job_fd, job)
    finally:
        os.close(child.job_fd)
    return child.report_fd


def discard(child: StandbyChild) -> None:
    """Kill an unused standby (its whole group) and close the worker's ends of its pipes; the
    caller reaps it."""
    kill_group(child.pid)
    for fd in (child.job_fd, child.report_fd):
        try:
            os.close(fd)
        except OSError:
            pass
