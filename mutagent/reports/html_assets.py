"""The HTML report's inline stylesheet and script (kept apart from the markup that uses them).

The script does the report's navigation without any library: view tabs, the mutant filters
(status, operator, file) and text search, the file tree selecting a file, the test view's
filters, opening the ``<details>`` a link points into, and the kill-matrix tooltips.
"""

CSS = """
:root{--ok:#1a7f37;--bad:#cf222e;--warn:#9a6700;--mute:#6e7781;--line:#d0d7de;--bg:#f6f8fa}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1f2328}
header{padding:12px 16px 0;border-bottom:1px solid var(--line);position:sticky;top:0;background:#fff;
 z-index:5}
.layout{display:flex;align-items:flex-start;max-width:1400px;margin:0 auto}
aside#tree{width:260px;flex:none;position:sticky;top:96px;max-height:calc(100vh - 100px);overflow:auto;
 padding:8px 8px 16px 16px;font-size:13px;border-right:1px solid var(--line)}
main{flex:1;min-width:0;padding:0 16px 32px}
nav.tabs button{font:inherit;border:1px solid var(--line);border-bottom:none;background:var(--bg);
 padding:4px 12px;border-radius:6px 6px 0 0;cursor:pointer;margin:0 2px 0 0}
nav.tabs button.active{background:#fff;font-weight:600;position:relative;top:1px}
h1{font-size:20px;margin:0 0 6px}h2{border-bottom:1px solid var(--line);padding-bottom:4px;margin-top:24px}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
table{border-collapse:collapse}
.tbl td,.tbl th{border:1px solid var(--line);padding:3px 8px;text-align:right}
.tbl td:first-child,.tbl th:first-child{text-align:left}
.tbl tfoot td{font-weight:600}
.score{font-size:30px;font-weight:700}
.good{color:var(--ok)}.fair{color:var(--warn)}.poor{color:var(--bad)}
.st{display:inline-block;min-width:1.6em;padding:0 4px;border-radius:4px;color:#fff;font-weight:600;
 text-align:center;text-decoration:none;font-size:11.5px;margin-right:2px}
.st-Killed{background:var(--ok)}.st-Timeout{background:#0969da}.st-Survived{background:var(--bad)}
.st-NoCoverage{background:#bc4c00}.st-Ignored,.st-Pending{background:var(--mute)}
.st-CompileError{background:#8250df}.st-RuntimeError{background:var(--warn)}
details.mrow{border:1px solid var(--line);border-radius:6px;margin:4px 0;padding:2px 10px}
details.mrow>summary{cursor:pointer;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
details.mrow[open]{padding-bottom:8px}
.mutant .meta,.meta{color:var(--mute)}
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
#filters{display:flex;flex-wrap:wrap;gap:6px 14px;align-items:center;padding:8px;background:var(--bg);
 border:1px solid var(--line);border-radius:6px;margin:8px 0}
#filters label{white-space:nowrap}
#f-search{min-width:220px}
.tree ul{list-style:none;margin:0;padding-left:14px}.tree>ul{padding-left:0}
.tree a{text-decoration:none;color:inherit;display:flex;justify-content:space-between;gap:6px;padding:1px 4px;
 border-radius:4px}
.tree a:hover,.tree a.sel{background:#ddf4ff}
.tree summary{cursor:pointer;white-space:nowrap}
.tree .sc{font-variant-numeric:tabular-nums;white-space:nowrap}
.mxfile{margin:8px 0}
.mxwrap{overflow:auto;max-height:75vh;border:1px solid var(--line);max-width:100%}
.mx{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:11px}
.mx td,.mx th{width:13px;min-width:13px;height:15px;padding:0;text-align:center;border:1px solid #eee}
.mx thead th{position:sticky;background:#fff;z-index:2}
.mx thead tr:first-child th{top:0}.mx thead tr:nth-child(2) th{top:16px}
.mx th.t{width:auto;max-width:320px;text-align:left;padding-right:8px;white-space:nowrap;overflow:hidden;
 text-overflow:ellipsis;font-weight:400;border:none;position:sticky;left:0;background:#fff;z-index:1}
.mx thead th.t{z-index:3}
.mx th.g{font-weight:600;border-left:2px solid #888;text-align:left;padding-left:2px;white-space:nowrap;
 overflow:hidden;max-width:0}
.mx td.gs,.mx th.gs{border-left:2px solid #888}
.c-sole{background:#1a7f37;color:#fff}.c-kill{background:#8cd9a0}.c-cov{background:#fff1b8}.c-nrun{background:#eee}
.mx tr:hover th.t{background:#fff1b8}
.mx .st{display:block;min-width:0;padding:0;margin:0;border-radius:2px;font-size:10px}
.tbl td.l,.tbl th.l{text-align:left}
.legend span{display:inline-block;margin-right:14px}
.legend i{display:inline-block;width:12px;height:12px;border:1px solid #ccc;vertical-align:middle;
 margin-right:4px}
.nothing{color:var(--bad);font-weight:600}
details.trow{border-bottom:1px solid var(--line);padding:3px 0}
details.trow>summary{cursor:pointer}
details.trow ul{margin:4px 0 6px}
.never{color:var(--bad);font-weight:600}
[hidden]{display:none!important}
"""

