"""End-to-end engine runs on one small generated target laid out like a user's project.

The target (``shop/`` package + ``tests/`` + a root ``conftest.py``, no pyproject) has sync,
threaded, closure, method, class-body, async (pytest-asyncio and anyio) and module-level code.
Hand-written mutants inject each behaviour the engine must classify honestly; the whole run
happens once (module-scoped fixture) and each test checks one result.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console
from testkit.engine_targets import HandMutant, HandMutants, tree_hash, write_target

from mutagent.config import EngineConfig
from mutagent.engine.orchestration.runner import Engine, RunStats
from mutagent.model import MutantResult, RunData, Status
from mutagent.store import load_run_data

TARGET = {
    "shop/__init__.py": "",
    "shop/core.py": """
        import os
        import socket
        import sys
        import threading

        RETRIES = 3
        SEPARATOR = "-"


        def add(a, b):
            return a + b


        def spin(n):
            total = 0
            for i in range(n):
                total += i
            return total


        def doubled_in_thread(x):
            out = []

            def work():
                out.append(x * 2)  # runs only in the thread

            worker = threading.Thread(target=work)
            worker.start()
            worker.join()
            return out[0]


        def quit_code():
            return 0


        def status():
            return "ok"


        def label():
            return "label"


        def ping():
            return "pong"


        def fetch_local(port):
            return port + 1


        def scale(x, factor=2):
            return x * factor


        def joined(a, b):
            return f"{a}{SEPARATOR}{b}"


        def widen(x, by=41):
            return x + by


        def frozen_defaults(fn):
            values = fn.__defaults__  # read once, when it decorates: a later swap cannot reach it

            def call(x):
                return fn(x, *values)

            return call


        @frozen_defaults
        def shift(x, by=17):
            return x + by


        def unused():
            return 1


        def make_counter():
            count = 0

            def bump():
                nonlocal count
                count += 1
                return count

            return bump


        class Greeter:
            greeting = "hello"

            def greet(self, name):
                return f"{self.greeting} {name}"
    """,
    "shop/aio.py": """
        import asyncio


        async def fetch_reply(prompt):
            await asyncio.sleep(0)
            return prompt.upper()
    """,
    "conftest.py": """
        import pytest

        from shop.core import Greeter


        @pytest.fixture
        def greeter():
            return Greeter()


        @pytest.fixture
        def anyio_backend():
            return "asyncio"
    """,
    "tests/test_core.py": """
        from shop.core import (RETRIES, add, doubled_in_thread, fetch_local, label, make_counter, ping,
                               joined, quit_code, scale, shift, spin, status, widen)


        def test_add():
            assert add(2, 3) == 5


        def test_add_again():
            assert add(1, 1) == 2


        def test_spin():
            assert spin(4) == 6


        def test_thread():
            assert doubled_in_thread(4) == 8


        def test_retries():
            assert RETRIES == 3


        def test_counter():
            counter = make_counter()
            counter()
            assert counter() == 2


        def test_greet(greeter):
            assert greeter.greet("bob") == "hello bob"


        def test_quit():
            assert quit_code() == 0


        def test_status():
            assert status() == "ok"


        def test_label():
            assert label() == "label"


        def test_ping():
            assert ping() == "pong"


        def test_fetch_local():
            assert fetch_local(1) == 2


        def test_scale():
            assert scale(3) == 6


        def test_joined():
            assert joined("a", "b") == "a-b"


        def test_widen():
            assert widen(1) == 42


        def test_shift():
            assert shift(1) == 18
    """,
    "tests/test_env.py": """
        import os


        def test_secrets_are_not_visible_to_the_tests(tmp_path):
            assert "ANTHROPIC_API_KEY" not in os.environ and "DEPLOY_TOKEN" not in os.environ
            assert os.environ["VISIBLE_TOKEN"] == "passed"  # named by --pass-env
            (tmp_path / "scratch.txt").write_text("tests may write to tmp_path")
    """,
    "tests/test_aio.py": """
        import pytest

        from shop.aio import fetch_reply


        @pytest.mark.asyncio
        async def test_fetch_asyncio():
            assert await fetch_reply("hi") == "HI"


        @pytest.mark.anyio
        async def test_fetch_anyio():
            assert await fetch_reply("yo") == "YO"
    """,
}

CORE = "shop/core.py"
MUTANTS = {
    "two_killers": HandMutant(CORE, "return a + b", "return a - b"),
    "equivalent": HandMutant(CORE, "total = 0", "total = 0 + 0"),
    "hang": HandMutant(CORE, "for i in range(n):", "for i in iter(int, 1):"),
    "os_exit": HandMutant(CORE, "return 0", "return os._exit(3)"),
    "syntax": HandMutant(CORE, "return a + b", "return a +"),
    "thread": HandMutant(CORE, "x * 2", "x * 3"),
    "module_level": HandMutant(CORE, "RETRIES = 3", "RETRIES = 4"),
    "closure": HandMutant(CORE, "count += 1", "count += 2"),
    "method": HandMutant(CORE, 'f"{self.greeting} {name}"', 'f"{self.greeting}"'),
    "class_body": HandMutant(CORE, 'greeting = "hello"', 'greeting = "bye"'),
    "default_arg": HandMutant(CORE, "factor=2", "factor=3"),  # the whole parameter, not its value
    "default_value": HandMutant(CORE, "41", "40"),
    "decorated_default": HandMutant(CORE, "17", "16"),
    "module_value": HandMutant(CORE, '"-"', '"+"'),  # read at call time only
    "class_value": HandMutant(CORE, '"hello"', '"bye"'),  # self.greeting, read at call time
    "copied_value": HandMutant(CORE, "3", "4"),  # RETRIES: the tests import a copy of it
    "sys_exit": HandMutant(CORE, 'return "ok"', "return sys.exit(1)"),
    "keyboard": HandMutant(CORE, 'return "label"', "raise KeyboardInterrupt"),
    "network": HandMutant(
        CORE, "return port + 1", "return socket.create_connection(('192.0.2.1', 80), timeout=5)"
    ),
    "no_coverage": HandMutant(CORE, "return 1", "return 2"),
    "kill_worker": HandMutant(CORE, 'return "pong"', "return os.kill(os.getppid(), 9)"),
    "async": HandMutant("shop/aio.py", "prompt.upper()", "prompt.lower()"),
}


# generous per-mutant time allowance: these tests share two cores with other builds, and a slow
# machine must not turn a kill into a Timeout (the hang mutant still times out, just later)
LOADED_MACHINE_SLACK = 4.0
SECRETS = {"ANTHROPIC_API_KEY": "sk-real", "DEPLOY_TOKEN": "t", "VISIBLE_TOKEN": "passed"}


def run_engine(root: Path, specs: list[HandMutant], **options: object) -> tuple[RunStats, RunData, str]:
    output = io.StringIO()
    config = EngineConfig(
        root=root, workers=2, pass_env=["VISIBLE_TOKEN"], timeout_constant=LOADED_MACHINE_SLACK, **options
    )  # type: ignore[arg-type]
    with pytest.MonkeyPatch.context() as patch:
        for name, value in SECRETS.items():
            patch.setenv(name, value)  # the engine's own environment has secrets; the tests must not
        stats = Engine(config, Console(file=output, width=200), HandMutants(specs)).run()
    return stats, load_run_data(root), output.getvalue()


class Outcome:
    """The one full run every test below inspects."""

    def __init__(self, root: Path, before: dict[str, str]) -> None:
        self.root = root
        self.before = before
        self.stats, self.data, self.output = run_engine(root, list(MUTANTS.values()))
        self.by_description = {m.description: m for m in self.data.mutants}

    def result(self, name: str) -> MutantResult:
        spec = MUTANTS[name]
        mutant = self.by_description[f"{spec.find.strip()} -> {spec.replace.strip()}"]
        return self.data.result_of(mutant)


@pytest.fixture(scope="module")
def outcome(tmp_path_factory: pytest.TempPathFactory) -> Outcome:
    root = write_target(tmp_path_factory.mktemp("user") / "project", TARGET)
    return Outcome(root, tree_hash(root))


def test_every_mutant_gets_a_final_status(outcome: Outcome) -> None:
    assert len(outcome.data.mutants) == len(MUTANTS)
    assert all(outcome.data.result_of(m).status is not Status.PENDING for m in outcome.data.mutants)


def test_full_matrix_records_every_killing_test(outcome: Outcome) -> None:
    result = outcome.result("two_killers")
    assert result.status is Status.KILLED
    assert sorted(result.killed_by) == ["tests/test_core.py::test_add", "tests/test_core.py::test_add_again"]
    assert "tests/test_core.py::test_add" in (result.status_reason or "")


def test_an_equivalent_mutant_survives(outcome: Outcome) -> None:
    result = outcome.result("equivalent")
    assert result.status is Status.SURVIVED
    assert result.covered_by == ["tests/test_core.py::test_spin"]
    assert result.killed_by == []


def test_a_hanging_mutant_times_out(outcome: Outcome) -> None:
    result = outcome.result("hang")
    assert result.status is Status.TIMEOUT
    assert "test_spin" in (result.status_reason or "")


def test_os_exit_is_a_runtime_error_never_a_kill(outcome: Outcome) -> None:
    result = outcome.result("os_exit")
    assert result.status is Status.RUNTIME_ERROR
    assert result.killed_by == []
    assert "exited with code 3" in (result.error or "")


def test_a_syntax_breaking_mutant_is_a_compile_error(outcome: Outcome) -> None:
    result = outcome.result("syntax")
    assert result.status is Status.COMPILE_ERROR
    assert "SyntaxError" in (result.error or "")
    assert result.tests_run == []


def test_lines_run_in_a_thread_count_as_covered(outcome: Outcome) -> None:
    result = outcome.result("thread")
    assert result.status is Status.KILLED
    assert result.killed_by == ["tests/test_core.py::test_thread"]


@pytest.mark.parametrize(
    "name, killer",
    [
        ("module_level", "tests/test_core.py::test_retries"),
        ("class_body", "tests/test_core.py::test_greet"),
        ("default_arg", "tests/test_core.py::test_scale"),
        ("decorated_default", "tests/test_core.py::test_shift"),
        ("copied_value", "tests/test_core.py::test_retries"),
    ],
)
def test_import_time_mutants_are_applied_by_a_fresh_import(outcome: Outcome, name: str, killer: str) -> None:
    result = outcome.result(name)
    assert result.status is Status.KILLED, result
    assert killer in result.killed_by
    assert "fresh import" in (result.status_reason or "")


@pytest.mark.parametrize(
    "name, killer",
    [
        ("default_value", "tests/test_core.py::test_widen"),
        ("module_value", "tests/test_core.py::test_joined"),
        ("class_value", "tests/test_core.py::test_greet"),
    ],
)
def test_an_import_time_value_read_at_call_time_is_swapped_in_place(
    outcome: Outcome, name: str, killer: str
) -> None:
    result = outcome.result(name)
    assert result.status is Status.KILLED, result
    assert killer in result.killed_by
    assert "fresh import" not in (result.status_reason or "")


@pytest.mark.parametrize(
    "name, killer",
    [
        ("closure", "tests/test_core.py::test_counter"),
        ("method", "tests/test_core.py::test_greet"),
    ],
)
def test_nested_functions_and_methods_are_swapped_in_place(outcome: Outcome, name: str, killer: str) -> None:
    result = outcome.result(name)
    assert result.status is Status.KILLED
    assert result.killed_by == [killer]
    assert "fresh import" not in (result.status_reason or "")


def test_async_code_under_pytest_asyncio_and_anyio(outcome: Outcome) -> None:
    result = outcome.result("async")
    assert result.status is Status.KILLED
    assert sorted(result.killed_by) == [
        "tests/test_aio.py::test_fetch_anyio",
        "tests/test_aio.py::test_fetch_asyncio",
    ]


def test_sys_exit_inside_a_test_is_reported_as_pytest_reports_it(outcome: Outcome) -> None:
    result = outcome.result("sys_exit")
    assert result.status is Status.KILLED  # pytest reports SystemExit in a test as a failure
    assert "SystemExit" in (result.status_reason or "")


def test_an_exception_escaping_pytest_is_a_runtime_error_with_its_traceback(outcome: Outcome) -> None:
    result = outcome.result("keyboard")
    assert result.status is Status.RUNTIME_ERROR
    assert "KeyboardInterrupt" in (result.error or "")
    assert "Traceback" in (result.error or "")


def test_outbound_network_is_blocked_and_named(outcome: Outcome) -> None:
    result = outcome.result("network")
    assert result.status is Status.KILLED
    assert "mutagent blocked a network connection to 192.0.2.1:80" in (result.status_reason or "")


def test_uncovered_code_is_no_coverage_without_running(outcome: Outcome) -> None:
    result = outcome.result("no_coverage")
    assert result.status is Status.NO_COVERAGE
    assert result.tests_run == []


def test_a_killed_worker_is_restarted_and_the_mutant_becomes_a_runtime_error(outcome: Outcome) -> None:
    result = outcome.result("kill_worker")
    assert result.status is Status.RUNTIME_ERROR
    assert "twice" in (result.error or "")
    assert outcome.stats.ran >= len(MUTANTS) - 3  # the run went on after the worker deaths


def test_the_users_tree_is_untouched(outcome: Outcome) -> None:
    assert tree_hash(outcome.root) == outcome.before
    assert (outcome.root / ".mutagent" / "store.sqlite").is_file()


def test_tests_and_sources_are_stored_for_reports(outcome: Outcome) -> None:
    nodeids = {t.nodeid for t in outcome.data.tests}
    assert "tests/test_core.py::test_thread" in nodeids
    assert set(outcome.data.sources) == {"shop/__init__.py", "shop/core.py", "shop/aio.py"}
    assert outcome.data.sources["shop/core.py"] == (outcome.root / "shop/core.py").read_text()


def test_a_rerun_without_changes_reuses_everything(outcome: Outcome) -> None:
    stats, data, output = run_engine(outcome.root, list(MUTANTS.values()))
    assert stats.baseline_cached
    assert stats.ran == 0
    assert stats.reused == len(MUTANTS)
    assert {m.id: data.result_of(m).status for m in data.mutants} == {
        m.id: outcome.data.result_of(m).status for m in outcome.data.mutants
    }


def test_fast_mode_stops_at_the_first_kill(tmp_path: Path) -> None:
    root = write_target(tmp_path / "project", TARGET)
    stats, data, _ = run_engine(root, [MUTANTS["two_killers"], MUTANTS["async"]], fast=True)
    results = [data.result_of(m) for m in data.mutants]
    assert [r.status for r in results] == [Status.KILLED, Status.KILLED]
    assert all(len(r.killed_by) == 1 for r in results)
