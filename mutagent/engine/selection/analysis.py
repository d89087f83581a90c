"""Where a mutant executes: which function's code object changes, and which lines select its tests.

The engine never trusts names alone: it re-derives everything from the file's ``ast`` so that a
mutant in a default argument, a decorator or a class body is recognised as import-time code
(only a fresh import can apply it) while a mutant in a function body can be applied to the live
function objects of a warm worker by swapping ``__code__``.

Rules, for a mutant at some lines:

* body of a function (or lambda): the code objects of that function and of every enclosing
  function change; tests are those covering the innermost statement holding the mutant
  (the header lines only, for ``if``/``for``/``except`` ... headers);
* header of a ``def`` (decorator, default, annotation) executed by an enclosing function: as
  above for the enclosing function, plus the tests covering the decorated function's body;
* anything run at import time (module level, class bodies, headers of top-level defs): needs a
  fresh import; tests are those covering the function's body for a def header, otherwise those
  covering any line of the file.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from types import CodeType

from mutagent.model import Location

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


@dataclass(frozen=True)
class Locus:
    """What the engine needs to know about where a mutant sits in its file."""

    levels: tuple[tuple[str, int], ...]  # (co_name, co_firstlineno) of the code objects to swap, outer first
    lines: frozenset[int]  # covering any of these lines selects a test
    file_wide: bool  # select the tests covering any line of the file
    top_span: tuple[int, int]  # first/last line of the enclosing top-level statement


class SourceMap:
    """One file's text and ``ast``, with column conversion (ast counts UTF-8 bytes, libcst counts
    characters)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.lines = source.splitlines(keepends=True)
        self.tree = ast.parse(source)

    def _char_col(self, line: int, byte_col: int) -> int:
        if not 1 <= line <= len(self.lines):
            return byte_col
        text = self.lines[line - 1]
        if text.isascii():
            return byte_col
        return len(text.encode("utf-8")[:byte_col].decode("utf-8", "replace"))

    def span(self, node: ast.AST) -> tuple[tuple[int, int], tuple[int, int]]:
        start_line, end_line = node.lineno, node.end_lineno or node.lineno  # type: ignore[attr-defined]
        start = (start_line, self._char_col(start_line, node.col_offset))  # type: ignore[attr-defined]
        end = (end_line, self._char_col(end_line, node.end_col_offset or 0))  # type: ignore[attr-defined]
        return start, end

    def contains(self, node: ast.AST, location: Location) -> bool:
        if not hasattr(node, "lineno") or getattr(node, "end_lineno", None) is None:
            return False
        start, end = self.span(node)
        return (
            start <= (location.start_line, location.start_col)
            and (location.end_line, location.end_col) <= end
        )

    def chain(self, location: Location) -> list[ast.AST]:
        """Nodes from the top-level statement down to the innermost node holding the mutant."""
        path: list[ast.AST] = []
        node: ast.AST = self.tree
        while True:
            inner = next((c for c in ast.iter_child_nodes(node) if self.contains(c, location)), None)
            if inner is None:
                return path
            path.append(inner)
            node = inner


def first_line(node: ast.AST) -> int:
    """``co_firstlineno`` of a def: its first decorator's line (Python >= 3.8), else the def line."""
    decorators = getattr(node, "decorator_list", [])
    return min([d.lineno for d in decorators] + [node.lineno])  # type: ignore[attr-defined]


def _in_body(scope: ast.AST, child: ast.AST | None) -> bool:
    if child is None:
        return False
    if isinstance(scope, ast.Lambda):
        return child is scope.body
    return any(child is statement for statement in scope.body)  # type: ignore[attr-defined]


def _spans_body(smap: SourceMap, scope: ast.FunctionDef | ast.AsyncFunctionDef, location: Location) -> bool:
    """Whether ``location`` lies within the statements of ``scope``'s body (not its header)."""
    first, last = smap.span(scope.body[0])[0], smap.span(scope.body[-1])[1]
    return (
        first <= (location.start_line, location.start_col) and (location.end_line, location.end_col) <= last
    )


def _body_lines(scope: ast.AST) -> set[int]:
    if isinstance(scope, ast.Lambda):
        return set(range(scope.body.lineno, (scope.body.end_lineno or scope.body.lineno) + 1))
    body = scope.body  # type: ignore[attr-defined]
    return set(range(body[0].lineno, (scope.end_lineno or body[-1].end_lineno or body[0].lineno) + 1))


def _statement_lines(statement: ast.AST, location: Location) -> set[int]:
    """Lines of the innermost statement; for a compound statement only its header lines."""
    start = statement.lineno  # type: ignore[attr-defined]
    end = statement.end_lineno or start  # type: ignore[attr-defined]
    body = getattr(statement, "body", None)
    if isinstance(body, list) and body and isinstance(body[0], ast.AST) and hasattr(body[0], "lineno"):
        end = max(start, body[0].lineno - 1) if location.end_line < body[0].lineno else end
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        start = first_line(statement)
    return set(range(start, end + 1))


def locate(smap: SourceMap, location: Location) -> Locus:
    """Classify a mutant at ``location``; see the module docstring for the rules."""
    chain = smap.chain(location)
    mutant_lines = set(range(location.start_line, location.end_line + 1))
    if not chain:
        return Locus((), frozenset(mutant_lines), True, (location.start_line, location.end_line))
    top = chain[0]
    top_start = first_line(top) if isinstance(top, SCOPES) else top.lineno  # type: ignore[attr-defined]
    top_span = (top_start, top.end_lineno or top.lineno)  # type: ignore[attr-defined]
    levels: list[tuple[str, int]] = []
    lines = set(mutant_lines)
    header_bodies: set[int] = set()
    statement: ast.AST | None = None
    for position, node in enumerate(chain):
        child = chain[position + 1] if position + 1 < len(chain) else None
        if isinstance(node, (ast.stmt, ast.ExceptHandler)):
            statement = node
        if child is None and isinstance(node, FUNCTIONS[:2]) and _spans_body(smap, node, location):
            # an edit over several statements of a def's body (a block mutation): still its body
            levels.append((node.name, first_line(node)))
            for inner in node.body:
                if inner.lineno <= location.end_line and location.start_line <= (inner.end_lineno or 0):
                    lines |= _statement_lines(inner, location)
            statement = None
            break
        if isinstance(node, SCOPES):
            if _in_body(node, child):
                if isinstance(node, FUNCTIONS):
                    name = "<lambda>" if isinstance(node, ast.Lambda) else node.name
                    levels.append((name, first_line(node)))
            elif not isinstance(node, ast.ClassDef):
                header_bodies |= _body_lines(node)  # a default/decorator: who calls it runs the body
    if statement is not None:
        lines |= _statement_lines(statement, location)
    lines |= header_bodies
    file_wide = not levels and not header_bodies
    return Locus(tuple(levels), frozenset(lines), file_wide, top_span)


def walk_code(code: CodeType) -> Iterator[CodeType]:
    """Every code object nested in ``code`` (itself included), depth first."""
    yield code
    for const in code.co_consts:
        if isinstance(const, CodeType):
            yield from walk_code(const)


def find_code(module_code: CodeType, name: str, firstlineno: int) -> CodeType | None:
    """The unique code object called ``name`` starting at ``firstlineno``; ``None`` if absent or
    ambiguous (two lambdas on one line cannot be told apart, so such mutants use a fresh import)."""
    found = [c for c in walk_code(module_code) if c.co_name == name and c.co_firstlineno == firstlineno]
    return found[0] if len(found) == 1 else None
