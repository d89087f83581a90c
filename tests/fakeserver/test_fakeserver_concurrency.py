"""Eight agents against one fake server at once.

The server has no per-client scripts: one script queue (and one random-mode generator) serves
every connection, in the order requests are admitted; a request's index, taken under the same
lock, says which behaviour it got. So a test with concurrent clients cannot choose who gets what,
but it can always tell afterwards: each agent marks its requests with an ``x-soak-agent`` header
and its own prompts, and request ``i`` got scripted behaviour ``i`` (or random draw ``i``). These
tests pin that the bookkeeping holds under concurrency (no request lost, doubled or attributed to
the wrong client, the script consumed exactly once) and that concurrent faults leave every agent
with a complete, consistent conversation.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

import httpx2
import psutil
import pytest

from mutagent.fakeserver import FakeModelServer, RecordedRequest, ToolCall
from mutagent.fakeserver import behaviours as b
from mutagent.fakeserver.behaviours import Behaviour
from mutagent.fakeserver.randommode import RandomFaults
from sample_agent.client import make_client
from sample_agent.journal import Journal
from sample_agent.loop import Agent, AgentError, ModelCallError, RetriesExhaustedError
from sample_agent.retry import RetryPolicy
from sample_agent.tests.helpers import RecordingSleep, TickingClock
from sample_agent.tools import Tool, ToolContext, ToolRegistry

AGENTS = 8
HEADER = "x-soak-agent"
DEADLINE = 60.0  # for all agents together; a hang is the only way to reach it
RETRY_AFTER = 0.01


@dataclass
class Client:
    """One agent and everything needed to attribute and judge what it did."""

    name: str
    agent: Agent
    answers: list[str] = field(default_factory=list)
    errors: list[AgentError] = field(default_factory=list)
    crash: BaseException | None = None

    def prompt(self, turn: int) -> str:
        return f"{self.name} turn {turn}"


def agent_name(request: RecordedRequest) -> str:
    return request.headers.get(HEADER, "")


def assistant_content(behaviour: Behaviour) -> list[dict[str, Any]]:
    """What a complete reply to ``behaviour`` becomes in history."""
    content: list[dict[str, Any]] = [{"type": "text", "text": behaviour.text}] if behaviour.text else []
    content += [
        {"type": "tool_use", "id": c.id, "name": c.name, "input": dict(c.input)} for c in behaviour.tool_calls
    ]
    return content


@pytest.fixture
def http_clients() -> Iterator[Callable[[], httpx2.Client]]:
    """A fresh transport per agent, closed after the test (and after the leak count)."""
    with ExitStack() as stack:
        yield lambda: stack.enter_context(httpx2.Client())


def build_clients(
    server: FakeModelServer,
    new_http: Callable[[], httpx2.Client],
    tools: Callable[[], list[Tool]],
    policy: RetryPolicy,
    idle_timeout: float,
    max_steps: int = 8,
) -> list[Client]:
    clients = []
    for number in range(AGENTS):
        name = f"agent-{number}"
        sdk = make_client(
            server.base_url, api_key="k", idle_timeout=idle_timeout, http_client=new_http()
        ).with_options(default_headers={HEADER: name})
        clock = TickingClock()
        agent = Agent(
            sdk,
            ToolRegistry(tools(), tenant_id=name),
            model="claude-concurrent",
            max_tokens=64,
            policy=policy,
            journal=Journal(clock=clock),
            sleep=RecordingSleep(),
            rng=random.Random(number),
            clock=clock,
            max_steps=max_steps,
        )
        clients.append(Client(name, agent))
    return clients


def run_all(clients: list[Client], turns: int) -> None:
    """Every agent runs ``turns`` prompts in its own thread, all released at once."""
    start = threading.Barrier(len(clients))

    def work(client: Client) -> None:
        try:
            start.wait(10)
            for turn in range(turns):
                try:
                    client.answers.append(client.agent.run(client.prompt(turn)))
                except AgentError as err:
                    client.errors.append(err)
        except BaseException as err:  # noqa: BLE001 - reported by the main thread, naming the agent
            client.crash = err

    threads = [threading.Thread(target=work, args=(c,), name=f"soak-{c.name}") for c in clients]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + DEADLINE
    for client, thread in zip(clients, threads, strict=True):
        thread.join(max(0.0, deadline - time.monotonic()))
        assert not thread.is_alive(), f"{client.name} hung: {len(client.answers)} answers after {DEADLINE}s"
    for client in clients:
        assert client.crash is None, f"{client.name} escaped its error types: {client.crash!r}"


def open_sockets_to(server: FakeModelServer) -> list[Any]:
    return [
        c
        for c in psutil.Process().net_connections("inet")
        if server.port in (c.laddr.port if c.laddr else None, c.raddr.port if c.raddr else None)
    ]


def settle(server: FakeModelServer) -> None:
    """Every response over and every handler thread gone (they end right after the response)."""
    assert server.wait_for_responses(timeout=10)
    name = f"fake-model-{server.port}-conn"
    deadline = time.monotonic() + 5
    while any(t.name == name for t in threading.enumerate()) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not [t for t in threading.enumerate() if t.name == name]


def check_no_leaks(server: FakeModelServer, threads_before: int, fds_before: int) -> None:
    """Call after ``server.close()`` and before the agents' transports close: a response an agent
    never released would still hold a socket here."""
    assert open_sockets_to(server) == []
    deadline = time.monotonic() + 5
    process = psutil.Process()
    while (process.num_threads(), process.num_fds()) > (threads_before, fds_before):
        if time.monotonic() > deadline:
            break
        time.sleep(0.02)
    assert process.num_threads() <= threads_before
    assert process.num_fds() <= fds_before


# -- one shared script, consumed by eight agents ----------------------------------------------------

GATES = [ToolCall(f"toolu_gate_{i}", "gate", {}) for i in range(AGENTS)]
LOOKUPS = [ToolCall(f"toolu_look_{i}", "lookup", {"q": f"q{i}"}) for i in range(7)]
FAULTS = [
    b.cut(after=3, text="half"),
    b.cut(after=2, text="half", reset=True),
    b.drop(),
    b.http_error(429, headers={"retry-after-ms": "10"}),
    b.http_error(500),
    b.no_stop(text="almost"),
    b.malformed(after=2),
    b.empty(),
    b.error_event(after=2, error_type="overloaded_error"),
]
TURNS = 5


def shared_script() -> list[Behaviour]:
    """Eight gate calls first, then finals, lookups and faults in a fixed shuffled order, a final last.

    Why it cannot go beyond the script whatever the interleaving: a run ends only on a final, there
    is one final per run, and the last behaviour is a final. Why no run can fail: nine faults in all
    stay below the ten attempts allowed, and one gate plus seven lookups plus the final fit in ten steps.
    """
    finals = [b.ok(text=f"answer {i:02d}") for i in range(AGENTS * TURNS)]
    rest: list[Behaviour] = [*finals[:-1], *(b.ok(text=None, tool_calls=[c]) for c in LOOKUPS), *FAULTS]
    random.Random(7).shuffle(rest)
    return [*(b.ok(text=None, tool_calls=[g]) for g in GATES), *rest, finals[-1]]


def gate_and_lookup(barrier: threading.Barrier, gate_runs: list[str]) -> Callable[[], list[Tool]]:
    """``gate`` returns only once all eight agents are inside it: proof they overlap in time."""

    def gate(arguments: dict[str, Any], context: ToolContext) -> str:
        barrier.wait(20)
        gate_runs.append(context.tenant_id)
        return "open"

    def lookup(arguments: dict[str, Any], context: ToolContext) -> str:
        return f"{context.tenant_id} looked up {arguments['q']}"

    empty = {"type": "object", "properties": {}}
    query = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    return lambda: [Tool("gate", "Wait for everyone.", empty, gate), Tool("lookup", "Search.", query, lookup)]


def test_eight_agents_share_one_script_and_every_request_is_attributable(http_clients) -> None:
    process = psutil.Process()
    threads_before, fds_before = process.num_threads(), process.num_fds()
    script = shared_script()
    gate_runs: list[str] = []
    with FakeModelServer() as server:
        server.script(script)
        clients = build_clients(
            server,
            http_clients,
            gate_and_lookup(threading.Barrier(AGENTS), gate_runs),
            RetryPolicy(max_attempts=len(FAULTS) + 1),
            idle_timeout=5.0,
            max_steps=10,
        )
        run_all(clients, TURNS)
        settle(server)
        requests = server.requests
        assert server.problems(require_consumed=True) == []  # no request beyond, no pairing broken
        assert [r.outcome for r in requests] == ["scripted"] * len(script)
    check_no_leaks(server, threads_before, fds_before)

    assert sorted(gate_runs) == sorted(c.name for c in clients)  # all eight were in flight together
    assert sorted(answer for c in clients for answer in c.answers) == sorted(
        f"answer {i:02d}" for i in range(AGENTS * TURNS)
    )
    names = {c.name for c in clients}
    assert {agent_name(r) for r in requests} == names
    for client in clients:
        mine = [(r, script[r.index]) for r in requests if agent_name(r) == client.name]
        check_attribution(client, mine, requests)


def check_attribution(
    client: Client, mine: list[tuple[RecordedRequest, Behaviour]], requests: list[RecordedRequest]
) -> None:
    """What one agent sent and kept is exactly what was served to its own requests."""
    name = client.name
    assert not client.errors, f"{name}: {client.errors}"
    for request, _ in mine:
        prompts = [m["content"] for m in request.body["messages"] if isinstance(m["content"], str)]
        assert prompts and all(p.startswith(f"{name} turn ") for p in prompts), f"{name}: #{request.index}"
    served_ok = [behaviour for _, behaviour in mine if behaviour.name == "ok"]
    kept = [m["content"] for m in client.agent.history if m["role"] == "assistant"]
    assert kept == [assistant_content(bh) for bh in served_ok], f"{name}: history is not what it was served"
    assert client.answers == [bh.text for bh in served_ok if bh.text], f"{name}: answers out of order"
    my_calls = {c.id for bh in served_ok for c in bh.tool_calls}
    others = [r for r in requests if agent_name(r) != name]
    sent_back: set[str] = set()
    for request, _ in mine:
        sent_back |= set(tool_result_ids(request))
    assert sent_back == my_calls, f"{name}: tool results for calls it was not served"
    assert not any(set(tool_result_ids(r)) & my_calls for r in others), f"{name}'s tool ids leaked"
    journal = client.agent.journal
    attempts = len(journal.of_kind("retry")) + len(
        [m for m in journal.of_kind("message") if m["role"] == "assistant"]
    )
    assert len(mine) == attempts, f"{name}: {len(mine)} requests, {attempts} attempts journaled"


def tool_result_ids(request: RecordedRequest) -> list[str]:
    return [
        block["tool_use_id"]
        for message in request.body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


# -- random mode, eight agents at once -----------------------------------------------------------------

ANSWERS = frozenset({"ok", "slow", "stall"})  # stalls pause well below the idle timeout here
RANDOM_TURNS = 15


def test_eight_agents_under_random_faults_each_turn_matches_what_its_requests_got(http_clients) -> None:
    """The random sequence is split between the agents by arrival: no outcome can be predicted,
    but each one must follow from the faults its own requests met."""
    process = psutil.Process()
    threads_before, fds_before = process.num_threads(), process.num_fds()
    with FakeModelServer() as server:
        server.random_mode(2, stall_seconds=0.02, retry_after=RETRY_AFTER, slow_delay=0.001)
        clients = build_clients(server, http_clients, list, RetryPolicy(), idle_timeout=5.0)
        run_all(clients, RANDOM_TURNS)
        settle(server)
        requests, drawn = server.requests, server.drawn
        assert server.problems() == [] and len(drawn) == len(requests)
    check_no_leaks(server, threads_before, fds_before)

    oracle = RandomFaults(2, stall_seconds=0.02, retry_after=RETRY_AFTER, slow_delay=0.001)
    served = [oracle.next() for _ in requests]
    assert oracle.drawn == drawn  # request i got draw i, whoever sent it
    assert sum(len(c.answers) + len(c.errors) for c in clients) == AGENTS * RANDOM_TURNS
    assert any(c.errors for c in clients) and len(set(drawn)) >= 8, "too few faults to prove anything"
    for client in clients:
        mine = [r for r in requests if agent_name(r) == client.name]
        check_random_turns(client, mine, drawn, served)


def check_random_turns(
    client: Client, mine: list[RecordedRequest], drawn: list[str], served: list[Behaviour]
) -> None:
    """Replay one agent's turns from its own requests, and compare with what it answered and kept."""
    answers, errors = iter(client.answers), iter(client.errors)
    history: list[dict[str, Any]] = []
    for turn in range(RANDOM_TURNS):
        prompt = client.prompt(turn)
        attempts = [r for r in mine if r.body["messages"][-1]["content"] == prompt]
        where = f"{client.name} turn {turn} (requests {[r.index for r in attempts]})"
        assert attempts and all(r.body["messages"][:-1] == history for r in attempts), where
        last = attempts[-1].index
        retries = [e for e in client.agent.journal.of_kind("retry") if e["turn"] == turn + 1]
        assert len(attempts) == 1 + len(retries), f"{where}: {len(retries)} retries journaled"
        if drawn[last] in ANSWERS:
            assert next(answers) == served[last].text, where
            history += [
                {"role": "user", "content": prompt},
                {"role": "assistant", "content": assistant_content(served[last])},
            ]
        elif drawn[last] == "length":
            assert isinstance(next(errors), ModelCallError), where
        else:
            assert len(attempts) == RetryPolicy().max_attempts, where
            assert isinstance(next(errors), RetriesExhaustedError), where
    assert client.agent.history == history, f"{client.name}: history is not the complete replies"
    assert next(answers, None) is None and next(errors, None) is None
