"""Pure-logic tests of the fake server: behaviours, plans, random draws, invariants, tool results.

No sockets here: these pin down what each piece computes, the network tests pin down the wire.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from mutagent.fakeserver import ToolCall, assert_invariants, check_invariants, event_names
from mutagent.fakeserver import behaviours as b
from mutagent.fakeserver.conversation import tool_results
from mutagent.fakeserver.dialects import ANTHROPIC, OPENAI, RESPONSES, RequestContext, dialect_for_path
from mutagent.fakeserver.plan import CLOSE, COMPLETE, RESET, Frame, Pause, PlanError, build_plan
from mutagent.fakeserver.randommode import DEFAULT_WEIGHTS, RandomFaults, draw

CTX = RequestContext(index=3, model="m", stream=True, include_usage=False, input_tokens=5)
TOOL = ToolCall("toolu_1", "lookup", {"q": "a fairly long query string"})


def frames(plan) -> list[bytes]:
    return [step.data for step in plan.steps if isinstance(step, Frame)]


# -- behaviours and plans --------------------------------------------------------------------------


def test_stop_reason_defaults_follow_the_content_and_translate_to_openai() -> None:
    assert b.ok(text="x").neutral_stop_reason == "end_turn"
    assert b.ok(text=None, tool_calls=[TOOL]).neutral_stop_reason == "tool_use"
    assert b.ok(text=None, tool_calls=[TOOL]).openai_finish_reason == "tool_calls"
    assert b.length_stop().openai_finish_reason == "length"
    assert b.ok(stop_reason="length").neutral_stop_reason == "max_tokens"


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: b.cut(after=-1), "after must be"),
        (lambda: b.ok(delay=-0.1), "delay must be"),
        (lambda: b.http_error(200), "400..599"),
        (lambda: b.stall(seconds=-1), "stall seconds"),
        (lambda: b.ok(tool_calls=[{"id": "x"}]), "ToolCall"),
    ],
)
def test_bad_behaviour_arguments_fail_with_one_clear_line(make, message) -> None:
    with pytest.raises((ValueError, TypeError), match=message) as info:
        make()
    assert "\n" not in str(info.value)


def test_anthropic_ok_stream_has_the_documented_event_order() -> None:
    names = event_names(b.ok(text="Hello world", tool_calls=[TOOL]), "anthropic")
    assert names == [
        "message_start", "content_block_start", "ping", "content_block_delta", "content_block_delta",
        "content_block_stop", "content_block_start", "content_block_delta", "content_block_delta",
        "content_block_delta", "content_block_stop", "message_delta", "message_stop", "complete",
    ]  # fmt: skip


def test_openai_ok_stream_has_role_content_tool_calls_finish_and_done() -> None:
    names = event_names(b.ok(text="Hello world", tool_calls=[TOOL]), "openai")
    assert names[:3] == ["role", "content", "content"]
    assert names[-3:] == ["finish:tool_calls", "[DONE]", "complete"]
    assert names.count("tool_calls") >= 3  # the call's head plus at least two argument fragments


def test_tool_input_arrives_in_two_or_more_fragments_that_join_to_the_input() -> None:
    events = [
        json.loads(e.split(b"data: ", 1)[1]) for e in ANTHROPIC.stream_events(b.ok(tool_calls=[TOOL]), CTX)
    ]
    fragments = [e["delta"]["partial_json"] for e in events if e["type"] == "content_block_delta"
                 and e["delta"]["type"] == "input_json_delta"]  # fmt: skip
    assert len(fragments) >= 2
    assert json.loads("".join(fragments)) == dict(TOOL.input)


def test_text_deltas_join_to_exactly_the_text() -> None:
    text = "  spaced   words\nand a newline  "
    chunks = OPENAI.stream_events(b.ok(text=text), CTX)
    deltas = [json.loads(c[len(b"data: ") :])["choices"][0]["delta"].get("content") for c in chunks[:-1]]
    assert "".join(d for d in deltas if d) == text


@pytest.mark.parametrize("dialect", ["anthropic", "openai"])
def test_every_fault_is_the_ok_stream_prefix_plus_its_fault(dialect) -> None:
    full = event_names(b.ok(text="Hello world"), dialect)[:-1]
    assert event_names(b.cut(after=3), dialect) == [*full[:3], "close"]
    assert event_names(b.cut(after=3, reset=True), dialect) == [*full[:3], "reset"]
    assert event_names(b.no_stop(text="Hello world"), dialect) == [*full[:-1], "complete"]
    assert event_names(b.error_event(after=2, text="Hello world"), dialect) == [
        *full[:2],
        "error",
        "complete",
    ]
    assert event_names(b.malformed(after=2, text="Hello world"), dialect) == [
        *full[:2],
        "malformed",
        "complete",
    ]
    resumed = event_names(b.malformed(after=2, text="Hello world", resume=True), dialect)
    assert resumed == [*full[:2], "malformed", *full[2:], "complete"]
    assert event_names(b.stall(seconds=1, after=2, text="Hello world"), dialect) == [
        *full[:2], "pause", *full[2:], "complete"]  # fmt: skip
    assert event_names(b.drop(), dialect) == ["drop:close"]
    assert event_names(b.drop(reset=True), dialect) == ["drop:reset"]


def test_empty_has_no_content_block_and_length_stop_says_max_tokens() -> None:
    assert "content_block_start" not in event_names(b.empty())
    delta = [json.loads(e.split(b"data: ", 1)[1]) for e in ANTHROPIC.stream_events(b.length_stop(), CTX)][-2]
    assert delta["delta"]["stop_reason"] == "max_tokens"


def test_delay_puts_a_pause_between_consecutive_events_only() -> None:
    plan = build_plan(b.slow(delay=0.25, text="a b"), OPENAI, CTX)
    steps = list(plan.steps)
    assert isinstance(steps[0], Frame) and isinstance(steps[-1], Frame)
    pauses = [s for s in steps if isinstance(s, Pause)]
    assert len(pauses) == len(steps) - len(pauses) - 1 and {p.seconds for p in pauses} == {0.25}


def test_http_error_plan_uses_the_dialect_error_shape_and_keeps_headers() -> None:
    plan = build_plan(b.http_error(429, headers={"retry-after": "2"}), ANTHROPIC, CTX)
    body = json.loads(frames(plan)[0])
    assert plan.status == 429 and ("retry-after", "2") in plan.headers and not plan.chunked
    assert body["type"] == "error" and body["error"]["type"] == "rate_limit_error"
    openai_body = json.loads(frames(build_plan(b.http_error(529), OPENAI, CTX))[0])
    assert openai_body["error"]["type"] == "overloaded_error"
    custom = build_plan(b.http_error(500, body="plain text"), OPENAI, CTX)
    assert frames(custom) == [b"plain text"]


def test_non_streaming_requests_get_a_json_message_or_a_clear_refusal() -> None:
    ctx = RequestContext(index=0, model="m", stream=False, include_usage=False, input_tokens=1)
    body = json.loads(frames(build_plan(b.ok(text="hi", tool_calls=[TOOL]), ANTHROPIC, ctx))[0])
    assert [block["type"] for block in body["content"]] == ["text", "tool_use"]
    cut = build_plan(b.cut(), ANTHROPIC, ctx)
    assert cut.ending == CLOSE and len(frames(cut)[0]) < cut.length
    with pytest.raises(PlanError, match="needs a streaming request"):
        build_plan(b.malformed(), ANTHROPIC, ctx)


def test_endless_stream_is_lazy_and_bounded_by_max_events() -> None:
    plan = build_plan(b.endless(delay=0, max_events=5), ANTHROPIC, CTX)
    assert plan.ending == COMPLETE and len(frames(plan)) == len(ANTHROPIC.endless_head(CTX)) + 5
    assert build_plan(b.cut(reset=True), ANTHROPIC, CTX).ending == RESET


def test_dialect_is_chosen_by_path() -> None:
    assert dialect_for_path("/v1/messages") is ANTHROPIC
    assert dialect_for_path("/v1/messages?beta=true") is ANTHROPIC
    assert dialect_for_path("/v1/chat/completions") is OPENAI
    assert dialect_for_path("/v1/responses") is RESPONSES and dialect_for_path("/responses") is RESPONSES
    assert dialect_for_path("/v1/embeddings") is None


# -- random mode -----------------------------------------------------------------------------------


def test_same_seed_same_sequence_and_different_seeds_differ() -> None:
    first = [x.name for x in draw(1234, 200)]
    assert first == [x.name for x in draw(1234, 200)]
    assert first != [x.name for x in draw(4321, 200)]


def test_default_weights_are_the_documented_profile_and_shape_the_draws() -> None:
    assert DEFAULT_WEIGHTS == {
        "ok": 48,
        "slow": 10,
        "cut": 10,
        "reset": 5,
        "drop": 5,
        "empty": 5,
        "429": 5,
        "5xx": 4,
        "length": 2,
        "stall": 2,
        "503": 2,
        "no_stop": 1,
        "malformed": 1,
    }
    faults = RandomFaults(seed=99)
    for _ in range(4000):
        faults.next()
    counts = Counter(faults.drawn)
    assert set(counts) == set(DEFAULT_WEIGHTS)  # every kind shows up
    assert 0.40 < counts["ok"] / 4000 < 0.56
    assert counts["slow"] > counts["reset"] > counts["malformed"]


def test_custom_weights_restrict_the_kinds_and_bad_weights_are_refused() -> None:
    faults = RandomFaults(seed=1, weights={"429": 1, "ok": 0})
    assert {faults.next().name for _ in range(20)} == {"http_error(429)"}
    with pytest.raises(ValueError, match="unknown fault kind"):
        RandomFaults(seed=1, weights={"teapot": 1})
    with pytest.raises(ValueError, match="at least one"):
        RandomFaults(seed=1, weights={"ok": 0})


def test_a_drawn_429_announces_its_wait_in_both_headers() -> None:
    drawn = RandomFaults(seed=5, weights={"429": 1}, retry_after=1.5).next()
    assert dict(drawn.headers) == {"retry-after-ms": "1500", "retry-after": "2"}


# -- invariants ------------------------------------------------------------------------------------


def anthropic_body(*messages) -> dict:
    return {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "go"}, *messages]}


def tool_use(*ids: str) -> dict:
    return {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": i, "name": "t", "input": {}} for i in ids],
    }


def tool_result(*ids, content="out") -> dict:
    return {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": i, "content": content} for i in ids],
    }


def test_anthropic_well_paired_history_passes() -> None:
    body = anthropic_body(tool_use("a", "b"), tool_result("b", "a"), {"role": "assistant", "content": "ok"},
                          {"role": "user", "content": "more"})  # fmt: skip
    assert check_invariants(body, "anthropic") == []
    assert_invariants(body, "anthropic")  # does not raise


@pytest.mark.parametrize(
    "messages, expected",
    [
        ((tool_use("a"), tool_result("zzz")), ["'zzz' answers no tool call", "'a' is not answered"]),
        ((tool_use("a"), tool_result("a", "a")), ["'a' is answered 2 times"]),
        ((tool_use("a"),), ["'a' is never answered (the request ends with it)"]),
        ((tool_use("a"), {"role": "user", "content": "hi"}), ["'a' is not answered in messages[2]"]),
        ((tool_use(""), tool_result("")), ["tool call with an empty id", "tool result with an empty"]),
        ((tool_use("a", "a"), tool_result("a")), ["'a' is used twice"]),
        ((tool_result("orphan"),), ["'orphan' answers no tool call"]),
        ((tool_use("a"), tool_use("b"), tool_result("b")), ["'a' is never answered (messages[2] is another"]),
    ],
)
def test_anthropic_violations_name_the_id(messages, expected) -> None:
    problems = check_invariants(anthropic_body(*messages), "anthropic")
    assert len(problems) == len(expected)
    for problem, fragment in zip(problems, expected, strict=True):
        assert fragment in problem
    with pytest.raises(AssertionError, match="tool-call invariants broken"):
        assert_invariants(anthropic_body(*messages), "anthropic")


def openai_call(*ids: str) -> dict:
    calls = [{"id": i, "type": "function", "function": {"name": "t", "arguments": "{}"}} for i in ids]
    return {"role": "assistant", "content": None, "tool_calls": calls}


def openai_result(call_id: str, content="out") -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def test_openai_pairing_good_and_bad() -> None:
    def body(*messages):
        return {"model": "m", "messages": [{"role": "user", "content": "go"}, *messages]}

    good = body(
        openai_call("c1", "c2"), openai_result("c2"), openai_result("c1"), {"role": "user", "content": "x"}
    )
    assert check_invariants(good, "openai") == []
    missing = check_invariants(body(openai_call("c1", "c2"), openai_result("c1")), "openai")
    assert len(missing) == 1 and "'c2' is not answered" in missing[0]
    orphan = check_invariants(body(openai_call("c1"), openai_result("c1"), openai_result("c9")), "openai")
    assert len(orphan) == 1 and "'c9' answers no tool call" in orphan[0]
    late = check_invariants(
        body(openai_call("c1"), {"role": "user", "content": "?"}, openai_result("c1")), "openai"
    )
    assert any("'c1' is not answered" in p for p in late) and any(
        "'c1' answers no tool call" in p for p in late
    )
    empty = check_invariants(body(openai_call("c1"), openai_result("")), "openai")
    assert any("empty tool call id" in p for p in empty)


def test_tool_results_join_text_blocks_and_read_both_dialects() -> None:
    blocks = [
        {"type": "text", "text": "line one "},
        {"type": "image", "source": {}},
        {"type": "text", "text": "two"},
    ]
    body = anthropic_body(tool_use("a", "b"), tool_result("a", content="plain"))
    body["messages"][-1]["content"].append({"type": "tool_result", "tool_use_id": "b", "content": blocks})
    assert tool_results(body, "anthropic") == {"a": "plain", "b": "line one two"}
    chat = {"messages": [openai_call("c1"), openai_result("c1", [{"type": "text", "text": "parts"}])]}
    assert tool_results(chat, "openai") == {"c1": "parts"}


def test_responses_pairing_rules() -> None:
    user = {"role": "user", "content": "hi"}

    def call(call_id):
        return {"type": "function_call", "call_id": call_id, "name": "f", "arguments": "{}"}

    def answer(call_id):
        return {"type": "function_call_output", "call_id": call_id, "output": "ok"}

    assert (
        check_invariants({"input": [user, call("a"), call("b"), answer("b"), answer("a")]}, "responses") == []
    )
    assert check_invariants({"input": "just text"}, "responses") == []
    assert check_invariants({"input": [user, call("a"), answer("a"), answer("a")]}, "responses") == [
        "input[1]: tool call 'a' is answered 2 times"
    ]
    assert check_invariants({"input": [user, call(""), answer("")]}, "responses")[0].startswith(
        "input[1]: tool call with an empty id"
    )
    assert check_invariants({"input": [call("a"), user]}, "responses") == [
        "input[0]: tool call 'a' is not answered in input[1] (user)"
    ]
    continued = {"previous_response_id": "resp_1", "input": [answer("a"), answer("b")]}
    assert check_invariants(continued, "responses") == []
    assert tool_results(continued, "responses") == {"a": "ok", "b": "ok"}
