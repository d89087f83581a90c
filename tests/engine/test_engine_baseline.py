"""The baseline and control run stop a run before any mutant is judged when the suite is not sound."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console
from testkit.engine_targets import ENGINE_TARGETS, HandMutant, HandMutants, tree_hash, write_target

from mutagent import exitcodes
from mutagent.config import EngineConfig
from mutagent.engine.orchestration.runner import Engine
from mutagent.errors import MutagentError
from mutagent.model import Status
from mutagent.store import load_run_data

PACKAGE = {
    "calc/__init__.py": "",
    "calc/core.py": """
        def add(a, b):
            return a + b


        def sub(a, b):
            return a - b
    """,
}
ADD = HandMutant("calc/core.py", "return a + b", "return a * b")


def engine_error(root: Path, specs: list[HandMutant] | None = None, **options: object) -> MutagentError:
    config = EngineConfig(root=root, workers=1, timeout_constant=4.0, **options)  # type: ignore[arg-type]
    with pytest.raises(MutagentError) as caught:
        Engine(config, Console(file=io.StringIO()), HandMutants(specs or [ADD])).run()
    return caught.value


def run_cli(spec: list[HandMutant], *argv: str) -> subprocess.CompletedProcess[str]:
    """The real command line (``python -m testkit.engine_targets``) with hand-written mutants."""
    spec_file = Path(argv[-1]).parent / "mutants.json"
    spec_file.write_text(HandMutants(spec).to_json())
    return subprocess.run(
        [sys.executable, ENGINE_TARGETS, str(spec_file), "run", *argv],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_red_baseline_exits_3_naming_the_failing_tests(tmp_path: Path) -> None:
    root = write_target(
        tmp_path / "red",
        {
            **PACKAGE,
            "tests/test_calc.py": """
        from calc.core import add, sub

        def test_add():
            assert add(1, 1) == 2

        def test_sub_is_wrong():
            assert sub(3, 1) == 1
    """,
        },
    )
    before = tree_hash(root)
    done = run_cli([ADD], "--workers", "1", str(root))
    assert done.returncode == exitcodes.BASELINE_FAILED
    assert "tests/test_calc.py::test_sub_is_wrong" in done.stderr
    assert "1 failing" in done.stderr
    assert "Traceback" not in done.stderr
    assert tree_hash(root) == before


def test_an_import_error_in_the_tests_is_one_line_naming_it(tmp_path: Path) -> None:
    root = write_target(
        tmp_path / "broken",
        {
            **PACKAGE,
            "tests/test_calc.py": """
        import calc.missing_module

        def test_add():
            assert True
    """,
        },
    )
    error = engine_error(root)
    assert error.exit_code == exitcodes.BASELINE_FAILED
    assert "tests/test_calc.py" in str(error) and "calc.missing_module" in str(error)
    assert "\n" not in str(error)


def test_no_collected_tests_is_a_usage_error(tmp_path: Path) -> None:
    root = write_target(tmp_path / "empty", {**PACKAGE, "tests/test_calc.py": "VALUE = 1\n"})
    error = engine_error(root)
    assert error.exit_code == exitcodes.USAGE_ERROR
    assert "collected no tests" in str(error)


def test_a_test_that_fails_in_the_harness_is_flaky_and_stops_the_run(tmp_path: Path) -> None:
    flaky = {
        **PACKAGE,
        "tests/test_calc.py": """
        from pathlib import Path

        from calc.core import add, sub

        def test_add():
            assert add(1, 1) == 2

        def test_second_run_fails():
            marker = Path(__file__).with_name("ran-once")
            first = not marker.exists()
            marker.write_text("x")
            assert first and sub(2, 1) == 1
    """,
    }
    root = write_target(tmp_path / "flaky", flaky)
    error = engine_error(root, [ADD, HandMutant("calc/core.py", "return a - b", "return a + b")])
    assert error.exit_code == exitcodes.BASELINE_FAILED
    assert "tests/test_calc.py::test_second_run_fails" in str(error)
    assert "--exclude-flaky" in str(error)
    assert "test_add" not in str(error)


def test_exclude_flaky_leaves_the_flaky_test_out(tmp_path: Path) -> None:
    root = write_target(
        tmp_path / "flaky",
        {
            **PACKAGE,
            "tests/test_calc.py": """
        from pathlib import Path

        from calc.core import add, sub

        def test_add():
            assert add(1, 1) == 2

        def test_second_run_fails():
            marker = Path(__file__).with_name("ran-once")
            first = not marker.exists()
            marker.write_text("x")
            assert first and sub(2, 1) == 1
    """,
        },
    )
    output = io.StringIO()
    specs = [ADD, HandMutant("calc/core.py", "return a - b", "return a + b")]
    config = EngineConfig(root=root, workers=1, exclude_flaky=True, timeout_constant=4.0)
    Engine(config, Console(file=output), HandMutants(specs)).run()
    data = load_run_data(root)
    statuses = {m.original: data.result_of(m).status for m in data.mutants}
    assert statuses == {"return a + b": Status.KILLED, "return a - b": Status.NO_COVERAGE}
    assert not (root / "tests" / "ran-once").exists()  # it ran in the copy, never in the user's tree


def test_an_installed_copy_shadowing_the_target_is_refused(tmp_path: Path) -> None:
    shadow = write_target(
        tmp_path / "site", {"calc/__init__.py": "", "calc/core.py": "def add(a, b):\n    return 0\n"}
    )
    root = write_target(
        tmp_path / "shadowed",
        {
            **PACKAGE,
            "conftest.py": f"""
        import sys
        sys.path.insert(0, {str(shadow)!r})
    """,
            "tests/test_calc.py": """
        def test_nothing():
            assert True
    """,
        },
    )
    error = engine_error(root)
    assert error.exit_code == exitcodes.USAGE_ERROR
    message = str(error)
    assert "calc" in message and str(shadow) in message and "isolated copy" in message


def test_test_arguments_pytest_rejects_are_a_usage_error(tmp_path: Path) -> None:
    root = write_target(
        tmp_path / "args", {**PACKAGE, "tests/test_calc.py": "def test_a():\n    assert True\n"}
    )
    error = engine_error(root, tests=["tests/", "--no-such-pytest-option"])
    assert error.exit_code == exitcodes.USAGE_ERROR
    assert "pytest rejected the test selection" in str(error) and "--no-such-pytest-option" in str(error)
