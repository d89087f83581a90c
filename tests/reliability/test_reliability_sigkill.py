"""SIGKILL at random moments, ten times in a row, then resume (issue 7): the final results equal
an uninterrupted run's, mutant by mutant.

The kill moments are drawn from a seeded generator over the first 60% of an uninterrupted run's
length (each resumed run has less left to do), so they land anywhere: while Python starts, during
the baseline, the control run, a mutant, a store write, or after the run finished. After every
kill the store must hold only results the uninterrupted run agrees with, never fewer than before
(a kill loses nothing already stored), and no process of the killed run may outlive it. Two
smaller tests pin down what a kill at an unlucky moment leaves behind: a baseline process, and
the killed run's workspace.
"""

from __future__ import annotations

import io
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path

import psutil
import pytest
from rich.console import Console
from testkit.engine_targets import ENGINE_TARGETS, HandMutant, HandMutants, write_target

from mutagent.config import EngineConfig
from mutagent.engine.orchestration.runner import Engine, RunStats
from mutagent.store import load_run_data

SEED = 20240607
KILLS = 10
CORE = "calc/core.py"
TARGET = {
    "calc/__init__.py": "",
    CORE: """
        def add(a, b):
            return a + b


        def sub(a, b):
            return a - b


        def mul(a, b):
            return a * b


        def clamp(x, lo, hi):
            return max(lo, min(x, hi))


        def spin(n):
            total = 0
            for i in range(n):
                total += i
            return total
    """,
    # each test takes a little time so that results are stored one by one, between the kills
    "tests/test_calc.py": """
        import time

        import pytest

        from calc.core import add, clamp, mul, spin, sub


        @pytest.fixture(autouse=True)
        def pace():
            time.sleep(0.05)


        def test_add():
            assert add(2, 2) == 4


        def test_sub():
            assert sub(5, 3) == 2


        def test_mul():
            assert mul(3, 4) == 12


        def test_clamp():
            assert clamp(5, 0, 3) == 3
            assert clamp(-1, 0, 3) == 0


        def test_all_at_once():
            assert (add(2, 2), sub(3, 1), mul(2, 5), clamp(9, 0, 3)) == (4, 2, 10, 3)


        def test_spin():
            assert spin(4) == 6
    """,
}
# 8 killed, 3 surviving, 1 timeout; the hang has the fewest covering tests, so it tends to run last
SPECS = [
    HandMutant(CORE, "return a + b", "return a - b"),
    HandMutant(CORE, "return a + b", "return a * b"),  # survives: both tests add 2 and 2
    HandMutant(CORE, "return a - b", "return b - a"),
    HandMutant(CORE, "return a - b", "return a - b + 0"),  # equivalent
    HandMutant(CORE, "return a * b", "return a ** b"),
    HandMutant(CORE, "return a * b", "return a * b * 1"),  # equivalent
    HandMutant(CORE, "max(lo, min(x, hi))", "min(lo, max(x, hi))"),
    HandMutant(CORE, "max(lo, min(x, hi))", "max(lo, x)"),
    HandMutant(CORE, "max(lo, min(x, hi))", "min(x, hi)"),
    HandMutant(CORE, "total = 0", "total = 1"),
    HandMutant(CORE, "total += i", "total -= i"),
    HandMutant(CORE, "for i in range(n):", "for i in iter(int, 1):"),  # hangs: Timeout
]
EXPECTED_STATUSES = ["Killed"] * 8 + ["Survived"] * 3 + ["Timeout"]
Summary = dict[str, tuple[str, tuple[str, ...]]]  # mutant id -> (status, killed_by)


def start(root: Path, spec: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, ENGINE_TARGETS, str(spec), "run", "--workers", "1"]
        + ["--timeout-constant", "3", str(root)],  # room for a loaded machine; the hang costs 3.5 s
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def initialised(store: Path) -> bool:
    """Whether the run got as far as creating the store's tables (a kill may come before)."""
    if not store.exists():
        return False
    with closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True)) as db:
        return db.execute("SELECT 1 FROM sqlite_master WHERE name = 'results'").fetchone() is not None


def summary(root: Path) -> Summary:
    """What a report shows per mutant: its status and the tests that killed it."""
    if not initialised(root / ".mutagent" / "store.sqlite"):
        return {}
    data = load_run_data(root)
    return {i: (r.status.value, tuple(sorted(r.killed_by))) for i, r in data.results.items()}


