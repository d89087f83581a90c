"""The incremental baseline: an edit to a function body re-measures only the tests that ran it, and
the merged baseline is the one a full baseline would measure; any edit that import time can see
(or a changed test file) measures the whole suite again."""

from __future__ import annotations

import io
import shutil
from pathlib import Path
from textwrap import dedent

import pytest
from rich.console import Console
from testkit.engine_targets import HandMutant, HandMutants, write_target

from mutagent.config import EngineConfig
from mutagent.engine.orchestration.baseline import Baseline
from mutagent.engine.orchestration.incremental import Increment, plan_increment
from mutagent.engine.orchestration.runner import Engine, RunStats
from mutagent.engine.selection.edits import function_edit
from mutagent.engine.selection.fingerprint import file_digest
from mutagent.store import STORE_DIR, Store, load_run_data

CORE = """
    LIMIT = 3


    def first(a):
        return a + 1


    def second(a):
        total = a * 2
        return third(total)


    def third(a):
        if a > LIMIT:
            return a - LIMIT
        return a


    class Box:
        def size(self, items):
            return len(items)
"""
TARGET = {
    "calc/__init__.py": "",
    "calc/core.py": CORE,
    "calc/other.py": """
        def double(a):
            return a * 2
    """,
    "tests/test_core.py": """
        from calc.core import Box, first, second, third

        def test_first():
            assert first(1) == 2

        def test_second():
            assert second(4) == 5

        def test_third():
            assert third(1) == 1

        def test_box():
            assert Box().size([1, 2]) == 2
    """,
    "tests/test_other.py": """
        from calc.other import double

        def test_double():
            assert double(2) == 4
    """,
}
MUTANTS = [
    HandMutant("calc/core.py", "return a + 1", "return a + 2"),
    HandMutant("calc/core.py", "total = a * 2", "total = a * 3"),
    HandMutant("calc/core.py", "return a - LIMIT", "return a + LIMIT"),
    HandMutant("calc/core.py", "return len(items)", "return 0"),
    HandMutant("calc/other.py", "return a * 2", "return a * 3"),
]
BODY_EDIT = ("    total = a * 2\n", "    total = a * 2\n    total = total + 0\n\n")


def engine_run(root: Path) -> RunStats:
    config = EngineConfig(root=root, workers=1, timeout_constant=4.0)
    return Engine(config, Console(file=io.StringIO()), HandMutants(MUTANTS)).run()


def stored_baseline(root: Path) -> Baseline:
    store = Store.open(root)
    try:
        previous = store.previous_baseline()
    finally:
        store.close()
    assert previous is not None
    return Baseline.from_json(previous[0])


def edit(root: Path, file: str, old: str, new: str) -> None:
    path = root / file
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def comparable(baseline: Baseline) -> dict[str, object]:
    """What must not depend on how the baseline was measured (durations and CPU do)."""
    return {
        "order": baseline.order,
        "outcomes": {n: r["outcome"] for n, r in baseline.tests.items()},
        "control": {n: r["outcome"] for n, r in baseline.control.items()},
        "coverage": baseline.coverage,
        "import_lines": baseline.import_lines,
        "imported": sorted(baseline.imported),
    }


@pytest.mark.timeout(600)
def test_a_function_body_edit_remeasures_only_its_tests_and_matches_a_full_baseline(tmp_path: Path) -> None:
    root = write_target(tmp_path / "inc", TARGET)
    first = engine_run(root)
    assert first.ran == 5 and first.baseline_remeasured is None

    edit(root, "calc/core.py", *BODY_EDIT)  # two lines more: third() and Box.size move down
    second = engine_run(root)
    assert not second.baseline_cached
    assert second.baseline_remeasured == (1, 5)  # test_second alone ran second()
    # second()'s mutant runs again; third()'s (covered by the re-measured test_second too, and
    # moved two lines down) and the others keep their results
    assert second.ran == 1 and second.reused == 4
    merged = stored_baseline(root)
    assert merged.unchecked == []  # the re-measured test's control, overlapped with the mutant, came in

    fresh_root = tmp_path / "fresh"
    shutil.copytree(root, fresh_root, ignore=shutil.ignore_patterns(STORE_DIR))
    full = engine_run(fresh_root)
    assert full.baseline_remeasured is None and full.ran == 5
    assert comparable(merged) == comparable(stored_baseline(fresh_root))
    moved_if = merged.coverage["calc/core.py"][16]  # third()'s ``if``, two lines down
    assert moved_if == ["tests/test_core.py::test_second", "tests/test_core.py::test_third"]

    incremental, scratch = load_run_data(root), load_run_data(fresh_root)
    assert [m.id for m in incremental.mutants] == [m.id for m in scratch.mutants]
    for mutant in scratch.mutants:
        again, fresh = incremental.result_of(mutant), scratch.result_of(mutant)
        assert (again.status, sorted(again.covered_by), sorted(again.killed_by)) == (
            fresh.status,
            sorted(fresh.covered_by),
            sorted(fresh.killed_by),
        ), mutant.original

    third = engine_run(root)
    assert third.baseline_cached and third.ran == 0


