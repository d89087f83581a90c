"""The short summary ``mutagent run`` prints at the end (the full reports live in ``mutagent.reports``).

Kept deliberately small and self-contained so the reports can replace it wholesale.
"""

from __future__ import annotations

from collections import Counter

from rich.console import Console
from rich.markup import escape

from mutagent.console import console as default_console
from mutagent.model import RunData, Status

ORDER = (
    Status.KILLED,
    Status.TIMEOUT,
    Status.SURVIVED,
    Status.NO_COVERAGE,
    Status.COMPILE_ERROR,
    Status.RUNTIME_ERROR,
    Status.IGNORED,
    Status.PENDING,
)


def score(counts: Counter[Status]) -> float | None:
    """(killed + timeout) / (killed + timeout + survived + no coverage), in percent."""
    detected = counts[Status.KILLED] + counts[Status.TIMEOUT]
    scored = detected + counts[Status.SURVIVED] + counts[Status.NO_COVERAGE]
    return None if not scored else 100.0 * detected / scored


def summarize(run_data: RunData, console: Console = default_console, limit: int = 50) -> None:
    """Score, per-status counts, then every survivor (file:line, operator, description)."""
    counts: Counter[Status] = Counter(run_data.result_of(m).status for m in run_data.mutants)
    value = score(counts)
    shown = ", ".join(f"{status.value} {counts[status]}" for status in ORDER if counts[status])
    headline = "n/a" if value is None else f"{value:.1f}%"
    style = "dim" if value is None else "green" if value >= 80 else "yellow" if value >= 60 else "red"
    console.print(
        f"[bold]mutation score[/] [bold {style}]{headline}[/]  ({len(run_data.mutants)} mutants: "
        f"{shown or 'none'})",
        soft_wrap=True,
    )
    survivors = [
        m for m in run_data.mutants if run_data.result_of(m).status in (Status.SURVIVED, Status.NO_COVERAGE)
    ]
    if survivors:
        console.print(f"[bold red]undetected mutants ({len(survivors)})[/]:")
        for mutant in survivors[:limit]:
            status = run_data.result_of(mutant).status
            console.print(
                f"  {escape(mutant.file)}:{mutant.location.start_line}  [cyan]{escape(mutant.operator)}[/]  "
                f"{escape(mutant.description)}"
                + ("  [dim](no test runs it)[/]" if status is Status.NO_COVERAGE else ""),
                soft_wrap=True,
            )
        if len(survivors) > limit:
            console.print(f"  ... and {len(survivors) - limit} more (see `mutagent report`)")
    errors = [m for m in run_data.mutants if run_data.result_of(m).status is Status.RUNTIME_ERROR]
    if errors:
        console.print(
            f"[yellow]{len(errors)} mutants ended in a harness/runtime error (not counted as kills); "
            "see `mutagent show <id>`[/]"
        )
