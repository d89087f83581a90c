"""What the server remembers about each request and each response.

Tests assert on the *next request* an agent sends (tool results by id, identical retry bodies,
the wait before a retry) and on how the agent handled a response (did it hang up early?). These
records are the evidence; they only report facts and never judge them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any


class Headers(Mapping[str, str]):
    """Read-only, case-insensitive HTTP headers (the last value wins for a repeated name)."""

    def __init__(self, pairs: Iterable[tuple[str, str]] = ()) -> None:
        self._items: dict[str, tuple[str, str]] = {}
        for name, value in pairs:
            self._items[name.lower()] = (name, value)

    def __getitem__(self, name: str) -> str:
        return self._items[name.lower()][1]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._items

    def __iter__(self) -> Iterator[str]:
        return (original for original, _ in self._items.values())

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"Headers({dict(self.items())!r})"


@dataclass
class RecordedRequest:
    """One request as it arrived. ``body`` is the parsed JSON (None when it was not JSON);
    ``time`` is ``time.monotonic()`` at arrival; ``outcome`` says what the server did with it:
    ``scripted``, ``random``, ``proxied``, ``unexpected``, ``violation`` or ``bad_request``;
    ``error`` is the reason given for a rejected request."""

    index: int
    method: str
    path: str
    headers: Headers
    raw: bytes
    body: Any
    time: float
    dialect: str | None = None
    outcome: str = "scripted"
    error: str | None = None


@dataclass
class ResponseRecord:
    """How one response went (``request_index`` points into ``server.requests``).

    ``completed``: the server sent everything the behaviour planned, ending included.
    ``client_closed_early``: the client hung up before that (it released the connection).
    ``server_closed``: ``server.close()`` ended the response. ``finished``: the handler is done.
    ``frames_sent`` counts SSE events (or body frames) written.
    """

    request_index: int
    behaviour: str
    status: int | None = None
    frames_sent: int = 0
    completed: bool = False
    client_closed_early: bool = False
    server_closed: bool = False
    finished: bool = False
    error: str | None = None
    replay_body_matched: bool | None = None
    started: float = 0.0
    ended: float | None = None


def canonical_json(value: Any) -> str:
    """One spelling per JSON value, so two bodies compare equal exactly when their data does."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
