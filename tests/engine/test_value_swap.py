"""Constant mutants: a module global or class attribute read only at call time is rebound in the
forked child; anything that may have kept the old value at import time keeps the fresh import
(``selection/module_values.py``, ``child.live_owner``/``apply_values``)."""

from __future__ import annotations

import enum
import sys
import textwrap

import pytest

from mutagent.engine.harness.child import apply_values, live_owner, swapped_value
from mutagent.engine.messages import JobSpec, ValueSwap
from mutagent.engine.selection.analysis import SourceMap
from mutagent.engine.selection.import_reads import ImportTime
from mutagent.engine.selection.module_values import ValueChange, value_change
from mutagent.model import Location

MOD = "pkg/mod.py"


def _verdict(
    source: str,
    before: str,
    after: str,
    import_lines: list[int],
    others: dict[str, str] | None = None,
    others_import_lines: dict[str, list[int]] | None = None,
) -> ValueChange | str:
    """The verdict on the mutant replacing the first ``before`` of ``source`` (an expression
    inside the assigned value) by ``after``."""
    source = textwrap.dedent(source)
    offset = source.index(before)
    line = source.count("\n", 0, offset) + 1
    col = offset - (source.rfind("\n", 0, offset) + 1)
    mutated = source[:offset] + after + source[offset + len(before) :]
    files = {MOD: source, **{f: textwrap.dedent(t) for f, t in (others or {}).items()}}
    sources = {f: t for f, t in files.items() if not f.startswith("tests/")}
    lines = {MOD: import_lines, **(others_import_lines or {})}
    where = Location(line, col, line, col + len(before))
    return value_change(MOD, SourceMap(source), where, mutated, ImportTime(files, sources, lines))


READER = "def retryable(status):\n    return status in STATUSES\n"

SWAPPED = [
    pytest.param(
        "STATUSES = frozenset({408, 429})\n" + READER,
        "frozenset({408, 429})",
        "frozenset({408})",
        [1, 2],
        None,
        ValueChange("", "STATUSES", "frozenset({408})"),
        id="a module constant read in a function body",
    ),
    pytest.param(
        "MAX_TURNS: int = 10\ndef turns():\n    return MAX_TURNS\n",
        "10",
        "11",
        [1, 2],
        None,
        ValueChange("", "MAX_TURNS", "11"),
        id="an annotated module constant",
    ),
    pytest.param(
        "class StreamError(Exception):\n    retryable = True\n"
        "    def again(self):\n        return self.retryable\n",
        "True",
        "False",
        [1, 2, 3],
        None,
        ValueChange("StreamError", "retryable", "False"),
        id="a class attribute read through self",
    ),
    pytest.param(
        "BASE = 2\nLIMIT = BASE * 3\ndef limit():\n    return LIMIT\n",
        "3",
        "4",
        [1, 2, 3],
        None,
        ValueChange("", "LIMIT", "BASE * 4"),
        id="a value reading a constant bound once above it",
    ),
    pytest.param(
        "STATUSES = frozenset({408, 429})\n" + READER,
        "frozenset({408, 429})",
        "frozenset({408})",
        [1, 2],
        {"tests/test_policy.py": "from pkg import mod\ndef test_it():\n    assert 429 in mod.STATUSES\n"},
        ValueChange("", "STATUSES", "frozenset({408})"),
        id="a test reading it in its body",
    ),
]


@pytest.mark.parametrize("source, before, after, import_lines, others, expected", SWAPPED)
def test_a_constant_read_only_at_call_time_is_rebound(
    source: str, before: str, after: str, import_lines: list[int], others: dict | None, expected: ValueChange
) -> None:
    assert _verdict(source, before, after, import_lines, others) == expected


KEPT = [
    pytest.param(
        "STATUSES = frozenset({408, 429})\nALL = STATUSES | {500}\n" + READER,
        [1, 2, 3],
        None,
        "pkg/mod.py:2 reads it and ran at import time",
        id="a value derived from it at import time",
    ),
    pytest.param(
        "STATUSES = frozenset({408, 429})\n" + READER,
        [1, 2],
        {"pkg/loop.py": "from pkg.mod import STATUSES\ndef f(s):\n    return s in STATUSES\n"},
        "pkg/loop.py:1 binds a copy of it at import time",
        id="another module imports a copy",
    ),
    pytest.param(
        "STATUSES = frozenset({408, 429})\n" + READER,
        [1, 2],
        {"pkg/loop.py": "from pkg.mod import *\n"},
        "pkg/loop.py:1 binds a copy of it at import time",
        id="a star import",
    ),
    pytest.param(
        "STATUSES = frozenset({408, 429})\n" + READER,
        [1, 2],
        {
            "tests/test_p.py": "import pytest\nfrom pkg import mod\n"
            "@pytest.mark.parametrize('s', sorted(mod.STATUSES))\ndef test_s(s):\n    assert s\n"
        },
        "tests/test_p.py:3 reads it at import time",
        id="a parametrize over it at collection",
    ),
    pytest.param(
        "STATUSES = frozenset({408, 429})\n" + READER,
        [1, 2],
        {"tests/helpers.py": "from pkg import mod\ndef statuses():\n    return sorted(mod.STATUSES)\n"},
        "reads it in statuses, which collection may call",
        id="a test helper collection may call",
    ),
    pytest.param(
        "STATUSES = frozenset({408, 429})\n" + READER,
        [1, 2],
        {"pkg/lazy.py": "from pkg import mod\ndef f(s):\n    return s in mod.STATUSES\n"},
        "pkg/lazy.py reads it and was not imported when the baseline recorded import time",
        id="a reader imported only later (its import-time reads unrecorded)",
    ),
    pytest.param(
        "STATUSES = frozenset({408, 429})\nSTATUSES = frozenset({500})\n" + READER,
        [1, 2, 3],
        None,
        "STATUSES is bound 2 times",
        id="bound twice",
    ),
    pytest.param(
        "STATUSES = frozenset({408, 429})\n"
        + READER
        + "def reset():\n    global STATUSES\n    STATUSES = set()\n",
        [1, 2, 4],
        None,
        "STATUSES is declared global in a function",
        id="rebound at run time",
    ),
]


