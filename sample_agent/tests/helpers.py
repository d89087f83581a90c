"""Test doubles shared by the suite: a sleep that records instead of sleeping, a clock that ticks
on demand, a small lookup tool, and the harness bundling an agent with what a test inspects."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sample_agent.journal import Journal
from sample_agent.loop import Agent
from sample_agent.tickets import TicketDesk
from sample_agent.tools import Tool, ToolContext


@dataclass
class RecordingSleep:
    """Stands in for ``time.sleep``: remembers each requested delay and returns at once.
    ``before_each`` lets a test look at the world at the moment the agent starts waiting."""

    calls: list[float] = field(default_factory=list)
    before_each: Callable[[float], None] | None = None

    def __call__(self, seconds: float) -> None:
        if self.before_each is not None:
            self.before_each(seconds)
        self.calls.append(seconds)


class TickingClock:
    """A clock that advances one second per reading: journal timestamps are deterministic."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


def lookup_tool(results: dict[str, str], calls: list[dict[str, Any]] | None = None) -> Tool:
    """A read-only ``lookup(q)`` tool answering from ``results``; ``calls`` records each run."""

    def handler(arguments: dict[str, Any], context: ToolContext) -> str:
        if calls is not None:
            calls.append(arguments)
        return results[arguments["q"]]

    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    return Tool("lookup", "Search the knowledge base.", schema, handler)


@dataclass
class Harness:
    """An agent plus the doubles it was built with."""

    agent: Agent
    desk: TicketDesk
    sleep: RecordingSleep
    journal: Journal

    def retries(self) -> list[dict[str, Any]]:
        """The journal's retry events, in order."""
        return self.journal.of_kind("retry")
