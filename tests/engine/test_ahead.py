"""Work done in a thread while the baseline runs (``orchestration/ahead.py``): its result or its
error arrive where they are taken, and the narrow analysis made ahead is the planner's."""

from __future__ import annotations

import threading
from textwrap import dedent

import pytest

from mutagent.engine.orchestration.ahead import Ahead, NarrowAhead, module_level_statements
from mutagent.errors import MutagentError
from mutagent.model import Location, Mutant, TextPatch

LIMITS = dedent(
    """
    MAX_ITEMS = 3


    def clip(items):
        return items[:MAX_ITEMS]
    """
).lstrip("\n")


def _mutant(line: int, column: int, original: str) -> Mutant:
    location = Location(line, column, line, column + len(original))
    return Mutant(
        f"m{line}", "op", "calc/limits.py", (), location, original, "4", "3 -> 4", TextPatch(0, 1, "4")
    )


def test_the_result_and_the_error_arrive_where_they_are_taken() -> None:
    started = threading.Event()

    def work() -> int:
        started.set()
        return 42

    ahead = Ahead(work)
    assert ahead.result() == 42 and started.is_set()

    def failing() -> int:
        raise MutagentError("generating the mutants of a.py failed: boom")

    with pytest.raises(MutagentError, match="boom"):
        Ahead(failing).result()


def test_only_module_level_statements_are_analysed_ahead() -> None:
    sources = {"calc/limits.py": LIMITS}
    module_level, in_function = _mutant(1, 12, "3"), _mutant(5, 17, "MAX_ITEMS")
    assert module_level_statements(sources, [module_level, in_function, module_level]) == [
        ("calc/limits.py", 1)
    ]


def test_the_planner_gets_the_analysis_made_ahead() -> None:
    sources = {"calc/limits.py": LIMITS}
    narrow = NarrowAhead(sources, dict(sources), {"calc/limits.py": "calc.limits"})
    running = Ahead(lambda: narrow.analyse([_mutant(1, 12, "3")]))
    narrower = narrow.narrower_for({"calc/limits.py": [1, 4]}, running)
    assert list(narrower._analyses) == [("calc/limits.py", 1)]  # made in the thread, not again
    found = narrower.narrow("calc/limits.py", 1, LIMITS.replace("= 3", "= 4"))
    assert found.lines == {"calc/limits.py": {5}}
