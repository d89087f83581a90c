"""Which covering test a ``--fast`` mutant runs first, learnt while the run goes.

With ``--fast`` a mutant stops at its first failing test, so the order of its tests is its
cost. The planner's static order puts the most focused tests first (``Planner.test_order``);
on top of it, a test that already killed a mutant at the same code site (the same set of
covering tests: in practice the same lines) moves to the front, the idea behind PIT's ordering
by earlier kills. Sibling mutants of one site are usually caught by the same assertion.

Replaying the sample agent's full kill matrices (``bench/ordering.py``, bench section 3), the
seconds of tests run before each mutant's first kill drop by 10–25 % against fastest-first for
the agent operators and by about a sixth for mutmut's generic family.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from mutagent.engine.orchestration.plan import Plan
from mutagent.engine.orchestration.pool import Job
from mutagent.model import MutantResult, Status


class KillerFirst:
    """Learns each site's killers from results and reorders jobs as workers take them."""

    def __init__(self) -> None:
        self.killers: dict[frozenset[str], Counter[str]] = {}

    # --- on plain data (the benchmark replays full kill matrices through these) ---------------
    def record(self, covering: Iterable[str], killer: str) -> None:
        """``killer`` failed first among a mutant's ``covering`` tests."""
        self.killers.setdefault(frozenset(covering), Counter())[killer] += 1

    def ordered(self, covering: Iterable[str], tests: list[str]) -> list[str]:
        """``tests`` (in the planner's order) with this site's earlier killers first."""
        counts = self.killers.get(frozenset(covering))
        if not counts:
            return tests
        return sorted(tests, key=lambda nodeid: -counts[nodeid])  # stable: the rest keep their order

    # --- in the engine ------------------------------------------------------------------------
    def learn(self, plan: Plan, result: MutantResult) -> None:
        if result.status is Status.KILLED and result.killed_by:
            self.record(plan.covering, result.killed_by[0])

    def reorder(self, job: Job) -> None:
        plan = job.data
        if isinstance(plan, Plan):
            job.spec = job.spec.but(tests=tuple(self.ordered(plan.covering, list(job.spec.tests))))
