"""Rewriting a test with libcst: the fault inserted into its script, its statements observed.

``faulted_test`` inserts a fault expression into the test's own ``fake_model.script(...)`` call
at the argument that spells the scripted step (copying the neighbouring comma, so a script laid
out one step per line stays so). ``statements`` classifies what follows the script: an
``assert`` comparing operands, an ``assert`` of one value, an expression statement (the agent's
run), a ``with pytest.raises(...)`` block, or any other statement. ``probe_function`` turns those
into observations (``mutagent.suggest.probe``); ``mutagent.suggest.decide`` turns the
observations into the candidate's assertions. Everything is rendered back from the test's own
code, comments and blank lines included.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field

import libcst as cst

from mutagent.suggest.testsource import TestSource, Unreadable

PROBE = "_mutagent_probe"
PROBE_CLASS = "_MutagentProbe"
PROBE_IMPORT = f"from mutagent.suggest.probe import Probe as {PROBE_CLASS}"

_OPS: dict[type, str] = {
    cst.Equal: "==",
    cst.NotEqual: "!=",
    cst.LessThan: "<",
    cst.LessThanEqual: "<=",
    cst.GreaterThan: ">",
    cst.GreaterThanEqual: ">=",
    cst.In: "in",
    cst.NotIn: "not in",
    cst.Is: "is",
    cst.IsNot: "is not",
}


@dataclass
class Statement:
    """One statement after the script, as the probe observes it and a candidate rewrites it."""

    index: int
    code: str  # the statement as the test spells it (leading comments and blank lines included)
    kind: str  # compare | truth | call | raises | stmt
    operands: list[str] = field(default_factory=list)  # compare / truth / call: the expressions
    ops: list[str] = field(default_factory=list)  # compare: the operators between the operands
    raises: str = ""  # raises: the ``pytest.raises(...)`` call
    target: str = ""  # raises: the name after ``as``
    body: str = ""  # raises: the block's statements
    lead: str = ""  # the blank lines and comments before the statement

    @property
    def bare(self) -> str:
        """The statement without the lines before it."""
        return self.code[len(self.lead) :]


def _lead(module: cst.Module, statement: cst.BaseStatement) -> str:
    lines = getattr(statement, "leading_lines", ())
    return "".join(module.code_for_node(line) for line in lines)


def _raises_call(src: TestSource, node: cst.With) -> cst.Call | None:
    if len(node.items) != 1:
        return None
    item = node.items[0].item
    if isinstance(item, cst.Call) and src.code(item.func).endswith("raises"):
        return item
    return None


def classify(src: TestSource, index: int, statement: cst.BaseStatement) -> Statement:
    """What one statement is, for the probe and the candidate."""
    code = src.code(statement)
    lead = _lead(src.module, statement)
    plain = Statement(index, code, "stmt", lead=lead)
    if isinstance(statement, cst.With):
        call = _raises_call(src, statement)
        if call is None or not isinstance(statement.body, cst.IndentedBlock):
            return plain
        alias = statement.items[0].asname
        target = src.code(alias.name) if alias is not None else ""
        inner = "".join(src.code(s) for s in statement.body.body)
        return Statement(index, code, "raises", raises=src.code(call), target=target, body=inner, lead=lead)
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return plain
    small = statement.body[0]
    if isinstance(small, cst.Assert):
        test = small.test
        if isinstance(test, cst.Comparison) and all(type(c.operator) in _OPS for c in test.comparisons):
            operands = [src.code(test.left), *(src.code(c.comparator) for c in test.comparisons)]
            ops = [_OPS[type(c.operator)] for c in test.comparisons]
            return Statement(index, code, "compare", operands, ops, lead=lead)
        return Statement(index, code, "truth", [src.code(test)], lead=lead)
    if isinstance(small, cst.Expr) and not isinstance(small.value, (cst.SimpleString, cst.Await)):
        return Statement(index, code, "call", [src.code(small.value)], lead=lead)
    return plain


def _insert(call: cst.Call, position: int, arg: cst.Arg) -> cst.Call:
    """``call`` with ``arg`` as its ``position``-th positional argument, laid out like its neighbours."""
    args = list(call.args)
    default = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    if not args:
        return call.with_changes(args=[arg])
    if isinstance(call.whitespace_before_args, cst.ParenthesizedWhitespace):
        default = cst.Comma(whitespace_after=call.whitespace_before_args)  # one argument per line
    if position < len(args):
        comma = args[position - 1].comma if position > 0 else args[0].comma
        comma = comma if isinstance(comma, cst.Comma) else default
        return call.with_changes(args=[*args[:position], arg.with_changes(comma=comma), *args[position:]])
    last = args[-1]
    between = args[-2].comma if len(args) > 1 and isinstance(args[-2].comma, cst.Comma) else default
    return call.with_changes(
        args=[*args[:-1], last.with_changes(comma=between), arg.with_changes(comma=last.comma)]
    )


def _one_per_line(call: cst.Call) -> cst.Call:
    """``call`` laid out one argument per line, with a trailing comma (how a formatter lays out a
    call too long for one line)."""

    def newline(indent: str) -> cst.ParenthesizedWhitespace:
        return cst.ParenthesizedWhitespace(
            first_line=cst.TrailingWhitespace(), indent=True, last_line=cst.SimpleWhitespace(indent)
        )

    args = list(call.args)
    laid = [arg.with_changes(comma=cst.Comma(whitespace_after=newline("    "))) for arg in args[:-1]]
    laid.append(args[-1].with_changes(comma=cst.Comma(whitespace_after=newline(""))))
    return call.with_changes(whitespace_before_args=newline("    "), args=laid)


LINE = 100  # a script call longer than this on one line is laid out one step per line


def faulted_body(src: TestSource, fault: str, step: int, times: int = 1) -> list[cst.BaseStatement]:
    """The test's body with ``fault`` (an expression) scripted before step ``step``, ``times`` times."""
    where = src.locate_step(step)
    if where is None:
        raise Unreadable(f"scripted step {step + 1} is not one argument of a script call")
    number, position = where
    body = src.body
    index = src.scripts[number].statement
    statement = body[index]
    call = src.script_call(number)
    expression = cst.parse_expression(fault if times == 1 else f"[{fault}] * {times}")
    arg = cst.Arg(value=expression, star="" if times == 1 else "*")
    expr: cst.Expr = statement.body[0]  # type: ignore[attr-defined]
    inserted = _insert(call, position, arg)
    module = src.module
    if "\n" not in module.code_for_node(call) and len(module.code_for_node(inserted)) > LINE:
        inserted = _one_per_line(inserted)
    body[index] = statement.with_changes(body=[expr.with_changes(value=inserted)])
    return body


