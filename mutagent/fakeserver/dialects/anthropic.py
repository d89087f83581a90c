"""Anthropic Messages streaming (``POST /v1/messages``), as the official SDK parses it.

Stream shape: ``message_start``, per block ``content_block_start`` / deltas /
``content_block_stop`` (a ``ping`` after the first block start), ``message_delta`` with the stop
reason and output tokens, ``message_stop``. Every event carries an ``event:`` line: the SDK skips
data lines without one.
"""

from __future__ import annotations

import json
from typing import Any

from mutagent.fakeserver.behaviours import Behaviour
from mutagent.fakeserver.dialects.base import (
    RequestContext,
    argument_pieces,
    compact,
    output_tokens,
    require_fields,
    status_error_type,
    text_pieces,
)


def sse(event_type: str, data: dict[str, Any]) -> bytes:
    return f"event: {event_type}\ndata: {compact(data)}\n\n".encode()


def _input(value: Any) -> Any:
    """A non-streaming ``input``: a mapping as is; a raw arguments string parsed when it is JSON
    (``'[1]'`` gives a list), else sent as a JSON string, the nearest a JSON body gets to
    arguments the model never finished."""
    if not isinstance(value, str):
        return dict(value)
    try:
        return json.loads(value)
    except ValueError:
        return value


class AnthropicDialect:
    name = "anthropic"

    def validate(self, body: Any) -> str | None:
        return require_fields(body, {"model": str, "max_tokens": int, "messages": list})

    def _message(
        self, ctx: RequestContext, content: list[dict[str, Any]], stop_reason: str | None, out_tokens: int
    ) -> dict[str, Any]:
        return {
            "id": f"msg_fake_{ctx.index:04d}",
            "type": "message",
            "role": "assistant",
            "model": ctx.model,
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": ctx.input_tokens, "output_tokens": out_tokens},
        }

    def _start(self, ctx: RequestContext) -> bytes:
        return sse("message_start", {"type": "message_start", "message": self._message(ctx, [], None, 1)})

    def stream_events(self, content: Behaviour, ctx: RequestContext) -> list[bytes]:
        events = [self._start(ctx)]
        blocks: list[list[bytes]] = []
        if content.text is not None:
            index = len(blocks)
            block = [
                sse(
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {"type": "text", "text": ""},
                    },
                )
            ]
            block += [
                sse(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "text_delta", "text": piece},
                    },
                )
                for piece in text_pieces(content.text)
            ]
            blocks.append(block)
        for call in content.tool_calls:
            index = len(blocks)
            block = [
                sse(
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {"type": "tool_use", "id": call.id, "name": call.name, "input": {}},
                    },
                )
            ]
            block += [
                sse(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": piece},
                    },
                )
                for piece in argument_pieces(call.arguments)
            ]
            blocks.append(block)
        for index, block in enumerate(blocks):
            block.append(sse("content_block_stop", {"type": "content_block_stop", "index": index}))
        ping = sse("ping", {"type": "ping"})
        if blocks:
            blocks[0].insert(1, ping)
        else:
            events.append(ping)
        for block in blocks:
            events.extend(block)
        events.append(
            sse(
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": content.neutral_stop_reason, "stop_sequence": None},
                    "usage": {"output_tokens": output_tokens(content)},
                },
            )
        )
        events.append(sse("message_stop", {"type": "message_stop"}))
        return events

    def endless_head(self, ctx: RequestContext) -> list[bytes]:
        return [
            self._start(ctx),
            sse(
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            ),
            sse("ping", {"type": "ping"}),
        ]

    def endless_delta(self, text: str, ctx: RequestContext, position: int = 0) -> bytes:
        return sse(
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
        )

    def error_event(
        self, error_type: str, message: str, ctx: RequestContext | None = None, position: int = 0
    ) -> bytes:
        return sse("error", {"type": "error", "error": {"type": error_type, "message": message}})

    def malformed_event(self) -> bytes:
        return (
            b'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, "delta": {"ty\n\n'
        )

    def message_body(self, content: Behaviour, ctx: RequestContext) -> dict[str, Any]:
        blocks: list[dict[str, Any]] = []
        if content.text is not None:
            blocks.append({"type": "text", "text": content.text})
        blocks += [
            {"type": "tool_use", "id": c.id, "name": c.name, "input": _input(c.input)}
            for c in content.tool_calls
        ]
        return self._message(ctx, blocks, content.neutral_stop_reason, output_tokens(content))

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        return {"type": "error", "error": {"type": status_error_type(status), "message": message}}
