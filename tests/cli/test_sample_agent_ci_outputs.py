"""The CI outputs on the demo target: ``mutagent run ./sample_agent --since`` with ``--github``,
``--markdown`` and ``--sarif``, and the fault coverage its suite's baseline records.

The copy of the sample agent sits in a git repository with a few lines of ``retry.py`` touched,
so ``--since HEAD`` keeps the run to the mutants on those lines (generic operators included, two
of which survive): annotations name ``sample_agent/retry.py`` from the repository root.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from testkit import REPO
from testkit.sarif_schema import validate_sarif

from mutagent.reports.faults import fault_coverage
from mutagent.reports.merge import load_report

SAMPLE = REPO / "sample_agent"
TOUCHED = (55, 69)  # retry.py: `if math.isfinite(seconds) and seconds >= 0:`, `return max(0.0, seconds)`

pytestmark = pytest.mark.slow


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path_factory.mktemp("repo")
    shutil.copytree(SAMPLE, repo / "sample_agent", ignore=shutil.ignore_patterns(".mutagent", "__pycache__"))
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "sample agent")
    retry = repo / "sample_agent" / "retry.py"
    lines = retry.read_text(encoding="utf-8").splitlines(keepends=True)
    for number in TOUCHED:
        lines[number - 1] = lines[number - 1].rstrip("\n") + "  # reviewed\n"
    retry.write_text("".join(lines), encoding="utf-8")
    env = {**os.environ, "GITHUB_STEP_SUMMARY": str(repo / "step-summary.md")}
    command = [
        sys.executable,
        "-m",
        "mutagent",
        "run",
        "sample_agent",
        "--operators",
        "all",
        "--since",
        "HEAD",
    ]
    command += ["--workers", "2", "--github", "--markdown", "comment.md", "--sarif", "out.sarif"]
    command += ["--json", "out.json"]
    done = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return repo, done


def test_survivors_are_annotated_from_the_repository_root(run):
    repo, done = run
    annotations = [line for line in done.stdout.splitlines() if line.startswith("::warning ")]
    report = load_report(repo / "out.json")
    survivors = [m for m in report.mutants if report.results[m.id].status.value in ("Survived", "NoCoverage")]
    assert survivors and len(annotations) == len(survivors)
    for line in annotations:
        assert line.startswith("::warning file=sample_agent/retry.py,line=")
        line_number = int(line.split("line=", 1)[1].split(",", 1)[0])
        assert line_number in TOUCHED
    summary = (repo / "step-summary.md").read_text(encoding="utf-8")
    assert summary == (repo / "comment.md").read_text(encoding="utf-8")
    assert f"### Surviving mutants ({len(survivors)})" in summary
    log = validate_sarif(json.loads((repo / "out.sarif").read_text(encoding="utf-8")))
    results = log["runs"][0]["results"]
    assert len(results) == len(survivors)
    assert {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results} == {
        "sample_agent/retry.py"
    }


def test_fault_coverage_of_the_sample_agent(run):
    repo, done = run
    coverage = fault_coverage(load_report(repo / "out.json"))
    assert coverage.dialects == ["anthropic"]
    never = {row.fault.key for row in coverage.never}
    # what the sample agent's suite never scripts (its one cut in a tool-call turn lands mid-text)
    assert never == {"http-overloaded-ms", "cut-start", "cut-tool-args", "endless"}
    scripted = {row.fault.key: len(row.tests) for row in coverage.rows if row.tests}
    assert scripted["cut-text"] >= 2 and scripted["tool-call"] >= 10 and scripted["no-stop"] >= 1
    assert "faults never scripted: 4 of 17" in done.stdout
