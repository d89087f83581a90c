"""Class hierarchies read statically: is one class of an ``except``/``isinstance`` tuple a subclass
of another class the same tuple names?

Dropping ``APITimeoutError`` from ``except (APIConnectionError, APITimeoutError)`` changes nothing
when ``APITimeoutError`` derives from ``APIConnectionError``: the tuple still catches it. Such a
mutant is equivalent, and an operator that knows it reports it Ignored with the reason instead of
running it (a survivor nobody can kill). The hierarchy is read with libcst, never by importing
anything: classes defined in the target's own files (found from ``SourceContext.root``), in an
installed package's source (located with ``importlib.util.find_spec`` on its top-level name,
which imports nothing), and Python's builtin exceptions. Imports, re-exports (``from ._exceptions
import *`` in a package's ``__init__``), aliases (``Error = BaseError``) and relative imports are
followed. Whatever cannot be resolved (a C extension, a name bound twice, a conditional import, a
class with a metaclass of its own) proves nothing: the mutant is kept.
"""

from __future__ import annotations

import builtins
import importlib.machinery
import importlib.util
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import libcst as cst
from libcst.metadata import Scope

from mutagent.mutation.context import SourceContext
from mutagent.mutation.tree import resolve_scopes

_MAX_DEPTH = 40  # import chains and base-class chains longer than this prove nothing


@dataclass(frozen=True, eq=False)
class _Module:
    """One parsed module: its dotted name (``""`` when unknown) and tree. Only the context's own
    file has ``scopes`` (its classes may be named inside functions); another module's names are
    read from its top-level bindings, which is all a class statement's bases can use."""

    name: str
    is_package: bool
    tree: cst.Module
    scopes: Mapping[cst.CSTNode, Scope | None] | None = None


@dataclass(frozen=True)
class _Class:
    """A class statement of a module: what it derives from is read from its ``bases``."""

    module: _Module
    node: cst.ClassDef

    @property
    def canonical(self) -> str:
        return f"{self.module.name}.{self.node.name.value}"


@dataclass(frozen=True)
class _Builtin:
    cls: type

    @property
    def canonical(self) -> str:
        return f"builtins.{self.cls.__name__}"


@dataclass(frozen=True)
class _ModuleRef:
    name: str


_Ref = _Class | _Builtin | _ModuleRef


@lru_cache(maxsize=512)
def _parse(path: str, stamp: tuple[int, int]) -> cst.Module | None:
    """The tree of a source file (``stamp``: mtime and size, so an edit is read again)."""
    try:
        return cst.parse_module(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, cst.ParserSyntaxError, RecursionError):
        return None


def _module_name(root: Path, relative: str) -> tuple[str, bool, Path] | None:
    """``src/pkg/mod.py`` -> (``pkg.mod``, is a package, the directory ``pkg`` is imported from)."""
    path = Path(relative)
    if path.suffix != ".py":
        return None
    is_package = path.name == "__init__.py"
    parts = [] if is_package else [path.stem]
    directory = path.parent
    while directory != Path(".") and (root / directory / "__init__.py").is_file():
        parts.insert(0, directory.name)
        directory = directory.parent
    if not parts or not all(part.isidentifier() for part in parts):
        return None
    return ".".join(parts), is_package, root / directory


