"""Every code snippet in every report is a test mutagent ran, or it is absent.

A survivor's hint used to end with a fake-server test that "would kill it"; most of those never
did. Now a report shows code only for a ``Suggestion`` (``mutagent suggest`` ran it on the
original, where it passed every time, and on the mutant, where it failed): without one, every
renderer gives the advice in words.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

from rich.console import Console
from testkit.sample_runs import sample_run_data

from mutagent.model import MutantResult, RunData, Status, Suggestion
from mutagent.reports.github import annotations, markdown_summary
from mutagent.reports.hints import RECIPES
from mutagent.reports.html_report import to_html
from mutagent.reports.junit import to_junit
from mutagent.reports.sarif import to_sarif
from mutagent.reports.stryker import to_stryker_json
from mutagent.reports.terminal import render_terminal
from mutagent.store import Store

VERIFIED = """def test_a_dropped_409_is_retried(fake_model, make_agent):
    h = make_agent()
    fake_model.script(b.http_error(409), b.ok(text="Hi"))

    assert h.agent.run("hello") == "Hi"
"""
# what the unverified snippets of old looked like: a script, a client, a call, a check
CODE_MARKERS = ("fake_model.script(", "run_your_loop(", "max_retries=0)", "result = ", "```python")


def every_agent_operator_survives() -> RunData:
    """The sample run with one surviving mutant per agent operator, on a streaming Anthropic loop."""
    data = sample_run_data()
    template = next(m for m in data.mutants if data.result_of(m).status is Status.SURVIVED)
    mutants, results = [], {}
    for index, operator in enumerate(sorted(RECIPES)):
        mutant = replace(template, id=f"m{index:03d}", operator=operator, description=f"{operator} mutant")
        mutants.append(mutant)
        results[mutant.id] = MutantResult(
            mutant.id, Status.SURVIVED, covered_by=["tests/test_loop.py::test_x"]
        )
    return replace(data, mutants=mutants, results=results)


def rendered(data: RunData) -> dict[str, str]:
    """Every report of ``data`` as text."""
    console = Console(record=True, width=100, color_system=None)
    render_terminal(data, console, survivor_details=None, verbose=True)
    return {
        "terminal": " ".join(console.export_text().replace("│", " ").split()),  # panels unwrapped
        "html": to_html(data),
        "markdown": markdown_summary(data),
        "sarif": json.dumps(to_sarif(data)),
        "annotations": "\n".join(annotations(data)),
        "junit": to_junit(data),
        "json": json.dumps(to_stryker_json(data)),
    }


def hint_blocks(html: str) -> list[str]:
    return re.findall(r'<div class="hint">(.*?)</div>(?=<div|</details>|$)', html, flags=re.S)


def test_no_report_prints_a_snippet_nobody_ran() -> None:
    data = every_agent_operator_survives()
    for name, text in rendered(data).items():
        for marker in CODE_MARKERS:
            assert marker not in text, (name, marker)
        assert "verified by mutagent suggest" not in text, name
    blocks = hint_blocks(to_html(data))  # each survivor is in the survivors and in the mutant list
    assert len(blocks) == 2 * len(RECIPES) and not any("<pre" in block for block in blocks)


def test_a_verified_suggestion_is_shown_as_code_for_its_mutant_only() -> None:
    data = every_agent_operator_survives()
    chosen = data.mutants[3]
    suggestion = Suggestion(
        chosen.id,
        "test_a_dropped_409_is_retried",
        VERIFIED,
        "tests/test_retries.py",
        fault="HTTP 409 before request 1",
        original_runs=3,
        mutant_failure="ModelCallError: model call failed (status_409)",
    )
    reports = rendered(replace(data, suggestions={chosen.id: suggestion}))
    for name in ("terminal", "html", "markdown", "sarif", "junit"):
        text = reports[name]
        shown = 2 if name in ("html", "sarif") else 1  # HTML: two lists; SARIF: text and markdown
        assert text.count("test_a_dropped_409_is_retried") == shown, name
        assert "passed 3 times on the original" in text, name
        assert "fake_model.script(" in text.replace("&quot;", '"'), name
    assert "```python" in reports["markdown"] and "```python" in reports["sarif"]
    blocks = hint_blocks(reports["html"])
    assert sum("<pre" in block for block in blocks) == 2
    # an annotation carries the advice only; the JSON report has no hints at all
    assert "fake_model.script(" not in reports["annotations"] and "fake_model.script(" not in reports["json"]


def test_a_suggestion_is_dropped_when_its_mutant_changes(tmp_path: Path) -> None:
    """Verified on one version of the code: shown only while the mutant's fingerprint holds."""
    data = sample_run_data(str(tmp_path))
    mutant = data.mutants[0]
    store = Store.open(tmp_path)
    try:
        store.set_run(data.mutants, {m.id: "fp-1" for m in data.mutants}, data.tests, data.sources)
        store.save_suggestion(
            Suggestion(mutant.id, "test_x", "def test_x():\n    pass\n", "tests/t.py"), "fp-1"
        )
        assert set(store.run_data(tmp_path).suggestions) == {mutant.id}
        store.set_run(data.mutants, {m.id: "fp-2" for m in data.mutants}, data.tests, data.sources)
        assert store.run_data(tmp_path).suggestions == {}
    finally:
        store.close()
