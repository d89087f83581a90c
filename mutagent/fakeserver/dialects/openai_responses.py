"""OpenAI Responses (``POST /v1/responses``), as the official SDK parses it.

Stream shape (every event has an ``event:`` line and a ``sequence_number``): ``response.created``,
``response.in_progress``; per output item ``response.output_item.added``, then for a message
``response.content_part.added`` / ``response.output_text.delta``... / ``response.output_text.done``
/ ``response.content_part.done``, for a function call ``response.function_call_arguments.delta``...
/ ``response.function_call_arguments.done``, then ``response.output_item.done``; last the
end-of-turn marker: ``response.completed``, or ``response.incomplete`` when the turn stopped at
``max_output_tokens`` (or for another named reason). There is no ``[DONE]`` line.
"""

from __future__ import annotations

from typing import Any

from mutagent.fakeserver.behaviours import Behaviour, ToolCall
from mutagent.fakeserver.dialects.base import (
    RequestContext,
    argument_pieces,
    compact,
    output_tokens,
    status_error_type,
    text_pieces,
)

CREATED = 1_700_000_000  # fixed, so that runs are reproducible byte for byte

#: Neutral stop reasons that end a Responses turn as ``incomplete``, with the reason it names.
INCOMPLETE_REASONS = {"max_tokens": "max_output_tokens", "refusal": "content_filter"}
#: Neutral stop reasons that end it as ``completed`` (Responses names no reason for those).
COMPLETED_REASONS = frozenset({"end_turn", "tool_use", "stop_sequence", None})


def sse(payload: dict[str, Any]) -> bytes:
    return f"event: {payload['type']}\ndata: {compact(payload)}\n\n".encode()


