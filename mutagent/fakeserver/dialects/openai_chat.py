"""OpenAI Chat Completions streaming (``POST /v1/chat/completions``), as the official SDK parses it.

Stream shape: ``data: <chunk>`` lines, no ``event:`` lines. A role chunk, content deltas, tool call
deltas (the first carries id, type and name, later ones argument fragments), a chunk with the
``finish_reason``, a usage chunk when ``stream_options.include_usage`` asks for it, then
``data: [DONE]``.
"""

from __future__ import annotations

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

CREATED = 1_700_000_000  # fixed, so that runs are reproducible byte for byte
DONE = b"data: [DONE]\n\n"


def data(payload: dict[str, Any]) -> bytes:
    return f"data: {compact(payload)}\n\n".encode()


class OpenAIChatDialect:
    name = "openai"

    def validate(self, body: Any) -> str | None:
        return require_fields(body, {"model": str, "messages": list})

    def _chunk(self, ctx: RequestContext, delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
        return data(
            {
                "id": f"chatcmpl-fake{ctx.index:04d}",
                "object": "chat.completion.chunk",
                "created": CREATED,
                "model": ctx.model,
                "system_fingerprint": None,
                "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}],
            }
        )

    def _usage(self, ctx: RequestContext, content: Behaviour) -> dict[str, int]:
        out = output_tokens(content)
        return {
            "prompt_tokens": ctx.input_tokens,
            "completion_tokens": out,
            "total_tokens": ctx.input_tokens + out,
        }

    def _usage_chunk(self, ctx: RequestContext, content: Behaviour) -> bytes:
        return data(
            {
                "id": f"chatcmpl-fake{ctx.index:04d}",
                "object": "chat.completion.chunk",
                "created": CREATED,
                "model": ctx.model,
                "choices": [],
                "usage": self._usage(ctx, content),
            }
        )

    def stream_events(self, content: Behaviour, ctx: RequestContext) -> list[bytes]:
        if content.no_choices:
            return [self._usage_chunk(ctx, content), DONE]
        role: dict[str, Any] = {"role": "assistant"}
        if content.text is not None:
            role["content"] = ""
        events = [self._chunk(ctx, role)]
        events += [self._chunk(ctx, {"content": piece}) for piece in text_pieces(content.text or "")]
        for position, call in enumerate(content.tool_calls):
            events.append(
                self._chunk(
                    ctx,
                    {
                        "tool_calls": [
                            {
                                "index": position,
                                "id": call.id,
                                "type": "function",
                                "function": {"name": call.name, "arguments": ""},
                            }
                        ]
                    },
                )
            )
            events += [
                self._chunk(ctx, {"tool_calls": [{"index": position, "function": {"arguments": piece}}]})
                for piece in argument_pieces(call.arguments)
            ]
        events.append(self._chunk(ctx, {}, content.openai_finish_reason))
        if ctx.include_usage:
            events.append(self._usage_chunk(ctx, content))
        events.append(DONE)
        return events

    def endless_head(self, ctx: RequestContext) -> list[bytes]:
        return [self._chunk(ctx, {"role": "assistant", "content": ""})]

    def endless_delta(self, text: str, ctx: RequestContext, position: int = 0) -> bytes:
        return self._chunk(ctx, {"content": text})

    def error_event(
        self, error_type: str, message: str, ctx: RequestContext | None = None, position: int = 0
    ) -> bytes:
        return data({"error": {"message": message, "type": error_type, "param": None, "code": None}})

    def malformed_event(self) -> bytes:
        return b'data: {"id": "chatcmpl-fake", "choices": [{"index": 0, "delta": {"cont\n\n'

    def message_body(self, content: Behaviour, ctx: RequestContext) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": content.text, "refusal": None}
        if content.tool_calls:
            message["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in content.tool_calls
            ]
        return {
            "id": f"chatcmpl-fake{ctx.index:04d}",
            "object": "chat.completion",
            "created": CREATED,
            "model": ctx.model,
            "system_fingerprint": None,
            "choices": []
            if content.no_choices
            else [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": content.openai_finish_reason,
                }
            ],
            "usage": self._usage(ctx, content),
        }

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        return {"error": {"message": message, "type": status_error_type(status), "param": None, "code": None}}
