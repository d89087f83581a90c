"""Which tests can observe a module-level mutant: the narrow selection for import-time constants.

A mutant such as ``RETRYABLE_STATUSES = frozenset({408, 429})`` runs at import, so every test
that imports the module runs it, yet only code that *reads* the constant can notice. When the
mutated top-level statement only binds names to a pure value, the mutant is observable through
those names alone, exactly as if the body of every function reading them had been mutated. So the
engine selects:

* the tests covering any line of a function (or method, lambda) that reads a bound name, found
  with libcst's scope analysis (local names that shadow it do not count), following re-bindings
  (``from .retry import NAME`` in another module, ``OTHER = NAME + 1`` at module level);
* every test depending on a test file, conftest or helper whose text names the name at all
  (identifier, attribute or string: ``monkeypatch.setattr("pkg.mod.NAME", ...)``);
* the tests covering the mutated line itself (a test that imports the module lazily runs it).

It falls back to the broad selection (every test of every module importing this one) whenever
the analysis cannot see every reader, with the reason:

* the statement is not ``name = <pure value>`` (a call other than a known pure constructor could
  change state beyond the names: ``register(...)``, ``logging.basicConfig(...)``), in the
  original or in the mutated code;
* a name is read at import time other than by another such binding (a class body, a decorator,
  a default of a method, a module-level call), or by a function that ran outside any test in
  the baseline (a helper called at import or collection), or the baseline did not record that;
* dynamic access: ``import *``, ``globals()``/``vars()``/``eval``/``exec`` or a module
  ``__getattr__`` in the module, or ``getattr``-style access in a module importing it as an
  object, or a module-level use of the name in another source file that is not an import;
* nothing at all reads the names (then only an import failure is observable, and every
  importer sees that).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mutagent.engine.readers import FileScopes, Place

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


class Broad(Exception):
    """The analysis cannot see every reader: use the broad selection (the message says why)."""


@dataclass
class Narrowed:
    """Where the readers of a mutated module-level statement are."""

    names_bound: frozenset[str] = frozenset()  # by the mutated statement itself
    names: set[str] = field(default_factory=set)  # every name followed (bound, re-bound)
    lines: dict[str, set[int]] = field(default_factory=dict)  # file -> lines; covering tests selected
    files: set[str] = field(default_factory=set)  # non-source files naming a name: all their tests
    modules: set[str] = field(default_factory=set)  # source files binding a followed name

    def add_lines(self, file: str, lines: Iterable[int]) -> None:
        self.lines.setdefault(file, set()).update(lines)


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


def _imports_module_object(tree: ast.Module, module: str, importer: str, is_package: bool) -> bool:
    """Whether a file binds ``module`` itself (``import a.b``, ``from a import b``), which lets it
    read the module's names by computed attribute access."""
    from mutagent.engine.imports import _resolve_relative

    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(
            alias.name == module or module.startswith(alias.name + ".") for alias in node.names
        ):
            return True
        if isinstance(node, ast.ImportFrom):
            base = _resolve_relative(node.module, node.level, importer, is_package)
            if base and any(f"{base}.{alias.name}" == module for alias in node.names):
                return True
    return False


