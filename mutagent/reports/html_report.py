"""The HTML report: one self-contained file (inline CSS and a little JS, nothing fetched).

It must open from a CI artifact on an air-gapped laptop, so there is no web component, font or
script from the network. Every piece of text from the run (sources contain ``<``, test ids contain
``[``, tracebacks contain anything) goes through :func:`html.escape` exactly once.

It is built for a reviewer: a file tree with per-file scores beside the page; views (tabs) for
the mutants, the sources, the tests and the kill matrix; the mutant list filtered by status,
operator and file and searched by text, each mutant one line until opened; the view by test
(what each test kills, what only it guards, the tests that guard nothing); a kill matrix per file
with sticky headers, so it reads at 1280 px; files without mutants last, folded away. Without
JavaScript every view is simply shown one after the other.
"""

from __future__ import annotations

import json
from collections import defaultdict
from html import escape

from mutagent import __version__
from mutagent.model import Mutant, RunData, Status
from mutagent.reports.diff import diff_for
from mutagent.reports.guards import Cell, KillMatrix, guard_map, kill_matrix
from mutagent.reports.highlight import highlight_css, highlight_lines
from mutagent.reports.hints import hint_for
from mutagent.reports.html_assets import CSS, JS
from mutagent.reports.matrix_view import short_test_names
from mutagent.reports.stats import (
    STATUS_LABEL,
    STATUS_ORDER,
    UNDETECTED,
    Counts,
    count,
    format_score,
    sorted_mutants,
    status_of,
    summarize,
    undetected_mutants,
)

STATUS_LETTER = {
    Status.KILLED: "K",
    Status.SURVIVED: "S",
    Status.TIMEOUT: "T",
    Status.NO_COVERAGE: "N",
    Status.IGNORED: "I",
    Status.COMPILE_ERROR: "C",
    Status.RUNTIME_ERROR: "E",
    Status.PENDING: "P",
}
CELL_CLASS = {
    Cell.SOLE: "c-sole",
    Cell.KILLED: "c-kill",
    Cell.COVERED: "c-cov",
    Cell.NOT_RUN: "c-nrun",
    Cell.NONE: "",
}
COMPACT_OVER = 80  # files longer than this start collapsed to the lines around their mutants


def _meanings() -> str:
    """Cell class -> meaning, as a JS object literal (``<`` escaped so it cannot close the script)."""
    table = {CELL_CLASS[cell] or "none": cell.meaning for cell in Cell}
    return json.dumps(table).replace("<", "\\u003c")


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _score_class(score: float | None) -> str:
    if score is None:
        return ""
    return "good" if score >= 80 else "fair" if score >= 60 else "poor"


def _badge(status: Status, mutant: Mutant | None = None, href: bool = True) -> str:
    letter = STATUS_LETTER[status]
    if mutant is None:
        return f'<span class="st st-{status.value}">{_e(status.value)}</span>'
    title = f"{mutant.operator} at {_where(mutant)}: {status.value} [{mutant.id}]"
    target = f' href="#m-{_e(mutant.id)}"' if href else ""
    return f'<a class="st st-{status.value}"{target} title="{_e(title)}">{letter}</a>'


def _where(mutant: Mutant) -> str:
    return f"{mutant.file}:{mutant.location.start_line}"


def _diff_html(text: str) -> str:
    out = []
    for line in text.splitlines():
        css = (
            "d-add"
            if line.startswith("+") and not line.startswith("+++")
            else "d-del"
            if line.startswith("-") and not line.startswith("---")
            else "d-hunk"
            if line.startswith("@@")
            else ""
        )
        out.append(f'<span class="{css}">{_e(line)}</span>' if css else _e(line) + "\n")
    return '<pre class="diff">' + "".join(out) + "</pre>"


