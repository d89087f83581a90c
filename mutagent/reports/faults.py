"""Fault coverage: which faults the suite scripts on the fake model server, and which it never does.

The baseline's fault log (``RunData.faults``, one entry per step ``fake_model`` served: test,
dialect, fault, stream position) answers a question mutation scores cannot: a suite that never
cuts a stream mid-tool-call cannot kill a mutant that runs a tool on truncated arguments, however
many tests it has. Each fault of the catalogue below names the operators whose mutants a test
scripting that fault (and asserting on what the agent does next) is able to kill, so an unscripted
fault points at the operators whose survivors it explains.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from mutagent.model import RunData

STREAM_POSITIONS = ("stream-start", "mid-text", "mid-tool-args", "between-blocks", "after-finish")
_HTTP = re.compile(r"^http-(\d{3})((?:\+[a-z-]+)*)$")
RETRY_OPS = ("ignore-retry-after", "skip-backoff", "unbounded-retry", "retry-bound-off-by-one")
TOOL_OPS = (
    "mismatch-tool-call-id",
    "truncate-tool-results",
    "swallow-tool-error",
    "skip-tool-allowlist",
    "skip-argument-validation",
    "skip-approval",
    "skip-tenant-check",
)


def _http(step: dict[str, Any]) -> tuple[int, set[str]] | None:
    match = _HTTP.match(str(step.get("fault", "")))
    if match is None:
        return None
    return int(match.group(1)), set(filter(None, match.group(2).split("+")))


def _fault(name: str, *positions: str) -> Callable[[dict[str, Any]], bool]:
    def matches(step: dict[str, Any]) -> bool:
        fault = str(step.get("fault", ""))
        return (fault == name or fault.startswith(name + ":")) and (
            not positions or step.get("position") in positions
        )

    return matches


def _status(check: Callable[[int, set[str]], bool]) -> Callable[[dict[str, Any]], bool]:
    def matches(step: dict[str, Any]) -> bool:
        parsed = _http(step)
        return parsed is not None and check(*parsed)

    return matches


def _cut(position: str) -> Callable[[dict[str, Any]], bool]:
    def matches(step: dict[str, Any]) -> bool:
        return step.get("fault") in ("cut", "cut-reset") and step.get("position") == position

    return matches


@dataclass(frozen=True)
class FaultClass:
    """One fault worth scripting: what it is, where it strikes, the operators it lets a test kill."""

    key: str
    label: str
    where: str
    operators: tuple[str, ...]
    matches: Callable[[dict[str, Any]], bool]


CATALOGUE: tuple[FaultClass, ...] = (
    FaultClass(
        "http-429-wait",
        "HTTP 429 + retry-after(-ms)",
        "before-first-byte",
        (*RETRY_OPS, "enable-sdk-retries"),
        _status(lambda code, waits: code == 429 and bool(waits)),
    ),
    FaultClass(
        "http-retryable-no-wait",
        "HTTP 408/409/429, no wait header",
        "before-first-byte",
        ("misclassify-retryable", "skip-backoff", "retry-bound-off-by-one", "unbounded-retry"),
        _status(lambda code, waits: code in (408, 409, 429) and not waits),
    ),
    FaultClass(
        "http-overloaded-ms",
        "HTTP 529/503 + retry-after-ms",
        "before-first-byte",
        ("ignore-retry-after", "misclassify-retryable"),
        _status(lambda code, waits: code in (503, 529) and "retry-after-ms" in waits),
    ),
    FaultClass(
        "http-5xx",
        "HTTP 5xx, no wait header",
        "before-first-byte",
        (
            "misclassify-retryable",
            "skip-backoff",
            "retry-bound-off-by-one",
            "unbounded-retry",
            "ignore-idempotency-key",
            "enable-sdk-retries",
        ),
        _status(lambda code, waits: code >= 500 and not waits),
    ),
    FaultClass(
        "http-4xx",
        "HTTP 4xx (not retryable)",
        "before-first-byte",
        ("misclassify-retryable", "unbounded-retry"),
        _status(lambda code, waits: code in (400, 401, 403, 404, 422)),
    ),
    FaultClass(
        "drop",
        "connection dropped",
        "before-first-byte",
        ("drop-disconnect-handling", "misclassify-retryable", "ignore-idempotency-key"),
        _fault("drop"),
    ),
    FaultClass(
        "cut-start",
        "cut before any content",
        "stream-start",
        ("drop-disconnect-handling", "misclassify-retryable"),
        _cut("stream-start"),
    ),
    FaultClass(
        "cut-text",
        "cut mid-text",
        "mid-text",
        ("drop-disconnect-handling", "keep-partial-history", "skip-stop-marker-check"),
        _cut("mid-text"),
    ),
    FaultClass(
        "cut-tool-args",
        "cut mid-tool-call args",
        "mid-tool-args",
        ("accept-truncated-tool-arguments", "keep-partial-history", "skip-stop-marker-check"),
        _cut("mid-tool-args"),
    ),
    FaultClass(
        "no-stop",
        "no end-of-turn marker",
        "after-finish",
        ("skip-stop-marker-check",),
        _fault("no-stop"),
    ),
    FaultClass(
        "error-event",
        "error event mid-stream",
        "mid-stream",
        ("misclassify-retryable", "keep-partial-history"),
        _fault("error-event"),
    ),
    FaultClass(
        "malformed",
        "malformed event",
        "mid-stream",
        ("keep-partial-history", "drop-disconnect-handling"),
        _fault("malformed"),
    ),
    FaultClass(
        "stall",
        "stall mid-stream",
        "mid-stream",
        ("drop-idle-timeout", "drop-disconnect-handling"),
        lambda s: _fault("stall")(s) or _fault("stall-forever")(s),
    ),
    FaultClass("endless", "never-ending stream", "never-ends", ("drop-response-close",), _fault("endless")),
    FaultClass(
        "length-stop",
        "max_tokens / length stop",
        "complete",
        ("ignore-length-stop", "accept-truncated-tool-arguments"),
        _fault("length-stop"),
    ),
    FaultClass("empty", "empty response", "complete", ("accept-empty-response",), _fault("empty")),
    FaultClass("tool-call", "tool-call turn", "complete", TOOL_OPS, _fault("tool-call")),
)


@dataclass
class FaultRow:
    """One fault of one dialect and the tests that script it (empty: never scripted)."""

    dialect: str
    fault: FaultClass
    tests: list[str]


@dataclass
class FaultCoverage:
    dialects: list[str]
    rows: list[FaultRow]
    by_test: dict[str, list[str]]  # test -> "fault @ position (dialect)" of each distinct step
    other: list[tuple[str, str, str, list[str]]]  # scripted steps no catalogue fault describes

    @property
    def never(self) -> list[FaultRow]:
        return [row for row in self.rows if not row.tests]


def describe_step(step: dict[str, Any]) -> str:
    return f"{step.get('fault')} @ {step.get('position')} ({step.get('dialect')})"


def fault_coverage(run_data: RunData) -> FaultCoverage:
    """The coverage of the catalogue's faults in the dialects the suite talks (tests in suite order)."""
    steps = run_data.faults
    dialects = sorted({str(s.get("dialect")) for s in steps})
    rows = []
    matched: set[int] = set()
    for dialect in dialects:
        for fault in CATALOGUE:
            tests = []
            for index, step in enumerate(steps):
                if step.get("dialect") == dialect and fault.matches(step):
                    matched.add(index)
                    if step["test"] not in tests:
                        tests.append(step["test"])
            rows.append(FaultRow(dialect, fault, tests))
    by_test: dict[str, list[str]] = {}
    for step in steps:
        described = by_test.setdefault(step["test"], [])
        if step.get("fault") != "ok" and describe_step(step) not in described:
            described.append(describe_step(step))
    other: dict[tuple[str, str, str], list[str]] = {}
    for index, step in enumerate(steps):
        if index in matched or step.get("fault") == "ok":
            continue
        key = (str(step.get("dialect")), str(step.get("fault")), str(step.get("position")))
        if step["test"] not in other.setdefault(key, []):
            other[key].append(step["test"])
    return FaultCoverage(dialects, rows, by_test, [(*k, v) for k, v in other.items()])