class Hierarchy:
    """Resolves the classes one file names; one per :class:`SourceContext` (see :func:`hierarchy_of`)."""

    def __init__(self, ctx: SourceContext) -> None:
        self.ctx = ctx
        self.search: list[Path] = []
        own = None
        root = ctx.root
        if root is not None:
            found = _module_name(Path(root), ctx.path)
            if found is not None:
                name, is_package, imported_from = found
                own = _Module(name, is_package, ctx.module, resolve_scopes(ctx.wrapper))
                self.search.append(imported_from)
            for directory in (Path(root), Path(root) / "src"):
                if directory not in self.search:
                    self.search.append(directory)
        self.own = own or _Module("", False, ctx.module, resolve_scopes(ctx.wrapper))
        self._modules: dict[str, _Module | None] = {}
        self._lookups: dict[tuple[str, str, bool], _Ref | None] = {}
        self._specs: dict[str, importlib.machinery.ModuleSpec | None] = {}

    # -- modules ------------------------------------------------------------------------
    def _locate(self, dotted: str) -> tuple[Path, bool] | None:
        """The source file of module ``dotted`` and whether it is a package, without importing:
        the target's own directories first (a run imports the target's copy), then the installed
        package ``find_spec`` finds for the top-level name (which imports no parent package)."""
        top, *rest = dotted.split(".")
        bases: list[Path] = [directory / top for directory in self.search]
        if top not in self._specs:
            self._specs[top] = _spec(top)
        spec = self._specs[top]
        if spec is not None and spec.submodule_search_locations:
            bases += [Path(location) for location in spec.submodule_search_locations]
        elif spec is not None and spec.origin and spec.origin.endswith(".py") and not rest:
            return Path(spec.origin), False
        for base in bases:
            path = base.joinpath(*rest)
            if (path / "__init__.py").is_file():
                return path / "__init__.py", True
            if path.with_suffix(".py").is_file():
                return path.with_suffix(".py"), False
        return None

    def _may_export(self, dotted: str, name: str) -> bool:
        """Whether ``from dotted import *`` can bind ``name``, read from the text before parsing:
        a module with ``__all__`` exports only the names it lists there, one without exports the
        public names it spells (a package's __init__ may star-import twenty modules)."""
        located = self._locate(dotted)
        if located is None or name.startswith("_"):
            return False
        try:
            text = located[0].read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return False
        if re.search(r"^__all__\s*[:+]?=", text, re.M):
            return re.search(rf"['\"]{re.escape(name)}['\"]", text) is not None
        return re.search(rf"\b{re.escape(name)}\b", text) is not None

    def _module(self, dotted: str) -> _Module | None:
        if dotted == self.own.name and dotted:
            return self.own
        if dotted not in self._modules:
            located = self._locate(dotted)
            module = None
            if located is not None:
                path, is_package = located
                try:
                    stat = path.stat()
                except OSError:
                    stat = None
                parsed = _parse(str(path), (stat.st_mtime_ns, stat.st_size)) if stat is not None else None
                if parsed is not None:
                    module = _Module(dotted, is_package, parsed)
            self._modules[dotted] = module
        return self._modules[dotted]

    # -- names --------------------------------------------------------------------------
    def _absolute(self, module: _Module, name: str) -> str | None:
        """``..errors.Timeout`` read in ``module`` -> ``pkg.errors.Timeout`` (None when unknown)."""
        level = len(name) - len(name.lstrip("."))
        if not level:
            return name
        if not module.name:
            return None
        package = module.name.split(".") if module.is_package else module.name.split(".")[:-1]
        if level - 1 > len(package) or (level - 1 == len(package) and not name.lstrip(".")):
            return None
        base = package[: len(package) - (level - 1)]
        rest = name.lstrip(".")
        return ".".join([*base, rest] if rest else base) or None

    def _resolve_dotted(self, dotted: str, depth: int) -> _Ref | None:
        if depth > _MAX_DEPTH:
            return None
        parts = dotted.split(".")
        if parts[0] == "builtins" and len(parts) == 2:
            return _builtin(parts[1])
        for cut in range(len(parts), 0, -1):
            module_name = ".".join(parts[:cut])
            if self._module(module_name) is None:
                continue
            ref: _Ref | None = _ModuleRef(module_name)
            for attribute in parts[cut:]:
                if not isinstance(ref, _ModuleRef):
                    return None  # a nested class: not followed
                ref = self._lookup(ref.name, attribute, depth + 1)
            return ref
        return None

    def _resolve_expr(self, module: _Module, expr: cst.BaseExpression, depth: int) -> _Ref | None:
        """The class (or module) a Name/Attribute of ``module`` refers to."""
        if isinstance(expr, cst.Subscript):  # ``Base[T]``
            expr = expr.value
        if not isinstance(expr, (cst.Name, cst.Attribute)) or depth > _MAX_DEPTH:
            return None
        if module.scopes is None:  # another module: its top-level bindings, then the builtins
            if isinstance(expr, cst.Name):
                return self._lookup(module.name, expr.value, depth + 1, builtin=True)
            owner = self._resolve_expr(module, expr.value, depth + 1)
            if isinstance(owner, _ModuleRef):
                return self._lookup(owner.name, expr.attr.value, depth + 1)
            return None
        scope = module.scopes.get(expr)
        names = {q.name for q in scope.get_qualified_names_for(expr)} if scope is not None else set()
        if len(names) > 1:
            return None  # bound differently on different paths
        if not names:
            return self._lookup(module.name, expr.value, depth + 1) if isinstance(expr, cst.Name) else None
        (name,) = names
        if name.startswith("builtins."):
            return _builtin(name.split(".", 1)[1])
        if "." not in name:  # a name bound in this module itself
            return self._lookup(module.name, name, depth + 1)
        absolute = self._absolute(module, name)
        return self._resolve_dotted(absolute, depth + 1) if absolute is not None else None

    def _lookup(self, module_name: str, name: str, depth: int, builtin: bool = False) -> _Ref | None:
        """What ``name`` is bound to at the top level of module ``module_name``; ``builtin``: a
        name the module does not bind is Python's builtin of that name (for a name used in it)."""
        key = (module_name, name, builtin)
        if key in self._lookups:
            return self._lookups[key]
        self._lookups[key] = None  # a cycle resolves to nothing
        module = self.own if module_name == self.own.name else self._module(module_name)
        found = (
            self._find(module, name, depth, builtin) if module is not None and depth <= _MAX_DEPTH else None
        )
        self._lookups[key] = found
        return found

    def _find(self, module: _Module, name: str, depth: int, builtin: bool = False) -> _Ref | None:
        bindings: list[_Ref | None] = []
        stars: list[str] = []
        for statement in _top_level(module.tree.body):
            if isinstance(statement, cst.ClassDef) and statement.name.value == name:
                bindings.append(_Class(module, statement))
            elif isinstance(statement, (cst.FunctionDef,)) and statement.name.value == name:
                bindings.append(None)
            elif isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    bindings += self._small_bindings(module, small, name, stars, depth)
        if len(bindings) > 1:
            return None  # bound more than once: which one holds is not known statically
        if bindings:
            return bindings[0]
        found = {}
        for star in stars:  # ``from ._exceptions import *``
            if not self._may_export(star, name):
                continue  # not parsed at all
            ref = self._lookup(star, name, depth + 1)
            if ref is not None:
                found[ref.canonical if not isinstance(ref, _ModuleRef) else ref.name] = ref
        if not found and builtin:
            return _builtin(name)
        return next(iter(found.values())) if len(found) == 1 else None

    def _small_bindings(
        self, module: _Module, small: cst.BaseSmallStatement, name: str, stars: list[str], depth: int
    ) -> list[_Ref | None]:
        bindings: list[_Ref | None] = []
        if isinstance(small, cst.ImportFrom):
            source = _dotted(small.module) if small.module is not None else ""
            source = self._absolute(module, "." * len(small.relative) + source)
            if isinstance(small.names, cst.ImportStar):
                if source is not None:
                    stars.append(source)
                return bindings
            for alias in small.names:
                bound = _alias_name(alias)
                if bound == name:
                    imported = _dotted(alias.name)
                    bindings.append(
                        self._resolve_dotted(f"{source}.{imported}", depth + 1)
                        if source is not None
                        else None
                    )
        elif isinstance(small, cst.Import):
            for alias in small.names:
                full = _dotted(alias.name)
                if alias.asname is not None and _alias_name(alias) == name:
                    bindings.append(_ModuleRef(full) if self._module(full) is not None else None)
                elif alias.asname is None and full.split(".")[0] == name:
                    bindings.append(_ModuleRef(name) if self._module(name) is not None else None)
        elif isinstance(small, cst.Assign):
            for target in small.targets:
                if isinstance(target.target, cst.Name) and target.target.value == name:
                    bindings.append(self._alias(module, name, small.value, depth))
                elif _binds(target.target, name):
                    bindings.append(None)
        elif isinstance(small, cst.AnnAssign) and small.value is not None:
            if isinstance(small.target, cst.Name) and small.target.value == name:
                bindings.append(self._alias(module, name, small.value, depth))
        return bindings

    def _alias(self, module: _Module, name: str, value: cst.BaseExpression, depth: int) -> _Ref | None:
        """``Error = BaseError`` (and ``TimeoutError = TimeoutError``, the builtin kept under its name)."""
        if isinstance(value, cst.Name) and value.value == name:
            return _builtin(name)
        return self._resolve_expr(module, value, depth + 1)

    # -- classes ------------------------------------------------------------------------
    def ancestors(self, ref: _Ref, depth: int = 0) -> set[str] | None:
        """Every class ``ref`` is a subclass of (itself included) that can be resolved, by canonical
        name; None when ``ref`` is no class, or a class of the chain has a metaclass of its own
        (``__instancecheck__`` could answer otherwise)."""
        if isinstance(ref, _Builtin):
            return {
                f"builtins.{c.__name__}" for c in ref.cls.__mro__ if getattr(builtins, c.__name__, None) is c
            }
        if not isinstance(ref, _Class) or depth > _MAX_DEPTH:
            return None
        if any(arg.keyword is not None and arg.keyword.value == "metaclass" for arg in ref.node.keywords):
            return None
        found = {ref.canonical}
        for arg in ref.node.bases:
            if arg.keyword is not None or arg.star:
                continue
            base = self._resolve_expr(ref.module, arg.value, depth + 1)
            if base is None or isinstance(base, _ModuleRef):
                continue  # a base that cannot be read: the others may still prove a relation
            above = self.ancestors(base, depth + 1)
            if above is None:
                return None  # a metaclass up the chain: nothing below it is trusted
            found |= above
        return found

    def resolve(self, expr: cst.BaseExpression) -> _Ref | None:
        """The class an expression of the context's own file names."""
        return self._resolve_expr(self.own, expr, 0)


