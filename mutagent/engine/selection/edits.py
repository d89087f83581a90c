"""What an edit to a source file changed, for the incremental baseline: which function bodies.

An edit keeps a file's import-time behaviour when the module with every function body left out
(its docstring kept: ``__doc__`` is set when the ``def`` runs and tools often read it) is the same
syntax tree as before: the same imports, constants, class bodies, ``def`` headers, decorators and
defaults, in the same order. Then the only code that behaves differently is the changed bodies,
and a test that never ran a line of them ran exactly the same code as before, so its outcome,
duration and coverage still hold; only its line numbers in the edited file moved, which
``FileEdit.line_map`` follows (lines of the unchanged text, matched by ``difflib``).

``ast`` rather than libcst, like ``analysis``: formatting and comments do not execute, so a
comment or a blank line must not count as a change of import-time code.
"""

from __future__ import annotations

import ast
import difflib
from dataclasses import dataclass

DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass(frozen=True)
class FileEdit:
    """The functions of one file whose bodies changed, and where the unchanged lines went."""

    changed: tuple[tuple[int, int], ...]  # old first/last line (decorators included) per changed function
    bodies: tuple[tuple[int, int], ...]  # old first/last line of each changed function's executed body
    new_bodies: tuple[tuple[int, int], ...]  # the same functions' executed bodies in the new text
    line_map: dict[int, int]  # old line -> new line, for every line of the text both versions share

    def touches(self, line: int) -> bool:
        """Is old ``line`` inside a changed function (its header included)?"""
        return any(first <= line <= last for first, last in self.changed)

    def moved(self, line: int) -> int | None:
        """Where old ``line`` is now; ``None`` when it was edited or lands inside a changed body."""
        new = self.line_map.get(line)
        if new is None or any(first <= new <= last for first, last in self.new_bodies):
            return None
        return new


def _outer_defs(tree: ast.AST) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """Functions not nested in another function (module level, or methods of module-level or
    nested classes), in source order."""
    found: list[ast.FunctionDef | ast.AsyncFunctionDef] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, DEFS):
                found.append(child)
            else:
                visit(child)

    visit(tree)
    return found


def _docstring_count(body: list[ast.stmt]) -> int:
    first = body[0] if body else None
    value = first.value if isinstance(first, ast.Expr) else None
    return 1 if isinstance(value, ast.Constant) and isinstance(value.value, str) else 0


class _Skeleton(ast.NodeTransformer):
    """The module as the import sees it: each function's body reduced to its docstring."""

    def _strip(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.AST:
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        node.args = self.visit(node.args)
        if node.returns is not None:
            node.returns = self.visit(node.returns)
        node.body = [*node.body[: _docstring_count(node.body)], ast.Pass()]
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:  # noqa: N802 (ast's visitor names)
        return self._strip(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.AST:  # noqa: N802
        return self._strip(node)


def _skeleton(tree: ast.Module) -> str:
    return ast.dump(_Skeleton().visit(tree), include_attributes=False)


def _line_map(old: str, new: str) -> dict[int, int]:
    old_lines, new_lines = old.splitlines(), new.splitlines()
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    mapping: dict[int, int] = {}
    for block in matcher.get_matching_blocks():
        for offset in range(block.size):
            mapping[block.a + offset + 1] = block.b + offset + 1
    return mapping


def _span(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[int, int]:
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    return first, node.end_lineno or node.lineno


def _body_span(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[int, int]:
    """The lines a call executes (the docstring is never executed); empty when it is only a docstring."""
    executed = node.body[_docstring_count(node.body) :]
    if not executed:
        return (1, 0)
    return executed[0].lineno, node.end_lineno or executed[-1].lineno


def function_edit(old: str, new: str) -> FileEdit | None:
    """The changed function bodies between two versions of a file, or ``None`` when the edit
    reaches import-time code (or either version does not parse): then only a full baseline is
    sound."""
    try:
        old_tree, new_tree = ast.parse(old), ast.parse(new)
    except (SyntaxError, ValueError):
        return None
    old_defs, new_defs = _outer_defs(old_tree), _outer_defs(new_tree)
    if len(old_defs) != len(new_defs):
        return None
    changed = [
        (before, after)
        for before, after in zip(old_defs, new_defs, strict=True)
        if ast.dump(ast.Module(body=before.body, type_ignores=[]))
        != ast.dump(ast.Module(body=after.body, type_ignores=[]))
    ]
    # the skeleton walk rewrites the trees in place: measure the spans first
    spans = tuple(_span(before) for before, _ in changed)
    bodies = tuple(_body_span(before) for before, _ in changed)
    new_bodies = tuple(_body_span(after) for _, after in changed)
    if _skeleton(old_tree) != _skeleton(new_tree):
        return None
    return FileEdit(spans, bodies, new_bodies, _line_map(old, new))
