"""The control run overlapped with the first mutants: a mutant starts as soon as each of its
tests has passed alone, not when every test of the suite has.

The control run (each test once more, alone in a forked child) is what makes a kill
trustworthy: a test that passes only once (it leaves a file or a port behind) or fails alone
would otherwise kill mutants it never judged. That holds per test, so nothing requires the whole
control run to finish before the first mutant: a mutant whose covering tests have all passed
their control is judged exactly as it would be after the whole run. Its plan is final too:
coverage comes from the measured batches, which are complete; only the order of its tests and its
time limit use the control's durations, and those are settled (``Planner.settle_timing``) when
the mutant is released, with every one of its tests' controls in.

A test that fails its control stops the release of mutants (the run then ends with the usual
flaky-test error: ``--exclude-flaky`` is not overlapped, since leaving a test out changes plans);
mutants already released used only tests that passed alone, so their verdicts stand.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

P = TypeVar("P")


def provisional_controls(
    passing: Iterable[str], durations: Callable[[str], float]
) -> dict[str, dict[str, Any]]:
    """Control records standing in for tests not yet run alone: passed (their batch says so),
    with their batch durations, so that the provisional baseline plans as the final one will;
    each is replaced when its test's control comes back, before any mutant using it runs."""
    return {n: {"outcome": "passed", "duration": durations(n), "cpu": 0.0} for n in passing}


@dataclass
class ControlGate(Generic[P]):
    """Holds each item (a mutant's plan) until every test it names has passed its control."""

    waiting: dict[str, set[str]] = field(default_factory=dict)  # item key -> tests not yet passed alone
    items: dict[str, P] = field(default_factory=dict)
    by_test: dict[str, list[str]] = field(default_factory=dict)
    failed: list[str] = field(default_factory=list)  # tests whose control did not pass
    outstanding: set[str] = field(default_factory=set)  # tests whose control has not come back

    @classmethod
    def holding(
        cls, items: Iterable[tuple[str, P, Iterable[str]]], controls: Iterable[str]
    ) -> ControlGate[P]:
        gate: ControlGate[P] = cls(outstanding=set(controls))
        for key, item, tests in items:
            gate.items[key] = item
            gate.waiting[key] = set(tests) & gate.outstanding
            for test in gate.waiting[key]:
                gate.by_test.setdefault(test, []).append(key)
        return gate

    def open(self) -> list[P]:
        """Items whose tests need no control at all (released at once)."""
        return self._take([key for key, tests in self.waiting.items() if not tests])

    def passed(self, test: str) -> list[P]:
        """``test`` passed alone: the items now complete (none once any control failed)."""
        self.outstanding.discard(test)
        ready = []
        for key in self.by_test.pop(test, []):
            tests = self.waiting.get(key)
            if tests is None:
                continue
            tests.discard(test)
            if not tests:
                ready.append(key)
        return [] if self.failed else self._take(ready)

    def did_not_pass(self, test: str) -> None:
        self.outstanding.discard(test)
        self.failed.append(test)

    @property
    def done(self) -> bool:
        """Every control has come back."""
        return not self.outstanding

    @property
    def held(self) -> int:
        return len(self.waiting)

    def _take(self, keys: list[str]) -> list[P]:
        taken = []
        for key in keys:
            self.waiting.pop(key, None)
            taken.append(self.items.pop(key))
        return taken


def control_order(
    tests: list[str], covering: Iterable[Iterable[str]], duration: Callable[[str], float]
) -> list[str]:
    """The order to run the controls in so that mutants are released early: first the tests of
    the mutant that is cheapest to release (the least control time), then the tests the most
    mutants wait on, the shortest first. The mutant phase orders its queue by ``release_ranks``;
    this order settles ties between equal ranks."""
    sets = [set(c) & set(tests) for c in covering]
    waiting_on: dict[str, int] = {}
    for needed in sets:
        for test in needed:
            waiting_on[test] = waiting_on.get(test, 0) + 1
    first = min((s for s in sets if s), key=lambda s: (sum(duration(t) for t in s), sorted(s)), default=set())
    rest = sorted((t for t in tests if t not in first), key=lambda t: (-waiting_on.get(t, 0), duration(t), t))
    return sorted(first, key=lambda t: (duration(t), t)) + rest


Rank = tuple[float, float, float]


def release_ranks(
    tests: list[str],
    held: Iterable[tuple[str, float, Iterable[str]]],
    duration: Callable[[str], float],
) -> tuple[dict[str, Rank], dict[str, Rank]]:
    """Ranks (``Job.rank``: the higher, the earlier) for the control jobs of ``tests`` and the
    mutants ``held`` for them, each given as (key, time limit, covering tests).

    A run ends when its last job does, so the mutants that can take longest (the largest time
    limit: the slowest tests, or the most of them, and a Timeout always runs to its limit) start
    first and the short ones fill in around them; a control ranks with the longest mutant it
    holds, just ahead of it. Ranked by release alone, a mutant that waits on many controls (the
    one covered by most of the suite) was released late and ran on one worker long after the
    other had finished. One exception keeps the first verdict early: the mutant cheapest to
    release (the least control time) and its controls go first of all.
    """
    outstanding = set(tests)
    mutants = [(key, limit, set(covering) & outstanding) for key, limit, covering in held]
    control_rank: dict[str, Rank] = {test: (0, -1.0, 1) for test in tests}  # holding nothing: last
    mutant_rank: dict[str, Rank] = {}
    for key, limit, waits_on in mutants:
        mutant_rank[key] = (0, limit, 0)
        for test in waits_on:
            control_rank[test] = max(control_rank[test], (0, limit, 1))
    gated = [(sum(duration(t) for t in waits_on), limit, key, waits_on) for key, limit, waits_on in mutants]
    if gated:
        _, _, first, waits_on = min(gated, key=lambda g: (g[0], g[1], sorted(g[3]), g[2]))
        mutant_rank[first] = (1, 0.0, 0)
        for test in waits_on:
            control_rank[test] = (2, -duration(test), 1)  # the shortest first
    return control_rank, mutant_rank
