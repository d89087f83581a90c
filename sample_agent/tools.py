"""Tools as contracts: what the model asks for is a proposal, checked before anything runs.

Every call goes through the same gate, in this order: the tool is on the allow-list; the
arguments match the tool's schema strictly (required keys present, types right, nothing extra);
the resource the call touches belongs to the caller's tenant; a side-effecting tool has been
approved; and a side-effecting call that already ran (same tenant, tool and canonical arguments)
is answered from its first result instead of running twice, which is what makes retrying a
turn safe. Refusals and tool crashes go back to the model as ``is_error`` results with a short
explanation, never as raw exception text that looks like an ordinary answer.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

JSON_TYPES: Mapping[str, type | tuple[type, ...]] = {
    "string": str,
    "integer": int,
    "number": (int, float),
    "boolean": bool,
    "object": dict,
    "array": list,
}


@dataclass(frozen=True)
class ToolCall:
    """A tool_use block from the model: the id must come back with the result."""

    id: str
    name: str
    input: dict[str, Any]


@dataclass(frozen=True)
class ToolContext:
    """What a handler may know about the call beyond its arguments."""

    tenant_id: str
    idempotency_key: str


@dataclass(frozen=True)
class Tool:
    """One tool's contract. ``owner`` names the tenant owning the resource a call touches
    (None when the call touches no existing resource)."""

    name: str
    description: str
    input_schema: Mapping[str, Any]
    handler: Callable[[dict[str, Any], ToolContext], object]
    side_effect: bool = False
    owner: Callable[[dict[str, Any]], str | None] | None = None

    def definition(self) -> dict[str, Any]:
        """The tool as declared to the model in the request."""
        return {"name": self.name, "description": self.description, "input_schema": dict(self.input_schema)}


@dataclass(frozen=True)
class ToolResult:
    """What goes back to the model for one tool_use, plus how it was reached (for the journal)."""

    tool_use_id: str
    content: str
    is_error: bool = False
    outcome: str = "executed"

    def to_block(self) -> dict[str, Any]:
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": self.tool_use_id,
            "content": self.content,
        }
        if self.is_error:
            block["is_error"] = True
        return block


def schema_violation(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> str | None:
    """The first way ``arguments`` breaks ``schema`` (a flat object schema), or None.

    Strict on purpose: an extra key is refused rather than ignored, because it is how a model
    smuggles a parameter the tool never declared.
    """
    properties: Mapping[str, Any] = schema.get("properties", {})
    for key in schema.get("required", ()):
        if key not in arguments:
            return f"missing required argument {key!r}"
    for key, value in arguments.items():
        if key not in properties:
            return f"unexpected argument {key!r}"
        expected = properties[key]["type"]
        # bool is an int in Python but not an integer in JSON Schema.
        if (isinstance(value, bool) and expected != "boolean") or not isinstance(value, JSON_TYPES[expected]):
            return f"argument {key!r} must be of type {expected}"
    return None


def idempotency_key(tenant_id: str, tool: str, arguments: Mapping[str, Any]) -> str:
    """Same tenant, tool and arguments give the same key, whatever order the model wrote keys in."""
    canonical = json.dumps(
        {"tenant": tenant_id, "tool": tool, "arguments": arguments},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def deny_all(call: ToolCall) -> bool:
    """The default approver: nothing with side effects runs unless someone said yes."""
    return False


def _render(output: object) -> str:
    return output if isinstance(output, str) else json.dumps(output, ensure_ascii=False, sort_keys=True)


class ToolRegistry:
    """The allow-list and the executor for one tenant's conversation."""

    def __init__(
        self,
        tools: Iterable[Tool],
        *,
        tenant_id: str,
        approve: Callable[[ToolCall], bool] = deny_all,
    ) -> None:
        self._tools = {tool.name: tool for tool in tools}
        self.tenant_id = tenant_id
        self._approve = approve
        self._completed: dict[str, str] = {}

    def definitions(self) -> list[dict[str, Any]]:
        return [tool.definition() for tool in self._tools.values()]

    def execute(self, call: ToolCall) -> ToolResult:
        """Check the call against its contract and run it, or say why not."""
        tool = self._tools.get(call.name)
        if tool is None:
            return self._refuse(
                call, f"unknown tool {call.name!r}; allowed: {', '.join(sorted(self._tools))}"
            )
        problem = schema_violation(tool.input_schema, call.input)
        if problem is not None:
            return self._refuse(call, f"invalid arguments for {call.name}: {problem}")
        if tool.owner is not None:
            owner = tool.owner(call.input)
            if owner is not None and owner != self.tenant_id:
                return self._refuse(call, f"{call.name}: the resource belongs to another tenant")
        key = idempotency_key(self.tenant_id, call.name, call.input)
        if tool.side_effect:
            if not self._approve(call):
                return self._refuse(
                    call, f"{call.name} has side effects and needs approval, which was not given"
                )
            if key in self._completed:
                return ToolResult(call.id, self._completed[key], outcome="replayed")
        try:
            output = tool.handler(call.input, ToolContext(self.tenant_id, key))
        except Exception as exc:  # a crashing tool must not crash the conversation
            return ToolResult(
                call.id, f"{call.name} failed: {type(exc).__name__}: {exc}", is_error=True, outcome="error"
            )
        content = _render(output)
        if tool.side_effect:
            self._completed[key] = content
        return ToolResult(call.id, content)

    @staticmethod
    def _refuse(call: ToolCall, why: str) -> ToolResult:
        return ToolResult(call.id, f"refused: {why}", is_error=True, outcome="refused")
