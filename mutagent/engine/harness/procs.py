"""Small helpers about the test processes a worker starts or forks (any launcher)."""

from __future__ import annotations

import os
import signal

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def describe_exit(status: int) -> str:
    """``exited with code 3`` / ``killed by signal SIGKILL`` for a ``waitpid`` status."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = str(number)
        return f"killed by signal {name}"
    if os.WIFEXITED(status):
        return f"exited with code {os.WEXITSTATUS(status)}"
    return f"ended with status {status}"


def kill_group(pid: int) -> None:
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def process_cpu(pid: int) -> float | None:
    """CPU seconds process ``pid`` (all its threads) has used so far, from ``/proc``; ``None``
    where there is no ``/proc`` or the process is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    try:
        return (int(fields[11]) + int(fields[12])) / _TICKS  # utime, stime (fields 14, 15 of stat)
    except (IndexError, ValueError):
        return None
