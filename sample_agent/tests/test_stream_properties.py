"""Properties of the stream assembler over adversarial event orders (no server needed).

Each test builds a well-formed response from a small model of its blocks, computes the expected
message from that model directly (not through the assembler), then damages the event sequence the
way real streams get damaged: blocks interleaved, stops repeated, deltas arriving after a close,
events after ``message_stop``, starts lost, the stream cut short, tool arguments cut short.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from sample_agent.stream import (
    AssembledMessage,
    EmptyResponseError,
    IncompleteStreamError,
    StreamAssembler,
    StreamError,
    StreamProtocolError,
    TruncatedToolArgumentsError,
)

# No explain phase: on a failure it re-runs the shrunk example many times (about 2.5 s here) only
# to annotate the report, which turns a quick failure into a mutation-run timeout.
PROPERTY = settings(
    max_examples=30,
    derandomize=True,
    database=None,
    deadline=None,
    phases=[phase for phase in Phase if phase is not Phase.explain],
    suppress_health_check=[HealthCheck.too_slow],
)

Event = dict[str, Any]

# Small fixed vocabularies keep generation cheap; they still cover quoting, escapes, non-ASCII
# and braces inside strings, which is what makes cutting JSON at arbitrary points interesting.
json_scalars = st.one_of(
    st.integers(-5, 5), st.booleans(), st.none(), st.sampled_from(["", "a b", 'q"t', "\\", "é", "{}"])
)
arguments = st.dictionaries(st.sampled_from(["x", "y", "z_1"]), json_scalars, max_size=3)
text_pieces = st.sampled_from(["", "he", "llo", " wo", "é", "\n"])


@st.composite
def blocks(draw: st.DrawFn) -> list[dict[str, Any]]:
    """1-4 blocks: text as a list of deltas, tool_use as arguments plus the cut points of their JSON."""
    result = []
    for index in range(draw(st.integers(1, 4))):
        if draw(st.booleans()):
            result.append({"kind": "text", "deltas": draw(st.lists(text_pieces, max_size=4))})
        else:
            args = draw(arguments)
            text = json.dumps(args)
            cuts = sorted(draw(st.sets(st.integers(1, max(1, len(text) - 1)), max_size=3)))
            pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True) if text[a:b]]
            result.append(
                {"kind": "tool", "id": f"toolu_{index}", "name": "lookup", "args": args, "pieces": pieces}
            )
    return result


def block_events(index: int, block: dict[str, Any]) -> list[Event]:
    if block["kind"] == "text":
        start = {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}
        deltas = [
            {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": t}}
            for t in block["deltas"]
        ]
    else:
        content_block = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
        start = {"type": "content_block_start", "index": index, "content_block": content_block}
        deltas = [
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "input_json_delta", "partial_json": p},
            }
            for p in block["pieces"]
        ]
    return [start, *deltas, {"type": "content_block_stop", "index": index}]


def head() -> list[Event]:
    return [{"type": "message_start", "message": {"id": "msg_1", "usage": {"input_tokens": 3}}}]


def tail(spec: list[dict[str, Any]]) -> list[Event]:
    stop_reason = "tool_use" if any(b["kind"] == "tool" for b in spec) else "end_turn"
    return [
        {"type": "message_delta", "delta": {"stop_reason": stop_reason}, "usage": {"output_tokens": 7}},
        {"type": "message_stop"},
    ]


def clean_stream(spec: list[dict[str, Any]]) -> list[Event]:
    body = [event for index, block in enumerate(spec) for event in block_events(index, block)]
    return head() + body + tail(spec)


def expected_content(spec: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the message must contain, from the model alone (empty text blocks are dropped)."""
    content = []
    for block in spec:
        if block["kind"] == "text":
            if "".join(block["deltas"]):
                content.append({"type": "text", "text": "".join(block["deltas"])})
        else:
            content.append(
                {"type": "tool_use", "id": block["id"], "name": block["name"], "input": block["args"]}
            )
    return content


def assemble(events: list[Event]) -> AssembledMessage:
    assembler = StreamAssembler()
    for event in events:
        assembler.feed(event)
    return assembler.finish()


def assemble_or_error(events: list[Event]) -> AssembledMessage | StreamError:
    try:
        return assemble(events)
    except StreamError as exc:
        return exc


@PROPERTY
@given(blocks(), st.data())
def test_interleaving_blocks_does_not_change_the_message(
    spec: list[dict[str, Any]], data: st.DataObject
) -> None:
    """Blocks may interleave (per-block order kept): content is still per block and in index order."""
    queues = [block_events(index, block) for index, block in enumerate(spec)]
    turns = data.draw(st.permutations([index for index, queue in enumerate(queues) for _ in queue]))
    body = [queues[index].pop(0) for index in turns]
    outcome = assemble_or_error(head() + body + tail(spec))
    expected = expected_content(spec)
    if not expected:  # only empty text blocks: an empty response, never an empty success
        assert isinstance(outcome, EmptyResponseError)
        return
    assert isinstance(outcome, AssembledMessage)
    assert outcome.content == expected
    assert outcome.id == "msg_1"
    assert outcome.usage == {"input_tokens": 3, "output_tokens": 7}


