"""Interrupted runs resume without re-running finished mutants; edits re-test only what changed;
the user's tree is never written (outside ``.mutagent/``), even when the run is SIGKILLed."""

from __future__ import annotations

import io
import json
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import pytest
from filelock import FileLock
from rich.console import Console
from testkit.engine_targets import ENGINE_TARGETS, HandMutant, HandMutants, tree_hash, write_target

from mutagent import exitcodes
from mutagent.config import EngineConfig
from mutagent.engine.orchestration.runner import Engine, RunStats
from mutagent.errors import UsageError
from mutagent.model import Status
from mutagent.store import load_run_data

SLOW_TARGET = {
    "calc/__init__.py": "",
    "calc/core.py": """
        def one():
            return 1


        def two():
            return 2


        def three():
            return 3
    """,
    "tests/test_calc.py": """
        import time

        from calc.core import one, three, two

        def test_one():
            time.sleep(0.3)
            assert one() == 1

        def test_two():
            time.sleep(0.3)
            assert two() == 2

        def test_three():
            time.sleep(0.3)
            assert three() == 3
    """,
}
SLOW_MUTANTS = [
    HandMutant("calc/core.py", f"return {n}", f"return {n} {op} {k}")
    for n in (1, 2, 3)
    for op, k in (("+", 1), ("*", 5))
]


def engine_run(root: Path, specs: list[HandMutant]) -> RunStats:
    config = EngineConfig(root=root, workers=1, timeout_constant=4.0)
    return Engine(config, Console(file=io.StringIO()), HandMutants(specs)).run()


def finished_count(root: Path) -> int:
    store = root / ".mutagent" / "store.sqlite"
    if not store.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=1) as db:
            return db.execute("SELECT count(*) FROM results").fetchone()[0]
    except sqlite3.Error:
        return 0


def start_cli(root: Path, specs: list[HandMutant]) -> subprocess.Popen[str]:
    spec_file = root.parent / "mutants.json"
    spec_file.write_text(HandMutants(specs).to_json())
    return subprocess.Popen(
        [sys.executable, ENGINE_TARGETS, str(spec_file), "run", "--workers", "1"]
        + ["--timeout-constant", "4", str(root)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # Ctrl-C as a terminal sends it: a suite started in the background by a non-interactive
        # shell (`pytest &`, as CI scripts do) inherits SIGINT ignored, and so would the run.
        preexec_fn=_sigint_default,
    )


def _sigint_default() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def interrupt_mid_run(root: Path, sig: signal.Signals) -> tuple[int, int, list[psutil.Process], set[Path]]:
    """Start a run, wait until some (not all) mutants are stored, send ``sig``; return the exit
    code, how many results were stored, the run's descendant processes and its new workspaces."""
    workspaces_before = set(Path(tempfile.gettempdir()).glob("mutagent-run-*"))
    process = start_cli(root, SLOW_MUTANTS)
    descendants: list[psutil.Process] = []
    while finished_count(root) < 1:  # bounded by the test's pytest-timeout mark, not by a clock here
        assert process.poll() is None, process.communicate()
        descendants = psutil.Process(process.pid).children(recursive=True) or descendants
        time.sleep(0.05)
    descendants = psutil.Process(process.pid).children(recursive=True) + descendants
    # only this run's workspaces: on a shared machine other mutagent runs create theirs meanwhile
    new_workspaces = {
        w
        for w in set(Path(tempfile.gettempdir()).glob("mutagent-run-*")) - workspaces_before
        if _owner(w) == process.pid
    }
    process.send_signal(sig)
    process.communicate(timeout=60)
    return process.returncode, finished_count(root), descendants, new_workspaces


def _owner(workspace: Path) -> int | None:
    try:
        return int((workspace / "aux" / "owner.pid").read_text())
    except (OSError, ValueError):
        return None


def assert_all_gone(processes: list[psutil.Process]) -> None:
    _, alive = psutil.wait_procs(processes, timeout=10)
    assert not [p for p in alive if p.status() != psutil.STATUS_ZOMBIE], alive


@pytest.mark.timeout(600)
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["sigint", "sigkill"])
def test_an_interrupted_run_resumes_without_rerunning_finished_mutants(
    tmp_path: Path, sig: signal.Signals
) -> None:
    root = write_target(tmp_path / "slow", SLOW_TARGET)
    before = tree_hash(root)
    returncode, stored, descendants, workspaces = interrupt_mid_run(root, sig)
    assert returncode == (130 if sig == signal.SIGINT else -signal.SIGKILL)
    assert 1 <= stored < len(SLOW_MUTANTS)
    assert len(workspaces) == 1  # the run's own copy existed when it was interrupted
    assert_all_gone(descendants)  # workers and mutant children do not outlive the run
    assert tree_hash(root) == before  # nothing written outside .mutagent/, even by a killed run
    if sig == signal.SIGINT:
        assert not any(w.exists() for w in workspaces)  # cleaned up on the way out
    finished_before = {
        m.id: r for m in load_run_data(root).mutants if (r := load_run_data(root).results.get(m.id))
    }

    stats = engine_run(root, SLOW_MUTANTS)
    assert stats.baseline_cached
    assert stats.reused == stored
    assert stats.ran == len(SLOW_MUTANTS) - stored
    data = load_run_data(root)
    assert all(data.result_of(m).status is Status.KILLED for m in data.mutants)
    assert {i: data.results[i] for i in finished_before} == finished_before
    assert not any(w.exists() for w in workspaces)  # a killed run's workspace is removed next time
    assert tree_hash(root) == before


