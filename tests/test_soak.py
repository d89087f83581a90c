"""Soak: the sample agent against the fake server's seeded random fault mode, turn after turn.

Unit tests pin one fault at a time; a soak finds what only shows up after hundreds of them in a
row: a response the agent never closes (a socket or thread left behind per fault), a retry that
is not journaled, a half-streamed reply that slips into history, a turn that hangs. Every turn is
checked against what the server recorded and against an oracle computed from the seed alone,
because the random mode draws independently of the requests: the drawn sequence, and therefore
every turn's outcome, is a function of the seed. That is also why two runs with one seed must
agree exactly.

Time is kept out of the picture: sleeps are recorded, not slept (the planned delays are checked
instead), slow streams are ~1 ms per event, and stalls last until the agent's idle timeout fires
(IDLE_TIMEOUT, the one real wait in the run).
"""

from __future__ import annotations

import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import psutil
import pytest

from mutagent.fakeserver import DEFAULT_WEIGHTS, FakeModelServer, ResponseRecord, event_names
from mutagent.fakeserver.behaviours import Behaviour
from mutagent.fakeserver.randommode import RandomFaults
from sample_agent.client import make_client
from sample_agent.journal import Journal
from sample_agent.loop import Agent, AgentError, ModelCallError, RetriesExhaustedError
from sample_agent.retry import RetryPolicy
from sample_agent.tests.helpers import RecordingSleep, TickingClock
from sample_agent.tools import ToolRegistry

SEED = 2
# The idle timeout is the only real wait: every drawn stall costs one. It must stay well above
# the scheduling hiccups of a loaded 2-core machine, or an ordinary reply would time out and the
# run would no longer follow the seed; 0.3 s leaves a wide margin for a reply sent in one burst.
IDLE_TIMEOUT = 0.3
STALL_SECONDS = 30.0  # far past IDLE_TIMEOUT: a drawn stall always trips the agent's idle watchdog
RETRY_AFTER = 0.05
SLOW_DELAY = 0.001
TURNS_PER_AGENT = 10  # a fresh agent every 10 turns: history grows, but bodies stay small
TURN_DEADLINE = 20.0  # worst legitimate turn: 4 attempts x IDLE_TIMEOUT plus overhead
POLICY = RetryPolicy()  # the agent's own defaults (4 attempts)

ANSWER_KINDS = frozenset({"ok", "slow"})
FATAL_KINDS = {"length": "max_tokens"}  # drawn kind -> the reason the agent gives up at once
RETRY_REASONS: dict[str, frozenset[str]] = {
    "cut": frozenset({"disconnect"}),
    # An RST can discard the unread head on the client's side, so the SDK may see no response at all.
    "reset": frozenset({"disconnect", "connection_error"}),
    "drop": frozenset({"connection_error"}),
    "empty": frozenset({"empty_response"}),
    "429": frozenset({"status_429"}),
    "5xx": frozenset({"status_500", "status_502", "status_504"}),
    "503": frozenset({"status_503"}),
    "stall": frozenset({"idle_timeout"}),
    "no_stop": frozenset({"missing_message_stop"}),
    "malformed": frozenset({"malformed_event"}),
}


def test_the_fault_tables_cover_every_kind_random_mode_draws() -> None:
    """If random mode grows a fault kind, the soak must be told how the agent should treat it."""
    assert set(DEFAULT_WEIGHTS) == ANSWER_KINDS | set(FATAL_KINDS) | set(RETRY_REASONS)


@dataclass(frozen=True)
class Outcome:
    """How one turn ended: ``kind`` is ``answer`` or the agent error's class name; ``requests`` the
    attempts it took; ``detail`` the answer text, or the drawn kind of the last attempt."""

    kind: str
    requests: int
    detail: str


def faults(seed: int) -> RandomFaults:
    """The generator the server uses, built the same way: the oracle for everything it draws."""
    return RandomFaults(seed, stall_seconds=STALL_SECONDS, retry_after=RETRY_AFTER, slow_delay=SLOW_DELAY)


