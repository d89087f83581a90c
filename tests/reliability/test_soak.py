"""Soak: the sample agent against the fake server's seeded random fault mode, turn after turn.

Unit tests pin one fault at a time; a soak finds what only shows up after hundreds of them in a
row: a response the agent never closes (a socket or thread left behind per fault), a retry that
is not journaled, a half-streamed reply that slips into history, a turn that hangs. Every turn is
checked against what the server recorded and sent. The random mode draws independently of the
requests, so the fault met by request number *i* is a function of the seed alone: an ``Oracle``
replays the draws without a server, and tells each turn's outcome in advance.

Time is kept out of the picture: sleeps are recorded, not slept (the planned delays are checked
instead) and slow streams pause ~1 ms per event. Wall-clock timing would otherwise decide
outcomes: on a loaded 2-core machine a plain reply has been measured taking 0.4 s, so an idle
timeout short enough to let 1,000 turns' worth of stalls fire (~33 of them) cannot also promise
that no ordinary reply trips it. Hence two regimes:

* **strict** (the 1,000-turn soak and the same-seed check): drawn stalls pause for STALL_SECONDS,
  far below the agent's IDLE_TIMEOUT, so no timeout can fire and the outcome of every turn must
  equal the oracle's, exactly;
* **watchdog**: stalls outlast a short idle timeout, so the agent's idle watchdog fires for real
  and the response it abandons must be released; a timeout may then also hit an ordinary reply on
  a slow machine, so outcomes are checked for consistency with the records, not against the
  oracle.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anthropic
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
IDLE_TIMEOUT = 5.0  # strict regime: only a machine frozen for 5 s could time a reply out
STALL_SECONDS = 0.02  # strict regime: a drawn stall is a pause the agent must sit through
WATCHDOG_IDLE_TIMEOUT = 0.25
WATCHDOG_STALL_SECONDS = 30.0  # the handler stops as soon as the agent hangs up
RETRY_AFTER = 0.05
SLOW_DELAY = 0.001
TURNS_PER_AGENT = 10  # a fresh agent every 10 turns: history carries across turns, bodies stay small
WARM_TURNS = 10  # resources are counted once the SDK, the pool and the turn thread exist
TURN_DEADLINE = 30.0  # far above any legitimate turn; only a hang reaches it
POLICY = RetryPolicy()  # the agent's own defaults (4 attempts)

ANSWER_KINDS = frozenset({"ok", "slow", "stall"})  # "stall" only while stalls stay below the idle timeout
FATAL_KINDS = {"length": "max_tokens"}  # drawn kind -> why the agent gives up at once
RETRY_REASONS: dict[str, frozenset[str]] = {
    "cut": frozenset({"disconnect"}),
    # An RST can discard the unread head on the client's side, so the SDK may see no response at all.
    "reset": frozenset({"disconnect", "connection_error"}),
    "drop": frozenset({"connection_error"}),
    "empty": frozenset({"empty_response"}),
    "429": frozenset({"status_429"}),
    "5xx": frozenset({"status_500", "status_502", "status_504"}),
    "503": frozenset({"status_503"}),
    "no_stop": frozenset({"missing_message_stop"}),
    "malformed": frozenset({"malformed_event"}),
}
TIMEOUT_REASONS = frozenset({"idle_timeout", "timeout"})  # mid-stream / before the response started


@dataclass(frozen=True)
class Regime:
    """How long stalls last against how long the agent waits, and what that lets a turn assert."""

    idle_timeout: float
    stall_seconds: float
    weights: Mapping[str, float] | None = None  # None: the server's defaults

    @property
    def stalls_time_out(self) -> bool:
        return self.stall_seconds > self.idle_timeout

    def retry_reasons(self, kind: str) -> frozenset[str]:
        """Why the agent may retry an attempt that met ``kind``."""
        if not self.stalls_time_out:
            return RETRY_REASONS.get(kind, frozenset())
        if kind == "stall":
            return frozenset({"idle_timeout"})
        return RETRY_REASONS.get(kind, frozenset()) | TIMEOUT_REASONS  # a slow machine may time any out

    def answers(self, kind: str) -> bool:
        return kind in ANSWER_KINDS and not (kind == "stall" and self.stalls_time_out)


STRICT = Regime(IDLE_TIMEOUT, STALL_SECONDS)
WATCHDOG = Regime(WATCHDOG_IDLE_TIMEOUT, WATCHDOG_STALL_SECONDS, weights={"stall": 1, "ok": 2, "cut": 1})


def test_the_fault_tables_cover_every_kind_random_mode_draws() -> None:
    """If random mode grows a fault kind, the soak must be told how the agent should treat it."""
    assert set(DEFAULT_WEIGHTS) == ANSWER_KINDS | set(FATAL_KINDS) | set(RETRY_REASONS)
    assert STALL_SECONDS < IDLE_TIMEOUT / 10 and not STRICT.stalls_time_out and WATCHDOG.stalls_time_out


@dataclass(frozen=True)
class Outcome:
    """How one turn ended: ``kind`` is ``answer`` or the agent error's class name; ``requests`` the
    attempts it took; ``detail`` the answer text, or the drawn kind of the last attempt."""

    kind: str
    requests: int
    detail: str


class Oracle:
    """The server's draws replayed without a server, and each turn's outcome derived from them."""

    def __init__(self, seed: int, regime: Regime) -> None:
        self.regime = regime
        self._faults = RandomFaults(
            seed,
            regime.weights,
            stall_seconds=regime.stall_seconds,
            retry_after=RETRY_AFTER,
            slow_delay=SLOW_DELAY,
        )
        self._behaviours: list[Behaviour] = []

    def behaviour(self, index: int) -> Behaviour:
        while len(self._behaviours) <= index:
            self._behaviours.append(self._faults.next())
        return self._behaviours[index]

    def kind(self, index: int) -> str:
        self.behaviour(index)
        return self._faults.drawn[index]

    def turn(self, first: int) -> Outcome:
        """The outcome of a turn whose first request is request number ``first``."""
        for attempt in range(1, POLICY.max_attempts + 1):
            index = first + attempt - 1
            kind = self.kind(index)
            if self.regime.answers(kind):
                return Outcome("answer", attempt, str(self.behaviour(index).text))
            if kind in FATAL_KINDS:
                return Outcome(ModelCallError.__name__, attempt, kind)
        return Outcome(RetriesExhaustedError.__name__, POLICY.max_attempts, kind)


# -- resources -------------------------------------------------------------------------------------


def handler_threads(server: FakeModelServer) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == f"fake-model-{server.port}-conn"]


@dataclass(frozen=True)
class Resources:
    """What a leaking agent or server leaves behind, counted by the OS for this process."""

    threads: int
    fds: int
    sockets: int

    @staticmethod
    def now() -> Resources:
        process = psutil.Process()
        return Resources(process.num_threads(), process.num_fds(), len(process.net_connections("inet")))

    def within(self, baseline: Resources) -> bool:
        """Nothing above the baseline (below is fine: an earlier test's leftovers may end meanwhile)."""
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


# -- the run ---------------------------------------------------------------------------------------


@dataclass
class Soak:
    """One soak: one server, a fresh agent every TURNS_PER_AGENT turns, every turn checked."""

    seed: int
    turns: int
    journal_dir: Path
    regime: Regime = STRICT
    outcomes: list[Outcome] = field(default_factory=list)
    drawn: list[str] = field(default_factory=list)
    baseline: Resources | None = None
    deferred: list[TurnCheck] = field(default_factory=list)
    oracle: Oracle = field(init=False)

    def __post_init__(self) -> None:
        assert self.turns > WARM_TURNS, "a soak this short cannot take a warm resource baseline"
        self.oracle = Oracle(self.seed, self.regime)
        self.journal_dir.mkdir(parents=True, exist_ok=True)

    @property
    def strict(self) -> bool:
        return not self.regime.stalls_time_out

    def run(self) -> list[Outcome]:
        regime = self.regime
        with FakeModelServer() as server, httpx2.Client() as http:
            server.random_mode(
                self.seed,
                regime.weights,
                stall_seconds=regime.stall_seconds,
                retry_after=RETRY_AFTER,
                slow_delay=SLOW_DELAY,
            )
            client = make_client(
                server.base_url, api_key="soak", idle_timeout=regime.idle_timeout, http_client=http
            )
            executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="soak-turn")
            try:
                for first in range(0, self.turns, TURNS_PER_AGENT):
                    end = min(first + TURNS_PER_AGENT, self.turns)
                    self._agent_turns(server, client, executor, first, end)
                self._all_requests_arrived(server)
                settle(server)
                self._check_leaks()
                for check in self.deferred:
                    check.by_prompt()
                self.drawn = server.drawn
                assert server.problems() == []
                assert self.drawn == [self.oracle.kind(i) for i in range(server.request_count)]
                assert {r.outcome for r in server.requests} == {"random"}
            finally:
                server.close()  # releases a hung turn, if any, before the executor waits for it
                executor.shutdown(wait=True)
        return self.outcomes

    def _agent_turns(
        self,
        server: FakeModelServer,
        client: anthropic.Anthropic,
        executor: ThreadPoolExecutor,
        first: int,
        end: int,
    ) -> None:
        """Turns ``first`` to ``end - 1`` with one agent, whose history carries across them."""
        path = self.journal_dir / f"journal-{first:04d}.jsonl"
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
            if turn + 1 == WARM_TURNS:
                self._all_requests_arrived(server)
                settle(server)
                self.baseline = Resources.now()
        retries = agent.journal.of_kind("retry")
        assert sleep.calls == [r["delay"] for r in retries], "the agent slept other than it journaled"
        assert Journal.load(path) == agent.journal.events, "the JSONL journal is not the agent's events"

    def _turn(self, server: FakeModelServer, agent: Agent, executor: ThreadPoolExecutor, turn: int) -> None:
        """One turn under a watchdog: it must end, in an answer or in one of the agent's errors."""
        prompt = f"soak turn {turn}: name a phonetic letter"
        before, seq = server.request_count, len(agent.journal.events)
        history = [dict(m) for m in agent.history]
        future = executor.submit(agent.run, prompt)
        error: AgentError | None = None
        try:
            answer = future.result(timeout=TURN_DEADLINE)
        except FutureTimeout:
            pytest.fail(
                f"turn {turn} hung: no answer and no error after {TURN_DEADLINE}s; "
                f"requests {before}..{server.request_count - 1}, drawn {server.drawn[before:]}",
                pytrace=False,
            )
        except AgentError as err:
            answer, error = "", err
        except Exception as err:  # noqa: BLE001 - anything but the agent's own errors is the finding
            pytest.fail(f"turn {turn} escaped the agent's error types: {type(err).__name__}: {err}")
        events = agent.journal.events[seq:]
        attempts = 1 + sum(e["kind"] == "retry" for e in events)
        if error is None:
            outcome = Outcome("answer", attempts, answer)
        elif self.strict:
            outcome = Outcome(type(error).__name__, attempts, self.oracle.kind(before + attempts - 1))
        else:
            give_up = [e["reason"] for e in events if e["kind"] == "give_up"]
            outcome = Outcome(type(error).__name__, attempts, give_up[-1] if give_up else "no give_up")
        self.outcomes.append(outcome)
        check = TurnCheck(turn, server, agent, self.oracle, before, events, history, prompt, outcome, error)
        check.journal()
        if self.strict:
            where = check.where
            assert server.request_count - before == attempts, f"{where}: the server saw another number"
            check.against_records()
        else:
            self.deferred.append(check)

    def _all_requests_arrived(self, server: FakeModelServer) -> None:
        """A client that times out before the response started may be recorded after its retry,
        even after its turn: the server reads it from the listen queue late. Wait for stragglers."""
        expected = sum(o.requests for o in self.outcomes)
        deadline = time.monotonic() + 5.0
        while server.request_count < expected and time.monotonic() < deadline:
            time.sleep(0.01)
        assert server.request_count == expected, f"{expected} attempts journaled, {server.request_count} seen"

    def _check_leaks(self) -> None:
        assert self.baseline is not None
        deadline = time.monotonic() + 5.0
        now = Resources.now()
        while not now.within(self.baseline) and time.monotonic() < deadline:
            time.sleep(0.05)
            now = Resources.now()
        assert now.within(self.baseline), f"resources leaked: {self.baseline} after warm-up, {now} at the end"


