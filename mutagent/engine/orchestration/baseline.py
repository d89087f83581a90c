"""The unmutated run: is the suite green, which test covers which line, how long each test takes.

The runner measures it in its warm workers (``ForkedBaseline``): batches of tests in forked
children with per-test coverage (``probe``), then every test once more, alone, unmeasured: the
control run. A test whose outcome differs there is flaky or order-dependent, and judging mutants
with it would produce false kills. When the measured children are not all green, or the workers
cannot start, the plain ``python -m pytest`` run (``start_baseline``, ``baseline_plugin``) runs
instead and its one-line errors say why. Any failure here stops the run before a single mutant
is judged.
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
from mutagent.engine.messages import JobResult
from mutagent.engine.orchestration.faults import FAULT_LOG_ENV, FAULT_LOG_FILE
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
    # modules of the copy the tests imported lazily: the workers load them (never the zygote)
    targets: list[str] = field(default_factory=list)
    models: list[str] = field(default_factory=list)  # pydantic models built (module:qualname)
    zygote_control: dict[str, dict[str, Any]] = field(default_factory=dict)  # nodeid -> zygote outcome
    faults: list[dict[str, Any]] = field(default_factory=list)  # what fake_model served each test
    # tests whose control run has not come back yet (``control``): their control records stand
    # in, and the next run runs them again if this one stops first
    unchecked: list[str] = field(default_factory=list)

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
            "unchecked": self.unchecked,
            "imported": self.imported,
            "import_lines": self.import_lines,
            "preload": self.preload,
            "targets": self.targets,
            "models": self.models,
            "zygote_control": self.zygote_control,
            "faults": self.faults,
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
            unchecked=list(data.get("unchecked", [])),
            imported=data.get("imported", []),
            import_lines=data.get("import_lines"),
            preload=data.get("preload", []),
            targets=data.get("targets", []),
            models=data.get("models", []),
            zygote_control=data.get("zygote_control", {}),
            faults=data.get("faults", []),
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


def outcome_of(nodeid: str, result: JobResult) -> dict[str, Any]:
    """What the baseline stores about one test of a plain job (a measured batch or a control run):
    its record when the job reported it, else how the job ended."""
    record = result.record_of(nodeid)
    if record is None:
        return {"outcome": result.status.value, "duration": 0.0, "message": result.last_detail_line()}
    return {
        "outcome": record.outcome,
        "duration": record.duration,
        "message": record.message,
        "cpu": result.cpu,  # all threads, for the per-test CPU budget
    }


class ForkedBaseline:
    """A baseline assembled from forked children (the runner feeds it each job's result):
    per test one child measured by ``probe`` (coverage, duration, outcome), then one plain child,
    the control run, which proves the test passes again when nothing changed (a test that
    passes only once, say because it leaves a file behind, would otherwise kill every mutant).
    ``baseline`` is ``None`` unless every test passed or was skipped in its measured child.

    Coverage matches a plain pytest run's except at batch starts: a session- or module-scoped
    fixture (or a cache filled on first use) runs again in each batch and its lines count for
    that batch's first test too. The selection can only grow from that, never lose a test.
    """

    def __init__(self, collected: list[str], imports: dict[str, Any]) -> None:
        self.collected = collected
        self.imports = imports  # a worker's start-up: import_lines, preload, models
        self.records: dict[str, dict[str, Any]] = {}
        self.control: dict[str, dict[str, Any]] = {}
        self.lines: dict[str, dict[int, list[str]]] = {}
        self.modules: dict[str, None] = {}  # in the order the children first loaded them
        self.targets: dict[str, None] = {}  # the copy's modules the children loaded, likewise
        self.models: set[str] = set()

    @staticmethod
    def _record(nodeid: str, result: JobResult) -> dict[str, Any]:
        return outcome_of(nodeid, result)

    def add_control(self, nodeid: str, result: JobResult) -> None:
        self.control[nodeid] = self._record(nodeid, result)

    def add(self, nodeids: list[str], result: JobResult) -> None:
        """One measured batch: ``nodeids`` ran in order in one child."""
        for nodeid in nodeids:
            self.records[nodeid] = self._record(nodeid, result)
        measured = result.baseline or {}
        for file, by_line in measured.get("lines", {}).items():
            per_line = self.lines.setdefault(file, {})
            for number, tests in by_line.items():
                per_line.setdefault(int(number), []).extend(tests)
        self.modules.update(dict.fromkeys(measured.get("modules", [])))
        self.targets.update(dict.fromkeys(measured.get("targets", [])))
        self.models.update(measured.get("models", []))

    def failed(self) -> list[str]:
        """Tests whose measured batch did not end green (in collection order)."""
        return [
            n for n in self.collected if self.records.get(n, {}).get("outcome") not in ("passed", "skipped")
        ]

    def warm_up(self) -> Baseline:
        """What the batches so far say to load before forking (``Baseline`` for its warm-up
        fields only): the start-up's and the children's third-party modules and models, and the
        copy's modules the children imported lazily."""
        preload = list(self.imports.get("preload", []))
        known = set(preload)
        preload += [m for m in self.modules if m not in known]
        models = sorted(set(self.imports.get("models", [])) | self.models)
        return Baseline(
            tests={}, order=[], coverage={}, preload=preload, targets=list(self.targets), models=models
        )

    def baseline(self) -> Baseline | None:
        outcomes = [self.records.get(n, {}).get("outcome") for n in self.collected]
        if "passed" not in outcomes or any(o not in ("passed", "skipped") for o in outcomes):
            return None
        preload = list(self.imports.get("preload", []))
        known = set(preload)
        preload += [m for m in self.modules if m not in known]
        import_lines: dict[str, list[int]] = self.imports.get("import_lines", {})
        coverage = {
            f: {line: sorted(tests) for line, tests in lines.items()} for f, lines in self.lines.items()
        }
        return Baseline(
            tests={n: {k: v for k, v in r.items() if k != "cpu"} for n, r in self.records.items()},
            order=list(self.collected),
            coverage=coverage,
            imported=sorted(set(import_lines) | set(self.lines)),
            control={
                n: r for n, r in self.control.items() if self.records.get(n, {}).get("outcome") == "passed"
            },
            import_lines=import_lines,
            preload=preload,
            targets=list(self.targets),
            models=sorted(set(self.imports.get("models", [])) | self.models),
        )


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
    command = [sys.executable, "-m", "pytest", *pytest_args, "-p", "mutagent.engine.harness.baseline_plugin"]
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            command,
            cwd=copy_root,
            env={
                **env,
                "MUTAGENT_BASELINE": str(config_path),
                FAULT_LOG_ENV: str(aux / FAULT_LOG_FILE),
                **parent_pid_env(),
            },
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
