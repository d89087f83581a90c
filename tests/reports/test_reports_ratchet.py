"""``--fail-on-regression BASE.json``: what the base detected stays detected, the score does not drop."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from testkit.sample_runs import sample_run_data

from mutagent import exitcodes
from mutagent.cli import main
from mutagent.model import MutantResult, RunData, Status
from mutagent.reports.gate import evaluate_gate
from mutagent.reports.ratchet import compare
from mutagent.reports.stats import status_of
from mutagent.reports.writer import write_reports


def with_status(data: RunData, mutant_id: str, status: Status) -> RunData:
    results = dict(data.results)
    results[mutant_id] = replace(results.get(mutant_id) or MutantResult(mutant_id, status), status=status)
    return replace(data, results=results)


def first(data: RunData, status: Status) -> str:
    return next(m.id for m in data.mutants if status_of(data, m) is status)


def test_the_same_run_passes_its_own_ratchet():
    data = sample_run_data()
    result = compare(data, data)
    assert result.passed and not result.regressions and not result.score_dropped
    gate = evaluate_gate(data, base=data, base_name="main.json")
    assert gate.checked and gate.passed


def test_a_killed_mutant_that_survives_now_fails():
    base = sample_run_data()
    now = with_status(base, first(base, Status.KILLED), Status.SURVIVED)
    gate = evaluate_gate(now, base=base, base_name="main.json")
    assert not gate.passed
    assert any("1 mutants detected in main.json go undetected now" in f for f in gate.failures)
    assert any("(Killed -> Survived)" in f for f in gate.failures)
    assert any("mutation score dropped from 70.0% in main.json to 60.0%" in f for f in gate.failures)


def test_a_timeout_that_loses_coverage_is_a_regression_too():
    base = sample_run_data()
    now = with_status(base, first(base, Status.TIMEOUT), Status.NO_COVERAGE)
    (regression,) = compare(base, now).regressions
    assert (regression.before, regression.now) == (Status.TIMEOUT, Status.NO_COVERAGE)


def test_a_new_survivor_is_no_regression_but_lowers_the_score():
    base = sample_run_data()
    older = replace(base, mutants=[m for m in base.mutants if m.id != first(base, Status.SURVIVED)])
    result = compare(older, base)  # base has one survivor the older run did not have
    assert result.regressions == [] and result.score_dropped
    better = with_status(base, first(base, Status.SURVIVED), Status.KILLED)
    assert compare(base, better).passed  # improving is always allowed


def test_report_command_fails_on_regression(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    base = sample_run_data()
    write_reports(base, json=tmp_path / "main.json")
    now = with_status(base, first(base, Status.KILLED), Status.SURVIVED)
    write_reports(now, json=tmp_path / "pr.json")
    code = main(
        [
            "report",
            "--from",
            str(tmp_path / "pr.json"),
            "-q",
            "--fail-on-regression",
            str(tmp_path / "main.json"),
        ]
    )
    out = capsys.readouterr().out
    assert code == exitcodes.GATE_FAILED and "gate FAILED" in out and "fail-on-regression" in out
    assert (
        main(
            [
                "report",
                "--from",
                str(tmp_path / "main.json"),
                "-q",
                "--fail-on-regression",
                str(tmp_path / "main.json"),
            ]
        )
        == 0
    )


def test_a_base_that_is_not_a_report_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    write_reports(sample_run_data(), json=tmp_path / "r.json")
    (tmp_path / "bad.json").write_text(json.dumps({"no": "files"}), encoding="utf-8")
    code = main(
        ["report", "--from", str(tmp_path / "r.json"), "--fail-on-regression", str(tmp_path / "bad.json")]
    )
    assert code == exitcodes.USAGE_ERROR
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and "bad.json" in err[0]
