"""Reports and the CI gate: terminal, Stryker-schema JSON, HTML, JUnit, SARIF, GitHub annotations and
Markdown summary, kill matrix, guard map, fault coverage.

Everything here reads a :class:`~mutagent.model.RunData` and never runs a test, so ``mutagent
report`` can re-render a finished run and the engine's ``run`` can call the same functions:

* :func:`render_terminal` (rich), :func:`write_reports` (``--json``/``--html``/``--junit``/
  ``--sarif``/``--markdown``), ``github.annotations`` (``--github``),
* :func:`evaluate_gate` + :func:`render_gate` (``--fail-under``/``--max-survived``/
  ``--fail-on-regression``, see ``ratchet``),
* :func:`finish_run` doing all of that and returning the exit code,
* :func:`merge_reports` (``mutagent merge``).

Choosing which mutants run (``--since``, ``--shard``) and writing one into the tree
(``mutagent apply``) live in :mod:`mutagent.mutants`.
"""

from __future__ import annotations

from mutagent.reports.finish import finish_run
from mutagent.reports.gate import GateResult, evaluate_gate, render_gate
from mutagent.reports.merge import load_report, merge_reports, merge_run_data
from mutagent.reports.terminal import render_terminal
from mutagent.reports.writer import write_reports

__all__ = [
    "GateResult",
    "evaluate_gate",
    "finish_run",
    "load_report",
    "merge_reports",
    "merge_run_data",
    "render_gate",
    "render_terminal",
    "write_reports",
]
