"""The neutral vocabulary between the battery and a model adapter: one turn asked, events back.

An adapter under test turns a ``Turn`` into its provider's request and the provider's stream into
these events, whatever the provider's wire format. The battery only ever looks at this
vocabulary (plus what the fake server saw on the wire), so one set of checks covers every
dialect an adapter speaks.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterable, Callable, Iterable, Iterator, Mapping
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
#: What a test's factory returns: a callable taking a Turn, or an object with ``stream(turn)``,
#: giving an iterable or an async iterable of events.
Adapter = Callable[[Turn], Iterable[Event] | AsyncIterable[Event]] | Any


@dataclass
class Outcome:
    """What a consumer saw: every event in order, and the exception that ended the stream
    (raised by the call or by the iteration). ``timed_out``: the consumer gave up waiting;
    ``asynchronous``: the adapter gave an async iterable; ``released``: whether the release
    probe held in time after an early stop (None: not asked)."""

    events: list[Event] = field(default_factory=list)
    raised: BaseException | None = None
    timed_out: bool = False
    asynchronous: bool = False
    released: bool | None = None

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


@dataclass(frozen=True)
class EarlyStop:
    """How the consumer stops early: after ``texts`` Text events it breaks out (and closes the
    iterator, as dropping a generator does), or with ``cancel`` (async adapters) cancels the task
    reading the stream while it waits for the next event. ``released`` is then polled for up to
    ``seconds`` *before* the event loop shuts down, since shutting it down would cancel an
    adapter's leaked reader task and hide the leak."""

    texts: int
    released: Callable[[], bool]
    seconds: float
    cancel: bool = False


def open_stream(adapter: Adapter, turn: Turn) -> Any:
    """Start the adapter's stream for ``turn``: ``adapter.stream(turn)`` or ``adapter(turn)``."""
    stream = getattr(adapter, "stream", None)
    return stream(turn) if callable(stream) else adapter(turn)


def _poll(released: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not released():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)
    return True


async def _apoll(released: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not released():
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(0.02)
    return True


def _consume(adapter: Adapter, turn: Turn, outcome: Outcome, stop: EarlyStop | None) -> None:
    iterator: Iterator[Event] | None = None
    try:
        stream = open_stream(adapter, turn)
        if hasattr(stream, "__aiter__"):
            outcome.asynchronous = True
            asyncio.run(_consume_async(stream, outcome, stop))
            return
        iterator = iter(stream)
        texts = 0
        for event in iterator:
            outcome.events.append(event)
            texts += isinstance(event, Text)
            if stop is not None and texts >= stop.texts:
                break  # the consumer stops early: from here on, releasing is the adapter's job
    except Exception as error:  # noqa: BLE001 - any exception ends the stream as a failure
        outcome.raised = error
    finally:
        close = getattr(iterator, "close", None)
        if stop is not None and not outcome.asynchronous:
            if callable(close):
                close()  # what leaving a ``for`` loop over a generator does once it is dropped
            outcome.released = _poll(stop.released, stop.seconds)


async def _consume_async(stream: AsyncIterable[Event], outcome: Outcome, stop: EarlyStop | None) -> None:
    enough = asyncio.Event()
    iterator = stream.__aiter__()

    async def read() -> None:
        texts = 0
        async for event in iterator:
            outcome.events.append(event)
            texts += isinstance(event, Text)
            if stop is not None and texts >= stop.texts:
                enough.set()
                if not stop.cancel:
                    return  # break: the caller closes the iterator below

    reader = asyncio.ensure_future(read())
    if stop is None:
        try:
            await reader
        except Exception as error:  # noqa: BLE001 - any exception ends the stream as a failure
            outcome.raised = error
        return
    waiter = asyncio.ensure_future(enough.wait())
    await asyncio.wait({reader, waiter}, return_when=asyncio.FIRST_COMPLETED)
    waiter.cancel()
    if stop.cancel and not reader.done():
        reader.cancel()  # the caller gives up on the turn while the adapter awaits the next event
    try:
        await reader
    except asyncio.CancelledError:
        pass
    except Exception as error:  # noqa: BLE001
        outcome.raised = error
    aclose = getattr(iterator, "aclose", None)
    if callable(aclose):
        await aclose()
    outcome.released = await _apoll(stop.released, stop.seconds)


def consume(adapter: Adapter, turn: Turn, timeout: float, stop: EarlyStop | None = None) -> Outcome:
    """Read the adapter's stream for ``turn`` (a sync or async iterable) on a worker thread, for
    at most ``timeout`` seconds, so a hanging adapter fails its check instead of the whole run;
    ``stop`` makes the consumer stop early and then probe for the release."""
    outcome = Outcome()
    worker = threading.Thread(
        target=_consume, args=(adapter, turn, outcome, stop), daemon=True, name="contract-consumer"
    )
    worker.start()
    worker.join(timeout)
    outcome.timed_out = worker.is_alive()
    return outcome
