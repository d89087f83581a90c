"""Operator metadata (hint, description) for reports, tolerant of operators this install lacks.

A report may be rendered from a JSON file produced elsewhere, with a third-party operator that is
not installed here, so an unknown name yields empty strings instead of an error.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache


@dataclass(frozen=True)
class OperatorInfo:
    name: str
    description: str = ""
    hint: str = ""
    failure: str = ""


@cache
def operator_info(name: str) -> OperatorInfo:
    """Hint and description of operator ``name``; empty fields if it is unknown or the registry fails."""
    try:
        from mutagent.mutation.registry import get_operator

        operator = get_operator(name)
    except Exception:  # a broken plugin must not break a report
        operator = None
    if operator is None:
        return OperatorInfo(name)
    return OperatorInfo(
        name=name,
        description=str(getattr(operator, "description", "") or ""),
        hint=str(getattr(operator, "hint", "") or ""),
        failure=str(getattr(operator, "failure", "") or ""),
    )
