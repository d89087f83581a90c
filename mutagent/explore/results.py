"""What the explored runs did, and what follows from it: each fault's handling code and findings.

A run's *new lines* are the lines it ran that the same test does not run without the fault:
the code that handles that fault, whatever it is called. A fault's handling code is the union of
its runs' new lines. A run is also a finding when the loop did not cope: it *crashed* (an
exception that is not one of the target's own errors came out of the target's code: the raw
transport or parsing error escaped the loop), it *hung* (no answer within its time limit), or it
*sent a malformed next request* (the fake server refused it, or its tool results no longer pair
with the tool calls). A failure raised by the test's own code (its assertions, or a lookup of a
request that moved when the fault added one) is none of these: the loop went on. Everything
here is JSON, stored with the baseline in the run's store.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from mutagent.fakeserver.inject import HTTP, Fault

CRASH, HANG, MALFORMED_REQUEST = "crash", "hang", "malformed next request"
GAVE_UP, RECOVERED, WENT_ON, NOT_FIRED = "gave up", "recovered", "went on", "not served"


@dataclass
class ExploredRun:
    """One test run with one fault inserted."""

    test: str
    fault: Fault
    outcome: str  # passed | failed | timeout | error (the harness) | not-served
    message: str = ""  # the failure's line, "call: pkg.mod.SomeError: ..."
    lines: dict[str, list[int]] = field(default_factory=dict)  # every line the run ran
    new: dict[str, list[int]] = field(default_factory=dict)  # ... the test does not run without it
    requests: list[dict[str, Any]] = field(default_factory=list)  # t, outcome, digest, error
    fault_request: int = -1  # the request the fault answered
    inserted: str = ""  # the fault as a test scripts it (``b.http_error(429, ...)``)
    problems: list[str] = field(default_factory=list)  # what the fake server would fail the test for
    elapsed: float = 0.0
    limit: float = 0.0
    raised: str = ""  # the qualified name of what the test's call raised ("" when nothing did)
    through: list[str] = field(default_factory=list)  # "file:line" of the target's frames it left

    @property
    def served(self) -> bool:
        return self.outcome != "not-served"

    @property
    def waited(self) -> float | None:
        """Seconds between the request the fault answered and the next one (None: no next one)."""
        index = self.fault_request
        if index < 0 or index + 1 >= len(self.requests):
            return None
        return float(self.requests[index + 1]["t"]) - float(self.requests[index]["t"])

    def verdict(self, own_modules: Iterable[str]) -> str:
        """What the loop did: recovered, gave up (with its own error), crashed, hung, sent a
        malformed next request, or the fault was not served (the test sent too few requests)."""
        if not self.served:
            return NOT_FIRED
        if self.outcome == "timeout":
            return HANG
        after = self.requests[self.fault_request + 1 :] if self.fault_request >= 0 else []
        if any(r.get("outcome") in ("bad_request", "violation") for r in after):
            return MALFORMED_REQUEST
        if self.outcome == "passed":
            return RECOVERED
        if not self.raised or not self.through:
            return WENT_ON  # the test's own code failed: it expects the script without the fault
        if any(self.raised.startswith(module + ".") for module in own_modules):
            return GAVE_UP
        return CRASH

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["fault"] = self.fault.to_json()
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ExploredRun:
        fields = {k: data[k] for k in cls.__dataclass_fields__ if k in data and k != "fault"}
        return cls(fault=Fault.from_json(data["fault"]), **fields)


def ranges(lines: Iterable[int]) -> str:
    """``40-48, 52``: sorted lines folded into runs of consecutive numbers."""
    ordered = sorted(set(lines))
    parts: list[str] = []
    start = previous = None
    for line in ordered:
        if previous is not None and line == previous + 1:
            previous = line
            continue
        if start is not None:
            parts.append(f"{start}" if start == previous else f"{start}-{previous}")
        start = previous = line
    if start is not None:
        parts.append(f"{start}" if start == previous else f"{start}-{previous}")
    return ", ".join(parts)


@dataclass
class FaultReport:
    """One fault across its runs: its handling code, what the loop did, and the tests showing it."""

    label: str
    runs: list[ExploredRun]
    handling: dict[str, list[int]]  # file -> lines run only under this fault
    verdicts: dict[str, list[str]]  # verdict -> the tests that show it

    def where(self, leave_out: dict[str, set[int]] | None = None) -> str:
        """``retry.py:40-48; loop.py:150-152`` (empty when no handling code was found), without the
        lines of ``leave_out`` (the path most faults share, shown once)."""
        leave_out = leave_out or {}
        parts = []
        for file, lines in sorted(self.handling.items()):
            own = set(lines) - leave_out.get(file, set())
            if own:
                parts.append(f"{file}:{ranges(own)}")
        return "; ".join(parts)

    @property
    def findings(self) -> dict[str, list[str]]:
        return {v: tests for v, tests in self.verdicts.items() if v in (CRASH, HANG, MALFORMED_REQUEST)}

    def waits(self) -> str:
        """For a fault asking for a wait: what the loop waited between the two requests."""
        runs = [r for r in self.runs if r.fault.kind == HTTP and r.fault.header and r.waited is not None]
        if not runs:
            return ""
        waited = max(r.waited or 0.0 for r in runs)
        asked = runs[0].fault.wait
        if waited >= asked * 0.9:
            return f"waits {waited:.2f}s before the retry (the server asked {asked:g}s)"
        return (
            f"retries after {waited:.2f}s (the server asked {asked:g}s): the wait is faked in the "
            "test, or the header is ignored"
        )


@dataclass
class Exploration:
    """Every explored run, the budget they ran in, and the candidate runs the budget left out."""

    runs: list[ExploredRun]
    baseline_time: float  # the baseline's wall time (or the suite's summed test time): the budget's unit
    budget: float  # seconds of worker time exploration could spend
    spent: float  # seconds of worker time it spent
    left_out: int = 0  # candidate runs the budget left out
    wall: float = 0.0  # wall seconds of the exploration phase
    own_modules: list[str] = field(default_factory=list)  # the target's modules (whose errors are its own)

    def by_fault(self) -> list[FaultReport]:
        """One report per fault label, in the order they were first explored."""
        grouped: dict[str, list[ExploredRun]] = {}
        for run in self.runs:
            if run.served:
                grouped.setdefault(run.fault.label, []).append(run)
        reports = []
        for label, runs in grouped.items():
            handling: dict[str, set[int]] = {}
            verdicts: dict[str, list[str]] = {}
            for run in runs:
                for file, lines in run.new.items():
                    handling.setdefault(file, set()).update(lines)
                verdicts.setdefault(run.verdict(self.own_modules), []).append(run.test)
            reports.append(
                FaultReport(label, runs, {f: sorted(v) for f, v in handling.items() if v}, verdicts)
            )
        return reports

    def shared(self) -> dict[str, set[int]]:
        """The handling lines at least half of the faults (three or more) run: the common path of
        a failed attempt (the back-off, the retry loop's bookkeeping), shown once."""
        reports = [r for r in self.by_fault() if r.handling]
        if len(reports) < 3:
            return {}
        counts: dict[tuple[str, int], int] = {}
        for report in reports:
            for file, lines in report.handling.items():
                for line in lines:
                    counts[(file, line)] = counts.get((file, line), 0) + 1
        shared: dict[str, set[int]] = {}
        for (file, line), count in counts.items():
            if count * 2 >= len(reports):
                shared.setdefault(file, set()).add(line)
        return shared

    def runs_reaching(self, file: str, lines: Iterable[int]) -> list[ExploredRun]:
        """The served runs that ran any of ``lines`` of ``file``, those that reach them only under
        their fault first."""
        wanted = set(lines)
        reaching = [r for r in self.runs if r.served and wanted & set(r.lines.get(file, ()))]
        return sorted(reaching, key=lambda r: (not (wanted & set(r.new.get(file, ()))), r.elapsed))

    def handling_faults(self, file: str, lines: Iterable[int]) -> list[str]:
        """The labels of the faults under which (and only under which) ``lines`` of ``file`` run."""
        wanted = set(lines)
        return list(
            dict.fromkeys(r.fault.label for r in self.runs if r.served and wanted & set(r.new.get(file, ())))
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "runs": [run.to_json() for run in self.runs],
            "baseline_time": self.baseline_time,
            "budget": self.budget,
            "spent": self.spent,
            "left_out": self.left_out,
            "wall": self.wall,
            "own_modules": self.own_modules,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Exploration:
        return cls(
            runs=[ExploredRun.from_json(run) for run in data.get("runs", [])],
            baseline_time=float(data.get("baseline_time", 0.0)),
            budget=float(data.get("budget", 0.0)),
            spent=float(data.get("spent", 0.0)),
            left_out=int(data.get("left_out", 0)),
            wall=float(data.get("wall", 0.0)),
            own_modules=list(data.get("own_modules", [])),
        )