@pytest.mark.parametrize("source, import_lines, others, reason", KEPT)
def test_what_may_have_kept_the_old_constant_stays_a_fresh_import(
    source: str, import_lines: list[int], others: dict | None, reason: str
) -> None:
    verdict = _verdict(source, "frozenset({408, 429})", "frozenset({408})", import_lines, others)
    assert isinstance(verdict, str) and reason in verdict, verdict


@pytest.mark.parametrize(
    "source, before, after, reason",
    [
        ("CLIENT = make_client(3)\n", "3", "4", "calls make_client at import time"),
        ("__version__ = '1'\n", "'1'", "'2'", "dunder"),
        ("from dataclasses import dataclass\n@dataclass\nclass C:\n    x = 1\n", "1", "2", "decorated"),
        ("class C:\n    x: int = 1\n", "1", "2", "not the value of a plain assignment"),
        ("A, B = 1, 2\n", "1", "3", "one value to one name"),
        ("KEY = lambda s: 1\n", "1", "2", "lambda"),
    ],
    ids=[
        "an impure value",
        "a dunder",
        "a decorated class",
        "an annotated class field",
        "unpacking",
        "a lambda",
    ],
)
def test_statements_other_than_a_plain_constant_stay_a_fresh_import(
    source: str, before: str, after: str, reason: str
) -> None:
    verdict = _verdict(source, before, after, [1, 2, 3, 4])
    assert isinstance(verdict, str) and reason in verdict, verdict


# --- the worker's side: find the live owner, evaluate, rebind ----------------------------------

GREETING = "hello"


class Plain:
    label = "plain"


class Registry:
    def __init_subclass__(cls) -> None:
        cls.seen = cls.__dict__.get("label")


class Registered(Registry):
    label = "registered"


class Colour(enum.Enum):
    RED = 1


def test_the_live_owner_is_the_module_or_a_plain_class_of_it() -> None:
    here = __file__
    assert live_owner(__name__, here, "") is sys.modules[__name__]
    assert live_owner(__name__, here, "Plain") is Plain
    assert "defines __init_subclass__" in live_owner(__name__, here, "Registered")
    assert "not a plain class" in live_owner(__name__, here, "Colour")
    assert "not loaded from the copy" in live_owner(__name__, "/elsewhere/mod.py", "")
    assert "not loaded from the copy" in live_owner("no.such.module", here, "")


def test_the_child_rebinds_the_evaluated_value(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Plain, "label", "plain")
    monkeypatch.setattr(sys.modules[__name__], "GREETING", "hello")
    swaps = (
        ValueSwap(__name__, __file__, "", "GREETING", "GREETING.upper() if False else 'bye'"),
        ValueSwap(__name__, __file__, "Plain", "label", "frozenset({1, 2})"),
    )
    spec = JobSpec(("t::a",), 1.0, values=swaps)
    assert JobSpec.from_wire(spec.to_wire("j")).values == swaps
    assert swapped_value(__name__, "len('abc')") == 3
    assert apply_values([s.as_order() for s in swaps]) == 2
    assert GREETING == "bye" and Plain.label == frozenset({1, 2})


def test_a_source_module_first_imported_by_a_test_keeps_every_constant_a_fresh_import() -> None:
    """Its import-time code may have read the constant through a function, unrecorded."""
    source = textwrap.dedent("STATUSES = frozenset({408, 429})\n" + READER)
    mutated = source.replace("frozenset({408, 429})", "frozenset({408})")
    where = Location(1, 11, 1, 32)
    files = {MOD: source, "pkg/lazy.py": "from pkg import build\nTABLE = build()\n"}
    ran = {MOD: [1, 2]}
    lazy = value_change(
        MOD, SourceMap(source), where, mutated, ImportTime(files, files, ran, [MOD, "pkg/lazy.py"])
    )
    assert lazy == "pkg/lazy.py is first imported during the tests (its import-time reads are not recorded)"
    assert isinstance(
        value_change(MOD, SourceMap(source), where, mutated, ImportTime(files, files, ran, [MOD])),
        ValueChange,
    )