class OpenAIResponsesDialect:
    name = "responses"

    def validate(self, body: Any) -> str | None:
        if not isinstance(body, dict):
            return "the request body must be a JSON object"
        if not isinstance(body.get("model"), str):
            return (
                "missing required field 'model'" if "model" not in body else "field 'model' must be a string"
            )
        items = body.get("input")
        if items is not None and not isinstance(items, (str, list)):
            return f"field 'input' must be a string or a list of items, got {type(items).__name__}"
        for position, item in enumerate(items if isinstance(items, list) else []):
            if not isinstance(item, dict):
                return f"input[{position}] must be an object"
        return None

    # -- the Response object ------------------------------------------------------------------------

    def _status(self, content: Behaviour) -> tuple[str, dict[str, Any] | None]:
        reason = content.neutral_stop_reason
        if reason in COMPLETED_REASONS:
            return "completed", None
        return "incomplete", {"reason": INCOMPLETE_REASONS.get(reason, reason)}  # type: ignore[arg-type]

    def _usage(self, ctx: RequestContext, content: Behaviour) -> dict[str, Any]:
        out = output_tokens(content)
        return {
            "input_tokens": ctx.input_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": out,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": ctx.input_tokens + out,
        }

    def _response(
        self,
        ctx: RequestContext,
        status: str,
        output: list[dict[str, Any]],
        *,
        usage: dict[str, Any] | None = None,
        incomplete: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        return {
            "id": f"resp_fake{ctx.index:04d}",
            "object": "response",
            "created_at": CREATED,
            "status": status,
            "error": error,
            "incomplete_details": incomplete,
            "instructions": None,
            "max_output_tokens": None,
            "model": ctx.model,
            "output": output,
            "parallel_tool_calls": True,
            "previous_response_id": None,
            "temperature": 1.0,
            "tool_choice": "auto",
            "tools": [],
            "top_p": 1.0,
            "truncation": "disabled",
            "usage": usage,
            "metadata": {},
        }

    def _message_item(self, ctx: RequestContext, text: str | None, status: str) -> dict[str, Any]:
        content = [] if text is None else [{"type": "output_text", "text": text, "annotations": []}]
        return {
            "id": f"msg_fake{ctx.index:04d}",
            "type": "message",
            "status": status,
            "role": "assistant",
            "content": content,
        }

    def _call_item(
        self, ctx: RequestContext, position: int, call: ToolCall, arguments: str, status: str
    ) -> dict:
        return {
            "id": f"fc_fake{ctx.index:04d}_{position}",
            "type": "function_call",
            "status": status,
            "call_id": call.id,
            "name": call.name,
            "arguments": arguments,
        }

    def _output(self, content: Behaviour, ctx: RequestContext) -> list[dict[str, Any]]:
        if content.no_choices:
            return []
        items = [] if content.text is None else [self._message_item(ctx, content.text, "completed")]
        items += [
            self._call_item(ctx, position, call, call.arguments, "completed")
            for position, call in enumerate(content.tool_calls)
        ]
        return items

    # -- streaming ----------------------------------------------------------------------------------

    def _head(self, ctx: RequestContext) -> list[dict[str, Any]]:
        started = self._response(ctx, "in_progress", [])
        return [
            {"type": "response.created", "response": started},
            {"type": "response.in_progress", "response": started},
        ]

    def _text_events(self, ctx: RequestContext, index: int, text: str) -> list[dict[str, Any]]:
        item_id = f"msg_fake{ctx.index:04d}"
        where = {"item_id": item_id, "output_index": index, "content_index": 0}
        part = {"type": "output_text", "text": "", "annotations": []}
        events: list[dict[str, Any]] = [
            {
                "type": "response.output_item.added",
                "output_index": index,
                "item": self._message_item(ctx, None, "in_progress"),
            },
            {"type": "response.content_part.added", **where, "part": part},
        ]
        events += [
            {"type": "response.output_text.delta", **where, "delta": piece, "logprobs": []}
            for piece in text_pieces(text)
        ]
        events += [
            {"type": "response.output_text.done", **where, "text": text, "logprobs": []},
            {"type": "response.content_part.done", **where, "part": {**part, "text": text}},
            {
                "type": "response.output_item.done",
                "output_index": index,
                "item": self._message_item(ctx, text, "completed"),
            },
        ]
        return events

    def _call_events(self, ctx: RequestContext, index: int, position: int, call: ToolCall) -> list[dict]:
        item_id = f"fc_fake{ctx.index:04d}_{position}"
        events: list[dict[str, Any]] = [
            {
                "type": "response.output_item.added",
                "output_index": index,
                "item": self._call_item(ctx, position, call, "", "in_progress"),
            }
        ]
        events += [
            {
                "type": "response.function_call_arguments.delta",
                "item_id": item_id,
                "output_index": index,
                "delta": piece,
            }
            for piece in argument_pieces(call.arguments)
        ]
        events += [
            {
                "type": "response.function_call_arguments.done",
                "item_id": item_id,
                "output_index": index,
                "name": call.name,
                "arguments": call.arguments,
            },
            {
                "type": "response.output_item.done",
                "output_index": index,
                "item": self._call_item(ctx, position, call, call.arguments, "completed"),
            },
        ]
        return events

    def stream_events(self, content: Behaviour, ctx: RequestContext) -> list[bytes]:
        events = self._head(ctx)
        if not content.no_choices:
            index = 0
            if content.text is not None:
                events += self._text_events(ctx, index, content.text)
                index += 1
            for position, call in enumerate(content.tool_calls):
                events += self._call_events(ctx, index, position, call)
                index += 1
        status, incomplete = self._status(content)
        final = self._response(
            ctx, status, self._output(content, ctx), usage=self._usage(ctx, content), incomplete=incomplete
        )
        events.append({"type": f"response.{status}", "response": final})
        return [sse({**event, "sequence_number": number}) for number, event in enumerate(events)]

    def endless_head(self, ctx: RequestContext) -> list[bytes]:
        item_id = f"msg_fake{ctx.index:04d}"
        events = [
            *self._head(ctx),
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": self._message_item(ctx, None, "in_progress"),
            },
            {
                "type": "response.content_part.added",
                "item_id": item_id,
                "output_index": 0,
                "content_index": 0,
                "part": {"type": "output_text", "text": "", "annotations": []},
            },
        ]
        return [sse({**event, "sequence_number": number}) for number, event in enumerate(events)]

    def endless_delta(self, text: str, ctx: RequestContext, position: int = 0) -> bytes:
        return sse(
            {
                "type": "response.output_text.delta",
                "item_id": f"msg_fake{ctx.index:04d}",
                "output_index": 0,
                "content_index": 0,
                "delta": text,
                "logprobs": [],
                "sequence_number": position,
            }
        )

    def error_event(
        self, error_type: str, message: str, ctx: RequestContext | None = None, position: int = 0
    ) -> bytes:
        """An ``error`` event, then the ``response.failed`` that ends the turn (as the API does)."""
        error = sse(
            {
                "type": "error",
                "code": error_type,
                "message": message,
                "param": None,
                "sequence_number": position,
            }
        )
        if ctx is None:
            return error
        failed = self._response(ctx, "failed", [], error={"code": error_type, "message": message})
        return error + sse({"type": "response.failed", "response": failed, "sequence_number": position + 1})

    def malformed_event(self) -> bytes:
        return (
            b'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"Hi\n\n'
        )

    def message_body(self, content: Behaviour, ctx: RequestContext) -> dict[str, Any]:
        status, incomplete = self._status(content)
        return self._response(
            ctx, status, self._output(content, ctx), usage=self._usage(ctx, content), incomplete=incomplete
        )

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        return {"error": {"message": message, "type": status_error_type(status), "param": None, "code": None}}
