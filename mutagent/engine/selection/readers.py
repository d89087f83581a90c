"""Where one source file reads a module-level name, by libcst scope analysis (rules in ``narrow``).

Every read is placed: in the body of a function or lambda (``lines``: its body lines, whose
covering tests see the value), in a default evaluated at import (the function's body lines,
since each call without that argument uses the value), in another top-level statement
(``binding``: the engine follows the names it binds) or somewhere else evaluated at import
(``broad``: a class body, a decorator, an annotation that is evaluated, a module-level call).

libcst is imported here only, and only when a module-level mutant is planned.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import libcst as cst
from libcst.metadata import (
    BuiltinAssignment,
    ClassScope,
    ComprehensionScope,
    FunctionScope,
    GlobalScope,
    MetadataWrapper,
    ParentNodeProvider,
    PositionProvider,
    ScopeProvider,
)

FUNCTION_NODES = (cst.FunctionDef, cst.Lambda)


@dataclass(frozen=True)
class Place:
    kind: str  # "lines" | "binding" | "broad" | "ignore"
    lines: frozenset[int] = frozenset()
    line: int = 0  # first line of the top-level statement (binding) or of the read (broad)
    why: str = ""


class FileScopes:
    """One file's libcst module with scopes, positions and parents, resolved once."""

    def __init__(self, file: str, text: str) -> None:
        self.file = file
        wrapper = MetadataWrapper(cst.parse_module(text))
        self.module = wrapper.module
        self.scopes: Any = wrapper.resolve(ScopeProvider)
        self.positions: Any = wrapper.resolve(PositionProvider)
        self.parents: Any = wrapper.resolve(ParentNodeProvider)
        self.global_scope = next(s for s in self.scopes.values() if isinstance(s, GlobalScope))
        self.future_annotations = bool(re.search(r"^from __future__ import .*\bannotations\b", text, re.M))

    # --- queries ----------------------------------------------------------------------------
    def reads(self, name: str) -> list[Place]:
        """Every read of the module-level ``name`` (from any scope of this file), placed."""
        places = []
        for assignment in self.global_scope[name]:
            if isinstance(assignment, BuiltinAssignment):
                continue
            for access in assignment.references:
                if access.is_annotation and self.future_annotations:
                    continue  # never evaluated
                places.append(self.place(access.node))
        return places

    def imports_of(self, name: str) -> list[tuple[str, Place]]:
        """Every ``from ... import name [as alias]`` of this file (at any depth), with the local
        name it binds and where: a module-level import (``binding``, even inside ``try``/``if``)
        binds a global whose reads are followed; one inside a function places the function."""
        found = []
        for node in _walk(self.module):
            if not isinstance(node, cst.ImportFrom) or isinstance(node.names, cst.ImportStar):
                continue
            for alias in node.names:
                if isinstance(alias.name, cst.Name) and alias.name.value == name:
                    asname = alias.asname.name if alias.asname else alias.name
                    local = asname.value if isinstance(asname, cst.Name) else name
                    found.append((local, self._place_import(node)))
        return found

    def _place_import(self, node: cst.ImportFrom) -> Place:
        scope = self.scopes.get(node)
        line = self.positions[node].start.line
        if isinstance(scope, ClassScope):
            return Place("broad", line=line, why=f"{self.file}:{line} imports it into a class body")
        if isinstance(scope, GlobalScope):
            return Place("binding", line=line)
        return self.place(node)

    def mentions(self, word: str) -> list[Place]:
        """Attribute accesses ``x.word`` and strings holding ``word``, placed (``__all__`` lists
        and docstrings aside)."""
        pattern = re.compile(rf"\b{re.escape(word)}\b")
        places = []
        for node in _walk(self.module):
            if isinstance(node, cst.Attribute) and node.attr.value == word:
                places.append(self.place(node))
            elif isinstance(node, (cst.SimpleString, cst.FormattedStringText)):
                if pattern.search(node.value) and not self._in_all(node) and not self._docstring(node):
                    places.append(self.place(node))
        return places

    # --- placing one node -----------------------------------------------------------------
    def place(self, node: cst.CSTNode) -> Place:
        line = self.positions[node].start.line
        scope = self.scopes.get(node)
        while isinstance(scope, ComprehensionScope):
            scope = scope.parent
        if isinstance(scope, FunctionScope) and isinstance(scope.node, FUNCTION_NODES):
            return Place("lines", self.body_lines(scope.node), line)
        ancestors = self._ancestors(node)
        for child, parent in zip([node, *ancestors[:-1]], ancestors, strict=True):
            if isinstance(parent, cst.Param) and child is parent.default:
                function = next(a for a in ancestors if isinstance(a, FUNCTION_NODES))
                return Place("lines", self.body_lines(function), line)
            if isinstance(parent, cst.Annotation):
                if self.future_annotations:
                    return Place("ignore")
                return Place("broad", line=line, why=f"{self.file}:{line} evaluates it in an annotation")
        if isinstance(scope, ClassScope):
            return Place("broad", line=line, why=f"{self.file}:{line} reads it in a class body at import")
        top = ancestors[-2] if len(ancestors) >= 2 else node  # the child of the Module
        if isinstance(top, cst.SimpleStatementLine):
            return Place("binding", line=self.positions[top].start.line)
        return Place("broad", line=line, why=f"{self.file}:{line} reads it at import time")

    def body_lines(self, function: cst.CSTNode) -> frozenset[int]:
        if isinstance(function, cst.Lambda):
            body = self.positions[function.body]
            return frozenset(range(body.start.line, body.end.line + 1))
        assert isinstance(function, cst.FunctionDef)
        block = function.body
        first = block.body[0] if isinstance(block, cst.IndentedBlock) and block.body else block
        return frozenset(range(self.positions[first].start.line, self.positions[function].end.line + 1))

    def _ancestors(self, node: cst.CSTNode) -> list[cst.CSTNode]:
        chain = []
        while node in self.parents:
            node = self.parents[node]
            chain.append(node)
        return chain

    def _docstring(self, node: cst.CSTNode) -> bool:
        """A string that is a whole statement (a docstring, a bare comment-like string) does nothing."""
        parent = self.parents.get(node)
        if isinstance(parent, cst.ConcatenatedString):
            parent = self.parents.get(parent)
        return isinstance(parent, cst.Expr)

    def _in_all(self, node: cst.CSTNode) -> bool:
        for ancestor in self._ancestors(node):
            if isinstance(ancestor, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
                targets = (
                    [t.target for t in ancestor.targets]
                    if isinstance(ancestor, cst.Assign)
                    else [ancestor.target]
                )
                return any(isinstance(t, cst.Name) and t.value == "__all__" for t in targets)
        return False


def _walk(node: cst.CSTNode) -> list[cst.CSTNode]:
    found = [node]
    position = 0
    while position < len(found):
        found.extend(found[position].children)
        position += 1
    return found
