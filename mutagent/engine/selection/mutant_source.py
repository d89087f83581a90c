"""Where the engine gets its mutants: the operator library by default, anything else in tests.

The engine only needs ``key`` (identity of the generator, for the store's generated-mutants cache)
and ``generate`` (one file's mutants); tests hand in sources that build ``Mutant`` objects by hand.
"""

from __future__ import annotations

import importlib.util
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Protocol

from mutagent import __version__
from mutagent.engine.selection.fingerprint import digest
from mutagent.model import Mutant


class MutantSource(Protocol):
    key: str

    def generate(self, root: Path, relative: str, text: str) -> list[Mutant]:
        """All mutants of ``root/relative`` (whose current text is ``text``)."""
        ...


def _read(path: str | None) -> str:
    if not path:
        return ""
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


class OperatorMutants:
    """The operator library (``--operators``), imported only when a file needs generating.

    Importing libcst and every operator costs about a second; a re-run with nothing changed
    needs none of it, so the cache key is computed from the operator and generation *files*.
    A selection never seen before misses the cache and is validated by ``select_operators``.
    """

    def __init__(self, spec: str) -> None:
        self.spec = spec
        self._operators: list[Any] | None = None
        #: Files on which an operator crashed: their mutants are incomplete and are not cached.
        self.incomplete: set[str] = set()
        self.key = self._key()

    def _key(self) -> str:
        parts = [__version__, self.spec]
        for package in ("mutagent.mutation", "mutagent.anatomy", "operators"):
            spec = importlib.util.find_spec(package)
            for directory in (spec.submodule_search_locations or []) if spec else []:
                for path in sorted(Path(directory).glob("*.py")):
                    parts += [f"{package}/{path.name}", _read(str(path))]
        for entry in sorted(entry_points(group="mutagent.operators"), key=lambda e: e.name):
            module = entry.value.split(":", 1)[0]
            try:
                found = importlib.util.find_spec(module)
            except (ImportError, ValueError):
                found = None
            parts += [entry.name, entry.value, _read(found.origin if found else None)]
        return digest(*parts)

    @property
    def operators(self) -> list[Any]:
        if self._operators is None:
            from mutagent.mutation.registry import select_operators

            self._operators = select_operators(self.spec)
        return self._operators

    def validate(self) -> None:
        """Raise ``UsageError`` now for an unknown operator name (costs the library import)."""
        _ = self.operators

    def generate(self, root: Path, relative: str, text: str) -> list[Mutant]:
        from mutagent.console import warning
        from mutagent.mutation.generate import generate_for_source

        def warn(message: str) -> None:
            self.incomplete.add(relative)  # an operator crashed: never cache a partial result
            warning(message)

        return generate_for_source(text, relative, self.operators, warn=warn, root=root)
