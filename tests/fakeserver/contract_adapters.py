"""Model adapters for checking the contract battery itself: correct ones over the anthropic and
openai SDKs, and broken ones, each with exactly one bug the battery must catch.

The correct adapters are small but real: the SDK's own retries are off (one call, one attempt),
the stream is read inside ``with`` so that leaving early releases it, the turn ends at the
dialect's end-of-turn marker, and a tool setup no provider accepts is refused before sending.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anthropic
import openai

from mutagent.contract import Failure, Finish, Text, ToolUse, Turn

PROVIDER_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
MCP_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")
CHOICES = ("auto", "none", "required", "tool")


class ConfigError(ValueError):
    """A tool setup the provider would reject, refused before sending."""


class IncompleteTurn(Exception):
    """The response ended before the dialect's end-of-turn marker."""


class ModelError(Exception):
    """The provider reported an error inside the stream."""


def check_tools(turn: Turn, name_rule: re.Pattern[str] | None = PROVIDER_NAME, duplicates: bool = True,
                choices: bool = True) -> None:  # fmt: skip
    """Refuse a tool setup providers reject (each switch turns one rule off, for the broken adapters)."""
    names = [tool.name for tool in turn.tools]
    for name in names:
        if name_rule is not None and not name_rule.fullmatch(name):
            raise ConfigError(f"tool name {name!r} is not allowed")
    repeated = [name for name, count in Counter(names).items() if count > 1]
    if duplicates and repeated:
        raise ConfigError(f"two tools are named {repeated[0]!r}")
    if not choices or turn.tool_choice is None:
        return
    if turn.tool_choice not in CHOICES:
        raise ConfigError(f"unknown tool choice {turn.tool_choice!r}")
    if turn.tool_choice in ("required", "tool") and not names:
        raise ConfigError(f"tool choice {turn.tool_choice!r} with no tools declared")
    if turn.tool_choice == "tool" and turn.tool_name not in names:
        raise ConfigError(f"tool choice names {turn.tool_name!r}, which is not declared")


def tool_arguments(text: str) -> dict[str, Any]:
    """A tool call's arguments: a complete JSON object, or the turn fails (never ``{}``)."""
    arguments = json.loads(text or "{}")
    if not isinstance(arguments, dict):
        raise ModelError(f"tool arguments are not a JSON object: {text!r}")
    return arguments


def neutral_reason(raw: str | None, mapping: dict[str, str]) -> str:
    """The provider's reason mapped onto the neutral set; unknown ones pass through; none is stop."""
    if not raw:
        return "stop"
    return mapping.get(raw, raw)


ANTHROPIC_REASONS = {"end_turn": "stop", "stop_sequence": "stop", "tool_use": "tool_use",
                     "max_tokens": "length", "refusal": "filtered"}  # fmt: skip


