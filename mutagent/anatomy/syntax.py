"""Syntax helpers shared by every recogniser and operator: what an expression names, the
leaves of a condition, the statements of a block, the scopes and loops around a node.

Nothing here knows about agents: these are questions about Python syntax (``leaf_name(resp.choices[0])``
is ``choices``), answered the same way for every role. The words that give names a meaning live
in :mod:`mutagent.anatomy.vocabulary`.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Callable, Iterable, Iterator

import libcst as cst
import libcst.matchers as m

from mutagent.mutation.context import SourceContext

# -- names and literals ----------------------------------------------------------------------------


def string_value(node: cst.CSTNode | None) -> str | None:
    """The value of a plain (non f-) string literal, including implicitly concatenated ones."""
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def leaf_name(expr: cst.CSTNode) -> str | None:
    """The name an expression finally reads: ``resp.choices[0]`` -> ``choices``,
    ``data["content"]`` / ``data.get("content")`` -> ``content``, ``text.strip()`` -> ``text``."""
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        return expr.attr.value
    if isinstance(expr, cst.Subscript):
        if len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index):
            key = string_value(expr.slice[0].slice.value)
            if key is not None:
                return key
        return leaf_name(expr.value)
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        method = expr.func.attr.value
        if method in ("get", "pop") and expr.args:
            return string_value(expr.args[0].value)
        if method in ("strip", "lstrip", "rstrip", "lower", "upper", "casefold"):
            return leaf_name(expr.func.value)
    return None


def root_name(expr: cst.CSTNode) -> str | None:
    """The leftmost plain name of an attribute/subscript/call chain (``self`` for ``self.a.b``)."""
    while True:
        if isinstance(expr, cst.Name):
            return expr.value
        if isinstance(expr, (cst.Attribute, cst.Subscript)):
            expr = expr.value
        elif isinstance(expr, cst.Call):
            expr = expr.func
        else:
            return None


def attribute_chain(expr: cst.CSTNode) -> list[str]:
    """Every name along a call/attribute chain: ``client.beta.messages.create`` ->
    ``["client", "beta", "messages", "create"]``."""
    names: list[str] = []
    while True:
        if isinstance(expr, cst.Attribute):
            names.append(expr.attr.value)
            expr = expr.value
        elif isinstance(expr, cst.Call):
            expr = expr.func
        elif isinstance(expr, cst.Subscript):
            expr = expr.value
        elif isinstance(expr, cst.Name):
            names.append(expr.value)
            return names[::-1]
        else:
            return names[::-1]


def final_name(node: cst.CSTNode) -> str | None:
    """The name a reader calls a callee or value by: ``self.tools.get`` -> ``get``."""
    if isinstance(node, cst.Await):
        node = node.expression
    if isinstance(node, cst.Call):
        node = node.func
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return None


def final_name_or_key(expr: cst.BaseExpression) -> str | None:
    """``call["input"]`` -> ``input``; ``tc.function.name`` -> ``name``; ``get_name()`` -> ``get_name``."""
    if (
        isinstance(expr, cst.Subscript)
        and len(expr.slice) == 1
        and isinstance(expr.slice[0].slice, cst.Index)
    ):
        return string_value(expr.slice[0].slice.value)
    return final_name(expr)


def keyword(call: cst.Call, name: str) -> cst.Arg | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def parameters(func: cst.FunctionDef | None) -> set[str]:
    if func is None:
        return set()
    params = func.params
    every = [*params.posonly_params, *params.params, *params.kwonly_params]
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            every.append(star)
    return {param.name.value for param in every}


def is_literal(node: cst.CSTNode, *values: str) -> bool:
    """``None``/``True``/``False`` spelled as one of ``values``."""
    return isinstance(node, cst.Name) and node.value in values


def is_constant(node: cst.CSTNode) -> bool:
    """A constant whose value no tool outcome can change."""
    if isinstance(node, cst.Name):
        return node.value in ("None", "True", "False")
    if isinstance(node, cst.UnaryOperation):
        return is_constant(node.expression)
    return isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.Integer, cst.Float, cst.Imaginary))


def is_number(node: cst.CSTNode, value: float | None = None) -> bool:
    if isinstance(node, (cst.Integer, cst.Float)):
        return value is None or ast.literal_eval(node.value) == value
    return False


# -- conditions ------------------------------------------------------------------------------------


def condition_leaves(test: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    """The operands of a test's top-level ``and``/``or`` chain (the test itself if it has none)."""
    if isinstance(test, cst.BooleanOperation):
        yield from condition_leaves(test.left)
        yield from condition_leaves(test.right)
    else:
        yield test