JS = """
var TABS = ['mutants', 'files', 'guards', 'matrix', 'faults'];
function showTab(name) {
  document.querySelectorAll('section.tab').forEach(function (s) { s.hidden = s.id !== name; });
  document.querySelectorAll('nav.tabs button').forEach(function (b) {
    b.classList.toggle('active', b.getAttribute('data-tab') === name);
  });
}
function reveal() {
  var id = decodeURIComponent(location.hash.slice(1));
  var el = id ? document.getElementById(id) : null;
  if (!el) { return; }
  var section = el.closest('section.tab');
  if (section) { showTab(section.id); }
  if (el.hidden) { el.hidden = false; }
  for (var node = el; node; node = node.parentElement) {
    if (node.tagName === 'DETAILS') { node.open = true; }
  }
  el.scrollIntoView();
}
var rows = Array.prototype.slice.call(document.querySelectorAll('#mutant-list details.mrow'));
var fileSelect = document.getElementById('f-file');
function applyFilters() {
  var statuses = {};
  document.querySelectorAll('input[data-filter=status]').forEach(function (box) {
    statuses[box.value] = box.checked;
  });
  var op = document.getElementById('f-operator').value;
  var file = fileSelect.value;
  var query = document.getElementById('f-search').value.trim().toLowerCase();
  var shown = 0;
  rows.forEach(function (row) {
    var ok = statuses[row.getAttribute('data-status')] &&
      (!op || row.getAttribute('data-operator') === op) &&
      (!file || row.getAttribute('data-file') === file) &&
      (!query || row.getAttribute('data-search').indexOf(query) >= 0);
    row.hidden = !ok;
    if (ok) { shown += 1; }
  });
  document.getElementById('shown-count').textContent = shown + ' of ' + rows.length + ' mutants shown';
  document.querySelectorAll('.tree a[data-file]').forEach(function (a) {
    a.classList.toggle('sel', !!file && a.getAttribute('data-file') === file);
  });
}
document.querySelectorAll('#filters input, #filters select').forEach(function (input) {
  input.addEventListener('input', applyFilters);
  input.addEventListener('change', applyFilters);
});
document.querySelectorAll('.tree a[data-file]').forEach(function (a) {
  a.addEventListener('click', function (event) {
    event.preventDefault();
    fileSelect.value = a.getAttribute('data-file');
    applyFilters();
    showTab('mutants');
  });
});
document.getElementById('f-clear').addEventListener('click', function () {
  document.querySelectorAll('input[data-filter=status]').forEach(function (box) { box.checked = true; });
  document.getElementById('f-operator').value = '';
  fileSelect.value = '';
  document.getElementById('f-search').value = '';
  applyFilters();
});
var idleOnly = document.getElementById('t-idle');
var testQuery = document.getElementById('t-search');
function applyTestFilter() {
  var q = testQuery.value.trim().toLowerCase();
  document.querySelectorAll('#test-list details.trow').forEach(function (row) {
    row.hidden = (idleOnly.checked && row.getAttribute('data-idle') !== '1') ||
      (q && row.getAttribute('data-test').toLowerCase().indexOf(q) < 0);
  });
}
idleOnly.addEventListener('change', applyTestFilter);
testQuery.addEventListener('input', applyTestFilter);
document.querySelectorAll('nav.tabs button').forEach(function (b) {
  b.addEventListener('click', function () { showTab(b.getAttribute('data-tab')); });
});
document.querySelectorAll('.mx table').forEach(function (table) {
  table.addEventListener('mouseover', function (event) {
    var cell = event.target.closest('td');
    if (!cell || cell.title) { return; }
    var head = table.tHead.rows[1].cells[cell.cellIndex];
    var link = head ? head.querySelector('a') : null;
    var meaning = MEANING.none;
    cell.classList.forEach(function (name) { if (MEANING[name]) { meaning = MEANING[name]; } });
    cell.title = cell.parentElement.cells[0].title + ' \\u00d7 ' + (link ? link.title : '') + ': ' + meaning;
  });
});
document.querySelectorAll('button[data-toggle]').forEach(function (button) {
  button.addEventListener('click', function () {
    var table = document.getElementById(button.getAttribute('data-toggle'));
    var compact = table.classList.toggle('compact');
    button.textContent = compact ? 'show the whole file' : 'show only lines near mutants';
  });
});
showTab('mutants');
applyFilters();
window.addEventListener('hashchange', reveal);
reveal();
"""
