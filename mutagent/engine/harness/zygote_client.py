"""The worker's side of its zygote (see ``zygote``): start it, talk to it, notice its death."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from mutagent.engine.harness.events import ForkRequest, ZygoteMessage, ZygoteReady, zygote_message_from_wire
from mutagent.engine.protocol import parent_pid_env, recv, send


class ZygoteLost(Exception):
    """The zygote process died or stopped answering."""


@dataclass
class ParentWatch:
    """The worker's input pipe from the engine: the engine never writes to a busy worker, so
    while a job runs it turns readable only at end-of-file, when the engine is gone."""

    fd: int
    on_gone: Callable[[], None]  # kill what runs and exit

    def check(self, readable: list[int]) -> None:
        if self.fd in readable and recv(self.fd) is None:
            self.on_gone()


class ZygoteClient:
    """The worker's handle on its zygote process."""

    def __init__(self, config_path: Path, cwd: str, env: dict[str, str], log: Path) -> None:
        to_read, to_write = os.pipe()
        from_read, from_write = os.pipe()
        env = {**env, "MUTAGENT_ZYGOTE_FDS": f"{to_read},{from_write}", **parent_pid_env()}
        with open(log, "ab") as handle:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "mutagent.engine.harness.zygote", str(config_path)],
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=handle,
                stderr=subprocess.STDOUT,
                pass_fds=(to_read, from_write),
            )
        os.close(to_read)
        os.close(from_write)
        self.to_zygote, self.from_zygote = to_write, from_read
        self.log = log
        self.info: ZygoteReady | None = None

    def send(self, request: ForkRequest) -> None:
        send(self.to_zygote, request.to_wire())

    def receive(self, deadline: float, parent: ParentWatch) -> ZygoteMessage | None:
        """The zygote's next message, ``None`` at ``deadline``; ``ZygoteLost`` if it died (or sent
        what no zygote sends)."""
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            readable, _, _ = select.select([self.from_zygote, parent.fd], [], [], remaining)
            parent.check(readable)
            if self.from_zygote in readable:
                wire = recv(self.from_zygote)
                if wire is None:
                    raise ZygoteLost(self._death())
                message = zygote_message_from_wire(wire)
                if message is None:
                    raise ZygoteLost(f"the zygote sent an unreadable message: {wire!r:.200}")
                return message

    def _death(self) -> str:
        try:
            code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return "the zygote stopped answering"
        how = f"was killed by signal {signal.Signals(-code).name}" if code < 0 else f"exited with code {code}"
        return f"the zygote process {how}"

    def close(self) -> None:
        for fd in (self.to_zygote, self.from_zygote):
            try:
                os.close(fd)
            except OSError:
                pass
        try:
            self.process.kill()
        except OSError:
            pass
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