class AnthropicAdapter:
    """Messages API over the anthropic SDK's raw event stream."""

    def __init__(self, base_url: str) -> None:
        self.client = anthropic.Anthropic(base_url=base_url, api_key="test", max_retries=0, timeout=5.0)

    def check(self, turn: Turn) -> None:
        check_tools(turn)

    def request(self, turn: Turn) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": "claude-test",
            "max_tokens": 64,
            "messages": [{"role": "user", "content": turn.prompt}],
        }
        if turn.tools:
            request["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": dict(t.schema)}
                for t in turn.tools
            ]
        if turn.tool_choice is not None:
            kind = {"required": "any"}.get(turn.tool_choice, turn.tool_choice)
            request["tool_choice"] = {"type": kind, **({"name": turn.tool_name} if kind == "tool" else {})}
        return request

    def reason(self, raw: str | None) -> str | None:
        return neutral_reason(raw, ANTHROPIC_REASONS)

    def arguments(self, text: str) -> Any:
        return tool_arguments(text)

    def stream(self, turn: Turn) -> Iterator[Any]:
        self.check(turn)
        with self.client.messages.create(stream=True, **self.request(turn)) as events:
            yield from self.read(events)

    def read(self, events: Any) -> Iterator[Any]:
        state: dict[str, Any] = {"tools": {}, "stop_reason": None, "done": False}
        for event in events:
            yield from self.on_event(event, state)
            if state["done"]:
                return
        raise IncompleteTurn("the stream ended before message_stop")

    def on_event(self, event: Any, state: dict[str, Any]) -> list[Any]:
        """The neutral events one raw event gives; ``state["done"]`` once the turn is over."""
        tools = state["tools"]
        if event.type == "content_block_start" and event.content_block.type == "tool_use":
            block = event.content_block
            tools[event.index] = {"id": block.id, "name": block.name, "json": ""}
        elif event.type == "content_block_delta" and event.delta.type == "text_delta":
            return [Text(event.delta.text)]
        elif event.type == "content_block_delta" and event.delta.type == "input_json_delta":
            tools[event.index]["json"] += event.delta.partial_json
        elif event.type == "content_block_stop" and event.index in tools:
            call = tools.pop(event.index)
            return [ToolUse(call["id"], call["name"], self.arguments(call["json"]))]
        elif event.type == "message_delta":
            state["stop_reason"] = event.delta.stop_reason
        elif event.type == "message_stop":
            state["done"] = True
            return [Finish(self.reason(state["stop_reason"]), state["stop_reason"])]
        return []


RESPONSES_REASONS = {"max_output_tokens": "length", "content_filter": "filtered"}


class ResponsesAdapter:
    """OpenAI Responses over the openai SDK's raw event stream."""

    def __init__(self, base_url: str) -> None:
        self.client = openai.OpenAI(base_url=base_url, api_key="test", max_retries=0, timeout=5.0)

    def request(self, turn: Turn) -> dict[str, Any]:
        request: dict[str, Any] = {"model": "gpt-test", "input": [{"role": "user", "content": turn.prompt}]}
        if turn.tools:
            request["tools"] = [
                {
                    "type": "function",
                    "name": t.name,
                    "description": t.description,
                    "parameters": dict(t.schema),
                }
                for t in turn.tools
            ]
        if turn.tool_choice == "tool":
            request["tool_choice"] = {"type": "function", "name": turn.tool_name}
        elif turn.tool_choice is not None:
            request["tool_choice"] = turn.tool_choice
        return request

    def stream(self, turn: Turn) -> Iterator[Any]:
        check_tools(turn)
        calls = 0
        with self.client.responses.create(stream=True, **self.request(turn)) as events:
            for event in events:
                if event.type == "response.output_text.delta":
                    yield Text(event.delta)
                elif event.type == "response.output_item.done" and event.item.type == "function_call":
                    calls += 1
                    yield ToolUse(event.item.call_id, event.item.name, tool_arguments(event.item.arguments))
                elif event.type == "error":
                    raise ModelError(f"{event.code}: {event.message}")
                elif event.type == "response.failed":
                    raise ModelError(f"response failed: {event.response.error}")
                elif event.type == "response.completed":
                    yield Finish("tool_use" if calls else "stop", "completed")
                    return
                elif event.type == "response.incomplete":
                    raw = event.response.incomplete_details and event.response.incomplete_details.reason
                    yield Finish(neutral_reason(raw, RESPONSES_REASONS), raw)
                    return
        raise IncompleteTurn("the stream ended before response.completed")


CHAT_REASONS = {"stop": "stop", "tool_calls": "tool_use", "length": "length", "content_filter": "filtered"}


