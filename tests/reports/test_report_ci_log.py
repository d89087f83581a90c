"""A report that fits a CI log, and paths a CI can use: compact default, nothing cut mid-word,
NoCoverage apart from Survived, repository-relative file paths, the OpenAI base URL, no generated
files in the repository."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest
from rich.console import Console
from testkit import REPO
from testkit.sample_runs import large_run_data, parametrised_run_data, sample_run_data

from mutagent.cli import main
from mutagent.console import console as cli_console
from mutagent.fakeserver import FakeModelServer
from mutagent.fakeserver import behaviours as b
from mutagent.model import Status
from mutagent.reports.repopaths import repo_relative
from mutagent.reports.terminal import render_mutant, render_terminal
from mutagent.reports.writer import write_reports


def rendered(data, width: int = 80, **options) -> str:
    console = Console(record=True, width=width, color_system=None)
    render_terminal(data, console, **options)
    return console.export_text()


def test_the_default_report_is_compact_and_verbose_adds_matrix_and_guard_map() -> None:
    data = sample_run_data()
    compact, verbose = rendered(data), rendered(data, verbose=True)
    assert "Kill matrix" not in compact and "Guard map" not in compact
    assert "Kill matrix" in verbose and "Guard map" in verbose
    assert "Mutants by operator" in compact and "mutation score" in compact
    assert "-MAX_RETRIES = 3" in compact and "covered by:" in compact  # survivors with their diff
    # the tests that guard nothing stay in the compact report
    assert "1 test guards nothing" in compact and "tests/test_smoke.py::test_imports" in compact
    assert len(compact.splitlines()) < len(verbose.splitlines()) / 1.5


def physical_lines(text: str, width: int = 80) -> int:
    """Lines on an 80-column terminal: a line the console did not wrap (soft_wrap) takes several."""
    from rich.cells import cell_len

    return sum(max(1, -(-cell_len(line) // width)) for line in text.splitlines())


def test_a_28_mutant_report_on_a_parametrised_suite_stays_under_150_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 26: a 28-mutant run printed 973 lines, each survivor listing up to 32 parametrised ids."""
    data = parametrised_run_data()
    assert len(data.mutants) == 28 and len(data.tests) == 58
    report = tmp_path / "run.json"
    write_reports(data, json=report)
    monkeypatch.setattr(cli_console, "width", 80)
    capsys.readouterr()
    assert main(["report", "--from", str(report)]) == 0
    compact = capsys.readouterr().out
    assert physical_lines(compact) < 150, compact
    text = " ".join(compact.split())
    # every undetected mutant is there with its id, and the cases of a test are counted, not listed
    for mutant in data.mutants[:6]:
        assert f"[{mutant.id}]" in text
    assert "tests/test_stream.py::test_stream (32 cases)" in text and "[case-17]" not in text
    assert "tests/test_stream.py::test_stream (29 of 32 cases, each covers 26, kills none)" in text
    assert "2 tests with no mutant to guard" in text
    capsys.readouterr()
    assert main(["report", "--from", str(report), "--verbose"]) == 0  # --verbose lists every id
    verbose = capsys.readouterr().out.replace("\n", "")
    assert all(test.nodeid in verbose for test in data.tests[:32])


def test_every_count_agrees_with_its_noun() -> None:
    """Issue 26: "1 files", "1 tests", "1 undetected mutants"."""
    from mutagent.reports.gate import evaluate_gate

    data = sample_run_data()
    (survivor,) = [m for m in data.mutants if data.result_of(m).status is Status.SURVIVED][:1]
    one = replace(data, mutants=[survivor], tests=data.tests[:1])
    text = " ".join(rendered(one, width=200).split())
    assert "1 mutant in 1 file, 1 test)" in text
    assert "1 undetected mutant: 1 survived" in text
    assert "max-survived: 1 mutant survived" in evaluate_gate(one, max_survived=0).failures[0]


