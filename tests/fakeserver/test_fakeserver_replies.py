"""Replies a mutant simulates, in every dialect, streamed and not, read by both official SDKs.

Each reply kind is what an agent loop has to refuse or survive: tool arguments the model never
finished (a raw string, not a mapping), an empty choice/content/output list, a 200 whose body
the test writes itself, a stop reason the test names (or ``null``). Bad script values fail in
the test that writes them, never as a server 500.
"""

from __future__ import annotations

import json

import anthropic
import openai
import pytest

from mutagent.fakeserver import FakeModelServer, ToolCall
from mutagent.fakeserver import behaviours as b

TRUNCATED = '{"q": "weath'
NOT_AN_OBJECT = "[1, 2]"
MESSAGES = [{"role": "user", "content": "hi"}]


@pytest.fixture
def server():
    with FakeModelServer() as srv:
        yield srv
        assert srv.problems() == []


@pytest.fixture
def claude(server):
    with anthropic.Anthropic(base_url=server.base_url, api_key="k", max_retries=0, timeout=5.0) as c:
        yield c


@pytest.fixture
def gpt(server):
    with openai.OpenAI(base_url=server.base_url + "/v1", api_key="k", max_retries=0, timeout=5.0) as c:
        yield c


def anthropic_events(claude):
    return [e for e in claude.messages.create(model="m", max_tokens=9, messages=MESSAGES, stream=True)]


def anthropic_message(claude):
    return claude.messages.create(model="m", max_tokens=9, messages=MESSAGES)


def chat_chunks(gpt):
    return list(gpt.chat.completions.create(model="m", messages=MESSAGES, stream=True))


def chat_completion(gpt):
    return gpt.chat.completions.create(model="m", messages=MESSAGES)


def responses_events(gpt):
    return list(gpt.responses.create(model="m", input=MESSAGES, stream=True))


def responses_response(gpt):
    return gpt.responses.create(model="m", input=MESSAGES)


# -- tool arguments as a raw string ---------------------------------------------------------------


@pytest.mark.parametrize("arguments", [TRUNCATED, NOT_AN_OBJECT, ""])
def test_raw_tool_arguments_reach_every_dialect_verbatim(server, claude, gpt, arguments) -> None:
    call = ToolCall("call_1", "lookup", arguments)
    server.script(*[b.ok(text=None, tool_calls=[call])] * 6)
    streamed = "".join(
        e.delta.partial_json for e in anthropic_events(claude) if e.type == "content_block_delta"
    )
    chat = "".join(
        c.choices[0].delta.tool_calls[0].function.arguments
        for c in chat_chunks(gpt)
        if c.choices and c.choices[0].delta.tool_calls
    )
    responses = [e for e in responses_events(gpt) if e.type == "response.function_call_arguments.done"]
    assert streamed == chat == responses[0].arguments == arguments
    assert chat_completion(gpt).choices[0].message.tool_calls[0].function.arguments == arguments
    assert responses_response(gpt).output[0].arguments == arguments
    # A JSON body cannot carry unfinished JSON: Anthropic's ``input`` is the string itself when
    # it does not parse, the parsed value when it does.
    expected = json.loads(arguments) if arguments == NOT_AN_OBJECT else arguments
    assert anthropic_message(claude).content[0].input == expected


def test_truncated_arguments_stream_in_pieces(server, claude) -> None:
    server.script(b.ok(text=None, tool_calls=[ToolCall("toolu_1", "lookup", '{"query": "weather in Par')]))
    pieces = [e.delta.partial_json for e in anthropic_events(claude) if e.type == "content_block_delta"]
    assert len(pieces) >= 2 and "".join(pieces) == '{"query": "weather in Par'


# -- an empty choice / content / output list -------------------------------------------------------


def test_no_choices_in_every_dialect(server, claude, gpt) -> None:
    server.script(*[b.no_choices()] * 6)
    assert [e.type for e in anthropic_events(claude)] == ["message_start", "message_delta", "message_stop"]
    assert anthropic_message(claude).content == []
    streamed = chat_chunks(gpt)
    assert streamed and all(chunk.choices == [] for chunk in streamed)
    assert chat_completion(gpt).choices == []
    assert responses_events(gpt)[-1].response.output == []
    assert responses_response(gpt).output == []


# -- a 200 whose body the test writes --------------------------------------------------------------


