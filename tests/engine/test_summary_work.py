"""Reporting work for pytest's terminal summary is skipped in the harness's test processes
(``harness/summary_work.py``), and nothing else about a failure changes."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

PROPERTY_TEST = """
from hypothesis import given, settings, strategies as st

@settings(database=None, derandomize=True)
@given(st.integers())
def test_property(n):
    assert n < 5
"""

CONFTEST = """
import sys

def pytest_sessionfinish(session):
    print("PATCHING-IMPORTED:", "hypothesis.extra._patching" in sys.modules)
"""


def _run(pytester: pytest.Pytester, *plugin: str) -> pytest.RunResult:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_prop=PROPERTY_TEST)
    return pytester.runpytest_subprocess("-p", "no:randomly", "-p", "no:cacheprovider", "-s", *plugin)


def test_hypothesis_builds_its_summary_patch_in_a_plain_run(pytester: pytest.Pytester) -> None:
    result = _run(pytester)  # the contrast: this is the work the harness leaves out
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*PATCHING-IMPORTED: True"])


def test_the_harness_fails_the_same_test_without_building_the_patch(pytester: pytest.Pytester) -> None:
    result = _run(pytester, "-p", "mutagent.engine.harness.summary_work")
    result.assert_outcomes(failed=1)  # the verdict is the same
    result.stdout.fnmatch_lines(["*PATCHING-IMPORTED: False"])
    result.stdout.fnmatch_lines(["*Failing test case: test_property(", "*n=5,"])  # its report is whole
