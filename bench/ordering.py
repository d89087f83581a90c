"""How much ``--fast`` saves by the order in which it runs a mutant's covering tests.

A full kill matrix records, for every mutant, every covering test and every test that kills it.
Replaying it answers, without re-running anything: if the mutants ran with ``--fast`` in this
order of tests, how many seconds of tests would run before each mutant's first kill? Two orders
are compared, both through mutagent's own code: fastest first (the order PIT and mutagent used
before), and mutagent's (``plan.focused_first`` refined during the run by
``order.KillerFirst``). The site learning depends on which mutants finish first, so the replay
shuffles the mutants with several seeds and reports the median. Survivors run every covering
test in any order and are left out.

Used by ``matrix.py`` on its full-matrix runs; standalone on any target's store:

    python bench/ordering.py PATH      # PATH holds a full-matrix run's .mutagent store
"""

from __future__ import annotations

import random
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

from mutagent.engine.orchestration.plan import focused_first
from mutagent.engine.selection.order import KillerFirst
from mutagent.model import Status


@dataclass
class Replay:
    fastest_first: float  # seconds of tests before the first kill, summed over killed mutants
    mutagent: float  # the same in mutagent's order (median over seeds)
    killed: int  # killed mutants replayed

    @property
    def ratio(self) -> float:
        return self.mutagent / self.fastest_first if self.fastest_first else float("nan")


def _until_kill(order: list[str], killers: set[str], duration: dict[str, float]) -> tuple[float, str]:
    spent = 0.0
    for nodeid in order:
        spent += duration.get(nodeid, 0.0)
        if nodeid in killers:
            return spent, nodeid
    return spent, ""


def replay(
    killed: list[tuple[list[str], set[str]]],
    duration: dict[str, float],
    breadth: dict[str, int],
    seeds: int = 5,
) -> Replay:
    """``killed``: (covering tests, killing tests) per killed mutant of a full kill matrix."""
    by_duration = 0.0
    for covering, killers in killed:
        by_duration += _until_kill(
            sorted(covering, key=lambda t: (duration.get(t, 0.0), t)), killers, duration
        )[0]
    totals = []
    for seed in range(seeds):
        shuffled = list(killed)
        random.Random(seed).shuffle(shuffled)
        learner, total = KillerFirst(), 0.0
        for covering, killers in shuffled:
            static = focused_first(covering, breadth, lambda t: duration.get(t, 0.0))
            spent, first = _until_kill(learner.ordered(covering, static), killers, duration)
            total += spent
            if first:
                learner.record(covering, first)
        totals.append(total)
    return Replay(by_duration, statistics.median(totals) if totals else 0.0, len(killed))


def replay_run(info: object) -> Replay:
    """Replay a ``storeinfo.RunInfo`` of a full-matrix run."""
    data = info.data  # type: ignore[attr-defined]
    killed = [
        (list(result.covered_by), set(result.killed_by))
        for result in data.results.values()
        if result.status is Status.KILLED and result.covered_by and result.killed_by
    ]
    return replay(killed, info.plain_durations, info.breadth)  # type: ignore[attr-defined]


def main() -> int:
    from storeinfo import read_run

    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    result = replay_run(read_run(Path(sys.argv[1]), 0.0, 1))
    print(
        f"{result.killed} killed mutants: {result.fastest_first:.2f} s of tests before the first kill "
        f"fastest-first, {result.mutagent:.2f} s in mutagent's order ({result.ratio:.2f}x)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
