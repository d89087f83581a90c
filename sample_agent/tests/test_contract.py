"""The agent's model call against mutagent's streaming-contract battery (``mutagent.contract``).

The adapter seam is one model attempt: ``Agent._attempt`` sends the request once, assembles the
streamed reply and returns the message or raises, exactly what a provider adapter does for a
loop. The battery checks it the way any adapter is checked; the checks that do not apply to this
agent are excluded: it never hands a live stream to a caller (``early_stop``); an attempt returns
only once its stream object is dropped, so the battery cannot tell a response closed at
``message_stop`` from one the garbage collector closed (``end_marker_release``: the timing is
``test_the_agent_stops_reading_at_message_stop``'s job); a reply cut at ``max_tokens`` is its own
error rather than a finish (``one_finish``); it keeps the provider's stop reason as is
(``finish_reason``); and its tool setup is fixed by its registry, not chosen per call.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import httpx2

from mutagent.contract import AdapterContract, Finish, Text, ToolUse, Turn
from sample_agent.client import make_client
from sample_agent.journal import Journal
from sample_agent.loop import Agent
from sample_agent.retry import RetryPolicy
from sample_agent.tools import ToolRegistry

from .helpers import RecordingSleep, TickingClock

_HTTP = httpx2.Client()  # one transport for every check: building one costs ~25 ms


class AgentAttempt:
    """One attempt of the agent's model call, as a stream of the battery's neutral events."""

    def __init__(self, base_url: str) -> None:
        client = make_client(base_url, api_key="test", idle_timeout=5.0, http_client=_HTTP)
        clock = TickingClock()
        self.agent = Agent(
            client,
            ToolRegistry([], tenant_id="acme"),
            model="claude-test",
            max_tokens=256,
            policy=RetryPolicy(max_attempts=1),
            journal=Journal(None, clock=clock),
            sleep=RecordingSleep(),
            rng=random.Random(1),
            clock=clock,
        )

    def stream(self, turn: Turn) -> Iterator[Any]:
        self.agent.history = [{"role": "user", "content": turn.prompt}]
        message = self.agent._attempt(1, 1)
        for block in message.content:
            if block["type"] == "text":
                yield Text(block["text"])
            else:
                yield ToolUse(block["id"], block["name"], block["input"])
        yield Finish(message.stop_reason, message.stop_reason)


class TestTheModelCallKeepsTheStreamingContract(AdapterContract):
    dialects = ("anthropic",)
    exclude = {
        "early_stop",
        "end_marker_release",
        "one_finish",
        "finish_reason",
        "tool_names",
        "duplicate_tools",
        "tool_choice",
        "valid_tools",
        "mcp_names",
    }
    release_seconds = 1.0
    cut_examples = 25

    def make_adapter(self, dialect: str, base_url: str) -> AgentAttempt:
        return AgentAttempt(base_url)
