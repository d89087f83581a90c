"""Which explored runs to make, in which order, within the budget.

Every fault gets one run before any fault gets a second: the runs are taken round by round, one
per fault and round. Within a fault the tests that script no fault of their own come first (a
test already scripting a 429 runs the 429 handling anyway, so it cannot show that code), the
first request before a later one, then the test that runs the most of the target's lines (it
drives the whole loop: a test of one adapter or parser cannot show what the loop does), then the
fastest; the second run of a fault strikes a later
request when the test has one (the request after a tool result, in a loop with tools), the
following ones other tests. A stall costs as long as the client's read timeout, so it comes last
and is only tried while the budget has room for its longer time limit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from mutagent.explore.catalogue import Script, faults_for, fits, placed
from mutagent.fakeserver.inject import HTTP, STALL, Fault

ROUNDS = 4  # runs per fault at most
STALL_ALLOWANCE = 8.0  # extra seconds a stall run may take: the client's read timeout has to fire


@dataclass(frozen=True)
class Candidate:
    """One run to make: ``test`` with ``fault`` inserted, and the extra time it may need."""

    test: str
    fault: Fault
    extra: float = 0.0

    @property
    def key(self) -> str:
        return f"{self.test}|{self.fault.describe()}"


def _extra(fault: Fault) -> float:
    if fault.kind == STALL:
        return STALL_ALLOWANCE
    if fault.kind == HTTP and fault.header:
        return fault.wait  # a loop that honours the header sleeps that long
    return 0.0


def _per_fault(
    scripts: dict[str, Script], duration: Callable[[str], float], breadth: dict[str, int], fault: Fault
) -> list[Candidate]:
    """The runs of one fault in priority order (see the module docstring)."""
    options = []
    for script in scripts.values():
        for step in script.steps:
            if fits(fault, step) and step.dialect == script.dialect:
                test = script.test
                key = (
                    not script.plain,
                    step.index > 0,
                    -breadth.get(test, 0),
                    duration(test),
                    test,
                    step.index,
                )
                options.append((key, Candidate(script.test, placed(fault, step), _extra(fault))))
    options.sort(key=lambda item: item[0])
    ordered = [candidate for _, candidate in options]
    if not ordered:
        return []
    first = ordered[0]
    later = next((c for c in ordered[1:] if c.fault.at > 0), None)
    rest = [c for c in ordered[1:] if c is not later and c.test != first.test]
    chosen = [first, *([later] if later else []), *rest]
    seen: set[str] = set()
    unique = []
    for candidate in chosen:
        if candidate.key not in seen:
            seen.add(candidate.key)
            unique.append(candidate)
    return unique[:ROUNDS]


def candidates(
    scripts: dict[str, Script], duration: Callable[[str], float], breadth: dict[str, int] | None = None
) -> Iterator[Candidate]:
    """Every run worth making, round by round (one per fault per round), stalls last in a round;
    ``breadth``: how many lines of the target each test runs."""
    by_dialect: dict[str, dict[str, Script]] = {}
    for test, script in scripts.items():
        if script.steps:
            by_dialect.setdefault(script.dialect, {})[test] = script
    lists: list[list[Candidate]] = []
    for dialect, group in by_dialect.items():
        for fault in faults_for(dialect):
            found = _per_fault(group, duration, breadth or {}, fault)
            if found:
                lists.append(found)
    lists.sort(key=lambda runs: runs[0].fault.kind == STALL)
    for round_ in range(ROUNDS):
        for runs in lists:
            if round_ < len(runs):
                yield runs[round_]


class Budget:
    """Worker seconds exploration may spend; a run is started only if its expected cost fits."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.spent = 0.0
        self.reserved = 0.0  # the expected cost of the runs in flight
        self.left_out = 0

    def fits(self, expected: float) -> bool:
        return self.spent + self.reserved + expected <= self.seconds

    def take(self, expected: float) -> bool:
        if not self.fits(expected):
            self.left_out += 1
            return False
        self.reserved += expected
        return True

    def settle(self, expected: float, actual: float) -> None:
        self.reserved -= expected
        self.spent += actual
