"""The HTML report: one self-contained file (inline CSS and a few lines of JS, nothing fetched).

It must open from a CI artifact on an air-gapped laptop, so there is no web component, font or
script from the network. Every piece of text from the run (sources contain ``<``, test ids contain
``[``, tracebacks contain anything) goes through :func:`html.escape` exactly once.
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
from mutagent.reports.matrix_view import short_test_names
from mutagent.reports.stats import (
    STATUS_LABEL,
    STATUS_ORDER,
    UNDETECTED,
    Counts,
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

CSS = """
:root{--ok:#1a7f37;--bad:#cf222e;--warn:#9a6700;--mute:#6e7781;--line:#d0d7de;--bg:#f6f8fa}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1f2328}
header,main{max-width:1200px;margin:0 auto;padding:0 16px}
header{padding-top:16px}
nav a{margin-right:14px}
h1{font-size:22px;margin:8px 0}h2{border-bottom:1px solid var(--line);padding-bottom:4px;margin-top:32px}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
table{border-collapse:collapse}
.tbl td,.tbl th{border:1px solid var(--line);padding:3px 8px;text-align:right}
.tbl td:first-child,.tbl th:first-child{text-align:left}
.tbl tfoot td{font-weight:600}
.score{font-size:34px;font-weight:700}
.good{color:var(--ok)}.fair{color:var(--warn)}.poor{color:var(--bad)}
.st{display:inline-block;min-width:1.6em;padding:0 4px;border-radius:4px;color:#fff;font-weight:600;
 text-align:center;text-decoration:none;font-size:11.5px;margin-right:2px}
.st-Killed{background:var(--ok)}.st-Timeout{background:#0969da}.st-Survived{background:var(--bad)}
.st-NoCoverage{background:#bc4c00}.st-Ignored,.st-Pending{background:var(--mute)}
.st-CompileError{background:#8250df}.st-RuntimeError{background:var(--warn)}
.mutant{border:1px solid var(--line);border-radius:6px;margin:10px 0;padding:8px 12px}
.mutant h3{font-size:14px;margin:0 0 4px}
.mutant .meta{color:var(--mute)}
pre.diff{background:var(--bg);padding:6px 8px;overflow-x:auto;margin:6px 0}
.d-add{background:#dafbe1;display:block}.d-del{background:#ffebe9;display:block}.d-hunk{color:#0969da;display:block}
.hint{border-left:3px solid #0969da;padding-left:8px}
.src{width:100%;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
.src td{padding:0 6px;vertical-align:top;white-space:pre}
.src .ln{color:var(--mute);text-align:right;user-select:none;width:1%}
.src .mk{width:1%;white-space:nowrap}
.src tr.has-S td.code{background:#ffebe9}.src tr.has-K td.code{background:#f0fff4}
.compact tr:not(.near){display:none}
.scroll{overflow-x:auto}
button{font:inherit;font-size:12px;margin:4px 0}
.mx{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:11px;overflow-x:auto}
.mx td,.mx th{width:11px;min-width:11px;height:14px;padding:0;text-align:center;border:1px solid #eee}
.mx th.t{width:auto;text-align:left;padding-right:8px;white-space:nowrap;font-weight:400;border:none}
.mx th.g{font-weight:600;border-left:2px solid #888;text-align:left;padding-left:2px;white-space:nowrap;
 overflow:hidden;max-width:0}
.mx td.gs,.mx th.gs{border-left:2px solid #888}
.c-sole{background:#1a7f37;color:#fff}.c-kill{background:#8cd9a0}.c-cov{background:#fff1b8}.c-nrun{background:#eee}
.mx tr:hover th.t{background:#fff1b8}
.mx th.t{position:sticky;left:0;background:#fff;z-index:1}
.mx .st{display:block;min-width:0;padding:0;margin:0;border-radius:2px;font-size:10px}
.tbl td.l,.tbl th.l{text-align:left}
.legend span{display:inline-block;margin-right:14px}
.legend i{display:inline-block;width:12px;height:12px;border:1px solid #ccc;vertical-align:middle;
 margin-right:4px}
.nothing{color:var(--bad);font-weight:600}
"""

JS = """
function reveal() {
  var id = location.hash.slice(1);
  var el = id ? document.getElementById(id) : null;
  for (; el; el = el.parentElement) { if (el.tagName === 'DETAILS') { el.open = true; } }
}
document.querySelectorAll('.mx table').forEach(function (table) {
  table.addEventListener('mouseover', function (event) {
    var cell = event.target.closest('td');
    if (!cell || cell.title) { return; }
    var head = table.tHead.rows[1].cells[cell.cellIndex];
    var link = head ? head.querySelector('a') : null;
    var meaning = MEANING.none;
    cell.classList.forEach(function (name) { if (MEANING[name]) { meaning = MEANING[name]; } });
    cell.title = cell.parentElement.cells[0].title + ' \u00d7 ' + (link ? link.title : '') + ': ' + meaning;
  });
});
window.addEventListener('hashchange', reveal);
reveal();
document.querySelectorAll('button[data-toggle]').forEach(function (button) {
  button.addEventListener('click', function () {
    var table = document.getElementById(button.getAttribute('data-toggle'));
    var compact = table.classList.toggle('compact');
    button.textContent = compact ? 'show the whole file' : 'show only lines near mutants';
  });
});
"""


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
        f'<section id="summary"><h2>Summary</h2>'
        f'<p><span class="score {_score_class(total.score)}">{format_score(total.score)}</span> '
        f"mutation score &nbsp;({total.detected} of {total.scored} detected; {total.total} mutants in "
        f"{len(summary.by_file)} files, {len(run_data.tests)} tests)</p>"
        f'<table class="tbl"><thead><tr><th>operator</th><th>mutants</th>{head}<th>score</th></tr></thead>'
        f"<tbody>{body}</tbody><tfoot>{row('total', total)}</tfoot></table></section>"
    )


def _mutant_article(run_data: RunData, mutant: Mutant, anchor: str, *, details: bool) -> str:
    result = run_data.result_of(mutant)
    status = status_of(run_data, mutant)
    parts = [
        f'<article class="mutant" id="{_e(anchor)}-{_e(mutant.id)}">',
        f'<h3>{_badge(status)} <span class="mono">{_e(_where(mutant))}</span> {_e(mutant.operator)} '
        f'<span class="meta mono">[{_e(mutant.id)}]</span></h3>',
    ]
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
    if hint and (details or status in (Status.SURVIVED, Status.NO_COVERAGE)):
        advice, _, script = hint.partition("\n")
        code = f'<pre class="diff">{_e(script)}</pre>' if script else ""
        parts.append(f'<div class="hint">hint: {_e(advice)}{code}</div>')
    reason = (mutant.ignored_reason if status is Status.IGNORED else None) or result.status_reason
    if reason:
        parts.append(f'<div class="meta">reason: {_e(reason)}</div>')
    if result.error:
        parts.append(f'<details><summary>error</summary><pre class="diff">{_e(result.error)}</pre></details>')
    parts.append("</article>")
    return "".join(parts)


def _survivors(run_data: RunData) -> str:
    survivors = undetected_mutants(run_data)
    if not survivors and not summarize(run_data).total.scored:
        body = "<p>No mutant was scored: nothing in this run shows what the suite catches.</p>"
    elif not survivors:
        body = '<p class="good">No surviving mutants: every reachable bug was caught.</p>'
    else:
        body = (
            f"<p>{len(survivors)} mutants nothing in the suite noticed. Each shows the exact change, "
            "the tests that reached it and what to assert.</p>"
        )
        body += "".join(_mutant_article(run_data, m, "s", details=True) for m in survivors)
    return f'<section id="survivors"><h2>Surviving mutants</h2>{body}</section>'


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
    articles = "".join(_mutant_article(run_data, m, "m", details=False) for m in mutants)
    return (
        f'<details class="file" open><summary><b class="mono">{_e(file)}</b> — {len(mutants)} mutants, '
        f"score {format_score(counts.score)}</summary>"
        f'<button type="button" data-toggle="{table_id}">{label}</button>'
        f'<div class="scroll"><table class="src hl{compact}" id="{table_id}"><tbody>{"".join(rows)}</tbody>'
        "</table></div>"
        f"<details><summary>all {len(mutants)} mutants of {_e(file)}</summary>{articles}</details></details>"
    )


def _files(run_data: RunData) -> str:
    grouped: dict[str, list[Mutant]] = defaultdict(list)
    for mutant in sorted_mutants(run_data.mutants):
        grouped[mutant.file].append(mutant)
    files = sorted(set(run_data.sources) | set(grouped))
    sections = [
        _file_section(run_data, index, file, run_data.sources.get(file, ""), grouped.get(file, []))
        for index, file in enumerate(files)
    ]
    return f'<section id="files"><h2>Source files</h2>{"".join(sections)}</section>'


def _matrix(matrix: KillMatrix) -> str:
    if not matrix.columns:
        return '<section id="matrix"><h2>Kill matrix</h2><p>No mutant that a test could guard.</p></section>'
    starts = {group.start for group in matrix.groups}
    groups = "".join(
        f'<th class="g" colspan="{g.size}" title="{_e(g.label)}">{_e(g.label)}</th>' for g in matrix.groups
    )
    status_cells = "".join(
        f'<th class="{"gs" if j in starts else ""}">{_badge(s, m)}</th>'
        for j, (m, s) in enumerate(zip(matrix.columns, matrix.statuses, strict=True))
    )
    names = short_test_names(matrix.tests)
    rows = []
    for test, name, cells in zip(matrix.tests, names, matrix.rows, strict=True):
        tds = []
        for j, cell in enumerate(cells):
            css = " ".join(c for c in (CELL_CLASS[cell], "gs" if j in starts else "") if c)
            # no per-cell title: the inline script builds it on hover from the row and column headers,
            # which keeps a 30 x 1000 matrix from costing megabytes
            tds.append(f'<td class="{css}">{_e(cell.value.strip())}</td>' if css else "<td></td>")
        rows.append(f'<tr><th class="t" title="{_e(test)}">{_e(name)}</th>{"".join(tds)}</tr>')
    legend = "".join(
        f'<span><i class="{CELL_CLASS[c]}"></i>{_e(c.value.strip() or "blank")}: {_e(c.meaning)}</span>'
        for c in Cell
    )
    note = (
        f'<p class="meta">{matrix.excluded} ignored, erroring or pending mutants are not shown.</p>'
        if matrix.excluded
        else ""
    )
    return (
        f'<section id="matrix"><h2>Kill matrix</h2><p>{len(matrix.tests)} tests × {len(matrix.columns)} '
        f"mutants, columns grouped by {_e(matrix.group_by)}; hover a cell for details.</p>"
        f'<p class="legend">{legend}</p><div class="mx"><table>'
        f'<thead><tr><th class="t"></th>{groups}</tr><tr><th class="t">status</th>{status_cells}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>{note}</section>"
    )


def _guards(run_data: RunData) -> str:
    rows = []
    for number, entry in enumerate(guard_map(run_data), start=1):
        if entry.guards_nothing:
            why = "reaches no mutated code" if not entry.covers else f"covers {entry.covers}, kills none"
            guarded = f'<span class="nothing">guards nothing ({why})</span>'
        elif entry.only:
            guarded = "<br>".join(
                f'<a href="#m-{_e(m.id)}" class="mono">{_e(_where(m))}</a> {_e(m.operator)}'
                for m in entry.only
            )
        else:
            guarded = '<span class="fair">nothing alone (every kill shared with another test)</span>'
        if entry.unverified_only:
            guarded += "<br>" + "<br>".join(
                f'<span class="meta">{_e(_where(m))} {_e(m.operator)} '
                "(sole known killer, others not run)</span>"
                for m in entry.unverified_only
            )
        rows.append(
            f'<tr><td>{number}</td><td class="mono l">{_e(entry.test)}</td><td>{len(entry.kills)}</td>'
            f'<td class="l">{guarded}</td></tr>'
        )
    return (
        '<section id="guards"><h2>Guard map</h2><p>For each test: the mutants it kills, and the paths '
        "only it guards (no other test kills those mutants). A test that kills nothing guards nothing.</p>"
        '<table class="tbl"><thead><tr><th>#</th><th class="l">test</th><th>kills</th>'
        '<th class="l">only it kills</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></section>"
    )


def to_html(run_data: RunData, *, group_by: str = "operator") -> str:
    """The complete HTML document for ``run_data``."""
    score = format_score(summarize(run_data).total.score)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>mutagent report: {_e(score)}</title><style>{CSS}{highlight_css('.hl')}</style></head><body>"
        f'<header><h1>mutagent mutation report</h1><div class="meta">{_e(run_data.root)} · mutagent '
        f'{_e(__version__)}</div><nav><a href="#summary">summary</a><a href="#survivors">survivors</a>'
        '<a href="#files">source files</a><a href="#matrix">kill matrix</a>'
        '<a href="#guards">guard map</a></nav>'
        f"</header><main>{_summary(run_data)}{_survivors(run_data)}{_files(run_data)}"
        f"{_matrix(kill_matrix(run_data, group_by))}{_guards(run_data)}</main>"
        f"<script>var MEANING = {_meanings()};{JS}</script></body></html>\n"
    )
