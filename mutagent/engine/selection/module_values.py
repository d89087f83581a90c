"""Constant mutants applied by rebinding the live name instead of a fresh import.

``RETRYABLE_STATUSES = frozenset({408, 429})`` or ``MAX_TURNS = 11`` at module level, or
``retryable = False`` in a class body, run once at import. When the code that uses such a name
reads it at call time (``status in RETRYABLE_STATUSES`` in a function body, ``self.retryable``
in a method), setting the module's global (the class's attribute) to the mutated value in the
forked child is the same program as importing the mutated module again, for a fraction of the
cost. That holds only when nothing kept the old value at import time, so the rule is
conservative, and any doubt leaves the mutant to its fresh import:

* the mutant sits in the value of ``NAME = <value>`` (or ``NAME: T = <value>``) at module level,
  or of ``NAME = <value>`` directly in the body of an undecorated top-level class without
  keywords (a metaclass or ``__init_subclass__`` of a base, checked by the worker on the live
  class, may have consumed the attribute: enums, pydantic models, ORM columns);
* the mutated module is the original but for that value, and the value is pure
  (``names.bound_names``: literals and known side-effect-free constructors), reading only
  builtins and module globals bound once, above it (it is evaluated again in the child);
* ``NAME`` is bound once there, never declared ``global``, and is not a dunder;
* no line that reads ``NAME`` (a name or an attribute of that spelling, in any source file) ran
  at import time in the baseline, and every source file reading it was imported then (so that
  its import-time reads were recorded); no file of the tests reads it at import time
  (a ``parametrize`` over the constant) and no file binds a copy of it at import time
  (``from mod import NAME`` at module level, ``import *``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from mutagent.engine.selection.analysis import SourceMap
from mutagent.engine.selection.import_reads import ImportTime
from mutagent.engine.selection.names import Broad, bound_names, import_time_nodes, module_bindings
from mutagent.model import Location


@dataclass(frozen=True)
class ValueChange:
    """The live name one constant mutant rebinds, and the value it gets."""

    owner: str  # "" for a module global, else the name of the top-level class holding it
    name: str
    expression: str  # the mutated value's source, evaluated in the module's namespace


def value_change(
    file: str, smap: SourceMap, location: Location, mutated_source: str, import_time: ImportTime
) -> ValueChange | str:
    """The rebinding a constant mutant at ``location`` of ``file`` amounts to, or why only a
    fresh import applies it."""
    found = _assignment(smap, location)
    if isinstance(found, str):
        return found
    owner, path, statement, name = found
    try:
        mutated_tree = ast.parse(mutated_source)
    except SyntaxError:
        return "the mutated module does not parse"
    mutated = _statement_at(mutated_tree, path)
    reason = _only_value_differs(ast.parse(smap.source), path, mutated_tree, mutated)
    if reason:
        return reason
    assert mutated is not None and mutated.value is not None  # type: ignore[attr-defined]
    value: ast.expr = mutated.value  # type: ignore[attr-defined]
    reason = _pure_and_stable(smap.tree, owner, statement, mutated, mutated_tree)
    if reason:
        return reason
    reason = _bound_once(smap.tree, owner, name)
    if reason:
        return reason
    reason = import_time.reads(name, copies_matter=True)
    if reason:
        return reason
    return ValueChange(owner, name, ast.unparse(value))


def _assignment(smap: SourceMap, location: Location) -> tuple[str, tuple[int, ...], ast.stmt, str] | str:
    """(owner, path of body indexes, statement, name) of the assignment whose value holds the mutant."""
    tree = smap.tree
    for index, top in enumerate(tree.body):
        if not smap.contains(top, location):
            continue
        if isinstance(top, ast.ClassDef):
            if top.decorator_list or top.keywords:
                return "the class is decorated or has keywords (a metaclass may have read the value)"
            for inner, statement in enumerate(top.body):
                if smap.contains(statement, location):
                    if not isinstance(statement, ast.Assign):  # annotated: a field of a dataclass-like
                        return "not the value of a plain assignment in the class body"
                    return _checked(smap, location, top.name, (index, inner), statement)
            return "not the value of a plain assignment in the class body"
        if isinstance(top, (ast.Assign, ast.AnnAssign)):
            return _checked(smap, location, "", (index,), top)
        return "not the value of a module-level or class-level assignment"
    return "not the value of a module-level or class-level assignment"


def _checked(
    smap: SourceMap, location: Location, owner: str, path: tuple[int, ...], statement: ast.stmt
) -> tuple[str, tuple[int, ...], ast.stmt, str] | str:
    targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]  # type: ignore[attr-defined]
    value = statement.value  # type: ignore[attr-defined]
    if len(targets) != 1 or not isinstance(targets[0], ast.Name) or value is None:
        return "not an assignment of one value to one name"
    name = targets[0].id
    if name.startswith("__") and name.endswith("__"):
        return f"{name} is a dunder name"
    if not smap.contains(value, location):
        return "not in the assigned value"
    return owner, path, statement, name


def _statement_at(tree: ast.Module, path: tuple[int, ...]) -> ast.stmt | None:
    body: list[ast.stmt] = tree.body
    node: ast.stmt | None = None
    for index in path:
        if index >= len(body):
            return None
        node = body[index]
        body = getattr(node, "body", [])
    return node


def _only_value_differs(
    tree: ast.Module, path: tuple[int, ...], mutated_tree: ast.Module, mutated: ast.stmt | None
) -> str:
    """Empty when the modules are the same but for the value at ``path`` (both trees are fresh
    parses: their values are blanked here)."""
    original = _statement_at(tree, path)
    if mutated is None or original is None or type(mutated) is not type(original):
        return "the mutant changes more than the assigned value"
    kept = mutated.value  # type: ignore[attr-defined]
    original.value = ast.Constant(None)  # type: ignore[attr-defined]
    mutated.value = ast.Constant(None)  # type: ignore[attr-defined]
    same = ast.dump(tree) == ast.dump(mutated_tree)
    mutated.value = kept  # type: ignore[attr-defined]
    return "" if same else "the mutant changes more than the assigned value"


def _pure_and_stable(
    tree: ast.Module, owner: str, statement: ast.stmt, mutated: ast.stmt, mutated_tree: ast.Module
) -> str:
    """Empty when evaluating the mutated value again later gives what the import would have."""
    try:
        names = bound_names(mutated, module_bindings(mutated_tree))
    except Broad as exc:
        return str(exc)
    if len(names) != 1:
        return "the value binds names of its own"
    once = _top_level_binding_lines(tree)
    class_names = _class_body_names(tree, owner) if owner else set()
    value: ast.expr = mutated.value  # type: ignore[attr-defined]
    for node in ast.walk(value):
        if isinstance(node, ast.Lambda | ast.comprehension):
            return "the value holds a lambda or a comprehension"
        if isinstance(node, ast.Name):
            if node.id in class_names:
                return f"the value reads {node.id} of the class body"
            lines = once.get(node.id)
            if lines is None:
                continue  # a builtin
            if len(lines) != 1 or lines[0] >= statement.lineno:
                return f"the value reads {node.id}, which is bound more than once or later"
    return ""


def _bound_once(tree: ast.Module, owner: str, name: str) -> str:
    if any(isinstance(node, ast.Global) and name in node.names for node in ast.walk(tree)):
        return f"{name} is declared global in a function"
    if owner:
        count = sum(1 for _ in _bindings([s for s in tree.body if _is_class(s, owner)][0].body, name))
    else:
        count = len(_top_level_binding_lines(tree).get(name, []))
    return "" if count == 1 else f"{name} is bound {count} times"


# --- small tree helpers -----------------------------------------------------------------------


def _is_class(statement: ast.stmt, name: str) -> bool:
    return isinstance(statement, ast.ClassDef) and statement.name == name


def _bindings(body: list[ast.stmt], name: str) -> Iterator[int]:
    """Lines binding ``name`` in a module or class body (outside function bodies)."""
    for node in import_time_nodes(ast.Module(body=body, type_ignores=[])):
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            yield node.lineno
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            yield node.lineno
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if (alias.asname or alias.name.split(".")[0]) == name:
                    yield node.lineno


def _top_level_binding_lines(tree: ast.Module) -> dict[str, list[int]]:
    lines: dict[str, list[int]] = {}
    for node in import_time_nodes(tree, into_classes=False):
        names: list[str] = []
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names = [node.id]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names = [node.name]
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [alias.asname or alias.name.split(".")[0] for alias in node.names]
        for bound in names:
            lines.setdefault(bound, []).append(node.lineno)  # type: ignore[attr-defined]
    return lines


def _class_body_names(tree: ast.Module, owner: str) -> set[str]:
    body = next(s for s in tree.body if _is_class(s, owner)).body  # type: ignore[attr-defined]
    names: set[str] = set()
    for node in import_time_nodes(ast.Module(body=body, type_ignores=[])):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
    return names
