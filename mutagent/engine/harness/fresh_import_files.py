"""What a fresh-import run left behind (result JSON, progress lines, output log), read back.

Both launchers (a zygote child, a new ``python -m pytest``) leave the same files; this module
reads them, and ``mutagent.engine.verdict.fresh_import_end`` decides what they mean (only tests
pytest reported as failed kill; a process that dies without reporting is a crash), so the rules
live in one place for every launcher.
"""

from __future__ import annotations

import json
import os
import signal
from dataclasses import dataclass
from pathlib import Path

from mutagent.engine.harness.procs import describe_exit
from mutagent.engine.messages import JobResult, TestRecord
from mutagent.engine.verdict import fresh_import_end


@dataclass(frozen=True)
class RunFiles:
    """The files of one fresh-import run, all in the workspace's aux directory."""

    spec: Path
    out: Path
    progress: Path
    log: Path

    @classmethod
    def at(cls, aux: Path, stem: str) -> RunFiles:
        return cls(*(aux / f"{stem}{suffix}" for suffix in (".json", ".out.json", ".progress", ".log")))

    def remove(self) -> None:
        for path in (self.spec, self.out, self.progress, self.log):
            path.unlink(missing_ok=True)

    def log_tail(self, limit: int = 3000) -> str:
        try:
            return self.log.read_text(encoding="utf-8", errors="replace")[-limit:]
        except OSError:
            return ""


def read_progress(path: Path) -> tuple[list[TestRecord], str | None]:
    """Tests that finished (their records) and the one that started without finishing."""
    tests: list[TestRecord] = []
    running: str | None = None
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return tests, running
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:  # a torn last line: the process died mid-write
            continue
        if "start" in event:
            running = event["start"]
        elif "test" in event:
            tests.append(TestRecord.from_wire(event["test"]))
            running = None
    return tests, running


@dataclass(frozen=True)
class Exit:
    """How a fresh-import process ended."""

    how: str  # "exited with code 3", "killed by signal SIGKILL"
    pytest_failure: bool  # pytest itself exited with a failure code (1-4), as opposed to dying

    @classmethod
    def from_wait_status(cls, status: int) -> Exit:
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
        return cls(describe_exit(status), code in (1, 2, 3, 4))

    @classmethod
    def from_returncode(cls, code: int) -> Exit:
        if code < 0:
            return cls(f"killed by signal {signal.Signals(-code).name}", False)
        return cls(f"exited with code {code}", code in (1, 2, 3, 4))


def interpret(files: RunFiles, ended: Exit, selected: list[str]) -> JobResult:
    """A finished (not timed-out) run's result, from its files and how the process ended; the
    rules are ``verdict.fresh_import_end``'s."""
    done, running = read_progress(files.progress)
    try:
        report = json.loads(files.out.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        report = None
    return fresh_import_end(report, done, running, ended.how, ended.pytest_failure, selected, files.log_tail)


def timeout_result(files: RunFiles, timeout: float) -> JobResult:
    done, running = read_progress(files.progress)
    return JobResult.timed_out(done, running, f"fresh-import run gave no result within {timeout:.1f}s")
