"""Workers forked from the first one (issue 15): one pytest start-up per run, same guarantees.

Only the first worker is a new ``python -m pytest`` process; the others are forked from it once it
has collected (``harness/worker_fork``). A forked worker is not the engine's child, so the
guarantees a spawned worker has through ``Popen`` and ``PR_SET_PDEATHSIG`` are checked here for
it: it serves jobs, a SIGKILL of it is a restart with the job re-queued once, it stops with the
pool, and it dies with the engine.
"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest
from rich.console import Console
from testkit.engine_targets import write_target

from mutagent.config import EngineConfig
from mutagent.engine.messages import JobEnd, JobResult, JobSpec
from mutagent.engine.orchestration.pool import Job, Pool
from mutagent.engine.orchestration.runner import Engine
from mutagent.engine.selection.discover import discover

TARGET = {
    "calc/__init__.py": "",
    "calc/core.py": """
        def add(a, b):
            return a + b
    """,
    "tests/test_calc.py": """
        import os
        import time


        def test_add():
            from calc.core import add

            assert add(1, 2) == 3


        def test_slow():
            time.sleep(1.0)


        def test_where():
            with open(os.environ["WHERE_FILE"], "a") as log:  # the worker that forked this child
                log.write(f"{os.getppid()}\\n")
    """,
}


def started_pool(root: Path, workers: int = 2) -> tuple[Engine, Pool]:
    config = EngineConfig(root=root, workers=workers, pass_env=["WHERE_FILE"])
    engine = Engine(config, Console(file=io.StringIO()))
    engine.target = discover(engine.root, [])
    engine._read_files()
    pool = engine._ensure_pool(workers, measure=True)
    pool.wait_ready()
    return engine, pool


def run_jobs(pool: Pool, jobs: list[Job]) -> dict[str, JobResult]:
    results: dict[str, JobResult] = {}

    def on_result(job: Job, result: JobResult) -> None:
        results[job.id] = result

    pool.run(jobs, on_result)
    return results


def job(job_id: str, tests: list[str], timeout: float = 30.0) -> Job:
    return Job(job_id, JobSpec.plain(tests, timeout), watchdog=timeout)


def gone(pids: list[int], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not any(psutil.pid_exists(p) and psutil.Process(p).status() != "zombie" for p in pids):
            return True
        time.sleep(0.1)
    return False


@pytest.mark.parametrize("workers", [2, 3])
def test_the_other_workers_are_forked_from_the_first_and_serve_jobs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    root = write_target(tmp_path / "t", TARGET)
    where = tmp_path / "where"
    monkeypatch.setenv("WHERE_FILE", str(where))
    engine, pool = started_pool(root, workers)
    try:
        first, *others = pool.workers
        assert len(others) == workers - 1 and pool.forked == workers - 1
        assert first.process is not None and all(w.process is None for w in others)
        ours = {c.pid for c in psutil.Process().children()}
        for other in others:
            assert other.ready is not None and first.ready is not None
            assert other.ready.forked and other.ready.collected == first.ready.collected
            assert other.pid not in ours  # nobody's child to reap
            assert psutil.Process(other.pid).cmdline() == psutil.Process(first.pid).cmdline()
            assert os.getpgid(other.pid) == other.pid  # a process group of its own, killed as one
        jobs = [job(f"j{i}", ["tests/test_calc.py::test_where"]) for i in range(4 * workers)]
        results = run_jobs(pool, jobs)
        assert {r.status for r in results.values()} == {JobEnd.DONE}, [r.detail for r in results.values()]
        assert all(r.tests and r.tests[0].outcome == "passed" for r in results.values())
        assert {int(line) for line in where.read_text().split()} == {w.pid for w in pool.workers}
    finally:
        engine._shutdown(force=False)
    assert gone([w.pid for w in [first, *others]], 5.0)


def test_a_sigkilled_forked_worker_is_replaced_and_its_job_requeued_once(tmp_path: Path) -> None:
    root = write_target(tmp_path / "t", TARGET)
    engine, pool = started_pool(root)
    try:
        forked = pool.workers[1]
        slow = [job(f"slow{i}", ["tests/test_calc.py::test_slow"]) for i in range(2)]  # one per worker
        killed = False

        def kill_when_busy() -> None:
            nonlocal killed
            if not killed and forked.state == "busy":
                os.kill(forked.pid, signal.SIGKILL)
                killed = True

        results: dict[str, JobResult] = {}
        quick = [job(f"q{i}", ["tests/test_calc.py::test_add"]) for i in range(6)]
        pool.run([*slow, *quick], lambda j, r: results.__setitem__(j.id, r), on_tick=kill_when_busy)
        assert killed and pool.restarts == 1
        assert set(results) == {j.id for j in [*slow, *quick]}
        assert {r.status for r in results.values()} == {JobEnd.DONE}  # the lost job ran again
        replacement = pool.workers[1]
        # spawned (a process of the engine's own), not forked; when the other worker ran every job
        # left, the replacement may still be starting as the run ends (a loaded machine)
        assert replacement.process is not None and replacement.state in ("starting", "idle")
        assert gone([forked.pid], 5.0)
    finally:
        engine._shutdown(force=False)


ENGINE_SCRIPT = """
import io, sys, time
from pathlib import Path
from rich.console import Console
from mutagent.config import EngineConfig
from mutagent.engine.orchestration.runner import Engine
from mutagent.engine.selection.discover import discover

engine = Engine(EngineConfig(root=Path(sys.argv[1]), workers=2), Console(file=io.StringIO()))
engine.target = discover(engine.root, [])
engine._read_files()
pool = engine._ensure_pool(2, measure=True)
pool.wait_ready()
print(" ".join(str(w.pid) for w in pool.workers), flush=True)
time.sleep(600)
"""


def test_a_forked_worker_dies_with_the_engine(tmp_path: Path) -> None:
    """The engine SIGKILLed: no worker outlives it, the forked one included (not its child, so
    no parent-death signal: it sees end-of-file on the pipe only the engine wrote to)."""
    root = write_target(tmp_path / "t", TARGET)
    script = tmp_path / "engine.py"
    script.write_text(textwrap.dedent(ENGINE_SCRIPT), encoding="utf-8")
    engine = subprocess.Popen(
        [sys.executable, str(script), str(root)], stdout=subprocess.PIPE, cwd=tmp_path, text=True
    )
    try:
        assert engine.stdout is not None
        pids = [int(p) for p in engine.stdout.readline().split()]
        assert len(pids) == 2 and all(psutil.pid_exists(p) for p in pids)
        engine.kill()
        engine.wait(timeout=10)
        assert gone(pids, 10.0), [psutil.Process(p).cmdline() for p in pids if psutil.pid_exists(p)]
    finally:
        if engine.poll() is None:
            engine.kill()