def test_editing_one_function_retests_only_its_mutants(tmp_path: Path) -> None:
    root = write_target(
        tmp_path / "inc",
        {
            "calc/__init__.py": "",
            "calc/core.py": """
            def add(a, b):
                return a + b


            def sub(a, b):
                result = a - b
                return result
        """,
            "tests/test_calc.py": """
            from calc.core import add, sub

            def test_add():
                assert add(2, 3) == 5

            def test_sub():
                assert sub(5, 3) == 2
        """,
        },
    )
    specs = [
        HandMutant("calc/core.py", "return a + b", "return a - b"),
        HandMutant("calc/core.py", "a + b", "a + b + 0"),
        HandMutant("calc/core.py", "result = a - b", "result = a + b"),
        HandMutant("calc/core.py", "return result", "return 0"),
    ]
    first = engine_run(root, specs)
    assert first.ran == 4
    core = root / "calc" / "core.py"
    core.write_text(
        core.read_text().replace("    result = a - b\n", '    """Edited."""\n    result = a - b\n')
    )

    second = engine_run(root, specs)
    assert not second.baseline_cached  # a source changed: coverage is measured again
    assert second.ran == 2 and second.reused == 2
    data = load_run_data(root)
    sub_mutants = [m for m in data.mutants if m.original in ("result = a - b", "return result")]
    assert [data.result_of(m).status for m in sub_mutants] == [Status.KILLED, Status.KILLED]
    assert sub_mutants[0].location.start_line == 7  # the stored mutant set follows the edit

    third = engine_run(root, specs)
    assert third.ran == 0 and third.reused == 4 and third.baseline_cached


def test_a_second_run_on_the_same_target_is_refused(tmp_path: Path) -> None:
    root = write_target(tmp_path / "locked", SLOW_TARGET)
    (root / ".mutagent").mkdir()
    with FileLock(str(root / ".mutagent" / "lock")):
        with pytest.raises(UsageError) as caught:
            engine_run(root, SLOW_MUTANTS)
    assert caught.value.exit_code == exitcodes.USAGE_ERROR
    assert "another mutagent run" in str(caught.value)


def test_a_baseline_stored_before_its_control_run_ended_has_its_controls_run_again(tmp_path: Path) -> None:
    """The control run overlaps the mutants (``orchestration/control``): a run stopped before it
    ended stored the baseline with those tests unchecked; the next run runs their controls, and
    only mutants whose tests all passed alone are judged, before the baseline is stored again."""
    root = write_target(tmp_path / "project", SLOW_TARGET)
    first = engine_run(root, SLOW_MUTANTS)
    assert not first.baseline_cached and len(first.cpu["control"]) == 3  # one control job per test
    store = root / ".mutagent" / "store.sqlite"
    with sqlite3.connect(store) as db:
        key, data = db.execute("SELECT key, data FROM baseline").fetchone()
        baseline = json.loads(data)
        assert baseline["unchecked"] == []  # stored again once every control was in
        baseline["unchecked"] = ["tests/test_calc.py::test_two"]  # as if stopped before its control
        db.execute("UPDATE baseline SET data=? WHERE key=?", (json.dumps(baseline), key))
        db.execute("DELETE FROM results")
    again = engine_run(root, SLOW_MUTANTS)
    assert again.baseline_cached and len(again.cpu["control"]) == 1  # only the unchecked test's
    with sqlite3.connect(store) as db:
        assert json.loads(db.execute("SELECT data FROM baseline").fetchone()[0])["unchecked"] == []
    results = load_run_data(root).results.values()
    assert len(results) == len(SLOW_MUTANTS) and all(r.status is Status.KILLED for r in results)