class Oracle:
    """The drawn sequence replayed without a server, and each turn's outcome derived from it."""

    def __init__(self, seed: int) -> None:
        self._faults = faults(seed)
        self.behaviours: list[Behaviour] = []

    def behaviour(self, index: int) -> Behaviour:
        while len(self.behaviours) <= index:
            self.behaviours.append(self._faults.next())
        return self.behaviours[index]

    def kind(self, index: int) -> str:
        self.behaviour(index)
        return self._faults.drawn[index]

    def kinds(self) -> list[str]:
        """The kinds drawn so far (the oracle draws exactly as far as the server was checked)."""
        return list(self._faults.drawn)

    def turn(self, first: int) -> Outcome:
        """The outcome of a turn whose first request is request number ``first``."""
        for attempt in range(1, POLICY.max_attempts + 1):
            index = first + attempt - 1
            kind = self.kind(index)
            if kind in ANSWER_KINDS:
                return Outcome("answer", attempt, str(self.behaviour(index).text))
            if kind in FATAL_KINDS:
                return Outcome(ModelCallError.__name__, attempt, kind)
        return Outcome(RetriesExhaustedError.__name__, POLICY.max_attempts, kind)


def handler_threads(server: FakeModelServer) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == f"fake-model-{server.port}-conn"]


@dataclass(frozen=True)
class Resources:
    threads: int
    fds: int
    sockets: int

    @staticmethod
    def now() -> Resources:
        process = psutil.Process()
        return Resources(process.num_threads(), process.num_fds(), len(process.net_connections("inet")))

    def within(self, baseline: Resources) -> bool:
        """Nothing above the baseline (below is fine: an earlier test's leftovers may die meanwhile)."""
        pairs = ((self.threads, baseline.threads), (self.fds, baseline.fds), (self.sockets, baseline.sockets))
        return all(now <= before for now, before in pairs)


def finished(server: FakeModelServer, index: int, timeout: float = 5.0) -> ResponseRecord:
    """Response ``index`` once its handler is done: the client can read a frame before the
    handler has counted it, so a record is only evidence after ``finished``."""
    response = server.responses[index]
    deadline = time.monotonic() + timeout
    while not response.finished and time.monotonic() < deadline:
        time.sleep(0.001)
    assert response.finished, f"response #{index} still in flight after {timeout}s"
    return response


def settle(server: FakeModelServer, timeout: float = 10.0) -> None:
    """Wait until every response is over and its handler thread gone, so counts are comparable."""
    assert server.wait_for_responses(timeout=timeout), "the fake server still has responses in flight"
    deadline = time.monotonic() + timeout
    while handler_threads(server) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not handler_threads(server), f"handler threads still alive: {handler_threads(server)}"


