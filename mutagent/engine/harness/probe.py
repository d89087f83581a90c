"""Measuring one test of the baseline inside a forked child: its lines, and what it loaded.

The baseline runs each test once, alone, in a child forked from a warm worker: the same harness
every mutant's tests run in, so one pass both measures the suite (per-test coverage, durations)
and checks that each test behaves there (what a separate control run used to do). This module is
the child's side: coverage.py runs for exactly one test (its own threads included, coverage's
default thread support), and the child reports the third-party modules it imported and the
pydantic models it built on top of what the worker already had, so that the worker and the
zygote can load them once before forking instead of in every child (see ``warm``), and the
modules of the target copy it imported lazily, which the workers (never the zygote) load too.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import coverage

from mutagent.engine.harness.pytest_support import copy_modules, external_modules
from mutagent.engine.harness.warm import complete_models


class ChildProbe:
    """Coverage for a forked child running a batch of baseline tests, one dynamic context per test
    (``switch``), the way pytest-cov's ``--cov-context=test`` separates them."""

    def __init__(self, sources: dict[str, str], root: str, cov: coverage.Coverage | None = None) -> None:
        """``cov``: the worker's start-up coverage, stopped. Reusing it matters: its cache of
        which files to trace is warm, where a new instance decides again for every library file
        the tests touch. Its data starts empty in the child: coverage.py opens new data when it
        sees the pid change."""
        self.sources = {os.path.realpath(path): rel for path, rel in sources.items()}
        self.root = root
        self.modules_before = set(sys.modules)
        self.models_before = set(complete_models(root))
        self.cov = cov or coverage.Coverage(data_file=None, include=list(sources), config_file=False)
        self.cov.start()

    def switch(self, nodeid: str) -> None:
        """Lines run from now on belong to ``nodeid`` (``""``: to no test)."""
        self.cov.switch_context(nodeid)

    def finish(self) -> dict[str, Any]:
        """Per source file (relative path), line -> the tests that ran it; new modules, new models."""
        self.cov.stop()
        data = self.cov.get_data()
        lines: dict[str, dict[int, list[str]]] = {}
        for measured in data.measured_files():
            relative = self.sources.get(os.path.realpath(measured))
            if relative is None:
                continue
            for line, contexts in data.contexts_by_lineno(measured).items():
                tests = sorted(context for context in contexts if context)
                if tests:
                    lines.setdefault(relative, {})[line] = tests
        loaded = {n: m for n, m in list(sys.modules.items()) if n not in self.modules_before}
        modules = external_modules(loaded, self.root)  # only the new ones: a realpath per module is slow
        models = sorted(set(complete_models(self.root)) - self.models_before)
        targets = copy_modules(loaded, self.root)
        return {"lines": lines, "modules": modules, "models": models, "targets": targets}


def measure_imports_start(sources: dict[str, str]) -> coverage.Coverage:
    """Coverage of a worker's start-up (conftests, test modules, the target imported at
    collection): the lines each source file runs outside any test."""
    cov = coverage.Coverage(data_file=None, include=list(sources), config_file=False)
    cov.start()
    return cov


def idle_coverage(sources: dict[str, str]) -> coverage.Coverage:
    """Coverage set up for the baseline's children to start (started and stopped once, measuring
    nothing), in a worker that did not trace its start-up: a new instance in each child costs
    about a tenth of a second of set-up, once per measured batch."""
    cov = coverage.Coverage(data_file=None, include=list(sources), config_file=False)
    cov.start()
    cov.stop()
    return cov


def measure_imports_finish(cov: coverage.Coverage, sources: dict[str, str], root: str) -> dict[str, Any]:
    """What the worker's start-up ran and loaded (see ``Baseline.import_lines``, ``preload``)."""
    cov.stop()
    real = {os.path.realpath(path): rel for path, rel in sources.items()}
    data = cov.get_data()
    lines: dict[str, list[int]] = {}
    for measured in data.measured_files():
        relative = real.get(os.path.realpath(measured))
        if relative is not None:
            lines[relative] = sorted(data.lines(measured) or [])
    return {
        "import_lines": lines,
        "preload": external_modules(sys.modules, root),
        "models": complete_models(root),
    }