def test_the_header_counts_no_coverage_apart_from_survived() -> None:
    data = sample_run_data()
    survived = sum(1 for m in data.mutants if data.result_of(m).status is Status.SURVIVED)
    uncovered = sum(1 for m in data.mutants if data.result_of(m).status is Status.NO_COVERAGE)
    assert survived and uncovered
    text = " ".join(rendered(data, width=200).split())
    assert f"{survived} survived, {uncovered} not covered" in text
    assert f"{survived} survived (tests reached the bug and passed), {uncovered} not covered" in text


def test_test_names_and_ids_are_never_cut_at_80_columns() -> None:
    data = large_run_data(n_tests=30, n_mutants=100)
    text = rendered(data, verbose=True)
    assert "…" not in text
    flat = text.replace("\n", "")
    for test in data.tests:
        assert test.nodeid.split("::", 1)[1] in flat
    for mutant in data.mutants:
        if data.result_of(mutant).status in (Status.SURVIVED, Status.NO_COVERAGE):
            assert f"[{mutant.id}]" in text


def test_a_mutant_panel_keeps_its_id_whole_on_a_narrow_terminal() -> None:
    data = sample_run_data()
    mutant = replace(data.mutants[0], file="a/very/long/path/into/the/agent/package/retry_and_backoff.py")
    data = replace(data, mutants=[mutant, *data.mutants[1:]], sources={**data.sources, mutant.file: ""})
    console = Console(record=True, width=60, color_system=None)
    console.print(render_mutant(data, mutant, details=True))
    text = console.export_text()
    assert f"[{mutant.id}]" in text and "…" not in text


@pytest.fixture
def repo_with_target(tmp_path: Path) -> Path:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    target = tmp_path / "repo" / "services" / "agent"
    target.mkdir(parents=True)
    return target


def test_repo_relative_paths(repo_with_target: Path, tmp_path: Path) -> None:
    assert repo_relative(Path("agent/loop.py"), repo_with_target) == "services/agent/agent/loop.py"
    assert repo_relative(repo_with_target / "x.py", repo_with_target) == "services/agent/x.py"
    outside = tmp_path / "plain"
    outside.mkdir()
    assert repo_relative(Path("agent/loop.py"), outside) == "agent/loop.py"
    assert repo_relative(Path("agent/loop.py"), tmp_path / "gone") == "agent/loop.py"


def test_junit_and_json_paths_are_relative_to_the_repository_root(
    repo_with_target: Path, tmp_path: Path
) -> None:
    data = sample_run_data(root=str(repo_with_target))
    junit, report = tmp_path / "j.xml", tmp_path / "r.json"
    write_reports(data, json=report, junit=junit)
    files = {case.get("file") for case in ET.parse(junit).getroot().iter("testcase")}
    assert files == {f"services/agent/{m.file}" for m in data.mutants}
    written = json.loads(report.read_text())
    assert set(written["files"]) == {f"services/agent/{f}" for f in data.sources}
    # read back and written again: the paths stay repository-relative, never prefixed twice
    again = tmp_path / "again.json"
    from mutagent.reports.merge import load_report

    write_reports(load_report(report), json=again)
    assert set(json.loads(again.read_text())["files"]) == set(written["files"])


def test_fake_model_gives_the_openai_base_url() -> None:
    openai = pytest.importorskip("openai")
    with FakeModelServer() as server:
        assert server.openai_base_url == server.base_url + "/v1"
        server.script(b.ok(text="hello"))
        client = openai.OpenAI(base_url=server.openai_base_url, api_key="test", max_retries=0)
        reply = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        assert reply.choices[0].message.content == "hello"
        assert server.requests[0].path == "/v1/chat/completions"


def test_the_fixture_documentation_names_openai_base_url() -> None:
    readme = (REPO / "mutagent" / "fakeserver" / "README.md").read_text()
    assert "fake_model.openai_base_url" in readme


@pytest.mark.skipif(
    shutil.which("git") is None or not (REPO / ".git").exists(), reason="needs a git checkout"
)
def test_no_generated_file_is_committed() -> None:
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    generated = [
        f for f in tracked if re.search(r"(^|/)(\.coverage(\..*)?|\.mutagent/.*|__pycache__/.*)$", f)
    ]
    assert generated == []
    ignored = (REPO / ".gitignore").read_text().splitlines()
    assert ".coverage" in ignored and ".mutagent/" in ignored