class ChatAdapter:
    """OpenAI Chat Completions over the openai SDK. The SDK's chunk iterator hides ``[DONE]`` (a
    body without it ends silently), so this adapter reads the SSE lines of the SDK's streaming
    response itself."""

    def __init__(self, base_url: str) -> None:
        self.client = openai.OpenAI(base_url=base_url, api_key="test", max_retries=0, timeout=5.0)

    def request(self, turn: Turn) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": "gpt-test",
            "messages": [{"role": "user", "content": turn.prompt}],
        }
        if turn.tools:
            request["tools"] = [
                {"type": "function",
                 "function": {"name": t.name, "description": t.description, "parameters": dict(t.schema)}}
                for t in turn.tools
            ]  # fmt: skip
        if turn.tool_choice == "tool":
            request["tool_choice"] = {"type": "function", "function": {"name": turn.tool_name}}
        elif turn.tool_choice is not None:
            request["tool_choice"] = turn.tool_choice
        return request

    def stream(self, turn: Turn) -> Iterator[Any]:
        check_tools(turn)
        calls: dict[int, dict[str, Any]] = {}
        finish: str | None = None
        create = self.client.chat.completions.with_streaming_response.create
        with create(stream=True, **self.request(turn)) as response:
            for line in response.iter_lines():
                if not line.startswith("data: "):
                    continue
                if line == "data: [DONE]":
                    for index in sorted(calls):
                        call = calls[index]
                        yield ToolUse(call["id"], call["name"], tool_arguments(call["arguments"]))
                    yield Finish(neutral_reason(finish, CHAT_REASONS), finish)
                    return
                chunk = json.loads(line[len("data: ") :])
                if chunk.get("error"):
                    raise ModelError(str(chunk["error"]))
                for choice in chunk.get("choices") or []:
                    delta = choice.get("delta") or {}
                    if delta.get("content"):
                        yield Text(delta["content"])
                    for part in delta.get("tool_calls") or []:
                        call = calls.setdefault(part["index"], {"id": "", "name": "", "arguments": ""})
                        call["id"] = part.get("id") or call["id"]
                        function = part.get("function") or {}
                        call["name"] = function.get("name") or call["name"]
                        call["arguments"] += function.get("arguments") or ""
                    finish = choice.get("finish_reason") or finish
        raise IncompleteTurn("the stream ended before [DONE]")


class AsyncAnthropicAdapter(AnthropicAdapter):
    """The async SDK, read by a background task that hands events over a one-slot queue (the
    shape of a Go adapter's goroutine and channel): leaving early must stop that reader."""

    cancel_reader = True

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url  # an async client belongs to one event loop: made per call

    async def stream(self, turn: Turn) -> AsyncIterator[Any]:
        self.check(turn)
        client = anthropic.AsyncAnthropic(base_url=self.base_url, api_key="test", max_retries=0, timeout=5.0)
        queue: asyncio.Queue[Any] = asyncio.Queue(maxsize=1)

        async def reader() -> None:
            try:
                state: dict[str, Any] = {"tools": {}, "stop_reason": None, "done": False}
                async with await client.messages.create(stream=True, **self.request(turn)) as events:
                    async for event in events:
                        for item in self.on_event(event, state):
                            await queue.put(item)
                        if state["done"]:
                            break
                if not state["done"]:
                    raise IncompleteTurn("the stream ended before message_stop")
            except Exception as error:  # noqa: BLE001 - handed to the consumer, which raises it
                await queue.put(error)
            await queue.put(None)

        task = asyncio.ensure_future(reader())
        try:
            while (item := await queue.get()) is not None:
                if isinstance(item, Exception):
                    raise item
                yield item
        finally:
            if self.cancel_reader:
                task.cancel()


# -- broken adapters: one bug each ------------------------------------------------------------------


class LeakyAdapter(AnthropicAdapter):
    """Bug: closes the response only when it reads the turn to its end; a consumer that stops
    early leaves it open (a reader that outlives its consumer holds it)."""

    def __init__(self, base_url: str) -> None:
        super().__init__(base_url)
        self.held: list[Any] = []

    def stream(self, turn: Turn) -> Iterator[Any]:
        self.check(turn)
        events = self.client.messages.create(stream=True, **self.request(turn))
        self.held.append(events)
        yield from self.read(events)
        events.close()


