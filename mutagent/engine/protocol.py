"""Messages between the engine, its workers and their forked children: length-prefixed pickles on
plain pipe file descriptors.

Pipes (not stdout) because the target's tests print whatever they like; pickle because both ends
are the same interpreter and code objects travel as ``marshal`` bytes inside the messages.
A peer that dies mid-message reads as end-of-file, never as a half message.
"""

from __future__ import annotations

import ctypes
import os
import pickle
import signal
import struct
import sys
from collections.abc import Iterable
from typing import Any

_HEADER = struct.Struct("!Q")


def send(fd: int, message: Any) -> None:
    send_all(fd, (message,))


def send_all(fd: int, messages: Iterable[Any]) -> None:
    """Several messages in one write: the reader wakes once for all of them and still reads them
    one by one with ``recv`` (a forked child's ``TestFinished`` travels with the next
    ``TestStarted``, halving the worker's wake-ups per test)."""
    frames = []
    for message in messages:
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        frames += (_HEADER.pack(len(data)), data)
    view = memoryview(b"".join(frames))
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _read_exactly(fd: int, size: int) -> bytes | None:
    chunks: list[bytes] = []
    remaining = size
    while remaining:
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def recv(fd: int) -> Any | None:
    """The next message, or ``None`` when the other end is gone (EOF, reset or a torn message)."""
    try:
        header = _read_exactly(fd, _HEADER.size)
        if header is None:
            return None
        body = _read_exactly(fd, _HEADER.unpack(header)[0])
        if body is None:
            return None
        return pickle.loads(body)
    except (OSError, EOFError, pickle.UnpicklingError):
        return None


PARENT_PID_ENV = "MUTAGENT_PARENT_PID"


def parent_pid_env() -> dict[str, str]:
    """Environment entry naming this process as the parent of a subprocess about to be started,
    so that the subprocess can tell whether its parent is already gone (see ``die_with_parent``)."""
    return {PARENT_PID_ENV: str(os.getpid())}


def become_forked_child(close_fds: Iterable[int], parent: int | None) -> None:
    """First steps of every forked run (a mutant's child, a zygote's child): drop the parent's
    pipe ends, lead a process group of its own (so that a timeout kills everything it starts),
    die with ``parent``, and take SIGTERM's default action again."""
    for fd in close_fds:
        os.close(fd)
    try:
        os.setpgid(0, 0)
    except OSError:
        pass
    die_with_parent(parent)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def die_with_parent(parent: int | None = None) -> None:
    """Ask Linux to SIGKILL this process when its parent dies (no-op elsewhere), so that a
    SIGKILLed ``mutagent run`` never leaves workers or mutant children spinning behind it.

    ``parent`` is the pid the caller expects as its parent: a forked child passes the pid its
    parent had before the fork; a subprocess reads it from ``MUTAGENT_PARENT_PID`` (set by
    ``parent_pid_env``). Reading ``os.getppid()`` here instead would be too late: a parent killed
    while the subprocess was still starting has already been replaced by init or a subreaper,
    and the orphan would take that for its parent and run on.
    """
    if parent is None:
        named = os.environ.pop(PARENT_PID_ENV, "")
        parent = int(named) if named.isdigit() else os.getppid()
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)