def _summary(run_data: RunData) -> str:
    summary = summarize(run_data)
    total = summary.total
    shown = [s for s in STATUS_ORDER if s is not Status.PENDING or total[Status.PENDING]]
    head = "".join(f"<th>{_e(STATUS_LABEL[s])}</th>" for s in shown)

    def row(name: str, counts: Counts, tag: str = "td") -> str:
        cells = "".join(f"<{tag}>{counts[s] or '·'}</{tag}>" for s in shown)
        score = format_score(counts.score)
        return (
            f"<tr><{tag}>{_e(name)}</{tag}><{tag}>{counts.total}</{tag}>{cells}"
            f'<{tag} class="{_score_class(counts.score)}">{score}</{tag}></tr>'
        )

    body = "".join(row(name, counts) for name, counts in summary.by_operator.items())
    return (
        f'<section id="summary"><p><span class="score {_score_class(total.score)}">'
        f"{format_score(total.score)}</span> mutation score &nbsp;({total.detected} of {total.scored} "
        f"detected; {count(total.total, 'mutant')} in {count(len(summary.by_file), 'file')}, "
        f"{count(len(run_data.tests), 'test')})</p>"
        f"<details><summary>Mutants by operator</summary>"
        f'<table class="tbl"><thead><tr><th>operator</th><th>mutants</th>{head}<th>score</th></tr></thead>'
        f"<tbody>{body}</tbody><tfoot>{row('total', total)}</tfoot></table></details></section>"
    )


def _mutant_body(run_data: RunData, mutant: Mutant) -> str:
    """What an opened mutant shows: description, diff, tests, hint, reason, error."""
    result = run_data.result_of(mutant)
    status = status_of(run_data, mutant)
    parts = [f'<div class="meta mono">[{_e(mutant.id)}]</div>']
    if mutant.description:
        parts.append(f"<div><em>{_e(mutant.description)}</em></div>")
    parts.append(_diff_html(diff_for(run_data, mutant)))
    if result.killed_by:
        parts.append(
            f"<div>killed by: <code>{'</code>, <code>'.join(_e(t) for t in result.killed_by)}</code></div>"
        )
    if result.covered_by:
        parts.append(
            f"<div>covered by: <code>{'</code>, <code>'.join(_e(t) for t in result.covered_by)}</code></div>"
        )
    elif status.scored:
        parts.append('<div class="nothing">no test reaches this code</div>')
    hint = hint_for(run_data, mutant)
    if hint:
        # code only for a test mutagent ran on the original and on this mutant
        code = (
            f'<div class="meta">{_e(hint.verified)}</div><pre class="diff">{_e(hint.code)}</pre>'
            if hint.code
            else ""
        )
        parts.append(f'<div class="hint">hint: {_e(hint.advice)}{code}</div>')
    reason = (mutant.ignored_reason if status is Status.IGNORED else None) or result.status_reason
    if reason:
        parts.append(f'<div class="meta">reason: {_e(reason)}</div>')
    if result.error:
        parts.append(f'<details><summary>error</summary><pre class="diff">{_e(result.error)}</pre></details>')
    return "".join(parts)


def _mutant_row(run_data: RunData, mutant: Mutant, anchor: str) -> str:
    """One mutant, one line until opened (``<details>``), with what the filters and search read."""
    status = status_of(run_data, mutant)
    searchable = " ".join(
        (mutant.file, mutant.operator, mutant.description, mutant.id, mutant.original, mutant.replacement)
    ).lower()
    return (
        f'<details class="mrow mutant" id="{_e(anchor)}-{_e(mutant.id)}" data-status="{_e(status.value)}" '
        f'data-operator="{_e(mutant.operator)}" data-file="{_e(mutant.file)}" data-search="{_e(searchable)}">'
        f'<summary>{_badge(status)} <span class="mono">{_e(_where(mutant))}</span> '
        f'<b>{_e(mutant.operator)}</b> <span class="meta">{_e(mutant.description)}</span></summary>'
        f"{_mutant_body(run_data, mutant)}</details>"
    )


def _survivors(run_data: RunData) -> str:
    survivors = undetected_mutants(run_data)
    if not survivors and not summarize(run_data).total.scored:
        body = "<p>No mutant was scored: nothing in this run shows what the suite catches.</p>"
    elif not survivors:
        body = '<p class="good">No surviving mutants: every reachable bug was caught.</p>'
    else:
        body = (
            f"<p>{len(survivors)} mutants nothing in the suite noticed. Open one for the exact change, "
            "the tests that reached it and what to assert.</p>"
        )
        body += "".join(_mutant_row(run_data, m, "s") for m in survivors)
    return f'<div id="survivors"><h2>Surviving mutants</h2>{body}</div>'


