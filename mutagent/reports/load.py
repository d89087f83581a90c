"""Where the report commands get their :class:`RunData`: the run's store or a JSON report.

The store belongs to the engine (``mutagent.store.load_run_data``) and is imported only when
needed, so the report commands work from a JSON report (``--from``) even on a machine that only
merges CI shards.
"""

from __future__ import annotations

from pathlib import Path

from mutagent import exitcodes
from mutagent.errors import MutagentError, UsageError
from mutagent.model import Mutant, RunData


def load_run_data_for(path: str | None, from_json: str | None = None) -> RunData:
    """RunData from ``--from REPORT.json`` if given, else from the store under ``path`` (default ``.``)."""
    if from_json is not None:
        from mutagent.reports.merge import load_report

        return load_report(from_json)
    root = Path(path or ".")
    if not root.exists():
        raise UsageError(f"{root}: no such directory")
    if not root.is_dir():
        hint = f" (to read a JSON report use --from {root})" if root.suffix == ".json" else ""
        raise UsageError(f"{root} is not a directory{hint}")
    try:
        from mutagent.store import load_run_data
    except ModuleNotFoundError as exc:
        if exc.name != "mutagent.store":
            raise
        message = "this mutagent has no result store (mutagent.store is missing)"
        raise MutagentError(message, exitcodes.INTERNAL_ERROR) from exc
    return load_run_data(root)


def find_mutant(run_data: RunData, ident: str) -> Mutant:
    """The mutant whose id is ``ident`` or starts with it (ids are long; prefixes are handy)."""
    ident = ident.strip()
    exact = [m for m in run_data.mutants if m.id == ident]
    if exact:
        return exact[0]
    matches = [m for m in run_data.mutants if ident and m.id.startswith(ident)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise UsageError(f"no mutant with id {ident!r} in this run ('mutagent report' shows survivor ids)")
    shown = ", ".join(m.id for m in matches[:5])
    raise UsageError(f"id prefix {ident!r} is ambiguous: {shown}{' ...' if len(matches) > 5 else ''}")
