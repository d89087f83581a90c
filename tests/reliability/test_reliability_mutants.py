"""Mutants that misbehave (issue 7): each gets its honest status, and the next mutant in the same
warm worker runs clean.

Every misbehaviour lives in its own stage function of one tiny target; a hand-written mutant turns
the stage's return value into the fault (infinite recursion, a segfault from deep C recursion,
``sys.exit(3)``, a thread that never ends, a leaked listening socket, writes into the tree, 50 MB
of output, a simulated harness bug). Each fault stage is followed by a clean stage whose mutant
is simply killed by its own test.

Why the order is deterministic with one worker: the engine runs jobs longest watchdog first, and
a watchdog grows with the summed baseline durations of the covering tests. Test ``test_stage[k]``
calls stage ``k`` for real and every earlier stage in ``probe`` mode, on the same line the mutant
changes, so stage ``k`` is covered by tests ``k..N-1``: strictly nested sets, strictly decreasing
watchdogs, whatever the machine's speed. The probe path never reaches the fault, so only the
stage's own test sees it. The execution order is then read back from the store to prove it.
"""

from __future__ import annotations

import io
import os
import socket
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest
from rich.console import Console
from testkit.engine_targets import HandMutant, HandMutants, tree_hash, write_target

from mutagent import exitcodes
from mutagent.config import EngineConfig
from mutagent.engine.orchestration.runner import Engine, RunStats
from mutagent.errors import MutagentError
from mutagent.model import Mutant, MutantResult, RunData, Status
from mutagent.store import load_run_data

CORE = "chain/core.py"
BOOT = "chain/boot.py"
PORT_VARIABLE = "RELIABILITY_PORT"  # not secret-looking, so the scrubbed test environment keeps it

# stage -> the expression its mutant returns instead of the stage's name, in execution order;
# every fault is followed by ``after_<fault>``, whose mutant is a plain, clean kill
FAULTS: dict[str, str] = {
    "recursion": "recurse_forever()",
    "segfault": "crash_by_c_recursion()",
    "exit3": "sys.exit(3)",
    "stray_thread": 'leave_thread_running() and "stray_thread"',
    "open_port": 'leak_listening_socket() and "open_port"',
    "tree_writes": 'write_into_the_tree() and "tree_writes"',
    "flood": "print_50_megabytes()",
    "harness": '"harness-mutated"',  # a plain change: the conftest's simulated harness bug hits it
}
STAGES = [name for fault in FAULTS for name in (fault, f"after_{fault}")]
# the real path of a follower that probes what its fault could have left behind
PROBES = {"after_stray_thread": "no_stray_thread()", "after_open_port": "port_is_free()"}

HELPERS = '''
import os
import socket
import sys
import threading

LEAKED = []
LEAKED_IN = {}  # what this very process leaked: a later test in the same child may see it


def recurse_forever(depth=0):
    return recurse_forever(depth + 1)


def crash_by_c_recursion():
    """repr() of deeply nested lists recurses in C: past a small thread stack that is SIGSEGV."""
    sys.setrecursionlimit(10**8)
    nested = []
    for _ in range(200_000):
        nested = [nested]
    threading.stack_size(1 << 18)
    worker = threading.Thread(target=repr, args=(nested,))
    worker.start()
    worker.join()
    import ctypes  # Python >= 3.12 bounds C recursion itself: crash by reading address 0 instead

    return ctypes.string_at(0)


def leave_thread_running():
    threading.Thread(target=threading.Event().wait, name="never-ends").start()  # not a daemon
    LEAKED_IN["thread"] = os.getpid()
    return True


def no_stray_thread():
    if LEAKED_IN.get("thread") != os.getpid():
        assert not [t for t in threading.enumerate() if t.name == "never-ends"]
    return True


def leak_listening_socket():
    sock = socket.socket()
    sock.bind(("127.0.0.1", int(os.environ["RELIABILITY_PORT"])))
    sock.listen()
    LEAKED.append(sock)
    LEAKED_IN["port"] = os.getpid()
    return True


def port_is_free():
    if LEAKED_IN.get("port") != os.getpid():
        with socket.socket() as sock:  # the very port the previous mutant leaked
            sock.bind(("127.0.0.1", int(os.environ["RELIABILITY_PORT"])))
            sock.listen()
    with socket.socket() as sock:  # and an OS-assigned one
        sock.bind(("127.0.0.1", 0))
        sock.listen()
    return True


def write_into_the_tree():
    with open("SENTINEL", "w") as handle:  # relative to the current directory
        handle.write("cwd")
    with open(os.path.join(os.path.dirname(__file__), "SENTINEL"), "w") as handle:
        handle.write("module directory")
    return True


def print_50_megabytes():
    chunk = "x" * (1 << 20)
    for _ in range(50):
        sys.stdout.write(chunk)
    return "flooded"
'''


