"""Turn a behaviour into the exact bytes and pauses the server will send.

A plan is data (status, headers, a sequence of frames and pauses, how the connection ends), so
the part that touches sockets stays small and every behaviour is tested through the same path.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from mutagent.fakeserver.behaviours import Behaviour
from mutagent.fakeserver.dialects import Dialect, RequestContext, dialect_named

COMPLETE = "complete"  # a well-framed end of the HTTP body (terminating chunk)
CLOSE = "close"  # FIN without finishing the body: the client sees an incomplete body
RESET = "reset"  # RST (SO_LINGER 0)

SSE_HEADERS = (("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache"))
JSON_HEADERS = (("Content-Type", "application/json"),)


@dataclass(frozen=True)
class Frame:
    """Bytes sent as one unit: one SSE event, or a whole JSON body."""

    data: bytes


@dataclass(frozen=True)
class Pause:
    """Wait ``seconds`` (None: until the client leaves or the server closes)."""

    seconds: float | None


@dataclass
class Plan:
    """Everything one response does. ``status`` None sends nothing at all (a dropped connection);
    ``chunked`` False sends ``Content-Length`` framing with ``length`` bytes announced."""

    status: int | None
    headers: list[tuple[str, str]] = field(default_factory=list)
    steps: Iterable[Frame | Pause] = ()
    ending: str = COMPLETE
    chunked: bool = True
    length: int | None = None


class PlanError(ValueError):
    """The behaviour cannot be served for this request (e.g. a stream fault on a non-stream request)."""


def _with_delays(frames: Iterable[Frame | Pause], delay: float) -> Iterator[Frame | Pause]:
    first = True
    for step in frames:
        if isinstance(step, Frame):
            if not first and delay > 0:
                yield Pause(delay)
            first = False
        yield step


def _json_plan(status: int, payload: object, extra: Iterable[tuple[str, str]] = ()) -> Plan:
    if isinstance(payload, bytes):
        body = payload
    elif isinstance(payload, str):
        body = payload.encode()
    else:
        body = json.dumps(payload).encode()
    return Plan(status, [*JSON_HEADERS, *extra], [Frame(body)], COMPLETE, chunked=False, length=len(body))


def _error_plan(bh: Behaviour, dialect: Dialect) -> Plan:
    body = (
        bh.body
        if bh.body is not None
        else dialect.error_body(bh.status, f"mutagent fake model: scripted HTTP {bh.status}")
    )
    plan = _json_plan(bh.status, body, bh.headers)
    if bh.delay:
        plan.steps = [Pause(bh.delay), *plan.steps]
    return plan


def _replay_plan(bh: Behaviour) -> Plan:
    exchange = bh.exchange
    steps: list[Frame | Pause] = []
    previous = 0.0
    for offset, chunk in exchange.chunks:
        gap = (offset - previous) * bh.time_scale
        if gap > 0:
            steps.append(Pause(gap))
        previous = offset
        steps.append(Frame(chunk))
    return Plan(
        exchange.status, list(exchange.replay_headers()), steps, COMPLETE if exchange.complete else CLOSE
    )


def _endless(bh: Behaviour, dialect: Dialect, ctx: RequestContext) -> Iterator[Frame]:
    for event in dialect.endless_head(ctx):
        yield Frame(event)
    head = len(dialect.endless_head(ctx))
    count = itertools.count() if bh.max_events is None else range(bh.max_events)
    for number in count:
        yield Frame(dialect.endless_delta(bh.text or "", ctx, head + number))


def _raw_plan(bh: Behaviour, ctx: RequestContext) -> Plan:
    """The scripted bytes, verbatim, under the scripted status and headers."""
    body: bytes = bh.body
    content_type = bh.content_type or ("text/event-stream" if ctx.stream else "application/json")
    headers = [("Content-Type", content_type), *bh.headers]
    steps: list[Frame | Pause] = [Pause(bh.delay)] if bh.delay else []
    return Plan(bh.status, headers, [*steps, Frame(body)], COMPLETE, chunked=False, length=len(body))


def _non_stream_plan(bh: Behaviour, dialect: Dialect, ctx: RequestContext) -> Plan:
    """A JSON answer: ``delay`` waits before it, a stall withholds it, a cut sends half of it."""
    body = json.dumps(dialect.message_body(bh, ctx)).encode()
    plan = _json_plan(200, body)
    wait = [Pause(bh.delay)] if bh.delay else []
    if bh.kind == "ok":
        plan.steps = [*wait, Frame(body)]
    elif bh.kind == "stall":
        plan.steps = [*wait, Pause(bh.seconds), Frame(body)]
    elif bh.kind == "cut":
        plan.steps, plan.ending = [*wait, Frame(body[: len(body) // 2])], RESET if bh.reset else CLOSE
    else:
        raise PlanError(f'behaviour {bh.name} needs a streaming request ("stream": true)')
    return plan


def build_plan(bh: Behaviour, dialect: Dialect, ctx: RequestContext) -> Plan:
    """The plan that serves ``bh`` to a request in ``dialect``."""
    if bh.kind == "http_error":
        return _error_plan(bh, dialect)
    if bh.kind == "drop":
        return Plan(None, steps=[Pause(bh.delay)] if bh.delay else [], ending=RESET if bh.reset else CLOSE)
    if bh.kind == "replay":
        return _replay_plan(bh)
    if bh.kind == "raw":
        return _raw_plan(bh, ctx)
    if not ctx.stream:
        return _non_stream_plan(bh, dialect, ctx)
    headers = list(SSE_HEADERS)
    if bh.kind == "endless":
        return Plan(200, headers, _with_delays(_endless(bh, dialect, ctx), bh.delay))
    events = dialect.stream_events(bh, ctx)
    head = [Frame(e) for e in events[: bh.after]]
    tail = [Frame(e) for e in events[bh.after :]]
    steps: list[Frame | Pause]
    ending = COMPLETE
    if bh.kind == "ok":
        steps = head + tail
    elif bh.kind == "cut":
        steps, ending = head, RESET if bh.reset else CLOSE
    elif bh.kind == "no_stop":
        steps = [Frame(e) for e in events[:-1]]
    elif bh.kind == "error_event":
        message = "Overloaded (scripted by the fake server)"
        steps = [*head, Frame(dialect.error_event(bh.error_type, message, ctx, len(head)))]
    elif bh.kind == "malformed":
        steps = [*head, Frame(dialect.malformed_event()), *(tail if bh.resume else [])]
    elif bh.kind == "stall":
        steps = [*head, Pause(bh.seconds), *tail]
    else:
        raise PlanError(f"unknown behaviour kind {bh.kind!r}")
    return Plan(200, headers, list(_with_delays(steps, bh.delay)), ending)


def stream_body(bh: Behaviour, dialect: str, model: str = "preview", index: int = 0) -> bytes:
    """The whole SSE body ``bh`` streams in ``dialect`` (a request for ``model``, the
    ``index``-th the server sees), e.g. to serve its prefixes with ``behaviours.raw``."""
    ctx = RequestContext(index=index, model=model, stream=True, include_usage=False, input_tokens=1)
    plan = build_plan(bh, dialect_named(dialect), ctx)
    return b"".join(step.data for step in plan.steps if isinstance(step, Frame))


def event_names(bh: Behaviour, dialect: str = "anthropic", stream: bool = True) -> list[str]:
    """What ``bh`` sends, one entry per frame, for choosing ``after=`` values: the SSE event type
    (Anthropic, Responses) or what the chunk carries (OpenAI Chat), ``malformed`` for a line that is not JSON,
    ``pause`` for a wait, then how the response ends (``complete``, ``close``, ``reset``)."""
    ctx = RequestContext(index=0, model="preview", stream=stream, include_usage=False, input_tokens=1)
    plan = build_plan(bh, dialect_named(dialect), ctx)
    names = [_frame_name(step) for step in itertools.islice(plan.steps, 200)]
    return [*names, plan.ending if plan.status is not None else f"drop:{plan.ending}"]


def _frame_name(step: Frame | Pause) -> str:
    if isinstance(step, Pause):
        return "pause"
    fields = dict(
        line.split(": ", 1) for line in step.data.decode(errors="replace").splitlines() if ": " in line
    )
    if "data" not in fields:
        return "body"
    payload = fields["data"]
    if payload == "[DONE]":
        return "[DONE]"
    try:
        chunk = json.loads(payload)
    except json.JSONDecodeError:
        return "malformed"
    if "event" in fields:
        return fields["event"]
    if not isinstance(chunk, dict):
        return "body"
    if "error" in chunk:
        return "error"
    if not chunk.get("choices"):
        return "usage" if "usage" in chunk else "body"
    choice = chunk["choices"][0]
    if choice.get("finish_reason"):
        return f"finish:{choice['finish_reason']}"
    delta = choice.get("delta", {})
    return "role" if "role" in delta else "tool_calls" if "tool_calls" in delta else "content"