def _mutants(run_data: RunData, files: list[str]) -> str:
    """The filterable list of every mutant (survivors first), with the filter bar above it."""
    mutants = sorted_mutants(run_data.mutants)
    present = {status_of(run_data, m) for m in mutants}
    boxes = "".join(
        f'<label><input type="checkbox" data-filter="status" value="{_e(s.value)}" checked> '
        f"{_badge(s)}</label>"
        for s in STATUS_ORDER
        if s in present
    )
    operators = "".join(
        f'<option value="{_e(o)}">{_e(o)}</option>' for o in sorted({m.operator for m in mutants})
    )
    file_options = "".join(f'<option value="{_e(f)}">{_e(f)}</option>' for f in files)
    order = {status: index for index, status in enumerate(UNDETECTED)}
    ordered = sorted(mutants, key=lambda m: order.get(status_of(run_data, m), len(order)))
    rows = "".join(_mutant_row(run_data, m, "m") for m in ordered)
    return (
        '<section id="mutants" class="tab"><h2>Mutants</h2>'
        f'<div id="filters">{boxes}'
        '<label>operator <select id="f-operator"><option value="">all operators</option>'
        f"{operators}</select></label>"
        f'<label>file <select id="f-file"><option value="">all files</option>{file_options}</select></label>'
        '<input type="search" id="f-search" placeholder="search file, operator, description, id, code">'
        '<button type="button" id="f-clear">clear filters</button>'
        f'<span id="shown-count" class="meta">{len(mutants)} mutants</span></div>'
        f"{_survivors(run_data)}<h2>All mutants</h2>"
        f'<div id="mutant-list">{rows}</div></section>'
    )


def _file_section(run_data: RunData, index: int, file: str, source: str, mutants: list[Mutant]) -> str:
    by_line: dict[int, list[Mutant]] = defaultdict(list)
    for mutant in mutants:
        by_line[mutant.location.start_line].append(mutant)
    near = {n for line in by_line for n in range(line - 2, line + 3)}
    rows = []
    for number, code in enumerate(highlight_lines(source), start=1):
        marks = "".join(_badge(status_of(run_data, m), m) for m in by_line.get(number, []))
        statuses = {status_of(run_data, m) for m in by_line.get(number, [])}
        mark = "has-S" if statuses & set(UNDETECTED) else "has-K" if any(s.detected for s in statuses) else ""
        css = " ".join(c for c in ("near" if number in near else "", mark) if c)
        rows.append(
            f'<tr class="{css}" id="f{index}-L{number}"><td class="ln">{number}</td>'
            f'<td class="mk">{marks}</td><td class="code">{code}</td></tr>'
        )
    table_id = f"src-{index}"
    compact = " compact" if source.count("\n") > COMPACT_OVER else ""
    label = "show the whole file" if compact else "show only lines near mutants"
    counts = Counts()
    for mutant in mutants:
        counts.add(status_of(run_data, mutant))
    return (
        f'<details class="file" id="file-{index}"><summary><b class="mono">{_e(file)}</b> — '
        f"{len(mutants)} mutants, score {format_score(counts.score)}</summary>"
        f'<button type="button" data-toggle="{table_id}">{label}</button>'
        f'<div class="scroll"><table class="src hl{compact}" id="{table_id}"><tbody>{"".join(rows)}</tbody>'
        "</table></div></details>"
    )


def _grouped(run_data: RunData) -> tuple[dict[str, list[Mutant]], list[str], list[str]]:
    """Mutants by file, the files with mutants (by path), the files without any (listed last)."""
    grouped: dict[str, list[Mutant]] = defaultdict(list)
    for mutant in sorted_mutants(run_data.mutants):
        grouped[mutant.file].append(mutant)
    with_mutants = sorted(grouped)
    without = sorted(set(run_data.sources) - set(grouped))
    return grouped, with_mutants, without


