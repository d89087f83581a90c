import asyncio
import time

import pytest
from calc.core import (
    backoff_delay,
    chunk,
    clamp,
    gather_lengths,
    is_retryable,
    merge_counts,
    normalise_name,
    parse_retry_after,
    slow_sum,
    word_count,
)


def test_clamp_inside():
    assert clamp(5, 0, 10) == 5


def test_clamp_edges():
    assert clamp(-1, 0, 10) == 0
    assert clamp(11, 0, 10) == 10


def test_backoff_grows_and_caps():
    assert backoff_delay(0) == 0.5
    assert backoff_delay(2) == 2.0
    assert backoff_delay(10) == 8.0


def test_parse_retry_after():
    assert parse_retry_after("2") == 2.0
    assert parse_retry_after("-3") == 0.0
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None


def test_word_count():
    assert word_count("a  b c") == 3


def test_normalise_name():
    assert normalise_name("  Get Weather ") == "get_weather"


def test_is_retryable():
    assert is_retryable(429)
    assert is_retryable(503)
    assert not is_retryable(400)


def test_chunk():
    assert chunk([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]]


def test_chunk_rejects_zero():
    with pytest.raises(ValueError):
        chunk([1], 0)


def test_merge_counts():
    assert merge_counts({"a": 1}, {"a": 2, "b": 1}) == {"a": 3, "b": 1}


def test_gather_lengths():
    assert asyncio.run(gather_lengths(["ab", "c"])) == [2, 1]


def test_slow_sum():
    assert asyncio.run(slow_sum([1, 2, 3])) == 6


def test_slow_sum_with_pause_sleeps():
    time.sleep(0.2)
    assert asyncio.run(slow_sum([1, 2], pause=0.001)) == 3


def test_slow_backoff_check():
    time.sleep(0.2)
    assert backoff_delay(1, base=1.0) == 2.0


def test_slow_clamp_check():
    time.sleep(0.2)
    assert clamp(3, 4, 5) == 4