@dataclass
class Soak:
    """One soak run: one server, a fresh agent every TURNS_PER_AGENT turns, every turn checked."""

    seed: int
    turns: int
    journal_dir: Path
    outcomes: list[Outcome] = field(default_factory=list)
    oracle: Oracle = field(init=False)
    baseline: Resources | None = None

    def __post_init__(self) -> None:
        self.oracle = Oracle(self.seed)
        self.journal_dir.mkdir(parents=True, exist_ok=True)

    def run(self) -> list[Outcome]:
        with FakeModelServer() as server, httpx2.Client() as http:
            server.random_mode(
                self.seed, stall_seconds=STALL_SECONDS, retry_after=RETRY_AFTER, slow_delay=SLOW_DELAY
            )
            client = make_client(server.base_url, api_key="soak", idle_timeout=IDLE_TIMEOUT, http_client=http)
            executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="soak-turn")
            try:
                for window in range(0, self.turns, TURNS_PER_AGENT):
                    self._window(server, client, executor, window, min(window + TURNS_PER_AGENT, self.turns))
                settle(server)
                self._check_leaks()
                assert server.problems() == []
                assert server.drawn == [self.oracle.kind(i) for i in range(server.request_count)]
                assert [r.outcome for r in server.requests] == ["random"] * server.request_count
            finally:
                server.close()  # releases a hung turn, if any, before the executor waits for it
                executor.shutdown(wait=True)
        return self.outcomes

    def _window(
        self, server: FakeModelServer, client: Any, executor: ThreadPoolExecutor, first: int, end: int
    ) -> None:
        """Turns ``first`` to ``end - 1`` with one agent, whose history carries across them."""
        path = self.journal_dir / f"journal-{self.seed}-{first:04d}.jsonl"
        clock = TickingClock()
        sleep = RecordingSleep()
        agent = Agent(
            client,
            ToolRegistry([], tenant_id="soak"),
            model="claude-soak",
            max_tokens=64,
            policy=POLICY,
            journal=Journal(path, clock=clock),
            sleep=sleep,
            rng=random.Random(self.seed * 100_000 + first),
            clock=clock,
        )
        for turn in range(first, end):
            self._turn(server, agent, executor, turn)
            if turn == 9 and self.baseline is None:  # warm: the SDK, the pool and the executor exist
                settle(server)
                self.baseline = Resources.now()
        retries = agent.journal.of_kind("retry")
        assert sleep.calls == [r["delay"] for r in retries], "the agent slept other than it journaled"
        assert Journal.load(path) == agent.journal.events, "the JSONL journal differs from the events"

    def _turn(self, server: FakeModelServer, agent: Agent, executor: ThreadPoolExecutor, turn: int) -> None:
        prompt = f"soak turn {turn}: name a phonetic letter"
        before, seq = server.request_count, len(agent.journal.events)
        history = [dict(m) for m in agent.history]
        future = executor.submit(agent.run, prompt)
        try:
            answer: str | None = future.result(timeout=TURN_DEADLINE)
            error: BaseException | None = None
        except FutureTimeout:
            pytest.fail(
                f"turn {turn} hung: no answer and no error after {TURN_DEADLINE}s; "
                f"requests {before}..{server.request_count - 1}, drawn {server.drawn[before:]}",
                pytrace=False,
            )
        except AgentError as err:
            answer, error = None, err
        except Exception as err:  # noqa: BLE001 - anything but the agent's own errors is the finding
            pytest.fail(f"turn {turn} escaped the agent's error types: {type(err).__name__}: {err}")
        outcome = Outcome(
            "answer" if error is None else type(error).__name__,
            server.request_count - before,
            answer if answer is not None else server.drawn[-1],
        )
        self.outcomes.append(outcome)
        check_turn(turn, server, agent, self.oracle, before, seq, history, prompt, outcome, error)

    def _check_leaks(self) -> None:
        assert self.baseline is not None, "the soak is too short to take a warm baseline"
        deadline = time.monotonic() + 5.0
        now = Resources.now()
        while not now.within(self.baseline) and time.monotonic() < deadline:
            time.sleep(0.05)
            now = Resources.now()
        assert now.within(self.baseline), f"resources leaked: {self.baseline} before, {now} after"


def check_turn(
    turn: int,
    server: FakeModelServer,
    agent: Agent,
    oracle: Oracle,
    before: int,
    seq: int,
    history: list[dict[str, Any]],
    prompt: str,
    outcome: Outcome,
    error: BaseException | None,
) -> None:
    """Everything one turn must satisfy, phrased against the server's records and the oracle."""
    where = f"turn {turn} (requests {before}..{before + outcome.requests - 1})"
    expected = oracle.turn(before)
    events = agent.journal.events[seq:]
    failures = [(e["reason"], e["error"]) for e in events if e["kind"] in ("retry", "give_up")]
    assert outcome == expected, f"{where}: ended {outcome}, the seed says {expected}; failures: {failures}"
    sent = history + [{"role": "user", "content": prompt}]
    for request in server.requests[before:]:
        assert request.body["messages"] == sent, f"{where}: request #{request.index} carried other history"
    retries = [e for e in events if e["kind"] == "retry"]
    starts = [e for e in events if e["kind"] == "retry_start"]
    give_ups = [e for e in events if e["kind"] == "give_up"]
    assert outcome.requests == 1 + len(retries), f"{where}: {len(retries)} retry events"
    assert [r["attempt"] for r in retries] == list(range(1, outcome.requests))
    assert [s["attempt"] for s in starts] == list(range(2, outcome.requests + 1))
    for retry in retries:
        kind = oracle.kind(before + retry["attempt"] - 1)
        assert retry["reason"] in RETRY_REASONS[kind], f"{where}: {kind} retried as {retry['reason']}"
        if kind == "429":
            assert retry["delay"] == RETRY_AFTER, f"{where}: 429 asked {RETRY_AFTER}s, got {retry['delay']}"
    if error is None:
        check_answer(where, server, agent, oracle, before + outcome.requests - 1, events, sent, outcome)
        assert not give_ups
    else:
        assert agent.history == history, f"{where}: a failed turn changed history"
        assert [(g["attempt"]) for g in give_ups] == [outcome.requests]
        assert isinstance(error, AgentError) and error.attempts == outcome.requests
        if isinstance(error, ModelCallError):
            assert give_ups[0]["reason"] == FATAL_KINDS[outcome.detail]
        else:
            assert give_ups[0]["reason"] in RETRY_REASONS[outcome.detail]