def planned_frames(behaviour: Behaviour) -> list[str]:
    """The frames a complete reply puts on the wire (pauses and the ending are not frames)."""
    return [name for name in event_names(behaviour) if name not in ("pause", "complete")]


@dataclass
class TurnCheck:
    """Everything one turn must satisfy. ``journal`` holds in every regime; ``against_records``
    ties each attempt to request ``before + attempt - 1`` (strict regime); ``by_prompt`` finds
    the turn's requests by its prompt once all have arrived (watchdog regime, where a request
    timed out before it was read can be recorded late)."""

    turn: int
    server: FakeModelServer
    agent: Agent
    oracle: Oracle
    before: int  # request count before the turn
    events: list[dict[str, Any]]  # the journal events of the turn
    history: list[dict[str, Any]]  # agent history before the turn
    prompt: str
    outcome: Outcome
    error: AgentError | None

    @property
    def sent(self) -> list[dict[str, Any]]:
        """The messages every request of the turn must carry: the history before it, plus the prompt."""
        return [*self.history, {"role": "user", "content": self.prompt}]

    @property
    def where(self) -> str:
        return f"turn {self.turn} ({self.outcome.requests} attempt(s) from request {self.before})"

    def _of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["kind"] == kind]

    @property
    def failures(self) -> list[tuple[str, str]]:
        return [(e["reason"], e["error"]) for e in self._of("retry") + self._of("give_up")]

    def journal(self) -> None:
        """Retries explicit and numbered, give-ups final, history holding complete replies only."""
        outcome, where, error = self.outcome, self.where, self.error
        retries, give_ups = self._of("retry"), self._of("give_up")
        assert [r["attempt"] for r in retries] == list(range(1, outcome.requests)), f"{where}: {retries}"
        starts = [s["attempt"] for s in self._of("retry_start")]
        assert starts == list(range(2, outcome.requests + 1)), f"{where}: retry_start for attempts {starts}"
        known = set().union(*RETRY_REASONS.values(), TIMEOUT_REASONS, FATAL_KINDS.values())
        assert {e["reason"] for e in retries + give_ups} <= known, f"{where}: {self.failures}"
        if error is None:
            assert not give_ups
            reply = {"role": "assistant", "content": [{"type": "text", "text": outcome.detail}]}
            assert self.agent.history == [*self.sent, reply], (
                f"{where}: history is not prompt plus full reply"
            )
            chunks = self.reply_chunks()
            assert chunks[-1]["type"] == "message_stop", f"{where}: history took a reply without message_stop"
            text = "".join(c["delta"]["text"] for c in chunks if c["type"] == "content_block_delta")
            assert text == outcome.detail, f"{where}: the reply is not the text streamed"
            return
        assert self.agent.history == self.history, f"{where}: a failed turn changed history"
        assert [g["attempt"] for g in give_ups] == [outcome.requests] == [error.attempts]
        if isinstance(error, ModelCallError):
            assert give_ups[0]["reason"] in FATAL_KINDS.values(), f"{where}: gave up: {self.failures}"
        else:
            assert isinstance(error, RetriesExhaustedError) and outcome.requests == POLICY.max_attempts

    def reply_chunks(self) -> list[dict[str, Any]]:
        """The raw events the answer was assembled from, all from the last attempt."""
        messages = [e for e in self._of("message") if e["role"] == "assistant"]
        assert len(messages) == 1 and messages[0]["attempt"] == self.outcome.requests, self.where
        by_seq = {e["seq"]: e for e in self.events}
        assert all(by_seq[s]["attempt"] == self.outcome.requests for s in messages[0]["chunks"])
        return [by_seq[s]["event"] for s in messages[0]["chunks"]]

    def against_records(self) -> None:
        """Attempt ``a`` was request ``before + a - 1``: its fault explains each retry, the seed
        explains the outcome, and an answer is a reply the server sent in full."""
        outcome, oracle, where = self.outcome, self.oracle, self.where
        expected = oracle.turn(self.before)
        assert outcome == expected, f"{where}: ended {outcome}, the seed says {expected}; {self.failures}"
        for request in self.server.requests[self.before : self.before + outcome.requests]:
            assert request.body["messages"] == self.sent, f"{where}: #{request.index} sent other history"
        kinds = [oracle.kind(self.before + i) for i in range(outcome.requests)]
        for event in self._of("retry") + self._of("give_up"):
            kind = kinds[event["attempt"] - 1]
            allowed = {FATAL_KINDS[kind]} if kind in FATAL_KINDS else oracle.regime.retry_reasons(kind)
            assert event["reason"] in allowed, f"{where}: {kind} failed as {event['reason']}: {self.failures}"
            if event["kind"] == "retry" and event["reason"] == "status_429":
                assert event["delay"] == RETRY_AFTER, f"{where}: 429 asked for {RETRY_AFTER}s: {event}"
        if self.error is None:
            self.check_sent_in_full(self.before + outcome.requests - 1)

    def by_prompt(self) -> None:
        """The turn's requests found by its prompt: as many as its attempts, each carrying the same
        history; every drawn stall among them tripped the idle watchdog; an answer is a reply sent
        in full to one of them."""
        outcome, oracle, where = self.outcome, self.oracle, self.where
        mine = [r for r in self.server.requests if r.body["messages"][-1]["content"] == self.prompt]
        assert len(mine) == outcome.requests, f"{where}: {len(mine)} requests carry its prompt"
        assert all(r.body["messages"] == self.sent for r in mine), f"{where}: a request sent other history"
        kinds = [oracle.kind(r.index) for r in mine]
        idle = [e for e in self._of("retry") + self._of("give_up") if e["reason"] == "idle_timeout"]
        assert kinds.count("stall") <= len(idle), f"{where}: met {kinds}, failed {self.failures}"
        if self.error is None:
            candidates = [
                r.index
                for r, kind in zip(mine, kinds, strict=True)
                if oracle.regime.answers(kind) and oracle.behaviour(r.index).text == outcome.detail
            ]
            assert candidates, f"{where}: answered {outcome.detail!r}, which none of {kinds} sent"
            self.check_sent_in_full(candidates[-1])

    def check_sent_in_full(self, index: int) -> None:
        """Request ``index`` got every frame of its reply, and the agent read exactly those."""
        planned = planned_frames(self.oracle.behaviour(index))
        response = finished(self.server, index)
        # Not ``completed``: the agent hangs up right after message_stop, often before the terminating
        # chunk goes out. Every planned event must have been sent, though, and read.
        assert response.status == 200 and response.frames_sent == len(planned), f"{self.where}: cut short"
        read = [name for name in planned if name != "ping"]  # the SDK swallows pings
        chunks = self.reply_chunks()
        assert [c["type"] for c in chunks] == read, f"{self.where}: the reply is not the stream sent"


