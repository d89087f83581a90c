"""Ten small functions in the styles mutation tools meet every day."""

from __future__ import annotations

import asyncio


def clamp(value: float, low: float, high: float) -> float:
    if value < low:
        return low
    if value > high:
        return high
    return value


def backoff_delay(attempt: int, base: float = 0.5, cap: float = 8.0) -> float:
    delay = base * (2**attempt)
    return min(delay, cap)


def parse_retry_after(value: str | None) -> float | None:
    if value is None or value == "":
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None
    return max(seconds, 0.0)


def word_count(text: str) -> int:
    return len([w for w in text.split() if w])


def normalise_name(name: str) -> str:
    return name.strip().lower().replace(" ", "_")


def is_retryable(status: int) -> bool:
    return status == 429 or status >= 500


def chunk(items: list[int], size: int) -> list[list[int]]:
    if size <= 0:
        raise ValueError("size must be positive")
    return [items[i : i + size] for i in range(0, len(items), size)]


def merge_counts(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    out = dict(a)
    for key, value in b.items():
        out[key] = out.get(key, 0) + value
    return out


async def gather_lengths(texts: list[str]) -> list[int]:
    async def one(text: str) -> int:
        await asyncio.sleep(0)
        return len(text)

    return list(await asyncio.gather(*(one(t) for t in texts)))


async def slow_sum(values: list[int], pause: float = 0.0) -> int:
    total = 0
    for value in values:
        total += value
        if pause:
            await asyncio.sleep(pause)
    return total
