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
from typing import Any

_HEADER = struct.Struct("!Q")


def send(fd: int, message: Any) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_HEADER.pack(len(data)) + data)
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


def die_with_parent() -> None:
    """Ask Linux to SIGKILL this process when its parent dies (no-op elsewhere), so that a
    SIGKILLed ``mutagent run`` never leaves workers or mutant children spinning behind it."""
    if not sys.platform.startswith("linux"):
        return
    parent = os.getppid()
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)
