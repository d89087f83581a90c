"""Lists of test ids that stay short: a parametrised test's cases folded into one entry.

A parametrised suite gives one node id per case (``test_stream[case-0]`` ... ``[case-31]``), and a
mutant covered by all of them listed 32 ids, one line each at 80 columns. The compact report
names the test function once with its number of cases; ``--verbose``, ``mutagent show`` and the
JSON report keep every id.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable


def function_of(nodeid: str) -> str:
    """``tests/t.py::test_x[a-1]`` -> ``tests/t.py::test_x`` (the id of the test function)."""
    if nodeid.endswith("]") and "[" in nodeid:  # the first "[" opens the id: it may hold "::" or "["
        return nodeid[: nodeid.index("[")] or nodeid
    return nodeid


def cases_per_function(nodeids: Iterable[str]) -> Counter[str]:
    """How many node ids (cases) each test function has in ``nodeids`` (say, the whole suite)."""
    return Counter(function_of(nodeid) for nodeid in nodeids)


def group_by_function(nodeids: Iterable[str]) -> dict[str, list[str]]:
    """Node ids grouped by test function, functions in order of their first case."""
    groups: dict[str, list[str]] = {}
    for nodeid in dict.fromkeys(nodeids):
        groups.setdefault(function_of(nodeid), []).append(nodeid)
    return groups


def collapse(nodeids: Iterable[str], suite: Counter[str] | None = None) -> list[str]:
    """One entry per test function: a lone case keeps its id, several read ``func (N cases)``,
    or ``func (N of M cases)`` when ``suite`` (``cases_per_function`` of the suite) has more."""
    shown: list[str] = []
    for function, cases in group_by_function(nodeids).items():
        if len(cases) == 1:
            shown.append(cases[0])
            continue
        total = suite.get(function, 0) if suite is not None else 0
        count = f"{len(cases)} of {total}" if total > len(cases) else str(len(cases))
        shown.append(f"{function} ({count} cases)")
    return shown
