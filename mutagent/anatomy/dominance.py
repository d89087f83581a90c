"""A small intra-function data flow: is a comparison's boundary already decided by an earlier check?

``max_retries > 0`` and ``max_retries >= 0`` differ only when ``max_retries == 0``. If an earlier
statement of the same function, on every path to the comparison, already left the function
when ``max_retries <= 0`` (``if max_retries <= 0: return True``), that value never reaches the
comparison and the two are the same program: the mutant is equivalent and running it could only
report a false survivor.

Provable here means: the earlier ``if`` precedes the comparison's statement in the same block or
in an enclosing block of the same function (no loop in between), its body ends in ``return`` or
``raise`` and it has no ``else``; its test is a conjunction of the boundary check (true at
equality: ``==``, ``<=``, ``>=``, in either order) and ``X is not None`` checks of the same
operands or of the objects they are read from; and the operands are the same names or
attributes (a local assigned exactly once from one counts as that one), not assigned in between.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from mutagent.mutation.context import SourceContext

_TRUE_AT_EQUALITY = (cst.Equal, cst.LessThanEqual, cst.GreaterThanEqual)


def _aliases(ctx: SourceContext, func: cst.FunctionDef) -> dict[str, str]:
    """Locals assigned exactly once, from a name or attribute: ``max_retries = settings.max_retries``."""

    def compute() -> dict[str, str]:
        counts: dict[str, int] = {}
        values: dict[str, str] = {}
        for node in ctx.descendants(func.body, m.Assign() | m.AugAssign() | m.AnnAssign() | m.For()):
            targets = (
                [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]  # type: ignore[union-attr]
            )
            for target in targets:
                if isinstance(target, cst.Name):
                    counts[target.value] = counts.get(target.value, 0) + 1
                    value = getattr(node, "value", None)
                    if isinstance(node, cst.Assign) and isinstance(value, (cst.Name, cst.Attribute)):
                        values[target.value] = ctx.code(value).strip()
        return {name: value for name, value in values.items() if counts[name] == 1}

    return ctx.cached(("anatomy", "aliases", id(func)), compute)


def _canonical(ctx: SourceContext, expr: cst.CSTNode, aliases: dict[str, str]) -> str:
    text = ctx.code(expr).strip()
    return aliases.get(text, text)


def _operands(comparison: cst.Comparison, index: int) -> tuple[cst.BaseExpression, cst.BaseExpression]:
    left = comparison.left if index == 0 else comparison.comparisons[index - 1].comparator
    return left, comparison.comparisons[index].comparator


def _conjuncts(test: cst.BaseExpression) -> list[cst.BaseExpression] | None:
    if isinstance(test, cst.BooleanOperation):
        if not isinstance(test.operator, cst.And):
            return None
        left, right = _conjuncts(test.left), _conjuncts(test.right)
        return None if left is None or right is None else left + right
    return [test]


def _is_operand_or_owner(text: str, pair: set[str]) -> bool:
    """``X is not None`` holds whenever ``X == c`` can be evaluated: X is an operand, or the
    object an operand is read from (``settings`` of ``settings.max_retries``; were it None, the
    original and the mutant would both fail reading it)."""
    return any(operand == text or operand.startswith(text + ".") for operand in pair)


def _ends_by_leaving(block: cst.BaseSuite) -> bool:
    body = getattr(block, "body", ())
    last = body[-1] if body else None
    if isinstance(block, cst.SimpleStatementSuite):
        last_small = block.body[-1] if block.body else None
    elif isinstance(last, cst.SimpleStatementLine):
        last_small = last.body[-1]
    else:
        return False
    return isinstance(last_small, (cst.Return, cst.Raise))


def _excludes(ctx: SourceContext, branch: cst.If, pair: set[str], aliases: dict[str, str]) -> bool:
    if branch.orelse is not None or not _ends_by_leaving(branch.body):
        return False
    leaves = _conjuncts(branch.test)
    if not leaves:
        return False
    boundary = False
    for leaf in leaves:
        if not isinstance(leaf, cst.Comparison) or len(leaf.comparisons) != 1:
            return False
        target = leaf.comparisons[0]
        sides = {_canonical(ctx, leaf.left, aliases), _canonical(ctx, target.comparator, aliases)}
        if isinstance(target.operator, _TRUE_AT_EQUALITY) and sides == pair:
            boundary = True
        elif not (
            isinstance(target.operator, cst.IsNot)
            and m.matches(target.comparator, m.Name("None"))
            and _is_operand_or_owner(_canonical(ctx, leaf.left, aliases), pair)
        ):
            return False
    return boundary


def _assigns(
    ctx: SourceContext, statements: list[cst.CSTNode], pair: set[str], aliases: dict[str, str]
) -> bool:
    for statement in statements:
        for node in ctx.descendants(statement, m.Assign() | m.AugAssign() | m.AnnAssign()):
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]  # type: ignore[union-attr]
            if any(_canonical(ctx, t, {}) in pair or ctx.code(t).strip() in aliases for t in targets):
                if not (isinstance(node, cst.Assign) and ctx.code(targets[0]).strip() in aliases):
                    return True
    return False


def decided_earlier(ctx: SourceContext, comparison: cst.Comparison, index: int = 0) -> str | None:
    """Why the two sides of ``comparison``'s ``index``-th test can never be equal when it runs
    (see the module docstring), or None when that cannot be proved."""
    func = ctx.enclosing_function(comparison)
    if func is None:
        return None
    aliases = _aliases(ctx, func)
    left, right = _operands(comparison, index)
    pair = {_canonical(ctx, left, aliases), _canonical(ctx, right, aliases)}
    if len(pair) != 2:
        return None
    child: cst.CSTNode = comparison
    for ancestor in ctx.ancestors(comparison):
        if ancestor is func or isinstance(ancestor, (cst.For, cst.While, cst.FunctionDef, cst.Lambda)):
            if ancestor is not func:
                return None
        if isinstance(ancestor, cst.IndentedBlock) and child in ancestor.body:
            earlier = list(ancestor.body[: ancestor.body.index(child)])
            for position, statement in enumerate(earlier):
                if isinstance(statement, cst.If) and _excludes(ctx, statement, pair, aliases):
                    if _assigns(ctx, earlier[position + 1 :], pair, aliases):
                        return None
                    line = ctx.position(statement).start.line
                    test = " ".join(ctx.code(statement.test).split())
                    left_text, right_text = sorted(pair)
                    return f"`if {test}` (line {line}) already left when {left_text} == {right_text}"
        if ancestor is func:
            return None
        child = ancestor
    return None
