"""GitHub output: workflow annotations on the survivors' lines, and the Markdown summary.

``--github`` prints one ``::warning`` workflow command per surviving mutant, so the pull request
shows the survivor on the line it mutated, and appends the Markdown summary to the job's step
summary (``$GITHUB_STEP_SUMMARY``). ``--markdown FILE`` writes the same Markdown for a workflow
to post as a (sticky) pull-request comment. Paths are relative to the repository root, the way
GitHub locates files (see ``repopaths``).
"""

from __future__ import annotations

import os
from pathlib import Path

from mutagent.model import Mutant, RunData, Status
from mutagent.reports.diff import diff_for
from mutagent.reports.guards import guard_map
from mutagent.reports.hints import hint_for
from mutagent.reports.repopaths import repo_relative
from mutagent.reports.stats import (
    STATUS_LABEL,
    count,
    format_score,
    status_of,
    summarize,
    undetected_mutants,
)

STEP_SUMMARY_ENV = "GITHUB_STEP_SUMMARY"
COMMENT_MARKER = "<!-- mutagent-report -->"  # lets a workflow find and update its own comment
MAX_DETAILED = 50  # a PR comment is limited to 65536 characters: past this, one line per survivor
MAX_CHARS = 60_000


def escape_data(text: str) -> str:
    """The message of a workflow command, escaped as GitHub's toolkit does (``%``, CR, LF)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A property value (``file=``, ``title=``): also ``:`` and ``,``, which end a property."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation_line(mutant: Mutant, changed: dict[str, set[int]] | None) -> int | None:
    """The line to annotate: the mutant's first line, or under ``--since`` its first changed line
    (GitHub shows annotations on a pull request's changed lines only); ``None``: not changed."""
    start, end = mutant.location.start_line, mutant.location.end_line
    if changed is None:
        return start
    lines = changed.get(mutant.file, set())
    return next((line for line in range(start, end + 1) if line in lines), None)


def annotations(run_data: RunData, changed: dict[str, set[int]] | None = None) -> list[str]:
    """One ``::warning`` command per undetected mutant (on changed lines only when ``changed``)."""
    root = Path(run_data.root)
    out = []
    for mutant in undetected_mutants(run_data):
        line = annotation_line(mutant, changed)
        if line is None:
            continue
        status = status_of(run_data, mutant)
        what = "no test reaches this code" if status is Status.NO_COVERAGE else "no test noticed this bug"
        message = f"{mutant.description or mutant.operator} ({what})"
        advice = hint_for(run_data, mutant).advice
        if advice:
            message += f"\nhint: {advice}"
        message += f"\nmutagent show {mutant.id}\n\n{diff_for(run_data, mutant)}"
        single = mutant.location.start_line == mutant.location.end_line == line
        props = [
            f"file={escape_property(repo_relative(Path(mutant.file), root))}",
            f"line={line}",
        ]
        if single:
            props += [f"col={mutant.location.start_col + 1}", f"endColumn={mutant.location.end_col + 1}"]
        props.append(f"title={escape_property(f'mutagent: {mutant.operator} {status.value}')}")
        out.append(f"::warning {','.join(props)}::{escape_data(message.rstrip())}")
    return out


def _md(text: str) -> str:
    """Inline text in a Markdown table or list: pipes and line breaks would break the layout."""
    return text.replace("|", "\\|").replace("\n", " ")


def _code(text: str) -> str:
    fence = "``" if "`" in text else "`"
    return f"{fence}{text}{fence}"


def markdown_summary(run_data: RunData) -> str:
    """Score, per-operator table, survivors with their hint and diff, tests that guard nothing."""
    summary = summarize(run_data)
    total = summary.total
    lines = [
        COMMENT_MARKER,
        f"## mutagent: mutation score {format_score(total.score)}",
        "",
        f"{total.detected} of {total.scored} mutants detected; {count(total.total, 'mutant')} in "
        f"{count(len(summary.by_file), 'file')}, {count(len(run_data.tests), 'test')}.",
        "",
        "| operator | mutants | killed | survived | timeout | no coverage | score |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, counts in [*summary.by_operator.items(), ("**total**", total)]:
        cells = [counts[s] for s in (Status.KILLED, Status.SURVIVED, Status.TIMEOUT, Status.NO_COVERAGE)]
        lines.append(
            f"| {_md(name)} | {counts.total} | " + " | ".join(str(c) for c in cells) + f" | "
            f"{format_score(counts.score)} |"
        )
    survivors = undetected_mutants(run_data)
    lines += ["", f"### Surviving mutants ({len(survivors)})", ""]
    if not survivors:
        lines.append("None: every reachable bug was caught.")
    root = Path(run_data.root)
    for index, mutant in enumerate(survivors):
        status = status_of(run_data, mutant)
        where = f"{repo_relative(Path(mutant.file), root)}:{mutant.location.start_line}"
        head = f"{_code(where)} **{_md(mutant.operator)}** ({STATUS_LABEL[status]})"
        if index >= MAX_DETAILED:
            lines.append(f"- {head} `{mutant.id}`")
            continue
        lines += [
            f"<details><summary>{head}: {_md(mutant.description)}</summary>",
            "",
            "```diff",
            diff_for(run_data, mutant).rstrip("\n"),
            "```",
            "",
        ]
        hint = hint_for(run_data, mutant)
        if hint.advice:
            lines += [f"**hint:** {_md(hint.advice)}", ""]
        if hint.code:  # only a test mutagent ran on the original and on this mutant
            lines += [f"_{_md(hint.verified)}_", "", "```python", hint.code.rstrip("\n"), "```", ""]
        lines += [f"`mutagent show {mutant.id}`", "", "</details>"]
    entries = guard_map(run_data)
    idle = [entry for entry in entries if entry.guards_nothing]
    lines += ["", f"### Tests that guard nothing ({len(idle)})", ""]
    if not idle:
        lines.append("No test ran on the mutants it covers without killing one.")
    for entry in idle:
        lines.append(f"- {_code(entry.test)}: {entry.idle_reason()}")
    unproven = sum(1 for entry in entries if entry.unproven)
    unreached = sum(1 for entry in entries if entry.reaches_nothing)
    if unproven:
        lines += [
            "",
            f"{count(unproven, 'test')} not judged: each killed none of the mutants it ran on but was "
            "not run on every mutant it covers (the run stopped those mutants early).",
        ]
    if unreached:
        lines += ["", f"{count(unreached, 'test')} with no mutant to guard: each runs no mutated line."]
    if run_data.faults:
        from mutagent.reports.faults import fault_markdown

        lines += ["", *fault_markdown(run_data)]
    text = "\n".join(lines) + "\n"
    if len(text) > MAX_CHARS:  # cut after a whole survivor, never inside a diff's fence
        cut = text.rfind("</details>\n", 0, MAX_CHARS)
        cut = cut + len("</details>\n") if cut >= 0 else text.rfind("\n", 0, MAX_CHARS) + 1
        text = text[:cut] + "\n… (truncated to fit a comment: the HTML report has the rest)\n"
    return text


def write_step_summary(markdown: str) -> Path | None:
    """Append ``markdown`` to ``$GITHUB_STEP_SUMMARY`` (``None`` when not on GitHub Actions)."""
    target = os.environ.get(STEP_SUMMARY_ENV)
    if not target:
        return None
    from mutagent.reports.writer import ReportWriteError

    try:
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(markdown)
    except OSError as exc:
        raise ReportWriteError(f"cannot write {target}: {exc.strerror or exc}") from exc
    return Path(target)
