"""Planning work that needs no baseline, done while the workers start and the baseline runs.

The narrow selection of a module-level mutant (``selection/narrow``) analyses the scopes of the
files with libcst: about a tenth of a second per file on the sample agent, a good part of
``Planner.plan`` for every mutant. It reads the sources and test files only, never the baseline
(its import-time lines are applied when a mutant is narrowed), so it runs in a thread from the
moment the mutants are generated: the engine process itself mostly waits for its workers then
(in ``select``, which releases the GIL), and the plans no longer wait for it after the baseline.

A thread, not a process: the analysis fills the narrower's caches the planner then reads, and
it is pure (texts in, findings out). An analysis that raises is left to the planner, which
meets the same error where it always did.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

from mutagent.engine.selection.analysis import SourceMap, locate
from mutagent.engine.selection.narrow import Narrower
from mutagent.model import Mutant


def module_level_statements(sources: dict[str, str], mutants: Iterable[Mutant]) -> list[tuple[str, int]]:
    """``(file, first line)`` of each top-level statement holding a module-level mutant (once each)."""
    maps: dict[str, SourceMap] = {}
    found: dict[tuple[str, int], None] = {}
    for mutant in mutants:
        if mutant.file not in sources:
            continue
        smap = maps.get(mutant.file) or maps.setdefault(mutant.file, SourceMap(sources[mutant.file]))
        try:
            locus = locate(smap, mutant.location)
        except Exception:  # noqa: BLE001 - the planner meets it again and reports it its own way
            continue
        if locus.file_wide:
            found[(mutant.file, locus.top_span[0])] = None
    return list(found)


class NarrowAhead:
    """The narrow analysis of a run's module-level mutants, started in a thread at once."""

    def __init__(
        self, sources: dict[str, str], files: dict[str, str], module_of: dict[str, str], mutants: list[Mutant]
    ) -> None:
        self.narrower = Narrower(sources, files, module_of, None)
        self._thread = threading.Thread(
            target=self._analyse, args=(sources, mutants), name="mutagent-narrow-ahead", daemon=True
        )
        self._thread.start()

    def _analyse(self, sources: dict[str, str], mutants: list[Mutant]) -> None:
        for statement in module_level_statements(sources, mutants):
            try:
                self.narrower.analyse_ahead([statement])
            except Exception:  # noqa: BLE001, S112 - not cached: the planner redoes it and reports it
                continue

    def narrower_for(self, import_lines: dict[str, list[int]] | None) -> Narrower:
        """The analysed narrower for the baseline's import-time lines (waits for the thread)."""
        self._thread.join()
        return self.narrower.with_import_lines(import_lines)
