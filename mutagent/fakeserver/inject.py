"""Faults inserted into a test's own script: the fake server's side of fault exploration.

mutagent explores how an agent loop handles the faults its suite never scripts by running a
passing test again with one fault inserted into that test's own script: a transient fault
served *before* scripted step ``at`` (an HTTP 429 with ``retry-after``, a 500, a connection
reset before the first byte), or scripted reply ``at`` *replaced* by a faulted copy of itself
(cut mid-text or mid-tool-arguments, without its end marker, stopped at the length limit, empty,
a malformed ``data:`` line, an ``error`` event, a stall). Either way the step itself stays in
the script: a loop that retries gets the reply it was always going to get, one that does not
shows what it does instead.

The test's code is not touched. When ``MUTAGENT_EXPLORE`` holds a JSON object ``{"fault": ...,
"record": PATH}``, the ``fake_model`` fixture hands the fault to its server (``attach``) and, at
teardown, writes to ``PATH`` what happened: whether the fault was served, its Python spelling
(``b.http_error(429, headers={"retry-after": "1"})``, for a test that scripts it), every
request the agent sent with its arrival time, body digest and outcome, and what the test's call
raised with the frames it passed through (the plugin keeps it: an error escaping the agent's
code is a crash, one the test's own code raises is not). Without the variable
nothing is attached and a suite's own runs pay nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass
from typing import Any

from mutagent.fakeserver import behaviours as b
from mutagent.fakeserver.behaviours import Behaviour, ToolCall
from mutagent.fakeserver.records import canonical_json

ENV = "MUTAGENT_EXPLORE"

# the kinds of fault, in the words of reports; ``transient`` ones are served before a step
HTTP = "http"  # an HTTP error status (``status``), with a wait header (``header``, ``wait``) or not
RESET = "reset"  # the connection reset before the first byte
CUT_TEXT = "cut-text"  # the stream cut mid-text (``reset``: RST instead of FIN)
CUT_TOOL_ARGS = "cut-tool-args"  # the stream cut inside a tool call's arguments
ARGS_CUT = "args-cut"  # a complete turn whose tool arguments are cut short (not JSON)
ARGS_NOT_OBJECT = "args-not-object"  # a complete turn whose tool arguments are JSON but no object
NO_STOP = "no-stop"  # the whole stream without its end-of-turn marker
LENGTH = "length"  # the reply stopped at the output limit
EMPTY = "empty"  # a complete reply with no content
MALFORMED = "malformed"  # a ``data:`` line that is not JSON mid-stream
ERROR_EVENT = "error-event"  # an in-stream ``error`` event (``error_type``)
STALL = "stall"  # silence mid-stream until the client gives up

TRANSIENT = frozenset({HTTP, RESET})
EARLY_STALL_SECONDS = 30.0  # a silence before the first byte: then the connection closes
STREAM_ONLY = frozenset({CUT_TEXT, CUT_TOOL_ARGS, NO_STOP, MALFORMED, ERROR_EVENT, STALL})
KINDS = (
    HTTP,
    RESET,
    CUT_TEXT,
    CUT_TOOL_ARGS,
    ARGS_CUT,
    ARGS_NOT_OBJECT,
    NO_STOP,
    LENGTH,
    EMPTY,
    MALFORMED,
    ERROR_EVENT,
    STALL,
)
TOOL_FAULTS = frozenset({CUT_TOOL_ARGS, ARGS_CUT, ARGS_NOT_OBJECT})  # they need a reply with a tool call


@dataclass(frozen=True)
class Fault:
    """One fault to insert at scripted step ``at`` (0-based, in the order the script serves)."""

    kind: str
    at: int = 0
    status: int = 0  # HTTP
    header: str = ""  # HTTP: "retry-after" or "retry-after-ms" ("" for none)
    wait: float = 0.0  # HTTP: the wait the header asks for, in seconds
    error_type: str = ""  # ERROR_EVENT
    reset: bool = False  # CUT_TEXT: RST instead of FIN
    early: bool = False  # STALL: silence before the first byte (no status line) instead of mid-stream

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown fault kind {self.kind!r}: one of {', '.join(KINDS)}")

    @property
    def transient(self) -> bool:
        return self.kind in TRANSIENT or (self.kind == STALL and self.early)

    @property
    def label(self) -> str:
        """The fault without its place: ``HTTP 429 + retry-after``, ``cut mid-tool-arguments``."""
        if self.kind == HTTP:
            return f"HTTP {self.status}" + (f" + {self.header}" if self.header else "")
        return {
            RESET: "connection reset before the first byte",
            CUT_TEXT: "stream reset mid-text" if self.reset else "stream cut mid-text",
            CUT_TOOL_ARGS: "stream cut mid-tool-arguments",
            ARGS_CUT: "tool arguments cut short",
            ARGS_NOT_OBJECT: "tool arguments not a JSON object",
            NO_STOP: "stream without its end marker",
            LENGTH: "length stop",
            EMPTY: "empty reply",
            MALFORMED: "malformed data: line",
            ERROR_EVENT: f"error event ({self.error_type or 'overloaded_error'})",
            STALL: "stall before the first byte" if self.early else "stall mid-stream",
        }[self.kind]

    def describe(self) -> str:
        """Where it strikes too: ``HTTP 429 + retry-after before request 1``."""
        where = f"before request {self.at + 1}" if self.transient else f"in place of reply {self.at + 1}"
        return f"{self.label} {where}"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Fault:
        return cls(**{key: data[key] for key in cls.__dataclass_fields__ if key in data})


def _header_value(fault: Fault) -> dict[str, str]:
    if not fault.header:
        return {}
    if fault.header == "retry-after-ms":
        return {"retry-after-ms": str(round(fault.wait * 1000))}
    wait = fault.wait
    return {"retry-after": str(int(wait)) if wait == int(wait) else str(wait)}


def _args_cut(events: list[bytes]) -> int | None:
    """How many events to send so that the stream stops right after a tool call's first
    arguments fragment (its arguments are then half an object), or None without one."""
    for position, frame in enumerate(events):
        text = frame.decode("utf-8", errors="replace")
        if (
            '"input_json_delta"' in text
            or "response.function_call_arguments.delta" in text
            or ('"tool_calls"' in text and '"arguments":"' in text and '"arguments":""' not in text)
        ):
            return position + 1
    return None


def _text_cut(events: list[bytes]) -> int | None:
    """How many events to send so that the stream stops right after its first text fragment."""
    for position, frame in enumerate(events):
        text = frame.decode("utf-8", errors="replace")
        if (
            '"text_delta"' in text
            or "response.output_text.delta" in text
            or ('"content":"' in text and '"content":""' not in text and '"choices"' in text)
        ):
            return position + 1
    return None


def _content(scripted: Behaviour) -> tuple[str | None, tuple[ToolCall, ...]] | None:
    """The text and tool calls of a scripted reply, or None when it is no plain turn to fault."""
    if scripted.kind not in ("ok",) or scripted.no_choices:
        return None
    return scripted.text, scripted.tool_calls


def faulted(fault: Fault, scripted: Behaviour, dialect: Any, stream: bool) -> Behaviour | None:
    """The behaviour that serves ``fault`` in place of (or before) ``scripted`` for a request in
    ``dialect`` (a fake-server dialect object), or None when the fault does not fit that step:
    a stream fault for a request that does not stream, a cut mid-tool-arguments of a reply
    without a tool call, a faulted copy of a reply that is no plain turn."""
    if fault.kind == HTTP:
        return b.http_error(fault.status, headers=_header_value(fault))
    if fault.kind == RESET:
        return b.drop(reset=True)
    if fault.kind == STALL and fault.early:
        return b.drop(delay=EARLY_STALL_SECONDS)
    if fault.kind in STREAM_ONLY and not stream:
        return None
    content = _content(scripted)
    if content is None:
        return None
    text, calls = content
    if fault.kind == LENGTH:
        return b.length_stop(text=text or "The first half of the")
    if fault.kind == EMPTY:
        return b.empty()
    if fault.kind == NO_STOP:
        return b.no_stop(text=text, tool_calls=calls)
    if fault.kind in (ARGS_CUT, ARGS_NOT_OBJECT):
        if not calls:
            return None
        broken = [
            ToolCall(
                c.id,
                c.name,
                c.arguments[: max(1, len(c.arguments) // 2)] if fault.kind == ARGS_CUT else "[1, 2]",
            )
            for c in calls
        ]
        return b.ok(text=text, tool_calls=broken)
    from mutagent.fakeserver.dialects import RequestContext

    ctx = RequestContext(index=0, model="fault", stream=True, include_usage=False, input_tokens=1)
    events = dialect.stream_events(b.ok(text=text, tool_calls=calls), ctx)
    if fault.kind == CUT_TEXT:
        after = _text_cut(events) if text else None
        return None if after is None else b.cut(after=after, text=text, tool_calls=calls, reset=fault.reset)
    if fault.kind == CUT_TOOL_ARGS:
        after = _args_cut(events) if calls else None
        return None if after is None else b.cut(after=after, text=text, tool_calls=calls)
    if fault.kind == MALFORMED:
        return b.malformed(after=2, text=text or "Hi")
    if fault.kind == ERROR_EVENT:
        return b.error_event(after=2, error_type=fault.error_type or "overloaded_error", text=text or "Hi")
    if fault.kind == STALL:
        after = _text_cut(events) or 2
        return b.stall(seconds=None, after=after, text=text or "Hi")
    return None


def literal(value: Any) -> str:
    """``value`` as Python source, strings in double quotes (as formatters and most suites write)."""
    if isinstance(value, str):
        if '"' in value and "'" not in value and "\\" not in value and value.isprintable():
            return f"'{value}'"
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{literal(k)}: {literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if isinstance(value, tuple):
        return "(" + ", ".join(literal(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    return repr(value)


def _tool_call_source(call: ToolCall) -> str:
    return f"ToolCall({literal(call.id)}, {literal(call.name)}, {literal(call.input)})"


def source_of(behaviour: Behaviour) -> str:
    """``behaviour`` spelt as a test scripts it (``b`` is ``mutagent.fakeserver.behaviours``)."""
    kind = behaviour.kind
    if kind == "http_error":
        headers = dict(behaviour.headers)
        return f"b.http_error({behaviour.status}" + (f", headers={literal(headers)})" if headers else ")")
    if kind == "drop":
        args = [
            *(["reset=True"] if behaviour.reset else []),
            *([f"delay={behaviour.delay!r}"] if behaviour.delay else []),
        ]
        return f"b.drop({', '.join(args)})"
    args: list[str] = []
    if kind in ("cut", "malformed", "error_event", "stall"):
        args.append(f"after={behaviour.after}")
    if kind == "stall":
        args.append(f"seconds={behaviour.seconds!r}")
    if behaviour.name == "empty":
        return "b.empty()"
    args.append(f"text={literal(behaviour.text)}")  # always: each behaviour has its own default
    if behaviour.tool_calls:
        args.append("tool_calls=[" + ", ".join(_tool_call_source(c) for c in behaviour.tool_calls) + "]")
    if kind == "cut" and behaviour.reset:
        args.append("reset=True")
    if kind == "error_event":
        args.append(f"error_type={literal(behaviour.error_type)}")
    name = {"ok": "length_stop" if behaviour.name == "length_stop" else "ok"}.get(kind, kind)
    return f"b.{name}({', '.join(args)})"


class Inserter:
    """Serves one fault once, before scripted step ``fault.at``; remembers what it served."""

    def __init__(self, fault: Fault) -> None:
        self.fault = fault
        self.served: Behaviour | None = None
        self.request = -1  # the index of the request the fault answered
        self.misfit = ""  # why the fault did not fit the step it was meant for

    def __call__(
        self, step: int, scripted: Behaviour, dialect: Any, stream: bool, request: int = -1
    ) -> Behaviour | None:
        if self.served is not None or self.misfit or step != self.fault.at:
            return None
        behaviour = faulted(self.fault, scripted, dialect, stream)
        if behaviour is None:
            self.misfit = f"{self.fault.label} does not fit step {step + 1} ({scripted.name})"
            return None
        self.served, self.request = behaviour, request
        return behaviour


def request_log(server: Any) -> list[dict[str, Any]]:
    """Every request ``server`` saw: arrival (seconds after the first), path, outcome, body digest."""
    requests = server.requests
    start = requests[0].time if requests else 0.0
    out = []
    for request in requests:
        body = canonical_json(request.body) if request.body is not None else request.raw.decode("latin-1")
        out.append(
            {
                "t": round(request.time - start, 4),
                "path": request.path,
                "outcome": request.outcome,
                "error": request.error,
                "digest": hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()[:16],
            }
        )
    return out


def attach(server: Any, nodeid: str) -> Any:
    """Insert the fault ``MUTAGENT_EXPLORE`` names into ``server``'s script; returns the function
    the fixture calls at teardown to write the record (None when there is nothing to explore)."""
    raw = os.environ.get(ENV)
    if not raw:
        return None
    try:
        order = json.loads(raw)
        fault = Fault.from_json(order["fault"]) if order.get("fault") else None
        path = str(order["record"])
    except (ValueError, KeyError, TypeError):
        return None
    inserter = Inserter(fault) if fault is not None else None
    if inserter is not None:
        server.insert_fault(inserter)

    def write(raised: dict[str, Any] | None = None) -> None:
        served = inserter.served if inserter is not None else None
        record = {
            "test": nodeid,
            "fault": fault.to_json() if fault is not None else None,
            "fired": served is not None,
            "misfit": inserter.misfit if inserter is not None else "",
            "inserted": source_of(served) if served is not None else "",
            "fault_request": inserter.request if inserter is not None else -1,
            "requests": request_log(server),
            "problems": server.problems(),
            "steps": server.scripted_steps,
            "raised": raised,  # what the test's call raised, and through which frames
        }
        try:
            with open(path, "w", encoding="utf-8") as handle:
                json.dump(record, handle)
        except OSError:
            pass  # an observation: a full disk must not fail the user's test

    return write
