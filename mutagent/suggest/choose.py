"""Which tests and which faults to try for one survivor.

The lines a mutant can be observed from are its own (for a module-level constant: the lines that
read the names its statement binds, in every source file). The tests that run those lines, in the
baseline or under a fault in fault exploration, are the candidates' models. The faults come from
three places, in this order: the mutant itself (the HTTP status or ``error`` event type it drops
from a retryable set, the header it stops reading, the exception a handler stops catching, the
fault its operator is about), the explored runs that reach its lines only under their fault, and
none at all (the test's own script, with assertions on what the mutant changes there).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from mutagent.explore.results import Exploration
from mutagent.fakeserver.inject import (
    ARGS_CUT,
    ARGS_NOT_OBJECT,
    CUT_TEXT,
    CUT_TOOL_ARGS,
    EMPTY,
    ERROR_EVENT,
    HTTP,
    LENGTH,
    MALFORMED,
    NO_STOP,
    RESET,
    STALL,
    Fault,
)
from mutagent.model import Mutant

PER_MUTANT = 8  # candidates tried per survivor
RETRY_STORM = 10  # how many times a fault is repeated to exhaust a retry loop

# the fault an operator's mutants are about, when the mutant itself does not say more
OPERATOR_FAULTS: dict[str, list[Fault]] = {
    "accept-truncated-tool-arguments": [Fault(CUT_TOOL_ARGS), Fault(ARGS_CUT)],
    "skip-argument-validation": [Fault(ARGS_NOT_OBJECT), Fault(ARGS_CUT)],
    "skip-stop-marker-check": [Fault(NO_STOP)],
    "ignore-length-stop": [Fault(LENGTH)],
    "accept-empty-response": [Fault(EMPTY)],
    "keep-partial-history": [Fault(CUT_TEXT)],
    "drop-idle-timeout": [Fault(STALL)],
    "ignore-retry-after": [
        Fault(HTTP, status=429, header="retry-after", wait=1.0),
        Fault(HTTP, status=429, header="retry-after-ms", wait=0.25),
    ],
    "skip-backoff": [Fault(HTTP, status=500)],
    "enable-sdk-retries": [Fault(HTTP, status=500)],
    "misclassify-retryable": [Fault(HTTP, status=500), Fault(HTTP, status=429), Fault(RESET)],
    "drop-disconnect-handling": [Fault(CUT_TEXT), Fault(RESET)],
}
STORMS = {"unbounded-retry", "retry-bound-off-by-one"}
# a failed run and what it leaves behind: seen in the request of the run after it
AGAIN: dict[str, list[Fault]] = {"keep-partial-history": [Fault(HTTP, status=400), Fault(LENGTH)]}
# an exception class a handler catches -> the fault that raises it through the SDKs and httpx
EXCEPTION_FAULTS: list[tuple[str, Fault]] = [
    ("RemoteProtocolError", Fault(CUT_TEXT)),
    ("IncompleteRead", Fault(CUT_TEXT)),
    ("ReadError", Fault(CUT_TEXT, reset=True)),
    ("ReadTimeout", Fault(STALL)),
    ("APITimeoutError", Fault(STALL, early=True)),
    ("TimeoutException", Fault(STALL)),
    ("APIConnectionError", Fault(RESET)),
    ("ConnectError", Fault(RESET)),
    ("ConnectionError", Fault(RESET)),
    ("JSONDecodeError", Fault(MALFORMED)),
    ("APIStatusError", Fault(HTTP, status=500)),
    ("RateLimitError", Fault(HTTP, status=429)),
    ("InternalServerError", Fault(HTTP, status=500)),
]


@dataclass(frozen=True)
class Idea:
    """One candidate to build: ``test`` with ``fault`` inserted before scripted step ``fault.at``
    (``times`` in a row), or with its own script when ``fault`` is None."""

    mutant: Mutant
    test: str
    fault: Fault | None
    times: int = 1
    why: str = ""
    again: bool = False  # the test's run repeated after the fault: what the first one left behind

    @property
    def label(self) -> str:
        if self.fault is None:
            return ""
        return (
            self.fault.label
            + (f" x{self.times}" if self.times > 1 else "")
            + (" then again" if self.again else "")
        )


def _bound_names(statement: cst.CSTNode) -> set[str]:
    names: set[str] = set()
    for node in _walk(statement):
        if isinstance(node, cst.AssignTarget) and isinstance(node.target, cst.Name):
            names.add(node.target.value)
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign)) and isinstance(node.target, cst.Name):
            names.add(node.target.value)
    return names


def _walk(node: cst.CSTNode) -> list[cst.CSTNode]:
    found = [node]
    for child in node.children:
        found.extend(_walk(child))
    return found


def _import_time_statement(wrapper: MetadataWrapper, line: int) -> cst.CSTNode | None:
    """The statement holding ``line`` when it runs at import time (module level or a class body,
    not inside a function), else None."""
    positions = wrapper.resolve(PositionProvider)
    found: cst.CSTNode | None = None
    for node, span in positions.items():
        if not span.start.line <= line <= span.end.line:
            continue
        if isinstance(node, (cst.FunctionDef, cst.Lambda)):
            return None
        if isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)) and not isinstance(
            node, cst.ClassDef
        ):
            if found is None or positions[found].start.line <= span.start.line:
                found = node
    return found


def reach_lines(mutant: Mutant, sources: dict[str, str]) -> dict[str, set[int]]:
    """The lines from which ``mutant`` can be observed: its own, and for a statement run at import
    time (a module constant, a class attribute) the lines of every source file that name what it
    binds."""
    lines = {mutant.file: set(range(mutant.location.start_line, mutant.location.end_line + 1))}
    try:
        wrapper = MetadataWrapper(cst.parse_module(sources.get(mutant.file, "")))
    except cst.ParserSyntaxError:
        return lines
    statement = _import_time_statement(wrapper, mutant.location.start_line)
    if statement is None:
        return lines
    names = _bound_names(statement)
    if not names:
        return lines
    pattern = re.compile(r"\b(" + "|".join(re.escape(n) for n in sorted(names)) + r")\b")
    for file, text in sources.items():
        if not pattern.search(text):
            continue
        try:
            other = MetadataWrapper(cst.parse_module(text))
        except cst.ParserSyntaxError:
            continue
        spans = other.resolve(PositionProvider)
        for node, span in spans.items():
            if isinstance(node, cst.Name) and node.value in names:
                if (
                    file == mutant.file
                    and mutant.location.start_line <= span.start.line <= mutant.location.end_line
                ):
                    continue
                lines.setdefault(file, set()).add(span.start.line)
            elif isinstance(node, cst.Attribute) and node.attr.value in names:
                lines.setdefault(file, set()).add(span.start.line)
    return lines


def function_lines(sources: dict[str, str], lines: dict[str, set[int]]) -> dict[str, set[int]]:
    """Every line of the functions that hold ``lines`` (the innermost ``def`` around each)."""
    found: dict[str, set[int]] = {}
    for file, wanted in lines.items():
        try:
            wrapper = MetadataWrapper(cst.parse_module(sources.get(file, "")))
        except cst.ParserSyntaxError:
            continue
        spans = [
            (span.start.line, span.end.line)
            for node, span in wrapper.resolve(PositionProvider).items()
            if isinstance(node, cst.FunctionDef)
        ]
        for line in wanted:
            around = [s for s in spans if s[0] <= line <= s[1]]
            if around:
                start, end = max(around)  # the innermost: the latest start
                found.setdefault(file, set()).update(range(start, end + 1))
    return found


def mutant_faults(mutant: Mutant) -> list[Fault]:
    """The faults the mutant itself points at (see the module docstring), most specific first."""
    before, after = mutant.original, mutant.replacement
    found: list[Fault] = []
    statuses = [s for s in dict.fromkeys(re.findall(r"\b([45]\d\d)\b", before)) if s not in after]
    for status in statuses:
        code = int(status)
        found.append(
            Fault(HTTP, status=code, header="retry-after", wait=1.0)
            if code == 429
            else Fault(HTTP, status=code)
        )
    for error_type in dict.fromkeys(re.findall(r"\b([a-z][a-z_]*_error)\b", before)):
        if error_type not in after:
            found.append(Fault(ERROR_EVENT, error_type=error_type))
    for header in dict.fromkeys(re.findall(r"retry-after(?:-ms)?", before)):
        if header not in after:
            found.append(
                Fault(HTTP, status=429, header=header, wait=1.0 if header == "retry-after" else 0.25)
            )
    for name, fault in EXCEPTION_FAULTS:
        if re.search(rf"\b{name}\b", before) and not re.search(rf"\b{name}\b", after):
            found.append(fault)
    return list(dict.fromkeys(found))


def operator_faults(mutant: Mutant) -> list[Fault]:
    """The faults the mutant's operator is about, when the mutant itself names none."""
    found = list(OPERATOR_FAULTS.get(mutant.operator, []))
    if mutant.operator in STORMS:
        found += [Fault(HTTP, status=500), Fault(HTTP, status=429)]
    return found


