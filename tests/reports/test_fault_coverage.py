"""Fault coverage: the fake server's fault log, its collection, and the reports built on it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest
from rich.console import Console
from testkit import FIXTURES
from testkit.sample_runs import sample_fault_log, sample_run_data

from mutagent.engine.orchestration.faults import FAULT_LOG_ENV, collect_fault_log
from mutagent.fakeserver import ToolCall
from mutagent.fakeserver import behaviours as b
from mutagent.fakeserver.dialects import RequestContext, dialect_named
from mutagent.fakeserver.faultlog import fault_name, position
from mutagent.mutation.registry import get_operator
from mutagent.reports.faults import CATALOGUE, fault_coverage, render_fault_coverage
from mutagent.reports.html_report import to_html
from mutagent.reports.merge import merge_run_data
from mutagent.reports.stryker import from_stryker_json, to_stryker_json

SCHEMA = json.loads((FIXTURES / "mutation-testing-report-schema.json").read_text(encoding="utf-8"))
CALL = [ToolCall("toolu_1", "lookup", {"query": "x" * 60})]
STREAM = RequestContext(index=0, model="m", stream=True, include_usage=False, input_tokens=1)
PLAIN = replace(STREAM, stream=False)


@pytest.mark.parametrize("dialect", ["anthropic", "openai"])
@pytest.mark.parametrize(
    "behaviour, fault, where",
    [
        (b.http_error(529, {"retry-after-ms": "20"}), "http-529+retry-after-ms", "before-first-byte"),
        (b.http_error(500), "http-500", "before-first-byte"),
        (b.drop(), "drop", "before-first-byte"),
        (b.cut(after=0), "cut", "stream-start"),
        (b.cut(after=3, text="Hello there world"), "cut", "mid-text"),
        (b.cut(after=4, text=None, tool_calls=CALL), "cut-reset", "mid-tool-args"),
        (b.no_stop(), "no-stop", "after-finish"),
        (b.error_event(after=2), "error-event:overloaded_error", "mid-text"),
        (b.stall(1.0, after=1), "stall", "stream-start"),
        (b.length_stop(), "length-stop", "complete"),
        (b.empty(), "empty", "complete"),
        (b.ok(tool_calls=CALL), "tool-call", "complete"),
        (b.endless(), "endless", "never-ends"),
    ],
)
def test_fault_and_stream_position_of_each_behaviour(dialect, behaviour, fault, where):
    if fault == "cut-reset":
        behaviour = b.cut(after=4, text=None, tool_calls=CALL, reset=True)
    assert fault_name(behaviour) == fault
    assert position(behaviour, dialect_named(dialect), STREAM) == where


def test_non_streaming_positions():
    anthropic = dialect_named("anthropic")
    assert position(b.cut(after=3), anthropic, PLAIN) == "mid-body"
    assert position(b.stall(1.0), anthropic, PLAIN) == "before-first-byte"


TARGET_TEST = """
import json
import urllib.request

from mutagent.fakeserver import behaviours as b


def post(url, stream):
    body = {"model": "m", "max_tokens": 5, "stream": stream, "messages": [{"role": "user", "content": "x"}]}
    request = urllib.request.Request(url + "/v1/messages", data=json.dumps(body).encode(),
                                     headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.read()
    except Exception as error:
        return error


def test_two_steps(fake_model):
    fake_model.script(b.cut(after=3, text="Hello there world"), b.ok())
    post(fake_model.base_url, True)
    post(fake_model.base_url, False)


def test_no_server():
    pass
"""


def run_suite(tmp_path: Path, log: Path | None) -> None:
    (tmp_path / "test_target.py").write_text(TARGET_TEST, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != FAULT_LOG_ENV}
    if log is not None:
        env[FAULT_LOG_ENV] = str(log)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-2000:]


def test_the_fixture_logs_each_served_step_only_when_asked(tmp_path: Path):
    log = tmp_path / "faults.jsonl"
    run_suite(tmp_path, log)
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert [(x["test"], x["fault"], x["position"], x["stream"], x["step"]) for x in lines] == [
        ("test_target.py::test_two_steps", "cut", "mid-text", True, 0),
        ("test_target.py::test_two_steps", "ok", "complete", False, 1),
    ]
    log.unlink()
    run_suite(tmp_path, None)
    assert not log.exists()


def test_collection_dedupes_skips_torn_lines_and_keeps_suite_order(tmp_path: Path):
    log = tmp_path / "faults.jsonl"
    entry = {"dialect": "anthropic", "behaviour": "ok", "fault": "ok", "position": "complete"}
    lines = [
        {**entry, "test": "t::b", "step": 0},
        {**entry, "test": "t::a", "step": 1},
        {**entry, "test": "t::a", "step": 0},
        {**entry, "test": "t::a", "step": 0},  # a batch run again after a worker restart
        {**entry, "test": "t::gone", "step": 0},  # not a test of this baseline
    ]
    log.write_text("\n".join(json.dumps(x) for x in lines) + '\n{"test": "t::a", "ste', encoding="utf-8")
    collected = collect_fault_log(log, ["t::a", "t::b"])
    assert [(x["test"], x["step"]) for x in collected] == [("t::a", 0), ("t::a", 1), ("t::b", 0)]
    assert collect_fault_log(tmp_path / "missing.jsonl", ["t::a"]) == []


def test_every_catalogue_operator_exists():
    for fault in CATALOGUE:
        for name in fault.operators:
            assert get_operator(name) is not None, (fault.key, name)


def test_coverage_of_the_sample_log():
    data = replace(sample_run_data(), faults=sample_fault_log())
    coverage = fault_coverage(data)
    assert coverage.dialects == ["anthropic"]
    scripted = {row.fault.key: row.tests for row in coverage.rows if row.tests}
    assert set(scripted) == {"http-429-wait", "http-5xx", "cut-text", "no-stop", "malformed", "tool-call"}
    assert scripted["malformed"] == ["tests/test_loop.py::test_malformed_json_gives_up_after_bounded_retries"]
    assert {row.fault.key for row in coverage.never} == {f.key for f in CATALOGUE} - set(scripted)
    console = Console(width=100, record=True)
    console.print(render_fault_coverage(data))
    text = console.export_text()
    assert "faults never scripted: 11 of 17" in text
    assert "accept-truncated-tool-arguments" in text  # next to the never-scripted mid-tool-call cut


def test_json_extension_validates_and_round_trips():
    data = replace(sample_run_data(), faults=sample_fault_log())
    report = to_stryker_json(data)
    jsonschema.validate(report, SCHEMA)
    assert report["mutagent"]["faultLog"] == data.faults
    keys = [f["fault"] for f in report["mutagent"]["faultCoverage"]["faults"] if not f["scriptedBy"]]
    assert "cut-tool-args" in keys
    again = from_stryker_json(report)
    assert again.faults == data.faults
    merged = merge_run_data([("a", replace(again, shard=(1, 2))), ("b", replace(again, shard=(2, 2)))])
    assert merged.faults == data.faults  # shards share one baseline: each step once
    assert "faultLog" not in to_stryker_json(sample_run_data())["mutagent"]  # no log, no field


def test_html_shows_the_fault_table():
    html = to_html(replace(sample_run_data(), faults=sample_fault_log()))
    assert html.count('class="unscripted"') == 11
    assert "never scripted" in html and 'id="faults-by-test"' in html
