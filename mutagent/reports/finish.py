"""The end of every run and of ``mutagent report``: print, write the files, apply the gate.

One function so that ``mutagent run`` and ``mutagent report`` cannot drift apart in what they
print, which files they write or which exit code a failed gate gives.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from mutagent import exitcodes
from mutagent.model import RunData
from mutagent.reports.gate import evaluate_gate, render_gate
from mutagent.reports.terminal import render_terminal
from mutagent.reports.writer import write_reports


def finish_run(
    run_data: RunData,
    console: Console,
    *,
    json: Path | str | None = None,
    html: Path | str | None = None,
    junit: Path | str | None = None,
    fail_under: float | None = None,
    max_survived: int | None = None,
    terminal: bool = True,
    config: dict[str, Any] | None = None,
    group_by: str = "operator",
    sarif: Path | str | None = None,
    markdown: Path | str | None = None,
    github: bool = False,
    changed: dict[str, set[int]] | None = None,
    base: RunData | None = None,
    base_name: str = "the base report",
    verbose: bool = False,
    show_command: str = "mutagent show {id}",
) -> int:
    """Render, write the requested reports, evaluate the gate; returns 0 or ``GATE_FAILED`` (1).

    The gate is evaluated before anything is written so that bad thresholds fail fast, but the
    report files are written even when the gate fails: CI uploads them to show why.
    ``github``: workflow annotations for the survivors (on ``changed`` lines only, when given) on
    stdout and the Markdown summary appended to ``$GITHUB_STEP_SUMMARY``. ``base``: the report
    ``--fail-on-regression`` ratchets against. ``show_command``: ``mutagent show`` as it works
    where the report is printed (see ``commands._reportargs.show_command``).
    """
    gate = evaluate_gate(run_data, fail_under, max_survived, base=base, base_name=base_name)
    if terminal:
        render_terminal(run_data, console, group_by=group_by, verbose=verbose, show_command=show_command)
        if run_data.faults:
            from mutagent.reports.faults import render_fault_coverage

            console.print()
            console.print(render_fault_coverage(run_data))
    thresholds = None
    if fail_under is not None:
        thresholds = {"high": max(80, int(fail_under)), "low": int(fail_under)}
    written = write_reports(
        run_data,
        json=json,
        html=html,
        junit=junit,
        sarif=sarif,
        markdown=markdown,
        config=config,
        thresholds=thresholds,
        group_by=group_by,
    )
    if github:
        from mutagent.reports.github import annotations, markdown_summary, write_step_summary

        out = console.file
        for line in annotations(run_data, changed):
            out.write(line + "\n")  # workflow commands: raw lines on stdout, never wrapped by rich
        out.flush()
        summary = write_step_summary(markdown_summary(run_data))
        if summary is not None:
            console.print(f"appended the summary to [bold]{escape(str(summary))}[/]", highlight=False)
    for path in written:
        console.print(f"wrote [bold]{escape(str(path))}[/]", highlight=False)
    if gate.checked:
        console.print()
        render_gate(gate, console)
    return exitcodes.OK if gate.passed else exitcodes.GATE_FAILED