def boolean_nodes(test: cst.BaseExpression) -> Iterator[cst.BooleanOperation]:
    if isinstance(test, cst.BooleanOperation):
        yield test
        yield from boolean_nodes(test.left)
        yield from boolean_nodes(test.right)


def condition_sites(
    test: cst.BaseExpression, predicate: Callable[[cst.BaseExpression], bool]
) -> list[cst.BaseExpression]:
    """Which part of ``test`` to turn ``False`` so that the checks ``predicate`` recognises stop
    guarding: the whole test when it is one such check (or an ``and`` of them only), the first
    one of an ``and`` mixed with other conditions, each one of an ``or`` (so that
    ``if not saw_stop or open_blocks:`` keeps its second check)."""
    if predicate(test):
        return [test]
    leaves = list(condition_leaves(test))
    if len(leaves) == 1:
        return []
    hits = [leaf for leaf in leaves if predicate(leaf)]
    if hits and all(isinstance(node.operator, cst.And) for node in boolean_nodes(test)):
        # One false operand disables a conjunction: a mutant per operand would be equivalents.
        return [test] if len(hits) == len(leaves) else hits[:1]
    return hits


def negated(test: cst.BaseExpression) -> cst.BaseExpression | None:
    """``x`` for ``not x``."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return test.expression
    return None


def single_comparison(
    test: cst.CSTNode,
) -> tuple[cst.BaseExpression, cst.BaseCompOp, cst.BaseExpression] | None:
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        return test.left, target.operator, target.comparator
    return None


def absence_of(test: cst.BaseExpression) -> cst.BaseExpression | None:
    """``x`` for tests meaning "x is missing": ``not x``, ``x is None``, ``x is False``,
    ``x == None``, ``x == False``, ``x is not True``."""
    inner = negated(test)
    if inner is not None:
        return inner
    parts = single_comparison(test)
    if parts is None:
        return None
    left, op, right = parts
    if isinstance(op, (cst.Is, cst.Equal)) and is_literal(right, "None", "False"):
        return left
    if isinstance(op, cst.IsNot) and is_literal(right, "True"):
        return left
    return None


def presence_of(test: cst.BaseExpression) -> cst.BaseExpression | None:
    """``x`` for tests meaning "x is there": ``x``, ``x is not None``, ``x is True``, ``x == True``."""
    if isinstance(test, (cst.Name, cst.Attribute, cst.Subscript)):
        return test
    parts = single_comparison(test)
    if parts is None:
        return None
    left, op, right = parts
    if isinstance(op, cst.IsNot) and is_literal(right, "None", "False"):
        return left
    if isinstance(op, (cst.Is, cst.Equal)) and is_literal(right, "True"):
        return left
    return None


def caught_classes(handler: cst.ExceptHandler | cst.ExceptStarHandler) -> list[cst.BaseExpression]:
    """The classes an ``except`` clause names: ``except (A, B)`` -> ``[A, B]``, ``except A`` ->
    ``[A]``, a bare ``except:`` -> ``[]``."""
    caught = handler.type
    if caught is None:
        return []
    return [e.value for e in caught.elements] if isinstance(caught, cst.Tuple) else [caught]


# -- statements and walking ------------------------------------------------------------------------


def statements(block: cst.BaseSuite) -> list[cst.BaseStatement | cst.BaseSmallStatement]:
    """The statements of a block, small statements of a one-line suite included."""
    if isinstance(block, cst.SimpleStatementSuite):
        return list(block.body)
    flat: list[cst.BaseStatement | cst.BaseSmallStatement] = []
    for statement in block.body:
        if isinstance(statement, cst.SimpleStatementLine):
            flat.extend(statement.body)
        else:
            flat.append(statement)
    return flat


_SKIPPED_FIELDS = frozenset(
    (
        "lpar rpar comma semicolon colon dot equal first_colon second_colon leading_lines "
        "lines_after_decorators header footer newline trailing_whitespace"
    ).split()
)


_NODE_FIELDS: dict[type, tuple[str, ...]] = {}


def _children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The syntactic children of ``node`` (punctuation and whitespace left out), in no
    particular order. ``CSTNode.children`` re-runs libcst's visitor for every node, which made
    scanning a function cost more than parsing the file."""
    names = _NODE_FIELDS.get(type(node))
    if names is None:
        names = _NODE_FIELDS[type(node)] = tuple(
            f.name
            for f in dataclasses.fields(node)
            if f.name not in _SKIPPED_FIELDS and not f.name.startswith("whitespace")
        )
    found: list[cst.CSTNode] = []
    for name in names:
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            found.append(value)
        elif isinstance(value, (list, tuple)):
            found.extend(item for item in value if isinstance(item, cst.CSTNode))
    return found


