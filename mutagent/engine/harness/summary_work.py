"""Work that plugins do for pytest's terminal summary, skipped in the harness's test processes.

A mutant's tests run in processes whose terminal output nobody reads: the harness reports each
test's outcome over its pipe, and the process leaves with ``os._exit`` before any summary is
printed. Some plugins still do real work at report time to feed that summary. The one measured:
when a property test fails, hypothesis's pytest plugin imports ``hypothesis.extra._patching``
(which imports libcst) and parses the test's module to suggest an ``@example`` patch in the
summary. In a forked mutant child that import is paid again every time, about 0.45 s per killed
mutant on the sample agent, and every failing property test of a full kill matrix parses its
module again.

The hook below drops hypothesis's note of the failing examples before its report hook reads it;
the failure itself, its message, traceback and outcome are left exactly as they were.
"""

from __future__ import annotations

from typing import Any

import pytest

#: where hypothesis keeps a failed property test's examples for its summary patch
HYPOTHESIS_FAILING_EXAMPLES = "_hypothesis_failing_examples"


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> None:
    """Runs inside every report hookwrapper, so before hypothesis's reads the note (it does so
    for the teardown report, after the call phase set it)."""
    if call.when == "teardown":
        item.__dict__.pop(HYPOTHESIS_FAILING_EXAMPLES, None)
