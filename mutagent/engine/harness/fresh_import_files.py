"""What a fresh-import run left behind (result JSON, progress lines, output log) -> a job result.

Both launchers (a zygote child, a new ``python -m pytest``) leave the same files, so this one
place holds the honesty rules of fresh imports: only tests pytest reported as failed kill; a
process that dies without reporting is a crash (RuntimeError); a timeout or a crash keeps the
list of the tests that really ran, and the one that was running.
"""

from __future__ import annotations

import json
import os
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mutagent.engine.harness.procs import describe_exit


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


def read_progress(path: Path) -> tuple[list[dict[str, Any]], str | None]:
    """Tests that finished (their records) and the one that started without finishing."""
    tests: list[dict[str, Any]] = []
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
            tests.append(event["test"])
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


def interpret(files: RunFiles, ended: Exit, selected: list[str]) -> dict[str, Any]:
    """A finished (not timed-out) run's result, from its files and how the process ended."""
    done, running = read_progress(files.progress)
    try:
        data = json.loads(files.out.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        how = ended.how
        return {
            "status": "crash",
            "tests": done,
            "running": running,
            "detail": f"fresh-import test process {how} without reporting\n" + files.log_tail(),
        }
    if data.get("partial") and data.get("import_error"):
        if not ended.pytest_failure:  # pytest did not end by reporting the failure: a crash
            return {
                "status": "crash",
                "tests": done,
                "running": running,
                "detail": f"fresh-import test process {ended.how} after the mutated module failed to import\n"
                + data["import_error"],
            }
        # importing the mutated module raised and pytest stopped before running anything
        # (a conftest imports the target): every selected test fails to even load
        last = data["import_error"].strip().splitlines()[-1]
        failed = [
            {
                "nodeid": nodeid,
                "outcome": "failed",
                "duration": 0.0,
                "text": data["import_error"],
                "message": f"import: {last}",
            }
            for nodeid in selected
        ]
        return {"status": "done", "tests": failed, "running": None, "detail": ""}
    if data.get("harness_error"):
        return {"status": "error", "tests": [], "running": None, "detail": data["harness_error"]}
    if not data.get("loaded"):
        return {
            "status": "error",
            "tests": data.get("tests", []),
            "running": None,
            "detail": "the selected tests never imported the mutated module",
        }
    return {"status": "done", "tests": data.get("tests", []), "running": None, "detail": ""}


def timeout_result(files: RunFiles, timeout: float) -> dict[str, Any]:
    done, running = read_progress(files.progress)
    return {
        "status": "timeout",
        "tests": done,
        "running": running,
        "detail": f"fresh-import run gave no result within {timeout:.1f}s",
    }
