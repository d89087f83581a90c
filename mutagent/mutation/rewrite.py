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
