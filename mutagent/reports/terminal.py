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
    count,
    format_score,
    status_of,
    summarize,
    undetected_mutants,
)
from mutagent.reports.testids import cases_per_function, collapse, group_by_function

#: ``mutagent show`` as the user can type it where the report was printed; ``{id}`` stands for the id
SHOW_COMMAND = "mutagent show {id}"

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


def scope_line(run_data: RunData) -> Text | None:
    """What part of the run the score is of (a ``--shard``, the mutants ``--since`` a revision)."""
    parts = []
    if run_data.shard is not None:
        index, total = run_data.shard
        parts.append(f"shard {index}/{total} (merge the shards' --json reports for the run's score)")
    if run_data.since is not None:
        parts.append(f"the mutants on lines changed since {run_data.since}")
    if not parts:
        return None
    return Text.assemble(("score of ", "bold yellow"), (" and ".join(parts), "bold yellow"))


def render_summary(run_data: RunData, width: int = 120) -> RenderableType:
    """Headline score plus the per-operator table, laid out to fit ``width`` columns."""
    summary = summarize(run_data)
    total = summary.total
    files = len({m.file for m in run_data.mutants})
    headline = Text.assemble(
        ("mutation score ", "bold"),
        (format_score(total.score), f"bold {score_style(total.score)}"),
        f"  ({total.detected} of {total.scored} detected, {total[Status.SURVIVED]} survived, "
        f"{total[Status.NO_COVERAGE]} not covered; {count(total.total, 'mutant')} in {count(files, 'file')}, "
        f"{count(len(run_data.tests), 'test')})",
    )
    heading: list[RenderableType] = [headline]
    scope = scope_line(run_data)
    if scope is not None:
        heading.append(scope)
    if run_data.partial:
        heading.append(Text(f"PARTIAL report: {run_data.partial}", style="bold yellow"))
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
    return Group(*heading, table)


def compact_diff(diff: str) -> str:
    """The diff without its file and hunk headers: the heading names the file and the line."""
    headers = ("--- ", "+++ ", "@@ ")
    return "".join(line for line in diff.splitlines(keepends=True) if not line.startswith(headers))


def render_mutant(
    run_data: RunData,
    mutant: Mutant,
    *,
    details: bool = False,
    compact: bool = False,
    hints_shown: dict[str, str] | None = None,
) -> RenderableType:
    """One mutant as a panel: location, diff, tests, hint (and errors when ``details``).

    ``compact`` (the default terminal report): no box (a hint's test script copies out of a CI
    log as it is, without border characters), a parametrised test's cases named once with their
    count, and the diff with one line of context and no headers. ``hints_shown`` (hint advice ->
    the id of the mutant it was printed for): a hint printed in full for an earlier survivor is
    referred to by that survivor's id instead of being printed again.
    """
    result = run_data.result_of(mutant)
    status = status_of(run_data, mutant)
    parts: list[RenderableType] = []
    if mutant.description:
        parts.append(Text(mutant.description, style="italic"))
    diff = compact_diff(diff_for(run_data, mutant, context=1)) if compact else diff_for(run_data, mutant)
    parts.append(
        Syntax(diff.rstrip("\n"), "diff", theme="ansi_dark", background_color="default", word_wrap=True)
    )

    def tests(nodeids: list[str]) -> str:
        if not compact:
            return ", ".join(nodeids)
        return ", ".join(collapse(nodeids, cases_per_function(t.nodeid for t in run_data.tests)))

    if details and result.killed_by:
        parts.append(Text.assemble(("killed by: ", "bold green"), tests(result.killed_by)))
    if result.covered_by:
        parts.append(Text.assemble(("covered by: ", "bold"), tests(result.covered_by)))
    elif status.scored:
        parts.append(Text("covered by: no test reaches this code", style="red"))
    hint = hint_for(run_data, mutant)
    if hint.advice and hints_shown is not None and hint.advice in hints_shown:
        parts.append(Text.assemble(("hint: ", "bold cyan"), f"as for [{hints_shown[hint.advice]}] above"))
    elif hint.advice:
        if hints_shown is not None:
            hints_shown[hint.advice] = mutant.id
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
    if compact:  # a blank line apart: without a box, the heading's rule starts each survivor
        return Group(Text(""), Text.assemble(("── ", STATUS_STYLE[status]), heading), *parts)
    return Panel(Group(heading, *parts), border_style=STATUS_STYLE[status])


