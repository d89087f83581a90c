"""The official ``anthropic`` SDK (2.x, on httpx2) against the fake server, one behaviour at a time.

Besides proving the streams parse, these tests document what the SDK does with each fault,
which is what an agent loop has to handle: a cut raises ``httpx2.RemoteProtocolError`` *unwrapped*,
a missing ``message_stop`` returns silently, malformed JSON raises ``json.JSONDecodeError``, an
error event raises ``APIStatusError`` on a 200 response.
"""

from __future__ import annotations

import asyncio
import json
import time

import anthropic
import httpx2
import pytest

from mutagent.fakeserver import FakeModelServer, ToolCall, event_names
from mutagent.fakeserver import behaviours as b

REQUEST = {"model": "claude-test", "max_tokens": 64, "messages": [{"role": "user", "content": "hi"}]}


@pytest.fixture
def client(server):
    with anthropic.Anthropic(base_url=server.base_url, api_key="test-key", max_retries=0, timeout=5.0) as c:
        yield c


def final_message(client):
    with client.messages.stream(**REQUEST) as stream:
        return stream.get_final_message()


def event_types(client) -> list[str]:
    return [event.type for event in client.messages.create(stream=True, **REQUEST)]


def test_text_and_several_tool_calls_parse_with_the_stream_helper(server, client) -> None:
    calls = [ToolCall("toolu_1", "lookup", {"q": "x", "n": [1, 2]}), ToolCall("toolu_2", "clock", {})]
    server.script(b.ok(text="Let me check.", tool_calls=calls))
    message = final_message(client)
    assert message.content[0].type == "text" and message.content[0].text == "Let me check."
    assert [(c.id, c.name, c.input) for c in message.content[1:]] == [
        ("toolu_1", "lookup", {"q": "x", "n": [1, 2]}),
        ("toolu_2", "clock", {}),
    ]
    assert message.stop_reason == "tool_use" and message.model == "claude-test"
    assert message.usage.output_tokens > 0


def test_create_stream_true_yields_the_raw_event_sequence_without_ping(server, client) -> None:
    server.script(b.ok(text="Hello world"))
    assert event_types(client) == [
        "message_start", "content_block_start", "content_block_delta", "content_block_delta",
        "content_block_stop", "message_delta", "message_stop",
    ]  # fmt: skip
    assert server.responses[0].frames_sent == 8  # the ping was sent; the SDK drops it


def test_tool_only_turn_has_no_text_block(server, client) -> None:
    server.script(b.ok(text=None, tool_calls=[ToolCall("toolu_9", "search", {"query": "weather in Paris"})]))
    message = final_message(client)
    assert [block.type for block in message.content] == ["tool_use"]
    assert message.content[0].input == {"query": "weather in Paris"}


def test_non_streaming_create_gets_a_json_message(server, client) -> None:
    server.script(b.ok(text="plain", tool_calls=[ToolCall("toolu_1", "t", {"a": 1})]))
    message = client.messages.create(**REQUEST)
    assert message.content[0].text == "plain" and message.content[1].input == {"a": 1}


def test_cut_clean_close_raises_remote_protocol_error_unwrapped(server, client) -> None:
    server.script(b.cut(after=4, text="Hello world"))
    received = []
    with pytest.raises(httpx2.RemoteProtocolError, match="incomplete chunked read"):
        for event in client.messages.create(stream=True, **REQUEST):
            received.append(event.type)
    assert received == ["message_start", "content_block_start", "content_block_delta"]


def test_cut_with_reset_raises_a_read_error(server, client) -> None:
    server.script(b.cut(after=4, reset=True))
    with pytest.raises((httpx2.ReadError, httpx2.RemoteProtocolError)):
        event_types(client)


def test_missing_message_stop_returns_silently(server, client) -> None:
    server.script(b.no_stop(text="Hi"))
    types = event_types(client)
    assert types[-1] == "message_delta" and "message_stop" not in types
    server.script(b.no_stop(text="Hi"))
    assert final_message(client).content[0].text == "Hi"  # the helper does not notice either


def test_malformed_data_raises_json_decode_error(server, client) -> None:
    server.script(b.malformed(after=2))
    with pytest.raises(json.JSONDecodeError):
        event_types(client)