@PROPERTY
@given(blocks(), st.data())
def test_first_close_wins(spec: list[dict[str, Any]], data: st.DataObject) -> None:
    """Repeated stops, repeated starts and late deltas after a block closed change nothing."""
    events = clean_stream(spec)
    expected = assemble_or_error(events)
    stops = [i for i, e in enumerate(events) if e["type"] == "content_block_stop"]
    for _ in range(data.draw(st.integers(1, 4))):
        original = data.draw(st.sampled_from(stops))
        index = events[original]["index"]
        block = spec[index]
        late = data.draw(
            st.sampled_from(
                [
                    {"type": "content_block_stop", "index": index},
                    block_events(index, block)[0],
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "text_delta", "text": "LATE"},
                    },
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": "}"},
                    },
                ]
            )
        )
        position = data.draw(st.integers(original + 1, len(events) - 1))  # before message_stop
        events.insert(position, late)
        stops = [i for i, e in enumerate(events) if e["type"] == "content_block_stop"]
    outcome = assemble_or_error(events)
    if isinstance(expected, StreamError):
        assert type(outcome) is type(expected)
    else:
        assert outcome == expected
        assert isinstance(outcome, AssembledMessage) and outcome.content == expected_content(spec)


@PROPERTY
@given(
    blocks(),
    st.lists(st.sampled_from(["stop", "delta", "start", "message_stop", "message_delta"]), max_size=5),
)
def test_nothing_after_message_stop_counts(spec: list[dict[str, Any]], junk: list[str]) -> None:
    events = clean_stream(spec)
    samples = {
        "stop": {"type": "content_block_stop", "index": 0},
        "delta": {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "X"}},
        "start": {
            "type": "content_block_start",
            "index": 9,
            "content_block": {"type": "text", "text": "new"},
        },
        "message_stop": {"type": "message_stop"},
        "message_delta": {"type": "message_delta", "delta": {"stop_reason": "max_tokens"}},
    }
    with_junk = events + [samples[name] for name in junk]
    first, second = assemble_or_error(events), assemble_or_error(with_junk)
    assert type(first) is type(second)
    if isinstance(first, AssembledMessage):
        assert first == second


@PROPERTY
@given(blocks(), st.data())
def test_a_stream_cut_before_message_stop_is_never_a_message(
    spec: list[dict[str, Any]], data: st.DataObject
) -> None:
    events = clean_stream(spec)
    cut = data.draw(st.integers(0, len(events) - 1))  # every strict prefix lacks message_stop
    with pytest.raises(StreamError) as raised:
        assemble(events[:cut])
    # A prefix can end inside a tool block whose arguments were already closed and valid, so the
    # only possible complaint is the missing stop marker.
    assert isinstance(raised.value, IncompleteStreamError)


@PROPERTY
@given(blocks(), st.data())
def test_a_lost_start_refuses_the_response(spec: list[dict[str, Any]], data: st.DataObject) -> None:
    events = clean_stream(spec)
    starts = [i for i, e in enumerate(events) if e["type"] == "content_block_start"]
    del events[data.draw(st.sampled_from(starts))]
    with pytest.raises(StreamProtocolError) as raised:
        assemble(events)
    assert raised.value.retryable  # a lost event is a transport accident: another attempt can repair it


@PROPERTY
@given(arguments, st.data())
def test_tool_arguments_cut_short_are_refused_not_emptied(args: dict[str, Any], data: st.DataObject) -> None:
    text = json.dumps(args)
    kept = data.draw(st.integers(1, len(text) - 1))  # a strict, non-empty prefix of the JSON
    spec = [{"kind": "tool", "id": "toolu_0", "name": "lookup", "args": args, "pieces": [text[:kept]]}]
    with pytest.raises(TruncatedToolArgumentsError):
        assemble(clean_stream(spec))


event_soup = st.lists(
    st.one_of(
        st.fixed_dictionaries(
            {
                "type": st.just("content_block_start"),
                "index": st.integers(0, 2),
                "content_block": st.sampled_from(
                    [{"type": "text", "text": ""}, {"type": "tool_use", "id": "t", "name": "n", "input": {}}]
                ),
            }
        ),
        st.fixed_dictionaries(
            {
                "type": st.just("content_block_delta"),
                "index": st.integers(0, 2),
                "delta": st.sampled_from(
                    [{"type": "text_delta", "text": "a"}, {"type": "input_json_delta", "partial_json": "{}"}]
                ),
            }
        ),
        st.fixed_dictionaries(
            {"type": st.just("content_block_stop"), "index": st.one_of(st.integers(0, 2), st.just("0"))}
        ),
        st.just({"type": "message_stop"}),
        st.just({"type": "message_delta", "delta": {"stop_reason": "end_turn"}}),
        st.just({"type": "content_block_delta", "delta": {"type": "text_delta", "text": "no index"}}),
        st.just({"type": "ping"}),
    ),
    max_size=12,
)


@PROPERTY
@given(event_soup)
def test_any_event_soup_gives_a_message_or_a_stream_error(events: list[Event]) -> None:
    """Whatever arrives, the agent gets a consistent message or a StreamError, never a crash; a
    message only once ``message_stop`` arrived, and never an empty one."""
    first = assemble_or_error(events)
    second = assemble_or_error(events)
    assert type(first) is type(second)
    if isinstance(first, AssembledMessage):
        assert first == second
        assert {"type": "message_stop"} in events
        assert first.content
        started = {e["index"] for e in events if e["type"] == "content_block_start"}
        assert len(first.content) <= len(started)