@pytest.mark.timeout(600)
@pytest.mark.parametrize(
    ("file", "old", "new"),
    [
        ("calc/core.py", "LIMIT = 3", "LIMIT = 2 + 1"),  # a module-level constant
        ("calc/core.py", "LIMIT = 3\n", "import os\n\nLIMIT = 3\n"),  # a new import
        ("calc/core.py", "def first(a):", "def first(a, b=0):"),  # a def header
        ("tests/test_core.py", "assert first(1) == 2", "assert first(2) == 3"),  # a test file
    ],
    ids=["constant", "import", "signature", "test-file"],
)
def test_an_edit_import_time_can_see_measures_the_whole_suite(
    tmp_path: Path, file: str, old: str, new: str
) -> None:
    root = write_target(tmp_path / "full", TARGET)
    engine_run(root)
    edit(root, file, old, new)
    again = engine_run(root)
    assert not again.baseline_cached and again.baseline_remeasured is None
    assert stored_baseline(root).tests.keys() == {
        f"tests/test_core.py::test_{n}" for n in ("first", "second", "third", "box")
    } | {"tests/test_other.py::test_double"}


def source(text: str) -> str:
    return dedent(text).lstrip("\n")


def test_function_edit_reports_changed_bodies_and_moved_lines() -> None:
    old = source(CORE)
    new = old.replace(*BODY_EDIT)
    found = function_edit(old, new)
    assert found is not None
    assert found.changed == ((8, 10),) and found.bodies == ((9, 10),)
    assert found.moved(14) == 16  # third()'s ``if`` moved two lines down
    assert found.moved(9) is None  # inside the changed body
    assert found.touches(8) and not found.touches(13)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("LIMIT = 3", "LIMIT = 2 + 1"),
        ("def first(a):", "@staticmethod\ndef first(a):"),
        ("def first(a):", "async def first(a):"),
        ("def first(a):\n    return a + 1", 'def first(a):\n    """Now documented."""\n    return a + 1'),
        ("class Box:", "class Box(object):"),
        ("return a + 1", "return a +"),  # does not parse
    ],
    ids=["constant", "decorator", "async", "docstring", "class-bases", "syntax-error"],
)
def test_function_edit_refuses_import_time_changes(old: str, new: str) -> None:
    text = source(CORE)
    assert old in text
    assert function_edit(text, text.replace(old, new, 1)) is None


def test_function_edit_ignores_comments_and_sees_method_bodies() -> None:
    text = source(CORE)
    commented = text.replace("LIMIT = 3\n", "# the cap\nLIMIT = 3  # inclusive\n")
    found = function_edit(text, commented)
    assert found is not None and found.changed == () and found.moved(4) == 5
    method = function_edit(text, text.replace("return len(items)", "return len(list(items))"))
    assert method is not None and method.changed == ((20, 21),)


def increment_for(
    old: str, new: str, import_lines: list[int], covered: dict[int, list[str]]
) -> Increment | None:
    """``plan_increment`` for one source file ``calc.py`` edited from ``old`` to ``new``."""
    previous = Baseline(
        tests={"t.py::a": {"outcome": "passed"}, "t.py::b": {"outcome": "passed"}},
        order=["t.py::a", "t.py::b"],
        coverage={"calc.py": covered},
        import_lines={"calc.py": import_lines},
    )
    basis = {"settings": "s", "files": {"calc.py": file_digest(old), "t.py": file_digest("")}}
    new_basis = {"settings": "s", "files": {"calc.py": file_digest(new), "t.py": file_digest("")}}
    return plan_increment(
        previous.to_json(), {**basis, "sources": {"calc.py": old}}, new_basis, {"calc.py": new}
    )


REGISTRY = source(
    """
    def register(function):
        function()
        return function


    @register
    def setup():
        return 1


    def helper():
        return 2
    """
)


def test_a_body_that_ran_at_import_time_needs_the_full_baseline() -> None:
    edited = REGISTRY.replace("return 1", "return 3")
    # the decorator called setup() while the module was imported: line 8 ran outside any test
    assert increment_for(REGISTRY, edited, [1, 2, 3, 6, 7, 8, 11], {12: ["t.py::b"]}) is None
    helper_edit = REGISTRY.replace("return 2", "return 4")
    found = increment_for(REGISTRY, helper_edit, [1, 2, 3, 6, 7, 8, 11], {8: ["t.py::a"], 12: ["t.py::b"]})
    assert isinstance(found, Increment) and found.remeasure == ["t.py::b"]
    merged = found.merge(
        Baseline(
            tests={"t.py::b": {"outcome": "passed"}},
            order=["t.py::b"],
            coverage={"calc.py": {12: ["t.py::b"]}},
            import_lines=None,
        )
    )
    assert merged.coverage == {"calc.py": {8: ["t.py::a"], 12: ["t.py::b"]}}
    assert merged.import_lines == {"calc.py": [1, 2, 3, 6, 7, 8, 11]}


