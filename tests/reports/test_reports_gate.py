"""The CI gate: which rule failed, by how much, and which mutants survived."""

from __future__ import annotations

import pytest
from rich.console import Console
from testkit.sample_runs import sample_run_data

from mutagent.errors import UsageError
from mutagent.model import MutantResult, Status
from mutagent.reports.gate import evaluate_gate, render_gate


def survivors(data):
    return [m for m in data.mutants if data.results[m.id].status in (Status.SURVIVED, Status.NO_COVERAGE)]


def test_no_rule_means_no_gate():
    result = evaluate_gate(sample_run_data())
    assert result.passed and not result.checked and result.messages == []


def test_fail_under_fails_below_the_score_and_names_it():
    data = sample_run_data()  # 7 of 10 detected = 70%
    result = evaluate_gate(data, fail_under=80)
    assert not result.passed
    assert result.failures == ["fail-under: mutation score 70.0% is below 80% (7 of 10 mutants detected)"]
    assert {m.id for m in result.survivors} == {m.id for m in survivors(data)}


def test_fail_under_passes_at_or_above_the_score():
    assert evaluate_gate(sample_run_data(), fail_under=70).passed
    assert evaluate_gate(sample_run_data(), fail_under=69.9).passed


def test_max_survived_counts_no_coverage_too():
    data = sample_run_data()  # 2 survived + 1 no coverage
    assert evaluate_gate(data, max_survived=3).passed
    result = evaluate_gate(data, max_survived=2)
    assert not result.passed
    assert (
        "3 mutants survived (2 survived + 1 without coverage), more than the 2 allowed" in result.failures[0]
    )


def test_both_rules_report_each_verdict():
    result = evaluate_gate(sample_run_data(), fail_under=50, max_survived=0)
    assert not result.passed
    assert len(result.messages) == 2 and len(result.failures) == 1
    assert result.failures[0].startswith("max-survived")


def test_killing_the_survivors_passes_the_gate():
    data = sample_run_data()
    for mutant in survivors(data):
        data.results[mutant.id] = MutantResult(
            mutant.id, Status.KILLED, killed_by=["tests/test_x.py::test_new"]
        )
    result = evaluate_gate(data, fail_under=100, max_survived=0)
    assert result.passed, result.messages
    assert result.survivors == []


def test_rendered_failure_names_rule_and_every_survivor():
    data = sample_run_data()
    console = Console(record=True, width=100)
    render_gate(evaluate_gate(data, max_survived=0), console)
    text = console.export_text()
    assert "gate FAILED" in text
    assert "max-survived" in text
    for mutant in survivors(data):
        assert mutant.id in text
        assert f"{mutant.file}:{mutant.location.start_line}" in text


def test_pending_mutants_are_noted_not_counted():
    data = sample_run_data()
    pending = data.mutants[0]
    del data.results[pending.id]
    result = evaluate_gate(data, fail_under=0)
    assert result.passed
    assert any("1 mutant not run (pending), not counted" in m for m in result.messages)


@pytest.mark.parametrize("fail_under, max_survived", [(101, None), (-1, None), (None, -1)])
def test_impossible_thresholds_are_usage_errors(fail_under, max_survived):
    with pytest.raises(UsageError):
        evaluate_gate(sample_run_data(), fail_under, max_survived)
