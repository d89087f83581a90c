"""The floor: the least wall time ANY mutation tool could need for the mutants of a finished run.

A speed-up target over another tool (≥ 3× mutmut, ≥ 20× the naive approach) is only reachable if
that tool's wall is at least that many times the floor; when it is not, no engineering on our
side can reach the target on those mutants, and the closing note has to say so with a number.
The floor is computed from mutagent's own run (its verdicts and coverage) but depends on no
mutagent mechanism: only on which tests cover each mutant, what those tests cost and what the
mutant's verdict proves had to run.
"""

from __future__ import annotations

from dataclasses import dataclass

from storeinfo import RunInfo

from mutagent.model import Status

FLOOR_NOTE = (
    "floor = one run of the whole unmutated suite (needed to learn coverage) + (for every "
    "surviving mutant, the durations of all its covering tests, each of which had to pass; for "
    "every killed or timed-out mutant, the shortest of its covering tests, as if the cheapest one "
    "always killed it) ÷ workers, with the baseline's per-test durations from mutagent's store; "
    "uncovered, uncompilable and ignored mutants cost nothing. No interpreter start-up, imports, "
    "forks, copies or scheduling gaps are counted, so a real tool is slower than the floor: "
    "tool wall ÷ floor is the largest speed-up over that tool any tool could reach on these "
    "mutants with these tests."
)


@dataclass(frozen=True)
class Floor:
    """A tool-independent lower bound on the wall time of a mutation run, and what it is made of."""

    suite: float  # one plain run of the whole suite: coverage has to be learnt once
    survived: float  # Σ over Survived mutants of all their covering tests' durations
    detected: float  # Σ over Killed/Timeout mutants of their shortest covering test's duration
    workers: int
    uncounted: int  # mutants whose verdict proves nothing (RuntimeError, Pending): counted as free

    @property
    def seconds(self) -> float:
        return self.suite + (self.survived + self.detected) / self.workers

    def ratio(self, wall: float) -> float:
        """``wall`` ÷ the floor (NaN without a floor): how many times slower than any tool could be."""
        return wall / self.seconds if self.seconds > 0 else float("nan")


def tests_floor(info: RunInfo, workers: int | None = None) -> Floor:
    """The floor of ``info``'s mutants on ``workers`` processes (the run's own by default).

    Why each term is a lower bound for any tool running the same mutants with the same tests:
    a Survived verdict means every covering test was run and passed (skipping one could miss the
    kill); a Killed or Timeout verdict needs at least one covering test to run, and none is
    cheaper than the shortest; the mutant work is spread perfectly over the workers; and the
    covering tests are only known after one run of the unmutated suite (which also proves it
    green: without that a failing test proves nothing about a mutant). Durations are the
    baseline's per-test ones (``RunInfo.plain_durations``); the baseline takes them with per-test
    coverage on, which slows CPU-bound tests, so on a CPU-heavy suite a tool that never traces
    could beat the floor slightly: the one way it is not optimistic.
    """
    durations = info.plain_durations
    survived = detected = 0.0
    uncounted = 0
    for mutant in info.data.mutants:
        result = info.data.result_of(mutant)
        covering = [durations.get(nodeid, 0.0) for nodeid in result.covered_by]
        if result.status is Status.SURVIVED:
            survived += sum(covering)
        elif result.status in (Status.KILLED, Status.TIMEOUT):
            detected += min(covering, default=0.0)
        elif result.status in (Status.RUNTIME_ERROR, Status.PENDING):
            uncounted += 1
    return Floor(info.suite_plain, survived, detected, workers or info.workers, uncounted)
