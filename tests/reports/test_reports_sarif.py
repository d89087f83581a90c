"""``--sarif``: one result per survivor on the mutated span, rules with help, valid SARIF 2.1.0."""

from __future__ import annotations

import copy
from dataclasses import replace

import jsonschema
import pytest
from testkit.sample_runs import sample_run_data
from testkit.sarif_schema import validate_sarif

from mutagent.model import Location
from mutagent.reports.diff import diff_for
from mutagent.reports.opinfo import operator_info
from mutagent.reports.sarif import to_sarif
from mutagent.reports.stats import undetected_mutants


def test_sample_run_is_valid_sarif_with_one_result_per_survivor():
    data = sample_run_data()
    log = validate_sarif(to_sarif(data))
    (run,) = log["runs"]
    survivors = undetected_mutants(data)
    assert [r["partialFingerprints"]["mutagentMutantId/v1"] for r in run["results"]] == [
        m.id for m in survivors
    ]
    rules = run["tool"]["driver"]["rules"]
    for result, mutant in zip(run["results"], survivors, strict=True):
        assert result["ruleId"] == mutant.operator == rules[result["ruleIndex"]]["id"]
        region = result["locations"][0]["physicalLocation"]["region"]
        loc = mutant.location
        assert (region["startLine"], region["startColumn"], region["endLine"], region["endColumn"]) == (
            loc.start_line,
            loc.start_col + 1,
            loc.end_line,
            loc.end_col + 1,
        )
        assert diff_for(data, mutant).rstrip("\n") in result["message"]["text"]
    assert run["columnKind"] == "unicodeCodePoints"


def test_a_real_operator_gives_its_failure_and_hint_as_rule_help():
    data = sample_run_data()
    survivor = undetected_mutants(data)[0]
    real = replace(survivor, operator="skip-backoff")
    data.mutants[data.mutants.index(survivor)] = real
    log = validate_sarif(to_sarif(data))
    rule = next(r for r in log["runs"][0]["tool"]["driver"]["rules"] if r["id"] == "skip-backoff")
    info = operator_info("skip-backoff")
    assert info.failure and info.hint
    assert info.failure in rule["help"]["text"] and info.hint in rule["help"]["text"]
    assert rule["shortDescription"]["text"] == info.description


def test_multi_line_span_keeps_its_end():
    data = sample_run_data()
    survivor = undetected_mutants(data)[0]
    data.mutants[data.mutants.index(survivor)] = replace(survivor, location=Location(4, 0, 6, 3))
    region = validate_sarif(to_sarif(data))["runs"][0]["results"][0]["locations"][0]["physicalLocation"][
        "region"
    ]
    assert (region["startLine"], region["endLine"], region["endColumn"]) == (4, 6, 4)


def test_the_schema_check_can_fail():
    log = to_sarif(sample_run_data())
    broken = copy.deepcopy(log)
    broken["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    with pytest.raises(jsonschema.ValidationError):
        validate_sarif(broken)
    wrong_version = {**copy.deepcopy(log), "version": "2.0.0"}
    with pytest.raises(jsonschema.ValidationError):
        validate_sarif(wrong_version)


def test_no_survivors_is_an_empty_but_valid_log():
    data = sample_run_data()
    data.mutants = [m for m in data.mutants if m not in undetected_mutants(data)]
    log = validate_sarif(to_sarif(data))
    assert log["runs"][0]["results"] == [] and log["runs"][0]["tool"]["driver"]["rules"] == []
