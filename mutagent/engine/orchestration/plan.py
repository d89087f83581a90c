"""From mutants to jobs: covering tests, fingerprints, statuses decided without running, job specs.

Planning happens in two steps so that a re-run with nothing changed never creates a workspace:
``Planner.plan`` needs only the original sources and the baseline (tests, fingerprint, Ignored,
CompileError, NoCoverage); ``Planner.job_spec`` compiles the mutant under the copy's path and
extracts the code objects a warm worker will swap in.
"""

from __future__ import annotations

import marshal
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from types import CodeType

from mutagent.engine.messages import CodeSwap, DefaultsSwap, FreshImportSource, JobSpec, ValueSwap
from mutagent.engine.orchestration.baseline import Baseline
from mutagent.engine.selection.analysis import Locus, SourceMap, find_code, locate
from mutagent.engine.selection.defaults import DefaultsChange, defaults_change
from mutagent.engine.selection.fingerprint import mutant_fingerprint
from mutagent.engine.selection.import_reads import ImportTime
from mutagent.engine.selection.imports import ImportGraph, select_tests_in
from mutagent.engine.selection.module_values import ValueChange, value_change
from mutagent.engine.selection.narrow import Broad, Narrower
from mutagent.engine.verdict import FORK_ALLOWANCE, cpu_budget, time_limit
from mutagent.model import Mutant, Status

__all__ = ["FORK_ALLOWANCE", "Plan", "Planner", "breadth_of", "focused_first"]


def breadth_of(coverage: dict[str, dict[int, list[str]]]) -> dict[str, int]:
    """How many source lines each test covers (``Baseline.coverage`` turned around)."""
    breadth: dict[str, int] = {}
    for lines in coverage.values():
        for tests in lines.values():
            for test in tests:
                breadth[test] = breadth.get(test, 0) + 1
    return breadth


def focused_first(
    tests: Iterable[str], breadth: dict[str, int], duration: Callable[[str], float]
) -> list[str]:
    """The covering tests of a mutant, the most focused first (fewest source lines covered),
    then the fastest.

    With ``--fast`` a mutant stops at its first failing test, so the order decides the cost.
    A test that covers few lines is a unit-like test written about those lines and the likeliest
    to notice when one changes; a test that drives a whole agent turn covers the mutated line
    too but usually asserts on something else. ``order.KillerFirst`` refines this during a run.
    """
    return sorted(tests, key=lambda t: (breadth.get(t, 0), duration(t), t))


@dataclass
class Plan:
    mutant: Mutant
    locus: Locus
    covering: list[str]  # node ids, most focused first (see ``Planner.test_order``)
    fingerprint: str
    status: Status | None = None  # decided without running (Ignored, CompileError, NoCoverage)
    reason: str | None = None
    error: str | None = None
    timeout: float = 0.0
    selection: str = ""  # how module-level mutants' tests were chosen ("narrow: ..." / "broad: ...")


