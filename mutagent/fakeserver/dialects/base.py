"""What every dialect renders, and the per-request facts rendering needs.

A dialect turns neutral content (text, tool calls, stop reason) into its own wire events and
error shapes, and checks that a request body has the fields its API requires. Nothing here
decides anything about retries: it only spells protocol facts.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any, Protocol

from mutagent.fakeserver.behaviours import Behaviour


@dataclass(frozen=True)
class RequestContext:
    """Facts about the request a response is rendered for (ids derive from ``index`` so that a
    run is reproducible byte for byte)."""

    index: int
    model: str
    stream: bool
    include_usage: bool
    input_tokens: int


class Dialect(Protocol):
    """One provider's wire format."""

    name: str

    def validate(self, body: Any) -> str | None:
        """Why ``body`` is not a request this API accepts, or None."""

    def stream_events(self, content: Behaviour, ctx: RequestContext) -> list[bytes]:
        """The complete ok-stream of ``content``; its last event is the end-of-turn marker."""

    def endless_head(self, ctx: RequestContext) -> list[bytes]:
        """The events that open a text turn that never ends."""

    def endless_delta(self, text: str, ctx: RequestContext, position: int) -> bytes:
        """One text delta of that endless turn (``position``: its place in the whole stream)."""

    def error_event(self, error_type: str, message: str, ctx: RequestContext, position: int) -> bytes:
        """An in-stream error event (``position``: how many events were sent before it)."""

    def malformed_event(self) -> bytes:
        """A ``data:`` line that is not JSON."""

    def message_body(self, content: Behaviour, ctx: RequestContext) -> dict[str, Any]:
        """The non-streaming JSON answer for ``content``."""

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        """The JSON error body for an HTTP error ``status``."""


def compact(data: Any) -> str:
    """JSON as the real APIs send it: no spaces."""
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def text_pieces(text: str) -> list[str]:
    """Word-sized deltas whose concatenation is exactly ``text`` ("Hello world" -> "Hello", " world")."""
    pieces = re.findall(r"\s*\S+", text)
    rest = text[len("".join(pieces)) :]
    if rest:
        if pieces:
            pieces[-1] += rest
        else:
            pieces = [rest]
    return pieces


def json_pieces(data: Any, size: int = 16) -> list[str]:
    """``data`` as JSON split into at least two chunks, so a client must join partial JSON."""
    return argument_pieces(json.dumps(data, separators=(",", ":"), ensure_ascii=False), size)


def argument_pieces(text: str, size: int = 16) -> list[str]:
    """Tool-call arguments text split into at least two chunks (one, or none, when it is shorter),
    so a client must join partial JSON; raw argument strings go out exactly as scripted."""
    if len(text) < 2:
        return [text] if text else []
    count = max(2, math.ceil(len(text) / size))
    step = max(1, math.ceil(len(text) / count))
    return [text[i : i + step] for i in range(0, len(text), step)]


def output_tokens(content: Behaviour) -> int:
    """A deterministic, plausible token count for the usage fields."""
    chars = len(content.text or "") + sum(len(c.arguments) for c in content.tool_calls)
    return max(1, math.ceil(chars / 4)) if (content.text or content.tool_calls) else 0


def status_error_type(status: int) -> str:
    """The error ``type`` both providers use for an HTTP status (Anthropic's names)."""
    return {
        400: "invalid_request_error",
        401: "authentication_error",
        403: "permission_error",
        404: "not_found_error",
        413: "request_too_large",
        429: "rate_limit_error",
        529: "overloaded_error",
    }.get(status, "api_error")


def require_fields(body: Any, fields: dict[str, type | tuple[type, ...]]) -> str | None:
    """The first missing or mistyped required field of ``body``, as a one-line reason."""
    if not isinstance(body, dict):
        return "the request body must be a JSON object"
    for name, kind in fields.items():
        if name not in body:
            return f"missing required field {name!r}"
        if not isinstance(body[name], kind) or isinstance(body[name], bool) and kind is int:
            return f"field {name!r} has the wrong type ({type(body[name]).__name__})"
    for position, message in enumerate(body["messages"]):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            return f"messages[{position}] must be an object with a string 'role'"
    return None
