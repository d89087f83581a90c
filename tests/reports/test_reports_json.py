"""The Stryker-schema JSON report: validates, maps every field as documented, round-trips.

The schema in tests/fixtures is a verbatim copy of
packages/report-schema/src/mutation-testing-report-schema.json from
github.com/stryker-mutator/mutation-testing-elements (npm package mutation-testing-report-schema 3.9.0).
"""

from __future__ import annotations

import copy
import json

import jsonschema
import pytest
from testkit import FIXTURES
from testkit.sample_runs import LOOP_FILE, SAMPLE_TESTS, large_run_data, sample_run_data

from mutagent.errors import UsageError
from mutagent.model import Status, TextPatch
from mutagent.reports.stryker import from_stryker_json, minimal_patch, to_stryker_json
from mutagent.reports.writer import write_reports

SCHEMA = json.loads((FIXTURES / "mutation-testing-report-schema.json").read_text())


def validate(report: dict) -> None:
    jsonschema.validate(report, SCHEMA, cls=jsonschema.Draft7Validator)


def mutants_by_id(report: dict) -> dict[str, dict]:
    return {m["id"]: m for f in report["files"].values() for m in f["mutants"]}


@pytest.mark.parametrize("build", [sample_run_data, large_run_data])
def test_report_validates_against_official_schema(build):
    report = to_stryker_json(build())
    validate(report)
    assert report["schemaVersion"] == "2"
    assert report["framework"]["name"] == "mutagent"


def test_schema_copy_is_the_real_one():
    # the validation above is only meaningful if the schema rejects broken reports
    report = to_stryker_json(sample_run_data())
    broken = copy.deepcopy(report)
    next(iter(broken["files"].values()))["mutants"][0]["status"] = "Dead"
    with pytest.raises(jsonschema.ValidationError):
        validate(broken)
    broken = copy.deepcopy(report)
    next(iter(broken["files"].values()))["mutants"][0]["location"]["start"]["column"] = 0
    with pytest.raises(jsonschema.ValidationError):
        validate(broken)


def test_fields_map_one_to_one():
    data = sample_run_data()
    report = to_stryker_json(data)
    entries = mutants_by_id(report)
    assert len(entries) == len(data.mutants)
    for mutant in data.mutants:
        entry = entries[mutant.id]
        result = data.results[mutant.id]
        assert entry["status"] == result.status.value
        assert entry["mutatorName"] == mutant.operator
        assert entry["replacement"] == mutant.replacement
        assert entry["description"] == mutant.description
        assert entry["killedBy"] == result.killed_by
        assert entry["coveredBy"] == result.covered_by
        # 1-based lines and columns; the model's columns are 0-based
        assert entry["location"]["start"] == {
            "line": mutant.location.start_line,
            "column": mutant.location.start_col + 1,
        }
        assert entry["location"]["end"] == {
            "line": mutant.location.end_line,
            "column": mutant.location.end_col + 1,
        }
    statuses = {e["status"] for e in entries.values()}
    assert statuses == {s.value for s in Status if s is not Status.PENDING}


def test_location_points_at_the_original_text():
    data = sample_run_data()
    report = to_stryker_json(data)
    for file, entry in report["files"].items():
        lines = entry["source"].split("\n")
        for m in entry["mutants"]:
            start, end = m["location"]["start"], m["location"]["end"]
            assert start["line"] == end["line"]
            text = lines[start["line"] - 1][start["column"] - 1 : end["column"] - 1]
            assert text == m["mutagent"]["original"], (file, m["id"])


def test_ignored_and_error_mutants_carry_a_status_reason():
    data = sample_run_data()
    entries = mutants_by_id(to_stryker_json(data))
    ignored = [e for e in entries.values() if e["status"] == "Ignored"]
    assert ignored and all("no mutate" in e["statusReason"] for e in ignored)
    runtime = [e for e in entries.values() if e["status"] == "RuntimeError"]
    assert runtime and "BlockingIOError" in runtime[0]["statusReason"]
    assert all("statusReason" not in e for e in entries.values() if e["status"] == "Survived")


def test_test_files_list_every_test_id_used():
    data = sample_run_data()
    report = to_stryker_json(data)
    defined = {t["id"]: t["name"] for f in report["testFiles"].values() for t in f["tests"]}
    assert set(defined) == set(SAMPLE_TESTS)
    assert defined["tests/test_loop.py::test_backoff_grows[3]"] == "test_backoff_grows[3]"
    assert set(report["testFiles"]) == {"tests/test_loop.py", "tests/test_tools.py", "tests/test_smoke.py"}
    used = {t for e in mutants_by_id(report).values() for t in e["killedBy"] + e["coveredBy"]}
    assert used <= set(defined)


def test_files_have_language_and_full_source():
    data = sample_run_data()
    report = to_stryker_json(data)
    assert report["files"][LOOP_FILE]["source"] == data.sources[LOOP_FILE]
    assert {f["language"] for f in report["files"].values()} == {"python"}


@pytest.mark.parametrize("build", [sample_run_data, large_run_data])
def test_round_trip_is_exact(build):
    data = build()
    back = from_stryker_json(json.loads(json.dumps(to_stryker_json(data))))
    assert back.results == data.results
    assert back.tests == data.tests
    assert back.sources == data.sources
    original = {m.id: m for m in data.mutants}
    for mutant in back.mutants:
        before = original[mutant.id]
        source = data.sources[mutant.file]
        assert mutant.mutated_source(source) == before.mutated_source(source)
        assert (mutant.scope, mutant.location, mutant.original, mutant.ignored_reason) == (
            before.scope,
            before.location,
            before.original,
            before.ignored_reason,
        )


def test_minimal_patch_keeps_the_mutation_exact():
    source = "class A:\n    def f(self):\n        return retry(3)\n"
    whole_statement = TextPatch(0, len(source), source.replace("retry(3)", "retry(0)"))
    small = minimal_patch(source, whole_statement)
    assert small.apply(source) == whole_statement.apply(source)
    assert small.text == "0" and small.end - small.start == 1


def test_report_from_another_tool_loads():
    source = "x = a + b\n"
    foreign = {
        "schemaVersion": "2",
        "thresholds": {"high": 80, "low": 60},
        "files": {
            "m.py": {
                "language": "python",
                "source": source,
                "mutants": [
                    {
                        "id": "1",
                        "mutatorName": "ArithmeticOperator",
                        "replacement": "a - b",
                        "status": "Survived",
                        "location": {"start": {"line": 1, "column": 5}, "end": {"line": 1, "column": 10}},
                    },
                ],
            }
        },
    }
    data = from_stryker_json(foreign)
    mutant = data.mutants[0]
    assert mutant.original == "a + b"
    assert mutant.mutated_source(source) == "x = a - b\n"
    assert data.results["1"].status is Status.SURVIVED


@pytest.mark.parametrize(
    "bad, message",
    [
        ([], "not a mutation-testing report"),
        ({"schemaVersion": "2"}, "not a mutation-testing report"),
        ({"schemaVersion": "7", "files": {}}, "unsupported"),
        ({"schemaVersion": "2", "files": {"a.py": {"source": "", "mutants": [{"id": "1"}]}}}, "malformed"),
    ],
)
def test_bad_reports_are_one_line_usage_errors(bad, message):
    with pytest.raises(UsageError, match=message):
        from_stryker_json(bad, "r.json")


def test_written_file_is_valid_json_and_schema(tmp_path):
    path = tmp_path / "sub" / "report.json"
    write_reports(sample_run_data(), json=path)
    validate(json.loads(path.read_text(encoding="utf-8")))
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]
