"""``mutagent run`` on the command line: one-line errors, exit codes, CI-friendly output, the gate."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from testkit.engine_targets import ENGINE_TARGETS, HandMutant, HandMutants, write_target

from mutagent import exitcodes
from mutagent.cli import main

TARGET = {
    "calc/__init__.py": "",
    "calc/core.py": """
        def add(a, b):
            return a + b
    """,
    "tests/test_calc.py": """
        from calc.core import add

        def test_add():
            assert add(2, 2) == 4
    """,
}


def error_lines(capsys: pytest.CaptureFixture[str]) -> list[str]:
    return [line for line in capsys.readouterr().err.splitlines() if line.strip()]


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["--workers", "0"], "--workers must be a whole number"),
        (["--timeout-factor", "fast"], "--timeout-factor must be a number"),
        (["--paths", "nowhere"], "--paths 'nowhere' does not exist"),
        (["--tests", "'unclosed"], "--tests: cannot split"),
    ],
)
def test_bad_options_are_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], fragment: str
) -> None:
    root = write_target(tmp_path / "t", TARGET)
    assert main(["run", *argv, str(root)]) == exitcodes.USAGE_ERROR
    lines = error_lines(capsys)
    assert len(lines) == 1 and fragment in lines[0]


def test_an_unknown_pyproject_key_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = write_target(tmp_path / "t", {**TARGET, "pyproject.toml": "[tool.mutagent]\noperator = 'all'\n"})
    assert main(["run", str(root)]) == exitcodes.USAGE_ERROR
    lines = error_lines(capsys)
    assert len(lines) == 1 and "unknown key 'operator'" in lines[0]


@pytest.mark.parametrize(
    "make, fragment",
    [
        (lambda p: p / "missing", "does not exist"),
        (
            lambda p: write_target(p / "nosrc", {"tests/test_a.py": "def test_a():\n    pass\n"}),
            "no Python sources",
        ),
        (
            lambda p: write_target(p / "notests", {"calc/__init__.py": "", "calc/core.py": ""}),
            "no tests found",
        ),
    ],
)
def test_unusable_targets_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make, fragment: str
) -> None:
    assert main(["run", str(make(tmp_path))]) == exitcodes.USAGE_ERROR
    lines = error_lines(capsys)
    assert len(lines) == 1 and fragment in lines[0]


def test_help_documents_the_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "3 baseline not green" in out and "--exclude-flaky" in out


def test_a_ci_run_prints_plain_lines_and_the_gate_fails_on_survivors(tmp_path: Path) -> None:
    root = write_target(tmp_path / "t", TARGET)
    spec = tmp_path / "mutants.json"
    spec.write_text(
        HandMutants(
            [
                HandMutant("calc/core.py", "return a + b", "return a * b"),
                HandMutant("calc/core.py", "return a + b", "return a - b"),
            ]
        ).to_json()
    )
    done = subprocess.run(
        [
            sys.executable,
            ENGINE_TARGETS,
            str(spec),
            "run",
            "--workers",
            "1",
            "--timeout-constant",
            "4",
            "--max-survived",
            "0",
            str(root),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == exitcodes.GATE_FAILED, done.stderr
    assert "\x1b[" not in done.stdout  # no TTY: no colours, no live bar
    assert "mutation score 50.0%" in done.stdout
    assert "calc/core.py:2" in done.stdout and "return a + b -> return a * b" in done.stdout
    assert "gate FAILED" in done.stdout
