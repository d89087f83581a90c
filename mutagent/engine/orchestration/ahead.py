"""Planning work that needs no baseline, done in a thread while the workers start and the baseline runs.

The narrow selection of a module-level mutant (``selection/narrow``) analyses the scopes of the
files with libcst: about a tenth of a second per file on the sample agent, most of what
``Planner.plan`` cost, and it used to run after the baseline, just before the first mutant. It
reads the sources and test files only: the baseline's import-time lines are applied when a
mutant is narrowed. So it runs in a daemon thread (``Ahead``) from the moment the mutants are
generated, while the engine's main thread waits for its workers (in ``select``, which releases
the GIL), and the plans find it done.

A thread, not a process: the findings are Python objects the planner reads, and the work is pure
(texts in, findings out; the store and the console stay in the main thread). An error in the
thread is raised where the result is taken; an analysis that fails is left to the planner, which
meets the same error where it always did.

Generating the mutants in such a thread during the baseline was measured too (generic target,
``--fast``, 6 interleaved pairs): the first verdict came no earlier (1.87 s vs 1.72 s mean; on 2
cores the thread competes with the two workers for CPU and with the pool loop for the GIL), so
generation stays before the baseline, overlapping only the workers' start-up.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

from mutagent.engine.selection.analysis import SourceMap, locate
from mutagent.engine.selection.narrow import Narrower
from mutagent.model import Mutant

T = TypeVar("T")


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


class Ahead(Generic[T]):
    """``work()`` running in a daemon thread from now on; ``result`` waits for it (and raises
    what it raised)."""

    def __init__(self, work: Callable[[], T]) -> None:
        self._work = work
        self._value: T | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="mutagent-ahead", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._value = self._work()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread by ``result``
            self._error = exc

    def result(self) -> T:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]


class NarrowAhead:
    """The narrow analysis of a run's module-level mutants, made before the baseline exists."""

    def __init__(self, sources: dict[str, str], files: dict[str, str], module_of: dict[str, str]) -> None:
        self.sources = sources
        self.narrower = Narrower(sources, files, module_of, None)

    def analyse(self, mutants: list[Mutant]) -> None:
        """Analyse the statement of every module-level mutant (run in an ``Ahead`` thread)."""
        for statement in module_level_statements(self.sources, mutants):
            try:
                self.narrower.analyse_ahead([statement])
            except Exception:  # noqa: BLE001, S112 - not cached: the planner redoes it and reports it
                continue

    def narrower_for(
        self, import_lines: dict[str, list[int]] | None, running: Ahead[None] | None
    ) -> Narrower:
        """The analysed narrower for the baseline's import-time lines (once ``running`` is done)."""
        if running is not None:
            running.result()
        return self.narrower.with_import_lines(import_lines)
