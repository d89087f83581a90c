"""Driving irradiate 0.4.3 on a temporary copy, as a user would: ``irradiate run``, then its results.

irradiate is a Rust orchestrator that forks a warm pytest worker per mutant. It is installed into
its own environment (``venvs.IRRADIATE``, never the user's) and pointed with ``--python`` at the
interpreter that runs the benchmarks, so it tests with the same pytest and plugins as mutagent.
It writes ``.irradiate/`` and ``mutants/`` into the project root it runs in (the copy); the
verdicts are read back from ``irradiate results --json --all``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from common import BenchError, Measurement, bench_env, measure
from venvs import IRRADIATE

from mutagent.engine.selection.discover import discover


@dataclass
class IrradiateRun:
    measurement: Measurement
    statuses: Counter[str] = field(default_factory=Counter)

    @property
    def mutants(self) -> int:
        return sum(self.statuses.values())


def layout(target: Path, root: Path) -> list[str]:
    """``irradiate run`` arguments mutating the files mutagent discovers in ``target`` (relative to
    the project root ``root``) and running the tests it discovers; test files inside a source
    directory are excluded from mutation."""
    found = discover(target)
    prefix = target.relative_to(root).as_posix()

    def under(relative: str) -> str:
        return relative if prefix == "." else f"{prefix}/{relative}"

    sources = sorted({under(s).split("/", 1)[0] for s in found.sources})
    test_dirs = sorted({under(t).rsplit("/", 1)[0] for t in found.tests})
    if len(test_dirs) != 1:
        raise BenchError(f"irradiate takes one --tests-dir; mutagent discovered tests in {test_dirs}")
    ignored = [f"{d}/*" for d in test_dirs if any(d.startswith(s + "/") or d == s for s in sources)]
    return [*sources, "--tests-dir", test_dirs[0], *(arg for g in ignored for arg in ("--ignore", g))]


def run_irradiate(target: Path, root: Path, workers: int, timeout: float | None = None) -> IrradiateRun:
    """Time ``irradiate run ... --workers N`` in ``root`` (cold: a fresh copy) and read its verdicts."""
    binary = IRRADIATE.ensure().bin("irradiate")
    command = [
        str(binary),
        "run",
        *layout(target, root),
        "--workers",
        str(workers),
        "--python",
        sys.executable,
    ]
    measurement = measure(command, cwd=root, env=bench_env(), timeout=timeout)
    run = IrradiateRun(measurement)
    results = subprocess.run(
        [str(binary), "results", "--json", "--all"], cwd=root, capture_output=True, text=True, env=bench_env()
    )
    try:
        data = json.loads(results.stdout)
        run.statuses.update(str(m["status"]).capitalize() for m in data["mutants"])
    except (ValueError, KeyError, TypeError):
        pass
    if measurement.returncode == -9 and timeout is not None:
        raise BenchError(f"irradiate run did not finish within {timeout:.0f} s (stopped) in {root}")
    if not measurement.ok or not run.mutants:
        raise BenchError(
            f"irradiate run failed (exit {measurement.returncode}, {run.mutants} mutants) in {root}:\n"
            f"{measurement.tail()}\n{results.stderr.strip()[-500:]}"
        )
    return run