def test_the_merged_baseline_keeps_the_remeasured_tests_unchecked_until_their_controls_are_in() -> None:
    """The re-measured tests' controls run with the mutants: until then the merged baseline (which
    is stored at once) must say so, or a run stopped before they came back would leave a baseline
    that claims controls nobody ran."""
    found = increment_for(
        REGISTRY, REGISTRY.replace("return 2", "return 4"), [1, 2, 3, 6, 7, 8, 11], {12: ["t.py::b"]}
    )
    assert isinstance(found, Increment)
    found.previous.control = {n: {"outcome": "passed", "duration": 0.5} for n in found.previous.order}
    measured = Baseline(
        tests={"t.py::b": {"outcome": "passed", "duration": 0.1}},
        order=["t.py::b"],
        coverage={"calc.py": {12: ["t.py::b"]}},
        control={"t.py::b": {"outcome": "passed", "duration": 0.1}},  # provisional: the batch's
        unchecked=["t.py::b"],
    )
    merged = found.merge(measured)
    assert merged.unchecked == ["t.py::b"]
    assert merged.control == {
        "t.py::a": {"outcome": "passed", "duration": 0.5},  # never re-measured: its control stands
        "t.py::b": {"outcome": "passed", "duration": 0.1},
    }
    assert Baseline.from_json(merged.to_json()).unchecked == ["t.py::b"]


def test_other_settings_or_files_need_the_full_baseline() -> None:
    edited = REGISTRY.replace("return 2", "return 4")
    previous = Baseline(tests={}, order=[], coverage={}, import_lines={}).to_json()
    old = {"settings": "s", "files": {"calc.py": file_digest(REGISTRY)}, "sources": {"calc.py": REGISTRY}}
    same = {"settings": "s", "files": {"calc.py": file_digest(edited)}}
    assert plan_increment(previous, old, same, {"calc.py": edited}) is not None
    assert plan_increment(previous, old, {**same, "settings": "other"}, {"calc.py": edited}) is None
    added = {"settings": "s", "files": {**same["files"], "new.py": file_digest("")}}
    assert plan_increment(previous, old, added, {"calc.py": edited, "new.py": ""}) is None
    no_import_lines = Baseline(tests={}, order=[], coverage={}, import_lines=None).to_json()
    assert plan_increment(no_import_lines, old, same, {"calc.py": edited}) is None


PRELOAD_TARGET = {
    "calc/__init__.py": "",
    "calc/core.py": """
        def first(a):
            return a + 1


        def second(a):
            total = a * 2
            return total
    """,
    "tests/test_core.py": """
        from calc.core import first, second


        def test_first():
            import lazyhelper  # noqa: F401

            assert first(1) == 2


        def test_second():
            import lazyhelper  # noqa: F401

            assert second(2) == 4
    """,
}
LAZY_HELPER = """
    import os

    with open(os.environ["LAZY_IMPORTS_LOG"], "a", encoding="utf-8") as log:
        log.write(f"{os.getpid()}\\n")
"""
PRELOAD_MUTANTS = [
    HandMutant("calc/core.py", "return a + 1", "return a + 2"),
    *(HandMutant("calc/core.py", "total = a * 2", f"total = a * {n}") for n in (3, 4, 5, 6, 7, 8)),
]


@pytest.mark.timeout(600)
def test_an_incremental_runs_first_worker_preloads_the_warm_up_for_the_workers_forked_from_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "imports.log"
    monkeypatch.setenv("LAZY_IMPORTS_LOG", str(log))
    # an installed module a test imports lazily (as an SDK's lazy submodules are), standing in:
    # outside the copy, so it is preloaded; it notes each process that imports it
    write_target(tmp_path / "site", {"lazyhelper.py": LAZY_HELPER})
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "site"))
    root = write_target(tmp_path / "pre", PRELOAD_TARGET)

    def run() -> tuple[RunStats, set[str]]:
        log.write_text("")
        config = EngineConfig(root=root, workers=2, timeout_constant=4.0)
        stats = Engine(config, Console(file=io.StringIO()), HandMutants(PRELOAD_MUTANTS)).run()
        return stats, set(log.read_text().split())

    first_run, _ = run()
    assert first_run.ran == 7
    edit(root, "calc/core.py", "    total = a * 2\n", "    total = a * 2\n    total = total + 0\n")
    second_run, importers = run()
    assert second_run.baseline_remeasured == (1, 2) and second_run.ran == 6
    # one import, in the first worker before it was ready: the other worker was forked from it
    # with the module loaded, and no child of either imported it again (each used to, at its
    # worker's first job, once per worker)
    assert len(importers) == 1
