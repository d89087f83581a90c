"""Who reads a name at import time: the question behind every in-place value swap.

A default value or a constant applied to the live objects of a warm worker (``defaults``,
``module_values``) is the same program as a fresh import of the mutated module only if nothing
used the old value while the modules were imported: an import-time statement that read it, a
function that ran at import and read it, a test module's collection (``parametrize`` over it),
or, for a constant, a copy bound at import (``from mod import NAME``, ``import *``). Source files
answer from the baseline's record of the lines that ran at import; test-side files, which that
record does not cover, statically and conservatively (a test or fixture body may read it, a
helper that collection may call may not).
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field

from mutagent.engine.selection.names import ParsedFiles, import_time_nodes


@dataclass(frozen=True)
class ImportTime:
    """What a run knows about import time: every source and test file's text (``files``), the
    target's sources among them, the lines the baseline saw run at import (``None``: not
    recorded) and the source files it saw run at all (``imported``). One per run's planner: every
    mutant of a constant asks the same question, so the answers are kept; the parsed files are the
    run's (``parsed``, shared with the narrow analysis), or parsed here once each."""

    files: Mapping[str, str]
    sources: Mapping[str, str]
    import_lines: Mapping[str, list[int]] | None
    imported: Collection[str] = ()
    parsed: ParsedFiles | None = field(default=None, compare=False, repr=False)
    _answers: dict[tuple[str, bool], str] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.parsed is None:
            object.__setattr__(self, "parsed", ParsedFiles(self.files))

    def reads(self, name: str, copies_matter: bool) -> str:
        """Why ``name`` may have been read (or, with ``copies_matter``, copied) at import time,
        or empty: nothing then kept its old value, so setting a new one in a warm worker's child
        is the same program as importing the mutated module again.

        A source file the baseline saw run (``imported``) but not at import was first imported
        by a test, and what its import-time code read (through any function) was not recorded
        apart from the test's own lines."""
        key = (name, copies_matter)
        if key not in self._answers:
            self._answers[key] = self._reads(name, copies_matter)
        return self._answers[key]

    def _reads(self, name: str, copies_matter: bool) -> str:
        import_lines = self.import_lines
        if import_lines is None:
            return "the baseline did not record which lines run at import"
        parsed = self.parsed
        assert parsed is not None  # set in __post_init__
        lazy = sorted(set(self.imported) - set(import_lines))
        if lazy:
            return f"{lazy[0]} is first imported during the tests (its import-time reads are not recorded)"
        for other, text in self.files.items():
            if name not in text and "*" not in text:  # neither names it nor may star-import it
                continue
            tree = parsed(other)
            if tree is None:
                return f"{other} does not parse"
            for node in import_time_nodes(tree):
                if (
                    copies_matter
                    and isinstance(node, ast.ImportFrom)
                    and any(a.name in (name, "*") for a in node.names)
                ):
                    return f"{other}:{node.lineno} binds a copy of it at import time"
            problem = (
                _source_reads(other, tree, name, import_lines)
                if other in self.sources
                else _test_reads(other, tree, name)
            )
            if problem:
                return problem
        return ""


def _source_reads(file: str, tree: ast.Module, name: str, import_lines: Mapping[str, list[int]]) -> str:
    """A source file's reads must not have run at import (the baseline recorded what did)."""
    ran = set(import_lines.get(file, ()))
    for statement in _statements(tree):
        if any(_reads(node, name) for node in _own_nodes(statement)):
            if not ran:
                return f"{file} reads it and was not imported when the baseline recorded import time"
            hit = _header_lines(statement) & ran
            if hit:
                return f"{file}:{min(hit)} reads it and ran at import time"
    return ""


def _test_reads(file: str, tree: ast.Module, name: str) -> str:
    """A test-side file may read it in a test or a fixture (they run after the swap), not at
    import nor in a helper, which collection may call (``parametrize(..., helper())``)."""
    for node, functions in _with_enclosing_functions(tree):
        if not _reads(node, name):
            continue
        if not functions:
            return f"{file}:{node.lineno} reads it at import time"  # type: ignore[attr-defined]
        outer = functions[0]
        if not (
            outer.name.startswith("test") or any("fixture" in ast.unparse(d) for d in outer.decorator_list)
        ):
            return f"{file}:{node.lineno} reads it in {outer.name}, which collection may call"  # type: ignore[attr-defined]
    return ""


def _reads(node: ast.AST, name: str) -> bool:
    if isinstance(node, ast.Name):
        return node.id == name and isinstance(node.ctx, ast.Load)
    if isinstance(node, ast.Attribute):
        return node.attr == name and isinstance(node.ctx, ast.Load)
    return False


def _header_lines(statement: ast.stmt) -> set[int]:
    """The lines of a statement's own code: a compound statement's header, a simple one whole."""
    first = min([statement.lineno, *(d.lineno for d in getattr(statement, "decorator_list", []))])
    body = getattr(statement, "body", None)
    if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
        return set(range(first, max(first, body[0].lineno - 1) + 1))
    return set(range(first, (statement.end_lineno or statement.lineno) + 1))


def _with_enclosing_functions(
    tree: ast.AST, functions: tuple[ast.FunctionDef | ast.AsyncFunctionDef, ...] = ()
) -> Iterator[tuple[ast.AST, tuple[ast.FunctionDef | ast.AsyncFunctionDef, ...]]]:
    """Every node with the defs whose body holds it, outermost first (a def's header belongs to
    the scope around it)."""
    for child in ast.iter_child_nodes(tree):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield child, functions
            for header in (*child.decorator_list, child.args, *([child.returns] if child.returns else [])):
                yield from _with_enclosing_functions(header, functions)
                yield header, functions
            for statement in child.body:
                yield statement, (*functions, child)
                yield from _with_enclosing_functions(statement, (*functions, child))
        else:
            yield child, functions
            yield from _with_enclosing_functions(child, functions)


def _statements(tree: ast.Module) -> Iterator[ast.stmt]:
    """Every statement at any depth (function bodies included)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt):
            yield node


def _own_nodes(statement: ast.stmt) -> Iterator[ast.AST]:
    """The nodes of ``statement`` that are not inside a nested statement (its own expressions:
    a compound statement's header, a simple statement whole)."""
    stack: list[ast.AST] = list(ast.iter_child_nodes(statement))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.stmt):
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))
