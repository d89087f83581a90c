"""What the terminal report claims about tests is what the run did (issue 26, item 5).

One tiny target, two real runs with hand-written mutants (``testkit.engine_targets``), both under
``--paths calc/core.py`` so that one test (``test_hello``) runs no mutated line:

* the full kill matrix: ``test_add[0-0-0]`` ran on both mutants it covers and killed none (it
  guards nothing); ``test_hello`` has no mutant to guard and is not counted as guarding nothing;
* ``--fast``: ``test_add_then_scale`` kills the ``a - b`` mutant in the full matrix, but under
  ``--fast`` a more focused ``test_add`` case kills it first and ``test_add_then_scale`` never runs
  on it: it must not be listed as guarding nothing.

The survivor is covered by the three cases of the parametrised ``test_add``: the compact report
names that function once with its count, ``--verbose`` keeps every id. The ``mutagent show``
command the report prints works, as printed, from the directory the run was started in.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from testkit.engine_targets import HandMutant, HandMutants, write_target

from mutagent import exitcodes
from mutagent.cli import build_parser, main
from mutagent.commands import run as run_command
from mutagent.console import console

CORE = "calc/core.py"
TARGET = {
    "calc/__init__.py": "",
    CORE: """
        def add(a, b):
            return a + b


        def scale(x):
            return x * 10
    """,
    "calc/other.py": """
        def hello():
            return "hi"
    """,
    "tests/test_core.py": """
        import pytest

        from calc.core import add, scale


        @pytest.mark.parametrize("a, b, total", [(1, 2, 3), (2, 3, 5), (0, 0, 0)])
        def test_add(a, b, total):
            assert add(a, b) == total


        def test_add_then_scale():
            assert scale(add(1, 2)) == 30
    """,
    "tests/test_other.py": """
        from calc.other import hello


        def test_hello():
            assert hello() == "hi"
    """,
}
SPECS = [
    HandMutant(CORE, "return a + b", "return a - b"),  # killed, except by the (0, 0, 0) case
    HandMutant(CORE, "return a + b", "return b + a"),  # equivalent: survives every covering test
    HandMutant("calc/other.py", 'return "hi"', 'return "ho"'),  # outside --paths: never made
]
FLAGS = ["--workers", "1", "--timeout-constant", "4", "--paths", CORE]


def run_report(
    root: Path, *flags: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> str:
    """``mutagent run project FLAGS`` from the project's parent directory, at 80 columns."""
    monkeypatch.chdir(root.parent)
    monkeypatch.setattr(console, "width", 80)
    capsys.readouterr()
    args = build_parser().parse_args(["run", root.name, *FLAGS, *flags])
    assert run_command.run(args, mutant_source=HandMutants(SPECS)) == exitcodes.OK
    return capsys.readouterr().out


def flat(out: str) -> str:
    """The report's words, one space apart: wrapping and panel borders left out."""
    return " ".join(out.replace("│", " ").split())


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The full run and the --fast run, each of its own copy of the target (no reused results)."""
    roots = {}
    for name in ("full", "fast"):
        roots[name] = write_target(tmp_path_factory.mktemp(name) / "project", TARGET)
    return roots


def test_a_test_no_mutant_reaches_is_not_said_to_guard_nothing(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = run_report(runs["full"], capsys=capsys, monkeypatch=monkeypatch)
    assert "1 test guards nothing: each ran on every mutant it covers and killed none" in out
    assert "tests/test_core.py::test_add[0-0-0]  (covers 2, kills none)" in out
    assert "test_hello" not in out  # not listed: it has nothing to guard here ...
    assert "1 test with no mutant to guard" in out  # ... and said so apart
    assert "test_add_then_scale  (" not in out  # it kills the a - b mutant


def test_under_fast_a_test_not_run_on_its_mutants_is_not_said_to_guard_nothing(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = run_report(runs["fast"], "--fast", capsys=capsys, monkeypatch=monkeypatch)
    text = flat(out)
    assert "tests/test_core.py::test_add_then_scale (" not in text  # never run on the mutant it kills
    assert "not judged" in text and "--fast stopped those mutants at their first kill" in text
    assert "test_hello (" not in text and "1 test with no mutant to guard" in text


def test_parametrised_cases_are_folded_unless_verbose(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    compact = flat(run_report(runs["full"], capsys=capsys, monkeypatch=monkeypatch))
    assert (
        "covered by: tests/test_core.py::test_add (3 cases), tests/test_core.py::test_add_then_scale"
        in compact
    )
    assert "test_add[1-2-3]" not in compact
    verbose = flat(run_report(runs["full"], "--verbose", capsys=capsys, monkeypatch=monkeypatch))
    for case in ("test_add[1-2-3]", "test_add[2-3-5]", "test_add[0-0-0]"):
        assert f"tests/test_core.py::{case}," in verbose


def test_the_printed_show_command_works_where_the_run_was_started(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = run_report(runs["full"], capsys=capsys, monkeypatch=monkeypatch)
    (command,) = re.findall(r"mutagent show ID[^\n]*", out)
    (survivor,) = re.findall(r"Survived\s+\[([0-9a-f]+)\]", out)
    argv = shlex.split(command.replace("ID", survivor))
    assert argv[:2] == ["mutagent", "show"]
    assert main(argv[1:]) == exitcodes.OK  # from the directory `run` was started in
    assert "return b + a" in capsys.readouterr().out