def _files(run_data: RunData) -> str:
    grouped, with_mutants, without = _grouped(run_data)
    sections = [
        _file_section(run_data, index, file, run_data.sources.get(file, ""), grouped[file])
        for index, file in enumerate(with_mutants)
    ]
    if without:
        names = "".join(f'<li class="mono">{_e(f)}</li>' for f in without)
        sections.append(
            f'<details class="no-mutants"><summary>{len(without)} files without mutants</summary>'
            f"<ul>{names}</ul></details>"
        )
    return (
        '<section id="files" class="tab"><h2>Source files</h2><p>Each line with mutants carries their '
        f"status badges; open a file to read it.</p>{''.join(sections)}</section>"
    )


def _tree(run_data: RunData) -> str:
    """The file tree: directories fold, each file and directory shows its score and mutant count."""
    grouped, with_mutants, without = _grouped(run_data)

    def counts_of(files: list[str]) -> Counts:
        counts = Counts()
        for file in files:
            for mutant in grouped.get(file, []):
                counts.add(status_of(run_data, mutant))
        return counts

    def label(counts: Counts) -> str:
        return (
            f'<span class="sc {_score_class(counts.score)}">{format_score(counts.score)} '
            f'<span class="meta">({counts.total})</span></span>'
        )

    def build(files: list[str], prefix: str) -> str:
        subdirs: dict[str, list[str]] = defaultdict(list)
        leaves = []
        for file in files:
            rest = file[len(prefix) :]
            if "/" in rest:
                subdirs[rest.split("/", 1)[0]].append(file)
            else:
                leaves.append(file)
        items = []
        for name in sorted(subdirs):
            inner = subdirs[name]
            items.append(
                f'<li><details class="dir" data-dir="{_e(prefix + name)}"><summary>{_e(name)}/ '
                f"{label(counts_of(inner))}</summary>{build(inner, prefix + name + '/')}</details></li>"
            )
        for file in leaves:
            items.append(
                f'<li><a href="#mutants" class="tree-file" data-file="{_e(file)}" title="{_e(file)}">'
                f'<span class="mono">{_e(file[len(prefix) :])}</span>{label(counts_of([file]))}</a></li>'
            )
        return f"<ul>{''.join(items)}</ul>"

    extra = ""
    if without:
        names = "".join(f'<li class="mono meta">{_e(f)}</li>' for f in without)
        extra = (
            f'<details class="no-mutants"><summary class="meta">{len(without)} files without mutants'
            f"</summary><ul>{names}</ul></details>"
        )
    return (
        f'<aside id="tree" class="tree"><b>Files</b> <span class="meta">(score, mutants)</span>'
        f"{build(with_mutants, '')}{extra}</aside>"
    )


