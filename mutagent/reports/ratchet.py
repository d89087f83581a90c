"""``--fail-on-regression BASE.json``: the ratchet that keeps a suite from getting worse.

A threshold (``--fail-under``) lets a suite lose ground as long as it stays above the line; the
ratchet compares the run with an earlier report of the same project (typically the main branch's
``--json``) and fails when a mutant the base report detected goes undetected now, or when the
mutation score drops. Mutants that exist only on one side are new or deleted code, not
regressions: a new survivor lowers the score, which the score rule catches.
"""

from __future__ import annotations

from dataclasses import dataclass

from mutagent.model import Mutant, RunData, Status
from mutagent.reports.stats import UNDETECTED, format_score, sorted_mutants, status_of, summarize

SCORE_TOLERANCE = 1e-9  # float noise, not a drop


@dataclass(frozen=True)
class Regression:
    """A mutant the base run detected that the current run does not."""

    mutant: Mutant
    before: Status
    now: Status


@dataclass(frozen=True)
class RatchetResult:
    regressions: list[Regression]
    base_score: float | None
    score: float | None

    @property
    def score_dropped(self) -> bool:
        if self.base_score is None or self.score is None:
            return False
        return self.score < self.base_score - SCORE_TOLERANCE

    @property
    def passed(self) -> bool:
        return not self.regressions and not self.score_dropped

    def messages(self, base_name: str) -> list[tuple[bool, str]]:
        """(rule passed, message) for the two rules, worded like the other gate rules."""
        out: list[tuple[bool, str]] = []
        if self.regressions:
            shown = ", ".join(
                f"{r.mutant.file}:{r.mutant.location.start_line} {r.mutant.operator} "
                f"({r.before.value} -> {r.now.value})"
                for r in self.regressions[:5]
            )
            more = f" and {len(self.regressions) - 5} more" if len(self.regressions) > 5 else ""
            out.append(
                (
                    False,
                    f"fail-on-regression: {len(self.regressions)} mutants detected in {base_name} "
                    f"go undetected now: {shown}{more}",
                )
            )
        else:
            out.append((True, f"fail-on-regression: no mutant detected in {base_name} goes undetected now"))
        if self.base_score is None or self.score is None:
            out.append((True, f"fail-on-regression: no score to compare with {base_name}"))
        elif self.score_dropped:
            out.append(
                (
                    False,
                    f"fail-on-regression: mutation score dropped from {format_score(self.base_score)} "
                    f"in {base_name} to {format_score(self.score)}",
                )
            )
        else:
            out.append(
                (
                    True,
                    f"fail-on-regression: mutation score {format_score(self.score)} >= "
                    f"{format_score(self.base_score)} in {base_name}",
                )
            )
        return out


def compare(base: RunData, current: RunData) -> RatchetResult:
    """Mutants detected in ``base`` and undetected in ``current`` (matched by stable id), and both scores."""
    before = {m.id: status_of(base, m) for m in base.mutants}
    regressions = []
    for mutant in sorted_mutants(current.mutants):
        status = status_of(current, mutant)
        old = before.get(mutant.id)
        if old is not None and old.detected and status in UNDETECTED:
            regressions.append(Regression(mutant, old, status))
    return RatchetResult(regressions, summarize(base).total.score, summarize(current).total.score)
