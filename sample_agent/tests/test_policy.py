"""The pure pieces under the loop: header parsing and the tool contract's building blocks (no server)."""

from __future__ import annotations

import pytest

from sample_agent.retry import is_retryable_status, parse_retry_after
from sample_agent.tools import idempotency_key, schema_violation


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after-ms": "250", "retry-after": "3"}, 0.25),
        ({"retry-after-ms": "soon", "retry-after": "3"}, 3.0),
        ({"retry-after": "Tue, 14 Nov 2023 22:13:40 GMT"}, 20.0),
        ({"retry-after": "-5"}, 0.0),
    ],
    ids=["ms-wins", "bad-ms-falls-back", "http-date", "negative"],
)
def test_retry_after_headers(headers, seconds):
    # Unusable headers (garbage, absent) are tested where they matter, on what the agent then
    # waits: test_retries.py::test_429_without_a_usable_retry_after_backs_off.
    now = 1_700_000_000.0  # 2023-11-14 22:13:20 GMT
    assert parse_retry_after(headers, now=lambda: now) == seconds


def test_retryable_statuses():
    assert [
        s
        for s in (400, 401, 403, 404, 408, 409, 413, 422, 429, 500, 502, 503, 504, 529)
        if is_retryable_status(s)
    ] == [408, 409, 429, 500, 502, 503, 504, 529]


def test_booleans_are_not_integers():
    schema = {"type": "object", "properties": {"priority": {"type": "integer"}}}
    assert schema_violation(schema, {"priority": True}) == "argument 'priority' must be of type integer"
    assert schema_violation(schema, {"priority": 2}) is None


def test_idempotency_key_is_canonical_and_scoped():
    key = idempotency_key("acme", "create_ticket", {"title": "VPN", "priority": 1})
    assert key == idempotency_key("acme", "create_ticket", {"priority": 1, "title": "VPN"})
    assert key != idempotency_key("globex", "create_ticket", {"title": "VPN", "priority": 1})
    assert key != idempotency_key("acme", "create_ticket", {"title": "VPN", "priority": 2})
    assert len(key) == 64
