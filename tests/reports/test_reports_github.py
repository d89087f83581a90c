"""``--github`` and ``--markdown``: workflow-command escaping, changed lines, repo paths, the summary."""

from __future__ import annotations

import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
from testkit.sample_runs import sample_fault_log, sample_run_data

from mutagent.model import Location
from mutagent.reports.github import (
    COMMENT_MARKER,
    annotation_line,
    annotations,
    escape_data,
    escape_property,
    markdown_summary,
    write_step_summary,
)
from mutagent.reports.guards import guard_map
from mutagent.reports.repopaths import repo_relative
from mutagent.reports.stats import undetected_mutants


def test_escaping_follows_the_workflow_command_rules():
    assert escape_data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    assert escape_data("a:b,c") == "a:b,c"  # the message keeps colons and commas


def test_one_annotation_per_survivor_with_escaped_properties():
    data = sample_run_data()
    data.root = "/nonexistent/target"  # outside git: paths stay relative to the target
    lines = annotations(data)
    survivors = undetected_mutants(data)
    assert len(lines) == len(survivors)
    for line, mutant in zip(lines, survivors, strict=True):
        head, message = line.split("::", 2)[1:]
        assert head.startswith(f"warning file={mutant.file},line={mutant.location.start_line},")
        assert "\n" not in line and "title=mutagent%3A " in head
        assert mutant.id in message


def test_a_title_with_a_comma_is_escaped():
    data = sample_run_data()
    survivor = undetected_mutants(data)[0]
    data.mutants[data.mutants.index(survivor)] = replace(survivor, operator="a,b:c")
    line = next(line for line in annotations(data) if "a%2Cb%3Ac" in line)
    assert line.count("::") == 2  # the only '::' are the command's own


def test_changed_lines_pick_the_first_changed_line_of_the_span():
    mutant = replace(undetected_mutants(sample_run_data())[0], location=Location(10, 0, 12, 1))
    assert annotation_line(mutant, None) == 10
    assert annotation_line(mutant, {mutant.file: {11, 30}}) == 11
    assert annotation_line(mutant, {mutant.file: {30}}) is None
    assert annotation_line(mutant, {}) is None


def test_repo_relative_uses_the_git_toplevel(tmp_path: Path):
    sub = tmp_path / "repo" / "services" / "agent"
    sub.mkdir(parents=True)
    (sub / "loop.py").write_text("x = 1\n", encoding="utf-8")
    assert repo_relative(Path("loop.py"), sub) == "loop.py"  # not in git yet
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    repo_relative_cache_clear()
    assert repo_relative(Path("loop.py"), sub) == "services/agent/loop.py"
    assert repo_relative(sub / "loop.py", sub) == "services/agent/loop.py"


def repo_relative_cache_clear() -> None:
    from mutagent.reports import repopaths

    repopaths._toplevel.cache_clear()


def test_markdown_summary_has_score_operators_survivors_hints_and_idle_tests():
    data = replace(sample_run_data(), faults=sample_fault_log())
    text = markdown_summary(data)
    assert text.startswith(COMMENT_MARKER + "\n## mutagent: mutation score 70.0%")
    assert "| operator | mutants | killed | survived | timeout | no coverage | score |" in text
    for mutant in undetected_mutants(data):
        assert f"`mutagent show {mutant.id}`" in text
    for entry in guard_map(data):
        assert (f"`{entry.test}`" in text) == entry.guards_nothing
    assert text.count("<details>") == text.count("</details>") == len(undetected_mutants(data))
    assert "### Fault coverage" in text and "**never**" in text


def test_step_summary_is_appended_only_on_github(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    assert write_step_summary("x") is None
    target = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(target))
    write_step_summary("one\n")
    write_step_summary("two\n")
    assert target.read_text(encoding="utf-8") == "one\ntwo\n"


def test_a_long_summary_is_cut_between_survivors(monkeypatch: pytest.MonkeyPatch):
    from mutagent.reports import github

    monkeypatch.setattr(github, "MAX_CHARS", 1500)
    text = markdown_summary(sample_run_data())
    assert "(truncated to fit a comment" in text and len(text) < 1600
    assert text.count("```") % 2 == 0 and text.count("<details>") == text.count("</details>")
