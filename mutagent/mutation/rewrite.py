"""Rewriting helpers for operators: small, correct edits of libcst nodes (``n`` -> ``n + 1``
written as a person would, a tuple or call without one element, ``expr[:10]``, an empty value of
the same kind). They change code; what to change is the anatomy's business."""

from __future__ import annotations

import libcst as cst

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
