"""Static facts about names in Python files, for the narrow selection (``narrow``).

What a top-level statement binds and whether its value is pure (only known side-effect-free
constructors are called), which files name an identifier at all, and which files read names
dynamically (``import *``, ``globals()``, ``getattr(module, computed)``). All ``ast`` and
``tokenize``: cheap enough to run on every file of a target.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator, Mapping

from mutagent.engine.selection.imports import resolve_relative

PURE_CALLS = frozenset(
    {f"builtins.{name}" for name in (
        "frozenset", "set", "tuple", "list", "dict", "int", "float", "str", "bytes", "bool", "complex",
        "range", "len", "sorted", "min", "max", "abs", "round", "sum", "any", "all", "reversed", "object",
    )}
    | {"re.compile", "types.MappingProxyType", "datetime.timedelta", "decimal.Decimal", "fractions.Fraction"}
)  # fmt: skip
DYNAMIC_NAMES = frozenset(
    {"globals", "vars", "locals", "eval", "exec", "__import__", "__getattr__", "__dir__"}
)
REFLECTION = frozenset({"getattr", "setattr", "hasattr", "delattr", "vars", "__dict__", "dir", "getmembers"})
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class ParsedFiles:
    """Each file's ``ast`` tree, parsed once (``None`` when it does not parse): shared by the
    static analyses of one run (``narrow``, ``import_reads``), which read the same files."""

    def __init__(self, files: Mapping[str, str]) -> None:
        self.files = files
        self._trees: dict[str, ast.Module | None] = {}

    def __call__(self, file: str) -> ast.Module | None:
        if file not in self._trees:
            try:
                self._trees[file] = ast.parse(self.files[file])
            except SyntaxError:
                self._trees[file] = None
        return self._trees[file]


class Broad(Exception):
    """The analysis cannot see every reader: use the broad selection (the message says why)."""


def word_index(files: dict[str, str]) -> dict[str, set[str]]:
    """``identifier -> files`` for every identifier, attribute name or word inside a string."""
    index: dict[str, set[str]] = {}
    for name, text in files.items():
        words: set[str] = set()
        try:
            for token in tokenize.generate_tokens(io.StringIO(text).readline):
                if token.type == tokenize.NAME:
                    words.add(token.string)
                elif token.type == tokenize.STRING or token.type == getattr(tokenize, "FSTRING_MIDDLE", -1):
                    words.update(WORD.findall(token.string))
        except (tokenize.TokenError, SyntaxError):
            words.update(WORD.findall(text))  # cannot tokenize: every word counts
        for word in words:
            index.setdefault(word, set()).add(name)
    return index


def module_bindings(tree: ast.Module) -> dict[str, str | None]:
    """Top-level names -> what they are bound to (``"re"`` for ``import re``, ``None`` for
    anything that is not an import): enough to resolve the calls of a constant's value."""
    bound: dict[str, str | None] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                bound[alias.asname or top] = alias.name if alias.asname else top
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound[node.id] = None
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound[node.name] = None
    return bound


def _qualified(func: ast.expr, bound: dict[str, str | None]) -> str | None:
    parts: list[str] = []
    while isinstance(func, ast.Attribute):
        parts.insert(0, func.attr)
        func = func.value
    if not isinstance(func, ast.Name):
        return None
    if func.id in bound:
        root = bound[func.id]
        return None if root is None else ".".join([root, *parts])
    return ".".join(["builtins", func.id, *parts])


def bound_names(statement: ast.stmt, bound: dict[str, str | None]) -> set[str]:
    """Names a ``name = <pure value>`` statement binds; ``Broad`` for any other statement."""
    if isinstance(statement, ast.Assign):
        targets, value = statement.targets, statement.value
    elif isinstance(statement, (ast.AnnAssign, ast.AugAssign)) and statement.value is not None:
        targets, value = [statement.target], statement.value
    else:
        raise Broad(f"line {statement.lineno} is not a plain assignment")
    names: set[str] = set()
    for target in targets:
        for node in ast.walk(target):
            if isinstance(node, ast.Name):
                names.add(node.id)
            elif not isinstance(node, (ast.Tuple, ast.List, ast.Starred, ast.expr_context)):
                raise Broad(f"line {statement.lineno} assigns to more than names")
    for node in ast.walk(value):
        if isinstance(node, ast.NamedExpr):
            names.add(node.target.id)
        elif isinstance(node, ast.Call) and _qualified(node.func, bound) not in PURE_CALLS:
            raise Broad(f"line {statement.lineno} calls {ast.unparse(node.func)} at import time")
        elif isinstance(node, (ast.Await, ast.Yield, ast.YieldFrom)):
            raise Broad(f"line {statement.lineno} is not a plain value")
    return names


def top_statement(tree: ast.Module, line: int) -> ast.stmt:
    for statement in tree.body:
        if statement.lineno == line:
            return statement
    raise Broad(f"no top-level statement starts at line {line}")


def dynamic_access(tree: ast.Module) -> str | None:
    """Why names of this module may be read without naming them, if they may."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names):
            return "it uses `import *`"
        if isinstance(node, ast.Name) and node.id in DYNAMIC_NAMES:
            return f"it uses {node.id}"
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in DYNAMIC_NAMES:
            return f"it defines {node.name}"
    return None


def reflects(tree: ast.Module) -> bool:
    """Whether a file reads attributes by computed name (``getattr(mod, name)``, ``vars(mod)``)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in REFLECTION:
            if len(node.args) < 2 or not isinstance(node.args[1], ast.Constant):
                return True
        if isinstance(node, ast.Attribute) and node.attr in REFLECTION:
            return True
    return False


def imports_module_object(tree: ast.Module, module: str, importer: str, is_package: bool) -> bool:
    """Whether a file binds ``module`` itself (``import a.b``, ``from a import b``), which lets it
    read the module's names by computed attribute access."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(
            alias.name == module or module.startswith(alias.name + ".") for alias in node.names
        ):
            return True
        if isinstance(node, ast.ImportFrom):
            base = resolve_relative(node.module, node.level, importer, is_package)
            if base and any(f"{base}.{alias.name}" == module for alias in node.names):
                return True
    return False


def star_import(tree: ast.Module) -> str | None:
    """Why a file's names may come from anywhere: an ``import *`` (then reads are invisible)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names):
            return "it uses `import *`"
    return None


def import_time_nodes(tree: ast.AST, into_classes: bool = True) -> Iterator[ast.AST]:
    """Every node that runs when the module is imported: all but function and lambda bodies (a
    def's decorators and defaults run then; the def node itself comes too). ``into_classes=False``
    also leaves out class bodies (the module's own scope only)."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            if not isinstance(node, ast.Lambda):
                yield node
                stack.extend(node.decorator_list)
            stack.extend(node.args.defaults)
            stack.extend(d for d in node.args.kw_defaults if d is not None)
            continue
        if isinstance(node, ast.ClassDef) and not into_classes and node is not tree:
            yield node
            stack.extend([*node.decorator_list, *node.bases, *(k.value for k in node.keywords)])
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))
