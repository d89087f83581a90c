"""Default-value mutants: applied by swapping ``__defaults__`` when nothing read the old value at
import time, else left to a fresh import (``selection/defaults.py``, ``child.apply_defaults``)."""

from __future__ import annotations

import ast
import textwrap
import types

import pytest

from mutagent.engine.harness.child import apply_defaults, defaults_fit
from mutagent.engine.messages import DefaultsSwap, JobSpec
from mutagent.engine.selection.analysis import SourceMap
from mutagent.engine.selection.defaults import DefaultsChange, defaults_change
from mutagent.engine.selection.import_reads import ImportTime
from mutagent.engine.selection.names import import_time_nodes
from mutagent.model import Location


def _change(
    source: str,
    before: str,
    after: str,
    others: dict[str, str] | None = None,
    ran: dict[str, list[int]] | None = None,
) -> DefaultsChange | str:
    """The verdict on the mutant replacing ``before`` by ``after`` (``before`` is ``name=value``:
    the mutant's location is the value, the expression an operator replaces)."""
    source = textwrap.dedent(source)
    if "=" in before and "=" in after:
        name = before.split("=", 1)[0] + "="
        assert after.startswith(name)
        offset = source.index(before) + len(name)
        before, after = before[len(name) :], after[len(name) :]
    else:
        offset = source.index(before)
    line = source.count("\n", 0, offset) + 1
    col = offset - (source.rfind("\n", 0, offset) + 1)
    location = Location(line, col, line, col + len(before))
    mutated = source[:offset] + after + source[offset + len(before) :]
    files = {"pkg/mod.py": source, **{f: textwrap.dedent(t) for f, t in (others or {}).items()}}
    sources = {f: t for f, t in files.items() if not f.startswith("tests/")}
    lines = ran if ran is not None else _ran_at_import(sources)
    return defaults_change(SourceMap(source), location, mutated, ImportTime(files, sources, lines))


def _ran_at_import(sources: dict[str, str]) -> dict[str, list[int]]:
    """What a baseline records for these snippets: the lines of the statements run at import
    (every statement outside function bodies; no function is called at import here)."""
    return {
        f: sorted({n.lineno for n in import_time_nodes(ast.parse(t)) if isinstance(n, ast.stmt)})
        for f, t in sources.items()
    }


SWAPPED = [
    pytest.param(
        "def backoff(attempt, base=0.5, cap=8.0):\n    return min(cap, base * 2**attempt)\n",
        "cap=8.0",
        "cap=9.0",
        DefaultsChange("backoff", 1, ((1, 9.0),), ()),
        id="a positional default",
    ),
    pytest.param(
        "async def call(prompt, *, retries=3, stream=True):\n    return prompt\n",
        "stream=True",
        "stream=False",
        DefaultsChange("call", 1, (), (("stream", False),)),
        id="a keyword-only default of an async def",
    ),
    pytest.param(
        "class Client:\n    @staticmethod\n    def make(timeout=60.0):\n        return timeout\n",
        "timeout=60.0",
        "timeout=-1.0",
        DefaultsChange("make", 2, ((0, -1.0),), ()),
        id="a static method (first line is its decorator's)",
    ),
    pytest.param(
        'def send(msg, stop=("end",)):\n    return msg\n',
        'stop=("end",)',
        'stop=("end", "")',
        DefaultsChange("send", 1, ((0, ("end", "")),), ()),
        id="a tuple literal",
    ),
]


@pytest.mark.parametrize("source, before, after, expected", SWAPPED)
def test_a_literal_default_of_an_import_time_def_is_swapped(
    source: str, before: str, after: str, expected: DefaultsChange
) -> None:
    assert _change(source, before, after) == expected


