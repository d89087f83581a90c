"""The CI gate: fail the build when the suite lets too many injected bugs through.

Three rules, any of them: ``fail_under`` (minimum mutation score, percent), ``max_survived``
(maximum number of undetected mutants) and the ratchet ``fail-on-regression`` (nothing a base
report detected goes undetected, the score does not drop; see ``ratchet``). "Survived" here
counts Survived *and* NoCoverage: a bug no test even reaches is at least as unguarded as one a
test reaches and misses, and counting only Survived would let a team pass the gate by deleting
the tests that reach the code. A run with no scored mutant fails every configured rule: a gate
that passes on nothing is green over nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.console import Console
from rich.markup import escape

from mutagent.errors import UsageError
from mutagent.model import Mutant, RunData, Status
from mutagent.reports.stats import count, format_score, status_of, summarize, undetected_mutants


@dataclass
class GateResult:
    """Whether the run passes, one message per rule, and the survivors to show when it does not."""

    passed: bool
    messages: list[str] = field(default_factory=list)
    survivors: list[Mutant] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # the messages of the rules that failed
    checked: bool = True  # False when no rule was configured
    uncovered: set[str] = field(default_factory=set)  # ids of the survivors no test reaches


def check_gate_options(fail_under: float | None, max_survived: int | None) -> None:
    """Reject impossible thresholds (from the command line or ``[tool.mutagent]``) with one line."""
    if fail_under is not None and not 0 <= fail_under <= 100:
        raise UsageError(f"fail-under must be a percentage between 0 and 100, not {fail_under:g}")
    if max_survived is not None and max_survived < 0:
        raise UsageError(f"max-survived must be 0 or more, not {max_survived}")


def evaluate_gate(
    run_data: RunData,
    fail_under: float | None = None,
    max_survived: int | None = None,
    base: RunData | None = None,
    base_name: str = "the base report",
) -> GateResult:
    """Apply the configured rules to ``run_data``; messages name the rule and the numbers.

    ``base`` (``--fail-on-regression``): an earlier run of the same project to ratchet against.
    """
    check_gate_options(fail_under, max_survived)
    survivors = undetected_mutants(run_data)
    if fail_under is None and max_survived is None and base is None:
        return GateResult(True, [], survivors, checked=False)
    total = summarize(run_data).total
    messages: list[str] = []
    failures: list[str] = []

    def rule(ok: bool, message: str) -> None:
        messages.append(message)
        if not ok:
            failures.append(message)

    if total.scored == 0:
        # Nothing was scored (no mutant, or only ignored/erroring/pending ones): passing here would
        # be green over nothing, so every configured rule fails, --fail-under 0 included.
        rule(
            False,
            f"no scored mutant ({count(total.total, 'mutant')}, none killed, survived, timed out or "
            "uncovered): a gate cannot pass on nothing",
        )
    elif fail_under is not None:
        if total.score < fail_under:
            rule(
                False,
                f"fail-under: mutation score {format_score(total.score)} is below {fail_under:g}% "
                f"({total.detected} of {total.scored} mutants detected)",
            )
        else:
            rule(True, f"fail-under: mutation score {format_score(total.score)} >= {fail_under:g}%")
    if max_survived is not None and total.scored:
        detail = f"{total[Status.SURVIVED]} survived + {total[Status.NO_COVERAGE]} without coverage"
        if len(survivors) > max_survived:
            rule(
                False,
                f"max-survived: {count(len(survivors), 'mutant')} survived ({detail}), "
                f"more than the {max_survived} allowed",
            )
        else:
            rule(
                True,
                f"max-survived: {count(len(survivors), 'mutant')} survived, at most {max_survived} allowed",
            )
    if base is not None:
        from mutagent.reports.ratchet import compare

        for ok, message in compare(base, run_data).messages(base_name):
            rule(ok, message)
    pending = sum(1 for m in run_data.mutants if status_of(run_data, m) is Status.PENDING)
    if pending:
        messages.append(f"note: {count(pending, 'mutant')} not run (pending), not counted")
    uncovered = {m.id for m in survivors if status_of(run_data, m) is Status.NO_COVERAGE}
    return GateResult(not failures, messages, survivors, failures, uncovered=uncovered)


def render_gate(result: GateResult, console: Console) -> None:
    """Print which rule failed (or that the gate passed) and, on failure, every survivor."""
    if not result.checked:
        return
    if result.passed:
        console.print("[bold green]gate passed[/]")
        for message in result.messages:
            console.print(f"  [green]✓[/] {escape(message)}", soft_wrap=True)
        return
    console.print("[bold red]gate FAILED[/]")
    for message in result.messages:
        mark = "[red]✗[/]" if message in result.failures else "[green]✓[/]"
        console.print(f"  {mark} {escape(message)}", soft_wrap=True)
    if result.survivors:
        # NoCoverage counted apart from Survived, as everywhere else
        uncovered = sum(1 for m in result.survivors if m.id in result.uncovered)
        console.print(
            f"undetected mutants ({len(result.survivors)}: {len(result.survivors) - uncovered} survived, "
            f"{uncovered} not covered):"
        )
        for mutant in result.survivors:
            console.print(
                f"  {mutant.file}:{mutant.location.start_line}  {mutant.operator}  [{mutant.id}]  "
                f"{mutant.description}",
                soft_wrap=True,
                markup=False,
            )