def _stage_source(name: str) -> str:
    probe = f"{PROBES[name]} and " if name in PROBES else ""
    return f'\n\ndef {name}(probe=False):\n    return "probe" if probe else {probe}"{name}"\n'


TARGET = {
    "chain/__init__.py": "",
    CORE: HELPERS + "".join(_stage_source(name) for name in STAGES),
    BOOT: """
        import threading

        LIMIT = 3
        WATCHER = None
    """,
    "tests/test_chain.py": f"""
        import pytest

        from chain import core

        STAGES = {STAGES!r}


        @pytest.mark.parametrize("position", range(len(STAGES)))
        def test_stage(position):
            for earlier in STAGES[:position]:
                assert getattr(core, earlier)(probe=True) == "probe"
            name = STAGES[position]
            assert getattr(core, name)() == name
    """,
    "tests/test_boot.py": """
        from chain import boot


        def test_limit():
            assert boot.LIMIT == 3
    """,
    # The engine has no seam to inject a harness fault, so the target's conftest patches one in
    # the warm worker: swapping the code of stage ``harness`` raises inside the forked child.
    "conftest.py": """
        import os

        if os.environ.get("MUTAGENT_WORKER"):
            from mutagent.engine.harness import child

            _apply_swaps = child.apply_swaps

            def _buggy_apply_swaps(index, swaps):
                if any(key[1] == "harness" for key, _ in swaps):
                    raise LookupError("simulated harness bug while swapping code objects")
                return _apply_swaps(index, swaps)

            child.apply_swaps = _buggy_apply_swaps
    """,
}


def stage_mutant(name: str) -> HandMutant:
    if name in FAULTS:
        return HandMutant(CORE, f'else "{name}"', f"else {FAULTS[name]}")
    find = f'and "{name}"' if name in PROBES else f'else "{name}"'
    return HandMutant(CORE, find, find.replace(f'"{name}"', f'"{name}-mutated"'))


# Module-level mutants need a fresh import (a new pytest process, or a fork of a clean one), which
# a thread that never ends may keep alive. Both are file-wide with the same covering test, so they
# run first (fresh imports get the larger watchdog) and in this order.
BOOT_MUTANTS = {
    "boot_thread": HandMutant(
        BOOT,
        "WATCHER = None",
        'WATCHER = threading.Thread(target=threading.Event().wait, name="never-ends").start()',
    ),
    "after_boot_thread": HandMutant(BOOT, "LIMIT = 3", "LIMIT = 4"),
}
SPECS = {**BOOT_MUTANTS, **{name: stage_mutant(name) for name in STAGES}}
TIMEOUT_CONSTANT = 4.0  # two shared, loaded cores: no Timeout by accident; a real hang costs 4.5 s


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def running(process: psutil.Process) -> bool:
    try:
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def stage_test(name: str) -> str:
    return f"tests/test_chain.py::test_stage[{STAGES.index(name)}]"


@dataclass
class Outcome:
    """The one run every test below inspects."""

    root: Path
    before: dict[str, str]
    after: dict[str, str]
    stats: RunStats
    data: RunData
    order: list[str]  # names of SPECS in the order their results were stored
    port: int
    leftover_processes: list[psutil.Process]

    def mutant(self, name: str) -> Mutant:
        spec = SPECS[name]
        return next(m for m in self.data.mutants if (m.original, m.replacement) == (spec.find, spec.replace))

    def result(self, name: str) -> MutantResult:
        return self.data.result_of(self.mutant(name))


