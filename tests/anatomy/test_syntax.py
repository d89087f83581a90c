"""The shared syntax helpers (``mutagent.anatomy.syntax``, ``exits``, ``dataflow``) and the rewrite
helpers (``mutagent.mutation.rewrite``): every recogniser and operator reads code through them,
so each answer is pinned here on small expressions."""

from __future__ import annotations

import textwrap

import libcst as cst
import libcst.matchers as m
import pytest

from mutagent.anatomy import dataflow, exits, syntax
from mutagent.mutation import rewrite
from mutagent.mutation.context import SourceContext


def expr(code: str) -> cst.BaseExpression:
    return cst.parse_expression(code)


def code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def ctx_of(source: str) -> SourceContext:
    return SourceContext(textwrap.dedent(source), "m.py")


@pytest.mark.parametrize(
    ("text", "leaf"),
    [
        ("resp.choices[0]", "choices"),
        ('data["content"]', "content"),
        ('data.get("content")', "content"),
        ("text.strip()", "text"),
        ("f(x)", None),
    ],
)
def test_leaf_name(text: str, leaf: str | None) -> None:
    assert syntax.leaf_name(expr(text)) == leaf


@pytest.mark.parametrize(
    ("text", "final", "or_key"),
    [
        ("self.tools.get", "get", "get"),
        ("get_name()", "get_name", "get_name"),
        ('call["input"]', None, "input"),
        ("tc.function.name", "name", "name"),
    ],
)
def test_final_name_and_final_name_or_key(text: str, final: str | None, or_key: str | None) -> None:
    assert syntax.final_name(expr(text)) == final
    assert syntax.final_name_or_key(expr(text)) == or_key


def test_names_along_a_chain() -> None:
    assert syntax.root_name(expr("self.a.b()")) == "self"
    assert syntax.attribute_chain(expr("client.beta.messages.create")) == [
        "client",
        "beta",
        "messages",
        "create",
    ]
    assert syntax.string_value(expr('"a" "b"')) == "ab" and syntax.string_value(expr('f"x"')) is None
    assert syntax.string_value(None) is None


def test_literals_constants_and_numbers() -> None:
    assert syntax.is_literal(expr("None"), "None", "False") and not syntax.is_literal(expr("True"), "None")
    assert (
        syntax.is_constant(expr("-1"))
        and syntax.is_constant(expr("'x'"))
        and not syntax.is_constant(expr("x"))
    )
    assert syntax.is_number(expr("2.0"), 2) and not syntax.is_number(expr("x"))


def test_calls_and_definitions() -> None:
    call = expr("f(1, stream=True)")
    assert code(syntax.keyword(call, "stream").value) == "True" and syntax.keyword(call, "x") is None
    func = cst.parse_statement("def f(a, /, b, *c, d, **e): pass")
    assert syntax.parameters(func) == {"a", "b", "c", "d", "e"} and syntax.parameters(None) == set()
    handler = cst.parse_statement("try:\n    pass\nexcept (A, b.B):\n    pass\n").handlers[0]
    assert [code(c) for c in syntax.caught_classes(handler)] == ["A", "b.B"]


def test_conditions() -> None:
    test = expr("not saw_stop or open_blocks")
    assert [code(leaf) for leaf in syntax.condition_leaves(test)] == ["not saw_stop", "open_blocks"]
    assert code(syntax.negated(expr("not x"))) == "x" and syntax.negated(expr("x")) is None
    assert code(syntax.absence_of(expr("x is None"))) == "x" and syntax.absence_of(expr("x")) is None
    assert code(syntax.presence_of(expr("x is not None"))) == "x"
    sites = syntax.condition_sites(expr("a and b and c"), lambda leaf: code(leaf) in ("a", "b"))
    assert [code(site) for site in sites] == ["a"]  # one false operand disables a conjunction
    sites = syntax.condition_sites(expr("a or b or c"), lambda leaf: code(leaf) in ("a", "b"))
    assert [code(site) for site in sites] == ["a", "b"]
    assert syntax.single_comparison(expr("a < b < c")) is None


def test_statements_and_walk() -> None:
    block = cst.parse_statement("if x:\n    a = 1; b = 2\n    for i in y:\n        pass\n").body
    assert [type(s).__name__ for s in syntax.statements(block)] == ["Assign", "Assign", "For"]
    module = cst.parse_module("def f():\n    def g():\n        inner()\n    outer()\n")
    names = {n.value for n in syntax.names_in(module.body[0].body)}
    assert "outer" in names and "inner" not in names  # walk does not enter nested defs


def test_loops_and_scopes() -> None:
    ctx = ctx_of(
        """\
        def f(tries):
            for attempt, delay in schedule:
                while attempt < tries:
                    attempt += 1
                    def helper():
                        attempt += 2
        """
    )
    (outer,) = ctx.nodes(cst.For)
    (inner,) = ctx.nodes(cst.While)
    steps = ctx.nodes(cst.AugAssign)
    assert syntax.loop_variables(outer) == {"attempt", "delay"}
    assert syntax.own(ctx, inner, m.AugAssign()) == [steps[0]]
    assert syntax.innermost_loop(ctx, steps[0]) is inner and syntax.innermost_loop(ctx, steps[1]) is None
    assert isinstance(syntax.enclosing_scope(ctx, steps[1]), cst.FunctionDef)
    assert syntax.identifiers_in(ctx, inner.test) == ["attempt", "tries"]


def test_exits() -> None:
    ctx = ctx_of(
        """\
        if a:
            raise EmptyResponseError("no content")
        if b:
            log.error("x")
        if c:
            return
        """
    )
    first, second, third = ctx.nodes(cst.If)
    assert exits.fails(first.body) and not exits.fails(second.body)
    assert exits.raised_names(first.body) == {"empty", "response", "error", "no", "content"}
    assert exits.exits_early(third.body) and not exits.exits_early(first.body)
    assert exits.control_flow_exits(ctx, first.body) and not exits.control_flow_exits(ctx, second.body)


def test_dataflow() -> None:
    ctx = ctx_of(
        """\
        def f(client):
            stream = client.messages.create(stream=True)
            with client.stream() as response:
                pass
            return stream
        """
    )
    returned = ctx.nodes(cst.Return)[0].value
    assert [code(v) for v in dataflow.bound_values(ctx, returned)] == ["client.messages.create(stream=True)"]
    assert [code(v) for v in dataflow.local_values(ctx, returned)] == ["client.messages.create(stream=True)"]
    assert {code(b.target) for b in dataflow.bindings(ctx)} == {"stream", "response"}
    assert dataflow.owner_of(ctx, returned) is ctx.nodes(cst.FunctionDef)[0]


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("3", "4"),
        ("n + 1", "n + 2"),
        ("n - 1", "n"),
        ("n - 3", "n - 2"),
        ("a or b", "(a or b) + 1"),
        ("f(x)", "f(x) + 1"),
    ],
)
def test_plus_one(before: str, after: str) -> None:
    assert code(rewrite.plus_one(expr(before))) == after


def test_rewrite_helpers() -> None:
    pair = expr("(A, B)")
    assert code(rewrite.without_element(pair, pair.elements[1])) == "(A,)"  # still a tuple
    single = expr("(A,)")
    assert rewrite.without_element(single, single.elements[0]) is None
    call = expr("f(a, b=1)")
    assert code(rewrite.without_arg(call, call.args[1])) == "f(a)"
    assert code(rewrite.first_chars(expr("a + b"))) == "(a + b)[:10]"
    assert code(rewrite.empty_like(expr("f'{x}'"))) == '""' and rewrite.empty_like(expr("x")) is None