def test_raw_json_body_is_sent_verbatim(server, gpt, claude) -> None:
    body = {"id": "chatcmpl-x", "object": "chat.completion", "created": 1, "model": "m", "choices": []}
    server.script(b.raw(body), b.raw(b'{"id": "msg_x", "type": "message", "content": "not a list"}'))
    assert chat_completion(gpt).choices == []
    assert anthropic_message(claude).content == "not a list"  # the SDK does not validate
    assert server.responses[0].status == 200 and server.requests[0].outcome == "scripted"


def test_raw_sse_body_is_streamed_verbatim(server, gpt, claude) -> None:
    sse = 'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[]}\n\n'
    server.script(
        b.raw(sse + "data: [DONE]\n\n", headers={"x-scripted": "yes"}),
        b.raw('event: message_stop\ndata: {"type":"message_stop"}\n\n'),
    )
    raw = gpt.chat.completions.with_raw_response.create(model="m", messages=MESSAGES, stream=True)
    assert raw.headers["x-scripted"] == "yes" and raw.headers["content-type"] == "text/event-stream"
    assert [chunk.id for chunk in raw.parse()] == ["c"]
    assert [e.type for e in anthropic_events(claude)] == ["message_stop"]


def test_raw_body_with_any_status(server, gpt) -> None:
    server.script(b.raw("<html>bad gateway</html>", status=502, content_type="text/html"))
    with pytest.raises(openai.InternalServerError) as info:
        chat_completion(gpt)
    assert info.value.status_code == 502 and info.value.response.text == "<html>bad gateway</html>"


# -- the stop reason a test names ------------------------------------------------------------------


def test_a_named_stop_reason_is_passed_through(server, claude, gpt) -> None:
    server.script(*[b.ok(text="x", stop_reason="pause_turn")] * 4)
    assert anthropic_events(claude)[-2].delta.stop_reason == "pause_turn"
    assert chat_chunks(gpt)[-1].choices[0].finish_reason == "pause_turn"
    last = responses_events(gpt)[-1]
    assert last.type == "response.incomplete" and last.response.incomplete_details.reason == "pause_turn"
    assert chat_completion(gpt).choices[0].finish_reason == "pause_turn"


@pytest.mark.parametrize(
    "reason, anthropic_reason, chat_reason",
    [("length", "max_tokens", "length"), ("refusal", "refusal", "content_filter")],
)
def test_known_stop_reasons_are_translated(
    server, claude, gpt, reason, anthropic_reason, chat_reason
) -> None:
    server.script(*[b.ok(text="x", stop_reason=reason)] * 3)
    assert anthropic_message(claude).stop_reason == anthropic_reason
    assert chat_completion(gpt).choices[0].finish_reason == chat_reason
    assert responses_response(gpt).status == "incomplete"


def test_null_and_empty_stop_reasons(server, claude, gpt) -> None:
    server.script(*[b.ok(text="x", stop_reason=b.NULL_STOP)] * 3, *[b.ok(text="x", stop_reason="")] * 2)
    assert anthropic_events(claude)[-2].delta.stop_reason is None
    assert chat_chunks(gpt)[-1].choices[0].finish_reason is None
    assert responses_events(gpt)[-1].type == "response.completed"
    assert anthropic_message(claude).stop_reason == ""
    assert chat_completion(gpt).choices[0].finish_reason == ""


# -- script errors are the test's ------------------------------------------------------------------


@pytest.mark.parametrize(
    "make, error",
    [
        (lambda: ToolCall("id", "name", 5), TypeError),
        (lambda: ToolCall(1, "name", {}), TypeError),
        (lambda: ToolCall("id", None, {}), TypeError),
        (lambda: ToolCall("id", "name", {"x": object()}), TypeError),
        (lambda: b.ok(tool_calls=ToolCall("id", "name")), TypeError),
        (lambda: b.ok(tool_calls=[{"id": "x"}]), TypeError),
        (lambda: b.ok(text=5), TypeError),
        (lambda: b.ok(stop_reason=3), TypeError),
        (lambda: b.raw(5), TypeError),
        (lambda: b.raw({"x": object()}), TypeError),
        (lambda: b.raw("x", status=99), ValueError),
        (lambda: b.raw("x", status=True), ValueError),
        (lambda: b.error_event(error_type=None), TypeError),
        (lambda: b.cut(after=-1), ValueError),
        (lambda: b.raw("x", headers={"x-bad": "a\r\nInjected: 1"}), ValueError),
        (lambda: b.http_error(429, headers={"": "1"}), ValueError),
        (lambda: b.http_error(429, headers=[("retry-after", "1")]), TypeError),
    ],
)
def test_bad_script_values_fail_in_the_test(make, error) -> None:
    with pytest.raises(error):
        make()