def fault_coverage_json(run_data: RunData) -> dict[str, Any]:
    """The extension field of the JSON report (``mutagent.faultCoverage``)."""
    coverage = fault_coverage(run_data)
    return {
        "dialects": coverage.dialects,
        "faults": [
            {
                "dialect": row.dialect,
                "fault": row.fault.key,
                "label": row.fault.label,
                "position": row.fault.where,
                "scriptedBy": row.tests,
                "operators": list(row.fault.operators),
            }
            for row in coverage.rows
        ],
        "tests": coverage.by_test,
    }


def render_fault_coverage(run_data: RunData) -> RenderableType:
    """Compact terminal section: one row per fault and dialect (how many tests script it, the
    unscripted ones in red); the HTML report names the tests."""
    coverage = fault_coverage(run_data)
    table = Table(
        title="Fault coverage (what fake_model served each test in the baseline)",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        padding=(0, 1),
        pad_edge=False,
    )
    table.add_column("dialect", no_wrap=True)
    table.add_column("fault", overflow="fold", ratio=3)
    table.add_column("tests", no_wrap=True, justify="right")
    table.add_column("never scripted: operators left to chance", overflow="fold", style="red", ratio=4)
    for row in coverage.rows:
        if row.tests:
            table.add_row(row.dialect, row.fault.label, Text(str(len(row.tests)), style="green"), "")
        else:
            never = Text("never", style="bold red")
            table.add_row(row.dialect, row.fault.label, never, ", ".join(row.fault.operators))
    never = len(coverage.never)
    line = Text.assemble(
        ("faults never scripted: ", "bold"),
        (f"{never} of {len(coverage.rows)}", "bold red" if never else "bold green"),
        f" (dialects used: {', '.join(coverage.dialects)})",
    )
    return Group(table, line)


def fault_markdown(run_data: RunData) -> list[str]:
    """The fault-coverage section of the Markdown summary."""
    coverage = fault_coverage(run_data)
    lines = [
        f"### Fault coverage ({len(coverage.never)} of {len(coverage.rows)} faults never scripted)",
        "",
        "| dialect | fault | where | scripted by | operators it lets a test kill |",
        "| --- | --- | --- | --- | --- |",
    ]
    for row in coverage.rows:
        scripted = f"{len(row.tests)} test{'s' if len(row.tests) > 1 else ''}" if row.tests else "**never**"
        lines.append(
            f"| {row.dialect} | {row.fault.label} | {row.fault.where} | {scripted} | "
            f"{', '.join(row.fault.operators)} |"
        )
    return lines
