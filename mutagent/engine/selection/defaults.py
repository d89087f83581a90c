"""Default-value mutants applied by swapping ``__defaults__`` instead of a fresh import.

A def's default values are evaluated once, when the def statement runs: at import time for a
module-level def or a method. A mutant that changes only such a value (``timeout: float = 60.0``
→ ``61.0``, ``max_retries=3`` → ``4``) leaves every code object as it was, so a warm worker can
apply it to the live function without importing anything again: Python reads ``__defaults__``
and ``__kwdefaults__`` at every call. A fresh import costs a process or a zygote child and a
re-import of the module (hundreds of milliseconds); this costs an assignment.

That is only the same program as the mutated module when nothing kept the old value at import
time, so the rule is conservative, and any doubt leaves the mutant to its fresh import:

* the mutant sits inside a default value of a def that runs at import time (no enclosing
  function), and the mutated def differs from the original in that default's value only;
* the new value is a literal (``ast.literal_eval``): it is the same whenever it is evaluated,
  and it can cross to the worker (``marshal``);
* the def has no decorator other than ``staticmethod``, ``classmethod``, ``property`` (with its
  ``setter``/``getter``/``deleter``) and ``abstractmethod``: any other decorator may have read the
  signature when it wrapped the function (pydantic's ``validate_call``, click options, FastAPI
  routes) and would keep the old default;
* no file of the target or of its tests uses the function's name at import time (at module
  level or in a class body) apart from its own def: registering a handler there
  (``router.add_api_route("/", handler)``) may read its signature then.

Unchanged defaults keep their live objects (a sentinel default stays the same object).
"""

from __future__ import annotations

import ast
import marshal
from dataclasses import dataclass
from typing import Any

from mutagent.engine.selection.analysis import FUNCTIONS, SourceMap, first_line
from mutagent.engine.selection.import_reads import ImportTime
from mutagent.engine.selection.names import import_time_nodes
from mutagent.model import Location

TRANSPARENT_DECORATORS = frozenset({"staticmethod", "classmethod", "property", "abstractmethod"})
PROPERTY_PARTS = frozenset({"setter", "getter", "deleter", "abstractmethod"})

DefName = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class DefaultsChange:
    """The default values one mutant changes in one def run at import time."""

    name: str  # the def's name (``co_name`` of its code)
    firstlineno: int  # ``co_firstlineno`` of its code (the first decorator's line)
    positional: tuple[tuple[int, Any], ...]  # (index into ``__defaults__``, new value)
    keyword: tuple[tuple[str, Any], ...]  # (keyword-only parameter, new value)

    def values_wire(self) -> bytes:
        """The new values as they cross to the worker (``marshal``: literals only)."""
        return marshal.dumps((list(map(list, self.positional)), list(map(list, self.keyword))))


def defaults_change(
    smap: SourceMap, location: Location, mutated_source: str, import_time: ImportTime
) -> DefaultsChange | str:
    """The change a default-value mutant at ``location`` makes, or why it needs a fresh import."""
    chain = smap.chain(location)
    found = _enclosing_header_default(smap, chain, location)
    if isinstance(found, str):
        return found
    original = found
    try:
        mutated_tree = ast.parse(mutated_source)
    except SyntaxError:
        return "the mutated module does not parse"
    mutated = _def_at(mutated_tree, original.name, original.lineno)
    if mutated is None:
        return f"no def {original.name} at line {original.lineno} in the mutated module"
    if len(mutated.args.defaults) != len(original.args.defaults) or len(mutated.args.kw_defaults) != len(
        original.args.kw_defaults
    ):
        return "the mutant changes which parameters have defaults"
    positional, keyword = _changed_values(original.args, mutated.args)
    if isinstance(positional, str):
        return positional
    if not positional and not keyword:
        return "no default value changes"
    reason = _only_values_differ(ast.parse(smap.source), original, mutated_tree, mutated)  # blanks them
    if reason:
        return reason
    decorator = next((d for d in original.decorator_list if not _transparent(d)), None)
    if decorator is not None:
        return f"decorated with {ast.unparse(decorator)}, which may have read the old default"
    reason = import_time.reads(original.name, copies_matter=False)
    if reason:
        return reason
    return DefaultsChange(original.name, first_line(original), tuple(positional), tuple(keyword))


def _enclosing_header_default(smap: SourceMap, chain: list[ast.AST], location: Location) -> DefName | str:
    """The import-time def whose default value holds the mutant, or why there is none (the
    chain stops at the def: ``ast.arguments`` has no position)."""
    outer = next((node for node in chain if isinstance(node, FUNCTIONS)), None)
    if isinstance(outer, (ast.FunctionDef, ast.AsyncFunctionDef)):
        defaults = [d for d in (*outer.args.defaults, *outer.args.kw_defaults) if d is not None]
        if any(smap.contains(d, location) for d in defaults):
            return outer
    return "not in a default value of a def run at import time"


def _def_at(tree: ast.Module, name: str, lineno: int) -> DefName | None:
    found = [
        node
        for node in import_time_nodes(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and (node.name, node.lineno) == (name, lineno)
    ]
    return found[0] if len(found) == 1 else None


def _only_values_differ(
    tree: ast.Module, original: DefName, mutated_tree: ast.Module, mutated: DefName
) -> str:
    """Empty when the two modules are the same but for the default values of this def."""
    twin = _def_at(tree, original.name, original.lineno)
    if twin is None:
        return "the def is not unique"
    for node in (twin, mutated):
        node.args.defaults = [ast.Constant(None) for _ in node.args.defaults]
        node.args.kw_defaults = [None if d is None else ast.Constant(None) for d in node.args.kw_defaults]
    if ast.dump(tree) != ast.dump(mutated_tree):
        return "the mutant changes more than a default value"
    return ""


def _changed_values(
    original: ast.arguments, mutated: ast.arguments
) -> tuple[list[tuple[int, Any]] | str, list[tuple[str, Any]]]:
    positional: list[tuple[int, Any]] = []
    keyword: list[tuple[str, Any]] = []
    for index, (old, new) in enumerate(zip(original.defaults, mutated.defaults, strict=True)):
        if ast.dump(old) != ast.dump(new):
            value = _literal(new)
            if isinstance(value, _NotLiteral):
                return value.reason, []
            positional.append((index, value))
    for arg, old_kw, new_kw in zip(
        original.kwonlyargs, original.kw_defaults, mutated.kw_defaults, strict=True
    ):
        if old_kw is not None and new_kw is not None and ast.dump(old_kw) != ast.dump(new_kw):
            value = _literal(new_kw)
            if isinstance(value, _NotLiteral):
                return value.reason, []
            keyword.append((arg.arg, value))
    return positional, keyword


@dataclass(frozen=True)
class _NotLiteral:
    reason: str


def _literal(node: ast.expr) -> Any:
    try:
        value = ast.literal_eval(node)
        marshal.dumps(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _NotLiteral(f"the new default {ast.unparse(node)} is not a literal")
    return value


def _transparent(decorator: ast.expr) -> bool:
    if isinstance(decorator, ast.Name):
        return decorator.id in TRANSPARENT_DECORATORS
    if isinstance(decorator, ast.Attribute):
        return decorator.attr in PROPERTY_PARTS or decorator.attr in TRANSPARENT_DECORATORS
    return False
