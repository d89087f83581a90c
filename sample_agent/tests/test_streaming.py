"""How the agent treats what arrives on the stream: complete or not, empty or not, stalled or not,
and whether it lets go of the response once it has stopped reading."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mutagent.fakeserver import ToolCall
from mutagent.fakeserver import behaviours as b
from mutagent.fakeserver.plan import event_names
from mutagent.fakeserver.transcript import Exchange
from sample_agent.loop import ModelCallError

from .helpers import lookup_tool


def released(fake_model: Any) -> bool:
    """Whether the agent hung up on every response so far, once the server has noticed (it
    polls each connection every 50 ms; the generous timeout only matters under heavy load)."""
    finished = fake_model.wait_for_responses(timeout=2.0)
    return finished and all(r.completed or r.client_closed_early for r in fake_model.responses)


def all_events(behaviour: Any) -> int:
    """How many frames ``behaviour`` sends before its ending: ``after=`` for 'everything, then hold'."""
    return len(event_names(behaviour)) - 1


def raw_stream(events: list[dict[str, Any]]) -> Any:
    """A scripted response made of exactly these SSE events, for shapes no behaviour produces."""
    body = b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)
    exchange = Exchange(
        0, "POST", "/v1/messages", [], None, 200, [("Content-Type", "text/event-stream")], [(0.0, body)], True
    )
    return b.replay(exchange)


def test_partial_output_never_enters_history(fake_model, make_agent):
    """The cut happens after a tool round, so history is not trivial: the retry resends the exact
    same bytes, and the next request carries the complete reply only."""
    h = make_agent(extra_tools=[lookup_tool({"x": "X result", "y": "Y result"})])
    fake_model.script(
        b.ok(text=None, tool_calls=[ToolCall("toolu_1", "lookup", {"q": "x"})]),
        b.cut(after=5, text="Looking further", tool_calls=[ToolCall("toolu_2", "lookup", {"q": "y"})]),
        b.ok(text="Looking further", tool_calls=[ToolCall("toolu_2", "lookup", {"q": "y"})]),
        b.ok(text="Done."),
    )

    assert h.agent.run("look up x then y") == "Done."

    assert fake_model.requests[2].raw == fake_model.requests[1].raw
    messages = fake_model.requests[3].body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant", "user"]
    assert messages[3]["content"] == [
        {"type": "text", "text": "Looking further"},
        {"type": "tool_use", "id": "toolu_2", "name": "lookup", "input": {"q": "y"}},
    ]
    assert fake_model.tool_results(3) == {"toolu_1": "X result", "toolu_2": "Y result"}


def test_a_failed_run_leaves_history_as_it_was(fake_model, make_agent):
    """The second run fails after a tool round; the third run's request carries the first
    exchange and the new prompt, nothing of the failed run."""
    h = make_agent(extra_tools=[lookup_tool({"x": "X result"})])
    fake_model.script(
        b.ok(text="First answer"),
        b.ok(text=None, tool_calls=[ToolCall("toolu_1", "lookup", {"q": "x"})]),
        b.http_error(400),
        b.ok(text="Third answer"),
    )

    h.agent.run("first")
    with pytest.raises(ModelCallError):
        h.agent.run("second")
    h.agent.run("third")

    assert fake_model.requests[3].body["messages"] == [
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": [{"type": "text", "text": "First answer"}]},
        {"role": "user", "content": "third"},
    ]


def test_an_empty_reply_is_retried(fake_model, make_agent):
    h = make_agent()
    fake_model.script(b.empty(), b.ok(text="Hi"))

    assert h.agent.run("hello") == "Hi"

    assert fake_model.request_count == 2
    assert fake_model.bodies_identical(0, 1)
    assert [r["reason"] for r in h.retries()] == ["empty_response"]


def test_a_reply_cut_at_max_tokens_is_not_an_answer(fake_model, make_agent):
    h = make_agent()
    fake_model.script(b.length_stop(text="The first half of the"))

    with pytest.raises(ModelCallError, match="max_tokens"):
        h.agent.run("write an essay")

    assert fake_model.request_count == 1
    assert h.journal.of_kind("give_up")[0]["reason"] == "max_tokens"
    assert not [m for m in h.journal.of_kind("message") if m["role"] == "assistant"]


@pytest.mark.parametrize(
    "partial_json", ['{"q": "x', "[1, 2]", '"x"'], ids=["truncated", "json-array", "json-string"]
)
def test_tool_arguments_that_are_not_a_json_object_fail_the_turn(fake_model, make_agent, partial_json):
    """The tool block closes after half of its JSON arguments, or with complete JSON that is not an
    object: the turn is retried with the same body, the tool runs once, on the retry's arguments
    (never with ``{}`` nor with a list or a string)."""
    calls: list[dict[str, Any]] = []
    h = make_agent(extra_tools=[lookup_tool({"x": "X result"}, calls)])
    bad = raw_stream(
        [
            {
                "type": "message_start",
                "message": {
                    "id": "msg_1",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-test",
                    "content": [],
                    "stop_reason": None,
                    "usage": {"input_tokens": 5, "output_tokens": 1},
                },
            },
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {}},
            },
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": partial_json},
            },
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 4}},
            {"type": "message_stop"},
        ]
    )
    fake_model.script(
        bad, b.ok(text=None, tool_calls=[ToolCall("toolu_1", "lookup", {"q": "x"})]), b.ok(text="done")
    )

    assert h.agent.run("look up x") == "done"

    assert [r["reason"] for r in h.retries()] == ["truncated_tool_arguments"]
    assert fake_model.requests[1].raw == fake_model.requests[0].raw
    assert calls == [{"q": "x"}]


@pytest.mark.timeout(10)
@pytest.mark.parametrize(
    ("stall", "reason"),
    [(b.stall(seconds=None, after=3, text="Hello world"), "idle_timeout"), (b.drop(delay=5.0), "timeout")],
    ids=["mid-stream", "before-headers"],
)
def test_a_stalled_response_is_abandoned_after_the_read_timeout(fake_model, make_agent, stall, reason):
    """Silence mid-stream surfaces as ``httpx2.ReadTimeout``, silence before the status line as the
    SDK's ``APITimeoutError``: both end the attempt after 0.3 s instead of hanging."""
    h = make_agent(idle_timeout=0.3)
    fake_model.script(stall, b.ok(text="Hello world"))

    assert h.agent.run("hello") == "Hello world"

    assert fake_model.request_count == 2
    assert fake_model.bodies_identical(0, 1)
    assert [r["reason"] for r in h.retries()] == [reason]


