"""The official ``openai`` SDK against the fake server's Chat Completions dialect.

Documents what the SDK does with each fault: unlike anthropic's, it wraps a cut or reset in
``APIConnectionError``; a stream without ``[DONE]`` still ends silently; malformed JSON raises
``json.JSONDecodeError``; an in-stream error raises ``APIError``.
"""

from __future__ import annotations

import asyncio
import json

import openai
import pytest

from mutagent.fakeserver import ToolCall
from mutagent.fakeserver import behaviours as b

MESSAGES = [{"role": "user", "content": "hi"}]


@pytest.fixture
def client(server):
    with openai.OpenAI(base_url=server.base_url + "/v1", api_key="k", max_retries=0, timeout=5.0) as c:
        yield c


def chunks(client, **extra):
    return list(client.chat.completions.create(model="gpt-test", messages=MESSAGES, stream=True, **extra))


def text_of(stream_chunks) -> str:
    return "".join(c.choices[0].delta.content or "" for c in stream_chunks if c.choices)


def test_stream_helper_assembles_text_and_several_tool_calls(server, client) -> None:
    calls = [ToolCall("call_1", "lookup", {"q": "x", "deep": {"k": [1, 2]}}), ToolCall("call_2", "clock", {})]
    server.script(b.ok(text="Checking.", tool_calls=calls))
    with client.chat.completions.stream(model="gpt-test", messages=MESSAGES) as stream:
        completion = stream.get_final_completion()
    message = completion.choices[0].message
    assert message.content == "Checking." and completion.choices[0].finish_reason == "tool_calls"
    assert [(c.id, c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls] == [
        ("call_1", "lookup", {"q": "x", "deep": {"k": [1, 2]}}),
        ("call_2", "clock", {}),
    ]
    assert completion.model == "gpt-test"


def test_raw_chunks_and_usage_when_asked(server, client) -> None:
    server.script(b.ok(text="Hello world"), b.ok(text="Hello world"))
    plain = chunks(client)
    assert text_of(plain) == "Hello world" and plain[-1].choices[0].finish_reason == "stop"
    with_usage = chunks(client, stream_options={"include_usage": True})
    assert with_usage[-1].choices == [] and with_usage[-1].usage.completion_tokens > 0


def test_non_streaming_create(server, client) -> None:
    server.script(b.ok(text=None, tool_calls=[ToolCall("call_7", "f", {"a": 1})]))
    completion = client.chat.completions.create(model="gpt-test", messages=MESSAGES)
    call = completion.choices[0].message.tool_calls[0]
    assert (call.id, json.loads(call.function.arguments)) == ("call_7", {"a": 1})


@pytest.mark.parametrize("reset", [False, True])
def test_cut_raises_api_connection_error(server, client, reset) -> None:
    server.script(b.cut(after=2, text="Hello world", reset=reset))
    received = []
    with pytest.raises(openai.APIConnectionError):
        for chunk in client.chat.completions.create(model="m", messages=MESSAGES, stream=True):
            received.append(chunk)
    assert len(received) <= 2


def test_missing_done_ends_silently(server, client) -> None:
    server.script(b.no_stop(text="Hi"))
    got = chunks(client)
    assert text_of(got) == "Hi" and got[-1].choices[0].finish_reason == "stop"
    assert server.responses[0].frames_sent == 3  # role, "Hi", finish: no [DONE]


def test_malformed_raises_json_decode_error(server, client) -> None:
    server.script(b.malformed(after=2))
    with pytest.raises(json.JSONDecodeError):
        chunks(client)


def test_error_event_raises_api_error(server, client) -> None:
    server.script(b.error_event(after=1, error_type="server_error"))
    with pytest.raises(openai.APIError) as info:
        chunks(client)
    assert info.value.body["type"] == "server_error"


@pytest.mark.parametrize(
    "status, error",
    [(429, openai.RateLimitError), (500, openai.InternalServerError), (503, openai.InternalServerError)],
)
def test_http_errors(server, client, status, error) -> None:
    server.script(b.http_error(status, headers={"retry-after": "3"}))
    with pytest.raises(error) as info:
        chunks(client)
    assert info.value.status_code == status and info.value.response.headers["retry-after"] == "3"
    assert info.value.body["type"] in ("rate_limit_error", "api_error")


def test_stall_times_out(server) -> None:
    server.script(b.stall(seconds=None, after=1))
    with openai.OpenAI(
        base_url=server.base_url + "/v1", api_key="k", max_retries=0, timeout=0.3
    ) as impatient:
        with pytest.raises(openai.APITimeoutError):
            chunks(impatient)
    assert server.wait_for_responses(timeout=5) and server.client_disconnects == [0]


def test_empty_and_length(server, client) -> None:
    server.script(b.empty(), b.length_stop(text="partial"))
    empty = chunks(client)
    assert text_of(empty) == "" and all(not c.choices[0].delta.tool_calls for c in empty)
    length = chunks(client)
    assert text_of(length) == "partial" and length[-1].choices[0].finish_reason == "length"


def test_async_client_parses_text_and_tool_calls(server) -> None:
    server.script(b.ok(text="async", tool_calls=[ToolCall("call_a", "lookup", {"q": "a"})]))

    async def main():
        async with openai.AsyncOpenAI(
            base_url=server.base_url + "/v1", api_key="k", max_retries=0
        ) as aclient:
            async with aclient.chat.completions.stream(model="m", messages=MESSAGES) as stream:
                return await stream.get_final_completion()

    message = asyncio.run(main()).choices[0].message
    assert message.content == "async" and json.loads(message.tool_calls[0].function.arguments) == {"q": "a"}


@pytest.mark.parametrize("reset", [False, True])
def test_dropped_connection_is_an_api_connection_error(server, client, reset) -> None:
    server.script(b.drop(reset=reset))
    with pytest.raises(openai.APIConnectionError):
        chunks(client)
    assert server.responses[0].status is None  # not even a status line was sent
