"""Which test guards which path: the kill matrix and the guard map, as plain data.

This is the proof the reports exist for: a mutant killed by exactly one test is a code path that
test alone guards; a test that kills nothing guards nothing. Claiming "only this test" needs every
other covering test to have run against the mutant, so when the engine stopped at the first
failure the claim is reported as unverified instead of being made.

"Guards nothing" is a claim about what the run did, so it is made only for a test that ran on
every mutant it covers and killed none. A test that covers no mutant at all (``--paths`` or
``--since`` kept every mutated line away from it) had nothing to guard: it is counted apart. A
test that was not run on some mutant it covers (``--fast`` stops a mutant at its first kill, a
timeout ends the rest of its tests) might have killed that one: no claim is made about it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from mutagent.model import Mutant, MutantResult, RunData, Status
from mutagent.reports.stats import sorted_mutants, status_of


class Cell(str, Enum):
    """One test x mutant cell of the kill matrix, one character wide."""

    SOLE = "#"  # this test kills the mutant and no other test does
    KILLED = "x"  # this test kills the mutant, other tests do too
    COVERED = "."  # the test ran against the mutant and passed: the bug got past it
    NOT_RUN = "?"  # the test covers the mutant but was not run (the run stopped at the first kill)
    NONE = " "  # the test does not reach the mutated code

    @property
    def meaning(self) -> str:
        return _MEANING[self]


_MEANING = {
    Cell.SOLE: "killed by this test only",
    Cell.KILLED: "killed by this test (and others)",
    Cell.COVERED: "covered, test passed (mutant got past it)",
    Cell.NOT_RUN: "covered, not run (run stopped at first kill)",
    Cell.NONE: "not covered",
}

# Mutants that can be guarded at all: the scored statuses.
MATRIX_STATUSES = (Status.KILLED, Status.TIMEOUT, Status.SURVIVED, Status.NO_COVERAGE)


def all_tests(run_data: RunData) -> list[str]:
    """Baseline tests in their order, then any test id only the results mention."""
    seen = dict.fromkeys(t.nodeid for t in run_data.tests)
    extra: set[str] = set()
    for result in run_data.results.values():
        extra.update(result.killed_by, result.covered_by, result.tests_run)
    return list(seen) + sorted(extra - seen.keys())


def _reached(result: MutantResult) -> set[str]:
    return set(result.covered_by) | set(result.tests_run) | set(result.killed_by)


def _ran(result: MutantResult) -> set[str]:
    """The tests run against the mutant (a result without ``tests_run`` ran all it covers)."""
    if not result.tests_run:
        return _reached(result)
    return set(result.tests_run) | set(result.killed_by)


def _exclusive_verified(result: MutantResult) -> bool:
    """True when every covering test was actually run, so "killed by one test" means "only one"."""
    if not result.tests_run:
        return True
    return _reached(result) - set(result.killed_by) <= set(result.tests_run)


def sole_killer(run_data: RunData, mutant: Mutant) -> str | None:
    """The one test that kills ``mutant`` when it is provably the only one, else ``None``."""
    result = run_data.results.get(mutant.id)
    if result is None or not status_of(run_data, mutant).detected:
        return None
    killers = set(result.killed_by)
    if len(killers) == 1 and _exclusive_verified(result):
        return next(iter(killers))
    return None


def cell(result: MutantResult | None, test: str) -> Cell:
    if result is None:
        return Cell.NONE
    if test in result.killed_by:
        if len(set(result.killed_by)) == 1 and _exclusive_verified(result):
            return Cell.SOLE
        return Cell.KILLED
    if result.tests_run and test in result.covered_by and test not in result.tests_run:
        return Cell.NOT_RUN
    if test in _reached(result):
        return Cell.COVERED
    return Cell.NONE


@dataclass
class GuardEntry:
    """What one test protects."""

    test: str
    kills: list[Mutant] = field(default_factory=list)
    only: list[Mutant] = field(default_factory=list)  # killed by this test and provably no other
    unverified_only: list[Mutant] = field(default_factory=list)  # sole known killer, others not run
    covers: int = 0  # scored mutants whose mutated code this test runs
    ran_on: int = 0  # of those, the mutants this test was actually run against

    @property
    def not_run(self) -> int:
        """Mutants this test covers but was not run against (the run stopped them early)."""
        return self.covers - self.ran_on

    @property
    def reaches_nothing(self) -> bool:
        """No mutant to guard: no mutated line runs under this test (not a weakness of the test)."""
        return not self.covers

    @property
    def guards_nothing(self) -> bool:
        """Proven idle: run on every mutant it covers (at least one), it killed none."""
        return not self.kills and self.covers > 0 and not self.not_run

    @property
    def unproven(self) -> bool:
        """Killed none of the mutants it ran on, but was not run on every mutant it covers."""
        return not self.kills and self.not_run > 0

    def idle_reason(self) -> str:
        """Why a test that kills nothing is listed, in the words every report uses."""
        if self.reaches_nothing:
            return "reaches no mutated code"
        if self.unproven:
            return f"kills none of the {self.ran_on} it ran on, not run on {self.not_run} it covers"
        return f"covers {self.covers}, kills none"


def guard_map(run_data: RunData) -> list[GuardEntry]:
    """One entry per test, in suite order, with the mutants it kills and those only it kills."""
    entries = {test: GuardEntry(test) for test in all_tests(run_data)}
    for mutant in sorted_mutants(run_data.mutants):
        result = run_data.results.get(mutant.id)
        if result is None or status_of(run_data, mutant) not in MATRIX_STATUSES:
            continue
        ran = _ran(result)
        for test in _reached(result):
            entries[test].covers += 1
            entries[test].ran_on += test in ran
        if not result.status.detected:
            continue
        killers = list(dict.fromkeys(result.killed_by))
        for test in killers:
            entries[test].kills.append(mutant)
        if len(killers) == 1:
            target = (
                entries[killers[0]].only
                if _exclusive_verified(result)
                else entries[killers[0]].unverified_only
            )
            target.append(mutant)
    return list(entries.values())


@dataclass(frozen=True)
class Group:
    """A run of adjacent matrix columns sharing an operator (or a file)."""

    label: str
    start: int
    stop: int

    @property
    def size(self) -> int:
        return self.stop - self.start


@dataclass
class KillMatrix:
    """Rows are tests, columns are mutants; ``rows[i][j]`` is the cell of test i and mutant j."""

    tests: list[str]
    columns: list[Mutant]
    statuses: list[Status]
    groups: list[Group]
    rows: list[list[Cell]]
    excluded: int  # mutants left out because no test can guard them (ignored, errors, pending)
    group_by: str


def kill_matrix(run_data: RunData, group_by: str = "operator") -> KillMatrix:
    """The tests x mutants matrix, columns grouped by ``operator`` or ``file``."""
    if group_by not in ("operator", "file"):
        raise ValueError(f"group_by must be 'operator' or 'file', not {group_by!r}")
    scored = [m for m in run_data.mutants if status_of(run_data, m) in MATRIX_STATUSES]

    def key(m: Mutant) -> tuple:
        first = m.operator if group_by == "operator" else m.file
        return (first, m.file, m.location.start_line, m.location.start_col, m.operator, m.id)

    columns = sorted(scored, key=key)
    groups: list[Group] = []
    for index, mutant in enumerate(columns):
        label = mutant.operator if group_by == "operator" else mutant.file
        if groups and groups[-1].label == label:
            groups[-1] = Group(label, groups[-1].start, index + 1)
        else:
            groups.append(Group(label, index, index + 1))
    tests = all_tests(run_data)
    results = [run_data.results.get(m.id) for m in columns]
    rows = [[cell(result, test) for result in results] for test in tests]
    return KillMatrix(
        tests=tests,
        columns=columns,
        statuses=[status_of(run_data, m) for m in columns],
        groups=groups,
        rows=rows,
        excluded=len(run_data.mutants) - len(columns),
        group_by=group_by,
    )
