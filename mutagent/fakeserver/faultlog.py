"""The fault log: which behaviour the fake server served each test, and where in the stream.

mutagent's baseline sets ``MUTAGENT_FAULT_LOG`` to a file; while it is set, the ``fake_model``
fixture attaches this log to its server, and every served script step appends one JSON line:
the test's node id, the dialect, the behaviour, the fault it injects and the stream position it
hits (before the first byte, at the stream's start, mid-text, mid-tool-call arguments, between
blocks, after the finish marker). From those lines the reports tell which faults a suite scripts
and which it never does (``mutagent.reports.faults``). Without the variable nothing is attached
and a suite's own runs pay nothing.

Each line is one ``write`` on a file opened for appending, so the lines of parallel workers do
not interleave.
"""

from __future__ import annotations

import json
import os
from typing import Any

from mutagent.fakeserver.behaviours import Behaviour
from mutagent.fakeserver.dialects import Dialect, RequestContext

ENV = "MUTAGENT_FAULT_LOG"

BEFORE_FIRST_BYTE = "before-first-byte"
STREAM_START = "stream-start"  # the stream is open, no content has begun
MID_TEXT = "mid-text"
MID_TOOL_ARGS = "mid-tool-args"
BETWEEN_BLOCKS = "between-blocks"
AFTER_FINISH = "after-finish"  # the stop/finish reason was sent, the end marker not yet
COMPLETE = "complete"  # the whole stream (a normal turn, a length stop, an empty answer)
MID_BODY = "mid-body"  # a non-streaming JSON body cut in half
NEVER_ENDS = "never-ends"
RECORDED = "recorded"  # a replayed exchange: whatever was recorded


def _event(frame: bytes) -> tuple[str, Any]:
    """(SSE event name or '', parsed data or the raw data string) of one frame."""
    name, data = "", ""
    for line in frame.decode("utf-8", errors="replace").splitlines():
        if line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            data = line[5:].strip()
    try:
        return name, json.loads(data)
    except ValueError:
        return name, data


def _step(state: str, name: str, data: Any) -> str:
    """The stream state after one event, for any dialect (Anthropic messages, OpenAI chat, and the
    ``response.*`` events of a Responses-style stream)."""
    if data == "[DONE]":
        return COMPLETE
    if not isinstance(data, dict):
        return state
    kind = str(data.get("type") or name)
    if kind == "content_block_start":
        block = (data.get("content_block") or {}).get("type")
        return MID_TOOL_ARGS if block in ("tool_use", "server_tool_use") else MID_TEXT
    if kind == "content_block_delta":
        delta = (data.get("delta") or {}).get("type")
        return MID_TOOL_ARGS if delta == "input_json_delta" else MID_TEXT
    if kind in ("content_block_stop", "response.output_item.done", "response.content_part.done"):
        return BETWEEN_BLOCKS
    if kind == "message_delta" or kind in ("response.completed", "response.incomplete"):
        return AFTER_FINISH
    if kind == "message_stop":
        return COMPLETE
    if kind.startswith("response."):
        if "function_call" in kind or "arguments" in kind:
            return MID_TOOL_ARGS
        if "output_text" in kind or "content_part.added" in kind:
            return MID_TEXT
        return state
    choices = data.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        choice = choices[0]
        if choice.get("finish_reason"):
            return AFTER_FINISH
        delta = choice.get("delta") or {}
        if delta.get("tool_calls"):
            return MID_TOOL_ARGS
        if delta.get("content"):
            return MID_TEXT
    return state


def position_after(frames: list[bytes]) -> str:
    """Where a stream stands once ``frames`` are sent."""
    state = STREAM_START
    for frame in frames:
        state = _step(state, *_event(frame))
    return state


def position(behaviour: Behaviour, dialect: Dialect, ctx: RequestContext) -> str:
    """The point in the response where ``behaviour``'s fault strikes."""
    kind = behaviour.kind
    if kind in ("http_error", "drop"):
        return BEFORE_FIRST_BYTE
    if kind == "replay":
        return RECORDED
    if kind == "endless":
        return NEVER_ENDS
    if not ctx.stream:
        return {"cut": MID_BODY, "stall": BEFORE_FIRST_BYTE}.get(kind, COMPLETE)
    if kind == "ok":
        return COMPLETE
    events = dialect.stream_events(behaviour, ctx)
    if kind == "no_stop":
        return position_after(events[:-1])
    return position_after(events[: behaviour.after])


def fault_name(behaviour: Behaviour) -> str:
    """The fault a behaviour injects, in the words of the fault-coverage table."""
    kind = behaviour.kind
    if kind == "ok":
        if behaviour.neutral_stop_reason == "max_tokens":
            return "length-stop"
        if behaviour.text is None and not behaviour.tool_calls:
            return "empty"
        return "tool-call" if behaviour.tool_calls else "ok"
    if kind == "http_error":
        headers = {name.lower() for name, _ in behaviour.headers}
        waits = [h for h in ("retry-after-ms", "retry-after") if h in headers]
        return f"http-{behaviour.status}" + "".join(f"+{h}" for h in waits)
    if kind == "cut":
        return "cut-reset" if behaviour.reset else "cut"
    if kind == "error_event":
        return f"error-event:{behaviour.error_type}"
    if kind == "stall":
        return "stall" if behaviour.seconds is not None else "stall-forever"
    return kind.replace("_", "-")


def record(nodeid: str, behaviour: Behaviour, dialect: Dialect, body: Any, index: int) -> dict[str, Any]:
    """The log line of one served step."""
    stream = isinstance(body, dict) and body.get("stream") is True
    ctx = RequestContext(index=index, model="fault-log", stream=stream, include_usage=False, input_tokens=1)
    try:
        where = position(behaviour, dialect, ctx)
    except Exception:  # noqa: BLE001 - a classification gap must never break the test it observes
        where = "unknown"
    return {
        "test": nodeid,
        "dialect": dialect.name,
        "behaviour": behaviour.name,
        "fault": fault_name(behaviour),
        "position": where,
        "stream": stream,
        "step": index,
        # what the step carries, for fault exploration to know which faults fit it
        "kind": behaviour.kind,
        "text": behaviour.text is not None and not behaviour.no_choices,
        "tools": len(behaviour.tool_calls),
    }


def append(path: str, line: dict[str, Any]) -> None:
    data = (json.dumps(line, sort_keys=True) + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def attach(server: Any, nodeid: str) -> None:
    """Log every step ``server`` serves for test ``nodeid`` (only while ``MUTAGENT_FAULT_LOG`` is set).

    The server's one place where a behaviour meets its dialect (``_play``) is wrapped on this
    instance only, so the server itself knows nothing about the log.
    """
    path = os.environ.get(ENV)
    play = getattr(server, "_play", None)
    if not path or play is None:  # no log asked for, or a server without the hook: observe nothing
        return

    def logged_play(responder: Any, request: Any, dialect: Dialect, behaviour: Behaviour, *rest: Any) -> Any:
        try:
            append(path, record(nodeid, behaviour, dialect, request.body, request.index))
        except OSError:
            pass  # the log is an observation: a full disk must not fail the user's test
        return play(responder, request, dialect, behaviour, *rest)

    server._play = logged_play