KEPT = [
    pytest.param(
        "def keep(fn):\n    return fn\n\n@keep\ndef f(x=1):\n    return x\n",
        "x=1",
        "x=2",
        "decorated with keep",
        id="a decorator may have read the signature",
    ),
    pytest.param(
        "LIMIT = 3\ndef f(x=LIMIT):\n    return x\n",
        "x=LIMIT",
        "x=LIMIT + 1",
        "is not a literal",
        id="a new value that depends on when it is evaluated",
    ),
    pytest.param(
        "def f(x=1):\n    return x\nROUTES = [f]\n",
        "x=1",
        "x=2",
        "pkg/mod.py:3 reads it and ran at import time",
        id="the function is named at import time",
    ),
    pytest.param(
        "def outer():\n    def inner(x=1):\n        return x\n    return inner\n",
        "x=1",
        "x=2",
        "not in a default value of a def run at import time",
        id="a nested def (a code swap of outer applies it)",
    ),
    pytest.param(
        "def f(x=1):\n    return x + 1\n",
        "x + 1",
        "x + 2",
        "not in a default value of a def run at import time",
        id="the body",
    ),
    pytest.param(
        "def f(x: int = 1):\n    return x\n",
        "int",
        "str",
        "not in a default value of a def run at import time",
        id="an annotation",
    ),
]


@pytest.mark.parametrize("source, before, after, reason", KEPT)
def test_what_may_have_kept_the_old_value_stays_a_fresh_import(
    source: str, before: str, after: str, reason: str
) -> None:
    verdict = _change(source, before, after)
    assert isinstance(verdict, str) and reason in verdict


def test_a_function_registered_at_import_time_in_another_file_stays_a_fresh_import() -> None:
    others = {"pkg/app.py": "from pkg.mod import handler\nrouter.add_api_route('/', handler)\n"}
    verdict = _change("def handler(q=1):\n    return q\n", "q=1", "q=2", others)
    assert verdict == "pkg/app.py:2 reads it and ran at import time"
    used_in_a_body = {"pkg/app.py": "from pkg.mod import handler\ndef run():\n    return handler()\n"}
    verdict = _change("def handler(q=1):\n    return q\n", "q=1", "q=2", used_in_a_body)
    assert isinstance(verdict, DefaultsChange)


def _target(x: int, scale: float = 2.0, *, label: str = "x", sentinel: object = None) -> tuple:
    return x * scale, label, sentinel


def test_the_child_swaps_only_the_changed_values_and_keeps_the_other_objects() -> None:
    clone = types.FunctionType(_target.__code__, _target.__globals__, "_target", _target.__defaults__)
    clone.__kwdefaults__ = dict(_target.__kwdefaults__ or {})
    marker = object()
    clone.__kwdefaults__["sentinel"] = marker
    key = ("pkg/mod.py", "_target", _target.__code__.co_firstlineno)
    swap = DefaultsSwap(key, DefaultsChange("_target", 1, ((0, 3.0),), (("label", "y"),)).values_wire())
    assert JobSpec(("t::a",), 1.0, defaults=(swap,)).to_wire("j")["defaults"] == [swap.to_wire()]
    assert JobSpec.from_wire(JobSpec(("t::a",), 1.0, defaults=(swap,)).to_wire("j")).defaults == (swap,)
    assert defaults_fit(clone, *swap.decoded())
    assert apply_defaults({key: [clone]}, key, *swap.decoded()) == 1
    assert clone(1) == (3.0, "y", marker)
    assert not defaults_fit(clone, {5: 1}, {}) and not defaults_fit(clone, {}, {"nope": 1})


def test_a_function_called_at_import_time_used_the_old_default() -> None:
    source = (
        "def backoff(attempt, base=0.5):\n    return base * attempt\n"
        "def make():\n    return backoff(2)\nDELAY = make()\n"
    )
    called = _change(source, "base=0.5", "base=1.5", ran={"pkg/mod.py": [1, 3, 4, 5]})
    assert called == "pkg/mod.py:4 reads it and ran at import time"
    not_called = _change(source, "base=0.5", "base=1.5", ran={"pkg/mod.py": [1, 3, 5]})
    assert isinstance(not_called, DefaultsChange)  # make() ran in a test only: nothing kept 0.5


def test_a_test_module_that_calls_it_at_collection_keeps_the_fresh_import() -> None:
    collection = {
        "tests/test_b.py": "import pytest\nfrom pkg.mod import backoff\n"
        "@pytest.mark.parametrize('d', [backoff(1)])\ndef test_d(d):\n    assert d\n"
    }
    verdict = _change(
        "def backoff(attempt, base=0.5):\n    return base * attempt\n", "base=0.5", "base=1.5", collection
    )
    assert verdict == "tests/test_b.py:3 reads it at import time"