def hierarchy_of(ctx: SourceContext) -> Hierarchy:
    """The file's resolver (cached on the context: modules and lookups are read once per file)."""
    return ctx.cached(Hierarchy, lambda: Hierarchy(ctx))


def subclass_kept(
    ctx: SourceContext, element: cst.BaseExpression, others: Sequence[cst.BaseExpression]
) -> str | None:
    """Why dropping ``element`` from a tuple of classes that also holds ``others`` changes
    nothing: one of ``others`` is ``element``'s class or a base class of it. None when that
    cannot be proven statically (then the mutant is a real one)."""
    hierarchy = hierarchy_of(ctx)
    own = hierarchy.resolve(element)
    mro = hierarchy.ancestors(own) if own is not None else None
    if not mro:
        return None
    for other in others:
        if other is element:
            continue
        base = hierarchy.resolve(other)
        if base is None or isinstance(base, _ModuleRef) or base.canonical not in mro:
            continue
        what, kept = ctx.code(element).strip(), ctx.code(other).strip()
        if base.canonical == own.canonical:  # type: ignore[union-attr]
            return f"{kept} names the same class as {what}, and stays in the tuple"
        return f"{what} is a subclass of {kept}, which stays in the tuple: it is still matched"
    return None


def _spec(top: str) -> importlib.machinery.ModuleSpec | None:
    """``find_spec`` of a top-level name: finders only, no package is imported."""
    try:
        return importlib.util.find_spec(top)
    except (ImportError, ValueError, AttributeError):
        return None