def _is_docstring(statement: cst.BaseStatement) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


@dataclass
class Rewrite:
    """A test with a fault inserted, split into what a candidate keeps and what it observes."""

    src: TestSource
    setup: list[str]  # the statements before the script (the docstring dropped)
    script: str  # the first script statement, fault inserted
    after: list[Statement]  # everything after it

    def header(self, name: str) -> str:
        """The ``def`` line (with the test's own decorators but ``parametrize``)."""
        src = self.src
        decorators = [
            src.code(d)
            for d in src.function.decorators
            if not src.code(d.decorator).split("(")[0].endswith("parametrize")
        ]
        bound = {name for name, _ in src.bindings}
        params = []
        for param in src.function.params.params:
            if param.name.value in bound:
                continue
            text = param.name.value
            if param.annotation is not None:
                text += ": " + src.code(param.annotation.annotation)
            params.append(text)
        return "".join(decorators) + f"def {name}({', '.join(params)}):\n"

    def bindings(self) -> list[str]:
        return [f"{name} = {value}\n" for name, value in self.src.bindings]


def _is_action(src: TestSource, statement: cst.BaseStatement) -> bool:
    """Whether ``statement`` drives the code under test: a call statement other than the fake
    server's, a ``with`` block (``pytest.raises`` around the run), or an ``assert`` on a call's result."""
    if isinstance(statement, cst.With):
        return True
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return False
    small = statement.body[0]
    value = (
        small.value if isinstance(small, cst.Expr) else small.test if isinstance(small, cst.Assert) else None
    )
    if isinstance(value, cst.Comparison):
        value = value.left
    return isinstance(value, cst.Call) and not src.code(value.func).startswith(f"{src.fake_model}.")