class Planner:
    """Plans for the mutants of one run."""

    def __init__(
        self,
        sources: dict[str, str],
        files: dict[str, str],
        baseline: Baseline,
        excluded: set[str],
        fast: bool,
        timeout_factor: float,
        timeout_constant: float,
        graph: ImportGraph,
        narrower: Narrower | None = None,
    ) -> None:
        """``narrower``: one already holding the narrow analyses (``ahead.NarrowAhead``) for this
        baseline's import-time lines; by default one is made here."""
        self.sources = sources
        self.graph = graph
        self.files = files  # every source and test file's text, for fingerprints
        self.baseline = baseline
        self.usable = [t for t in baseline.passing if t not in excluded]
        self.usable_set = set(self.usable)
        self.fast = fast
        self.factor = timeout_factor
        self.constant = timeout_constant
        self._maps: dict[str, SourceMap] = {}
        self._original_code: dict[tuple[str, str], CodeType] = {}
        self.narrower = narrower or Narrower(sources, files, graph.module_of, baseline.import_lines)
        self._breadth: dict[str, int] | None = None
        self._import_facts: ImportTime | None = None

    def source_map(self, file: str) -> SourceMap:
        if file not in self._maps:
            self._maps[file] = SourceMap(self.sources[file])
        return self._maps[file]

    def covering_tests(
        self, file: str, locus: Locus, mutated_source: str | None = None
    ) -> tuple[list[str], str]:
        """The tests that can observe a mutant at ``locus``, most focused first, and for module-level
        mutants how they were chosen (narrowed to the readers of the names it binds when
        ``narrow`` can see them all, else everything importing the module)."""
        how = ""
        if locus.file_wide:
            tests, how = self._narrow(file, locus, mutated_source)
            if tests is None:
                tests = self._importers_tests(file)
        else:
            by_line = self.baseline.coverage.get(file, {})
            tests = {t for line in locus.lines for t in by_line.get(line, ()) if t in self.usable_set}
        if self._breadth is None:
            self._breadth = breadth_of(self.baseline.coverage)
        return focused_first(tests, self._breadth, self.baseline.duration), how

    def _importers_tests(self, file: str) -> set[str]:
        """The broad selection: whoever imports the module (directly or not) may depend on it."""
        dependents = self.graph.dependents(file)
        tests = {
            t
            for f in dependents
            for line_tests in self.baseline.coverage.get(f, {}).values()
            for t in line_tests
        } | select_tests_in(dependents, self.usable)
        tests &= self.usable_set
        if not tests and file in self.baseline.imported:
            tests = set(self.usable)  # imported, but by nothing we can see statically
        return tests

    def _narrow(self, file: str, locus: Locus, mutated_source: str | None) -> tuple[set[str] | None, str]:
        if mutated_source is None:
            return None, "broad: no mutated source"
        try:
            found = self.narrower.narrow(file, locus.top_span[0], mutated_source)
        except Broad as exc:
            return None, f"broad: {exc}"
        except (SyntaxError, ValueError) as exc:  # a mutant that does not parse: CompileError later
            return None, f"broad: {type(exc).__name__}"
        tests: set[str] = set()
        for where, lines in [*found.lines.items(), (file, set(locus.lines))]:
            by_line = self.baseline.coverage.get(where, {})
            tests.update(t for line in lines for t in by_line.get(line, ()))
        dependents = {d for f in found.files for d in self.graph.dependents(f)}
        tests |= select_tests_in(dependents, self.usable)
        tests &= self.usable_set
        if not tests:
            return None, f"broad: no test runs a reader of {', '.join(sorted(found.names))}"
        return tests, f"narrow: readers of {', '.join(sorted(found.names))}"

    def plan(self, mutant: Mutant) -> Plan:
        smap = self.source_map(mutant.file)
        locus = locate(smap, mutant.location)
        mutated = mutant.mutated_source(self.sources[mutant.file]) if locus.file_wide else None
        covering, how = self.covering_tests(mutant.file, locus, mutated)
        first, last = locus.top_span
        statement = "".join(smap.lines[first - 1 : last])
        fingerprint = mutant_fingerprint(mutant, statement, covering, self.files, self.fast)
        return Plan(mutant, locus, covering, fingerprint, selection=how)

    def decide(self, plan: Plan) -> Plan:
        """Settle what needs no test run (Ignored, CompileError, NoCoverage), else set the timeout."""
        mutant, covering = plan.mutant, plan.covering
        if mutant.ignored_reason:
            plan.status, plan.reason = Status.IGNORED, mutant.ignored_reason
            return plan
        try:
            compile(mutant.mutated_source(self.sources[mutant.file]), mutant.file, "exec", dont_inherit=True)
        except (SyntaxError, ValueError) as exc:
            plan.status, plan.error = Status.COMPILE_ERROR, f"{type(exc).__name__}: {exc}"
            plan.reason = "the mutated module does not compile"
            return plan
        if not covering:
            plan.status, plan.reason = Status.NO_COVERAGE, "no test runs this code"
            return plan
        durations = sum(self.baseline.duration(t) for t in covering)
        plan.timeout = time_limit(durations, self.factor, self.constant)
        return plan

    def settle_timing(self, plan: Plan) -> Plan:
        """Order ``plan``'s tests and set its time limit again from the baseline's durations as
        they are now: after a test's control run (``control``), its duration may be longer than
        the batch's, which ``plan``/``decide`` used."""
        if self._breadth is None:
            self._breadth = breadth_of(self.baseline.coverage)
        plan.covering = focused_first(plan.covering, self._breadth, self.baseline.duration)
        durations = sum(self.baseline.duration(t) for t in plan.covering)
        plan.timeout = time_limit(durations, self.factor, self.constant)
        return plan

    def test_budget(self, nodeid: str) -> float:
        """CPU seconds one test may burn in a mutant's process (``verdict.cpu_budget``)."""
        return cpu_budget(
            self.baseline.duration(nodeid), self.baseline.cpu(nodeid), self.factor, self.constant
        )

    def _import_time(self) -> ImportTime:
        """What the baseline says about import time, for the in-place value swaps (made once)."""
        if self._import_facts is None:
            baseline = self.baseline
            self._import_facts = ImportTime(
                self.files, self.sources, baseline.import_lines, baseline.imported, self.narrower.parsed
            )
        return self._import_facts

    def _original(self, file: str, path: Path) -> CodeType:
        key = (file, str(path))
        if key not in self._original_code:
            self._original_code[key] = compile(self.sources[file], str(path), "exec", dont_inherit=True)
        return self._original_code[key]

    def job_spec(self, plan: Plan, copy_root: Path, module: str, fresh_import_allowance: float) -> JobSpec:
        """What a worker needs to run ``plan``: the tests, the code objects to swap (``None``
        when only a fresh import can apply the mutant) and the source a fresh import loads."""
        mutant = plan.mutant
        path = copy_root / mutant.file
        mutated_source = mutant.mutated_source(self.sources[mutant.file])
        swap: list[CodeSwap] | None = None
        defaults: tuple[DefaultsSwap, ...] = ()
        values: tuple[ValueSwap, ...] = ()
        reason = "runs at import time (module level, class body or a top-level def header)"
        if not plan.locus.levels and not plan.locus.file_wide:  # a def header run at import time
            change = defaults_change(
                self.source_map(mutant.file), mutant.location, mutated_source, self._import_time()
            )
            if isinstance(change, DefaultsChange):
                swap = []
                defaults = (
                    DefaultsSwap((mutant.file, change.name, change.firstlineno), change.values_wire()),
                )
            else:
                reason = f"{reason}: {change}"
        elif not plan.locus.levels:  # module level or a class body
            value = value_change(
                mutant.file,
                self.source_map(mutant.file),
                mutant.location,
                mutated_source,
                self._import_time(),
            )
            if isinstance(value, ValueChange):
                swap = []
                values = (ValueSwap(module, str(path), value.owner, value.name, value.expression),)
            else:
                reason = f"{reason}: {value}"
        else:
            mutated = compile(mutated_source, str(path), "exec", dont_inherit=True)
            original = self._original(mutant.file, path)
            swap = []
            for name, firstlineno in plan.locus.levels:
                old, new = find_code(original, name, firstlineno), find_code(mutated, name, firstlineno)
                if old is None or new is None:
                    swap, reason = None, f"no unique code object for {name} at line {firstlineno}"
                    break
                swap.append(CodeSwap((mutant.file, name, firstlineno), marshal.dumps(new)))
        return JobSpec(
            tests=tuple(plan.covering),
            timeout=plan.timeout,
            fast=self.fast,
            budgets={t: self.test_budget(t) for t in plan.covering},
            swap=None if swap is None else tuple(swap),
            defaults=defaults,
            values=values,
            fresh_import=FreshImportSource(module, str(path), mutated_source),
            fresh_import_timeout=plan.timeout + fresh_import_allowance,
            fresh_import_reason=reason,
        )
