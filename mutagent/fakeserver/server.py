"""The fake model server: a real HTTP server on 127.0.0.1 that answers from a script.

Each request consumes one behaviour, in order (or draws one in random mode, or is forwarded
upstream in recording mode). Every request is recorded and checked against the tool-call
invariants; a request beyond the script is answered 500 and remembered, so a suite's fixture
can fail the test at teardown. The server reports protocol facts only: it never decides whether
an agent should retry.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable, Mapping
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

from mutagent.fakeserver.behaviours import Behaviour
from mutagent.fakeserver.conversation import tool_results
from mutagent.fakeserver.dialects import Dialect, RequestContext, dialect_for_path
from mutagent.fakeserver.invariants import check_invariants
from mutagent.fakeserver.plan import PlanError, build_plan
from mutagent.fakeserver.randommode import RandomFaults
from mutagent.fakeserver.records import Headers, RecordedRequest, ResponseRecord, canonical_json
from mutagent.fakeserver.transcript import TranscriptWriter, Upstream, load_transcript
from mutagent.fakeserver.wire import Handler, Responder, read_body

MAX_BODY_BYTES = 10 * 1024 * 1024
JOIN_SECONDS = 5.0
PREFIX = "mutagent fake model: "


def _inspect(
    method: str, path: str, dialect: Dialect | None, raw: bytes, error: str | None
) -> tuple[Any, str | None, int]:
    """The parsed body, why the request is refused (None: it is not) and the status to refuse with."""
    if dialect is None:
        where = "serving POST /v1/messages, POST /v1/chat/completions and POST /v1/responses"
        return None, f"no model API at {method} {path} ({where})", 404
    if method != "POST":
        return None, f"{method} {path} is not allowed: use POST", 405
    if error is not None:
        return None, error, 400
    try:
        body = json.loads(raw) if raw else None
    except (ValueError, RecursionError) as err:  # RecursionError: nesting too deep to parse
        return None, f"request body is not valid JSON ({err})", 400
    return body, dialect.validate(body), 400


class _HTTPServer(ThreadingHTTPServer):
    """Threads are tracked by the owning FakeModelServer, which joins them with a timeout."""

    daemon_threads = True
    block_on_close = False
    allow_reuse_address = False

    def __init__(self, owner: FakeModelServer, port: int) -> None:
        self.owner = owner
        self.io_timeout = owner.io_timeout
        super().__init__(("127.0.0.1", port), Handler)

    def serve(self, handler: Handler) -> None:
        self.owner._serve(handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        thread = threading.Thread(
            target=self._run,
            args=(request, client_address),
            daemon=True,
            name=f"fake-model-{self.server_address[1]}-conn",
        )
        self.owner._track(thread, request)
        thread.start()

    def _run(self, request: Any, client_address: Any) -> None:
        try:
            self.process_request_thread(request, client_address)
        finally:
            self.owner._untrack(threading.current_thread())

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that vanishes mid-request is normal traffic; anything else is a server bug
        that must surface (as a teardown failure) instead of a traceback on stderr."""
        error = sys.exc_info()[1]
        if isinstance(error, OSError):
            return
        self.owner._internal_error(f"handler crashed: {type(error).__name__}: {error}")


