"""From a probe's observations to a candidate test: what held on the original, what the mutant changed.

Statement by statement after the script, the candidate keeps what the test says when it still
holds under the fault on the original (every probe run), and rewrites what does not: an
``assert`` becomes ``assert <its operand> == <the value the original produced>`` (a value that
reads back as a literal and was the same in every run), a call the original answered with an
exception goes under ``pytest.raises`` of that exception, a ``pytest.raises`` that nothing
satisfied any more is unwrapped or retyped, a statement that failed is left out. A statement is
a *kill* when the mutant's probe saw something else there. When no statement of the test's own
tells the two apart, the fake server's record does: the number of requests, a tool result, a
resent body, a field of a request body, the wait before a retry against the ``retry-after``
sent. The candidate ends at its first kill; without one there is no candidate.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

from mutagent.suggest.build import Rewrite, Statement, _indent

MAX_LINES = 30
MAX_LITERAL = 120
_PURE_CALLS = re.compile(r"^(len|sorted|list|set|dict|tuple|any|all|isinstance|str|repr|bool|int|float)\(")


@dataclass
class Candidate:
    """A candidate test: its code, what it is about, and what made it kill in the probe."""

    name: str
    code: str
    kills: str  # what the mutant's probe saw differently, in words
    imports: list[str] = field(default_factory=list)  # import lines the test's module lacks


def _spelt(text: str) -> str:
    """A recorded literal as the candidate writes it: strings in double quotes."""
    from mutagent.fakeserver.inject import literal

    try:
        return literal(ast.literal_eval(text))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text


def _is_literal(source: str) -> bool:
    try:
        ast.literal_eval(source)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    return True


def _value(entry: dict[str, Any] | None, position: int) -> dict[str, Any] | None:
    if entry is None:
        return None
    values = entry.get("values") or []
    return values[position] if position < len(values) else None


def _same(values: list[dict[str, Any] | None]) -> dict[str, Any] | None:
    """The one value every original run saw (None when they differ, or one is missing)."""
    if not values or any(v is None for v in values):
        return None
    first = values[0]
    key = lambda v: (v.get("repr"), v.get("error"), v.get("message"))  # noqa: E731
    return first if all(key(v) == key(first) for v in values) else None


def _differs(original: dict[str, Any], mutant: dict[str, Any] | None) -> bool:
    if mutant is None:
        return True
    return (original.get("repr"), original.get("error")) != (mutant.get("repr"), mutant.get("error"))


class Names:
    """How the candidate may name an exception class, ``pytest`` and the behaviours: the test
    module's own names, or an import line the candidate needs."""

    def __init__(self, rw: Rewrite) -> None:
        self.rw = rw
        self.imports: list[str] = []
        self.bound = _module_names(rw.src.module)

    def pytest(self) -> str:
        if self.rw.src.pytest_name:
            return self.rw.src.pytest_name
        self._need("import pytest")
        return "pytest"

    def exception(self, qualified: str) -> str:
        module, _, name = qualified.rpartition(".")
        if not module or module == "builtins":
            return name
        if self.bound.get(name) == qualified:
            return name
        self._need(f"from {module} import {name}")
        return name

    def _need(self, line: str) -> None:
        if line not in self.imports:
            self.imports.append(line)


def _module_names(module: Any) -> dict[str, str]:
    """Names the test module binds by ``from X import Y [as Z]``: ``Z -> X.Y``."""
    import libcst as cst

    names: dict[str, str] = {}
    for node in module.body:
        if not isinstance(node, cst.SimpleStatementLine):
            continue
        for small in node.body:
            if (
                isinstance(small, cst.ImportFrom)
                and small.module is not None
                and not isinstance(small.names, cst.ImportStar)
            ):
                source = module.code_for_node(small.module)
                for alias in small.names:
                    name = module.code_for_node(alias.name)
                    bound = alias.asname.name.value if alias.asname else name  # type: ignore[union-attr]
                    names[bound] = f"{source}.{name}"
    return names


def _pattern(message: str) -> str:
    """A ``match=`` pattern for ``message``: its start up to the first character a regular
    expression reads specially (``re.search`` matches a prefix), escaped only when that is short."""
    head = re.split(r"[.^$*+?{}\[\]\\|()]", message, maxsplit=1)[0][:60]
    return head if len(head) >= 10 else re.escape(message[:60])


def _raises(names: Names, value: dict[str, Any], mine: dict[str, Any] | None, what: str) -> tuple[str, str]:
    """``pytest.raises(<the original's exception>)`` (with ``match=`` its message when the mutant
    raises the same class with another one), and why that kills the mutant ("" if it does not)."""
    from mutagent.fakeserver.inject import literal

    error = value["error"]
    call = f"{names.pytest()}.raises({names.exception(error)}"
    message = str(value.get("message") or "")
    short = error.rsplit(".", 1)[-1]
    if mine is None or mine.get("error") != error:
        return call + ")", f"`{what}` does not raise {short}"
    if message and mine.get("message") != message:
        return (
            call + f", match={literal(_pattern(message))})",
            f"`{what}` raises {short} for another reason",
        )
    return call + ")", ""