def test_error_event_raises_api_status_error_on_a_200(server, client) -> None:
    server.script(b.error_event(after=2, error_type="overloaded_error"))
    with pytest.raises(anthropic.APIStatusError) as info:
        event_types(client)
    assert info.value.status_code == 200 and info.value.body["error"]["type"] == "overloaded_error"


@pytest.mark.parametrize(
    "status, error",
    [
        (429, anthropic.RateLimitError),
        (500, anthropic.InternalServerError),
        (503, anthropic.InternalServerError),
        (529, anthropic.InternalServerError),
        (400, anthropic.BadRequestError),
    ],
)
def test_http_errors_map_to_sdk_status_errors_with_headers(server, client, status, error) -> None:
    server.script(b.http_error(status, headers={"retry-after": "7", "x-custom": "yes"}))
    with pytest.raises(error) as info:
        event_types(client)
    assert info.value.status_code == status
    assert info.value.response.headers["retry-after"] == "7"
    assert info.value.response.headers["x-custom"] == "yes"


def test_sdk_retry_waits_for_retry_after_ms(server) -> None:
    server.script(b.http_error(429, headers={"retry-after-ms": "300"}), b.ok(text="after the wait"))
    with anthropic.Anthropic(base_url=server.base_url, api_key="k", max_retries=1) as retrying:
        with retrying.messages.stream(**REQUEST) as stream:
            assert stream.get_final_message().content[0].text == "after the wait"
    assert server.request_count == 2
    assert server.gap(0, 1) >= 0.28  # never shorter than announced; no upper bound on a loaded machine
    assert server.bodies_identical(0, 1)


def test_stall_until_the_client_times_out(server) -> None:
    server.script(b.stall(seconds=None, after=3))
    with anthropic.Anthropic(base_url=server.base_url, api_key="k", max_retries=0, timeout=0.3) as impatient:
        with pytest.raises((httpx2.ReadTimeout, anthropic.APITimeoutError)):
            event_types(impatient)
    assert server.wait_for_responses(timeout=5)
    assert server.responses[0].client_closed_early and not server.responses[0].completed


def test_bounded_stall_then_the_rest_of_the_stream(server, client) -> None:
    server.script(b.stall(seconds=0.2, after=2, text="late"))
    started = time.monotonic()
    assert final_message(client).content[0].text == "late"
    assert time.monotonic() - started >= 0.19


def test_empty_and_length_stop(server, client) -> None:
    server.script(b.empty(), b.length_stop(text="partial"))
    empty = final_message(client)
    assert empty.content == [] and empty.stop_reason == "end_turn"
    cut_short = final_message(client)
    assert cut_short.content[0].text == "partial" and cut_short.stop_reason == "max_tokens"


def test_slow_stream_spaces_its_events(server, client) -> None:
    behaviour = b.slow(delay=0.04, text="one two three")
    gaps = event_names(behaviour).count("pause")
    server.script(behaviour)
    started = time.monotonic()
    assert final_message(client).content[0].text == "one two three"
    assert gaps == 8 and time.monotonic() - started >= 0.04 * gaps * 0.95  # slack for timer granularity


def test_dropped_connection_is_an_api_connection_error(server, client) -> None:
    server.script(b.drop())
    with pytest.raises(anthropic.APIConnectionError):
        event_types(client)


def test_async_client_parses_text_and_tool_calls(server) -> None:
    server.script(b.ok(text="async hi", tool_calls=[ToolCall("toolu_a", "lookup", {"q": "async"})]))

    async def main():
        async with anthropic.AsyncAnthropic(base_url=server.base_url, api_key="k", max_retries=0) as aclient:
            async with aclient.messages.stream(**REQUEST) as stream:
                return await stream.get_final_message()

    message = asyncio.run(main())
    assert message.content[0].text == "async hi" and message.content[1].input == {"q": "async"}


def test_the_refused_url_refuses_before_any_byte() -> None:
    """What ``drop`` cannot do: no listener at all, so the SDK raises a connect error."""
    refusing = anthropic.Anthropic(base_url=FakeModelServer.refused_url(), api_key="test", max_retries=0)
    with pytest.raises(anthropic.APIConnectionError) as caught:
        refusing.messages.create(model="m", max_tokens=10, messages=[{"role": "user", "content": "hi"}])
    assert isinstance(caught.value.__cause__, httpx2.ConnectError)
