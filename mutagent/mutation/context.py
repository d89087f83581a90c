"""What an operator sees of one source file: the libcst tree plus metadata lookups.

Operators match by meaning, not by spelling: ``qualified_names`` resolves aliases
(``from httpx2 import RemoteProtocolError as RPE`` -> ``httpx2.RemoteProtocolError``) through
libcst's scope analysis (what ``QualifiedNameProvider`` reports, resolved on demand);
``findall`` and ``descendants`` run declarative matchers over a node index built in a single
walk, so twenty operators do not walk the tree twenty times.
"""

from __future__ import annotations

import bisect
import dataclasses
import re
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar

import libcst as cst
import libcst.matchers as m
from libcst._nodes.internal import CodegenState
from libcst.metadata import CodeRange, MetadataWrapper, Scope
from libcst.metadata.position_provider import PositionProvidingCodegenState

from mutagent.mutation.tree import children as _children
from mutagent.mutation.tree import resolve_scopes

_DEF_TYPES = (cst.FunctionDef, cst.ClassDef)
_NEWLINE = re.compile(r"\r\n|\r|\n")  # libcst's notion of a line break (str.splitlines has more)

T = TypeVar("T")
_MISSING: Any = object()


class _Index:
    """Every node in document (pre-)order, grouped by type, each node's parent, and each
    subtree's extent in that order (a subtree is the slice ``ordered[start:end[node]]``).

    One iterative walk; resolving ``ParentNodeProvider`` would walk the tree again through
    libcst's metadata machinery, and ``m.findall`` once more for every ``descendants`` call.
    """

    def __init__(self, module: cst.Module) -> None:
        self.by_type: dict[type, list[cst.CSTNode]] = defaultdict(list)
        self.ordered: list[cst.CSTNode] = []
        self.parents: dict[cst.CSTNode, cst.CSTNode] = {}
        self.start: dict[cst.CSTNode, int] = {}
        self.end: dict[cst.CSTNode, int] = {}
        ordered, by_type, parents, start, end = self.ordered, self.by_type, self.parents, self.start, self.end
        leave = object()
        stack: list[object] = [module]
        while stack:
            node = stack.pop()
            if node is leave:
                end[stack.pop()] = len(ordered)  # type: ignore[index]
                continue
            start[node] = len(ordered)  # type: ignore[index]
            ordered.append(node)  # type: ignore[arg-type]
            by_type[type(node)].append(node)  # type: ignore[arg-type]
            stack.append(node)
            stack.append(leave)
            children = _children(node)  # type: ignore[arg-type]
            for child in reversed(children):
                parents[child] = node  # type: ignore[assignment]
                stack.append(child)


class _PositionSink:
    """Stands in for the metadata provider libcst's position-recording codegen state writes to."""

    def __init__(self) -> None:
        self._computed: dict[cst.CSTNode, CodeRange] = {}


class _SpanRecorder(PositionProvidingCodegenState):
    """One rendering of the module that yields both libcst's positions and character spans.

    ``PositionProvider`` is itself a codegen pass with this state; extending it to also count
    characters gives every node's exact span in the text (so a mutation can be spliced into
    the original instead of re-rendering its statement) at no extra walk.
    """

    def __init__(self, module: cst.Module) -> None:
        super().__init__(
            default_indent=module.default_indent,
            default_newline=module.default_newline,
            provider=_PositionSink(),  # type: ignore[arg-type]
        )
        self.spans: dict[cst.CSTNode, tuple[int, int]] = {}
        self._char_stack: list[int] = []
        self._length = 0

    @property
    def positions(self) -> dict[cst.CSTNode, CodeRange]:
        return self.provider._computed  # type: ignore[attr-defined]

    def add_indent_tokens(self) -> None:
        super().add_indent_tokens()
        for token in self.indent_tokens:
            self._length += len(token)

    def add_token(self, value: str) -> None:
        super().add_token(value)
        self._length += len(value)

    def pop_trailing_newline(self) -> None:
        if self.tokens:
            self._length -= len(self.tokens[-1])
        super().pop_trailing_newline()

    def before_codegen(self, node: cst.CSTNode) -> None:
        super().before_codegen(node)
        self._char_stack.append(self._length)

    def after_codegen(self, node: cst.CSTNode) -> None:
        super().after_codegen(node)
        self.spans[node] = (self._char_stack.pop(), self._length)


