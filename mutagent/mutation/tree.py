"""Cheap traversals of a libcst tree: children in document order, and scope analysis without
libcst's node-rebuilding walk.

Both exist for generation speed (issue 24). ``CSTNode.children`` and ``CSTNode.visit`` go through
``_visit_and_replace_children``, which constructs (and validates) a new copy of every node it
passes even for a read-only visitor; on a large file that copying costs more than the analysis
itself. The functions here give the same children in the same order, and the same scope
metadata, without it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from contextlib import contextmanager
from types import MappingProxyType
from typing import Any

import libcst as cst
from libcst.metadata import ExpressionContextProvider, MetadataWrapper, Scope, ScopeProvider
from libcst.metadata.expression_context_provider import ExpressionContextVisitor
from libcst.metadata.scope_provider import ScopeVisitor

_FIELD_NAMES: dict[type, tuple[str, ...]] = {}
# (node type, fields holding nodes in this instance) -> those fields in document order, or None
# when libcst's own child list cannot be mapped onto fields (then ``node.children`` is used).
_CHILD_ORDER: dict[tuple[type, tuple[str, ...]], tuple[str, ...] | None] = {}


def _learn_child_order(node: cst.CSTNode, present: tuple[str, ...]) -> tuple[str, ...] | None:
    """Document order of ``present`` fields, read once from libcst's (slow) ``children``."""
    owner = {}
    for name in present:
        value = getattr(node, name)
        for item in value if isinstance(value, (list, tuple)) else (value,):
            owner[id(item)] = name
    order: list[str] = []
    for child in node.children:
        name = owner.get(id(child))
        if name is None:
            return None
        if not order or order[-1] != name:
            if name in order:  # one field's items interleaved with another's: not a field order
                return None
            order.append(name)
    return tuple(order)


def children(node: cst.CSTNode) -> Sequence[cst.CSTNode]:
    """``node.children`` in the same (document) order, without libcst's visitor machinery.

    ``CSTNode.children`` re-runs ``_visit_and_replace_children`` for every node, which made
    indexing a file cost as much as parsing it. Dataclass field order is not document order
    (``FunctionDef`` lists ``decorators`` after ``body``), so the order of each type's fields
    is learnt from ``children`` the first time a type shows up with a given set of non-empty
    fields, and reused for every later node of that shape (in every file).
    """
    node_type = type(node)
    names = _FIELD_NAMES.get(node_type)
    if names is None:
        names = _FIELD_NAMES[node_type] = tuple(f.name for f in dataclasses.fields(node))
    present = tuple(
        name
        for name in names
        if isinstance(value := getattr(node, name), cst.CSTNode)
        or (isinstance(value, (list, tuple)) and value)
    )
    key = (node_type, present)
    try:
        order = _CHILD_ORDER[key]
    except KeyError:
        order = _CHILD_ORDER[key] = _learn_child_order(node, present)
    if order is None:
        return node.children
    result: list[cst.CSTNode] = []
    for name in order:
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            result.append(value)
        else:
            result.extend(value)
    return result


# --- scope analysis -------------------------------------------------------------------------
_ORIGINAL_VISIT = cst.CSTNode.visit


def _attribute_hooks(visitor_type: type) -> frozenset[str]:
    """Node class names for which ``visitor_type`` has ``visit_<Node>_<field>`` or
    ``leave_<Node>_<field>`` hooks of its own (``CSTVisitor`` declares a no-op one for every
    field): such nodes are walked by libcst itself, which calls them."""
    names = set()
    for attribute in dir(visitor_type):
        for prefix in ("visit_", "leave_"):
            if attribute.startswith(prefix) and "_" in attribute[len(prefix) :]:
                if getattr(visitor_type, attribute) is not getattr(cst.CSTVisitor, attribute, None):
                    names.add(attribute[len(prefix) :].split("_", 1)[0])
    return frozenset(names)


#: the read-only visitors of scope analysis, each with the node classes it hooks fields of
_FAST_VISITORS: dict[type, frozenset[str]] = {
    visitor: _attribute_hooks(visitor) for visitor in (ScopeVisitor, ExpressionContextVisitor)
}


def _read_only_visit(node: cst.CSTNode, visitor: Any) -> cst.CSTNode:
    """``CSTNode.visit`` for the scope-analysis visitors, without rebuilding the node.

    For a ``CSTVisitor`` libcst's ``visit`` calls ``on_visit``, visits the children in
    ``children`` order (that property is itself read off the same walk), calls ``on_leave``
    and returns the node unchanged; the copy ``_visit_and_replace_children`` builds is thrown
    away. Field hooks (``on_visit_attribute``) are only called by libcst's walk, so a node
    class the visitor hooks fields of goes through it (its children come back here).
    """
    hooked = _FAST_VISITORS.get(type(visitor))
    if hooked is None or type(node).__name__ in hooked:
        return _ORIGINAL_VISIT(node, visitor)
    if visitor.on_visit(node):
        for child in children(node):
            child.visit(visitor)
    visitor.on_leave(node)
    return node


@contextmanager
def _read_only_visits() -> Any:
    cst.CSTNode.visit = _read_only_visit  # type: ignore[method-assign]
    try:
        yield
    finally:
        cst.CSTNode.visit = _ORIGINAL_VISIT  # type: ignore[method-assign]


def resolve_scopes(wrapper: MetadataWrapper) -> Mapping[cst.CSTNode, Scope | None]:
    """Exactly ``wrapper.resolve(ScopeProvider)``, about three times faster, and cached in the
    wrapper (a later ``wrapper.resolve(ScopeProvider)`` returns it).

    ``wrapper.resolve`` runs each provider inside a batched walk of the whole module, but both
    providers do all their work in ``visit_Module`` with a visitor of their own: the batched
    walks (two, since scopes depend on expression contexts) visit every node for nothing. Here
    the two providers' ``visit_Module`` run directly, in the same order, with the same
    dependency metadata, and their visitors walk the tree without copying it.
    """
    metadata = wrapper._metadata  # noqa: SLF001 - the cache ``resolve`` itself reads and fills
    if ScopeProvider not in metadata:
        module = wrapper.module
        with _read_only_visits():
            if ExpressionContextProvider not in metadata:
                contexts = ExpressionContextProvider()
                contexts.metadata = {}
                contexts.visit_Module(module)
                metadata[ExpressionContextProvider] = MappingProxyType(dict(contexts._computed))  # noqa: SLF001
            scopes = ScopeProvider()
            scopes.metadata = {ExpressionContextProvider: metadata[ExpressionContextProvider]}
            scopes.visit_Module(module)
            metadata[ScopeProvider] = MappingProxyType(dict(scopes._computed))  # noqa: SLF001
    return metadata[ScopeProvider]


__all__ = ["children", "resolve_scopes"]
