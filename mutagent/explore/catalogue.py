"""Which faults fit a test's script: read from what ``fake_model`` served it in the baseline.

The baseline's fault log has one line per scripted step of every test (its dialect, whether the
request streamed, the behaviour's kind, whether the reply has text, how many tool calls). A
transient fault (an HTTP error, a reset before the first byte) fits any step; a faulted copy of a
reply fits a plain turn (``ok``): a stream fault only a streamed one, a cut mid-tool-arguments
only a reply with a tool call, a cut mid-text only a reply with text.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

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
    STREAM_ONLY,
    TOOL_FAULTS,
    Fault,
)

RETRY_AFTER = 1.0  # seconds a retry-after header asks for: a whole second, as servers send it
RETRY_AFTER_MS = 0.25  # what a retry-after-ms header asks for


@dataclass(frozen=True)
class Step:
    """One scripted step of one test, as the baseline's fault log recorded it."""

    index: int
    dialect: str
    stream: bool
    kind: str  # the behaviour's kind: ok, cut, http_error, replay, ...
    text: bool
    tools: int


@dataclass(frozen=True)
class Script:
    """What one test scripts: its steps in order."""

    test: str
    steps: tuple[Step, ...]

    @property
    def plain(self) -> bool:
        """Every step a complete turn: the test scripts no fault of its own."""
        return all(step.kind == "ok" for step in self.steps)

    @property
    def dialect(self) -> str:
        return self.steps[0].dialect if self.steps else ""


def _step(entry: dict[str, Any]) -> Step:
    fault = str(entry.get("fault", ""))
    kind = entry.get("kind")
    if not isinstance(kind, str):  # a fault log written before the kind was recorded
        kind = "ok" if fault in ("ok", "tool-call", "length-stop", "empty") else fault
    text = entry.get("text")
    return Step(
        index=int(entry.get("step", 0)),
        dialect=str(entry.get("dialect", "")),
        stream=bool(entry.get("stream", False)),
        kind=kind,
        text=bool(text) if text is not None else fault in ("ok", "length-stop"),
        tools=int(entry.get("tools", 1 if fault == "tool-call" else 0) or 0),
    )


def scripts(fault_log: Iterable[dict[str, Any]], passing: Iterable[str]) -> dict[str, Script]:
    """The script of every passing test the fault log has steps for (suite order kept)."""
    steps: dict[str, dict[int, Step]] = {}
    for entry in fault_log:
        test = entry.get("test")
        if isinstance(test, str):
            step = _step(entry)
            steps.setdefault(test, {}).setdefault(step.index, step)
    found = {}
    for test in passing:
        if test in steps:
            # numbered by the order they were served: the step the fake server counts (a request
            # refused before its step, a bad one, uses none)
            ordered = [steps[test][i] for i in sorted(steps[test])]
            found[test] = Script(test, tuple(replace(s, index=n) for n, s in enumerate(ordered)))
    return found


def faults_for(dialect: str) -> list[Fault]:
    """The catalogue of faults for ``dialect`` (``at`` left 0), in the order exploration tries them."""
    overloaded = 529 if dialect == "anthropic" else 503
    error_type = {"anthropic": "overloaded_error", "openai": "server_error", "responses": "server_error"}
    return [
        Fault(HTTP, status=429, header="retry-after", wait=RETRY_AFTER),
        Fault(HTTP, status=500),
        Fault(RESET),
        Fault(CUT_TEXT),
        Fault(CUT_TOOL_ARGS),
        Fault(ARGS_CUT),
        Fault(ARGS_NOT_OBJECT),
        Fault(NO_STOP),
        Fault(LENGTH),
        Fault(EMPTY),
        Fault(MALFORMED),
        Fault(ERROR_EVENT, error_type=error_type.get(dialect, "overloaded_error")),
        Fault(HTTP, status=overloaded, header="retry-after-ms", wait=RETRY_AFTER_MS),
        Fault(HTTP, status=429, header="retry-after-ms", wait=RETRY_AFTER_MS),
        Fault(CUT_TEXT, reset=True),
        Fault(STALL),
        Fault(STALL, early=True),
    ]


def fits(fault: Fault, step: Step) -> bool:
    """Whether ``fault`` can strike at ``step`` (the same rule the fake server applies)."""
    if fault.transient:
        return True
    if step.kind != "ok":
        return False
    if fault.kind in STREAM_ONLY and not step.stream:
        return False
    if fault.kind in TOOL_FAULTS:
        return step.tools > 0
    if fault.kind == CUT_TEXT:
        return step.text
    return True


def placed(fault: Fault, step: Step) -> Fault:
    return replace(fault, at=step.index)