def walk(node: cst.CSTNode, into: Callable[[cst.CSTNode], bool] | None = None) -> Iterator[cst.CSTNode]:
    """``node`` and its descendants, not entering nested functions, classes or lambdas (nor any
    descendant ``into`` rejects: it is left out with everything under it)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        if current is not node and isinstance(current, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        stack.extend(child for child in _children(current) if into is None or into(child))


def names_in(node: cst.CSTNode) -> Iterable[cst.Name]:
    return (n for n in walk(node) if isinstance(n, cst.Name))


def identifiers_in(ctx: SourceContext, node: cst.CSTNode) -> list[str]:
    """Every name a reader sees in ``node``: plain names and attribute names."""
    return [n.value for n in ctx.descendants(node, m.Name())]


# -- scopes and loops ------------------------------------------------------------------------------

SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


LOOPS = (cst.For, cst.While)


def own(ctx: SourceContext, loop: cst.For | cst.While, matcher: m.BaseMatcherNode) -> list[cst.CSTNode]:
    """Nodes of ``loop``'s body matching ``matcher``, leaving out nested loops, functions and classes:
    what the loop itself does on each pass."""
    found = []
    for node in ctx.descendants(loop.body, matcher):
        for ancestor in ctx.ancestors(node):
            if ancestor is loop:
                found.append(node)
                break
            if isinstance(ancestor, SCOPES + LOOPS):
                break
    return found


def innermost_loop(ctx: SourceContext, node: cst.CSTNode) -> cst.For | cst.While | None:
    """The loop ``node`` runs in, within its own function (a nested def starts afresh)."""
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, LOOPS):
            return ancestor
        if isinstance(ancestor, SCOPES):
            return None
    return None


def enclosing_scope(ctx: SourceContext, node: cst.CSTNode) -> cst.CSTNode | None:
    """The innermost function, lambda or class around ``node``."""
    return ctx.enclosing(node, SCOPES)


def ancestors_within(ctx: SourceContext, node: cst.CSTNode, stop: cst.CSTNode) -> Iterator[cst.CSTNode]:
    for ancestor in ctx.ancestors(node):
        if ancestor is stop:
            return
        yield ancestor


def loop_variables(loop: cst.CSTNode) -> set[str]:
    """Names bound by a ``for`` loop's target (``attempt``, or ``attempt, delay``)."""
    if not isinstance(loop, cst.For):
        return set()
    target = loop.target
    elements = [el.value for el in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else [target]
    return {el.value for el in elements if isinstance(el, cst.Name)}