@pytest.mark.timeout(10)
def test_the_agent_stops_reading_at_message_stop(fake_model, make_agent):
    """The server sends the whole reply, then holds the connection without ending the body. The
    agent must not wait for the end of the body (it would time out and ask again) and must hang up
    as soon as it stops reading: before the reply enters history, not whenever the stream object
    happens to be collected."""
    h = make_agent(idle_timeout=0.5)
    released_when_remembered: list[bool] = []
    record = h.journal.record

    def spy(kind: str, **fields: Any) -> int:
        if kind == "message" and fields.get("role") == "assistant":
            released_when_remembered.append(released(fake_model) and fake_model.client_disconnects == [0])
        return record(kind, **fields)

    h.journal.record = spy  # type: ignore[method-assign]
    fake_model.script(b.stall(seconds=None, after=all_events(b.ok(text="Hello")), text="Hello"))

    assert h.agent.run("hello") == "Hello"

    assert fake_model.request_count == 1
    assert released_when_remembered == [True]


def test_a_refused_reply_is_released_before_the_retry_wait(fake_model, make_agent):
    """An empty reply, then the connection held open: the agent stops reading early and must
    release the response before it sleeps, not whenever the garbage collector gets to it."""
    h = make_agent()
    released_when_sleeping: list[bool] = []
    h.sleep.before_each = lambda seconds: released_when_sleeping.append(
        released(fake_model) and fake_model.client_disconnects == [0]
    )
    fake_model.script(b.stall(seconds=None, after=all_events(b.empty()), text=None), b.ok(text="Hi"))

    assert h.agent.run("hello") == "Hi"

    assert released_when_sleeping == [True]
    assert [r["reason"] for r in h.retries()] == ["empty_response"]
