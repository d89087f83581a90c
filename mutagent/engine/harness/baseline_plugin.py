"""pytest plugin loaded (``-p``) into the baseline run: per-test coverage, outcomes and durations.

Coverage starts when pytest imports this plugin, before conftests and test modules import the
target, and uses coverage.py's default thread support so that lines run by the fake server's
and the SDK's threads count too. Each test gets its own dynamic context
(``cov.switch_context(nodeid)``), the way pytest-cov's ``--cov-context=test`` does it; what runs
between tests (collection, imports) stays in the empty context and selects nothing.

It also records what the fresh-import zygote needs: the lines each source file ran outside any
test (import time: a module-level constant read there flows into other import-time state) and
the modules the session imported from outside the target copy and the pydantic models whose
schemas it built (the zygote and the workers import and build them once, before forking, so
that no mutant's process pays for them again; see ``warm``).

Configuration arrives as a JSON file named by ``MUTAGENT_BASELINE``; the result is written to the
``out`` path in it when the session ends.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import coverage
import pytest

from mutagent.engine.harness import netblock
from mutagent.engine.harness.pytest_support import add_report, external_modules, shadow_check, short_message
from mutagent.engine.harness.warm import complete_models
from mutagent.engine.protocol import die_with_parent

with open(os.environ["MUTAGENT_BASELINE"], encoding="utf-8") as _handle:
    _config: dict[str, Any] = json.load(_handle)
_sources: dict[str, str] = _config["sources"]  # absolute path in the copy -> relative path
die_with_parent()
netblock.install()
_cov = coverage.Coverage(data_file=None, include=list(_sources), config_file=False)
_cov.start()

_tests: dict[str, dict[str, Any]] = {}
_collect_errors: list[dict[str, str]] = []
_shadowed: list[dict[str, str]] = []


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    _cov.switch_context(item.nodeid)
    try:
        return (yield)
    finally:
        _cov.switch_context("")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    add_report(_tests, report)


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.failed:
        _collect_errors.append({"nodeid": report.nodeid, "message": short_message(report)})


def pytest_collection_finish(session: pytest.Session) -> None:
    _shadowed.extend(shadow_check(_config["modules"]))


def _coverage_by_line() -> tuple[dict[str, dict[str, list[str]]], list[str], dict[str, list[int]]]:
    """Per-test coverage by line, the source files executed at all, and the lines each file ran
    outside any test (the empty context: imports and collection)."""
    data = _cov.get_data()
    lines: dict[str, dict[str, list[str]]] = {}
    imported: list[str] = []
    outside_tests: dict[str, list[int]] = {}
    real_sources = {os.path.realpath(path): rel for path, rel in _sources.items()}
    for measured in data.measured_files():
        relative = real_sources.get(os.path.realpath(measured))
        if relative is None:
            continue
        imported.append(relative)
        per_line = lines.setdefault(relative, {})
        for line, contexts in data.contexts_by_lineno(measured).items():
            tests = {context for context in contexts if context}
            if tests:
                per_line[str(line)] = sorted(tests | set(per_line.get(str(line), ())))
            if "" in contexts:
                outside_tests.setdefault(relative, []).append(line)
    return lines, sorted(imported), {f: sorted(set(ls)) for f, ls in outside_tests.items()}


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _cov.stop()
    coverage_by_line, imported, outside_tests = _coverage_by_line()
    result = {
        "exitstatus": int(exitstatus),
        "tests": _tests,
        "collected": [item.nodeid for item in getattr(session, "items", [])],
        "collect_errors": _collect_errors,
        "shadowed": _shadowed,
        "coverage": coverage_by_line,
        "imported": imported,
        "import_lines": outside_tests,
        "preload": external_modules(sys.modules, str(session.config.rootpath)),
        "models": complete_models(str(session.config.rootpath)),
    }
    with open(_config["out"], "w", encoding="utf-8") as handle:
        json.dump(result, handle)
