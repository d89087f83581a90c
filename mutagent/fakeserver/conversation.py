"""Read the tool calls and tool results out of a request body, whatever its dialect.

Anthropic puts tool calls in assistant ``tool_use`` blocks and answers them in the next user
message's ``tool_result`` blocks; OpenAI Chat puts them in assistant ``tool_calls`` and answers
each in its own ``role: "tool"`` message; OpenAI Responses lists flat ``input`` items, where
``function_call`` items are answered by ``function_call_output`` items with the same ``call_id``.
All three are folded into one neutral list of messages so
that the invariant checker and the recording helpers are written once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

ANTHROPIC = "anthropic"
OPENAI = "openai"
RESPONSES = "responses"
#: Responses input items that belong to the model's side of the conversation (its turn).
_MODEL_ITEMS = frozenset({"function_call", "reasoning"})


@dataclass(frozen=True)
class ToolResult:
    """One tool result the agent sent back; ``position`` indexes the body's ``messages``."""

    call_id: Any
    text: str
    is_error: bool
    position: int


@dataclass
class NeutralMessage:
    """A message reduced to what the pairing rules need.

    ``calls`` holds the ids of the tool calls an assistant message makes (as found, possibly
    empty or not a string); ``results`` the tool results a non-assistant message carries.
    """

    position: int
    role: str
    calls: list[Any] = field(default_factory=list)
    results: list[ToolResult] = field(default_factory=list)


def content_text(content: Any) -> str:
    """The text of a tool result: a string as is, a list of blocks as their text parts joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, Mapping) and part.get("type") in ("text", "input_text", "output_text")
        )
    return ""


def _blocks(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    content = message.get("content")
    if isinstance(content, list):
        return [block for block in content if isinstance(block, Mapping)]
    return []


def _anthropic(messages: list[Any]) -> list[NeutralMessage]:
    out = []
    for position, message in enumerate(messages):
        if not isinstance(message, Mapping):
            continue
        role = str(message.get("role"))
        neutral = NeutralMessage(position, role)
        for block in _blocks(message):
            if block.get("type") == "tool_use" and role == "assistant":
                neutral.calls.append(block.get("id"))
            elif block.get("type") == "tool_result":
                neutral.results.append(
                    ToolResult(
                        block.get("tool_use_id"),
                        content_text(block.get("content")),
                        bool(block.get("is_error", False)),
                        position,
                    )
                )
        out.append(neutral)
    return out


def _openai(messages: list[Any]) -> list[NeutralMessage]:
    out: list[NeutralMessage] = []
    for position, message in enumerate(messages):
        if not isinstance(message, Mapping):
            continue
        role = str(message.get("role"))
        if role == "tool":
            result = ToolResult(
                message.get("tool_call_id"), content_text(message.get("content")), False, position
            )
            if out and out[-1].role == "tool":
                out[-1].results.append(result)  # consecutive tool messages answer one assistant turn
            else:
                out.append(NeutralMessage(position, "tool", results=[result]))
            continue
        neutral = NeutralMessage(position, role)
        if role == "assistant":
            for call in message.get("tool_calls") or []:
                neutral.calls.append(call.get("id") if isinstance(call, Mapping) else None)
        out.append(neutral)
    return out


def _responses(items: list[Any], continued: bool) -> list[NeutralMessage]:
    """Consecutive model-side items (assistant messages, function calls, reasoning) form one
    assistant turn; consecutive ``function_call_output`` items one answer. ``continued``
    (``previous_response_id`` is set): the first answers may reply to calls of the stored
    response, which the request does not repeat, so they are paired with a stand-in turn."""
    out: list[NeutralMessage] = []
    for position, item in enumerate(items):
        if not isinstance(item, Mapping):
            continue
        kind, role = item.get("type"), item.get("role")
        if kind == "function_call_output":
            result = ToolResult(item.get("call_id"), content_text(item.get("output")), False, position)
            if out and out[-1].role == "tool":
                out[-1].results.append(result)
            else:
                out.append(NeutralMessage(position, "tool", results=[result]))
        elif kind in _MODEL_ITEMS or role == "assistant":
            if not (out and out[-1].role == "assistant"):
                out.append(NeutralMessage(position, "assistant"))
            if kind == "function_call":
                out[-1].calls.append(item.get("call_id"))
        else:
            out.append(NeutralMessage(position, str(role or kind)))
    if continued and out and out[0].role == "tool":
        stand_in = NeutralMessage(
            -1, "assistant", calls=list(dict.fromkeys(r.call_id for r in out[0].results))
        )
        out.insert(0, stand_in)
    return out


def neutral_messages(body: Any, dialect: str) -> list[NeutralMessage]:
    """The body's ``messages`` (Responses: ``input`` items) in the neutral form (empty when
    there are none)."""
    if not isinstance(body, Mapping):
        return []
    if dialect == RESPONSES:
        items = body.get("input")
        return (
            _responses(items, body.get("previous_response_id") is not None) if isinstance(items, list) else []
        )
    messages = body.get("messages")
    if not isinstance(messages, list):
        return []
    return _anthropic(messages) if dialect == ANTHROPIC else _openai(messages)


def tool_results(body: Any, dialect: str) -> dict[str, str]:
    """``{tool_call_id: text}`` for every tool result anywhere in the body's history."""
    found: dict[str, str] = {}
    for message in neutral_messages(body, dialect):
        for result in message.results:
            found[str(result.call_id)] = result.text
    return found