def _builtin(name: str) -> _Builtin | None:
    value = getattr(builtins, name, None)
    return _Builtin(value) if isinstance(value, type) else None


def _top_level(body: Sequence[cst.CSTNode]) -> Iterator[cst.CSTNode]:
    """Module-level statements, those of ``if``/``try``/``with`` blocks included (not defs')."""
    for statement in body:
        yield statement
        if isinstance(statement, (cst.If, cst.Try, cst.With, cst.TryStar)):
            blocks: list[cst.BaseSuite] = [statement.body]
            if isinstance(statement, cst.If) and isinstance(statement.orelse, cst.If):  # elif
                yield from _top_level([statement.orelse])
            elif isinstance(statement, cst.If) and statement.orelse is not None:
                blocks.append(statement.orelse.body)
            if isinstance(statement, (cst.Try, cst.TryStar)):
                blocks += [handler.body for handler in statement.handlers]
                blocks += [part.body for part in (statement.orelse, statement.finalbody) if part is not None]
            for block in blocks:
                if isinstance(block, cst.IndentedBlock):
                    yield from _top_level(block.body)


def _dotted(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""


def _alias_name(alias: cst.ImportAlias) -> str:
    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
        return alias.asname.name.value
    return _dotted(alias.name)


def _binds(target: cst.BaseExpression, name: str) -> bool:
    """``a, name = ...`` binds ``name`` too (to something this module does not spell out)."""
    if isinstance(target, (cst.Tuple, cst.List)):
        return any(_binds(element.value, name) for element in target.elements)
    return isinstance(target, cst.Name) and target.value == name
