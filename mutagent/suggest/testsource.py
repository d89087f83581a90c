"""One test of the suite, read with libcst: what a candidate test is built from.

A candidate keeps the test's own fixtures, agent construction and script and inserts one fault
into that script, so it reads like the suite it joins. This module finds the test function of a
node id, binds its ``parametrize`` values for that id (``headers = {"retry-after": "2"}``), the
``fake_model.script(...)`` calls and where each scripted step is spelt, and the names the module
gives the behaviours (``b``), ``ToolCall`` and ``pytest``. A test it cannot read that way (a
method of a class, an async test, a script built by a helper, stacked ``parametrize``) is left
out, with the reason.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst
import libcst.matchers as m

BEHAVIOURS_MODULE = "mutagent.fakeserver.behaviours"


class Unreadable(Exception):
    """The test cannot serve as the model of a candidate (the message says why)."""


@dataclass
class ScriptCall:
    """One ``fake_model.script(...)`` statement: its place in the body and its steps' arguments."""

    statement: int  # index into the function body
    counts: list[int | None]  # per positional argument: how many steps it adds (None: unknown)


@dataclass
class TestSource:
    """A test function, ready to be rewritten."""

    __test__ = False  # not a pytest test class, whatever its name

    nodeid: str
    file: str  # the test module, relative to the target
    module: cst.Module
    function: cst.FunctionDef
    bindings: list[tuple[str, str]] = field(default_factory=list)  # parametrized name -> value source
    fake_model: str = "fake_model"
    scripts: list[ScriptCall] = field(default_factory=list)
    behaviours: str = ""  # the name the module calls ``mutagent.fakeserver.behaviours`` ("b")
    toolcall: str = ""  # its name for ``ToolCall``
    pytest_name: str = ""  # its name for ``pytest``

    @property
    def name(self) -> str:
        return self.function.name.value

    @property
    def body(self) -> list[cst.BaseStatement]:
        return list(self.function.body.body)  # type: ignore[union-attr]

    @property
    def split(self) -> int:
        """The index of the first script statement: what comes after it is the test's act and check."""
        return self.scripts[0].statement

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    def locate_step(self, step: int) -> tuple[int, int] | None:
        """(script call, argument position) at which scripted step ``step`` is spelt, or None when
        an argument of unknown length (``*steps``) comes first."""
        seen = 0
        for number, call in enumerate(self.scripts):
            for position, count in enumerate(call.counts):
                if count is None:
                    return (number, position) if seen == step else None
                if seen + count > step:
                    return (number, position) if count == 1 and seen == step else None
                seen += count
            if seen == step and number == len(self.scripts) - 1:
                return number, len(call.counts)  # after the last step: appended
        return None

    def step_expression(self, step: int) -> cst.BaseExpression | None:
        """The argument spelling scripted step ``step``, when it is one argument of its own."""
        where = self.locate_step(step)
        if where is None:
            return None
        call = self.script_call(where[0])
        args = [arg for arg in call.args if not arg.star]
        return args[where[1]].value if where[1] < len(args) else None

    def script_call(self, number: int) -> cst.Call:
        statement = self.body[self.scripts[number].statement]
        return statement.body[0].value  # type: ignore[attr-defined,no-any-return]


def split_nodeid(nodeid: str) -> tuple[str, list[str], str]:
    """(file, [class, ...], function name with its parameter id) of a pytest node id."""
    file, *rest = nodeid.split("::")
    if not rest:
        raise Unreadable(f"{nodeid} names no test function")
    return file, rest[:-1], rest[-1]


def _names(module: cst.Module) -> tuple[str, str, str]:
    """The module's names for the behaviours module, ``ToolCall`` and ``pytest``."""
    behaviours = toolcall = pytest_name = ""
    for node in module.body:
        if not isinstance(node, cst.SimpleStatementLine):
            continue
        for small in node.body:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    dotted = module.code_for_node(alias.name)
                    bound = alias.asname.name.value if alias.asname else dotted  # type: ignore[union-attr]
                    if dotted == "pytest":
                        pytest_name = bound
            elif isinstance(small, cst.ImportFrom) and small.module is not None:
                source = module.code_for_node(small.module)
                if isinstance(small.names, cst.ImportStar):
                    continue
                for alias in small.names:
                    name = module.code_for_node(alias.name)
                    bound = alias.asname.name.value if alias.asname else name  # type: ignore[union-attr]
                    if f"{source}.{name}" == BEHAVIOURS_MODULE:
                        behaviours = bound
                    elif name == "ToolCall" and source.startswith("mutagent.fakeserver"):
                        toolcall = bound
    return behaviours, toolcall, pytest_name