class _PartRecorder(CodegenState):
    """Plain codegen with given indentation that also notes where one ``part`` node's text is."""

    def __init__(self, module: cst.Module, indent_tokens: list[str], part: cst.CSTNode | None) -> None:
        super().__init__(
            default_indent=module.default_indent,
            default_newline=module.default_newline,
            indent_tokens=indent_tokens,
        )
        self.part = part
        self.part_span: tuple[int, int] | None = None
        self._part_start = 0

    def before_codegen(self, node: cst.CSTNode) -> None:
        if node is self.part:
            self._part_start = sum(map(len, self.tokens))

    def after_codegen(self, node: cst.CSTNode) -> None:
        if node is self.part:
            self.part_span = (self._part_start, sum(map(len, self.tokens)))


def _node_type_of(matcher: object) -> type | None:
    """The libcst node class a matcher class stands for (``m.Call`` -> ``cst.Call``), if any."""
    candidate = getattr(cst, type(matcher).__name__, None)
    if isinstance(candidate, type) and issubclass(candidate, cst.CSTNode):
        return candidate
    return None


def _node_types_of(matcher: object) -> frozenset[type] | None:
    """Every node class ``matcher`` can match, or None when it could match any node.

    Matchers compare node classes exactly, so only nodes of these classes need ``m.matches``:
    ``m.Call() | m.Subscript()`` looks at the calls and subscripts, not at every node.
    """
    node_type = _node_type_of(matcher)
    if node_type is not None:
        return frozenset((node_type,))
    if isinstance(matcher, m.OneOf):
        union: set[type] = set()
        for option in matcher.options:
            types = _node_types_of(option)
            if types is None:
                return None
            union |= types
        return frozenset(union)
    if isinstance(matcher, m.AllOf):
        narrowest = [types for types in map(_node_types_of, matcher.options) if types is not None]
        return min(narrowest, key=len) if narrowest else None
    return None


def _matches_any(matcher: object) -> bool:
    """``m.Call()`` with every field left as DoNotCare: the class check alone decides."""
    if _node_type_of(matcher) is None or not dataclasses.is_dataclass(matcher):
        return False
    dont_care = m.DoNotCare()
    return all(getattr(matcher, field.name) is dont_care for field in dataclasses.fields(matcher))


