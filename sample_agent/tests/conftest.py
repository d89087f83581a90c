"""Build agents pointed at the ``fake_model`` server, with time and randomness under the test's control.

Sleeps are recorded, not slept: tests assert the delays the agent *planned*. Randomness is a seeded
``random.Random``, so jittered delays are exact numbers.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import httpx2
import pytest

from sample_agent.client import make_client
from sample_agent.journal import Journal
from sample_agent.loop import Agent
from sample_agent.retry import RetryPolicy
from sample_agent.tickets import Ticket, TicketDesk
from sample_agent.tools import Tool, ToolCall, ToolRegistry, deny_all

from .helpers import Harness, RecordingSleep, TickingClock

TENANT = "acme"


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
