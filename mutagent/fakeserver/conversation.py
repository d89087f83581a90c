"""Read the tool calls and tool results out of a request body, whatever its dialect.

Anthropic puts tool calls in assistant ``tool_use`` blocks and answers them in the next user
message's ``tool_result`` blocks; OpenAI Chat puts them in assistant ``tool_calls`` and answers
each in its own ``role: "tool"`` message. Both are folded into one neutral list of messages so
that the invariant checker and the recording helpers are written once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

ANTHROPIC = "anthropic"
OPENAI = "openai"


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
            if isinstance(part, Mapping) and part.get("type") == "text"
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


def neutral_messages(body: Any, dialect: str) -> list[NeutralMessage]:
    """The body's ``messages`` in the neutral form (empty when there are none)."""
    messages = body.get("messages") if isinstance(body, Mapping) else None
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
