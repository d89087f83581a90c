"""What fault exploration found, per fault: the handling code, what the loop did, the tests.

Rendered by ``mutagent explore`` and ``mutagent map`` (terminal table, or JSON). A fault whose
runs found no new line is handled by code every test runs anyway, or not at all: the verdict
column tells which. A crash, a hang or a malformed next request is a finding in itself, shown
with the test whose run showed it.
"""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from mutagent.explore.results import CRASH, HANG, MALFORMED_REQUEST, Exploration, FaultReport, ranges

FINDING_STYLE = {CRASH: "bold red", HANG: "bold red", MALFORMED_REQUEST: "bold red"}


def fault_entry(report: FaultReport) -> dict[str, Any]:
    """The JSON form of one fault: ``fault``, ``handling`` (file -> lines), ``where``, ``runs``,
    ``verdicts`` (verdict -> tests), ``findings`` (the crash/hang/malformed ones), ``waits``."""
    return {
        "fault": report.label,
        "handling": report.handling,
        "where": report.where(),
        "runs": len(report.runs),
        "verdicts": report.verdicts,
        "findings": report.findings,
        "waits": report.waits(),
    }


def exploration_json(exploration: Exploration) -> dict[str, Any]:
    """``faults`` (see ``fault_entry``), ``shared`` (file -> the handling lines most faults run),
    ``runs``, the budget and what was spent (worker seconds), ``left_out`` (runs over budget)."""
    return {
        "faults": [fault_entry(report) for report in exploration.by_fault()],
        "shared": {file: sorted(lines) for file, lines in sorted(exploration.shared().items())},
        "runs": len(exploration.runs),
        "budget_seconds": round(exploration.budget, 2),
        "spent_seconds": round(exploration.spent, 2),
        "baseline_seconds": round(exploration.baseline_time, 2),
        "left_out": exploration.left_out,
    }


def _short(test: str) -> str:
    return test.rsplit("/", 1)[-1]


def render_exploration(exploration: Exploration) -> RenderableType:
    """The table of faults, then the findings, then the cost line."""
    table = Table(
        title="Fault exploration: the code that runs only under each fault",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        padding=(0, 1),
    )
    table.add_column("fault", overflow="fold")
    table.add_column("handling code found", overflow="fold")
    table.add_column("what the loop did", overflow="fold")
    findings: list[RenderableType] = []
    shared = exploration.shared()
    for report in exploration.by_fault():
        own = report.where(shared)
        if not own and report.handling:
            own = Text("the shared path only", style="dim")
        where = own or Text("none beyond what every test runs", style="dim")
        did = ", ".join(f"{verdict} ({len(tests)})" for verdict, tests in report.verdicts.items())
        waits = report.waits()
        table.add_row(report.label, where, did + (f"; {waits}" if waits else ""))
        for verdict, tests in report.findings.items():
            findings.append(
                Text.assemble(
                    ("  ", ""),
                    (f"{verdict}", FINDING_STYLE.get(verdict, "")),
                    f" under {report.label}: ",
                    (_short(tests[0]), "bold"),
                    f" (and {len(tests) - 1} more)" if len(tests) > 1 else "",
                )
            )
    parts: list[RenderableType] = [table]
    if shared:
        common = "; ".join(f"{file}:{ranges(lines)}" for file, lines in sorted(shared.items()))
        parts.append(
            Text.assemble(("shared by most faults (a failed attempt's common path): ", "bold"), common)
        )
    parts.append(
        Text(
            "recovered: the test passed with the fault; went on: the loop returned, the test's own checks "
            "expect the script without the fault; gave up: the target's own error",
            style="dim",
        )
    )
    if findings:
        parts += [Text("The loop did not cope:", style="bold red"), *findings]
    cost = (
        f"{len(exploration.runs)} explored runs in {exploration.wall:.1f}s, {exploration.spent:.1f}s of "
        f"worker time of a {exploration.budget:.1f}s budget "
        f"(the baseline took {exploration.baseline_time:.1f}s)"
    )
    if exploration.left_out:
        cost += f"; {exploration.left_out} runs left out by the budget (--explore-budget)"
    parts.append(Text(cost, style="dim"))
    return Group(*parts)