def render_survivors(
    run_data: RunData,
    limit: int | None = 25,
    *,
    compact: bool = True,
    show_command: str = SHOW_COMMAND,
) -> RenderableType:
    """Every undetected mutant: the first ``limit`` in full, the rest one line each.

    A young suite can leave hundreds of survivors; a CI log of thousands of lines hides the
    point, so past ``limit`` each survivor gets one line with the id ``mutagent show`` takes.
    ``show_command`` is that command as it works where the report is printed (``{id}`` is the id).
    ``compact`` panels (see :func:`render_mutant`) print a hint shared by several survivors once.
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
        f"{count(len(survivors), 'undetected mutant')}: {survived} survived (tests reached the bug and "
        f"passed), {uncovered} not covered (no test reaches the code)",
        style="bold red",
    )
    shown = survivors if limit is None else survivors[:limit]
    hints_shown: dict[str, str] | None = {} if compact else None
    parts: list[RenderableType] = [
        heading,
        *(render_mutant(run_data, m, compact=compact, hints_shown=hints_shown) for m in shown),
    ]
    rest = survivors[len(shown) :]
    command = show_command.replace("{id}", "ID")
    if rest:
        parts.append(Text(f"... and {len(rest)} more ({command}, or --html, shows each in full):"))
        for mutant in rest:
            status = status_of(run_data, mutant)
            parts.append(
                Text.assemble(
                    f"  {mutant.file}:{mutant.location.start_line}  {mutant.operator}  ",
                    (status.value, STATUS_STYLE[status]),
                    (f"  [{mutant.id}]", "dim"),
                )
            )
    else:
        parts.append(Text(""))
        parts.append(
            Text.assemble(("one in full", "bold"), " (killing tests, reason, traceback): ", (command, "bold"))
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
    show_command: str = SHOW_COMMAND,
) -> None:
    """Print the terminal report to ``console`` (``mutagent run`` and ``mutagent report``).

    The default is compact enough for a CI log at 80 columns: score, per-operator table,
    survivors with diff and hint (a parametrised test's cases folded into one entry), and the
    tests that guard nothing. The full kill matrix, guard map and test ids come with ``verbose``
    (``--verbose``) and are always in the HTML report.
    """
    matrix = verbose if matrix is None else matrix
    guards = verbose if guards is None else guards
    console.print(render_summary(run_data, console.width))
    if survivors:
        console.print()
        console.print(
            render_survivors(run_data, survivor_details, compact=not verbose, show_command=show_command)
        )
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
    """The tests that kill no mutant (the compact report's part of the guard map), or ``None``.

    Three kinds, never mixed: tests that ran on every mutant they cover and killed none (they
    guard nothing, each listed, a parametrised test's cases folded), tests not run on every
    mutant they cover (no claim), and tests no mutated line runs under (nothing to guard).
    """
    if not summarize(run_data).total.scored:
        return None
    entries = guard_map(run_data)
    idle = [entry for entry in entries if entry.guards_nothing]
    unproven = [entry for entry in entries if entry.unproven]
    unreached = [entry for entry in entries if entry.reaches_nothing]
    lines: list[RenderableType] = []
    if idle:
        verb = "guards" if len(idle) == 1 else "guard"
        lines.append(
            Text(
                f"{count(len(idle), 'test')} {verb} nothing: each ran on every mutant it covers "
                "and killed none",
                style="bold red",
            )
        )
        by_test = {entry.test: entry for entry in idle}
        suite = cases_per_function(t.nodeid for t in run_data.tests)
        for function, cases in group_by_function(by_test).items():
            if len(cases) == 1:
                reason = by_test[cases[0]].idle_reason()
                lines.append(Text.assemble("  ", (cases[0], "bold"), f"  ({reason})"))
                continue
            covers = sorted({by_test[case].covers for case in cases})
            spread = str(covers[0]) if len(covers) == 1 else f"{covers[0]}-{covers[-1]}"
            of = f" of {suite[function]}" if suite.get(function, 0) > len(cases) else ""
            lines.append(
                Text.assemble(
                    "  ", (function, "bold"), f"  ({len(cases)}{of} cases, each covers {spread}, kills none)"
                )
            )
    if unproven:
        why = (
            "--fast stopped those mutants at their first kill"
            if run_data.fast
            else "a timeout or a crash ended those mutants before it ran"
        )
        lines.append(
            Text(
                f"{count(len(unproven), 'test')} not judged: each killed none of the mutants it ran on "
                f"but was not run on every mutant it covers ({why}), so no claim is made "
                "(--verbose lists them)",
                style="yellow",
            )
        )
    if unreached:
        lines.append(
            Text(
                f"{count(len(unreached), 'test')} with no mutant to guard: each runs no mutated line "
                "(--paths or --since may keep the mutated code away)",
                style="dim",
            )
        )
    return Group(*lines) if lines else None
