"""The terminal report: score, per-operator table, survivors with their diffs, useless tests.

The kill matrix and guard map are added with ``verbose`` (they are always in the HTML report).

Survivors come first after the numbers because they are what the user acts on: each shows the
exact diff the suite let through, the tests that reached it, and the operator's hint about which
assertion would have caught it.
"""

from __future__ import annotations

from rich import box
from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from mutagent.model import Mutant, RunData, Status
from mutagent.reports.diff import diff_for
from mutagent.reports.guards import guard_map, kill_matrix
from mutagent.reports.hints import hint_for
from mutagent.reports.matrix_view import render_guard_map, render_kill_matrix
from mutagent.reports.stats import (
    Counts,
    format_score,
    status_of,
    summarize,
    undetected_mutants,
)

STATUS_STYLE: dict[Status, str] = {
    Status.KILLED: "green",
    Status.TIMEOUT: "green",
    Status.SURVIVED: "bold red",
    Status.NO_COVERAGE: "red",
    Status.IGNORED: "dim",
    Status.COMPILE_ERROR: "yellow",
    Status.RUNTIME_ERROR: "bold yellow",
    Status.PENDING: "dim",
}


def score_style(score: float | None) -> str:
    if score is None:
        return "dim"
    return "green" if score >= 80 else "yellow" if score >= 60 else "red"


def _summary_columns(total: Counts, width: int) -> list[tuple[str, tuple[Status, ...]]]:
    """(header, statuses summed) per count column: empty columns dropped, rare ones merged when narrow."""
    columns = [
        ("killed", (Status.KILLED,)),
        ("survived", (Status.SURVIVED,)),
        ("timeout", (Status.TIMEOUT,)),
        ("no cov", (Status.NO_COVERAGE,)),
        ("ignored", (Status.IGNORED,)),
        ("errors", (Status.COMPILE_ERROR, Status.RUNTIME_ERROR)),
        ("pending", (Status.PENDING,)),
    ]
    always = {"killed", "survived"}
    columns = [(h, s) for h, s in columns if h in always or sum(total[x] for x in s)]
    if width < 100:  # fold the statuses that are not part of the score into one column
        rare = tuple(x for h, s in columns if h in ("ignored", "errors", "pending") for x in s)
        columns = [(h, s) for h, s in columns if h not in ("ignored", "errors", "pending")]
        if rare:
            columns.append(("other", rare))
    return columns


def render_summary(run_data: RunData, width: int = 120) -> RenderableType:
    """Headline score plus the per-operator table, laid out to fit ``width`` columns."""
    summary = summarize(run_data)
    total = summary.total
    files = len({m.file for m in run_data.mutants})
    headline = Text.assemble(
        ("mutation score ", "bold"),
        (format_score(total.score), f"bold {score_style(total.score)}"),
        f"  ({total.detected} of {total.scored} detected, {total[Status.SURVIVED]} survived, "
        f"{total[Status.NO_COVERAGE]} not covered; {total.total} mutants in {files} files, "
        f"{len(run_data.tests)} tests)",
    )
    columns = _summary_columns(total, width)
    table = Table(
        title="Mutants by operator",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        padding=(0, 1),
        collapse_padding=True,
        pad_edge=False,
    )
    # the numbers' headers keep their width: when the terminal is narrow (80 columns in most CI
    # logs) the operator names are the ones folded onto a second line
    others = ["mutants", *(header for header, _ in columns), "100.0%"]
    room = width - sum(len(header) + 2 for header in others) - 2
    # an operator name is an id (`--operators NAME` takes it): folded over lines, never cut
    table.add_column("operator", overflow="fold", max_width=max(12, room))
    table.add_column("mutants", justify="right", no_wrap=True, min_width=len("mutants"))
    for header, statuses in columns:
        style = STATUS_STYLE[statuses[0]] if len(statuses) == 1 else "yellow"
        table.add_column(header, justify="right", style=style, no_wrap=True, min_width=len(header))
    table.add_column("score", justify="right", no_wrap=True, min_width=6)

    def row(name: str, counts: Counts, style: str = "") -> None:
        numbers = [sum(counts[s] for s in statuses) for _, statuses in columns]
        table.add_row(
            name,
            str(counts.total),
            *(str(n) if n else "·" for n in numbers),
            Text(format_score(counts.score), style=score_style(counts.score)),
            style=style,
        )

    for name, counts in summary.by_operator.items():
        row(name, counts)
    table.add_section()
    row("total", total, "bold")
    if run_data.partial:
        return Group(headline, Text(f"PARTIAL report: {run_data.partial}", style="bold yellow"), table)
    return Group(headline, table)


