"""When to retry a model call and how long to wait first.

Pure policy, no I/O: the loop classifies each failure into a ``Failure``, asks the policy whether
another attempt is allowed and how long to sleep, and journals the answer. Keeping this apart
from the loop is what lets the tests assert exact planned delays without waiting for them.
"""

from __future__ import annotations

import email.utils
import math
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import anthropic

# Request timeout, conflict (a lock held elsewhere) and rate limit: the same request can succeed
# later. Every other 4xx means the request itself is wrong and sending it again cannot help.
RETRYABLE_STATUSES = frozenset({408, 409, 429})

# Error types an ``error`` event can carry mid-stream (the HTTP status was already 200).
RETRYABLE_ERROR_TYPES = frozenset({"overloaded_error", "api_error", "rate_limit_error", "timeout_error"})


@dataclass(frozen=True)
class Failure:
    """One failed attempt as the journal and the policy see it."""

    reason: str
    retryable: bool
    retry_after: float | None = None
    detail: str = ""


def is_retryable_status(status: int) -> bool:
    """408, 409, 429 and every 5xx (529 overloaded included) are worth another attempt."""
    return status in RETRYABLE_STATUSES or status >= 500


def parse_retry_after(headers: Mapping[str, str], now: Callable[[], float] = time.time) -> float | None:
    """Seconds the server asked us to wait, or None when it did not say.

    ``retry-after-ms`` is the more precise of the two headers Anthropic sends, so it wins;
    ``retry-after`` may be seconds or an HTTP date. Unparseable or negative values are ignored
    rather than trusted.
    """
    milliseconds = headers.get("retry-after-ms")
    if milliseconds is not None:
        try:
            seconds = float(milliseconds) / 1000
        except ValueError:
            seconds = math.nan
        if math.isfinite(seconds) and seconds >= 0:
            return seconds
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = email.utils.parsedate_to_datetime(value).timestamp() - now()
        except (TypeError, ValueError):
            return None
    if not math.isfinite(seconds):
        return None
    return max(0.0, seconds)


def classify_status_error(error: anthropic.APIStatusError, now: Callable[[], float] = time.time) -> Failure:
    """An HTTP error status, or an ``error`` event mid-stream (which the SDK reports with status 200)."""
    if error.status_code == 200:
        error_type = error.type or "error_event"
        return Failure(error_type, error_type in RETRYABLE_ERROR_TYPES, detail=str(error))
    return Failure(
        f"status_{error.status_code}",
        is_retryable_status(error.status_code),
        retry_after=parse_retry_after(error.response.headers, now),
        detail=str(error),
    )


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded attempts; the server's Retry-After honoured exactly up to a cap; otherwise
    exponential backoff with proportional jitter, capped, so clients that failed together do
    not all come back in the same instant."""

    max_attempts: int = 4
    base_delay: float = 0.5
    max_delay: float = 10.0
    jitter: float = 0.1
    max_retry_after: float = 60.0

    def delay(self, failure: Failure, attempt: int, rng: random.Random) -> float:
        """Seconds to sleep after attempt number ``attempt`` failed."""
        if failure.retry_after is not None:
            return min(failure.retry_after, self.max_retry_after)
        exponential = self.base_delay * 2 ** (attempt - 1)
        jittered = exponential * (1 + self.jitter * (2 * rng.random() - 1))
        return min(jittered, self.max_delay)
