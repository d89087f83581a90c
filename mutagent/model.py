"""The data every part of mutagent shares: mutants, their statuses and their results.

Kept free of I/O and of heavy imports so that the engine, the store and the reports can all
depend on it without depending on each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class Status(str, Enum):
    """Outcome of one mutant, named exactly as the mutation-testing-report-schema names them."""

    KILLED = "Killed"
    SURVIVED = "Survived"
    NO_COVERAGE = "NoCoverage"
    TIMEOUT = "Timeout"
    COMPILE_ERROR = "CompileError"
    RUNTIME_ERROR = "RuntimeError"
    IGNORED = "Ignored"
    PENDING = "Pending"

    @property
    def detected(self) -> bool:
        """Killed and Timeout count as detected; nothing else does (a harness crash never does)."""
        return self in (Status.KILLED, Status.TIMEOUT)

    @property
    def scored(self) -> bool:
        """Statuses that enter the mutation score's denominator."""
        return self in (Status.KILLED, Status.TIMEOUT, Status.SURVIVED, Status.NO_COVERAGE)


@dataclass(frozen=True)
class Location:
    """1-based lines, 0-based columns, as libcst's PositionProvider reports them."""

    start_line: int
    start_col: int
    end_line: int
    end_col: int


@dataclass(frozen=True)
class TextPatch:
    """Replace ``source[start:end]`` (character offsets) with ``text`` to obtain the mutated file.

    The span covers the whole top-level statement holding the mutation, re-rendered by libcst,
    so applying a patch never has to reason about indentation.
    """

    start: int
    end: int
    text: str

    def apply(self, source: str) -> str:
        return source[: self.start] + self.text + source[self.end :]


@dataclass(frozen=True)
class Mutant:
    """One injected bug: where it is, what it changes and how to apply it.

    ``id`` is derived from content only (file, enclosing qualified name, operator, original and
    replacement code, occurrence index), so editing another function leaves it unchanged.
    ``scope`` is the ``__qualname__`` chain of the enclosing functions/classes, outermost first
    (``("Agent", "run_turn")``); empty for module-level code.
    """

    id: str
    operator: str
    file: str
    scope: tuple[str, ...]
    location: Location
    original: str
    replacement: str
    description: str
    patch: TextPatch
    ignored_reason: str | None = None

    @property
    def qualname(self) -> str:
        return ".".join(self.scope)

    def mutated_source(self, source: str) -> str:
        return self.patch.apply(source)


@dataclass
class MutantResult:
    """What running one mutant produced. ``killed_by``/``covered_by`` are pytest node ids
    relative to the target root."""

    mutant_id: str
    status: Status
    killed_by: list[str] = field(default_factory=list)
    covered_by: list[str] = field(default_factory=list)
    tests_run: list[str] = field(default_factory=list)
    duration: float = 0.0
    error: str | None = None
    status_reason: str | None = None


@dataclass(frozen=True)
class TestInfo:
    """One test of the target's suite as the baseline saw it (node id relative to the target root)."""

    nodeid: str
    duration: float
    outcome: str = "passed"

    @property
    def file(self) -> str:
        return self.nodeid.split("::", 1)[0]


@dataclass(frozen=True)
class Suggestion:
    """A test ``mutagent suggest`` wrote for one mutant and ran: it passed every one of
    ``original_runs`` runs on the unmutated code and failed on the mutant (``mutant_failure`` is
    the failure's line). Only such a test is ever shown as code in a report."""

    mutant_id: str
    test_name: str
    code: str  # the test function, ready to paste into ``test_file``
    test_file: str  # the test file whose fixtures and imports it uses (relative to the target)
    imports: tuple[str, ...] = ()  # import lines the test needs beyond the file's own
    fault: str = ""  # the fault inserted into the script, in words ("" for the test's own script)
    original_runs: int = 0
    mutant_failure: str = ""


@dataclass
class RunData:
    """Everything a report needs, loaded from the store: reports never re-run anything."""

    root: str
    mutants: list[Mutant]
    results: dict[str, MutantResult]
    tests: list[TestInfo]
    sources: dict[str, str]
    # what the fake server served each test during the baseline, one dict per scripted step
    # (test, dialect, behaviour, fault, position): see mutagent.fakeserver.faultlog
    faults: list[dict[str, Any]] = field(default_factory=list)
    # ``(I, N)`` for the report of a ``--shard I/N`` run: ``mutagent merge`` checks the set is whole
    shard: tuple[int, int] | None = None
    # why a merged report is not the whole run (``merge --allow-partial``), shown in every report
    partial: str | None = None
    # the git revision of a ``--since REV`` run (or ``report --since``): its score is of those mutants only
    since: str | None = None
    # the run stopped each mutant at its first kill (``--fast``): the kill matrix is not complete
    fast: bool = False
    # the tests ``mutagent suggest`` verified, by mutant id (only those are shown as code)
    suggestions: dict[str, Suggestion] = field(default_factory=dict)
    # what fault exploration found (``mutagent.explore.results.Exploration.to_json``), or None
    exploration: dict[str, Any] | None = None

    def result_of(self, mutant: Mutant) -> MutantResult:
        return self.results.get(mutant.id) or MutantResult(mutant.id, Status.PENDING)
