"""Which tests can observe a module-level mutant: the narrow selection for import-time constants.

A mutant such as ``RETRYABLE_STATUSES = frozenset({408, 429})`` runs at import, so every test
that imports the module runs it, yet only code that *reads* the constant can notice. When the
mutated top-level statement only binds names to a pure value, the mutant is observable through
those names alone, exactly as if the body of every function reading them had been mutated. So the
engine selects:

* the tests covering any line of a function (or method, lambda) that reads a bound name, found
  with libcst's scope analysis (local names that shadow it do not count), following re-bindings
  (``from .retry import NAME`` in another module, ``OTHER = NAME + 1`` at module level); a
  default argument ``def f(n=NAME)`` counts as a read by ``f``'s body, which uses the value;
* every test depending on a test file, conftest or helper whose text names the name at all
  (identifier, attribute or string: ``monkeypatch.setattr("pkg.mod.NAME", ...)``);
* the tests covering the mutated line itself (a test that imports the module lazily runs it).

It falls back to the broad selection (every test of every module importing this one) whenever
the analysis cannot see every reader, with the reason:

* the statement is not ``name = <pure value>`` (a call other than a known pure constructor could
  change state beyond the names: ``register(...)``, ``logging.basicConfig(...)``), in the
  original or in the mutated code;
* a name is read at import time other than by another such binding or a default argument (a
  class body, a decorator, an evaluated annotation, a module-level call), or by a function that
  ran outside any test in the baseline (a helper called at import or collection), or the
  baseline did not record that;
* dynamic access: ``import *``, ``globals()``/``vars()``/``eval``/``exec`` or a module
  ``__getattr__`` in the module, or ``getattr``-style access in a module importing it as an
  object, or a module-level use of the name in another source file that is not an import;
* nothing at all reads the names (then only an import failure is observable, and every
  importer sees that).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mutagent.engine.selection.names import (
    Broad,
    ParsedFiles,
    bound_names,
    dynamic_access,
    imports_module_object,
    module_bindings,
    reflects,
    star_import,
    top_statement,
    word_index,
)

if TYPE_CHECKING:
    from mutagent.engine.selection.readers import FileScopes, Place

__all__ = ["Broad", "Narrowed", "Narrower"]


@dataclass
class Narrowed:
    """Where the readers of a mutated module-level statement are."""

    names_bound: frozenset[str] = frozenset()  # by the mutated statement itself
    names: set[str] = field(default_factory=set)  # every name followed (bound, re-bound)
    lines: dict[str, set[int]] = field(default_factory=dict)  # file -> lines; covering tests selected
    files: set[str] = field(default_factory=set)  # non-source files naming a name: all their tests
    modules: set[str] = field(default_factory=set)  # source files binding a followed name
    # every placed read in the order the analysis met it: checked against the baseline's
    # import-time lines only when a mutant is narrowed (``Narrower.narrow``), so that the analysis
    # itself needs no baseline and can run while the workers start
    placed: list[tuple[str, frozenset[int]]] = field(default_factory=list)

    def add_lines(self, file: str, lines: Iterable[int]) -> None:
        self.lines.setdefault(file, set()).update(lines)


@dataclass
class _Analysis:
    """The cached analysis of one statement: what it found before it ended, and ``Broad`` if it
    could not see every reader."""

    found: Narrowed
    broad: Broad | None = None


class Narrower:
    """Narrow test selections for the module-level mutants of one run (see the module docstring).

    ``sources`` are the mutable source files, ``files`` every source and test file, ``module_of``
    their module names, ``import_lines`` the baseline's lines run outside any test (``None``
    when not recorded: then nothing is narrowed).

    The analysis of a statement depends on the texts only (``analyse_ahead`` runs it before the
    baseline exists); the import-time lines are applied when a mutant is narrowed, in the order
    the analysis met the reads, so the result and its reason are those of one pass with them.
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
        self.parsed = ParsedFiles(files)
        self._scopes: dict[str, FileScopes] = {}
        self._words: dict[str, set[str]] | None = None
        self._analyses: dict[tuple[str, int], _Analysis] = {}
        self._dynamic_cache: dict[tuple[str, bool], str | None] = {}

    def with_import_lines(self, import_lines: dict[str, list[int]] | None) -> Narrower:
        """This narrower (its parsed files and analyses, shared) for a baseline's import-time lines."""
        other = Narrower(self.sources, self.files, self.module_of, import_lines)
        other.parsed, other._scopes, other._analyses = self.parsed, self._scopes, self._analyses
        other._dynamic_cache = self._dynamic_cache
        other._words = self._words
        return other

    def analyse_ahead(self, statements: Iterable[tuple[str, int]]) -> None:
        """Analyse the top-level statements at ``(file, line)`` now (what ``narrow`` will need)."""
        for file, line in statements:
            self._analysed(file, line)

    def tree(self, file: str) -> ast.Module | None:
        return self.parsed(file)

    def scopes(self, file: str) -> FileScopes:
        """The file's libcst scopes (libcst is imported on first use only)."""
        if file not in self._scopes:
            from mutagent.engine.selection.readers import FileScopes

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
        analysis = self._analysed(file, line)
        found = analysis.found
        for where, lines in found.placed:
            ran_at_import = lines & self.import_lines.get(where, set())
            if ran_at_import:
                raise Broad(f"{where}:{min(ran_at_import)} reads it and ran outside any test (import time)")
        if analysis.broad is not None:
            raise analysis.broad
        mutated = ast.parse(mutated_source)
        if bound_names(top_statement(mutated, line), module_bindings(mutated)) != found.names_bound:
            raise Broad("the mutant changes which names the statement binds")
        return found

    def _analysed(self, file: str, line: int) -> _Analysis:
        """The (cached) analysis of the unmutated statement: every mutant of it shares it."""
        key = (file, line)
        if key not in self._analyses:
            analysis = _Analysis(Narrowed())
            try:
                self._analyse(file, line, analysis)
            except Broad as exc:
                analysis.broad = exc
            self._analyses[key] = analysis
        return self._analyses[key]

    def _analyse(self, file: str, line: int, analysis: _Analysis) -> None:
        tree = self.tree(file)
        if tree is None:
            raise Broad(f"{file} does not parse")
        names = bound_names(top_statement(tree, line), module_bindings(tree))
        for other in self.files:
            problem = self._dynamic(other, defining=other == file)
            if problem:
                raise Broad(f"{other}: {problem}")
        result = analysis.found = Narrowed(names_bound=frozenset(names))
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
            problem = self._dynamic(module_file, defining=True)  # re-binding modules too
            if problem:
                raise Broad(f"{module_file}: {problem}")
            self._reflection(module_file, result)
        if not result.lines and not result.files:
            raise Broad(f"nothing reads {', '.join(sorted(names))}")

    def _dynamic(self, file: str, defining: bool) -> str | None:
        key = (file, defining)
        if key not in self._dynamic_cache:
            tree = self.tree(file)
            if tree is None:
                self._dynamic_cache[key] = "does not parse"
            else:
                self._dynamic_cache[key] = dynamic_access(tree) if defining else star_import(tree)
        return self._dynamic_cache[key]

    def _follow(self, file: str, place: Place, result: Narrowed) -> set[str]:
        """Record one placed read; returns the names a module-level binding re-binds."""
        kind = place.kind
        if kind == "broad":
            raise Broad(place.why)
        if kind == "lines":
            result.placed.append((file, frozenset(place.lines)))  # import time: see ``narrow``
            result.add_lines(file, place.lines)
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
            if not imports_module_object(tree, module, importer, package):
                continue
            if other in self.sources:
                raise Broad(f"{other} reads attributes of {module} by computed name")
            result.files.add(other)
