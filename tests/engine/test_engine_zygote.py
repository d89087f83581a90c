"""Fresh-import mutants forked from the zygote: the same honest verdicts as a new process, cheaper.

A small target has module-level constants read by functions; hand-written mutants of those
constants hang, exit, raise at import, kill their zygote, survive or get killed. One run with the
zygote and one without must agree mutant by mutant; the zygote's control run must keep a suite
that only passes when third-party modules are imported after its conftest from producing kills.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from rich.console import Console
from testkit.engine_targets import HandMutant, HandMutants, write_target

from mutagent.config import EngineConfig
from mutagent.engine.orchestration.runner import Engine, RunStats
from mutagent.model import MutantResult, RunData, Status
from mutagent.store import load_run_data

TARGET = {
    "shop/__init__.py": "",
    "shop/config.py": """
        LIMIT = 3
        NAMES = ("a", "b")


        def limit():
            return LIMIT


        def names():
            return NAMES
    """,
    "tests/test_config.py": """
        from shop.config import limit, names


        def test_limit():
            assert limit() == 3


        def test_names():
            assert names() == ("a", "b")
    """,
}
CONFIG = "shop/config.py"
MUTANTS = {
    "killed": HandMutant(CONFIG, "LIMIT = 3", "LIMIT = 4"),
    "survived": HandMutant(CONFIG, 'NAMES = ("a", "b")', 'NAMES = ("a",) + ("b",)'),
    "hang": HandMutant(CONFIG, 'NAMES = ("a", "b")', 'NAMES = __import__("time").sleep(600) or ("a", "b")'),
    "os_exit": HandMutant(CONFIG, "LIMIT = 3", 'LIMIT = __import__("os")._exit(3) or 3'),
    "import_error": HandMutant(CONFIG, "LIMIT = 3", "LIMIT = 1 // 0"),
    "kills_its_parent": HandMutant(
        CONFIG, "LIMIT = 3", 'LIMIT = __import__("os").kill(__import__("os").getppid(), 9) or 3'
    ),
}


def run_engine(root: Path, specs: list[HandMutant], zygote: bool = True) -> tuple[RunStats, RunData, str]:
    output = io.StringIO()
    config = EngineConfig(root=root, workers=1, timeout_constant=2.0, zygote=zygote)
    stats = Engine(config, Console(file=output, width=200), HandMutants(specs)).run()
    return stats, load_run_data(root), output.getvalue()


def by_name(data: RunData) -> dict[str, MutantResult]:
    names = {f"{s.find.strip()} -> {s.replace.strip()}": name for name, s in MUTANTS.items()}
    return {names[m.description]: data.result_of(m) for m in data.mutants}


class Runs:
    def __init__(self, base: Path) -> None:
        self.stats, self.data, self.output = run_engine(
            write_target(base / "z" / "shop_project", TARGET), [*MUTANTS.values()]
        )
        self.results = by_name(self.data)
        fresh = run_engine(
            write_target(base / "f" / "shop_project", TARGET), [*MUTANTS.values()], zygote=False
        )
        self.fresh_stats, self.fresh_results = fresh[0], by_name(fresh[1])


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    return Runs(tmp_path_factory.mktemp("zygote"))


def test_the_fresh_imports_ran_in_zygote_children(runs: Runs) -> None:
    assert runs.stats.fresh_imports == len(MUTANTS)
    assert runs.stats.zygote_imports >= len(MUTANTS) - 1  # the one that kills its zygote may not count
    assert runs.fresh_stats.zygote_imports == 0


def test_a_module_level_mutant_is_killed(runs: Runs) -> None:
    result = runs.results["killed"]
    assert result.status is Status.KILLED
    assert result.killed_by == ["tests/test_config.py::test_limit"]
    assert "fresh import" in (result.status_reason or "")


def test_an_equivalent_module_level_mutant_survives(runs: Runs) -> None:
    assert runs.results["survived"].status is Status.SURVIVED


def test_a_hanging_module_level_mutant_times_out(runs: Runs) -> None:
    result = runs.results["hang"]
    assert result.status is Status.TIMEOUT
    assert result.killed_by == [] and result.tests_run == []  # it hung at import: no test ran
    assert "0 of 2 selected tests ran" in (result.status_reason or "")  # a call: broad selection
    assert "fresh-import run gave no result within" in (result.status_reason or "")


def test_os_exit_at_import_is_a_runtime_error_never_a_kill(runs: Runs) -> None:
    result = runs.results["os_exit"]
    assert result.status is Status.RUNTIME_ERROR
    assert result.killed_by == []
    assert "exited with code 3" in (result.error or "")


def test_an_exception_at_import_fails_the_tests_that_import_it(runs: Runs) -> None:
    result = runs.results["import_error"]
    assert result.status is Status.KILLED
    assert "ZeroDivisionError" in (result.status_reason or "")


def test_a_mutant_killing_its_zygote_is_a_runtime_error_and_the_run_goes_on(runs: Runs) -> None:
    result = runs.results["kills_its_parent"]
    assert result.status is Status.RUNTIME_ERROR
    assert result.killed_by == []
    assert all(r.status is not Status.PENDING for r in runs.results.values())


def test_the_zygote_and_a_new_process_reach_the_same_verdicts(runs: Runs) -> None:
    assert {n: (r.status, r.killed_by) for n, r in runs.results.items()} == {
        n: (r.status, r.killed_by) for n, r in runs.fresh_results.items()
    }


def test_tests_failing_unmutated_in_the_zygote_never_judge_a_zygote_mutant(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``envprobe`` reads an environment variable the conftest sets before importing it: a zygote
    imports it first, so its test fails there without any mutant. Its mutants must run in new
    processes (the equivalent one must survive), and the run says so."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "envprobe.py").write_text('import os\n\nVALUE = os.environ.get("PROBE")\n')
    monkeypatch.setenv(
        "PYTHONPATH", str(site) + (f":{p}" if (p := __import__("os").environ.get("PYTHONPATH")) else "")
    )
    files = {
        "shop/__init__.py": "",
        "shop/config.py": "LIMIT = 3\n\n\ndef limit():\n    return LIMIT\n",
        "conftest.py": 'import os\n\nos.environ["PROBE"] = "set"\n\nimport envprobe  # noqa: E402\n',
        "tests/test_probe.py": """
            import envprobe

            from shop.config import limit


            def test_probe():
                assert envprobe.VALUE == "set"
                assert limit() == 3
        """,
    }
    root = write_target(tmp_path / "probe_project", files)
    specs = [
        HandMutant("shop/config.py", "LIMIT = 3", "LIMIT = 1 + 2"),
        HandMutant("shop/config.py", "LIMIT = 3", "LIMIT = 4"),
    ]
    stats, data, _ = run_engine(root, specs)
    statuses = {m.replacement: data.result_of(m).status for m in data.mutants}
    assert statuses == {"LIMIT = 1 + 2": Status.SURVIVED, "LIMIT = 4": Status.KILLED}
    assert stats.zygote_imports == 0 and stats.fresh_imports == 2
    assert "do not pass unmutated in the fresh-import zygote" in capsys.readouterr().err
    assert sys.modules.get("envprobe") is None  # nothing leaked into this process


def test_an_exception_at_import_under_a_conftest_kills_only_through_pytests_own_failure(
    tmp_path: Path,
) -> None:
    """The conftest imports the mutated module: pytest stops before running a test (the partial
    result path), and only because pytest itself exited reporting that failure is it a kill."""
    files = {
        "shop/__init__.py": "",
        "shop/config.py": "LIMIT = 3\n\n\ndef limit():\n    return LIMIT\n",
        "conftest.py": "from shop.config import limit  # noqa: F401\n",
        "tests/test_limit.py": "from shop.config import limit\n\n\n"
        "def test_limit():\n    assert limit() == 3\n",
    }
    specs = [
        HandMutant("shop/config.py", "LIMIT = 3", "LIMIT = 1 // 0"),
        HandMutant("shop/config.py", "LIMIT = 3", 'LIMIT = __import__("os")._exit(0) or 3'),
    ]
    verdicts = []
    for zygote in (True, False):
        root = write_target(tmp_path / ("z" if zygote else "f") / "conf_project", files)
        stats, data, _ = run_engine(root, specs, zygote=zygote)
        assert stats.zygote_imports == (2 if zygote else 0)
        verdicts.append({m.replacement: data.result_of(m) for m in data.mutants})
    for results in verdicts:
        raised = results["LIMIT = 1 // 0"]
        assert raised.status is Status.KILLED
        assert raised.killed_by == ["tests/test_limit.py::test_limit"]
        assert "ZeroDivisionError" in (raised.status_reason or "")
        exited = results['LIMIT = __import__("os")._exit(0) or 3']
        assert exited.status is Status.RUNTIME_ERROR  # exit code 0 without a report: never a kill
        assert exited.killed_by == []