class Narrower:
    """Narrow test selections for the module-level mutants of one run (see the module docstring).

    ``sources`` are the mutable source files, ``files`` every source and test file, ``module_of``
    their module names, ``import_lines`` the baseline's lines run outside any test (``None``
    when not recorded: then nothing is narrowed).
    """

    def __init__(
        self,
        sources: dict[str, str],
        files: dict[str, str],
        module_of: dict[str, str],
        import_lines: dict[str, list[int]] | None,
    ) -> None:
        self.sources = sources
        self.files = files
        self.module_of = module_of
        self.import_lines = {f: set(lines) for f, lines in (import_lines or {}).items()}
        self.recorded = import_lines is not None
        self._trees: dict[str, ast.Module | None] = {}
        self._scopes: dict[str, FileScopes] = {}
        self._words: dict[str, set[str]] | None = None
        self._analyses: dict[tuple[str, int], Narrowed | Broad] = {}
        self._dynamic_cache: dict[tuple[str, bool], str | None] = {}

    def tree(self, file: str) -> ast.Module | None:
        if file not in self._trees:
            try:
                self._trees[file] = ast.parse(self.files[file])
            except SyntaxError:
                self._trees[file] = None
        return self._trees[file]

    def scopes(self, file: str) -> FileScopes:
        """The file's libcst scopes (libcst is imported on first use only)."""
        if file not in self._scopes:
            from mutagent.engine.readers import FileScopes

            self._scopes[file] = FileScopes(file, self.files[file])
        return self._scopes[file]

    def files_naming(self, word: str) -> set[str]:
        if self._words is None:
            self._words = word_index(self.files)
        return self._words.get(word, set())

    # --- the analysis ------------------------------------------------------------------------
    def narrow(self, file: str, line: int, mutated_source: str) -> Narrowed:
        """The readers of the top-level statement at ``line`` of ``file``; ``Broad`` when the
        analysis cannot see them all."""
        if not self.recorded:
            raise Broad("the baseline did not record which lines run at import")
        found = self._analysed(file, line)
        mutated = ast.parse(mutated_source)
        if bound_names(top_statement(mutated, line), module_bindings(mutated)) != found.names_bound:
            raise Broad("the mutant changes which names the statement binds")
        return found

    def _analysed(self, file: str, line: int) -> Narrowed:
        """The (cached) analysis of the unmutated statement: every mutant of it shares it."""
        key = (file, line)
        if key not in self._analyses:
            try:
                self._analyses[key] = self._analyse(file, line)
            except Broad as exc:
                self._analyses[key] = exc
        found = self._analyses[key]
        if isinstance(found, Broad):
            raise found
        return found

    def _analyse(self, file: str, line: int) -> Narrowed:
        tree = self.tree(file)
        if tree is None:
            raise Broad(f"{file} does not parse")
        names = bound_names(top_statement(tree, line), module_bindings(tree))
        for other in self.files:
            problem = self._dynamic(other, defining=other == file)
            if problem:
                raise Broad(f"{other}: {problem}")
        result = Narrowed(names_bound=frozenset(names))
        pending = [(file, name) for name in sorted(names)]
        done: set[tuple[str, str]] = set()
        while pending:
            where, name = pending.pop()
            if (where, name) in done:
                continue
            done.add((where, name))
            result.names.add(name)
            result.modules.add(where)
            for place in self.scopes(where).reads(name):
                pending.extend((where, bound) for bound in self._follow(where, place, result))
            pending.extend(self._elsewhere(where, name, result))
        for module_file in sorted(result.modules):
            self._reflection(module_file, result)
        if not result.lines and not result.files:
            raise Broad(f"nothing reads {', '.join(sorted(names))}")
        return result

    def _dynamic(self, file: str, defining: bool) -> str | None:
        key = (file, defining)
        if key not in self._dynamic_cache:
            tree = self.tree(file)
            if tree is None:
                self._dynamic_cache[key] = "does not parse"
            else:
                self._dynamic_cache[key] = dynamic_access(tree) if defining else _star_import(tree)
        return self._dynamic_cache[key]

    def _follow(self, file: str, place: Place, result: Narrowed) -> set[str]:
        """Record one placed read; returns the names a module-level binding re-binds."""
        kind = place.kind
        if kind == "broad":
            raise Broad(place.why)
        if kind == "lines":
            lines = place.lines
            ran_at_import = lines & self.import_lines.get(file, set())
            if ran_at_import:
                raise Broad(f"{file}:{min(ran_at_import)} reads it and ran outside any test (import time)")
            result.add_lines(file, lines)
            return set()
        if kind == "binding":
            tree = self.tree(file)
            assert tree is not None
            try:
                return bound_names(top_statement(tree, place.line), module_bindings(tree))
            except Broad as exc:
                raise Broad(f"{file}:{place.line} reads it at import time ({exc})") from None
        return set()

    def _elsewhere(self, defining: str, name: str, result: Narrowed) -> list[tuple[str, str]]:
        """Every file naming ``name`` (bound at module level of ``defining``): test-side files
        select their tests; in source files imports of it are returned to be followed, attribute
        and string uses (``mod.NAME``, ``getattr(mod, "NAME")``) are placed."""
        follow = []
        for other in sorted(self.files_naming(name)):
            if other not in self.sources:
                result.files.add(other)
                continue
            scopes = self.scopes(other)
            if other != defining:
                for alias, place in scopes.imports_of(name):
                    if place.kind != "binding":  # imported inside a function (read there) or a class
                        self._follow(other, place, result)
                    else:
                        follow.append((other, alias))
            for place in scopes.mentions(name):
                if place.kind == "binding":
                    raise Broad(f"{other}:{place.line} uses {name} at import time")
                self._follow(other, place, result)
        return follow

    def _reflection(self, file: str, result: Narrowed) -> None:
        """Files importing ``file``'s module as an object and reading attributes by computed
        name: a test-side file selects its tests, a source file makes the selection broad."""
        module = self.module_of.get(file)
        if not module:
            return
        for other in self.files:
            if other == file:
                continue
            tree = self.tree(other)
            importer, package = self.module_of.get(other, ""), other.endswith("__init__.py")
            if tree is None or not reflects(tree):
                continue
            if not _imports_module_object(tree, module, importer, package):
                continue
            if other in self.sources:
                raise Broad(f"{other} reads attributes of {module} by computed name")
            result.files.add(other)


def _star_import(tree: ast.Module) -> str | None:
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names):
            return "it uses `import *`"
    return None