def render_mutant(run_data: RunData, mutant: Mutant, *, details: bool = False) -> RenderableType:
    """One mutant as a panel: location, diff, tests, hint (and errors when ``details``)."""
    result = run_data.result_of(mutant)
    status = status_of(run_data, mutant)
    parts: list[RenderableType] = []
    if mutant.description:
        parts.append(Text(mutant.description, style="italic"))
    diff = diff_for(run_data, mutant)
    parts.append(Syntax(diff, "diff", theme="ansi_dark", background_color="default", word_wrap=True))
    if details and result.killed_by:
        parts.append(Text.assemble(("killed by: ", "bold green"), ", ".join(result.killed_by)))
    if result.covered_by:
        parts.append(Text.assemble(("covered by: ", "bold"), ", ".join(result.covered_by)))
    elif status.scored:
        parts.append(Text("covered by: no test reaches this code", style="red"))
    hint = hint_for(run_data, mutant)
    if hint.advice:
        parts.append(Text.assemble(("hint: ", "bold cyan"), hint.advice))
    if hint.code:  # only a test mutagent ran on the original and on this mutant
        parts.append(Text(hint.verified, style="green"))
        parts.append(
            Syntax(hint.code, "python", theme="ansi_dark", background_color="default", word_wrap=True)
        )
    reason = mutant.ignored_reason if status is Status.IGNORED else None
    reason = reason or result.status_reason
    if details and reason:
        parts.append(Text.assemble(("reason: ", "bold"), reason))
    if details and result.error:
        parts.append(Text("error:", style="bold yellow"))
        parts.append(Syntax(result.error.rstrip("\n"), "pytb", theme="ansi_dark", background_color="default"))
    # the heading is the first line of the body, not the panel's title: rich cuts a title that is
    # too long with an ellipsis (mid-word, mid-id), while body text wraps between words
    heading = Text.assemble(
        (f"{mutant.file}:{mutant.location.start_line}", "bold"),
        f"  {mutant.operator}  ",
        (status.value, STATUS_STYLE[status]),
        (f"  [{mutant.id}]", "dim"),
    )
    return Panel(Group(heading, *parts), border_style=STATUS_STYLE[status])


def render_survivors(run_data: RunData, limit: int | None = 25) -> RenderableType:
    """Every undetected mutant: the first ``limit`` in full, the rest one line each.

    A young suite can leave hundreds of survivors; a CI log of thousands of lines hides the
    point, so past ``limit`` each survivor gets one line with the id ``mutagent show`` takes.
    """
    survivors = undetected_mutants(run_data)
    if not survivors and not summarize(run_data).total.scored:
        return Text(
            "No mutant was scored: nothing in this run shows what the suite catches.", style="bold yellow"
        )
    if not survivors:
        return Text("No surviving mutants: every reachable bug was caught.", style="bold green")
    survived = sum(1 for m in survivors if status_of(run_data, m) is Status.SURVIVED)
    uncovered = len(survivors) - survived
    heading = Text(
        f"{len(survivors)} undetected mutants: {survived} survived (tests reached the bug and passed), "
        f"{uncovered} not covered (no test reaches the code)",
        style="bold red",
    )
    shown = survivors if limit is None else survivors[:limit]
    parts: list[RenderableType] = [heading, *(render_mutant(run_data, m) for m in shown)]
    rest = survivors[len(shown) :]
    if rest:
        parts.append(Text(f"... and {len(rest)} more (mutagent show ID, or --html, shows each in full):"))
        for mutant in rest:
            status = status_of(run_data, mutant)
            parts.append(
                Text.assemble(
                    f"  {mutant.file}:{mutant.location.start_line}  {mutant.operator}  ",
                    (status.value, STATUS_STYLE[status]),
                    (f"  [{mutant.id}]", "dim"),
                )
            )
    return Group(*parts)


def render_terminal(
    run_data: RunData,
    console: Console,
    *,
    survivors: bool = True,
    matrix: bool | None = None,
    guards: bool | None = None,
    group_by: str = "operator",
    survivor_details: int | None = 25,
    verbose: bool = False,
) -> None:
    """Print the terminal report to ``console`` (``mutagent run`` and ``mutagent report``).

    The default is compact enough for a CI log at 80 columns: score, per-operator table,
    survivors with diff and hint, and the tests that guard nothing. The full kill matrix and
    guard map come with ``verbose`` (``--verbose``) and are always in the HTML report.
    """
    matrix = verbose if matrix is None else matrix
    guards = verbose if guards is None else guards
    console.print(render_summary(run_data, console.width))
    if survivors:
        console.print()
        console.print(render_survivors(run_data, survivor_details))
    if matrix:
        console.print()
        console.print(render_kill_matrix(kill_matrix(run_data, group_by), console.width), crop=False)
    if guards:
        console.print()
        console.print(render_guard_map(guard_map(run_data)))
    else:
        useless = render_useless_tests(run_data)
        if useless is not None:
            console.print()
            console.print(useless)


def render_useless_tests(run_data: RunData) -> RenderableType | None:
    """The tests that kill no mutant (the compact report's part of the guard map), or ``None``."""
    entries = [entry for entry in guard_map(run_data) if entry.guards_nothing]
    if not entries or not summarize(run_data).total.scored:
        return None
    lines: list[RenderableType] = [
        Text(f"{len(entries)} tests guard nothing (they kill no mutant):", style="bold red")
    ]
    for entry in entries:
        reason = "reaches no mutated code" if not entry.covers else f"covers {entry.covers}, kills none"
        lines.append(Text.assemble("  ", (entry.test, "bold"), f"  ({reason})"))
    return Group(*lines)
