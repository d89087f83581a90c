"""The narrow test selection for module-level mutants (``mutagent.engine.selection.narrow``).

Unit tests feed the analysis small hand-written modules and check which lines and test files it
selects, and that everything it cannot see through makes the selection broad. One end-to-end
run then checks the rule on a real engine run: a constant read by one function runs only that
function's test, and the mutant is still killed.
"""

from __future__ import annotations

import io
from pathlib import Path
from textwrap import dedent

import pytest
from rich.console import Console
from testkit.engine_targets import HandMutant, HandMutants, write_target

from mutagent.config import EngineConfig
from mutagent.engine.orchestration.runner import Engine
from mutagent.engine.selection.narrow import Broad, Narrowed, Narrower
from mutagent.model import Status
from mutagent.store import load_run_data

LIMITS = dedent(
    """
    import re

    MAX_ITEMS = 3
    PATTERN = re.compile("a+")


    def clip(items):
        return items[:MAX_ITEMS]


    def double(x):
        return 2 * x


    def match(text):
        return PATTERN.match(text)
    """
).lstrip("\n")


def narrower(files: dict[str, str], import_lines: dict[str, list[int]] | None = None) -> Narrower:
    texts = {name: dedent(text).lstrip("\n") for name, text in files.items()}
    sources = {name: text for name, text in texts.items() if not name.startswith("tests/")}
    modules = {name: name[:-3].replace("/", ".").removesuffix(".__init__") for name in texts}
    return Narrower(sources, texts, modules, {} if import_lines is None else import_lines)


def narrow(
    files: dict[str, str], line: int, replace: tuple[str, str] = ("3", "4"), **kwargs: object
) -> Narrowed:
    analysis = narrower(files, **kwargs)  # type: ignore[arg-type]
    source = analysis.files["calc/limits.py"]
    lines = source.splitlines(keepends=True)
    lines[line - 1] = lines[line - 1].replace(*replace, 1)
    return analysis.narrow("calc/limits.py", line, "".join(lines))


def test_a_constant_read_by_one_function_selects_that_function_only() -> None:
    found = narrow({"calc/limits.py": LIMITS}, line=3)
    assert found.lines == {"calc/limits.py": {8}}  # clip's body, not double's
    assert found.files == set()


def test_a_pure_constructor_call_is_still_a_plain_value() -> None:
    found = narrow({"calc/limits.py": LIMITS}, line=4, replace=("a+", "b+"))
    assert found.names == {"PATTERN"}
    assert found.lines == {"calc/limits.py": {16}}


def test_re_exports_and_derived_constants_are_followed() -> None:
    files = {
        "calc/limits.py": LIMITS + "\n\nDOUBLE_MAX = MAX_ITEMS * 2\n",
        "calc/api.py": """
            from .limits import MAX_ITEMS as LIMIT


            def page(items):
                size = LIMIT
                return items[:size]
        """,
        "calc/other.py": """
            from calc.limits import DOUBLE_MAX


            def wide(items):
                return items[:DOUBLE_MAX]
        """,
    }
    found = narrow(files, line=3)
    assert found.names == {"MAX_ITEMS", "LIMIT", "DOUBLE_MAX"}
    assert found.lines == {"calc/limits.py": {8}, "calc/api.py": {5, 6}, "calc/other.py": {5}}


def test_imports_inside_functions_and_try_blocks_are_followed() -> None:
    files = {
        "calc/limits.py": LIMITS,
        "calc/lazy.py": """
            try:
                from calc.limits import MAX_ITEMS
            except ImportError:
                MAX_ITEMS = 1


            def first(items):
                return items[:MAX_ITEMS]


            def late(items):
                from calc.limits import MAX_ITEMS as most

                return items[:most]
        """,
    }
    assert narrow(files, line=3).lines == {"calc/limits.py": {8}, "calc/lazy.py": {8, 12, 13, 14}}


def test_a_default_argument_selects_the_functions_body() -> None:
    extra = (
        "\n\ndef take(items, n=MAX_ITEMS):\n    return items[:n]\n"
        "\n\nclass Box:\n    def get(self, n=MAX_ITEMS):\n        return n\n"
    )
    assert narrow({"calc/limits.py": LIMITS + extra}, line=3).lines == {"calc/limits.py": {8, 20, 25}}


def test_test_files_naming_the_constant_in_any_way_are_selected_whole() -> None:
    files = {
        "calc/limits.py": LIMITS,
        "tests/test_a.py": "from calc.limits import MAX_ITEMS\n",
        "tests/test_b.py": "def test(monkeypatch):\n    monkeypatch.setattr('calc.limits.MAX_ITEMS', 9)\n",
        "tests/test_c.py": "import calc.limits\n\ndef test():\n    assert calc.limits.clip([]) == []\n",
    }
    assert narrow(files, line=3).files == {"tests/test_a.py", "tests/test_b.py"}


def test_a_test_reading_module_attributes_by_computed_name_is_selected() -> None:
    files = {
        "calc/limits.py": LIMITS,
        "tests/test_c.py": "from calc import limits\n\n"
        "def test():\n    assert getattr(limits, 'MAX_' + 'X')\n",
    }
    assert narrow(files, line=3).files == {"tests/test_c.py"}


