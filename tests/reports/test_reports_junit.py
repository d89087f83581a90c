"""JUnit XML: one testcase per mutant, survivors as failures with diff and hint; parses back."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from types import SimpleNamespace

import pytest
from testkit.sample_runs import sample_run_data

from mutagent.mutation import registry
from mutagent.reports.junit import to_junit
from mutagent.reports.opinfo import operator_info
from mutagent.reports.writer import write_reports

HINTS = {"retry-budget": "assert the exact number of requests the fake server received"}


@pytest.fixture
def hints(monkeypatch):
    """Operators the sample uses, with hints, in place of the real registry."""
    monkeypatch.setattr(
        registry, "get_operator", lambda name: SimpleNamespace(hint=HINTS.get(name, ""), description="")
    )
    operator_info.cache_clear()
    yield
    operator_info.cache_clear()


def parse(xml: str) -> ET.Element:
    return ET.fromstring(xml.encode("utf-8"))


def test_one_testcase_per_mutant_with_matching_counts(hints):
    data = sample_run_data()
    root = parse(to_junit(data))
    suite = root.find("testsuite")
    cases = suite.findall("testcase")
    assert len(cases) == len(data.mutants)
    assert {c.get("name").rsplit("[", 1)[1].rstrip("]") for c in cases} == {m.id for m in data.mutants}
    assert suite.get("tests") == str(len(data.mutants))
    assert suite.get("failures") == "3"  # 2 survived + 1 no coverage
    assert suite.get("errors") == "1"  # the harness crash
    assert suite.get("skipped") == "2"  # ignored + compile error
    assert len(suite.findall("testcase/failure")) == 3
    assert len(suite.findall("testcase/error")) == 1
    assert len(suite.findall("testcase/skipped")) == 2


def test_survivor_failure_carries_diff_tests_and_hint(hints):
    data = sample_run_data()
    survivor = next(m for m in data.mutants if m.operator == "retry-budget")
    root = parse(to_junit(data))
    case = next(c for c in root.iter("testcase") if survivor.id in c.get("name"))
    failure = case.find("failure")
    assert failure.get("type") == "Survived"
    assert "-MAX_RETRIES = 3" in failure.text and "+MAX_RETRIES = 4" in failure.text
    assert "tests/test_smoke.py::test_imports" in failure.text
    assert "hint: assert the exact number of requests" in failure.text
    assert case.get("file") == "agent/loop.py" and case.get("line") == "4"
    assert case.get("classname") == "agent.loop"


def test_killed_mutants_pass_and_name_their_killer(hints):
    data = sample_run_data()
    killed = next(m for m in data.mutants if m.operator == "drop-stop-check")
    case = next(c for c in parse(to_junit(data)).iter("testcase") if killed.id in c.get("name"))
    assert case.find("failure") is None and case.find("error") is None
    assert "test_missing_message_stop_is_retried" in case.find("system-out").text


def test_control_characters_do_not_break_the_xml(tmp_path):
    data = sample_run_data()
    crashed = next(m for m in data.mutants if data.results[m.id].error and "fork" in data.results[m.id].error)
    data.results[crashed.id].error = "bad bytes \x00\x07 and \udcff here"
    path = tmp_path / "junit.xml"
    write_reports(data, junit=path)
    root = ET.parse(path).getroot()
    error = next(root.iter("error"))
    assert error.text.startswith("bad bytes")