class LingeringAdapter(AnthropicAdapter):
    """Bug: after the end marker it reads on until the server closes the connection."""

    def read(self, events: Any) -> Iterator[Any]:
        for event in super().read(events):
            if isinstance(event, Finish):
                for _ in events:
                    pass
            yield event


class NoEndMarkerAdapter(AnthropicAdapter):
    """Bug: a stream that carried a stop reason is taken as complete, marker or not."""

    def read(self, events: Any) -> Iterator[Any]:
        stop = {"reason": None}

        def watched() -> Iterator[Any]:
            for event in events:
                if event.type == "message_delta":
                    stop["reason"] = event.delta.stop_reason
                yield event

        try:
            yield from super().read(watched())
        except IncompleteTurn:
            if stop["reason"] is None:
                raise
            yield Finish(self.reason(stop["reason"]), stop["reason"])


class DoubleFinishAdapter(AnthropicAdapter):
    """Bug: flushes the finish a second time once the reader is done."""

    def read(self, events: Any) -> Iterator[Any]:
        last = None
        for event in super().read(events):
            last = event
            yield event
        if isinstance(last, Finish):
            yield last


class RawReasonAdapter(AnthropicAdapter):
    """Bug: passes the provider's reason through unmapped, so a missing one is empty."""

    def reason(self, raw: str | None) -> str | None:
        return raw


class ErrorNotLastAdapter(AnthropicAdapter):
    """Bug: reports an API error as an event, then falls through to finishing the turn."""

    def stream(self, turn: Turn) -> Iterator[Any]:
        self.check(turn)
        try:
            with self.client.messages.create(stream=True, **self.request(turn)) as events:
                yield from self.read(events)
            return
        except anthropic.APIStatusError as error:
            yield Failure(error)
        yield Finish("stop", None)


class NoNameCheckAdapter(AnthropicAdapter):
    """Bug: sends any tool name (declared as accepting MCP names, which it does)."""

    def check(self, turn: Turn) -> None:
        check_tools(turn, name_rule=None)


class NoDuplicateCheckAdapter(AnthropicAdapter):
    """Bug: sends two tools with one name."""

    def check(self, turn: Turn) -> None:
        check_tools(turn, duplicates=False)


class NoChoiceCheckAdapter(AnthropicAdapter):
    """Bug: sends any tool choice, met or not."""

    def check(self, turn: Turn) -> None:
        check_tools(turn, choices=False)


class OverStrictAdapter(AnthropicAdapter):
    """Bug: refuses tool choice 'none' when no tools are declared, a setup every provider takes."""

    def check(self, turn: Turn) -> None:
        check_tools(turn)
        if turn.tool_choice == "none" and not turn.tools:
            raise ConfigError("tool choice 'none' needs tools")


class McpLenientAdapter(AnthropicAdapter):
    """Bug: declares that it refuses MCP-only names but checks names with the MCP grammar."""

    def check(self, turn: Turn) -> None:
        check_tools(turn, name_rule=MCP_NAME)


class EmptyIsSuccessAdapter(AnthropicAdapter):
    """Bug: a response with no events at all is taken as an empty, finished turn."""

    def read(self, events: Any) -> Iterator[Any]:
        seen = {"any": False}

        def watched() -> Iterator[Any]:
            for event in events:
                seen["any"] = True
                yield event

        try:
            yield from super().read(watched())
        except IncompleteTurn:
            if seen["any"]:
                raise
            yield Finish("stop", None)


class EmptyArgumentsAdapter(AnthropicAdapter):
    """Bug: tool arguments that do not parse become ``{}`` and the tool runs anyway."""

    def arguments(self, text: str) -> Any:
        try:
            return json.loads(text or "{}")
        except json.JSONDecodeError:
            return {}


class AsyncLeakyReaderAdapter(AsyncAnthropicAdapter):
    """Bug: the reader task outlives a consumer that stops early, blocked on the full queue and
    holding the response."""

    cancel_reader = False
