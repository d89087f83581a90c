"""Build agents pointed at the ``fake_model`` server, with time and randomness under the test's control.

Sleeps are recorded, not slept: tests assert the delays the agent *planned*. Randomness is a seeded
``random.Random``, so jittered delays are exact numbers.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx2
import pytest

from sample_agent.client import make_client
from sample_agent.journal import Journal
from sample_agent.loop import Agent
from sample_agent.retry import RetryPolicy
from sample_agent.tickets import Ticket, TicketDesk
from sample_agent.tools import Tool, ToolCall, ToolContext, ToolRegistry, deny_all

TENANT = "acme"


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
    agent: Agent
    desk: TicketDesk
    sleep: RecordingSleep
    journal: Journal

    def retries(self) -> list[dict[str, Any]]:
        return self.journal.of_kind("retry")


@pytest.fixture
def desk() -> TicketDesk:
    return TicketDesk(
        {
            "T-1": Ticket("T-1", TENANT, "Disk almost full on db-1"),
            "T-9": Ticket("T-9", "globex", "Globex payroll export fails"),
        }
    )


@pytest.fixture(scope="session")
def shared_http_client() -> Iterator[httpx2.Client]:
    """One transport for the whole session: building one costs ~25 ms (TLS setup, unused against a
    plain-HTTP fake server). Timeouts still come from ``make_client``: the SDK sets them per request."""
    with httpx2.Client() as client:
        yield client


@pytest.fixture
def make_agent(
    fake_model: Any, desk: TicketDesk, shared_http_client: httpx2.Client
) -> Callable[..., Harness]:
    """``make_agent(extra_tools=..., policy=..., idle_timeout=..., approve=..., seed=...)``."""

    def build(
        *,
        extra_tools: Iterable[Tool] = (),
        policy: RetryPolicy | None = None,
        idle_timeout: float = 5.0,
        approve: Callable[[ToolCall], bool] = deny_all,
        seed: int = 1234,
        journal_path: Any = None,
    ) -> Harness:
        clock = TickingClock()
        sleep = RecordingSleep()
        journal = Journal(journal_path, clock=clock)
        registry = ToolRegistry([*desk.tools(), *extra_tools], tenant_id=TENANT, approve=approve)
        client = make_client(
            fake_model.base_url, api_key="test", idle_timeout=idle_timeout, http_client=shared_http_client
        )
        agent = Agent(
            client,
            registry,
            model="claude-test",
            max_tokens=256,
            policy=policy or RetryPolicy(max_attempts=3),
            journal=journal,
            sleep=sleep,
            rng=random.Random(seed),
            clock=clock,
        )
        return Harness(agent, desk, sleep, journal)

    return build
