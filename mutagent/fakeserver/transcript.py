"""Record exchanges with an upstream model API as JSONL, and load them back as a script.

The log is the test asset: record once against the real API (or anything that speaks it), then
replay the exact bytes, with their timing, as many times as needed and without a key. One line
per exchange: request (method, path, redacted headers, parsed body) and response (status,
headers, raw body chunks with their arrival offsets, whether the body ended properly).
Credentials never reach the file: authentication headers are replaced by ``[redacted]``.
"""

from __future__ import annotations

import base64
import http.client
import json
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

from mutagent.fakeserver import behaviours as b
from mutagent.fakeserver.behaviours import Behaviour

FORMAT_VERSION = 1
REDACTED = "[redacted]"
SECRET_HEADERS = frozenset(
    {"authorization", "x-api-key", "api-key", "proxy-authorization", "cookie", "set-cookie"}
)
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "content-length",
        "host",
    }
)
#: Response headers a replay does not repeat: framing and per-connection facts the server sets itself.
NOT_REPLAYED = HOP_BY_HOP | {"content-encoding", "date", "server", "set-cookie"}


class TranscriptError(ValueError):
    """A transcript file that cannot be read (the message names the file and line)."""


def redact(headers: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """Headers safe to write down: secrets replaced, everything else kept."""
    return [(k, REDACTED if k.lower() in SECRET_HEADERS else v) for k, v in headers]


@dataclass
class Exchange:
    """One recorded request/response pair; ``chunks`` are (seconds since the request, bytes)."""

    index: int
    method: str
    path: str
    request_headers: list[tuple[str, str]]
    request_body: Any
    status: int
    headers: list[tuple[str, str]]
    chunks: list[tuple[float, bytes]] = field(default_factory=list)
    complete: bool = True

    @property
    def body(self) -> bytes:
        return b"".join(chunk for _, chunk in self.chunks)

    def replay_headers(self) -> Iterator[tuple[str, str]]:
        return ((k, v) for k, v in self.headers if k.lower() not in NOT_REPLAYED)

    def to_json(self) -> dict[str, Any]:
        chunks = []
        for offset, data in self.chunks:
            try:
                chunks.append({"t": round(offset, 6), "text": data.decode("utf-8")})
            except UnicodeDecodeError:
                chunks.append({"t": round(offset, 6), "b64": base64.b64encode(data).decode("ascii")})
        return {
            "version": FORMAT_VERSION,
            "index": self.index,
            "request": {
                "method": self.method,
                "path": self.path,
                "headers": [list(h) for h in redact(self.request_headers)],
                "body": self.request_body,
            },
            "response": {
                "status": self.status,
                "headers": [list(h) for h in redact(self.headers)],
                "chunks": chunks,
                "complete": self.complete,
            },
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Exchange:
        request, response = data["request"], data["response"]
        chunks = [
            (float(c["t"]), c["text"].encode("utf-8") if "text" in c else base64.b64decode(c["b64"]))
            for c in response["chunks"]
        ]
        return cls(
            int(data.get("index", 0)),
            request.get("method", "POST"),
            request["path"],
            [tuple(h) for h in request.get("headers", [])],
            request.get("body"),
            int(response["status"]),
            [tuple(h) for h in response.get("headers", [])],
            chunks,
            bool(response.get("complete", True)),
        )


def load_exchanges(path: str | Path) -> list[Exchange]:
    """Every exchange of a JSONL transcript, in order."""
    source = Path(path)
    try:
        lines = source.read_text(encoding="utf-8").splitlines()
    except OSError as err:
        raise TranscriptError(f"cannot read transcript {source}: {err.strerror}") from None
    exchanges = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            exchanges.append(Exchange.from_json(json.loads(line)))
        except (ValueError, KeyError, TypeError) as err:
            raise TranscriptError(f"{source}:{number}: not a transcript exchange ({err})") from None
    return exchanges


def load_transcript(path: str | Path, time_scale: float = 0.0) -> list[Behaviour]:
    """A transcript as a script: one replay behaviour per exchange."""
    return [b.replay(exchange, time_scale=time_scale) for exchange in load_exchanges(path)]


class TranscriptWriter:
    """Writes exchanges to a JSONL file as they finish (thread-safe, flushed per line).

    The file is replaced, not appended to: one recording session is one transcript.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[str] | None = self.path.open("w", encoding="utf-8")
        self._lock = threading.Lock()
        self.count = 0

    def write(self, exchange: Exchange) -> None:
        line = json.dumps(exchange.to_json(), ensure_ascii=False)
        with self._lock:
            if self._file is None:
                return
            self._file.write(line + "\n")
            self._file.flush()
            self.count += 1

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None


class Upstream:
    """Where recording mode forwards requests: a base URL such as ``https://api.anthropic.com``.

    ``headers`` (e.g. ``{"x-api-key": os.environ["ANTHROPIC_API_KEY"]}``) are added to every
    forwarded request; when given, the client's own credentials are dropped, so an agent under
    test with a dummy key can record against the real API.
    """

    def __init__(
        self, base_url: str, headers: Mapping[str, str] | None = None, timeout: float = 120.0
    ) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"upstream must be an http(s) base URL, got {base_url!r}")
        self.base_url = base_url
        self._parts = parts
        self._headers = dict(headers or {})
        self.timeout = timeout

    def _forwarded(self, headers: Iterable[tuple[str, str]], length: int) -> list[tuple[str, str]]:
        replaced = {name.lower() for name in self._headers}
        if self._headers:
            replaced |= SECRET_HEADERS
        dropped = HOP_BY_HOP | replaced | {"accept-encoding"}
        kept = [(k, v) for k, v in headers if k.lower() not in dropped]
        return [
            *kept,
            *self._headers.items(),
            ("Accept-Encoding", "identity"),
            ("Content-Length", str(length)),
        ]

    def open(
        self,
        method: str,
        path: str,
        headers: Iterable[tuple[str, str]],
        body: bytes,
        on_connect: Callable[[socket.socket], None] = lambda sock: None,
    ) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse, float]:
        """Send the request; return the connection, the response (headers read) and the start time.

        ``on_connect`` gets the socket as soon as it exists, so a closing server can interrupt a
        slow upstream. Asks for an uncompressed body so the transcript holds readable SSE.
        """
        cls = http.client.HTTPSConnection if self._parts.scheme == "https" else http.client.HTTPConnection
        conn = cls(self._parts.hostname, self._parts.port, timeout=self.timeout)
        try:
            conn.connect()
        except OSError:
            conn.close()
            raise
        on_connect(conn.sock)
        target = self._parts.path.rstrip("/") + path
        forwarded = self._forwarded(headers, len(body))
        started = time.monotonic()
        try:
            conn.putrequest(method, target, skip_accept_encoding=True)
            for name, value in forwarded:
                conn.putheader(name, value)
            conn.endheaders(body)
            return conn, conn.getresponse(), started
        except (OSError, http.client.HTTPException):
            conn.close()
            raise
