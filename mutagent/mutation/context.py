"""What an operator sees of one source file: the libcst tree plus metadata lookups.

Operators match by meaning, not by spelling: ``qualified_names`` resolves aliases
(``from httpx2 import RemoteProtocolError as RPE`` -> ``httpx2.RemoteProtocolError``) through
libcst's ``QualifiedNameProvider``; ``findall`` runs declarative matchers over a node index built
in a single walk, so twenty operators do not walk the tree twenty times.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from functools import cached_property

import libcst as cst
import libcst.matchers as m
from libcst.metadata import (
    CodeRange,
    MetadataWrapper,
    PositionProvider,
    QualifiedNameProvider,
)

_DEF_TYPES = (cst.FunctionDef, cst.ClassDef)


class _Indexer(cst.CSTVisitor):
    """Collects every node in document order, grouped by type, and each node's parent.

    Doing this in one walk is several times cheaper than resolving ``ParentNodeProvider``,
    which walks the tree again through libcst's metadata machinery.
    """

    def __init__(self) -> None:
        self.by_type: dict[type, list[cst.CSTNode]] = defaultdict(list)
        self.ordered: list[cst.CSTNode] = []
        self.parents: dict[cst.CSTNode, cst.CSTNode] = {}
        self._stack: list[cst.CSTNode] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.by_type[type(node)].append(node)
        self.ordered.append(node)
        if self._stack:
            self.parents[node] = self._stack[-1]
        self._stack.append(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self._stack.pop()


def _node_type_of(matcher: object) -> type | None:
    """The libcst node class a matcher class stands for (``m.Call`` -> ``cst.Call``), if any."""
    candidate = getattr(cst, type(matcher).__name__, None)
    if isinstance(candidate, type) and issubclass(candidate, cst.CSTNode):
        return candidate
    return None


class SourceContext:
    """One parsed file and the metadata operators need. ``module`` is the tree operators must
    yield nodes of (it is the metadata wrapper's copy, not the originally parsed one)."""

    def __init__(self, source: str, path: str = "<string>") -> None:
        self.source = source
        self.path = path
        self.wrapper = MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True)
        self.module: cst.Module = self.wrapper.module
        indexer = _Indexer()
        self.module.visit(indexer)
        self._by_type = indexer.by_type
        self._ordered = indexer.ordered
        self._parents = indexer.parents

    # -- metadata -------------------------------------------------------------------------
    @cached_property
    def _positions(self) -> dict[cst.CSTNode, CodeRange]:
        return self.wrapper.resolve(PositionProvider)

    @cached_property
    def _qualified(self) -> dict:
        # Scope analysis is the most expensive metadata: resolved only if an operator asks.
        return self.wrapper.resolve(QualifiedNameProvider)

    def position(self, node: cst.CSTNode) -> CodeRange:
        return self._positions[node]

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self._parents.get(node)

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        """Parents of ``node``, innermost first, up to and including the Module."""
        current = self._parents.get(node)
        while current is not None:
            yield current
            current = self._parents.get(current)

    def qualified_names(self, node: cst.CSTNode) -> set[str]:
        """Fully spelled names a Name/Attribute/Call refers to, aliases resolved.

        ``except RPE`` after ``from httpx2 import RemoteProtocolError as RPE`` gives
        ``{"httpx2.RemoteProtocolError"}``; builtins come back as ``builtins.X``. Relative
        imports keep their leading dots stripped (``.errors.Foo`` -> ``errors.Foo``).
        """
        if isinstance(node, cst.Call):
            node = node.func
        names = self._qualified.get(node, set())
        return {q.name.lstrip(".") for q in names}

    # -- matching -------------------------------------------------------------------------
    def nodes(self, node_type: type[cst.CSTNode]) -> list[cst.CSTNode]:
        """Every node of exactly this type, in document order."""
        return list(self._by_type.get(node_type, ()))

    def findall(self, matcher: m.BaseMatcherNode | m.OneOf | m.AllOf) -> list[cst.CSTNode]:
        """Nodes matching a declarative matcher (metadata matchers allowed), in document order."""
        node_type = _node_type_of(matcher)
        candidates = self._by_type.get(node_type, ()) if node_type else self._ordered
        return [n for n in candidates if m.matches(n, matcher, metadata_resolver=self.wrapper)]

    def matches(self, node: cst.CSTNode, matcher: m.BaseMatcherNode) -> bool:
        return m.matches(node, matcher, metadata_resolver=self.wrapper)

    def descendants(self, node: cst.CSTNode, matcher: m.BaseMatcherNode) -> list[cst.CSTNode]:
        """Nodes under ``node`` (itself included) that match ``matcher``."""
        return list(m.findall(node, matcher, metadata_resolver=self.wrapper))

    # -- structure ------------------------------------------------------------------------
    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    def enclosing_function(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        for parent in self.ancestors(node):
            if isinstance(parent, cst.FunctionDef):
                return parent
        return None

    def enclosing(self, node: cst.CSTNode, node_type: type | tuple[type, ...]) -> cst.CSTNode | None:
        """The innermost ancestor of the given type(s)."""
        for parent in self.ancestors(node):
            if isinstance(parent, node_type):
                return parent
        return None

    def scope_of(self, node: cst.CSTNode) -> tuple[str, ...]:
        """The ``__qualname__`` chain of the defs/classes enclosing ``node``, outermost first.

        Functions nested in functions get Python's ``<locals>`` marker, so the joined result is
        exactly the ``__qualname__`` the interpreter gives the enclosing function.
        """
        chain = [p for p in self.ancestors(node) if isinstance(p, _DEF_TYPES)]
        if isinstance(node, _DEF_TYPES):
            chain.insert(0, node)
        chain.reverse()
        parts: list[str] = []
        for i, definition in enumerate(chain):
            if i > 0 and isinstance(chain[i - 1], cst.FunctionDef):
                parts.append("<locals>")
            parts.append(definition.name.value)
        return tuple(parts)

    def top_level_statement(self, node: cst.CSTNode) -> cst.CSTNode:
        """The statement directly in ``Module.body`` that contains ``node``."""
        if self.parent(node) is self.module:
            return node
        previous = node
        for parent in self.ancestors(node):
            if parent is self.module:
                return previous
            previous = parent
        raise ValueError("node is not part of this module")
