"""The reaper: children killed after reporting are waited for later, never left behind."""

from __future__ import annotations

import os
import time
from pathlib import Path

from mutagent.engine.harness.reaper import DyingChild, Reaper


def _sleeping_child(pid_file: Path | None = None) -> int:
    """A child leading its own process group (like a mutant child); with ``pid_file``, it first
    starts a grandchild in that group and writes its pid there."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.setpgid(0, 0)
        if pid_file is not None:
            grandchild = os.fork()
            if grandchild == 0:
                time.sleep(60)
                os._exit(0)
            pid_file.write_text(str(grandchild))
        time.sleep(60)
        os._exit(0)
    try:
        os.setpgid(pid, pid)  # the worker does the same, to win the race with the child
    except OSError:
        pass
    deadline = time.monotonic() + 10
    while pid_file is not None and not (pid_file.exists() and pid_file.read_text()):
        assert time.monotonic() < deadline, "the fake child never started its grandchild"
        time.sleep(0.01)
    return pid


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _wait_until_dead(pid: int) -> None:
    deadline = time.monotonic() + 10
    while _alive(pid):
        assert time.monotonic() < deadline, f"process {pid} outlived the kill"
        time.sleep(0.01)


def test_a_deferred_child_and_its_group_are_killed_at_once_and_reaped_later(tmp_path: Path) -> None:
    temp_root = tmp_path / "child-tmp"
    temp_root.mkdir()
    (temp_root / "left.txt").write_text("x")
    pid = _sleeping_child(tmp_path / "grandchild.pid")
    grandchild = int((tmp_path / "grandchild.pid").read_text())
    reaper = Reaper()

    reaper.defer(pid, str(temp_root))

    _wait_until_dead(grandchild)  # killed with the group right away (init reaps it, not us)
    assert [child.pid for child in reaper.pending] == [pid]  # not waited for yet
    assert temp_root.exists()
    assert reaper.collect(block=True) == 1
    assert reaper.pending == []
    assert not temp_root.exists()  # its tmp_path root went with it
    assert not _alive(pid)  # waited for: no zombie left


def test_the_number_of_dying_children_is_bounded(tmp_path: Path) -> None:
    reaper = Reaper(max_pending=2)
    pids = []
    for _ in range(4):
        pids.append(_sleeping_child())
        reaper.defer(pids[-1])
        assert len(reaper.pending) <= 2
    assert reaper.collect(block=True) == 2
    assert reaper.pending == [] and not any(_alive(pid) for pid in pids)


def test_collect_without_blocking_keeps_children_that_are_still_running() -> None:
    pid = _sleeping_child()
    reaper = Reaper()
    reaper.pending.append(DyingChild(pid, None))  # not killed: still running
    assert reaper.collect() == 0 and [child.pid for child in reaper.pending] == [pid]
    reaper.kill_all()
    assert reaper.collect(block=True) == 1 and reaper.pending == []