def _has_effect(expression: str, fake_model: str) -> bool:
    """Whether evaluating ``expression`` may change what happens next (it calls something that is
    neither the fake server's record nor a builtin that only reads)."""
    if "(" not in expression:
        return False
    stripped = expression.strip()
    return not (stripped.startswith(f"{fake_model}.") or _PURE_CALLS.match(stripped))


def _observed(
    rw: Rewrite,
    statement: Statement,
    originals: list[dict[str, Any]],
    mutant: dict[str, Any] | None,
    names: Names,
) -> tuple[str | None, str]:  # noqa: E501
    """(the candidate's spelling of ``statement`` or None to leave it out, why it kills or "")."""
    key = str(statement.index)
    entries = [o.get("entries", {}).get(key) for o in originals]
    m = (mutant or {}).get("entries", {}).get(key) if mutant is not None else None
    if any(e is None for e in entries):
        return None, ""  # not reached on the original (an earlier statement ended the probe)
    lead = statement.lead
    if statement.kind in ("compare", "truth"):
        if all(e.get("held") is True for e in entries):
            kill = "" if m is not None and m.get("held") is True else f"`{statement.bare.strip()}` fails"
            return statement.code, kill
        for position, operand in enumerate(statement.operands):
            if _is_literal(operand):
                continue
            value = _same([_value(e, position) for e in entries])
            if value is None:
                continue
            if value.get("error"):
                if _has_effect(operand, rw.src.fake_model) and value["error"] not in (
                    "AssertionError",
                    "NameError",
                ):
                    raises, kill = _raises(names, value, _value(m, position), operand)
                    return f"{lead}with {raises}:\n{_indent(operand)}\n", kill
                return None, ""
            if value.get("literal") and len(value["repr"]) <= MAX_LITERAL:
                kill = (
                    f"`{operand}` is {value['repr']} on the original"
                    if _differs(value, _value(m, position))
                    else ""
                )
                if value["repr"] == "False" and statement.kind == "truth":
                    return f"{lead}assert not {operand}\n", kill
                return f"{lead}assert {operand} == {_spelt(value['repr'])}\n", kill
            if _has_effect(operand, rw.src.fake_model):
                mine = _value(m, position)
                kill = f"`{operand}` raises on the mutant" if mine is not None and mine.get("error") else ""
                return f"{lead}{operand}\n", kill
        return None, ""
    if statement.kind == "call":
        value = _same([_value(e, 0) for e in entries])
        if value is None:
            return None, "unstable"
        mine = _value(m, 0)
        if value.get("error"):
            raises, kill = _raises(names, value, mine, statement.operands[0])
            return f"{lead}with {raises}:\n{_indent(statement.bare.strip())}\n", kill
        kill = (
            f"`{statement.operands[0]}` raises {mine['error']}"
            if mine is not None and mine.get("error")
            else ""
        )
        return statement.code, kill
    if statement.kind == "raises":
        mine_raised = (m or {}).get("raised") if m is not None else None
        target = f" as {statement.target}" if statement.target else ""
        if all(e.get("accepted") for e in entries):
            kill = (
                ""
                if m is not None and m.get("accepted")
                else "the mutant does not raise what the test expects"
            )
            return statement.code, kill
        raised = [e.get("raised") for e in entries]
        if all(r is None for r in raised):
            kill = f"the mutant raises {mine_raised['error']}" if mine_raised else ""
            return lead + statement.body, kill
        errors = {r["error"] for r in raised if r}
        if len(errors) == 1 and all(raised):
            error = errors.pop()
            kill = (
                ""
                if mine_raised and mine_raised.get("error") == error
                else f"the mutant does not raise {error}"
            )
            raises = f"{names.pytest()}.raises({names.exception(error)}){target}"
            return f"{lead}with {raises}:\n{_indent(statement.body)}", kill
        return None, "unstable"
    # any other statement: kept while it runs on the original
    if all(e.get("error") is None for e in entries):
        kill = f"`{statement.bare.strip()}` raises on the mutant" if m is not None and m.get("error") else ""
        return statement.code, kill
    return None, ""


def _short(value: Any) -> str | None:
    from mutagent.fakeserver.inject import literal

    text = literal(value)
    try:
        if ast.literal_eval(text) != value:
            return None
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return text if len(text) <= MAX_LITERAL else None


def _first_difference(original: Any, mutant: Any, path: str = "") -> tuple[str, Any] | None:
    """The first JSON path where two request bodies differ, with the original's value there."""
    if type(original) is not type(mutant):
        return path, original
    if isinstance(original, dict):
        for key in original:
            if key not in mutant:
                return path + f"[{key!r}]", original[key]
            found = _first_difference(original[key], mutant[key], path + f"[{key!r}]")
            if found:
                return found
        return None if set(mutant) <= set(original) else (path, original)
    if isinstance(original, list):
        for index, (a, b) in enumerate(zip(original, mutant, strict=False)):
            found = _first_difference(a, b, path + f"[{index}]")
            if found:
                return found
        return None if len(original) == len(mutant) else (path, original)
    return None if original == mutant else (path, original)


