"""Seeded random faults: one behaviour drawn by weight per request, reproducible from the seed.

The default weights are a test-pressure profile (see the fault-server write-up the project grew
from), not an estimate of how often real providers fail. Every parameter of a drawn behaviour
(where to cut, which 5xx) comes from the same seeded generator, and nothing depends on the
request, so one seed always gives one sequence.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping

from mutagent.fakeserver import behaviours as b
from mutagent.fakeserver.behaviours import Behaviour

DEFAULT_WEIGHTS: dict[str, float] = {
    "ok": 48,
    "slow": 10,
    "cut": 10,
    "reset": 5,
    "drop": 5,
    "empty": 5,
    "429": 5,
    "5xx": 4,
    "length": 2,
    "stall": 2,
    "503": 2,
    "no_stop": 1,
    "malformed": 1,
}

_WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet")


class RandomFaults:
    """Draw behaviours by weight. ``stall_seconds`` bounds a drawn stall; ``retry_after`` is the
    wait a drawn 429 announces (``retry-after-ms`` exactly, ``retry-after`` rounded up)."""

    def __init__(
        self,
        seed: int,
        weights: Mapping[str, float] | None = None,
        stall_seconds: float = 1.0,
        retry_after: float = 0.05,
        slow_delay: float = 0.02,
    ) -> None:
        chosen = dict(DEFAULT_WEIGHTS if weights is None else weights)
        unknown = sorted(set(chosen) - set(DEFAULT_WEIGHTS))
        if unknown:
            raise ValueError(
                f"unknown fault kind(s) {', '.join(unknown)}; known: {', '.join(DEFAULT_WEIGHTS)}"
            )
        if any(w < 0 for w in chosen.values()) or not any(w > 0 for w in chosen.values()):
            raise ValueError("random weights must be >= 0 with at least one > 0")
        self.seed = seed
        self.weights = chosen
        self.stall_seconds = stall_seconds
        self.retry_after = retry_after
        self.slow_delay = slow_delay
        self._rng = random.Random(seed)
        self._kinds = list(chosen)
        self._weights = [chosen[k] for k in self._kinds]
        self.drawn: list[str] = []
        self._makers: dict[str, Callable[[str], Behaviour]] = {
            "ok": lambda text: b.ok(text=text),
            "slow": lambda text: b.slow(delay=self.slow_delay, text=text),
            "cut": lambda text: b.cut(after=self._rng.randint(1, 4), text=text),
            "reset": lambda text: b.cut(after=self._rng.randint(1, 4), text=text, reset=True),
            "drop": lambda text: b.drop(reset=self._rng.random() < 0.5),
            "empty": lambda text: b.empty(),
            "429": lambda text: b.http_error(429, headers=self._retry_headers()),
            "5xx": lambda text: b.http_error(self._rng.choice((500, 502, 504))),
            "length": lambda text: b.length_stop(text=text),
            "stall": lambda text: b.stall(
                seconds=self.stall_seconds, after=self._rng.randint(0, 3), text=text
            ),
            "503": lambda text: b.http_error(503),
            "no_stop": lambda text: b.no_stop(text=text),
            "malformed": lambda text: b.malformed(after=self._rng.randint(1, 3), text=text),
        }

    def _retry_headers(self) -> dict[str, str]:
        return {
            "retry-after-ms": str(round(self.retry_after * 1000)),
            "retry-after": str(max(0, math.ceil(self.retry_after))),
        }

    def next(self) -> Behaviour:
        """The next behaviour of the sequence."""
        kind = self._rng.choices(self._kinds, self._weights)[0]
        text = " ".join(self._rng.choice(_WORDS) for _ in range(self._rng.randint(2, 6)))
        self.drawn.append(kind)
        return self._makers[kind](text)


def draw(seed: int, count: int, weights: Mapping[str, float] | None = None) -> list[Behaviour]:
    """The first ``count`` behaviours seed ``seed`` gives, without a server (for previews and tests)."""
    faults = RandomFaults(seed, weights)
    return [faults.next() for _ in range(count)]
