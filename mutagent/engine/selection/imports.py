"""Static import graph of the target: which files depend on a module's import-time code.

A module-level mutant (``MAX_RETRIES = 3`` -> ``4``) changes what every importer sees, yet no
line of its file need run while a test runs, so per-test line coverage alone misses tests such as
``assert MAX_RETRIES == 3`` or a function in another module that reads the constant. The engine
therefore also selects, for import-time mutants, the tests covering any line of a module that
(transitively) imports the mutated one, and every test in a test file (or under a conftest)
that imports one of those modules.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable


def resolve_relative(module: str | None, level: int, importer: str, is_package: bool) -> str | None:
    if level == 0:
        return module
    parts = importer.split(".") if importer else []
    base = parts if is_package else parts[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)] if len(base) >= level - 1 else []
    if not base and not module:
        return None
    return ".".join([*base, *([module] if module else [])])


def imported_modules(source: str, importer: str, is_package: bool) -> set[str]:
    """Module names a file imports (``from a import b`` yields ``a`` and ``a.b``)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                found.update(".".join(parts[: i + 1]) for i in range(len(parts)))
        elif isinstance(node, ast.ImportFrom):
            base = resolve_relative(node.module, node.level, importer, is_package)
            if base is None:
                continue
            parts = base.split(".")
            found.update(".".join(parts[: i + 1]) for i in range(len(parts)))
            found.update(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")
    return found


class ImportGraph:
    """``file -> modules it imports`` for every source and test file of the target."""

    def __init__(self, files: dict[str, str], module_of: dict[str, str]) -> None:
        self.module_of = module_of  # relative file -> dotted module name
        self.imports: dict[str, set[str]] = {
            file: imported_modules(text, module_of.get(file, ""), file.endswith("__init__.py"))
            for file, text in files.items()
        }

    def dependents(self, file: str) -> set[str]:
        """``file`` plus every file that imports it directly or through other target modules."""
        closure = {file}
        modules = {self.module_of[file]} if file in self.module_of else set()
        changed = True
        while changed:
            changed = False
            for other, imported in self.imports.items():
                if other not in closure and imported & modules:
                    closure.add(other)
                    if other in self.module_of:
                        modules.add(self.module_of[other])
                    changed = True
        return closure


def select_tests_in(files: Iterable[str], tests: Iterable[str]) -> set[str]:
    """Tests defined in ``files``; a ``conftest.py`` stands for every test below its directory."""
    files = set(files)
    prefixes = tuple(f[: -len("conftest.py")] for f in files if f.split("/")[-1] == "conftest.py")
    chosen = set()
    for nodeid in tests:
        test_file = nodeid.split("::", 1)[0]
        if test_file in files or (prefixes and test_file.startswith(prefixes)):
            chosen.add(nodeid)
    return chosen