def _auto_id(value: str, argname: str, index: int) -> str:
    """The id pytest gives a parameter value it can read (strings, numbers, booleans, None)."""
    try:
        literal = ast.literal_eval(value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return f"{argname}{index}"
    if isinstance(literal, str) and literal.isascii() and literal.isprintable():
        return literal
    if isinstance(literal, (int, float, bool)) or literal is None:
        return str(literal)
    return f"{argname}{index}"


def _parametrize(module: cst.Module, function: cst.FunctionDef, pid: str | None) -> list[tuple[str, str]]:
    """The ``(name, value source)`` pairs ``parametrize`` gives the test for parameter id ``pid``."""
    marks = [
        d.decorator
        for d in function.decorators
        if isinstance(d.decorator, cst.Call)
        and module.code_for_node(d.decorator.func).endswith("mark.parametrize")
    ]
    if not marks:
        if pid is not None:
            raise Unreadable(
                f"{function.name.value}[{pid}] is parametrized by something other than a decorator"
            )
        return []
    if len(marks) > 1:
        raise Unreadable("stacked parametrize decorators")
    call = marks[0]
    positional = [arg for arg in call.args if arg.keyword is None]
    keywords = {arg.keyword.value: arg.value for arg in call.args if arg.keyword is not None}
    if len(positional) < 2:
        raise Unreadable("parametrize without literal argnames and argvalues")
    names_node, values_node = positional[0].value, positional[1].value
    try:
        names = ast.literal_eval(module.code_for_node(names_node))
    except (ValueError, SyntaxError):
        raise Unreadable("parametrize argnames are not a literal") from None
    argnames = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
    if not isinstance(values_node, (cst.List, cst.Tuple)):
        raise Unreadable("parametrize argvalues are not a literal list")
    ids: list[str | None] = []
    ids_node = keywords.get("ids")
    if isinstance(ids_node, (cst.List, cst.Tuple)):
        for element in ids_node.elements:
            try:
                ids.append(str(ast.literal_eval(module.code_for_node(element.value))))
            except (ValueError, SyntaxError):
                ids.append(None)
    elif ids_node is not None:
        raise Unreadable("parametrize ids are not a literal list")
    for index, element in enumerate(values_node.elements):
        value = element.value
        explicit = None
        if isinstance(value, cst.Call) and module.code_for_node(value.func).endswith("param"):
            explicit = next(
                (module.code_for_node(a.value) for a in value.args if a.keyword and a.keyword.value == "id"),
                None,
            )
            parts = [a.value for a in value.args if a.keyword is None]
        elif len(argnames) > 1 and isinstance(value, (cst.Tuple, cst.List)):
            parts = [e.value for e in value.elements]
        else:
            parts = [value]
        if len(parts) != len(argnames):
            raise Unreadable("a parametrize value does not match its argnames")
        sources = [module.code_for_node(part) for part in parts]
        if explicit is not None:
            this_id = str(ast.literal_eval(explicit))
        elif index < len(ids) and ids[index] is not None:
            this_id = str(ids[index])
        else:
            this_id = "-".join(_auto_id(s, n, index) for s, n in zip(sources, argnames, strict=False))
        if this_id == pid:
            return list(zip(argnames, sources, strict=False))
    raise Unreadable(f"no parametrize value has the id {pid!r}")


def _step_count(arg: cst.Arg) -> int | None:
    if arg.star:
        return None
    if isinstance(arg.value, (cst.List, cst.Tuple)):
        if any(isinstance(e, cst.StarredElement) for e in arg.value.elements):
            return None
        return len(arg.value.elements)
    return 1


def _script_calls(function: cst.FunctionDef, fake_model: str) -> list[ScriptCall]:
    pattern = m.SimpleStatementLine(
        body=[m.Expr(value=m.Call(func=m.Attribute(value=m.Name(fake_model), attr=m.Name("script"))))]
    )
    calls = []
    for index, statement in enumerate(function.body.body):  # type: ignore[union-attr]
        if m.matches(statement, pattern):
            call: cst.Call = statement.body[0].value  # type: ignore[attr-defined]
            counts = [_step_count(arg) for arg in call.args if arg.keyword is None]
            calls.append(ScriptCall(index, counts))
    return calls


def read_test(root: Path, nodeid: str) -> TestSource:
    """The test function of ``nodeid`` under ``root``, or ``Unreadable`` saying why not."""
    file, classes, name = split_nodeid(nodeid)
    if classes:
        raise Unreadable("a test method of a class")
    pid = None
    if name.endswith("]") and "[" in name:
        name, pid = name[:-1].split("[", 1)
    try:
        module = cst.parse_module((root / file).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, cst.ParserSyntaxError) as exc:
        raise Unreadable(f"cannot read {file}: {exc}") from None
    function = next(
        (n for n in module.body if isinstance(n, cst.FunctionDef) and n.name.value == name),
        None,
    )
    if function is None:
        raise Unreadable(f"no top-level function {name} in {file}")
    if function.asynchronous is not None:
        raise Unreadable("an async test")
    params = [p.name.value for p in function.params.params]
    fake_model = next((p for p in params if p == "fake_model"), None)
    if fake_model is None:
        raise Unreadable("the test does not take the fake_model fixture")
    scripts = _script_calls(function, fake_model)
    if not scripts:
        raise Unreadable("the test does not call fake_model.script(...) itself")
    behaviours, toolcall, pytest_name = _names(module)
    return TestSource(
        nodeid=nodeid,
        file=file,
        module=module,
        function=function,
        bindings=_parametrize(module, function, pid),
        fake_model=fake_model,
        scripts=scripts,
        behaviours=behaviours,
        toolcall=toolcall,
        pytest_name=pytest_name,
    )
