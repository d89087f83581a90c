"""How the baseline's tests are cut into measured batches.

A measured batch is a contiguous slice of the collection order, run in one forked child that
starts coverage once: module- and class-scoped fixtures are set up once per slice and the tests
run in the order a plain pytest run has them. Workers take batches as they come free, so the
batch sizes decide how evenly the baseline ends. Equal slices leave one worker running the
slowest slice while the others wait: on the generic target, the three 0.2 s tests at the end of
the file kept one worker busy for 0.6 s after the other had finished, and the first mutant
waited for it.

So the slices shrink as the suite is used up (guided self-scheduling): each batch takes a
1 / (2 × workers) share of what is left, at least one test, and the last batches are single tests,
so a slow test near the end costs only itself. When durations are known (an incremental run has
the previous baseline's), the shares are of expected time rather than of test count.
"""

from __future__ import annotations

import math
from collections.abc import Callable

SHARES_PER_WORKER = 2  # more balances uneven tests better; each batch starts coverage once


def measured_batches(
    tests: list[str], workers: int, expected: Callable[[str], float] | None = None
) -> list[list[str]]:
    """``tests`` cut into contiguous batches of decreasing size (``expected`` seconds each, or a
    count of tests when ``None``)."""
    weight = expected if expected is not None else (lambda _test: 1.0)
    shares = SHARES_PER_WORKER * max(1, workers)
    weights = [max(0.0, weight(test)) for test in tests]
    remaining = sum(weights)
    batches: list[list[str]] = []
    start = 0
    while start < len(tests):
        goal = remaining / shares
        if expected is None:
            goal = math.ceil(goal)
        end, total = start + 1, weights[start]
        while end < len(tests) and total + weights[end] <= goal:
            total += weights[end]
            end += 1
        batches.append(tests[start:end])
        remaining -= total
        start = end
    return batches