class FakeModelServer:
    """A scripted model API on ``127.0.0.1:<OS-assigned port>``.

    Use it as a context manager (``with FakeModelServer() as server:``) or through the pytest
    fixture ``fake_model``. ``random_seed`` turns on random mode from the start (same as calling
    ``random_mode(seed)``); ``upstream`` plus ``record_to`` turn on recording mode.
    """

    def __init__(
        self,
        *,
        port: int = 0,
        random_seed: int | None = None,
        random_weights: Mapping[str, float] | None = None,
        upstream: str | None = None,
        record_to: str | Path | None = None,
        upstream_headers: Mapping[str, str] | None = None,
        max_body_bytes: int = MAX_BODY_BYTES,
        io_timeout: float = 10.0,
    ) -> None:
        self.max_body_bytes = max_body_bytes
        self.io_timeout = io_timeout
        self._port = port
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._closing = threading.Event()
        self._script: deque[Behaviour] = deque()
        self._steps_served = 0  # scripted steps used up so far
        self._inserter: Any = None  # ``inject.Inserter``: a fault served before one scripted step
        self._random: RandomFaults | None = None
        self._upstream: Upstream | None = None
        self._writer: TranscriptWriter | None = None
        self._requests: list[RecordedRequest] = []
        self._responses: list[ResponseRecord] = []
        self._unexpected: list[RecordedRequest] = []
        self._violations: list[str] = []
        self._internal_errors: list[str] = []
        self._threads: dict[threading.Thread, Any] = {}
        self._extra_sockets: dict[threading.Thread, socket.socket] = {}
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._closed = False
        if random_seed is not None:
            self.random_mode(random_seed, random_weights)
        if upstream is not None or record_to is not None:
            if upstream is None or record_to is None:
                raise ValueError("recording needs both upstream= and record_to=")
            self.record(upstream, record_to, upstream_headers)

    # -- lifecycle ----------------------------------------------------------------------------------

    def start(self) -> FakeModelServer:
        """Bind and serve in a background thread (idempotent)."""
        if self._httpd is not None:
            return self
        if self._closed:
            raise RuntimeError("this FakeModelServer was closed; create a new one")
        self._httpd = _HTTPServer(self, self._port)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.01},  # shutdown() waits one poll: keep teardown of every test fast
            daemon=True,
            name=f"fake-model-{self.port}",
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving, end in-flight responses (stalls included) and join every thread."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._closing.set()
        httpd = self._httpd
        if httpd is not None:
            httpd.shutdown()
            with self._lock:
                sockets = list(self._threads.values()) + list(self._extra_sockets.values())
                threads = list(self._threads)
            for sock in sockets:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            deadline = time.monotonic() + JOIN_SECONDS
            for thread in threads:
                thread.join(max(0.0, deadline - time.monotonic()))
                if thread.is_alive():
                    self._internal_error(f"handler thread {thread.name} did not stop within {JOIN_SECONDS}s")
            httpd.server_close()
            if self._thread is not None:
                self._thread.join(JOIN_SECONDS)
        if self._writer is not None:
            self._writer.close()

    def __enter__(self) -> FakeModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError(
                "the fake model server is not started: use it as a context manager or call start()"
            )
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT``: the Anthropic SDK's ``base_url`` (it adds ``/v1/messages``)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """``base_url + "/v1"``: the OpenAI SDK's ``base_url`` (it adds ``/chat/completions`` or
        ``/responses`` to it, without the ``/v1`` the Anthropic SDK adds itself)."""
        return self.base_url + "/v1"

    @staticmethod
    def refused_url() -> str:
        """A base URL on loopback where nothing listens: the connection is refused before any
        byte, the one network failure a server cannot produce (``drop`` closes an accepted
        connection). Point a first client at it to test the agent's connect-error handling."""
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        return f"http://127.0.0.1:{port}"

    # -- configuring what it answers ----------------------------------------------------------------

    def script(self, *behaviours: Behaviour | Iterable[Behaviour]) -> FakeModelServer:
        """Append behaviours; each request consumes the next one. Lists are flattened."""
        flat: list[Behaviour] = []
        for item in behaviours:
            for behaviour in [item] if isinstance(item, Behaviour) else list(item):
                if not isinstance(behaviour, Behaviour):
                    raise TypeError(
                        f"script() takes behaviours (mutagent.fakeserver.behaviours), got {behaviour!r}"
                    )
                flat.append(behaviour)
        with self._lock:
            self._script.extend(flat)
        return self

    def random_mode(
        self,
        seed: int,
        weights: Mapping[str, float] | None = None,
        stall_seconds: float = 1.0,
        retry_after: float = 0.05,
        slow_delay: float = 0.02,
    ) -> FakeModelServer:
        """Once the script is used up, draw each answer by weight (defaults: ``DEFAULT_WEIGHTS``)
        from a generator seeded with ``seed``: same seed, same sequence. No request is
        ``unexpected`` in random mode. ``stall_seconds``, ``retry_after`` and ``slow_delay`` size
        the drawn stalls, 429 waits and slow streams."""
        faults = RandomFaults(
            seed, weights, stall_seconds=stall_seconds, retry_after=retry_after, slow_delay=slow_delay
        )
        with self._lock:
            self._random = faults
        return self

    def record(
        self, upstream: str, path: str | Path, upstream_headers: Mapping[str, str] | None = None
    ) -> FakeModelServer:
        """Forward every (valid) request to ``upstream`` and write each exchange to the JSONL file
        ``path`` (replaced). The client's auth headers are forwarded, never written down;
        ``upstream_headers`` (e.g. a real ``x-api-key``) replace the client's credentials."""
        upstream_ = Upstream(upstream, upstream_headers)
        writer = TranscriptWriter(path)
        with self._lock:
            self._upstream, self._writer = upstream_, writer
        return self

    def replay(self, path: str | Path, time_scale: float = 0.0) -> FakeModelServer:
        """Append a recorded transcript to the script (``time_scale`` 1.0: original pacing)."""
        return self.script(load_transcript(path, time_scale=time_scale))

    def insert_fault(self, inserter: Any) -> FakeModelServer:
        """Consult ``inserter(step, scripted, dialect, stream, request_index)`` before each scripted step:
        a behaviour it returns is served instead, and the step stays in the script (mutagent's
        fault exploration, see ``mutagent.fakeserver.inject``)."""
        with self._lock:
            self._inserter = inserter
        return self

    # -- what happened ------------------------------------------------------------------------------

    @property
    def scripted_steps(self) -> int:
        """How many scripted behaviours requests have used up (an inserted fault is not one)."""
        with self._lock:
            return self._steps_served

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def request_count(self) -> int:
        with self._lock:
            return len(self._requests)

    @property
    def responses(self) -> list[ResponseRecord]:
        with self._lock:
            return list(self._responses)

    @property
    def unexpected(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._unexpected)

    @property
    def violations(self) -> list[str]:
        with self._lock:
            return list(self._violations)

    @property
    def internal_errors(self) -> list[str]:
        with self._lock:
            return list(self._internal_errors)

    @property
    def remaining(self) -> list[str]:
        """Names of the scripted behaviours no request has used yet."""
        with self._lock:
            return [behaviour.name for behaviour in self._script]

    @property
    def drawn(self) -> list[str]:
        """The fault kinds random mode drew so far, in order."""
        with self._lock:
            return list(self._random.drawn) if self._random else []

    @property
    def client_disconnects(self) -> list[int]:
        """Indexes of the requests whose client hung up before the response was over."""
        with self._lock:
            return [r.request_index for r in self._responses if r.client_closed_early]

    def _request(self, index: int) -> RecordedRequest:
        requests = self.requests
        try:
            return requests[index]
        except IndexError:
            raise IndexError(f"no request {index}: the fake model server saw {len(requests)}") from None

    def tool_results(self, index: int = -1) -> dict[str, str]:
        """``{tool_call_id: text}`` of every tool result in request ``index``'s history."""
        request = self._request(index)
        return tool_results(request.body, request.dialect or "anthropic")

    def all_tool_results(self) -> dict[str, str]:
        """Tool results of every request merged, later requests winning."""
        merged: dict[str, str] = {}
        for request in self.requests:
            merged.update(tool_results(request.body, request.dialect or "anthropic"))
        return merged

    def gap(self, i: int, j: int) -> float:
        """Seconds between the arrival of request ``i`` and request ``j``."""
        return self._request(j).time - self._request(i).time

    def bodies_identical(self, i: int, j: int) -> bool:
        """Whether requests ``i`` and ``j`` carry the same JSON (key order and spacing ignored)."""
        first, second = self._request(i), self._request(j)
        if first.body is None or second.body is None:
            return first.raw == second.raw
        return canonical_json(first.body) == canonical_json(second.body)

    def wait_for_responses(self, count: int | None = None, timeout: float = 5.0) -> bool:
        """Wait until at least ``count`` responses exist (default: those so far) and all have
        finished, e.g. before asserting ``client_closed_early``. False on timeout."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                enough = count is None or len(self._responses) >= count
                if enough and all(r.finished for r in self._responses):
                    return True
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._changed.wait(remaining)

    def problems(self, require_consumed: bool = False) -> list[str]:
        """Everything that should fail the test: requests beyond the script, invariant
        violations, internal errors, and (if asked) scripted behaviours never used."""
        with self._lock:
            found = []
            if self._unexpected:
                listed = ", ".join(f"#{r.index} {r.method} {r.path}" for r in self._unexpected)
                found.append(f"{len(self._unexpected)} request(s) beyond the script: {listed}")
            found += [f"invariant violated: {v}" for v in self._violations]
            found += [f"internal error: {e}" for e in self._internal_errors]
            if require_consumed and self._script:
                found.append(
                    f"{len(self._script)} scripted behaviour(s) never requested: "
                    + ", ".join(b.name for b in self._script)
                )
            return found

    def verify(self, require_consumed: bool = False) -> None:
        """Raise ``AssertionError`` listing ``problems()`` if there are any."""
        found = self.problems(require_consumed)
        if found:
            raise AssertionError(PREFIX + "; ".join(found))

    # -- serving (handler threads) ------------------------------------------------------------------

    def _track(self, thread: threading.Thread, sock: Any) -> None:
        with self._lock:
            self._threads[thread] = sock

    def _untrack(self, thread: threading.Thread) -> None:
        with self._lock:
            self._threads.pop(thread, None)
            self._extra_sockets.pop(thread, None)

    def _track_socket(self, sock: socket.socket | None) -> None:
        """Remember an upstream socket of this handler thread so close() can interrupt it."""
        with self._lock:
            if sock is None:
                self._extra_sockets.pop(threading.current_thread(), None)
            else:
                self._extra_sockets[threading.current_thread()] = sock

    def _internal_error(self, message: str) -> None:
        with self._lock:
            self._internal_errors.append(message)

    def _serve(self, handler: Handler) -> None:
        arrived = time.monotonic()
        raw, error = read_body(handler, self.max_body_bytes)
        dialect = dialect_for_path(handler.path)
        body, error, status = _inspect(handler.command, handler.path, dialect, raw, error)
        found: list[str] = []
        if dialect is not None and error is None:
            try:
                found = check_invariants(body, dialect.name)
            except (TypeError, AttributeError, KeyError, ValueError) as err:
                # A body of the right JSON type but the wrong shape inside (``tool_calls: 5``) is
                # the client's mistake: a clear 400, never a dead handler thread.
                error, status = f"request body has an unexpected shape ({type(err).__name__}: {err})", 400
        headers = Headers(handler.headers.items())
        name = dialect.name if dialect else None
        request = RecordedRequest(0, handler.command, handler.path, headers, raw, body, arrived, name)
        behaviour, response = self._admit(request, error, found)
        responder = Responder(handler, self._closing, response, self._track_socket)
        try:
            self._answer(responder, request, dialect, behaviour, status)
        except Exception as err:  # noqa: BLE001 - a fake-server bug must not kill the test run silently
            response.error = f"{type(err).__name__}: {err}"
            self._internal_error(f"request #{request.index}: {response.error}")
            if not responder.head_sent:
                message = f"{PREFIX}internal error: {response.error}"
                responder.send_json(
                    500, {"type": "error", "error": {"type": "api_error", "message": message}}
                )
        finally:
            with self._changed:
                response.finished, response.ended = True, time.monotonic()
                self._changed.notify_all()

    def _admit(
        self, request: RecordedRequest, error: str | None, found: list[str]
    ) -> tuple[Behaviour | None, ResponseRecord]:
        """Record the request and decide, under the lock, what answers it."""
        behaviour = None
        with self._changed:
            request.index = len(self._requests)
            self._requests.append(request)
            if error is not None:
                request.outcome, request.error, name = "bad_request", error, "bad_request"
            elif found:
                request.outcome, name = "violation", "violation"
                request.error = "tool-call invariants broken: " + "; ".join(found)
                self._violations += [f"request #{request.index} ({request.path}): {v}" for v in found]
            elif self._upstream is not None:
                request.outcome, name = "proxied", "proxied"
            elif self._script:
                behaviour = self._next_scripted(request)
                request.outcome, name = "scripted", behaviour.name
            elif self._random is not None:
                behaviour = self._random.next()
                request.outcome, name = "random", behaviour.name
            else:
                request.outcome, name = "unexpected", "unexpected"
                self._unexpected.append(request)
            response = ResponseRecord(request.index, name, started=request.time)
            self._responses.append(response)
            self._changed.notify_all()
        return behaviour, response

    def _next_scripted(self, request: RecordedRequest) -> Behaviour:
        """The next scripted behaviour, or the fault inserted before it (which leaves it in the
        script for the next request). Called under the lock."""
        step = self._script[0]
        if self._inserter is not None:
            dialect = dialect_for_path(request.path)
            stream = isinstance(request.body, dict) and request.body.get("stream") is True
            fault = self._inserter(self._steps_served, step, dialect, stream, request.index)
            if fault is not None:
                return fault
        self._steps_served += 1
        return self._script.popleft()

    def _answer(
        self,
        responder: Responder,
        request: RecordedRequest,
        dialect: Dialect | None,
        behaviour: Behaviour | None,
        status: int,
    ) -> None:
        def error_body(code: int, message: str) -> dict[str, Any]:
            if dialect is None:
                return {"type": "error", "error": {"type": "not_found_error", "message": PREFIX + message}}
            return dialect.error_body(code, PREFIX + message)

        if request.outcome in ("bad_request", "violation"):
            responder.send_json(status, error_body(status, request.error or "bad request"))
        elif request.outcome == "unexpected":
            message = (
                f"request #{request.index} is beyond the script (every scripted behaviour is used); "
                "the test fails at teardown"
            )
            responder.send_json(500, error_body(500, message), [("x-should-retry", "false")])
        elif request.outcome == "proxied":
            assert self._upstream is not None
            responder.proxy(self._upstream, request, self._writer)
        else:
            assert behaviour is not None and dialect is not None
            self._play(responder, request, dialect, behaviour)

    def _play(
        self, responder: Responder, request: RecordedRequest, dialect: Dialect, behaviour: Behaviour
    ) -> None:
        body = request.body
        options = body.get("stream_options") if isinstance(body.get("stream_options"), dict) else {}
        ctx = RequestContext(
            index=request.index,
            model=str(body.get("model")),
            stream=body.get("stream") is True,
            include_usage=bool(options.get("include_usage")),
            input_tokens=max(1, len(request.raw) // 4),
        )
        if behaviour.kind == "replay":
            expected = behaviour.exchange.request_body
            responder.record.replay_body_matched = canonical_json(expected) == canonical_json(body)
        try:
            plan = build_plan(behaviour, dialect, ctx)
        except PlanError as err:
            responder.record.error = str(err)
            responder.send_json(400, dialect.error_body(400, PREFIX + str(err)))
            return
        responder.execute(plan)
