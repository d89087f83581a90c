"""No green over nothing, and honest edges: empty runs, an applied mutant, pass-through pytest
arguments, Ctrl-C. Each test runs the real ``mutagent run`` command on a tiny target."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from testkit import REPO
from testkit.engine_targets import HandMutant, HandMutants, write_target
from testkit.sample_runs import sample_run_data

from mutagent import exitcodes
from mutagent.cli import build_parser, main
from mutagent.commands import run as run_command
from mutagent.engine.orchestration.invocation import option_arguments
from mutagent.errors import UsageError
from mutagent.reports.gate import evaluate_gate
from mutagent.store import load_run_data

# Plain arithmetic: no agent operator matches anything here.
TARGET = {
    "calc/__init__.py": "",
    "calc/core.py": """
        def add(a, b):
            return a + b
    """,
    "tests/test_calc.py": """
        from calc.core import add

        def test_add():
            assert add(2, 3) == 5
    """,
}
SLACK = ["--workers", "1", "--timeout-constant", "4"]
KILLABLE = [HandMutant("calc/core.py", "return a + b", "return a - b")]


def run_cli(root: Path, *flags: str, specs: list[HandMutant] | None = None) -> int:
    args = build_parser().parse_args(["run", str(root), *SLACK, *flags])
    return run_command.run(args, mutant_source=HandMutants(specs) if specs is not None else None)


def test_a_target_no_operator_matches_fails_with_one_line_even_under_fail_under_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = write_target(tmp_path / "t", TARGET)
    assert main(["run", str(root), *SLACK, "--fail-under", "0"]) == exitcodes.NO_MUTANTS == 5
    captured = capsys.readouterr()
    (line,) = captured.err.strip().splitlines()
    assert "no operator of --operators agent matched any of the 2 source files scanned" in line
    assert "--operators generic" in line and f"mutagent map {root}" in line
    assert "every reachable bug was caught" not in captured.out + captured.err
    assert "mutation score" not in captured.out


def test_a_gate_never_passes_on_zero_scored_mutants() -> None:
    data = sample_run_data()
    empty = type(data)(root=data.root, mutants=[], results={}, tests=data.tests, sources=data.sources)
    for rules in ({"fail_under": 0.0}, {"max_survived": 1000}, {"fail_under": 0.0, "max_survived": 0}):
        gate = evaluate_gate(empty, **rules)
        assert not gate.passed, rules
        assert any("no scored mutant" in message for message in gate.failures)


def test_report_on_an_empty_run_fails_the_gate_and_claims_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = write_target(tmp_path / "t", TARGET)
    assert main(["run", str(root), *SLACK]) == exitcodes.NO_MUTANTS
    capsys.readouterr()
    assert main(["report", str(root), "--fail-under", "0"]) == exitcodes.GATE_FAILED
    out = " ".join(capsys.readouterr().out.split())
    assert "gate FAILED" in out and "no scored mutant" in out
    assert "every reachable bug was caught" not in out


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_since_on_a_change_without_source_is_nothing_to_test(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = write_target(tmp_path / "t", TARGET)
    for command in (
        ["init", "-q"],
        ["add", "."],
        ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "t"],
    ):
        subprocess.run(["git", *command], cwd=root, check=True, capture_output=True)
    (root / "NOTES.md").write_text("docs\n", encoding="utf-8")
    assert run_cli(root, "--since", "HEAD", "--fail-under", "80", specs=KILLABLE) == exitcodes.OK
    out = " ".join(capsys.readouterr().out.split())
    assert "nothing to test: the change since HEAD touches none of the 1 mutated lines" in out
    assert "mutation score" not in out and "gate passed" not in out


def test_run_refuses_while_a_mutant_is_applied_and_names_the_revert_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = write_target(tmp_path / "t", TARGET)
    assert run_cli(root, specs=KILLABLE) == exitcodes.OK
    (mutant,) = load_run_data(root).mutants
    assert main(["apply", mutant.id, str(root)]) == 0
    capsys.readouterr()
    with pytest.raises(UsageError) as raised:
        run_cli(root, specs=KILLABLE)
    message = str(raised.value)
    assert f"mutant {mutant.id}" in message and "still applied" in message
    assert f"mutagent apply {mutant.id} {root} --revert" in message
    assert main(["run", str(root), *SLACK]) == exitcodes.USAGE_ERROR  # one line through the CLI
    assert "still applied" in capsys.readouterr().err
    assert main(["apply", mutant.id, str(root), "--revert"]) == 0
    assert run_cli(root, specs=KILLABLE) == exitcodes.OK  # reverted: runs again


def test_a_mutant_restored_by_git_or_an_editor_does_not_block_the_run(tmp_path: Path) -> None:
    root = write_target(tmp_path / "t", TARGET)
    assert run_cli(root, specs=KILLABLE) == exitcodes.OK
    original = (root / "calc/core.py").read_text()
    (mutant,) = load_run_data(root).mutants
    assert main(["apply", mutant.id, str(root)]) == 0
    (root / "calc/core.py").write_text(original)  # restored without --revert
    assert run_cli(root, specs=KILLABLE) == exitcodes.OK


def test_value_arguments_are_never_probed_as_paths(tmp_path: Path) -> None:
    long_expression = " or ".join(f"test_case_number_{n}" for n in range(60))  # > 255 bytes
    (tmp_path / "tests").mkdir()
    (tmp_path / "slow").mkdir()  # a -m value that happens to name a folder is still a value
    args = ["tests", "-k", long_expression, "-m", "slow", "-p", "no:randomly", "--tb=short", "-x"]
    assert option_arguments(args, tmp_path) == args[1:]
    assert option_arguments([long_expression], tmp_path) == [long_expression]


def test_a_long_k_expression_passes_through_to_pytest(tmp_path: Path) -> None:
    root = write_target(tmp_path / "t", TARGET)
    long_expression = "test_add or " + " or ".join(f"test_case_number_{n}" for n in range(60))
    tests = f"tests/test_calc.py -k '{long_expression}'"
    assert run_cli(root, "--tests", tests, specs=KILLABLE) == exitcodes.OK
    (result,) = load_run_data(root).results.values()
    assert result.status.value == "Killed"


def test_ctrl_c_says_how_many_results_are_kept_and_that_a_rerun_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_target(tmp_path / "t", TARGET)
    assert run_cli(root, specs=KILLABLE) == exitcodes.OK
    capsys.readouterr()

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("mutagent.engine.orchestration.runner.run_engine", interrupted)
    assert main(["run", str(root), *SLACK]) == exitcodes.INTERRUPTED == 130
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "interrupted: 1 mutant results are kept" in line and "again to resume" in line


def test_help_documents_the_new_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "5 no mutants" in out and "130 interrupted" in out
    readme = " ".join((REPO / "README.md").read_text().split())
    assert "`5` no mutants" in readme and "`130` interrupted" in readme