class SourceContext:
    """One parsed file and the metadata operators need. ``module`` is the tree operators must
    yield nodes of (it is the metadata wrapper's copy, not the originally parsed one)."""

    def __init__(self, source: str, path: str = "<string>", root: Path | None = None) -> None:
        self.source = source
        self.path = path
        #: the target's directory ``path`` is relative to (None: unknown), for analyses that read
        #: the target's other files (``mutagent.anatomy.hierarchy`` follows imports into them)
        self.root = root
        self.wrapper = MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True)
        self.module: cst.Module = self.wrapper.module
        index = _Index(self.module)
        self._by_type = index.by_type
        self._ordered = index.ordered
        self._parents = index.parents
        self._start = index.start
        self._end = index.end
        self._memo: dict[object, Any] = {}
        self._qualified_cache: dict[cst.CSTNode, frozenset[str]] = {}

    def cached(self, key: object, compute: Callable[[], T]) -> T:
        """Memoise per-file work shared by several operators (a family's eligible nodes, a
        vocabulary lookup ...): the first caller computes it, the others reuse it."""
        value = self._memo.get(key, _MISSING)
        if value is _MISSING:  # not try/except: a failing compute() would chain KeyErrors
            value = self._memo[key] = compute()
        return value

    # -- metadata -------------------------------------------------------------------------
    @cached_property
    def _rendering(self) -> _SpanRecorder:
        state = _SpanRecorder(self.module)
        self.module._codegen(state)
        return state

    @cached_property
    def _positions(self) -> Mapping[cst.CSTNode, CodeRange]:
        # Exactly PositionProvider's result (same codegen state), from the pass that also
        # records character spans; resolving PositionProvider separately would render twice.
        return self._rendering.positions

    @cached_property
    def _scopes(self) -> Mapping[cst.CSTNode, Scope | None]:
        # Scope analysis is the most expensive metadata: resolved only if an operator asks.
        # We ask ScopeProvider directly: QualifiedNameProvider is nothing but another full walk
        # that stores ``scope.get_qualified_names_for(node)`` lazily for every node, which
        # doubled the cost of the first qualified_names() call in a file.
        return resolve_scopes(self.wrapper)

    def position(self, node: cst.CSTNode) -> CodeRange:
        return self._positions[node]

    # -- text spans ---------------------------------------------------------------------
    @cached_property
    def _spans(self) -> dict[cst.CSTNode, tuple[int, int]] | None:
        """Character span of every node's rendering in ``source``; None if libcst's rendering
        of the module is not byte-identical to the file (never seen, but then nothing is
        spliced and generation re-renders whole statements instead)."""
        state = self._rendering
        if "".join(state.tokens) != self.source:
            return None
        return state.spans

    def span(self, node: cst.CSTNode) -> tuple[int, int] | None:
        """``(start, end)`` such that ``source[start:end]`` is ``node`` as written, including
        its parentheses, owned whitespace and (inside blocks) indentation; None for a node that
        is not part of this file.

        The end of the file's last statement may exceed ``len(source)`` when the file has no
        trailing newline (libcst renders one and then drops it).
        """
        spans = self._spans
        return spans.get(node) if spans is not None else None

    def indent_tokens(self, node: cst.CSTNode) -> list[str]:
        """The indentation libcst adds at line starts where ``node`` is rendered: one token per
        enclosing block (and per ``match`` whose cases hold it), outermost first."""
        tokens: list[str] = []
        child = node
        for parent in self.ancestors(node):
            in_cases = isinstance(parent, cst.Match) and any(
                c is child for c in (*parent.cases, *parent.footer)
            )
            if isinstance(parent, cst.IndentedBlock) or in_cases:
                indent = parent.indent  # type: ignore[union-attr]
                tokens.append(self.module.default_indent if indent is None else indent)
            child = parent
        tokens.reverse()
        return tokens

    def code_in_place(self, anchor: cst.CSTNode, node: cst.CSTNode | None = None) -> str:
        """``node`` (default: ``anchor``) rendered as it would be at ``anchor``'s place, with the
        enclosing blocks' indentation on its continuation lines. ``code()`` renders a node at
        column 0, which differs from the file for any multi-line node inside a block."""
        return self._render(anchor, anchor if node is None else node, None)[0]

    def code_of_part_in_place(
        self, anchor: cst.CSTNode, node: cst.CSTNode, part: cst.CSTNode
    ) -> tuple[str, str]:
        """``node`` rendered at ``anchor``'s place, and the text ``part`` (a node inside it) got
        there: how a node that cannot be rendered alone (an ``elif``, an annotation) reads."""
        return self._render(anchor, node, part)

    def _render(self, anchor: cst.CSTNode, node: cst.CSTNode, part: cst.CSTNode | None) -> tuple[str, str]:
        state = _PartRecorder(self.module, self.indent_tokens(anchor), part)
        node._codegen(state)
        text = "".join(state.tokens)
        start, end = state.part_span or (0, 0)
        return text, text[start:end]

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
        cached = self._qualified_cache.get(node)
        if cached is None:
            # Exactly what QualifiedNameProvider would give for this node, computed on demand.
            scope = self._scopes.get(node)
            names = scope.get_qualified_names_for(node) if scope is not None else ()
            cached = self._qualified_cache[node] = frozenset(q.name.lstrip(".") for q in names)
        return set(cached)

    # -- matching -------------------------------------------------------------------------
    def nodes_in_order(self) -> list[cst.CSTNode]:
        """Every node of the file in document (pre-)order: a parent always precedes its children.

        The list is shared, not copied: do not mutate it.
        """
        return self._ordered

    def in_document_order(self, nodes: Sequence[cst.CSTNode]) -> list[cst.CSTNode]:
        """``nodes`` (of this file) sorted in document (pre-)order: for statements, the order of
        their starting positions, without rendering the file to compute positions (a file
        whose anatomy finds nothing is then never rendered)."""
        return sorted(nodes, key=self._start.__getitem__)

    def nodes(self, node_type: type[cst.CSTNode]) -> list[cst.CSTNode]:
        """Every node of exactly this type, in document order."""
        return list(self._by_type.get(node_type, ()))

    def findall(self, matcher: m.BaseMatcherNode | m.OneOf | m.AllOf) -> list[cst.CSTNode]:
        """Nodes matching a declarative matcher (metadata matchers allowed), in document order."""
        return self._filter(self._candidates(matcher, None), matcher)

    def _candidates(self, matcher: object, subtree: tuple[int, int] | None) -> list[cst.CSTNode]:
        """Nodes of the classes ``matcher`` can match, in document order, optionally only those
        whose index lies in ``subtree`` (a node's slice of the index)."""
        types = _node_types_of(matcher)
        if types is None:
            return self._ordered if subtree is None else self._ordered[subtree[0] : subtree[1]]
        if subtree is None:
            if len(types) == 1:
                return self._by_type.get(next(iter(types)), [])
            merged = [n for t in types for n in self._by_type.get(t, ())]
        else:
            first, last = subtree
            if last - first < 64 * len(types):  # small subtree: scanning it beats bisecting lists
                return [n for n in self._ordered[first:last] if type(n) in types]
            start = self._start
            merged = []
            for node_type in types:
                nodes = self._by_type.get(node_type, [])
                low = bisect.bisect_left(nodes, first, key=start.__getitem__)
                high = bisect.bisect_left(nodes, last, key=start.__getitem__)
                merged.extend(nodes[low:high])
            if len(types) == 1:
                return merged
        merged.sort(key=self._start.__getitem__)
        return merged

    def _filter(self, candidates: list[cst.CSTNode], matcher: object) -> list[cst.CSTNode]:
        if _matches_any(matcher):
            return list(candidates)
        return [n for n in candidates if m.matches(n, matcher, metadata_resolver=self.wrapper)]  # type: ignore[arg-type]

    def matches(self, node: cst.CSTNode, matcher: m.BaseMatcherNode) -> bool:
        return m.matches(node, matcher, metadata_resolver=self.wrapper)

    def descendants(self, node: cst.CSTNode, matcher: m.BaseMatcherNode) -> list[cst.CSTNode]:
        """Nodes under ``node`` (itself included) that match ``matcher``, in document order.

        A subtree is a slice of the node index, so this costs a scan of that slice instead of a
        libcst visitor walk per call; nodes that are not part of this file (a replacement built
        by an operator) fall back to ``m.findall``.
        """
        start = self._start.get(node)
        if start is None or self._ordered[start] is not node:
            return list(m.findall(node, matcher, metadata_resolver=self.wrapper))
        return self._filter(self._candidates(matcher, (start, self._end[node])), matcher)

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
        """The ``__qualname__`` chain of the function/class whose code object holds ``node``.

        Functions nested in functions get Python's ``<locals>`` marker, so the joined result is
        exactly the ``__qualname__`` the interpreter gives the enclosing function. Decorators,
        parameter defaults and annotations, return annotations and class bases are evaluated
        where the ``def``/``class`` statement runs, so they belong to the enclosing scope: a
        mutated default value changes the module's (or outer function's) code, not the
        function's. A def or class itself is its own scope.
        """
        chain: list[cst.CSTNode] = [node] if isinstance(node, _DEF_TYPES) else []
        child = node
        evaluated_outside = False  # crossed a Param's default or annotation on the way up
        for parent in self.ancestors(node):
            if isinstance(parent, cst.Param) and (child is parent.default or child is parent.annotation):
                evaluated_outside = True
            elif isinstance(parent, cst.FunctionDef):
                inside = child is parent.body or child is parent.name
                if child is parent.params and not evaluated_outside:
                    inside = True
                if inside:
                    chain.append(parent)
                evaluated_outside = False
            elif isinstance(parent, cst.ClassDef):
                if child is parent.body or child is parent.name:
                    chain.append(parent)
                evaluated_outside = False
            child = parent
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
