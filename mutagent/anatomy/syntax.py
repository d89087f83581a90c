"""Syntax helpers shared by every recogniser and operator: what an expression names, the
leaves of a condition, the statements of a block, the scopes and loops around a node.

Nothing here knows about agents: these are questions about Python syntax (``leaf_name(resp.choices[0])``
is ``choices``), answered the same way for every role. The words that give names a meaning live
in :mod:`mutagent.anatomy.vocabulary`.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst
import libcst.matchers as m

from mutagent.mutation.context import SourceContext


def identifiers_in(ctx: SourceContext, node: cst.CSTNode) -> list[str]:
    """Every name a reader sees in ``node``: plain names and attribute names."""
    return [n.value for n in ctx.descendants(node, m.Name())]


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
