"""The socket side of one response: write a plan, notice a client that leaves, forward upstream.

Every wait polls the client's socket, so a handler whose client hung up (or whose server is
closing) stops within a fraction of a second instead of sleeping out a stall: that is what keeps
threads and sockets from leaking across tests, and what lets tests see whether an agent released
a response it stopped reading.
"""

from __future__ import annotations

import http.client
import json
import select
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler
from typing import Any

from mutagent.fakeserver.plan import COMPLETE, RESET, Frame, Pause, Plan
from mutagent.fakeserver.records import RecordedRequest, ResponseRecord
from mutagent.fakeserver.transcript import Exchange, TranscriptWriter, Upstream

POLL_SECONDS = 0.05
READ_PIECE = 64 * 1024


class Handler(BaseHTTPRequestHandler):
    """One connection, one request: the server's ``serve`` callable does the work.

    ``Connection: close`` on every response keeps the bookkeeping one-request-per-connection; a
    response planned to end with a reset sets ``reset_on_close`` and the socket is closed with
    ``SO_LINGER`` 0 once the buffered file objects are released.
    """

    protocol_version = "HTTP/1.1"
    server_version = "mutagent-fake-model/1"
    reset_on_close = False

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(self.server.io_timeout)  # type: ignore[attr-defined]

    def handle(self) -> None:
        self.close_connection = True
        self.handle_one_request()

    def _dispatch(self) -> None:
        self.server.serve(self)  # type: ignore[attr-defined]

    do_POST = do_GET = do_PUT = do_PATCH = do_DELETE = _dispatch

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        """Silence per-request logging: the records are the log."""

    def finish(self) -> None:
        super().finish()
        if self.reset_on_close:
            try:
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.connection.close()
            except OSError:
                pass


def read_body(handler: BaseHTTPRequestHandler, limit: int) -> tuple[bytes, str | None]:
    """The request body, or an empty body and the reason it was refused.

    An oversized body is read and discarded (up to four times the limit) so that the client is
    still listening when the 400 arrives.
    """
    encoding = handler.headers.get("Transfer-Encoding")
    if encoding and encoding.strip().lower() != "identity":
        return b"", "chunked request bodies are not supported: send Content-Length"
    declared = handler.headers.get("Content-Length")
    if declared is None:
        return b"", None
    try:
        length = int(declared)
        if length < 0:
            raise ValueError
    except ValueError:
        return b"", f"invalid Content-Length {declared!r}"
    try:
        if length > limit:
            left = min(length, 4 * limit)
            while left > 0:
                piece = handler.rfile.read(min(READ_PIECE, left))
                if not piece:
                    break
                left -= len(piece)
            return b"", f"request body of {length} bytes is over the {limit}-byte limit"
        raw = handler.rfile.read(length)
    except OSError as err:
        return b"", f"the client went away while sending the body ({type(err).__name__})"
    if len(raw) < length:
        return raw, f"request body ended after {len(raw)} of {length} bytes"
    return raw, None


