"""Rewriting helpers for operators: small, correct edits of libcst nodes (``n`` -> ``n + 1``
written as a person would, a tuple or call without one element, ``expr[:10]``, an empty value of
the same kind). They change code; what to change is the anatomy's business."""

from __future__ import annotations

import libcst as cst

from mutagent.anatomy.syntax import final_name

_PLUS_ONE_ATOMS = (
    cst.Name,
    cst.Attribute,
    cst.Call,
    cst.Subscript,
    cst.Integer,
    cst.BinaryOperation,
    cst.UnaryOperation,
)


def plus_one(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``expr + 1`` written as a person would: ``3`` -> ``4``, ``n + 1`` -> ``n + 2``, ``n - 1`` -> ``n``."""
    if isinstance(expr, cst.Integer) and not expr.lpar:
        return cst.Integer(str(int(expr.evaluated_value) + 1))
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.right, cst.Integer) and not expr.lpar:
        step = int(expr.right.evaluated_value)
        if isinstance(expr.operator, cst.Add):
            return expr.with_changes(right=cst.Integer(str(step + 1)))
        if isinstance(expr.operator, cst.Subtract):
            return expr.left if step == 1 else expr.with_changes(right=cst.Integer(str(step - 1)))
    operand = (
        expr
        if isinstance(expr, _PLUS_ONE_ATOMS)
        else expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    )
    return cst.BinaryOperation(left=operand, operator=cst.Add(), right=cst.Integer("1"))


FALSE = cst.Name("False")


TRUE = cst.Name("True")


def without_element(node: cst.Tuple | cst.List | cst.Set, element: cst.Element) -> cst.BaseExpression | None:
    """``node`` minus ``element``, keeping a one-element tuple a tuple; None if nothing is left."""
    remaining = [e for e in node.elements if e is not element]
    if not remaining:
        return None
    if node.elements[-1] is element:
        remaining[-1] = remaining[-1].with_changes(comma=element.comma)
    if (
        isinstance(node, cst.Tuple)
        and len(remaining) == 1
        and remaining[0].comma is cst.MaybeSentinel.DEFAULT
    ):
        remaining[0] = remaining[0].with_changes(comma=cst.Comma())
    return node.with_changes(elements=remaining)


def without_arg(call: cst.Call, arg: cst.Arg) -> cst.Call:
    """``call`` minus ``arg``; the new last argument takes over the removed one's comma."""
    remaining = [a for a in call.args if a is not arg]
    if remaining and call.args[-1] is arg:
        remaining[-1] = remaining[-1].with_changes(comma=arg.comma)
    return call.with_changes(args=remaining)


_ATOMS = (
    cst.Name,
    cst.Attribute,
    cst.Call,
    cst.Subscript,
    cst.SimpleString,
    cst.FormattedString,
    cst.List,
    cst.Dict,
    cst.Set,
    cst.ListComp,
    cst.DictComp,
    cst.SetComp,
    cst.Integer,
    cst.Float,
)


def atom(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``expr`` parenthesised unless it already binds tighter than a subscript or ``+``."""
    if isinstance(expr, _ATOMS) or expr.lpar:
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def first_chars(expr: cst.BaseExpression, n: int = 10) -> cst.Subscript:
    """``expr[:n]``."""
    return cst.Subscript(
        value=atom(expr), slice=[cst.SubscriptElement(cst.Slice(lower=None, upper=cst.Integer(str(n))))]
    )


def without(container: cst.Call | cst.Dict, item: cst.CSTNode) -> cst.Call | cst.Dict:
    """The call without one argument, or the dict literal without one element."""
    items = list(container.args if isinstance(container, cst.Call) else container.elements)
    position = items.index(item)
    del items[position]
    if items and position == len(items):  # removed the last one: do not leave its comma behind
        items[-1] = items[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    if isinstance(container, cst.Call):
        return container.with_changes(args=items)
    return container.with_changes(elements=items)


def empty_like(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """An empty value of the kind ``expr`` builds: ``{}`` for a dict literal, ``[]`` for a
    list, ``""`` for text (f-strings, ``str(e)``, ``json.dumps(...)``, concatenations), else None."""
    if isinstance(expr, (cst.Dict, cst.DictComp)):
        return cst.Dict([])
    if isinstance(expr, (cst.List, cst.ListComp)):
        return cst.List([])
    if isinstance(expr, (cst.FormattedString, cst.SimpleString, cst.ConcatenatedString, cst.BinaryOperation)):
        return cst.SimpleString('""')
    if isinstance(expr, cst.Call) and final_name(expr) in (
        "str",
        "repr",
        "dumps",
        "format",
        "format_exc",
        "join",
    ):
        return cst.SimpleString('""')
    return None
