"""What the fake model does with one request: dialect-neutral, immutable descriptions.

A behaviour says *what happens on the wire* (a normal turn, a stream cut after N events, a 429,
...), never how a dialect spells it: the server renders it for the dialect the request's path
names. Keeping the two apart lets one script drive an Anthropic agent and an OpenAI agent alike,
and lets the random mode and the replay mode produce the same kind of object as a hand-written
script.

Every stream behaviour starts from the ok-stream of its ``text``/``tool_calls`` (see
``mutagent.fakeserver.plan.event_names`` for the event list) and then applies its fault.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

#: Anthropic stop reasons are the neutral vocabulary; OpenAI names are accepted and translated.
STOP_REASONS_TO_OPENAI = {
    "end_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "stop_sequence": "stop",
    "refusal": "content_filter",
}
_OPENAI_TO_NEUTRAL = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}


#: ``stop_reason=NULL_STOP`` sends the stop reason as JSON ``null``: a turn the provider ended
#: without naming why (a plain ``None`` means "the default for the content").
NULL_STOP: Final = "\x00null"


@dataclass(frozen=True)
class ToolCall:
    """One tool call the fake model makes: ``ToolCall("toolu_1", "lookup", {"q": "x"})``.

    ``input`` is a mapping (sent as JSON) or a string sent verbatim as the arguments text, so a
    test can send arguments the model never finished (``'{"q": "x'``) or that are not an object.
    Bad values raise here, in the test, never as a server error.
    """

    id: str
    name: str
    input: Mapping[str, Any] | str = field(default_factory=dict)

    def __post_init__(self) -> None:
        for label, value in (("id", self.id), ("name", self.name)):
            if not isinstance(value, str):
                raise TypeError(f"ToolCall {label} must be a string, got {value!r}")
        if isinstance(self.input, str):
            return
        if not isinstance(self.input, Mapping):
            raise TypeError(f"ToolCall input must be a mapping or a raw JSON string, got {self.input!r}")
        try:
            json.dumps(dict(self.input))
        except (TypeError, ValueError) as err:
            raise TypeError(f"ToolCall input must be JSON-serialisable: {err}") from None

    @property
    def arguments(self) -> str:
        """The arguments as the wire carries them: the raw string, or the mapping as compact JSON."""
        if isinstance(self.input, str):
            return self.input
        return json.dumps(dict(self.input), separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class Behaviour:
    """One scripted answer. Build it with the functions of this module, not directly.

    ``kind`` is one of ``ok``, ``cut``, ``no_stop``, ``http_error``, ``error_event``, ``stall``,
    ``malformed``, ``drop``, ``endless``, ``replay``, ``raw``; the other fields are the parameters
    the kind uses. ``name`` is what reports and ``server.responses`` call it. ``no_choices``
    sends an empty choice/content/output list.
    """

    kind: str
    name: str
    text: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    stop_reason: str | None = None
    delay: float = 0.0
    after: int = 0
    reset: bool = False
    seconds: float | None = None
    status: int = 200
    headers: tuple[tuple[str, str], ...] = ()
    body: Any = None
    error_type: str = "overloaded_error"
    resume: bool = False
    max_events: int | None = None
    exchange: Any = None  # a transcript.Exchange for kind "replay"
    time_scale: float = 0.0
    no_choices: bool = False
    content_type: str | None = None

    @property
    def neutral_stop_reason(self) -> str | None:
        """The stop reason in Anthropic's vocabulary (the default follows the content; None for
        ``NULL_STOP``; a name neither provider uses is passed through as is)."""
        if self.stop_reason is None:
            return "tool_use" if self.tool_calls else "end_turn"
        if self.stop_reason == NULL_STOP:
            return None
        return _OPENAI_TO_NEUTRAL.get(self.stop_reason, self.stop_reason)

    @property
    def openai_finish_reason(self) -> str | None:
        reason = self.neutral_stop_reason
        return None if reason is None else STOP_REASONS_TO_OPENAI.get(reason, reason)


def _check_delay(delay: float) -> float:
    if delay < 0:
        raise ValueError(f"delay must be >= 0 seconds, got {delay!r}")
    return float(delay)


def _check_after(after: int) -> int:
    if not isinstance(after, int) or isinstance(after, bool) or after < 0:
        raise ValueError(f"after must be a whole number of events >= 0, got {after!r}")
    return after


def _calls(tool_calls: Iterable[ToolCall] | None) -> tuple[ToolCall, ...]:
    if isinstance(tool_calls, (ToolCall, str, Mapping)):
        raise TypeError(f"tool_calls must be a list of ToolCall objects, got {tool_calls!r}")
    calls = tuple(tool_calls or ())
    for call in calls:
        if not isinstance(call, ToolCall):
            raise TypeError(f"tool_calls must hold ToolCall objects, got {call!r}")
    return calls


def _headers(headers: Mapping[str, str] | None) -> tuple[tuple[str, str], ...]:
    if headers is not None and not isinstance(headers, Mapping):
        raise TypeError(f"headers must be a mapping of names to values, got {headers!r}")
    pairs = tuple((str(k), str(v)) for k, v in (headers or {}).items())
    for name, value in pairs:
        if not name or any(c in name + value for c in "\r\n") or ":" in name:
            raise ValueError(f"header {name!r}: {value!r} cannot be sent (empty name, colon or line break)")
    return pairs


def _text(text: str | None) -> str | None:
    if text is not None and not isinstance(text, str):
        raise TypeError(f"text must be a string or None, got {text!r}")
    return text


def _stop(stop_reason: str | None) -> str | None:
    if stop_reason is not None and not isinstance(stop_reason, str):
        raise TypeError(f"stop_reason must be a string, None or NULL_STOP, got {stop_reason!r}")
    return stop_reason


def ok(
    text: str | None = "Hello",
    tool_calls: Iterable[ToolCall] | None = None,
    stop_reason: str | None = None,
    delay: float = 0.0,
) -> Behaviour:
    """A complete, well-formed turn: text and/or tool calls, then the stop marker.

    ``stop_reason`` names the reason the turn ends with: a known name in either vocabulary
    (``end_turn``/``stop``, ``tool_use``/``tool_calls``, ``max_tokens``/``length``,
    ``refusal``/``content_filter``) is translated per dialect, any other string (``""`` too) is
    sent as is, ``NULL_STOP`` sends ``null``.
    """
    return Behaviour(
        "ok",
        "ok" if stop_reason is None else f"ok(stop_reason={stop_reason!r})",
        text=_text(text),
        tool_calls=_calls(tool_calls),
        stop_reason=_stop(stop_reason),
        delay=_check_delay(delay),
    )


def length_stop(text: str | None = "partial", delay: float = 0.0) -> Behaviour:
    """A complete stream whose stop reason is ``max_tokens`` (OpenAI ``finish_reason: length``)."""
    return Behaviour(
        "ok", "length_stop", text=_text(text), stop_reason="max_tokens", delay=_check_delay(delay)
    )


def empty(delay: float = 0.0) -> Behaviour:
    """A complete stream with no content block at all (an 'empty success')."""
    return Behaviour("ok", "empty", text=None, delay=_check_delay(delay))


def no_choices(delay: float = 0.0) -> Behaviour:
    """A complete turn whose choice/content/output list is empty: OpenAI ``choices: []`` (streamed:
    chunks without choices), Anthropic ``content: []``, Responses ``output: []``."""
    return Behaviour("ok", "no_choices", text=None, no_choices=True, delay=_check_delay(delay))


def raw(
    body: str | bytes | Mapping[str, Any] | list[Any],
    status: int = 200,
    headers: Mapping[str, str] | None = None,
    content_type: str | None = None,
    delay: float = 0.0,
) -> Behaviour:
    """Any response at all: ``status`` (200 too) with ``body`` sent verbatim (str/bytes) or as
    JSON (dict/list), for replies no other behaviour spells. ``content_type`` defaults to
    ``text/event-stream`` for a streaming request and ``application/json`` otherwise."""
    if not isinstance(status, int) or isinstance(status, bool) or not 100 <= status <= 599:
        raise ValueError(f"raw status must be 100..599, got {status!r}")
    if isinstance(body, (Mapping, list)):
        try:
            body = json.dumps(body).encode()
        except (TypeError, ValueError) as err:
            raise TypeError(f"raw body must be JSON-serialisable: {err}") from None
    elif isinstance(body, str):
        body = body.encode()
    elif not isinstance(body, bytes):
        raise TypeError(f"raw body must be str, bytes, dict or list, got {type(body).__name__}")
    if content_type is not None and not isinstance(content_type, str):
        raise TypeError(f"content_type must be a string, got {content_type!r}")
    pairs = _headers(headers)
    return Behaviour(
        "raw",
        f"raw({status}, {len(body)} bytes)",
        status=status,
        headers=pairs,
        body=body,
        content_type=content_type,
        delay=_check_delay(delay),
    )


def slow(
    delay: float = 0.05, text: str | None = "Hi", tool_calls: Iterable[ToolCall] | None = None
) -> Behaviour:
    """A complete turn with ``delay`` seconds between events."""
    return Behaviour(
        "ok",
        f"slow(delay={delay})",
        text=_text(text),
        tool_calls=_calls(tool_calls),
        delay=_check_delay(delay),
    )


def cut(
    after: int = 3,
    text: str | None = "Hello world",
    reset: bool = False,
    tool_calls: Iterable[ToolCall] | None = None,
    delay: float = 0.0,
) -> Behaviour:
    """The first ``after`` events of the ok-stream, then the TCP connection closes.

    ``reset=False`` closes cleanly (FIN) without the terminating chunk, so an HTTP client sees an
    incomplete body; ``reset=True`` aborts with RST (``SO_LINGER`` 0).
    """
    return Behaviour(
        "cut",
        f"cut(after={after}{', reset' if reset else ''})",
        text=_text(text),
        tool_calls=_calls(tool_calls),
        after=_check_after(after),
        reset=reset,
        delay=_check_delay(delay),
    )


def drop(reset: bool = False, delay: float = 0.0) -> Behaviour:
    """The connection closes before any response byte (no status line): 'connection dropped'."""
    return Behaviour("drop", f"drop({'reset' if reset else 'close'})", reset=reset, delay=_check_delay(delay))


def no_stop(
    text: str | None = "Hi", tool_calls: Iterable[ToolCall] | None = None, delay: float = 0.0
) -> Behaviour:
    """The whole ok-stream minus its end-of-turn marker (``message_stop`` / ``data: [DONE]``),
    ending cleanly: the HTTP body is complete, the turn is not."""
    return Behaviour(
        "no_stop", "no_stop", text=_text(text), tool_calls=_calls(tool_calls), delay=_check_delay(delay)
    )


def http_error(
    status: int, headers: Mapping[str, str] | None = None, body: Any = None, delay: float = 0.0
) -> Behaviour:
    """An HTTP error status with ``headers`` (e.g. ``retry-after``, ``retry-after-ms``).

    ``body`` None gives the dialect's JSON error shape; a dict is sent as JSON, str/bytes verbatim.
    ``delay`` is the wait before the response.
    """
    if not isinstance(status, int) or not 400 <= status <= 599:
        raise ValueError(f"http_error status must be 400..599, got {status!r}")
    pairs = _headers(headers)
    return Behaviour(
        "http_error",
        f"http_error({status})",
        status=status,
        headers=pairs,
        body=body,
        delay=_check_delay(delay),
    )


def error_event(
    after: int = 2, error_type: str = "overloaded_error", text: str | None = "Hi", delay: float = 0.0
) -> Behaviour:
    """``after`` events of the ok-stream, then an in-stream error event, then a clean end."""
    if not isinstance(error_type, str) or not error_type:
        raise TypeError(f"error_type must be a non-empty string, got {error_type!r}")
    return Behaviour(
        "error_event",
        f"error_event(after={after}, {error_type})",
        text=_text(text),
        after=_check_after(after),
        error_type=error_type,
        delay=_check_delay(delay),
    )


def stall(
    seconds: float | None = None, after: int = 0, text: str | None = "Hi", delay: float = 0.0
) -> Behaviour:
    """``after`` events, then silence for ``seconds``, then the rest of the ok-stream.

    ``seconds=None`` stalls until the client goes away or the server closes. The status line and
    headers are always sent first, so a client's connect/first-byte timeouts do not fire.
    """
    if seconds is not None and seconds < 0:
        raise ValueError(f"stall seconds must be >= 0 or None, got {seconds!r}")
    return Behaviour(
        "stall",
        f"stall(seconds={seconds}, after={after})",
        text=_text(text),
        seconds=seconds,
        after=_check_after(after),
        delay=_check_delay(delay),
    )


def malformed(after: int = 2, text: str | None = "Hi", resume: bool = False, delay: float = 0.0) -> Behaviour:
    """``after`` events, then one ``data:`` line that is not JSON, then a clean end
    (``resume=True``: the rest of the ok-stream follows the bad line)."""
    return Behaviour(
        "malformed",
        f"malformed(after={after})",
        text=_text(text),
        after=_check_after(after),
        resume=resume,
        delay=_check_delay(delay),
    )


def endless(text: str = "tick ", delay: float = 0.01, max_events: int | None = None) -> Behaviour:
    """A text stream that never ends: one delta every ``delay`` seconds until the client leaves
    (or the server closes, or ``max_events`` deltas were sent). Use it to check that an agent
    releases the response when it stops reading early."""
    return Behaviour("endless", "endless", text=_text(text), delay=_check_delay(delay), max_events=max_events)


def replay(exchange: Any, time_scale: float = 0.0) -> Behaviour:
    """Serve one recorded exchange byte for byte (see ``transcript.load_transcript``).

    ``time_scale`` multiplies the recorded gaps between chunks: 0 sends as fast as possible,
    1.0 reproduces the original pacing.
    """
    if time_scale < 0:
        raise ValueError(f"time_scale must be >= 0, got {time_scale!r}")
    return Behaviour("replay", f"replay(#{exchange.index})", exchange=exchange, time_scale=time_scale)