def descendants(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return []


def survivors(processes: list[psutil.Process], timeout: float) -> list[psutil.Process]:
    """Those of ``processes`` still running (zombies aside) after waiting up to ``timeout`` s."""
    _, alive = psutil.wait_procs(processes, timeout=timeout)
    running = []
    for process in alive:
        try:
            if process.status() != psutil.STATUS_ZOMBIE:
                running.append(process)
        except psutil.NoSuchProcess:
            continue
    return running


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_ten_random_sigkills_then_resume_equal_an_uninterrupted_run(tmp_path: Path) -> None:
    spec = tmp_path / "mutants.json"
    spec.write_text(HandMutants(SPECS).to_json(), encoding="utf-8")

    reference_root = write_target(tmp_path / "reference" / "calc-project", TARGET)
    started = time.monotonic()
    reference_run = start(reference_root, spec)
    _, stderr = reference_run.communicate(timeout=300)
    wall = time.monotonic() - started
    assert reference_run.returncode == 0, stderr.decode(errors="replace")
    reference = summary(reference_root)
    assert len(reference) == len(SPECS)
    assert sorted(status for status, _ in reference.values()) == EXPECTED_STATUSES

    root = write_target(tmp_path / "interrupted" / "calc-project", TARGET)  # same relative paths: same ids
    rng = random.Random(SEED)
    killed: dict[int, list[psutil.Process]] = {}  # killed run's pid -> its processes at the kill
    stored = 0
    for cycle in range(KILLS):
        delay = rng.uniform(0.05, 0.6 * wall)
        where = f"cycle {cycle}, SIGKILL after {delay:.2f}s"
        process = start(root, spec)
        try:
            process.wait(timeout=delay)  # finished before the kill: nothing left to interrupt
        except subprocess.TimeoutExpired:
            killed[process.pid] = descendants(process.pid)
            process.send_signal(signal.SIGKILL)
        _, stderr = process.communicate()
        assert process.returncode in (0, -signal.SIGKILL), (where, stderr.decode(errors="replace"))
        now = summary(root)
        assert {i: reference[i] for i in now} == now, where  # only results the reference agrees with
        assert len(now) >= stored, where  # a kill loses nothing already stored
        stored = len(now)

    final = start(root, spec)
    _, stderr = final.communicate(timeout=300)
    assert final.returncode == 0, stderr.decode(errors="replace")
    assert summary(root) == reference
    assert (
        survivors([p for group in killed.values() for p in group], timeout=10) == []
    )  # none outlives its run


SLOW_TARGET = {
    "calc/__init__.py": "",
    "calc/core.py": "def one():\n    return 1\n",
    "tests/test_slow.py": """
        import time

        from calc.core import one


        def test_slow():
            time.sleep(15)  # the whole suite: what an orphaned baseline would go on running
            assert one() == 1
    """,
}


def is_baseline(process: psutil.Process) -> bool:
    """A process that runs the baseline: a worker (it measures the suite in forked children) or
    the plain baseline run."""
    try:
        command = process.cmdline()
    except psutil.Error:
        return False
    return (
        "mutagent.engine.harness.worker_plugin" in command
        or "mutagent.engine.harness.baseline_plugin" in command
    )


@pytest.mark.timeout(120)
def test_a_sigkill_while_the_baseline_starts_leaves_no_orphan(tmp_path: Path) -> None:
    root = write_target(tmp_path / "slow" / "calc-project", SLOW_TARGET)
    spec = tmp_path / "mutants.json"
    spec.write_text(HandMutants([HandMutant("calc/core.py", "return 1", "return 2")]).to_json())
    process = start(root, spec)
    baseline: list[psutil.Process] = []
    try:
        while not baseline:  # the moment the baseline process exists, before pytest has started
            if process.poll() is not None:
                pytest.fail(f"the run ended before its baseline process was seen: {process.communicate()}")
            baseline = [p for p in descendants(process.pid) if is_baseline(p)]
            time.sleep(0.01)
        baseline = descendants(process.pid)  # every process the run has started by now
        process.send_signal(signal.SIGKILL)
        process.communicate()
        assert survivors(baseline, timeout=5) == []  # its test alone sleeps 15 s
    finally:
        for orphan in baseline:  # ours: do not leave it running if the assertion failed
            try:
                orphan.kill()
            except psutil.Error:
                pass


def test_a_run_with_nothing_left_to_do_still_removes_a_killed_runs_workspace(tmp_path: Path) -> None:
    root = write_target(tmp_path / "calc-project", TARGET)
    specs = [HandMutant(CORE, "return a + b", "return a - b")]

    def engine_run() -> RunStats:
        config = EngineConfig(root=root, workers=1, timeout_constant=4.0)
        return Engine(config, Console(file=io.StringIO()), HandMutants(specs)).run()

    engine_run()
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # its pid now names no process, like a SIGKILLed run's
    stale = Path(tempfile.mkdtemp(prefix="mutagent-run-"))  # laid out like that run's copy
    try:
        (stale / "aux").mkdir()
        (stale / "aux" / "owner.pid").write_text(str(gone.pid))
        stats = engine_run()
        assert stats.reused == 1 and stats.ran == 0  # nothing to do: no workspace of its own
        assert not stale.exists()
    finally:
        shutil.rmtree(stale, ignore_errors=True)