def check_answer(
    where: str,
    server: FakeModelServer,
    agent: Agent,
    oracle: Oracle,
    last: int,
    events: list[dict[str, Any]],
    sent: list[dict[str, Any]],
    outcome: Outcome,
) -> None:
    """The reply that entered history is the one the server sent in full, message_stop included."""
    reply = {"role": "assistant", "content": [{"type": "text", "text": outcome.detail}]}
    assert agent.history == [*sent, reply], f"{where}: history is not the prompt plus the full reply"
    planned = [n for n in event_names(oracle.behaviour(last)) if n not in ("pause", "complete")]
    response = finished(server, last)
    # Not ``completed``: the agent hangs up right after message_stop, often before the terminating
    # chunk goes out. Every planned event must have been sent, though, and been read.
    assert response.status == 200 and response.frames_sent == len(planned), f"{where}: reply not sent in full"
    messages = [e for e in events if e["kind"] == "message" and e["role"] == "assistant"]
    assert len(messages) == 1 and messages[0]["attempt"] == outcome.requests
    by_seq = {e["seq"]: e for e in events}
    chunks = [by_seq[s]["event"] for s in messages[0]["chunks"]]
    assert all(by_seq[s]["attempt"] == outcome.requests for s in messages[0]["chunks"])
    read = [name for name in planned if name != "ping"]  # the SDK swallows pings
    assert [c["type"] for c in chunks] == read, f"{where}: the reply is not the stream the server sent"
    assert chunks[-1]["type"] == "message_stop", f"{where}: history took a reply without message_stop"
    text = "".join(c["delta"]["text"] for c in chunks if c["type"] == "content_block_delta")
    assert text == outcome.detail


def soak(seed: int, turns: int, journal_dir: Path) -> tuple[list[Outcome], set[str], float]:
    """Run a checked soak; its per-turn outcomes, the fault kinds it met, and its wall time."""
    started = time.perf_counter()
    run = Soak(seed, turns, journal_dir)
    outcomes = run.run()
    return outcomes, set(run.oracle.kinds()), time.perf_counter() - started


@pytest.mark.soak
@pytest.mark.timeout(600)
def test_soak_1000_turns_against_seeded_random_faults(tmp_path: Path) -> None:
    """1,000 turns, seed 2, the server's default weights: every turn ends in a full answer or one
    of the agent's own errors within its deadline, exactly as the seed dictates, with every retry
    journaled, nothing partial in history and nothing leaked."""
    outcomes, drawn, seconds = soak(SEED, 1000, tmp_path)

    kinds = {o.kind for o in outcomes}
    assert kinds == {"answer", ModelCallError.__name__, RetriesExhaustedError.__name__}
    assert drawn == set(DEFAULT_WEIGHTS), "the soak did not meet every fault kind"
    print(f"soak: 1000 turns, {sum(o.requests for o in outcomes)} requests in {seconds:.1f}s")


def test_same_seed_same_outcomes_and_another_seed_differs(tmp_path: Path) -> None:
    """The always-on short soak: the whole check, twice with one seed, once with another."""
    first, _, _ = soak(SEED, 40, tmp_path / "a")
    second, _, _ = soak(SEED, 40, tmp_path / "b")
    other, _, _ = soak(SEED + 1, 40, tmp_path / "c")

    assert first == second
    assert other != first
    assert any(o.requests > 1 for o in first), "no turn was retried: the short soak proves nothing"