def _matrix_table(run_data: RunData, matrix: KillMatrix) -> str:
    """One file's tests x mutants table; rows only for the tests that reach one of its mutants."""
    starts = {group.start for group in matrix.groups}
    keep = [i for i, cells in enumerate(matrix.rows) if any(c is not Cell.NONE for c in cells)]
    groups = "".join(
        f'<th class="g" colspan="{g.size}" title="{_e(g.label)}">{_e(g.label)}</th>' for g in matrix.groups
    )
    status_cells = "".join(
        f'<th class="{"gs" if j in starts else ""}">{_badge(s, m)}</th>'
        for j, (m, s) in enumerate(zip(matrix.columns, matrix.statuses, strict=True))
    )
    tests = [matrix.tests[i] for i in keep]
    names = short_test_names(tests)
    rows = []
    for index, name in zip(keep, names, strict=True):
        tds = []
        for j, cell in enumerate(matrix.rows[index]):
            css = " ".join(c for c in (CELL_CLASS[cell], "gs" if j in starts else "") if c)
            # no per-cell title: the inline script builds it on hover from the row and column headers,
            # which keeps a 30 x 1000 matrix from costing megabytes
            tds.append(f'<td class="{css}">{_e(cell.value.strip())}</td>' if css else "<td></td>")
        test = matrix.tests[index]
        rows.append(f'<tr><th class="t" title="{_e(test)}">{_e(name)}</th>{"".join(tds)}</tr>')
    if not rows:
        rows.append(
            '<tr><th class="t">no test reaches these mutants</th>'
            f'<td colspan="{len(matrix.columns)}"></td></tr>'
        )
    return (
        f'<div class="mxwrap mx"><table><thead><tr><th class="t"></th>{groups}</tr>'
        f'<tr><th class="t">status</th>{status_cells}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _matrix(run_data: RunData, group_by: str) -> str:
    """The kill matrix, one block per file (columns grouped by operator inside a file), so that each
    block fits a 1280 px screen; headers stick while scrolling. The blocks are per file whatever
    ``group_by`` says (``--group-by`` arranges the terminal matrix); it only counts the totals here."""
    full = kill_matrix(run_data, group_by)
    if not full.columns:
        return (
            '<section id="matrix" class="tab"><h2>Kill matrix</h2>'
            "<p>No mutant that a test could guard.</p></section>"
        )
    blocks = []
    files = sorted({m.file for m in full.columns})
    for file in files:
        part = RunData(
            run_data.root,
            [m for m in run_data.mutants if m.file == file],
            run_data.results,
            run_data.tests,
            run_data.sources,
        )
        matrix = kill_matrix(part, "operator")
        blocks.append(
            f'<details class="mxfile" open><summary><b class="mono">{_e(file)}</b> — {len(matrix.columns)} '
            f"mutants</summary>{_matrix_table(run_data, matrix)}</details>"
        )
    legend = "".join(
        f'<span><i class="{CELL_CLASS[c]}"></i>{_e(c.value.strip() or "blank")}: {_e(c.meaning)}</span>'
        for c in Cell
    )
    note = (
        f'<p class="meta">{full.excluded} ignored, erroring or pending mutants are not shown.</p>'
        if full.excluded
        else ""
    )
    return (
        f'<section id="matrix" class="tab"><h2>Kill matrix</h2><p>{len(full.tests)} tests × '
        f"{len(full.columns)} mutants, one block per file, columns grouped by operator; each block lists "
        "the tests that reach its mutants. Hover a cell for details.</p>"
        f'<p class="legend">{legend}</p>{"".join(blocks)}{note}</section>'
    )


def _guards(run_data: RunData) -> str:
    """The view by test: what each test kills, what only it guards, and the tests guarding nothing."""
    rows = []
    entries = guard_map(run_data)
    idle = sum(1 for entry in entries if entry.guards_nothing)
    for entry in entries:
        if entry.guards_nothing:
            verdict = f'<span class="nothing">guards nothing ({_e(entry.idle_reason())})</span>'
        elif entry.unproven:
            verdict = f'<span class="fair">not judged ({_e(entry.idle_reason())})</span>'
        elif entry.reaches_nothing:
            verdict = f"no mutant to guard ({_e(entry.idle_reason())})"
        elif entry.only:
            verdict = f"kills {len(entry.kills)}, alone guards {len(entry.only)}"
        else:
            verdict = f'kills {len(entry.kills)}, <span class="fair">alone guards nothing</span>'
        kills = "".join(
            f'<li><a href="#m-{_e(m.id)}" class="mono">{_e(_where(m))}</a> {_e(m.operator)}'
            f"{' <b>(only this test)</b>' if m in entry.only else ''}</li>"
            for m in entry.kills
        )
        unverified = "".join(
            f'<li class="meta">{_e(_where(m))} {_e(m.operator)} (sole known killer, others not run)</li>'
            for m in entry.unverified_only
        )
        body = f"<ul>{kills}{unverified}</ul>" if kills or unverified else ""
        rows.append(
            f'<details class="trow" data-test="{_e(entry.test)}" data-idle="{int(entry.guards_nothing)}">'
            f'<summary><span class="mono">{_e(entry.test)}</span> — {verdict}</summary>{body}</details>'
        )
    steps = _fault_steps(run_data)
    return (
        '<section id="guards" class="tab"><h2>Tests</h2><p>For each test: the mutants it kills and the '
        "paths only it guards (no other test kills those mutants). A test that ran on every mutant it "
        f"covers and killed none guards nothing: {idle} of {len(entries)} tests here (a test that "
        "runs no mutated line has no mutant to guard; one not run on every mutant it covers is not "
        "judged).</p>"
        '<p><label><input type="checkbox" id="t-idle"> only the tests that guard nothing</label> '
        '<input type="search" id="t-search" placeholder="filter tests by name"></p>'
        f'<div id="test-list">{"".join(rows)}</div>{steps}</section>'
    )


def _fault_steps(run_data: RunData) -> str:
    if not run_data.faults:
        return ""
    from mutagent.reports.faults import fault_coverage

    coverage = fault_coverage(run_data)
    rows = "".join(
        f'<tr><td class="mono l">{_e(test)}</td>'
        f'<td class="l">{_e(", ".join(steps) or "only normal turns")}</td></tr>'
        for test, steps in coverage.by_test.items()
    )
    return (
        '<h3>What each test scripts on the fake model server</h3><table class="tbl" id="faults-by-test">'
        f'<thead><tr><th class="l">test</th><th class="l">faults (position, dialect)</th></tr></thead>'
        f"<tbody>{rows}</tbody></table>"
    )


def _faults(run_data: RunData) -> str:
    if not run_data.faults:
        return (
            '<section id="faults" class="tab"><h2>Fault coverage</h2><p>No fault log: the suite does not '
            "use the fake_model fixture, or this report was made without one.</p></section>"
        )
    from mutagent.reports.faults import fault_coverage

    coverage = fault_coverage(run_data)
    rows = []
    for row in coverage.rows:
        scripted = (
            "<br>".join(f'<span class="mono">{_e(t)}</span>' for t in row.tests)
            if row.tests
            else '<span class="never">never scripted</span>'
        )
        rows.append(
            f'<tr class="{"" if row.tests else "unscripted"}"><td class="l">{_e(row.dialect)}</td>'
            f'<td class="l">{_e(row.fault.label)}</td><td class="l">{_e(row.fault.where)}</td>'
            f'<td class="l">{scripted}</td><td class="l mono">{_e(", ".join(row.fault.operators))}</td></tr>'
        )
    other = "".join(
        f"<li>{_e(fault)} @ {_e(where)} ({_e(dialect)}): {_e(', '.join(tests))}</li>"
        for dialect, fault, where, tests in coverage.other
    )
    return (
        '<section id="faults" class="tab"><h2>Fault coverage</h2><p>Which faults the tests script on the '
        f"fake model server (recorded during the baseline), per dialect: {len(coverage.never)} of "
        f"{len(coverage.rows)} never scripted. A fault no test scripts leaves the mutants of the operators "
        "beside it to chance.</p>"
        '<table class="tbl" id="fault-table"><thead><tr><th class="l">dialect</th><th class="l">fault</th>'
        '<th class="l">where</th><th class="l">scripted by</th>'
        '<th class="l">operators it lets a test kill</th>'
        f"</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        + (f"<p>Also scripted:</p><ul>{other}</ul>" if other else "")
        + "</section>"
    )


def to_html(run_data: RunData, *, group_by: str = "operator") -> str:
    """The complete HTML document for ``run_data``."""
    score = format_score(summarize(run_data).total.score)
    _, with_mutants, _ = _grouped(run_data)
    tabs = "".join(
        f'<button type="button" data-tab="{key}">{label}</button>'
        for key, label in (
            ("mutants", "Mutants"),
            ("files", "Source files"),
            ("guards", "Tests"),
            ("matrix", "Kill matrix"),
            ("faults", "Fault coverage"),
        )
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>mutagent report: {_e(score)}</title><style>{CSS}{highlight_css('.hl')}</style></head><body>"
        f'<header><h1>mutagent mutation report <span class="meta" style="font-size:13px;font-weight:400">'
        f"{_e(run_data.root)} · mutagent {_e(__version__)}</span></h1>"
        f'<nav class="tabs">{tabs}</nav></header><div class="layout">{_tree(run_data)}<main>'
        f"{_summary(run_data)}{_mutants(run_data, with_mutants)}{_files(run_data)}{_guards(run_data)}"
        f"{_matrix(run_data, group_by)}{_faults(run_data)}</main></div>"
        f"<script>var MEANING = {_meanings()};{JS}</script></body></html>\n"
    )