def ideas_for(
    mutant: Mutant,
    covering: list[str],
    readable: dict[str, int],
    sources: dict[str, str],
    exploration: Exploration | None,
    duration: dict[str, float],
    nearby: list[str] | None = None,
    step_for: Callable[[str, Fault], int | None] | None = None,
) -> list[Idea]:
    """The candidates to try for ``mutant``, best first (at most ``PER_MUTANT``).

    ``covering``: the tests that run its lines in the baseline; ``readable``: the tests a
    candidate can be built from, with their length in lines (the shorter model reads better);
    ``duration``: each test's baseline time; ``nearby``: the tests that run the functions around
    its lines (a fault inserted into their script may lead them to the lines themselves);
    ``step_for(test, fault)``: the scripted step of ``test`` the fault fits, None if none does."""
    lines = reach_lines(mutant, sources)
    explored = []
    if exploration is not None:
        for file, wanted in lines.items():
            explored += [r for r in exploration.runs_reaching(file, wanted) if r.test in readable]
    explored.sort(key=lambda r: (readable[r.test], r.elapsed))
    only_under = [r for r in explored if any(set(r.new.get(f, ())) & wanted for f, wanted in lines.items())]
    known: list[tuple[str, int]] = [(r.test, r.fault.at) for r in only_under + explored]
    others = [t for t in [*covering, *(nearby or [])] if t in readable]
    known += [(test, 0) for test in others]
    # the shortest model first: it reads best, and any test that reaches the code will do
    models = sorted(dict.fromkeys(known), key=lambda m: (readable[m[0]], duration.get(m[0], 0.0), m[1]))
    times = RETRY_STORM if mutant.operator in STORMS else 1
    ideas: list[Idea] = []

    def faulted_models(faults: list[Fault], why: str, how_many: int) -> None:
        for fault in faults:
            taken = 0
            for test, step in models:
                if taken == how_many:
                    break
                fitting = step_for(test, replace(fault, at=step)) if step_for is not None else step
                if fitting is not None:
                    ideas.append(Idea(mutant, test, replace(fault, at=fitting), times, why))
                    taken += 1

    faulted_models(mutant_faults(mutant), "the fault the mutant is about", 2)
    generic = mutant.operator == "misclassify-retryable"  # its operator faults are a last resort
    if not generic:
        faulted_models(operator_faults(mutant), "the fault the operator is about", 1)
    seen: set[str] = set()
    for run in only_under + explored:
        if run.fault.label not in seen:
            seen.add(run.fault.label)
            ideas.append(Idea(mutant, run.test, run.fault, 1, "its code runs under this fault"))
    if generic:
        faulted_models(operator_faults(mutant), "the fault the operator is about", 1)
    for fault in AGAIN.get(mutant.operator, []):
        for test, step in models[:1]:
            fitting = step_for(test, replace(fault, at=step)) if step_for is not None else step
            if fitting is not None:
                ideas.append(
                    Idea(mutant, test, replace(fault, at=fitting), 1, "a failed run, then another", True)
                )
    for test in sorted(set(covering) & set(readable), key=lambda t: (readable[t], duration.get(t, 0.0))):
        ideas.append(Idea(mutant, test, None, 1, "the test's own script"))
    unique: dict[tuple[str, Fault | None, int, bool], Idea] = {}
    for idea in ideas:
        unique.setdefault((idea.test, idea.fault, idea.times, idea.again), idea)
    return list(unique.values())[:PER_MUTANT]