@pytest.mark.parametrize(
    "extra, why",
    [
        ("\n\nclass Box:\n    size = MAX_ITEMS\n", "class body"),
        ("\n\n@functools.lru_cache(MAX_ITEMS)\ndef cached():\n    return 1\n", "at import time"),
        ("\n\nprint(MAX_ITEMS)\n", "at import time"),
        ("\n\nSETTINGS = dict(globals())\n", "globals"),
        ("\n\nfrom os.path import *\n", "import *"),
        ("\n\ndef __getattr__(name):\n    return 1\n", "__getattr__"),
    ],
    ids=["class-body", "decorator", "module-level-call", "globals", "star-import", "module-getattr"],
)
def test_uses_the_analysis_cannot_see_through_are_broad(extra: str, why: str) -> None:
    with pytest.raises(Broad, match=why):
        narrow({"calc/limits.py": LIMITS + extra}, line=3)


def test_a_statement_that_is_not_a_plain_value_is_broad() -> None:
    files = {"calc/limits.py": LIMITS.replace("MAX_ITEMS = 3", "MAX_ITEMS = register(3)")}
    with pytest.raises(Broad, match="calls register"):
        narrow(files, line=3)


def test_a_mutant_that_adds_a_call_is_broad() -> None:
    with pytest.raises(Broad, match="calls print"):
        narrow({"calc/limits.py": LIMITS}, line=3, replace=("3", "print(3)"))


def test_a_reader_that_ran_at_import_is_broad() -> None:
    with pytest.raises(Broad, match="ran outside any test"):
        narrow({"calc/limits.py": LIMITS}, line=3, import_lines={"calc/limits.py": [1, 3, 4, 7, 8, 11, 15]})


def test_the_analysis_made_ahead_of_the_baseline_narrows_as_one_made_with_it() -> None:
    """The planner's narrower reuses an analysis made while the workers started (before the
    import-time lines were known): the same selection, and the same reason when it is broad."""
    files = {"calc/limits.py": LIMITS, "calc/use.py": "from calc.limits import MAX_ITEMS\n\nN = MAX_ITEMS\n"}
    mutated = LIMITS.replace("MAX_ITEMS = 3", "MAX_ITEMS = 4")
    ahead = narrower(files, None)
    ahead.analyse_ahead([("calc/limits.py", 3), ("calc/limits.py", 4)])
    for import_lines in ({}, {"calc/limits.py": [1, 3, 4, 7, 8, 11, 15]}, {"calc/limits.py": [15]}):
        direct, reused = narrower(files, import_lines), ahead.with_import_lines(import_lines)
        outcomes = []
        for analysis in (direct, reused):
            try:
                found = analysis.narrow("calc/limits.py", 3, mutated)
                outcomes.append((found.lines, found.files, found.names))
            except Broad as exc:
                outcomes.append(str(exc))
        assert outcomes[0] == outcomes[1]
    assert reused._analyses is ahead._analyses  # nothing analysed twice


def test_a_baseline_without_import_lines_is_broad() -> None:
    analysis = Narrower({"calc/limits.py": LIMITS}, {"calc/limits.py": LIMITS}, {}, None)
    with pytest.raises(Broad, match="did not record"):
        analysis.narrow("calc/limits.py", 3, LIMITS)


def test_a_source_reading_attributes_by_computed_name_is_broad() -> None:
    files = {
        "calc/limits.py": LIMITS,
        "calc/dump.py": "import calc.limits\n\ndef dump(name):\n    return getattr(calc.limits, name)\n",
    }
    with pytest.raises(Broad, match="computed name"):
        narrow(files, line=3)


def test_a_constant_nothing_reads_is_broad() -> None:
    with pytest.raises(Broad, match="nothing reads"):
        narrow({"calc/limits.py": LIMITS.replace("items[:MAX_ITEMS]", "items")}, line=3)


def test_an_engine_run_selects_only_the_readers_tests_and_still_kills(tmp_path: Path) -> None:
    root = write_target(
        tmp_path / "project",
        {
            "calc/__init__.py": "",
            "calc/limits.py": LIMITS,
            "tests/test_clip.py": """
                from calc.limits import clip


                def test_clip():
                    assert clip([1, 2, 3, 4]) == [1, 2, 3]
            """,
            "tests/test_double.py": """
                from calc.limits import double


                def test_double():
                    assert double(2) == 4


                def test_double_again():
                    assert double(3) == 6
            """,
        },
    )
    mutant = HandMutant("calc/limits.py", "MAX_ITEMS = 3", "MAX_ITEMS = 4")
    config = EngineConfig(root=root, workers=1, timeout_constant=4.0)
    stats = Engine(config, Console(file=io.StringIO()), HandMutants([mutant])).run()
    result = next(iter(load_run_data(root).results.values()))
    assert stats.fresh_imports == 1
    assert result.status is Status.KILLED
    assert result.covered_by == ["tests/test_clip.py::test_clip"]  # broad would add both double tests
    assert result.tests_run == ["tests/test_clip.py::test_clip"]
    assert result.killed_by == ["tests/test_clip.py::test_clip"]
