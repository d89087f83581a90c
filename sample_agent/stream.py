"""Fold the raw events of one Anthropic streaming response into one assistant message.

The agent asks the SDK for raw events (``messages.create(..., stream=True)``) instead of using the
SDK's message accumulator, so that correctness lives here, where it can be tested without a
network: the SDK returns a stream that ends without ``message_stop`` silently, and it would
happily accumulate a duplicate ``content_block_stop``. The rules this assembler enforces:

* the stream is complete only once ``message_stop`` has been seen (a seen-stop flag); a stream
  that ends before it is an error, never a short answer;
* first close wins: the first ``content_block_stop`` for a block fixes its content; a second
  stop, a second start or a late delta for that block is ignored, and nothing after
  ``message_stop`` counts;
* a delta for a block that was never started means an event was lost: the response is refused;
* tool arguments arrive as partial JSON; they must parse as a JSON object once the block
  closes, otherwise the turn fails instead of running the tool with ``{}``;
* a response with no content at all is an error, so a retry can repair it instead of an empty
  answer entering history.

Events are plain dicts (the SDK's ``event.to_dict()``), which is also what the journal stores.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


class StreamError(Exception):
    """A response that must not become history. ``reason`` names it in the journal."""

    reason = "stream_error"
    retryable = True


class IncompleteStreamError(StreamError):
    """The stream ended before ``message_stop``, or with a block still open."""

    reason = "missing_message_stop"


class EmptyResponseError(StreamError):
    """The model stopped without producing any content."""

    reason = "empty_response"


class TruncatedToolArgumentsError(StreamError):
    """A tool_use block closed with arguments that are not a complete JSON object."""

    reason = "truncated_tool_arguments"


class StreamProtocolError(StreamError):
    """Events that cannot belong to a well-formed response (a delta for a block never started)."""

    reason = "protocol_error"


class OutputLimitError(StreamError):
    """The model hit ``max_tokens``: the answer is cut, and asking again would cut it again."""

    reason = "max_tokens"
    retryable = False


@dataclass
class _Block:
    """One content block while it is being assembled."""

    index: int
    type: str
    text: str = ""
    id: str = ""
    name: str = ""
    partial_json: str = ""
    initial_input: dict[str, Any] = field(default_factory=dict)
    input: dict[str, Any] = field(default_factory=dict)

    def to_content(self) -> dict[str, Any]:
        """The block as the Messages API expects it back in history."""
        if self.type == "tool_use":
            return {"type": "tool_use", "id": self.id, "name": self.name, "input": self.input}
        return {"type": "text", "text": self.text}


@dataclass(frozen=True)
class AssembledMessage:
    """A complete assistant message: the only thing allowed into conversation history."""

    id: str
    content: list[dict[str, Any]]
    stop_reason: str | None
    usage: dict[str, Any]

    @property
    def text(self) -> str:
        return "".join(block["text"] for block in self.content if block["type"] == "text")

    @property
    def tool_uses(self) -> list[dict[str, Any]]:
        return [block for block in self.content if block["type"] == "tool_use"]


def parse_tool_arguments(partial_json: str, initial_input: dict[str, Any]) -> dict[str, Any]:
    """Turn the accumulated ``input_json_delta`` text into the tool's arguments.

    No deltas at all means the start event's ``input`` is the whole input (a tool without
    arguments). Text that does not parse is a truncated call: refusing it lets the loop retry
    instead of running the tool with arguments the model never finished writing.
    """
    if not partial_json:
        return dict(initial_input)
    try:
        arguments = json.loads(partial_json)
    except json.JSONDecodeError as exc:
        raise TruncatedToolArgumentsError(f"tool arguments are not complete JSON: {partial_json!r}") from exc
    if not isinstance(arguments, dict):
        raise TruncatedToolArgumentsError(f"tool arguments must be a JSON object, got {partial_json!r}")
    return arguments


def _index(event: Mapping[str, Any]) -> int:
    index = event["index"]
    if not isinstance(index, int) or isinstance(index, bool):
        raise StreamProtocolError(f"block index must be an integer, got {index!r}")
    return index


class StreamAssembler:
    """Consumes one attempt's events in order; ``finish()`` yields the message or raises.

    Make a new assembler for every attempt: a failed attempt's partial blocks must die with it.
    """

    def __init__(self) -> None:
        self._open: dict[int, _Block] = {}
        self._closed: dict[int, _Block] = {}
        self.message_id = ""
        self.stop_reason: str | None = None
        self.usage: dict[str, Any] = {}
        self.seen_stop = False

    @property
    def finished(self) -> bool:
        """True once ``message_stop`` arrived: the consumer should stop reading."""
        return self.seen_stop

    def feed(self, event: Mapping[str, Any]) -> None:
        """Apply one raw event. Raises ``StreamError`` for events that make the response unusable."""
        if self.seen_stop:
            return  # at most one finish, and nothing after it counts
        try:
            self._apply(event)
        except (KeyError, TypeError) as exc:
            # The SDK builds events without validating them: a field missing or of the wrong
            # shape must fail the attempt, not crash the agent.
            raise StreamProtocolError(f"malformed {event.get('type')!r} event: {exc!r}") from exc

    def _apply(self, event: Mapping[str, Any]) -> None:
        kind = event.get("type")
        if kind == "message_start":
            message = event.get("message") or {}
            self.message_id = message.get("id", "")
            self.usage.update(message.get("usage") or {})
        elif kind == "content_block_start":
            self._start(event)
        elif kind == "content_block_delta":
            self._delta(event)
        elif kind == "content_block_stop":
            self._stop(event)
        elif kind == "message_delta":
            delta = event.get("delta") or {}
            if delta.get("stop_reason") is not None:
                self.stop_reason = delta["stop_reason"]
            self.usage.update(event.get("usage") or {})
        elif kind == "message_stop":
            self.seen_stop = True
        # "ping" and event types newer than this code carry nothing the message needs.

    def _start(self, event: Mapping[str, Any]) -> None:
        index = _index(event)
        if index in self._open or index in self._closed:
            return  # a repeated start must not reset a block that already has content
        block = event.get("content_block") or {}
        kind = block.get("type")
        if kind == "text":
            self._open[index] = _Block(index, "text", text=block.get("text", ""))
        elif kind == "tool_use":
            self._open[index] = _Block(
                index,
                "tool_use",
                id=block["id"],
                name=block["name"],
                initial_input=dict(block.get("input") or {}),
            )
        else:
            raise StreamProtocolError(f"unsupported content block type {kind!r} at index {index}")

    def _delta(self, event: Mapping[str, Any]) -> None:
        index = _index(event)
        if index in self._closed:
            return  # late delta: the first close already fixed this block
        block = self._open.get(index)
        if block is None:
            raise StreamProtocolError(f"delta for block {index}, which never started")
        delta = event.get("delta") or {}
        kind = delta.get("type")
        if kind == "text_delta" and block.type == "text":
            block.text += delta["text"]
        elif kind == "input_json_delta" and block.type == "tool_use":
            block.partial_json += delta["partial_json"]
        else:
            raise StreamProtocolError(f"{kind!r} delta does not fit the {block.type} block at index {index}")

    def _stop(self, event: Mapping[str, Any]) -> None:
        index = _index(event)
        if index in self._closed:
            return  # first close wins: a repeated stop neither reopens nor rewrites the block
        block = self._open.pop(index, None)
        if block is None:
            raise StreamProtocolError(f"stop for block {index}, which never started")
        if block.type == "tool_use":
            block.input = parse_tool_arguments(block.partial_json, block.initial_input)
        self._closed[index] = block

    def finish(self) -> AssembledMessage:
        """The assembled message, or the reason this response cannot be used."""
        if not self.seen_stop:
            raise IncompleteStreamError("stream ended without message_stop")
        if self._open:
            raise IncompleteStreamError(f"message_stop arrived with blocks {sorted(self._open)} still open")
        # The API refuses empty text blocks in history, and they carry nothing anyway.
        blocks = [self._closed[index] for index in sorted(self._closed)]
        content = [block.to_content() for block in blocks if block.type == "tool_use" or block.text]
        if not content:
            raise EmptyResponseError("the model returned no content")
        return AssembledMessage(self.message_id, content, self.stop_reason, dict(self.usage))
