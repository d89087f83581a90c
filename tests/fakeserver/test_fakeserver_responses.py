"""The official ``openai`` SDK's Responses API against the fake server's ``/v1/responses`` dialect.

Pins what ``client.responses.create(...)`` and ``client.responses.stream(...)`` do with each
behaviour: a cut or reset is ``APIConnectionError``; a stream without ``response.completed``
ends silently on the raw stream but makes ``get_final_response()`` raise; an in-stream error
is *not* raised by the SDK (it yields the ``error`` and ``response.failed`` events).
"""

from __future__ import annotations

import json

import openai
import pytest

from mutagent.fakeserver import FakeModelServer, ToolCall, event_names
from mutagent.fakeserver import behaviours as b

INPUT = [{"role": "user", "content": "hi"}]


@pytest.fixture
def client(server):
    with openai.OpenAI(base_url=server.base_url + "/v1", api_key="k", max_retries=0, timeout=5.0) as c:
        yield c


def raw_events(client, **extra):
    return list(client.responses.create(model="gpt-test", input=INPUT, stream=True, **extra))


def final_response(client):
    with client.responses.stream(model="gpt-test", input=INPUT) as stream:
        return stream.get_final_response()


def test_stream_helper_assembles_text_and_several_function_calls(server, client) -> None:
    calls = [ToolCall("call_1", "lookup", {"q": "x", "deep": {"k": [1, 2]}}), ToolCall("call_2", "clock", {})]
    server.script(b.ok(text="Checking.", tool_calls=calls))
    response = final_response(client)
    assert response.output_text == "Checking." and response.status == "completed"
    assert [(o.call_id, o.name, json.loads(o.arguments)) for o in response.output[1:]] == [
        ("call_1", "lookup", {"q": "x", "deep": {"k": [1, 2]}}),
        ("call_2", "clock", {}),
    ]
    assert response.model == "gpt-test" and response.usage.output_tokens > 0


def test_raw_event_sequence_ends_with_response_completed(server, client) -> None:
    server.script(b.ok(text="Hello world"))
    events = raw_events(client)
    assert [e.type for e in events] == [
        "response.created", "response.in_progress", "response.output_item.added",
        "response.content_part.added", "response.output_text.delta", "response.output_text.delta",
        "response.output_text.done", "response.content_part.done", "response.output_item.done",
        "response.completed",
    ]  # fmt: skip
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert "".join(e.delta for e in events if e.type == "response.output_text.delta") == "Hello world"


def test_function_call_arguments_stream_as_deltas_then_done(server, client) -> None:
    server.script(b.ok(text=None, tool_calls=[ToolCall("call_9", "search", {"query": "weather in Paris"})]))
    events = raw_events(client)
    deltas = [e.delta for e in events if e.type == "response.function_call_arguments.delta"]
    done = next(e for e in events if e.type == "response.function_call_arguments.done")
    assert len(deltas) >= 2 and "".join(deltas) == done.arguments == '{"query":"weather in Paris"}'
    added = next(e for e in events if e.type == "response.output_item.added")
    assert (added.item.type, added.item.call_id, added.item.name) == ("function_call", "call_9", "search")


def test_non_streaming_create(server, client) -> None:
    server.script(b.ok(text="plain", tool_calls=[ToolCall("call_7", "f", {"a": 1})]))
    response = client.responses.create(model="gpt-test", input=INPUT)
    assert response.output_text == "plain" and response.status == "completed"
    assert (response.output[1].call_id, json.loads(response.output[1].arguments)) == ("call_7", {"a": 1})


def test_length_stop_is_response_incomplete(server, client) -> None:
    server.script(b.length_stop(text="partial"), b.length_stop(text="partial"))
    last = raw_events(client)[-1]
    assert last.type == "response.incomplete"
    assert last.response.incomplete_details.reason == "max_output_tokens"
    with client.responses.stream(model="m", input=INPUT) as stream:
        events = [e.type for e in stream]
        with pytest.raises(RuntimeError, match="response.completed"):
            stream.get_final_response()
    assert events[-1] == "response.incomplete"


def test_empty_turn_has_no_output_items(server, client) -> None:
    server.script(b.empty(), b.empty())
    assert final_response(client).output == []
    assert client.responses.create(model="m", input=INPUT).output_text == ""


@pytest.mark.parametrize("reset", [False, True])
def test_cut_raises_api_connection_error(server, client, reset) -> None:
    server.script(b.cut(after=4, text="Hello world", reset=reset))
    received = []
    with pytest.raises(openai.APIConnectionError):
        for event in client.responses.create(model="m", input=INPUT, stream=True):
            received.append(event)
    assert len(received) <= 4


def test_missing_response_completed_ends_silently_but_the_helper_refuses(server, client) -> None:
    server.script(b.no_stop(text="Hi"), b.no_stop(text="Hi"))
    events = raw_events(client)
    assert events[-1].type == "response.output_item.done"  # no marker, no error from the SDK
    with pytest.raises(RuntimeError, match="response.completed"):
        final_response(client)


def test_malformed_raises_json_decode_error(server, client) -> None:
    server.script(b.malformed(after=3))
    with pytest.raises(json.JSONDecodeError):
        raw_events(client)


def test_error_event_is_yielded_not_raised(server, client) -> None:
    server.script(b.error_event(after=3, error_type="server_error"), b.error_event(after=3))
    events = raw_events(client)
    assert [e.type for e in events[-2:]] == ["error", "response.failed"]
    assert events[-2].code == "server_error" and events[-1].response.error.code == "server_error"
    assert events[-1].response.status == "failed"
    with pytest.raises(RuntimeError, match="response.completed"):
        final_response(client)