class Responder:
    """Writes one response to ``handler``'s socket and keeps ``record`` up to date."""

    def __init__(
        self,
        handler: Handler,
        closing: threading.Event,
        record: ResponseRecord,
        track_socket: Callable[[socket.socket | None], None],
    ) -> None:
        self.handler = handler
        self.sock: socket.socket = handler.connection
        self.closing = closing
        self.record = record
        self.head_sent = False
        self._chunked = True
        self._track_socket = track_socket

    # -- noticing that the other side is gone ------------------------------------------------------

    def client_gone(self) -> bool:
        """True once the client closed or reset its side (a readable socket with nothing to read)."""
        try:
            readable, _, _ = select.select([self.sock], [], [], 0)
            if not readable:
                return False
            return self.sock.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):
            return True

    def _still_on(self) -> bool:
        if self.closing.is_set():
            self.record.server_closed = True
            return False
        if self.client_gone():
            self.record.client_closed_early = True
            return False
        return True

    def wait(self, seconds: float | None) -> bool:
        """Wait ``seconds`` (None: forever); False if the client left or the server closed first."""
        deadline = None if seconds is None else time.monotonic() + seconds
        while self._still_on():
            remaining = POLL_SECONDS if deadline is None else deadline - time.monotonic()
            if remaining <= 0:
                return True
            step = min(POLL_SECONDS, remaining)
            try:
                readable, _, _ = select.select([self.sock], [], [], step)
            except (OSError, ValueError):
                readable = [self.sock]
            if readable and not self.client_gone():
                self.closing.wait(step)  # unread client bytes: do not spin on a readable socket
        return False

    # -- writing ------------------------------------------------------------------------------------

    def _send(self, data: bytes) -> bool:
        return self._guarded(lambda: self.handler.wfile.write(data))

    def _guarded(self, write: Callable[[], object]) -> bool:
        """Run one socket write unless the client left or the server is closing; record why not."""
        if not self._still_on():
            return False
        try:
            write()
        except TimeoutError:
            self.record.error = "the client stopped reading (write timed out)"
            return False
        except OSError:
            if self.closing.is_set():
                self.record.server_closed = True
            else:
                self.record.client_closed_early = True
            return False
        return True

    def send_head(
        self, status: int, headers: Iterable[tuple[str, str]], chunked: bool = True, length: int | None = None
    ) -> bool:
        self.record.status = status
        self._chunked = chunked
        self.head_sent = True
        handler = self.handler
        handler.send_response(status)
        for name, value in headers:
            handler.send_header(name, value)
        handler.send_header("Connection", "close")
        if chunked:
            handler.send_header("Transfer-Encoding", "chunked")
        else:
            handler.send_header("Content-Length", str(length or 0))
        return self._guarded(handler.end_headers)

    def send_frame(self, data: bytes) -> bool:
        if not data:
            return True  # an empty chunk would end a chunked body
        framed = b"%x\r\n%s\r\n" % (len(data), data) if self._chunked else data
        if not self._send(framed):
            return False
        self.record.frames_sent += 1
        return True

    def end(self, ending: str) -> None:
        if ending == COMPLETE and self._chunked:
            if not self._send(b"0\r\n\r\n"):
                return
        elif ending == RESET:
            self.handler.reset_on_close = True
        self.record.completed = True

    def send_json(self, status: int, payload: Any, headers: Iterable[tuple[str, str]] = ()) -> None:
        body = json.dumps(payload).encode()
        if self.send_head(
            status, [("Content-Type", "application/json"), *headers], chunked=False, length=len(body)
        ) and self.send_frame(body):
            self.record.completed = True

    def execute(self, plan: Plan) -> None:
        """Carry out ``plan``. Non-chunked plans send their head just before the first frame, so a
        leading pause delays the whole response; chunked plans send the head at once."""
        if plan.status is not None and plan.chunked and not self.send_head(plan.status, plan.headers):
            return
        for step in plan.steps:
            if isinstance(step, Pause):
                if not self.wait(step.seconds):
                    return
                continue
            assert isinstance(step, Frame)
            if not self.head_sent and plan.status is not None:
                if not self.send_head(plan.status, plan.headers, plan.chunked, plan.length):
                    return
            if not self.send_frame(step.data):
                return
        if plan.status is not None and not self.head_sent:
            if not self.send_head(plan.status, plan.headers, plan.chunked, plan.length):
                return
        self.end(plan.ending)

    # -- recording mode -----------------------------------------------------------------------------

    def proxy(self, upstream: Upstream, request: RecordedRequest, writer: TranscriptWriter | None) -> None:
        """Forward ``request`` upstream, stream the answer back and save the exchange."""
        try:
            conn, response, started = upstream.open(
                request.method, request.path, request.headers.items(), request.raw, self._track_socket
            )
        except (OSError, http.client.HTTPException) as err:
            self._track_socket(None)
            self.record.error = f"upstream {upstream.base_url} unreachable: {err}"
            self.send_json(
                502,
                {
                    "type": "error",
                    "error": {"type": "api_error", "message": f"mutagent fake model: {self.record.error}"},
                },
            )
            return
        exchange = Exchange(
            request.index,
            request.method,
            request.path,
            list(request.headers.items()),
            request.body,
            response.status,
            response.getheaders(),
        )
        complete = False
        try:
            complete = self._relay(response, exchange, started)
        finally:
            self._track_socket(None)
            conn.close()
            exchange.complete = complete
            if writer is not None:
                writer.write(exchange)

    def _relay(self, response: http.client.HTTPResponse, exchange: Exchange, started: float) -> bool:
        if not self.send_head(response.status, exchange.replay_headers()):
            return False
        while True:
            try:
                data = response.read1(READ_PIECE)
            except (OSError, http.client.HTTPException):
                self.end("close")
                return False
            if not data:
                self.end(COMPLETE)
                return True
            exchange.chunks.append((time.monotonic() - started, data))
            if not self.send_frame(data):
                return False