def server_assertion(
    rw: Rewrite, originals: list[dict[str, Any]], mutant: dict[str, Any] | None, wait: float
) -> tuple[str, str] | None:  # noqa: E501
    """An assertion on the fake server's record that holds in every original run and not on the
    mutant: the request count, a tool result, a resent body, a body field, the wait before a retry."""
    if mutant is None:
        return None
    fm = rw.src.fake_model
    runs = [o.get("requests", []) for o in originals]
    theirs = mutant.get("requests", [])
    counts = {len(r) for r in runs}
    if len(counts) != 1:
        return None
    count = counts.pop()
    if len(theirs) != count:
        return (
            f"assert {fm}.request_count == {count}\n",
            f"the mutant sends {len(theirs)} requests, not {count}",
        )
    for index in range(count):
        results = [r[index].get("tool_results") for r in runs]
        if all(x == results[0] for x in results) and results[0] != theirs[index].get("tool_results"):
            expected = results[0] or {}
            text = _short(expected)
            if text is not None:
                return (
                    f"assert {fm}.tool_results({index}) == {text}\n",
                    f"request {index} carries other tool results",
                )
            mine = theirs[index].get("tool_results") or {}
            for call_id, value in expected.items():
                if mine.get(call_id) != value:
                    if call_id not in mine:
                        return (
                            f"assert {call_id!r} in {fm}.tool_results({index})\n",
                            f"no result for {call_id}",
                        )
                    return (
                        f"assert len({fm}.tool_results({index})[{call_id!r}]) == {len(str(value))}\n",
                        f"the result for {call_id} is cut short",
                    )
    for index in range(count - 1):
        same = [r[index].get("body") == r[index + 1].get("body") for r in runs]
        if all(same) and theirs[index].get("body") != theirs[index + 1].get("body"):
            return (
                f"assert {fm}.bodies_identical({index}, {index + 1})\n",
                f"request {index + 1} is not resent unchanged",
            )
    for index in range(count):
        bodies = [r[index].get("body") for r in runs]
        if not all(b == bodies[0] for b in bodies):
            continue
        found = _first_difference(bodies[0], theirs[index].get("body"))
        if found and found[0]:
            text = _short(found[1])
            if text is not None:
                return (
                    f"assert {fm}.requests[{index}].body{found[0]} == {text}\n",
                    f"request {index} sends another {found[0]}",
                )
    if wait > 0:
        for index in range(count - 1):
            gaps = [r[index + 1]["time"] - r[index]["time"] for r in runs]
            mine = theirs[index + 1]["time"] - theirs[index]["time"]
            if min(gaps) >= 0.9 * wait and mine < 0.5 * wait:
                return (
                    f"assert {fm}.gap({index}, {index + 1}) >= {wait * 0.9:g}\n",
                    "the mutant does not wait",
                )
    return None


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def candidate_name(test: str, fault_label: str | None) -> str:
    """``test_<model>_with_<fault>``, at most 79 characters, the model's name cut between words."""
    stem = test if test.startswith("test_") else f"test_{test}"
    suffix = "_with_" + _slug(fault_label) if fault_label else "_strictly"
    room = max(20, 79 - len(suffix))
    if len(stem) > room:
        cut = stem[:room]
        stem = cut[: cut.rfind("_")] if cut.rfind("_") > 5 else cut
    return (stem + suffix)[:79]


def decide(
    rw: Rewrite,
    originals: list[dict[str, Any]],
    mutant: dict[str, Any] | None,
    *,
    name: str,
    docstring: str,
    wait: float = 0.0,
) -> Candidate | None:
    """The candidate from the probe's records (None when nothing tells the mutant apart)."""
    names = Names(rw)
    body: list[str] = []
    kill = ""
    for statement in rw.after:
        spelt, why = _observed(rw, statement, originals, mutant, names)
        if why == "unstable":
            return None
        if spelt is None:
            continue
        body.append(spelt if spelt.endswith("\n") else spelt + "\n")
        if why:
            kill = why
            break
    if not kill:
        extra = server_assertion(rw, originals, mutant, wait)
        if extra is None:
            return None
        body.append("\n" + extra[0])
        kill = extra[1]
    head = [f'"""{docstring}"""\n', *rw.bindings(), *rw.setup, rw.script.lstrip("\n")]
    code = rw.header(name) + _indent("".join(head + body))
    while len(code.splitlines()) > MAX_LINES and _drop_one(body):
        code = rw.header(name) + _indent("".join(head + body))
    return Candidate(name, code, kill, names.imports)


def _drop_one(body: list[str]) -> bool:
    """Leave out the first plain ``assert`` before the last statement (not the kill): True if one went."""
    for index, text in enumerate(body[:-1]):
        if text.strip().startswith("assert "):
            del body[index]
            return True
    return False
