"""The standby child: forked ahead, it runs exactly the job it is handed, or nothing."""

from __future__ import annotations

import os
from pathlib import Path

from mutagent.engine.harness import standby
from mutagent.engine.protocol import recv, send


def _echo_body(marker: Path):
    def body(job: dict, report_fd: int) -> None:
        marker.write_text(repr(job))
        send(report_fd, ("done", job["n"] * 2))
        os._exit(0)

    return body


def test_a_standby_runs_the_job_it_is_handed_and_reports_on_its_own_pipe(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    child = standby.fork_standby([], _echo_body(marker))
    assert not marker.exists()  # forked ahead: waits for its job

    report_fd = standby.start(child, {"n": 21})

    assert recv(report_fd) == ("done", 42)
    _, status = os.waitpid(child.pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    assert marker.read_text() == "{'n': 21}"
    os.close(report_fd)


def test_a_standby_leads_its_own_process_group(tmp_path: Path) -> None:
    child = standby.fork_standby([], _echo_body(tmp_path / "ran"))
    try:
        assert os.getpgid(child.pid) == child.pid  # a timeout kills everything its tests start
    finally:
        standby.discard(child)
        os.waitpid(child.pid, 0)


def test_a_discarded_standby_never_runs_a_job(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    child = standby.fork_standby([], _echo_body(marker))
    standby.discard(child)
    _, status = os.waitpid(child.pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == 9
    assert not marker.exists()


def test_a_standby_whose_job_pipe_closes_leaves_quietly(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    child = standby.fork_standby([], _echo_body(marker))
    os.close(child.job_fd)  # the worker went away without a job for it
    _, status = os.waitpid(child.pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    assert not marker.exists()
    os.close(child.report_fd)


def test_a_standby_does_not_hold_the_pipes_it_is_told_to_close(tmp_path: Path) -> None:
    engine_read, engine_write = os.pipe()  # stands for the worker's pipe from the engine

    def body(job: dict, report_fd: int) -> None:
        try:
            os.fstat(engine_write)
            held = True
        except OSError:
            held = False
        send(report_fd, held)
        os._exit(0)

    child = standby.fork_standby([engine_write], body)
    report_fd = standby.start(child, {})
    assert recv(report_fd) is False
    os.waitpid(child.pid, 0)
    os.close(engine_write)
    assert os.read(engine_read, 1) == b""  # no child keeps the engine's end open: EOF
    for fd in (engine_read, report_fd):
        os.close(fd)


def test_the_worker_runs_each_job_in_the_child_it_forked_during_the_previous_one(
    tmp_path: Path, monkeypatch
) -> None:
    from types import SimpleNamespace

    from mutagent.engine.harness.worker import Worker
    from mutagent.engine.messages import JobEnd, JobSpec, WorkerConfig

    engine_read, engine_write = os.pipe()
    monkeypatch.setenv("MUTAGENT_WORKER_FDS", f"{engine_read},{engine_write}")
    config = WorkerConfig({}, {}, str(tmp_path), str(tmp_path), (), str(tmp_path / "warm.json"))
    worker = Worker(SimpleNamespace(items=[], testsfailed=0), config, {}, started=0.0)

    first = worker.handle("a", JobSpec.plain([], 10.0))
    ahead = worker.standby
    assert first.status is JobEnd.DONE and ahead is not None
    second = worker.handle("b", JobSpec.plain([], 10.0))
    assert second.status is JobEnd.DONE
    # job b ran in the child forked during job a: it is the one waiting to be reaped now
    assert ahead.pid in [child.pid for child in worker.reaper.pending]
    assert worker.standby is not None and worker.standby.pid != ahead.pid

    worker._discard_standby()
    worker.reaper.collect(block=True)
    assert worker.standby is None and worker.reaper.pending == []
