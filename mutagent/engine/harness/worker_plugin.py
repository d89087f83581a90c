"""pytest plugin that turns a pytest process into a warm mutagent worker (loaded with ``-p``).

pytest collects the suite as usual (heavy imports happen once, here); then this plugin's
``pytest_runtestloop`` runs no test itself but serves jobs from the engine over a pipe
(``MUTAGENT_WORKER_FDS``), forking one child per job. Test reports are captured through
``pytest_runtest_logreport`` in the children.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

import pytest

from mutagent.engine.harness import netblock, probe, worker_fork  # noqa: F401 - takes its socket now
from mutagent.engine.harness.pytest_support import add_report
from mutagent.engine.harness.summary_work import pytest_runtest_makereport  # noqa: F401 - a hook
from mutagent.engine.messages import WorkerConfig
from mutagent.engine.protocol import die_with_parent

_started = time.monotonic()
# the environment as the engine gave it, before any conftest ran: fresh-import processes get this,
# not whatever the suite's collection put into os.environ (a plain pytest run starts without it)
_initial_env = dict(os.environ)
with open(os.environ["MUTAGENT_WORKER"], encoding="utf-8") as _handle:
    _config = WorkerConfig.from_json(_handle.read())
die_with_parent()
netblock.install()
_reports: dict[str, dict[str, Any]] = {}
# For a fresh baseline, the first worker measures what its start-up (collection) runs of the
# target; the others need not pay coverage's cost on every import (the baseline's children then
# start coverage afresh there).
_measuring = _config.measure and os.environ.get("MUTAGENT_WORKER_SLOT", "0") == "0"
_import_coverage = probe.measure_imports_start(dict(_config.targets)) if _measuring else None


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    add_report(_reports, report)


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> bool:
    from mutagent.engine.harness.worker import Worker

    worker = Worker(session, _config, _reports, _started, _initial_env, _import_coverage)
    worker.serve()
    if worker.stopped:
        _exit_now()
    return True


def _exit_now() -> None:
    """Leave at once after the engine's ``Stop``: this process ran no test itself (its children
    did), so pytest's session end has nothing of the suite to finish, while tearing down an
    interpreter holding the whole suite costs the engine, which waits for its workers, a few
    hundred milliseconds per run. A worker that could not start ends normally: its log then holds
    pytest's own account of the failure."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(0)