def soak(seed: int, turns: int, journal_dir: Path, regime: Regime = STRICT) -> Soak:
    """Run a fully checked soak (it raises on the first broken turn) and return it."""
    run = Soak(seed, turns, journal_dir, regime)
    run.run()
    return run


# -- the tests -------------------------------------------------------------------------------------


@pytest.mark.soak
@pytest.mark.timeout(300)
def test_soak_1000_turns_against_seeded_random_faults(tmp_path: Path) -> None:
    """1,000 turns, seed 2, the server's default weights: every turn ends within its deadline in a
    full answer or one of the agent's own errors, exactly as the seed dictates, with every retry
    journaled, nothing partial in history and nothing leaked."""
    started = time.perf_counter()
    run = soak(SEED, 1000, tmp_path)
    seconds = time.perf_counter() - started

    assert set(run.drawn) == set(DEFAULT_WEIGHTS), "the soak did not meet every fault kind"
    assert {o.kind for o in run.outcomes} == {
        "answer",
        ModelCallError.__name__,
        RetriesExhaustedError.__name__,
    }
    print(f"soak: 1000 turns, {len(run.drawn)} requests in {seconds:.1f}s")


def test_same_seed_same_outcomes_and_another_seed_differs(tmp_path: Path) -> None:
    """The always-on short soak: every check, twice with one seed and once with another."""
    first = soak(SEED, 40, tmp_path / "first").outcomes
    again = soak(SEED, 40, tmp_path / "again").outcomes
    other = soak(SEED + 1, 40, tmp_path / "other").outcomes

    assert first == again
    assert other != first
    assert any(o.requests > 1 for o in first), "no turn was retried: the short soak proves nothing"


def test_stalls_past_the_idle_timeout_neither_hang_nor_leak(tmp_path: Path) -> None:
    """The agent's idle watchdog firing over and over: each abandoned stall is released (no thread
    or socket left behind), journaled as a retry, and never half-enters history."""
    run = soak(SEED, 24, tmp_path, WATCHDOG)

    stalls = [kind for kind in run.drawn if kind == "stall"]
    assert len(stalls) >= 5, f"only {len(stalls)} stalls: the watchdog was hardly exercised"
