"""``mutagent run``/``report`` on a real target with survivors, in a sub-directory of a git repository:
GitHub annotations (repo-relative paths, changed lines only under ``--since``), the step summary,
the PR-comment Markdown, SARIF validated against the official 2.1.0 schema, the fault log the
baseline records from ``fake_model``, and the ``--fail-on-regression`` ratchet.

The target is a tiny agent that retries a 429 from the fake model server; its mutants are written
by hand (``testkit.engine_targets``), one run is shared by the module's tests.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from testkit.engine_targets import HandMutant, HandMutants, write_target
from testkit.sarif_schema import validate_sarif

from mutagent import exitcodes
from mutagent.cli import build_parser, main
from mutagent.commands import run as run_command
from mutagent.store import load_run_data

SUBDIR = "services/agent"  # the target is not the repository root
CORE = "agent/core.py"
TARGET = {
    "agent/__init__.py": "",
    CORE: """
        import json
        import urllib.error
        import urllib.request

        ATTEMPTS = 3


        def ask(base_url):
            body = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
            data = json.dumps(body).encode()
            for attempt in range(ATTEMPTS):
                request = urllib.request.Request(
                    base_url + "/v1/messages", data=data, headers={"content-type": "application/json"}
                )
                try:
                    with urllib.request.urlopen(request, timeout=5) as response:
                        return json.loads(response.read())["content"][0]["text"]
                except urllib.error.HTTPError as error:
                    if error.code != 429:
                        raise
            raise RuntimeError("gave up")
    """,
    "tests/test_core.py": """
        from mutagent.fakeserver import behaviours as b

        from agent.core import ask


        def test_a_429_is_retried(fake_model):
            fake_model.script(b.http_error(429, {"retry-after": "0"}), b.ok(text="hi"))
            assert ask(fake_model.base_url) == "hi"


        def test_a_plain_answer(fake_model):
            fake_model.script(b.ok(text="yo"))
            assert ask(fake_model.base_url) == "yo"
    """,
}
KILLED = HandMutant(CORE, "if error.code != 429:", "if error.code == 429:")
SURVIVOR = HandMutant(CORE, "ATTEMPTS = 3", "ATTEMPTS = 4")  # one attempt more: no test counts them
UNREACHED = HandMutant(CORE, 'raise RuntimeError("gave up")', "return None")  # no test gives up
SPECS = [KILLED, SURVIVOR, UNREACHED]
SLACK = ["--workers", "1", "--timeout-constant", "4"]


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def run_cli(root: Path, *flags: str) -> int:
    args = build_parser().parse_args(["run", str(root), *SLACK, *flags])
    return run_command.run(args, mutant_source=HandMutants(SPECS))


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A git repository whose ``services/agent`` is the target, committed, then run once."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    top = tmp_path_factory.mktemp("repo")
    root = write_target(top / SUBDIR, TARGET)
    git(top, "init", "-q")
    git(top, "add", ".")
    git(top, "commit", "-qm", "base")
    assert run_cli(root, "--json", str(top / "run.json")) == exitcodes.OK
    return top


def target(repo: Path) -> Path:
    return repo / SUBDIR


def annotations(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("::warning ")]


def test_the_baseline_records_what_each_test_scripts(repo: Path) -> None:
    data = load_run_data(target(repo))
    by_test = {(s["test"], s["fault"], s["position"], s["dialect"]) for s in data.faults}
    assert by_test == {
        (
            "tests/test_core.py::test_a_429_is_retried",
            "http-429+retry-after",
            "before-first-byte",
            "anthropic",
        ),
        ("tests/test_core.py::test_a_429_is_retried", "ok", "complete", "anthropic"),
        ("tests/test_core.py::test_a_plain_answer", "ok", "complete", "anthropic"),
    }
    assert len(data.faults) == 3  # each step once: the control run does not log
    report = json.loads((repo / "run.json").read_text(encoding="utf-8"))
    coverage = report["mutagent"]["faultCoverage"]
    never = {f["fault"] for f in coverage["faults"] if not f["scriptedBy"]}
    assert "http-429-wait" not in never and {"cut-tool-args", "no-stop", "drop"} <= never


def test_report_github_annotates_survivors_from_the_repository_root(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    summary = tmp_path / "step-summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    comment, sarif = tmp_path / "comment.md", tmp_path / "out.sarif"
    code = main(["report", str(target(repo)), "--github", "--markdown", str(comment), "--sarif", str(sarif)])
    assert code == exitcodes.OK
    lines = annotations(capsys.readouterr().out)
    assert len(lines) == 2  # the survivor and the mutant no test reaches
    files = {re.search(r"file=([^,]+)", line).group(1) for line in lines}
    assert files == {f"{SUBDIR}/{CORE}"}
    assert (repo / SUBDIR / CORE).is_file()  # the path resolves from the repository root
    survivor = next(line for line in lines if "ATTEMPTS" in line)
    assert "line=5," in survivor and "title=mutagent%3A" in survivor
    assert "%0A-ATTEMPTS = 3%0A+ATTEMPTS = 4" in survivor  # the diff, newlines escaped
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n")  # appended, never overwritten
    assert text[len("earlier step\n") :] == comment.read_text(encoding="utf-8")
    assert "ATTEMPTS = 4" in text and "### Fault coverage" in text
    log = validate_sarif(json.loads(sarif.read_text(encoding="utf-8")))
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]
    }
    assert uris == {f"{SUBDIR}/{CORE}"}


def test_since_limits_annotations_to_changed_lines(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    base = git(repo, "rev-parse", "HEAD").strip()
    core = target(repo) / CORE
    original = core.read_text(encoding="utf-8")
    try:
        core.write_text(original.replace("ATTEMPTS = 3", "ATTEMPTS = 3  # tuned"), encoding="utf-8")
        assert main(["report", str(target(repo)), "--since", base, "--github", "-q"]) == exitcodes.OK
    finally:
        core.write_text(original, encoding="utf-8")
    lines = annotations(capsys.readouterr().out)
    assert len(lines) == 1 and "line=5," in lines[0] and "ATTEMPTS" in lines[0]


def test_fail_on_regression_fails_when_a_detected_mutant_survives(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = json.loads((repo / "run.json").read_text(encoding="utf-8"))
    # the base report: the same run, in which the survivor had been killed
    for mutant in base["files"][f"{SUBDIR}/{CORE}"]["mutants"]:
        if mutant["replacement"] == SURVIVOR.replace:
            mutant["status"] = "Killed"
            mutant["killedBy"] = ["tests/test_core.py::test_a_429_is_retried"]
    (tmp_path / "base.json").write_text(json.dumps(base), encoding="utf-8")
    capsys.readouterr()
    code = run_cli(target(repo), "--fail-on-regression", str(tmp_path / "base.json"))
    out = capsys.readouterr().out
    assert code == exitcodes.GATE_FAILED
    assert "fail-on-regression: 1 mutants detected in" in out and "(Killed -> Survived)" in out
    assert "mutation score dropped from 66.7%" in out
    # against its own report the ratchet holds
    assert run_cli(target(repo), "--fail-on-regression", str(repo / "run.json")) == exitcodes.OK


def test_fail_on_regression_with_a_missing_base_is_one_line(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    code = main(["report", str(target(repo)), "--fail-on-regression", str(tmp_path / "nope.json")])
    assert code == exitcodes.USAGE_ERROR
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and "nope.json" in err[0]
