"""The agent loop: send the conversation, assemble the streamed reply, run the tools it asks for,
send their results back, until the model answers without asking for a tool.

A model turn is retried as a whole. A failed attempt (connection dropped mid-stream, stream ended
without ``message_stop``, idle timeout, error event, 429/5xx, malformed event, empty response,
truncated tool arguments) leaves nothing in history, so the retry sends the same body, byte for
byte. Each retry is journaled with its reason and planned delay before the agent sleeps; the
attempt limit is the agent's, since the SDK's own retries are switched off (see ``client.py``).
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from typing import Any

import anthropic
import httpx2

from .journal import Journal
from .retry import Failure, RetryPolicy, classify_status_error
from .stream import AssembledMessage, OutputLimitError, StreamAssembler, StreamError
from .tools import ToolCall, ToolRegistry, ToolResult

DEFAULT_MODEL = "claude-sonnet-4-5"


class AgentError(Exception):
    """The conversation cannot go on. ``failure`` is the last failure, ``attempts`` the attempts made."""

    def __init__(self, message: str, failure: Failure | None = None, attempts: int = 0) -> None:
        super().__init__(message)
        self.failure = failure
        self.attempts = attempts


class ModelCallError(AgentError):
    """The model call failed in a way another attempt cannot fix (400, 401, max_tokens...)."""


class RetriesExhaustedError(AgentError):
    """Every allowed attempt failed."""


class StepLimitError(AgentError):
    """The model kept asking for tools past the step limit."""


class Agent:
    """One conversation with one model, through one tool registry.

    ``sleep``, ``rng`` and ``clock`` are injected so that tests can check the delays the agent
    planned without waiting for them.
    """

    def __init__(
        self,
        client: anthropic.Anthropic,
        tools: ToolRegistry,
        *,
        model: str = DEFAULT_MODEL,
        max_tokens: int = 1024,
        system: str | None = None,
        policy: RetryPolicy | None = None,
        journal: Journal | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
        clock: Callable[[], float] = time.time,
        max_steps: int = 8,
    ) -> None:
        self._client = client
        self.tools = tools
        self.model = model
        self.max_tokens = max_tokens
        self.system = system
        self.policy = policy or RetryPolicy()
        self.journal = journal or Journal(clock=clock)
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._clock = clock
        self.max_steps = max_steps
        self.history: list[dict[str, Any]] = []
        self._turns = 0

    def run(self, prompt: str) -> str:
        """Answer ``prompt``, running tools as the model asks; returns the final text.

        A run that fails leaves history as it found it, so the next prompt is not answered in the
        context of a question that never got an answer (tools that ran are safe to ask for again:
        side-effecting ones are idempotent).
        """
        checkpoint = len(self.history)
        try:
            return self._converse(prompt)
        except AgentError:
            del self.history[checkpoint:]
            self.journal.record("rollback", history_length=checkpoint)
            raise

    def _converse(self, prompt: str) -> str:
        self._remember({"role": "user", "content": prompt})
        for _ in range(self.max_steps):
            message = self._model_turn()
            calls = [ToolCall(block["id"], block["name"], block["input"]) for block in message.tool_uses]
            if not calls:
                return message.text
            results = [self._run_tool(call) for call in calls]
            self._remember({"role": "user", "content": [result.to_block() for result in results]})
        raise StepLimitError(f"no final answer after {self.max_steps} model calls")

    def _remember(self, entry: dict[str, Any], **provenance: Any) -> None:
        """History grows here only, and every entry is journaled as a message event."""
        self.history.append(entry)
        self.journal.record("message", **entry, **provenance)

    def _request(self) -> dict[str, Any]:
        """Built from history alone, so a retry sends exactly what the failed attempt sent."""
        request: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": self.history,
        }
        if self.system:
            request["system"] = self.system
        tools = self.tools.definitions()
        if tools:
            request["tools"] = tools
        return request

    def _model_turn(self) -> AssembledMessage:
        """One model reply added to history, the turn retried as a whole on failures a retry can fix."""
        self._turns += 1
        turn = self._turns
        attempt = 1
        while True:
            try:
                return self._attempt(turn, attempt)
            except (httpx2.RemoteProtocolError, httpx2.ReadError) as exc:
                # The connection closed (or was reset) mid-stream; the SDK lets this through unwrapped.
                self._back_off(turn, attempt, Failure("disconnect", True, detail=repr(exc)), exc)
            except httpx2.ReadTimeout as exc:
                # No byte for longer than the read timeout once the stream had started: a stall.
                self._back_off(turn, attempt, Failure("idle_timeout", True, detail=repr(exc)), exc)
            except anthropic.APITimeoutError as exc:
                # Timed out before the response started; the SDK wraps errors raised while sending.
                self._back_off(turn, attempt, Failure("timeout", True, detail=str(exc)), exc)
            except anthropic.APIConnectionError as exc:
                # No response at all: refused, reset or closed before the status line.
                self._back_off(turn, attempt, Failure("connection_error", True, detail=str(exc)), exc)
            except anthropic.APIStatusError as exc:
                # An HTTP error status, or an ``error`` event mid-stream (status 200).
                self._back_off(turn, attempt, classify_status_error(exc, self._clock), exc)
            except json.JSONDecodeError as exc:
                # A ``data:`` line that is not JSON; the SDK raises the bare decode error.
                self._back_off(turn, attempt, Failure("malformed_event", True, detail=str(exc)), exc)
            except StreamError as exc:
                self._back_off(turn, attempt, Failure(exc.reason, exc.retryable, detail=str(exc)), exc)
            attempt += 1

    def _attempt(self, turn: int, attempt: int) -> AssembledMessage:
        """Send the request once and assemble the reply; raises unless the reply is complete."""
        assembler = StreamAssembler()  # a failed attempt's partial output is discarded with its assembler
        chunks: list[int] = []
        with self._client.messages.create(**self._request(), stream=True) as stream:
            for event in stream:
                raw = event.to_dict(mode="json")
                chunks.append(self.journal.record("chunk", turn=turn, attempt=attempt, event=raw))
                assembler.feed(raw)
                if assembler.finished:
                    break  # nothing after message_stop counts; leaving the block releases the response
        message = assembler.finish()
        if message.stop_reason == "max_tokens":
            raise OutputLimitError(f"the reply was cut at max_tokens={self.max_tokens}")
        self._remember(
            {"role": "assistant", "content": message.content},
            turn=turn,
            attempt=attempt,
            stop_reason=message.stop_reason,
            chunks=chunks,
        )
        return message

    def _back_off(self, turn: int, attempt: int, failure: Failure, error: BaseException) -> None:
        """After a failed attempt: give up with a clear error, or journal the retry and sleep."""
        if not failure.retryable:
            self.journal.record(
                "give_up", turn=turn, attempt=attempt, reason=failure.reason, error=failure.detail
            )
            raise ModelCallError(
                f"model call failed ({failure.reason}) and retrying cannot help: {failure.detail}",
                failure,
                attempt,
            ) from error
        if attempt >= self.policy.max_attempts:
            self.journal.record(
                "give_up", turn=turn, attempt=attempt, reason=failure.reason, error=failure.detail
            )
            raise RetriesExhaustedError(
                f"gave up after {attempt} attempts; last failure: {failure.reason}", failure, attempt
            ) from error
        delay = self.policy.delay(failure, attempt, self._rng)
        self.journal.record(
            "retry", turn=turn, attempt=attempt, reason=failure.reason, delay=delay, error=failure.detail
        )
        self._sleep(delay)
        self.journal.record("retry_start", turn=turn, attempt=attempt + 1)

    def _run_tool(self, call: ToolCall) -> ToolResult:
        result = self.tools.execute(call)
        self.journal.record(
            "tool",
            turn=self._turns,
            tool_use_id=call.id,
            name=call.name,
            outcome=result.outcome,
            is_error=result.is_error,
        )
        return result