@pytest.fixture(scope="module")
def outcome(tmp_path_factory: pytest.TempPathFactory) -> Outcome:
    root = write_target(tmp_path_factory.mktemp("faults") / "project", TARGET)
    before = tree_hash(root)
    port = free_port()
    # exclude_flaky: the control run then ends before the first mutant (no overlap, see
    # ``orchestration/control``), so the mutants run in exactly the planned order above
    config = EngineConfig(root=root, workers=1, timeout_constant=TIMEOUT_CONSTANT, exclude_flaky=True)
    already_running = set(psutil.Process().children(recursive=True))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(PORT_VARIABLE, str(port))
        stats = Engine(
            config, Console(file=io.StringIO(), width=200), HandMutants(list(SPECS.values()))
        ).run()
    started = [p for p in psutil.Process().children(recursive=True) if p not in already_running]
    _, alive = psutil.wait_procs(started, timeout=10)  # a worker's helpers may take a moment to exit
    leftovers = [p for p in alive if running(p)]
    data = load_run_data(root)
    names = {(s.find, s.replace): name for name, s in SPECS.items()}
    ids = {m.id: names[(m.original, m.replacement)] for m in data.mutants}
    with sqlite3.connect(f"file:{root / '.mutagent' / 'store.sqlite'}?mode=ro", uri=True) as db:
        stored = [row[0] for row in db.execute("SELECT mutant_id FROM results ORDER BY finished")]
    return Outcome(root, before, tree_hash(root), stats, data, [ids[i] for i in stored], port, leftovers)


def test_every_fault_is_followed_by_a_clean_mutant_in_the_same_worker(outcome: Outcome) -> None:
    # the premise of the tests below: this order, one worker, never restarted
    assert outcome.order == list(SPECS), "the jobs did not run in the planned order"
    assert outcome.stats.workers == 1 and outcome.stats.worker_restarts == 0
    assert outcome.stats.swapped == len(STAGES) and outcome.stats.fresh_imports == len(BOOT_MUTANTS)


@pytest.mark.parametrize(
    "name, status, fragment",
    [
        # pytest reports a RecursionError in a test as that test failing: a real kill
        ("recursion", Status.KILLED, "RecursionError: maximum recursion depth exceeded"),
        # the child dies without reporting: never a kill
        ("segfault", Status.RUNTIME_ERROR, "killed by signal SIGSEGV"),
        # pytest reports SystemExit raised in a test as that test failing
        ("exit3", Status.KILLED, "SystemExit: 3"),
        # the child leaves through os._exit, which waits for no thread: the tests passed
        ("stray_thread", Status.SURVIVED, "covering tests passed"),
        ("open_port", Status.SURVIVED, "covering tests passed"),
        ("tree_writes", Status.SURVIVED, "covering tests passed"),
        ("flood", Status.KILLED, "assert 'flooded' == 'flood'"),
        ("harness", Status.RUNTIME_ERROR, "harness error"),
    ],
)
def test_each_fault_gets_its_honest_status(
    outcome: Outcome, name: str, status: Status, fragment: str
) -> None:
    result = outcome.result(name)
    assert result.status is status, result
    assert fragment in f"{result.status_reason}\n{result.error}"
    assert result.killed_by == ([stage_test(name)] if status is Status.KILLED else [])


@pytest.mark.parametrize("fault", list(FAULTS))
def test_the_mutant_after_each_fault_runs_clean(outcome: Outcome, fault: str) -> None:
    name = f"after_{fault}"
    result = outcome.result(name)
    assert result.status is Status.KILLED, result
    assert result.killed_by == [stage_test(name)]
    assert f"assert '{name}-mutated' == '{name}'" in (result.status_reason or "")


def test_a_thread_that_never_ends_in_a_fresh_import_does_not_hang_the_run(outcome: Outcome) -> None:
    """A fresh-import run either is a new interpreter, which waits for non-daemon threads at exit
    and so never ends (Timeout, as a plain pytest run of the mutant would hang), or a forked
    child that leaves through ``os._exit`` after its tests passed (Survived). Either way the run
    goes on and the next mutant is judged normally."""
    result = outcome.result("boot_thread")
    assert "fresh import" in (result.status_reason or "")
    if result.status is Status.TIMEOUT:
        assert "timed out" in (result.status_reason or "")
    else:
        assert result.status is Status.SURVIVED, result
        assert result.tests_run == ["tests/test_boot.py::test_limit"]
    follower = outcome.result("after_boot_thread")
    assert follower.status is Status.KILLED, follower
    assert follower.killed_by == ["tests/test_boot.py::test_limit"]


