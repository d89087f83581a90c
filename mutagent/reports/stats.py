"""Counting statuses: the mutation score and the per-operator table every report shows.

The score follows the mutation-testing-report-schema's definition so that mutagent's number
matches what a Stryker dashboard would compute from the same JSON:
``(killed + timeout) / (killed + timeout + survived + no coverage)``. Ignored, compile errors,
runtime errors (harness crashes) and pending mutants stay out of the denominator.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from mutagent.model import Mutant, RunData, Status

# Display order of the statuses (also the columns of the per-operator table).
STATUS_ORDER: tuple[Status, ...] = (
    Status.KILLED,
    Status.SURVIVED,
    Status.TIMEOUT,
    Status.NO_COVERAGE,
    Status.IGNORED,
    Status.COMPILE_ERROR,
    Status.RUNTIME_ERROR,
    Status.PENDING,
)

STATUS_LABEL: dict[Status, str] = {
    Status.KILLED: "killed",
    Status.SURVIVED: "survived",
    Status.TIMEOUT: "timeout",
    Status.NO_COVERAGE: "no coverage",
    Status.IGNORED: "ignored",
    Status.COMPILE_ERROR: "compile errors",
    Status.RUNTIME_ERROR: "runtime errors",
    Status.PENDING: "pending",
}

# Statuses a user must act on: nothing in the suite noticed the bug.
UNDETECTED: tuple[Status, ...] = (Status.SURVIVED, Status.NO_COVERAGE)


def status_of(run_data: RunData, mutant: Mutant) -> Status:
    """The mutant's status; a suppressed mutant without a stored result is Ignored, not Pending."""
    result = run_data.results.get(mutant.id)
    if result is not None:
        return result.status
    if mutant.ignored_reason is not None:
        return Status.IGNORED
    return Status.PENDING


@dataclass
class Counts:
    """Status counts of a set of mutants."""

    by_status: Counter[Status] = field(default_factory=Counter)

    def add(self, status: Status) -> None:
        self.by_status[status] += 1

    def __getitem__(self, status: Status) -> int:
        return self.by_status[status]

    @property
    def total(self) -> int:
        return sum(self.by_status.values())

    @property
    def detected(self) -> int:
        return sum(n for status, n in self.by_status.items() if status.detected)

    @property
    def scored(self) -> int:
        return sum(n for status, n in self.by_status.items() if status.scored)

    @property
    def undetected(self) -> int:
        return sum(self.by_status[status] for status in UNDETECTED)

    @property
    def score(self) -> float | None:
        """Mutation score in percent, ``None`` when no mutant entered the denominator."""
        if not self.scored:
            return None
        return 100.0 * self.detected / self.scored


@dataclass
class Summary:
    """Totals and per-operator counts of one run."""

    total: Counts
    by_operator: dict[str, Counts]
    by_file: dict[str, Counts]


def summarize(run_data: RunData) -> Summary:
    total = Counts()
    by_operator: dict[str, Counts] = {}
    by_file: dict[str, Counts] = {}
    for mutant in run_data.mutants:
        status = status_of(run_data, mutant)
        total.add(status)
        by_operator.setdefault(mutant.operator, Counts()).add(status)
        by_file.setdefault(mutant.file, Counts()).add(status)
    return Summary(
        total=total,
        by_operator=dict(sorted(by_operator.items())),
        by_file=dict(sorted(by_file.items())),
    )


def count(number: int, noun: str, plural: str | None = None) -> str:
    """``1 file``, ``2 files``: the noun agrees with its number."""
    return f"{number} {noun if number == 1 else plural or noun + 's'}"


def format_score(score: float | None) -> str:
    return "n/a" if score is None else f"{score:.1f}%"


def sorted_mutants(mutants: list[Mutant]) -> list[Mutant]:
    """Stable reading order: file, then position, then operator."""
    return sorted(
        mutants, key=lambda m: (m.file, m.location.start_line, m.location.start_col, m.operator, m.id)
    )


def undetected_mutants(run_data: RunData) -> list[Mutant]:
    """Survived and NoCoverage mutants in reading order: what the gate and the reports list."""
    return sorted_mutants([m for m in run_data.mutants if status_of(run_data, m) in UNDETECTED])
