"""Faults inserted into a test's own script (``mutagent.fakeserver.inject``): each fault lands
where its name says in every dialect, a transient fault leaves the scripted step for the retry,
and the ``fake_model`` fixture reads the fault from ``MUTAGENT_EXPLORE`` and records what the
agent sent."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import textwrap

import pytest

from mutagent.fakeserver import FakeModelServer, ToolCall
from mutagent.fakeserver import behaviours as b
from mutagent.fakeserver.dialects import RequestContext, dialect_named
from mutagent.fakeserver.faultlog import MID_TEXT, MID_TOOL_ARGS, fault_name, position
from mutagent.fakeserver.inject import (
    CUT_TEXT,
    CUT_TOOL_ARGS,
    EMPTY,
    ERROR_EVENT,
    HTTP,
    KINDS,
    LENGTH,
    NO_STOP,
    RESET,
    Fault,
    Inserter,
    faulted,
    source_of,
)

REPLY = b.ok(text="Looking it up", tool_calls=[ToolCall("call_1", "lookup", {"q": "weather in Paris"})])
CTX = RequestContext(index=0, model="m", stream=True, include_usage=False, input_tokens=1)


@pytest.mark.parametrize("dialect", ["anthropic", "openai", "responses"])
def test_each_stream_fault_strikes_where_its_name_says(dialect: str) -> None:
    d = dialect_named(dialect)
    cut_args = faulted(Fault(CUT_TOOL_ARGS), REPLY, d, stream=True)
    assert cut_args is not None and position(cut_args, d, CTX) == MID_TOOL_ARGS
    cut_text = faulted(Fault(CUT_TEXT), REPLY, d, stream=True)
    assert cut_text is not None and position(cut_text, d, CTX) == MID_TEXT
    assert fault_name(faulted(Fault(NO_STOP), REPLY, d, stream=True)) == "no-stop"
    assert fault_name(faulted(Fault(LENGTH), REPLY, d, stream=True)) == "length-stop"
    assert fault_name(faulted(Fault(EMPTY), REPLY, d, stream=True)) == "empty"
    event = faulted(Fault(ERROR_EVENT, error_type="api_error"), REPLY, d, stream=True)
    assert fault_name(event) == "error-event:api_error"
    header = faulted(Fault(HTTP, status=429, header="retry-after-ms", wait=0.25), REPLY, d, stream=True)
    assert fault_name(header) == "http-429+retry-after-ms" and dict(header.headers) == {
        "retry-after-ms": "250"
    }


def test_a_fault_that_does_not_fit_its_step_is_not_served() -> None:
    anthropic = dialect_named("anthropic")
    assert faulted(Fault(CUT_TOOL_ARGS), b.ok(text="no tools here"), anthropic, stream=True) is None
    assert faulted(Fault(CUT_TEXT), REPLY, anthropic, stream=False) is None  # a stream fault, no stream
    assert faulted(Fault(EMPTY), b.http_error(500), anthropic, stream=True) is None  # no turn to copy
    assert faulted(Fault(RESET), b.http_error(500), anthropic, stream=False) is not None  # transient
    with pytest.raises(ValueError, match="unknown fault kind"):
        Fault("sideways")


@pytest.mark.parametrize("kind", KINDS)
def test_the_source_of_an_inserted_fault_builds_the_same_behaviour(kind: str) -> None:
    """What suggest writes into a test is what exploration served."""
    fault = Fault(kind, status=429, header="retry-after", wait=1.0, error_type="api_error")
    served = faulted(fault, REPLY, dialect_named("anthropic"), stream=True)
    assert served is not None
    rebuilt = eval(source_of(served), {"b": b, "ToolCall": ToolCall})  # noqa: S307 - our own output
    assert rebuilt == served
    calls_only = b.ok(text=None, tool_calls=REPLY.tool_calls)  # no text: spelt, not left to a default
    served = faulted(fault, calls_only, dialect_named("anthropic"), stream=True)
    if served is not None:
        assert eval(source_of(served), {"b": b, "ToolCall": ToolCall}) == served  # noqa: S307


def post(server: FakeModelServer) -> int:
    body = {"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}], "stream": True}
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        conn.request("POST", "/v1/messages", body=json.dumps(body))
        response = conn.getresponse()
        response.read()
        return response.status
    except (ConnectionError, http.client.HTTPException):
        return 0
    finally:
        conn.close()


def test_a_transient_fault_is_served_before_its_step_and_leaves_it_in_the_script(server) -> None:
    inserter = Inserter(Fault(HTTP, at=1, status=503, header="retry-after", wait=1.0))
    server.insert_fault(inserter).script(b.ok(text="one"), b.ok(text="two"))
    assert [post(server) for _ in range(3)] == [200, 503, 200]
    assert server.scripted_steps == 2 and server.remaining == [] and server.problems() == []
    assert source_of(inserter.served) == 'b.http_error(503, headers={"retry-after": "1"})'


def test_a_reset_before_the_first_byte(server) -> None:
    server.insert_fault(Inserter(Fault(RESET))).script(b.ok(text="one"))
    assert [post(server), post(server)] == [0, 200]


EXPLORED_SUITE = """
import http.client, json
from mutagent.fakeserver import behaviours as b

def post(server):
    body = {"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]}
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    conn.request("POST", "/v1/messages", body=json.dumps(body))
    status = conn.getresponse().status
    conn.close()
    return status

def test_retries_once(fake_model):
    fake_model.script(b.ok(text="hi"))
    statuses = [post(fake_model)]
    if statuses[0] != 200:
        statuses.append(post(fake_model))
    assert statuses[-1] == 200
"""


def test_the_fixture_inserts_the_explored_fault_and_records_the_requests(tmp_path) -> None:
    (tmp_path / "test_inner.py").write_text(textwrap.dedent(EXPLORED_SUITE))
    record = tmp_path / "record.json"
    fault = Fault(HTTP, status=429, header="retry-after", wait=1.0)
    env = {
        **os.environ,
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "MUTAGENT_EXPLORE": json.dumps({"fault": fault.to_json(), "record": str(record)}),
    }
    command = [sys.executable, "-m", "pytest", "test_inner.py", "-q", "-p", "no:cacheprovider",
               "-p", "mutagent.fakeserver.plugin"]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    data = json.loads(record.read_text())
    assert data["fired"] and data["inserted"] == 'b.http_error(429, headers={"retry-after": "1"})'
    assert [r["outcome"] for r in data["requests"]] == ["scripted", "scripted"]
    assert data["requests"][0]["t"] == 0.0 and data["steps"] == 1 and data["problems"] == []
    assert data["fault_request"] == 0
    assert data["requests"][0]["digest"] == data["requests"][1]["digest"]  # the same body, resent