def test_a_harness_bug_is_a_runtime_error_with_its_traceback_in_the_store(outcome: Outcome) -> None:
    error = outcome.result("harness").error or ""
    assert "LookupError: simulated harness bug" in error, (
        "the simulated harness bug did not fire: the conftest patches "
        "mutagent.engine.harness.child.apply_swaps, "
        "which the worker must call through the module for this seam to work"
    )
    assert error.startswith("Traceback (most recent call last):") and "apply_swaps" in error


def test_mutagent_show_prints_the_harness_traceback(outcome: Outcome) -> None:
    mutant = outcome.mutant("harness")
    shown = subprocess.run(
        [sys.executable, "-m", "mutagent", "show", mutant.id, str(outcome.root)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert shown.returncode == 0, shown.stderr
    assert "RuntimeError" in shown.stdout
    assert "Traceback (most recent call last):" in shown.stdout
    assert "LookupError: simulated harness bug while swapping code objects" in shown.stdout


def test_the_users_tree_stays_byte_identical(outcome: Outcome) -> None:
    assert outcome.after == outcome.before  # the SENTINEL files went to the isolated copy
    assert not list(outcome.root.rglob("SENTINEL"))


def test_fifty_megabytes_of_output_stay_out_of_the_store(outcome: Outcome) -> None:
    store = outcome.root / ".mutagent"
    assert sum(path.stat().st_size for path in store.iterdir()) < 2_000_000
    for result in outcome.data.results.values():
        assert len(result.status_reason or "") + len(result.error or "") < 20_000


def test_no_process_thread_or_port_outlives_the_run(outcome: Outcome) -> None:
    assert outcome.leftover_processes == []
    with socket.socket() as sock:  # the leaked listening socket died with its child
        sock.bind(("127.0.0.1", outcome.port))


# --- a mutant that damages the isolated copy ----------------------------------------------------
DAMAGE_STAGES = ["deletes_its_file", "kills_its_worker", "clean"]  # unlike the helpers' names
DAMAGE_HELPERS = """
import os


def delete_own_file():
    os.remove(__file__)  # the copy's chain/core.py: what an agent's file tool might do
    return True


def kill_worker():
    os.kill(os.getppid(), 9)
"""
DAMAGE_TARGET = {
    "chain/__init__.py": "",
    CORE: DAMAGE_HELPERS + "".join(_stage_source(name) for name in DAMAGE_STAGES),
    "tests/test_chain.py": TARGET["tests/test_chain.py"].replace(repr(STAGES), repr(DAMAGE_STAGES)),
}
DAMAGE_SPECS = [
    HandMutant(CORE, 'else "deletes_its_file"', 'else delete_own_file() and "deletes_its_file"'),
    HandMutant(CORE, 'else "kills_its_worker"', "else kill_worker()"),
    HandMutant(CORE, 'else "clean"', 'else "clean-mutated"'),
]


def test_a_mutant_that_deletes_a_copied_file_does_not_break_later_worker_restarts(tmp_path: Path) -> None:
    root = write_target(tmp_path / "project", DAMAGE_TARGET)
    before = tree_hash(root)
    started = time.monotonic()
    config = EngineConfig(root=root, workers=1, timeout_constant=TIMEOUT_CONSTANT)
    try:
        Engine(config, Console(file=io.StringIO(), width=200), HandMutants(DAMAGE_SPECS)).run()
    except MutagentError as exc:
        if exc.exit_code != exitcodes.INTERNAL_ERROR:  # e.g. a broken target: not the bug this is about
            pytest.fail(f"the run stopped for another reason: {exc}")
        raise
    finally:
        assert tree_hash(root) == before  # the user's file is never the one deleted
        assert time.monotonic() - started < 120
    data = load_run_data(root)
    statuses = [data.result_of(m).status for m in data.mutants]
    assert statuses == [Status.SURVIVED, Status.RUNTIME_ERROR, Status.KILLED]
