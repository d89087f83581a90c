"""The neutral vocabulary between the battery and a model adapter: one turn asked, events back.

An adapter under test turns a ``Turn`` into its provider's request and the provider's stream into
these events, whatever the provider's wire format. The battery only ever looks at this
vocabulary (plus what the fake server saw on the wire), so one set of checks covers every
dialect an adapter speaks.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

#: The finish reasons a first-party adapter maps its provider's reasons onto. A reason outside
#: this set must be the provider's own value passed through (``Finish.raw``).
NEUTRAL_REASONS = frozenset({"stop", "tool_use", "length", "filtered"})


@dataclass(frozen=True)
class Tool:
    """A tool the turn declares: the adapter sends it in its provider's tool format."""

    name: str
    description: str = "A tool."
    schema: Mapping[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})


@dataclass(frozen=True)
class Turn:
    """One model call: a user prompt, the tools declared and the tool choice.

    ``tool_choice`` is None (the adapter's default), ``"auto"``, ``"none"``, ``"required"`` or
    ``"tool"`` (then ``tool_name`` names the one tool the model must call).
    """

    prompt: str = "hi"
    tools: tuple[Tool, ...] = ()
    tool_choice: str | None = None
    tool_name: str | None = None


@dataclass(frozen=True)
class Text:
    """Some assistant text (a delta or the whole text: the battery only compares sequences)."""

    text: str


@dataclass(frozen=True)
class ToolUse:
    """A complete tool call; ``arguments`` as the adapter hands them on (text or parsed)."""

    id: str
    name: str
    arguments: Any


@dataclass(frozen=True)
class Finish:
    """The turn ended. ``reason`` is one of ``NEUTRAL_REASONS`` or equals ``raw``, the provider's
    own value; a turn the provider ended without naming a reason is ``"stop"``."""

    reason: str | None
    raw: str | None = None


@dataclass(frozen=True)
class Failure:
    """An error delivered as an event instead of raised: it must be the last event."""

    error: BaseException


Event = Text | ToolUse | Finish | Failure
#: What a test's factory returns: a callable taking a Turn, or an object with ``stream(turn)``.
Adapter = Callable[[Turn], Iterable[Event]] | Any


@dataclass
class Outcome:
    """What a consumer saw: every event in order, and the exception that ended the stream
    (raised by the call or by the iteration). ``timed_out``: the consumer gave up waiting."""

    events: list[Event] = field(default_factory=list)
    raised: BaseException | None = None
    timed_out: bool = False

    @property
    def failed(self) -> bool:
        return self.raised is not None or any(isinstance(e, Failure) for e in self.events)

    @property
    def finishes(self) -> list[Finish]:
        return [e for e in self.events if isinstance(e, Finish)]

    def describe(self) -> str:
        ending = f"raised {type(self.raised).__name__}: {self.raised}" if self.raised else "returned"
        if self.timed_out:
            ending = "still running"
        return f"events {self.events!r}, then {ending}"


def open_stream(adapter: Adapter, turn: Turn) -> Iterable[Event]:
    """Start the adapter's stream for ``turn``: ``adapter.stream(turn)`` or ``adapter(turn)``."""
    stream = getattr(adapter, "stream", None)
    return stream(turn) if callable(stream) else adapter(turn)


def _consume(adapter: Adapter, turn: Turn, outcome: Outcome, stop_after_texts: int | None) -> None:
    iterator: Iterator[Event] | None = None
    try:
        iterator = iter(open_stream(adapter, turn))
        texts = 0
        for event in iterator:
            outcome.events.append(event)
            texts += isinstance(event, Text)
            if stop_after_texts is not None and texts >= stop_after_texts:
                break  # the consumer stops early: from here on, releasing is the adapter's job
    except Exception as error:  # noqa: BLE001 - any exception ends the stream as a failure
        outcome.raised = error
    finally:
        close = getattr(iterator, "close", None)
        if stop_after_texts is not None and callable(close):
            close()  # what leaving a ``for`` loop over a generator does once it is dropped


def consume(adapter: Adapter, turn: Turn, timeout: float, stop_after_texts: int | None = None) -> Outcome:
    """Read the adapter's stream for ``turn`` on a worker thread, for at most ``timeout``
    seconds, so a hanging adapter fails its check instead of the whole run. ``stop_after_texts``
    breaks out after that many ``Text`` events."""
    outcome = Outcome()
    worker = threading.Thread(
        target=_consume,
        args=(adapter, turn, outcome, stop_after_texts),
        daemon=True,
        name="contract-consumer",
    )
    worker.start()
    worker.join(timeout)
    outcome.timed_out = worker.is_alive()
    return outcome
