"""Data flow within one file: what a variable was bound to (assignments, ``with ... as``), which
function or class owns a name, and which variables an expression reads. Per-function and cached:
enough to see that ``stream`` was bound to ``client.messages.create(stream=True)``."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.syntax import root_name, walk
from mutagent.anatomy.vocabulary import (
    cached_analysis as _cached,
)
from mutagent.mutation.context import SourceContext


def owner_of(ctx: SourceContext, expr: cst.CSTNode) -> cst.CSTNode | None:
    """Where a name lives: a plain name in its function (None at module level); ``self.x`` in
    its class; any other chain (``state.done``) module-wide (None)."""
    if isinstance(expr, cst.Name):
        return ctx.enclosing_function(expr)
    if root_name(expr) in ("self", "cls"):
        return ctx.enclosing(expr, cst.ClassDef)
    return None


def same_place(ctx: SourceContext, a: cst.CSTNode, b: cst.CSTNode) -> bool:
    """``a`` and ``b`` spell the same variable in the same function/class."""
    return ctx.code(a) == ctx.code(b) and owner_of(ctx, a) is owner_of(ctx, b)


def references(ctx: SourceContext, node: cst.CSTNode) -> list[cst.Name | cst.Attribute]:
    """The variables ``node`` reads: names and attribute chains, but not the ``done`` of
    ``self.done`` nor the keyword of ``f(done=1)``, which are no variable ``done``."""
    found = []
    for ref in ctx.descendants(node, m.Name() | m.Attribute()):
        parent = ctx.parent(ref)
        if isinstance(parent, cst.Attribute) and parent.attr is ref:
            continue
        if isinstance(parent, cst.Arg) and parent.keyword is ref:
            continue
        found.append(ref)
    return found


@dataclass(frozen=True)
class Binding:
    """``target`` (an expression's code) was assigned ``value`` (or bound by ``with value as target``)."""

    target: cst.BaseExpression
    value: cst.BaseExpression


def bindings(ctx: SourceContext) -> list[Binding]:
    """Every simple binding in the file: assignments, annotated assignments, ``with ... as``."""
    found: list[Binding] = []
    for assign in ctx.nodes(cst.Assign):
        for target in assign.targets:
            found.append(Binding(target.target, assign.value))
    for assign in ctx.nodes(cst.AnnAssign):
        if assign.value is not None:
            found.append(Binding(assign.target, assign.value))
    for item in ctx.nodes(cst.WithItem):
        if item.asname is not None and isinstance(item.asname.name, (cst.Name, cst.Attribute)):
            found.append(Binding(item.asname.name, item.item))
    return found


def bound_values(ctx: SourceContext, expr: cst.CSTNode) -> list[cst.BaseExpression]:
    """Values assigned to the variable ``expr`` spells (same function/class), awaits unwrapped."""
    if not isinstance(expr, (cst.Name, cst.Attribute, cst.Subscript)):
        return []
    index = _cached(ctx, "bindings", lambda: _binding_index(ctx))
    code = ctx.code(expr)
    found = index.get((code, id(owner_of(ctx, expr))))
    if found is None and isinstance(expr, cst.Name):  # a global read inside a function
        found = index.get((code, id(None)))
    return found or []


def _binding_index(ctx: SourceContext) -> dict[tuple[str, int], list[cst.BaseExpression]]:
    index: dict[tuple[str, int], list[cst.BaseExpression]] = {}
    for binding in bindings(ctx):
        value = binding.value.expression if isinstance(binding.value, cst.Await) else binding.value
        key = (ctx.code(binding.target), id(owner_of(ctx, binding.target)))
        index.setdefault(key, []).append(value)
    return index


def _assignments(ctx: SourceContext, scope: cst.CSTNode) -> dict[str, list[cst.BaseExpression]]:
    """Plain ``x = ...``/``x: T = ...``/``(x := ...)`` values by name, for one function (or module)."""

    def compute() -> dict[str, list[cst.BaseExpression]]:
        found: dict[str, list[cst.BaseExpression]] = {}
        for node in walk(scope):
            if isinstance(node, cst.Assign):
                targets = [t.target for t in node.targets]
            elif isinstance(node, (cst.AnnAssign, cst.NamedExpr)) and node.value is not None:
                targets = [node.target]
            else:
                continue
            for target in targets:
                if isinstance(target, cst.Name):
                    found.setdefault(target.value, []).append(node.value)
        return found

    return ctx.cached(("tools", "assignments", id(scope)), compute)


def local_values(ctx: SourceContext, name: cst.Name) -> list[cst.BaseExpression]:
    """Values assigned to ``name`` in the function where it is used (or at module level)."""
    scope = ctx.enclosing_function(name) or ctx.module
    return _assignments(ctx, scope).get(name.value, [])
