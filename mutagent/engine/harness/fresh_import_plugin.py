"""pytest plugin for mutants only a fresh import can apply (module level, class bodies ...).

Loaded with ``-p`` into a fresh ``python -m pytest <node ids>`` started by a worker. At import it
puts a finder first on ``sys.meta_path`` that loads the one mutated module from the source text
in ``MUTAGENT_FRESH_IMPORT``'s JSON (in memory, under the copy's path): mutated code is never written
to disk. It records whether the mutated module really was imported, and each test's outcome.

A collection error in a selected test module means the mutant broke the import of the tests
(the baseline proved they import cleanly unmutated), so those selected tests count as failed.

Each test's start and record are also appended to the ``progress`` file as they happen, so that
after a timeout or a crash the worker knows exactly which tests ran (and which one was running).
With ``control`` set there is no mutated module: the run only checks that the selected tests pass
unmutated in this kind of process (the zygote's control run).
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import json
import os
import sys
import traceback
from types import ModuleType
from typing import Any

import pytest

from mutagent.engine.harness import netblock
from mutagent.engine.harness.pytest_support import add_report, short_message
from mutagent.engine.harness.summary_work import pytest_runtest_makereport  # noqa: F401 - a hook
from mutagent.engine.protocol import die_with_parent

with open(os.environ["MUTAGENT_FRESH_IMPORT"], encoding="utf-8") as _handle:
    _spec: dict[str, Any] = json.load(_handle)
die_with_parent()
netblock.install()
_state: dict[str, Any] = {"loaded": False, "harness_error": None}
_tests: dict[str, dict[str, Any]] = {}
_collect_errors: list[dict[str, str]] = []
_progress = open(_spec["progress"], "a", encoding="utf-8") if _spec.get("progress") else None


def _note(event: dict[str, Any]) -> None:
    """One line of the progress file, flushed at once: the process may die right after it."""
    if _progress is not None:
        _progress.write(json.dumps(event) + "\n")
        _progress.flush()


class _MutantLoader(importlib.abc.Loader):
    """Executes the mutated source under the copy's path."""

    def create_module(self, spec: Any) -> None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        try:
            code = compile(_spec["source"], _spec["path"], "exec", dont_inherit=True)
        except BaseException:  # noqa: B036 - the engine compiled it already; anything here is ours
            _state["harness_error"] = traceback.format_exc()
            raise
        _state["loaded"] = True
        try:
            exec(code, module.__dict__)
        except BaseException:  # noqa: B036 - recorded, then re-raised exactly as an import would
            _state["import_error"] = traceback.format_exc(limit=-6)
            _write(
                {
                    "partial": True,
                    "loaded": True,
                    "harness_error": None,
                    "tests": [],
                    "import_error": _state["import_error"],
                }
            )
            raise

    def get_source(self, fullname: str) -> str:
        return str(_spec["source"])


class _MutantFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != _spec["module"]:
            return None
        is_package = os.path.basename(_spec["path"]) == "__init__.py"
        return importlib.util.spec_from_file_location(
            fullname,
            _spec["path"],
            loader=_MutantLoader(),
            submodule_search_locations=[os.path.dirname(_spec["path"])] if is_package else None,
        )


if _spec.get("control"):
    _state["loaded"] = True  # nothing to load: the unmutated tests run as they are
elif _spec["module"] in sys.modules:
    _state["harness_error"] = f"{_spec['module']} was imported before mutagent's import hook was installed"
else:
    sys.meta_path.insert(0, _MutantFinder())


def pytest_runtest_logstart(nodeid: str, location: Any) -> None:
    _note({"start": nodeid})


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    add_report(_tests, report)


def pytest_runtest_logfinish(nodeid: str, location: Any) -> None:
    if nodeid in _tests:
        _note({"test": _tests[nodeid]})


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.failed:
        _collect_errors.append(
            {
                "nodeid": report.nodeid,
                "message": short_message(report),
                "text": str(getattr(report, "longreprtext", ""))[-3000:],
            }
        )


def _selected_failed_by_collection(args: list[str]) -> list[dict[str, Any]]:
    failed = []
    for nodeid in args:
        for error in _collect_errors:
            prefix = error["nodeid"]
            if prefix and (nodeid == prefix or nodeid.startswith(prefix + "::")) and nodeid not in _tests:
                failed.append(
                    {
                        "nodeid": nodeid,
                        "outcome": "failed",
                        "duration": 0.0,
                        "message": f"collection: {error['message']}",
                        "text": error["text"],
                    }
                )
                break
    return failed


def _write(result: dict[str, Any]) -> None:
    """Write the result file (also early, when importing the mutant raised: pytest may then stop
    before the session finishes, e.g. when a conftest cannot import the target)."""
    with open(_spec["out"], "w", encoding="utf-8") as handle:
        json.dump(result, handle)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    args = [str(arg) for arg in session.config.args]
    tests = list(_tests.values()) + _selected_failed_by_collection(args)
    _write(
        {
            "exitstatus": int(exitstatus),
            "loaded": _state["loaded"],
            "harness_error": _state["harness_error"],
            "tests": tests,
            "import_error": _state.get("import_error"),
        }
    )
