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

import importlib
from typing import Any

# Imported on first use (PEP 562), not with the package: ``mutagent run`` reaches
# ``reports.writer`` through ``mutagent.mutants.apply`` before its first worker starts, and the
# terminal report imports libcst's matchers (~0.3 s), which would delay that start.
_HOMES = {
    "GateResult": "gate",
    "evaluate_gate": "gate",
    "finish_run": "finish",
    "load_report": "merge",
    "merge_reports": "merge",
    "merge_run_data": "merge",
    "render_gate": "gate",
    "render_terminal": "terminal",
    "write_reports": "writer",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