def _again(src: TestSource, body: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
    """``body`` with its first action run a second time right after the first (and one more reply
    at the end of the last script call for it): what a failed run leaves behind shows in the
    request the second run sends."""
    split = src.split
    first = next((i for i in range(split + 1, len(body)) if _is_action(src, body[i])), None)
    if first is None:
        raise Unreadable("no statement after the script runs the code under test")
    last = src.scripts[-1].statement
    statement = body[last]
    expr: cst.Expr = statement.body[0]  # type: ignore[attr-defined]
    call: cst.Call = expr.value  # type: ignore[assignment]
    done = cst.Arg(value=cst.parse_expression(f'{src.behaviours or "b"}.ok(text="Done.")'))
    positional = len([a for a in call.args if a.keyword is None])
    body[last] = statement.with_changes(body=[expr.with_changes(value=_insert(call, positional, done))])
    repeated = body[first].with_changes(leading_lines=[])
    return [*body[: first + 1], repeated, *body[first + 1 :]]


def rewrite(src: TestSource, fault: str | None, step: int, times: int = 1, again: bool = False) -> Rewrite:
    """The test split for a probe and a candidate, with ``fault`` inserted (None: as it is) and,
    with ``again``, its first action run twice."""
    body = faulted_body(src, fault, step, times) if fault is not None else src.body
    if again:
        body = _again(src, body)
    split = src.split
    setup = [src.code(s) for s in body[:split] if not _is_docstring(s)]
    if setup and body[:split] and _is_docstring(body[0]):
        setup[0] = setup[0].lstrip("\n")
    after = [classify(src, i, s) for i, s in enumerate(body[split + 1 :])]
    return Rewrite(src, setup, src.code(body[split]), after)


def _indent(text: str, depth: int = 1) -> str:
    return textwrap.indent(text, "    " * depth, lambda line: bool(line.strip()))


def _lambda(expression: str) -> str:
    return f"lambda: ({expression})"


def observed(statement: Statement) -> str:
    """The probe's spelling of one statement (see ``mutagent.suggest.probe``)."""
    i = statement.index
    if statement.kind == "compare":
        thunks = ", ".join(_lambda(o) for o in statement.operands)
        return f"{PROBE}.compare({i}, [{thunks}], {statement.ops!r})\n"
    if statement.kind == "truth":
        return f"{PROBE}.truth({i}, {_lambda(statement.operands[0])})\n"
    if statement.kind == "call":
        return f"{PROBE}.call({i}, {_lambda(statement.operands[0])})\n"
    if statement.kind == "raises":
        target = f" as {statement.target}" if statement.target else ""
        return f"with {PROBE}.raises({i}, {_lambda(statement.raises)}){target}:\n" + _indent(statement.body)
    return f"with {PROBE}.stmt({i}):\n" + _indent(statement.bare)


def probe_function(rw: Rewrite, name: str, key: str) -> str:
    """The probe test: the rewrite with each statement after the script observed."""
    body = [f"{PROBE} = {PROBE_CLASS}({key!r})\n", *rw.bindings(), *rw.setup, rw.script.lstrip("\n")]
    observed_block = "".join(observed(s) for s in rw.after) or "pass\n"
    body.append("try:\n" + _indent(observed_block) + f"finally:\n    {PROBE}.finish({rw.src.fake_model})\n")
    return rw.header(name) + _indent("".join(body))
