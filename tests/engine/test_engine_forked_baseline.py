"""The baseline measured in forked children agrees with the plain pytest run it replaces.

The engine measures the suite inside its warm workers (batches of tests in forked children,
coverage.py with one dynamic context per test) instead of in a separate ``python -m pytest``
process; the plain run is kept for diagnosing a suite that is not green. Both must find the same
per-test coverage (threads included), the same lines run at import time and the same outcomes:
test selection for every mutant rests on them.
"""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console
from testkit.engine_targets import write_target

from mutagent.config import EngineConfig
from mutagent.engine.messages import JobResult
from mutagent.engine.orchestration.baseline import ForkedBaseline
from mutagent.engine.orchestration.runner import Engine
from mutagent.engine.selection.discover import discover

TARGET = {
    "calc/__init__.py": "",
    "calc/core.py": """
        import threading

        SCALE = 3  # module level: runs at import, outside every test


        def add(a, b):
            return a + b


        def scaled(x):
            return x * SCALE


        def in_thread(x):
            box = []
            worker = threading.Thread(target=lambda: box.append(scaled(x)))
            worker.start()
            worker.join()
            return box[0]
    """,
    "calc/lazy.py": """
        def late(x):
            return -x
    """,
    "tests/test_calc.py": """
        import pytest

        from calc.core import add, in_thread, scaled


        def test_add():
            assert add(1, 2) == 3


        def test_scaled():
            assert scaled(2) == 6


        def test_thread():
            assert in_thread(1) == 3


        def test_lazy_import():
            from calc.lazy import late

            assert late(1) == -1


        @pytest.mark.skip(reason="never runs")
        def test_skipped():
            assert add(0, 0) == 1
    """,
}


def both_baselines(root: Path, workers: int) -> tuple[object, object]:
    engine = Engine(EngineConfig(root=root, workers=workers), Console(file=io.StringIO()))
    engine.target = discover(engine.root, [])
    engine._read_files()
    try:
        engine._ensure_pool(workers, measure=True)
        forked = engine._forked_baseline()
        plain = engine._start_baseline().wait()
    finally:
        engine._shutdown(force=True)
    return forked, plain


def test_the_forked_baseline_measures_what_the_plain_run_measures(tmp_path: Path) -> None:
    root = write_target(tmp_path / "project", TARGET)
    forked, plain = both_baselines(root, workers=2)
    assert forked is not None
    # (the plain run also lists files run only at import, with no line for any test)
    assert forked.coverage == {f: lines for f, lines in plain.coverage.items() if lines}  # type: ignore[attr-defined]
    assert forked.import_lines == plain.import_lines  # type: ignore[attr-defined]
    assert sorted(forked.imported) == sorted(plain.imported)  # type: ignore[attr-defined]
    assert forked.order == plain.order  # type: ignore[attr-defined]
    outcomes = {n: t["outcome"] for n, t in forked.tests.items()}  # type: ignore[attr-defined]
    assert outcomes == {n: t["outcome"] for n, t in plain.tests.items()}  # type: ignore[attr-defined]
    assert outcomes["tests/test_calc.py::test_skipped"] == "skipped"

    # the thread's line and the lazily imported module's function count for their tests
    def line_of(file: str, text: str) -> int:
        lines = (root / file).read_text().splitlines()
        return next(number for number, line in enumerate(lines, 1) if text in line)

    core = forked.coverage["calc/core.py"]  # type: ignore[attr-defined]
    assert "tests/test_calc.py::test_thread" in core[line_of("calc/core.py", "return x * SCALE")]
    lazy = forked.coverage["calc/lazy.py"]  # type: ignore[attr-defined]
    assert lazy[line_of("calc/lazy.py", "return -x")] == ["tests/test_calc.py::test_lazy_import"]
    # the control run's part: every passing test ran again alone
    assert set(forked.control) == set(forked.passing)  # type: ignore[attr-defined]
    assert all(c["outcome"] == "passed" for c in forked.control.values())  # type: ignore[attr-defined]


def result(tests: list[tuple[str, str]], status: str = "done", measured: dict | None = None) -> JobResult:
    record = [{"nodeid": n, "outcome": o, "duration": 0.01, "message": ""} for n, o in tests]
    wire = {"status": status, "tests": record, "cpu": 0.02, "baseline": measured or {}, "detail": "boom"}
    return JobResult.from_wire(wire)


def test_a_batch_cut_short_leaves_its_missing_tests_failed() -> None:
    measured = ForkedBaseline(["a", "b", "c"], {"import_lines": {}, "preload": [], "models": []})
    measured.add(["a", "b", "c"], result([("a", "passed")], status="crash"))
    assert measured.records["b"]["outcome"] == "crash"
    assert measured.baseline() is None  # the plain run must say what is wrong


def test_batches_merge_into_per_line_coverage_and_the_control_run() -> None:
    imports = {"import_lines": {"m.py": [1]}, "preload": ["json"], "models": []}
    measured = ForkedBaseline(["a", "b", "c"], imports)
    measured.add(
        ["a", "b"],
        result(
            [("a", "passed"), ("b", "passed")],
            measured={"lines": {"m.py": {3: ["a", "b"], 4: ["b"]}}, "modules": ["httpx"], "models": ["x:Y"]},
        ),
    )
    measured.add(
        ["c"], result([("c", "skipped")], measured={"lines": {"m.py": {3: ["c"]}}, "modules": ["json"]})
    )
    for name in ("a", "b", "c"):
        measured.add_control(name, result([(name, "passed" if name != "b" else "failed")]))
    baseline = measured.baseline()
    assert baseline is not None
    assert baseline.coverage == {"m.py": {3: ["a", "b", "c"], 4: ["b"]}}
    assert baseline.preload == ["json", "httpx"]
    assert baseline.models == ["x:Y"]
    assert baseline.imported == ["m.py"]
    assert set(baseline.control) == {"a", "b"}  # only passing tests have a control result
    assert baseline.flaky == ["b"]  # passed measured, failed alone: the run stops as before