@pytest.mark.parametrize(
    "status, error",
    [(429, openai.RateLimitError), (500, openai.InternalServerError), (503, openai.InternalServerError)],
)
def test_http_errors_carry_retry_after(server, client, status, error) -> None:
    server.script(b.http_error(status, headers={"retry-after": "3", "retry-after-ms": "2500"}))
    with pytest.raises(error) as info:
        raw_events(client)
    assert info.value.status_code == status and info.value.response.headers["retry-after"] == "3"
    assert info.value.response.headers["retry-after-ms"] == "2500"


def test_the_sdk_waits_retry_after_ms_before_its_own_retry(server) -> None:
    server.script(b.http_error(429, headers={"retry-after-ms": "300"}), b.ok(text="after"))
    with openai.OpenAI(base_url=server.base_url + "/v1", api_key="k", max_retries=1) as retrying:
        assert retrying.responses.create(model="m", input=INPUT).output_text == "after"
    assert server.gap(0, 1) >= 0.3


def test_stall_times_out(server) -> None:
    server.script(b.stall(seconds=None, after=2))
    with openai.OpenAI(
        base_url=server.base_url + "/v1", api_key="k", max_retries=0, timeout=0.3
    ) as impatient:
        with pytest.raises(openai.APITimeoutError):
            raw_events(impatient)
    assert server.wait_for_responses(timeout=5) and server.client_disconnects == [0]


@pytest.mark.parametrize("reset", [False, True])
def test_dropped_connection_is_an_api_connection_error(server, client, reset) -> None:
    server.script(b.drop(reset=reset))
    with pytest.raises(openai.APIConnectionError):
        raw_events(client)
    assert server.responses[0].status is None


def test_endless_stream_is_released_when_the_client_stops(server, client) -> None:
    server.script(b.endless(text="tick ", delay=0.005))
    with client.responses.stream(model="m", input=INPUT) as stream:
        for count, _event in enumerate(stream):
            if count == 8:
                break
    assert server.wait_for_responses(timeout=5) and server.client_disconnects == [0]
    names = event_names(b.endless(max_events=2, delay=0), "responses")
    assert names[-3:] == ["response.output_text.delta", "response.output_text.delta", "complete"]


def test_a_function_call_output_must_answer_a_call(server, client) -> None:
    call = {"type": "function_call", "call_id": "call_1", "name": "f", "arguments": "{}"}
    answer = {"type": "function_call_output", "call_id": "call_1", "output": "42"}
    server.script(b.ok(text="fine"), b.ok(text="unused"))
    client.responses.create(model="m", input=[*INPUT, call, answer])
    assert server.tool_results() == {"call_1": "42"}
    with pytest.raises(openai.BadRequestError, match="call_1"):
        client.responses.create(model="m", input=[*INPUT, call])  # the call is never answered
    assert server.violations == ["request #1 (/v1/responses): input[1]: tool call 'call_1' is never answered "
                                 "(the request ends with it)"]  # fmt: skip
    server._violations.clear()  # the violation was the point of this test


def test_previous_response_id_lets_outputs_answer_stored_calls(server, client) -> None:
    server.script(b.ok(text="fine"))
    answer = {
        "type": "function_call_output",
        "call_id": "call_1",
        "output": [{"type": "input_text", "text": "42"}],
    }
    client.responses.create(model="m", previous_response_id="resp_prev", input=[answer])
    assert server.violations == [] and server.tool_results() == {"call_1": "42"}


def test_seeded_random_mode_serves_responses(server, client) -> None:
    server.random_mode(7, weights={"ok": 1, "length": 1, "429": 1})
    outcomes = []
    for _ in range(6):
        try:
            outcomes.append(final_response(client).status)
        except openai.RateLimitError:
            outcomes.append("429")
        except RuntimeError:
            outcomes.append("incomplete")
    kinds = {"ok": "completed", "length": "incomplete", "429": "429"}
    assert outcomes == [kinds[kind] for kind in server.drawn]


def test_record_then_replay_a_responses_exchange(tmp_path) -> None:
    path = tmp_path / "run.jsonl"
    with FakeModelServer() as upstream:
        upstream.script(b.ok(text="recorded", tool_calls=[ToolCall("call_r", "f", {"a": 1})]))
        with FakeModelServer(upstream=upstream.base_url, record_to=path) as recorder:
            with openai.OpenAI(base_url=recorder.base_url + "/v1", api_key="secret", max_retries=0) as c:
                final_response(c)
    assert "secret" not in path.read_text()
    with FakeModelServer() as replaying:
        replaying.replay(path)
        with openai.OpenAI(base_url=replaying.base_url + "/v1", api_key="k", max_retries=0) as c:
            response = final_response(c)
        assert replaying.responses[0].replay_body_matched
    assert response.output_text == "recorded" and response.output[1].call_id == "call_r"


def test_non_streaming_faults(server, client) -> None:
    server.script(b.cut(text="Hello world"), b.length_stop(text="cut"), b.stall(seconds=0.2, text="late"))
    with pytest.raises(openai.APIConnectionError):
        client.responses.create(model="m", input=INPUT)
    incomplete = client.responses.create(model="m", input=INPUT)
    assert incomplete.status == "incomplete" and incomplete.incomplete_details.reason == "max_output_tokens"
    assert client.responses.create(model="m", input=INPUT).output_text == "late"
    assert server.gap(1, 2) < 0.2 <= server.responses[2].ended - server.responses[2].started
