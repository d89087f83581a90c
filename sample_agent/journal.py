"""An append-only JSONL journal of everything one conversation did.

Two streams share the file and never mix: ``chunk`` events are the raw stream events exactly as
they arrived (failed attempts included, so a replay can rebuild what happened), and ``message``
events are assembled messages, written only when an attempt succeeded and naming the chunks they
came from. History is derived from messages only, so a failed attempt's partial output is kept as
evidence without ever entering history. Retries are explicit events (``retry`` with attempt,
reason and planned delay before the wait, ``retry_start`` after it) instead of a loop hidden in a
library, so "why was this turn slow" has an answer on disk.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


class Journal:
    """Keeps events in memory and, given a path, appends each one to a JSONL file as it happens."""

    def __init__(self, path: str | Path | None = None, clock: Callable[[], float] = time.time) -> None:
        self.path = Path(path) if path is not None else None
        self.events: list[dict[str, Any]] = []
        self._clock = clock

    def record(self, kind: str, **fields: Any) -> int:
        """Append one event and return its sequence number (its position in the journal)."""
        event = {"seq": len(self.events), "kind": kind, "time": self._clock(), **fields}
        self.events.append(event)
        if self.path is not None:
            with self.path.open("a", encoding="utf-8") as out:
                out.write(json.dumps(event, ensure_ascii=False) + "\n")
        return event["seq"]

    def of_kind(self, kind: str) -> list[dict[str, Any]]:
        return [event for event in self.events if event["kind"] == kind]

    @staticmethod
    def load(path: str | Path) -> list[dict[str, Any]]:
        """Read a journal file back, one event per line."""
        with Path(path).open(encoding="utf-8") as lines:
            return [json.loads(line) for line in lines if line.strip()]
