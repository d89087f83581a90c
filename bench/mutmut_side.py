"""Driving mutmut 3.8 on a temporary copy: its configuration, its run, and reading its verdicts.

mutmut writes ``mutants/`` into the project root it runs in (the temporary copy) and records one
exit code per mutant in ``mutants/**/*.py.meta`` (``exit_code_by_key``), which is what is read
back here (no mutmut import: its configuration is read from the current directory at import).
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from common import BenchError, Measurement, bench_env, measure

# mutmut's exit-code meanings (mutmut/stats.py), folded into mutagent's status names
_STATUS_BY_EXIT_CODE = {
    1: "Killed",
    3: "Killed",
    0: "Survived",
    5: "NoCoverage",
    33: "NoCoverage",
    34: "Ignored",
    36: "Timeout",
    24: "Timeout",
    -24: "Timeout",
    152: "Timeout",
    255: "Timeout",
    37: "CompileError",
    -11: "RuntimeError",
    -9: "RuntimeError",
    None: "Pending",
}
_NAME = re.compile(r"^(?P<module>.+?)\.x(?:_(?P<func>[^.ǁ]+)|ǁ(?P<cls>[^ǁ]+)ǁ(?P<meth>[^.ǁ]+))__mutmut_\d+$")


@dataclass
class MutmutRun:
    measurement: Measurement
    statuses: Counter[str] = field(default_factory=Counter)
    per_unit: Counter[str] = field(default_factory=Counter)  # "module:qualname" -> mutants
    durations: list[float] = field(default_factory=list)  # seconds per mutant, as mutmut recorded them

    @property
    def mutants(self) -> int:
        return sum(self.statuses.values())


def write_config(root: Path, source_paths: list[str], tests: list[str], do_not_mutate: list[str]) -> None:
    """Write ``[tool.mutmut]`` into ``root/pyproject.toml`` (the copy's; created if missing)."""

    def toml_list(items: list[str]) -> str:
        return "[" + ", ".join(json.dumps(item) for item in items) + "]"

    path = root / "pyproject.toml"
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    if "[tool.mutmut]" in text:
        raise BenchError(f"{path} already has a [tool.mutmut] table")
    text += (
        "\n[tool.mutmut]\n"
        f"source_paths = {toml_list(source_paths)}\n"
        f"pytest_add_cli_args_test_selection = {toml_list(tests)}\n"
        f"do_not_mutate = {toml_list(do_not_mutate)}\n"
    )
    path.write_text(text, encoding="utf-8")


def mutmut_command() -> list[str]:
    executable = shutil.which("mutmut")
    return [executable] if executable else [sys.executable, "-m", "mutmut"]


def run_mutmut(root: Path, workers: int, timeout: float | None = None) -> MutmutRun:
    """Time ``mutmut run --max-children N`` in ``root`` and read back its per-mutant verdicts."""
    command = [*mutmut_command(), "run", "--max-children", str(workers)]
    measurement = measure(command, cwd=root, env=bench_env(), timeout=timeout)
    run = MutmutRun(measurement)
    for meta in sorted((root / "mutants").rglob("*.meta")):
        data = json.loads(meta.read_text(encoding="utf-8"))
        for name, code in data.get("exit_code_by_key", {}).items():
            run.statuses[_STATUS_BY_EXIT_CODE.get(code, "RuntimeError")] += 1
            run.per_unit[unit_of(name)] += 1
        run.durations += [float(d) for d in data.get("durations_by_key", {}).values() if d is not None]
    if not measurement.ok or not run.mutants:
        raise BenchError(
            f"mutmut run failed (exit {measurement.returncode}, {run.mutants} mutants) in {root}:\n"
            f"{measurement.tail()}"
        )
    return run


def unit_of(name: str) -> str:
    """``calc.core.x_clamp__mutmut_3`` -> ``calc.core:clamp``; methods -> ``module:Class.method``."""
    match = _NAME.match(name)
    if not match:
        return name
    qualname = match["func"] or f"{match['cls']}.{match['meth']}"
    return f"{match['module']}:{qualname}"
