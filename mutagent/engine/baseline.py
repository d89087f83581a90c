"""The unmutated run: is the suite green, which test covers which line, how long each test takes.

It runs once in a subprocess in the isolated copy (``baseline_plugin`` does the measuring), then
every test runs once more in the forking harness (the control run, driven by the runner): a test
whose outcome differs there is flaky or order-dependent, and judging mutants with it would
produce false kills. Any failure here stops the run before a single mutant is judged.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mutagent import exitcodes
from mutagent.engine.protocol import parent_pid_env
from mutagent.errors import BaselineError, MutagentError, UsageError


@dataclass
class Baseline:
    """Outcomes, durations and per-line coverage of the unmutated suite (JSON-serialisable)."""

    tests: dict[str, dict[str, Any]]  # nodeid -> {"outcome", "duration", "message"}
    order: list[str]  # collection order
    coverage: dict[str, dict[int, list[str]]]  # relative file -> line -> covering node ids
    imported: list[str] = field(default_factory=list)  # source files executed at all (imports included)
    control: dict[str, dict[str, Any]] = field(default_factory=dict)  # nodeid -> harness outcome
    # relative file -> lines run outside any test (imports, collection); None: not recorded (an
    # older cached baseline), which makes every module-level mutant use the broad test selection
    import_lines: dict[str, list[int]] | None = None
    preload: list[str] = field(default_factory=list)  # modules imported from outside the copy
    models: list[str] = field(default_factory=list)  # pydantic models built (module:qualname)
    zygote_control: dict[str, dict[str, Any]] = field(default_factory=dict)  # nodeid -> zygote outcome

    @property
    def passing(self) -> list[str]:
        return [nodeid for nodeid in self.order if self.tests.get(nodeid, {}).get("outcome") == "passed"]

    @property
    def flaky(self) -> list[str]:
        """Tests green in the plain run but not in the forking harness (or never checked there)."""
        return [n for n in self.passing if self.control.get(n, {}).get("outcome") != "passed"]

    def duration(self, nodeid: str) -> float:
        plain = float(self.tests.get(nodeid, {}).get("duration", 0.0))
        forked = float(self.control.get(nodeid, {}).get("duration", 0.0))
        return max(plain, forked)

    def cpu(self, nodeid: str) -> float:
        """CPU seconds the test's process used alone in the forking harness (all its threads:
        on several cores that can exceed its wall duration)."""
        return float(self.control.get(nodeid, {}).get("cpu", 0.0))

    def to_json(self) -> dict[str, Any]:
        coverage = {
            f: {str(line): tests for line, tests in lines.items()} for f, lines in self.coverage.items()
        }
        return {
            "tests": self.tests,
            "order": self.order,
            "coverage": coverage,
            "control": self.control,
            "imported": self.imported,
            "import_lines": self.import_lines,
            "preload": self.preload,
            "models": self.models,
            "zygote_control": self.zygote_control,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Baseline:
        coverage = {
            f: {int(line): tests for line, tests in lines.items()} for f, lines in data["coverage"].items()
        }
        return cls(
            tests=data["tests"],
            order=data["order"],
            coverage=coverage,
            control=data.get("control", {}),
            imported=data.get("imported", []),
            import_lines=data.get("import_lines"),
            preload=data.get("preload", []),
            models=data.get("models", []),
            zygote_control=data.get("zygote_control", {}),
        )


def _meaningful_lines(text: str) -> list[str]:
    return [
        line.strip() for line in text.splitlines() if line.strip() and not set(line.strip()) <= set("=-_ ")
    ]


def _error_line(text: str) -> str:
    """The most telling line of pytest's output: argparse's ``error:`` line, then pytest's
    ``ERROR:`` lines (except the usage banner), then any line naming an exception."""
    lines = _meaningful_lines(text)
    tests = (
        lambda line: " error: " in line or line.startswith("error: "),
        lambda line: line.startswith("ERROR:") and not line.startswith("ERROR: usage:"),
        lambda line: "Error" in line,
    )
    for test in tests:
        hits = [line for line in lines if test(line)]
        if hits:
            return hits[-1]
    return lines[-1] if lines else "no output"


class RunningBaseline:
    """The baseline's pytest process, started; ``wait`` for its verdict or ``abort`` it.

    Starting it is separate from waiting so that the engine can generate the mutants (pure
    CPU work in its own process) while the baseline runs the suite in another.
    """

    def __init__(self, process: subprocess.Popen[bytes], out_path: Path, log_path: Path) -> None:
        self.process = process
        self.out_path = out_path
        self.log_path = log_path

    def wait(self) -> Baseline:
        """The baseline; a one-line error unless the suite is green."""
        try:
            returncode = self.process.wait()
        except BaseException:
            self.abort()
            raise
        output = self.log_path.read_text(encoding="utf-8", errors="replace")
        try:
            result = json.loads(self.out_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            result = None
        return _interpret(result, returncode, output)

    def abort(self) -> None:
        """Kill the run and everything it started (its own process group)."""
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.process.wait()


def start_baseline(
    *,
    copy_root: Path,
    aux: Path,
    env: dict[str, str],
    pytest_args: list[str],
    sources: dict[str, str],
    modules: dict[str, str],
) -> RunningBaseline:
    """Start the suite once with per-test coverage (``RunningBaseline.wait`` judges it).

    ``sources`` maps absolute paths in the copy to relative paths; ``modules`` maps each source's
    module name to the copy's file (to detect a shadowing installed copy).
    """
    config_path, out_path, log_path = aux / "baseline.json", aux / "baseline.out.json", aux / "baseline.log"
    config_path.write_text(
        json.dumps({"sources": sources, "modules": modules, "out": str(out_path)}), encoding="utf-8"
    )
    command = [sys.executable, "-m", "pytest", *pytest_args, "-p", "mutagent.engine.baseline_plugin"]
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            command,
            cwd=copy_root,
            env={**env, "MUTAGENT_BASELINE": str(config_path), **parent_pid_env()},
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return RunningBaseline(process, out_path, log_path)


def _interpret(result: dict[str, Any] | None, returncode: int, output: str) -> Baseline:
    if result is None:
        if "while loading conftest" in output:
            raise BaselineError(f"the target's conftest cannot be loaded: {_error_line(output)}")
        if returncode == 4:
            raise UsageError(f"pytest rejected the test selection: {_error_line(output)}")
        raise BaselineError(
            f"the baseline test run ended without a result (pytest exit code {returncode}): "
            f"{_error_line(output)}"
        )
    if result["shadowed"]:
        first = result["shadowed"][0]
        raise UsageError(
            f"module {first['module']} is imported from {first['actual']} instead of the isolated copy "
            f"{first['expected']} (an installed copy of the target shadows it; uninstall it or run mutagent "
            "from another environment)"
        )
    if result["collect_errors"]:
        first = result["collect_errors"][0]
        more = len(result["collect_errors"]) - 1
        where = first["nodeid"] or "the test session"
        raise BaselineError(
            f"cannot collect the target's tests: {where}: {first['message']}"
            + (f" (and {more} more)" if more else "")
        )
    if returncode == 5 or not result["collected"]:
        raise UsageError("pytest collected no tests in the target (check --tests)")
    tests: dict[str, dict[str, Any]] = result["tests"]
    failing = [nodeid for nodeid, info in tests.items() if info["outcome"] == "failed"]
    if failing:
        shown = ", ".join(failing[:10]) + (f" and {len(failing) - 10} more" if len(failing) > 10 else "")
        why = tests[failing[0]].get("message") or "failed"
        raise BaselineError(
            f"the test suite is not green without mutants: {len(failing)} failing: {shown} "
            f"({failing[0]}: {why})"
        )
    if returncode not in (0, 1):
        raise MutagentError(
            f"the baseline test run failed (pytest exit code {returncode}): {_error_line(output)}",
            exitcodes.BASELINE_FAILED,
        )
    baseline = Baseline(
        tests=tests,
        order=result["collected"],
        coverage={f: {int(k): v for k, v in lines.items()} for f, lines in result["coverage"].items()},
        imported=result.get("imported", []),
        import_lines=result.get("import_lines"),
        preload=result.get("preload", []),
        models=result.get("models", []),
    )
    if not baseline.passing:
        raise UsageError("no test of the target passes (all skipped?): nothing can kill a mutant")
    return baseline
