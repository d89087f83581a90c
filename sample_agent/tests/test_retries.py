"""Which failures the agent retries, how many requests it sends, and how long it plans to wait.

The fixture fails a test whose agent sends a request beyond the script, so every script here is
also an exact upper bound on the number of requests.
"""

from __future__ import annotations

import pytest

from mutagent.fakeserver import behaviours as b
from sample_agent.loop import ModelCallError, RetriesExhaustedError
from sample_agent.retry import RetryPolicy


@pytest.mark.parametrize("reset", [False, True], ids=["closed", "reset"])
def test_a_stream_cut_mid_event_is_retried(fake_model, make_agent, reset):
    h = make_agent()
    fake_model.script(b.cut(after=3, text="Hello there world", reset=reset), b.ok(text="Hello there world"))

    assert h.agent.run("greet me") == "Hello there world"

    assert fake_model.request_count == 2
    assert fake_model.bodies_identical(0, 1)
    assert [(r["attempt"], r["reason"]) for r in h.retries()] == [(1, "disconnect")]


def test_a_connection_dropped_before_the_response_is_retried(fake_model, make_agent):
    h = make_agent()
    fake_model.script(b.drop(), b.ok(text="Hi"))

    assert h.agent.run("hello") == "Hi"

    assert fake_model.request_count == 2
    assert fake_model.bodies_identical(0, 1)
    assert [r["reason"] for r in h.retries()] == ["connection_error"]


def test_a_stream_without_message_stop_is_retried(fake_model, make_agent):
    h = make_agent()
    fake_model.script(b.no_stop(text="Almost done"), b.ok(text="Done."))

    assert h.agent.run("finish") == "Done."

    assert fake_model.request_count == 2
    assert fake_model.requests[1].raw == fake_model.requests[0].raw
    assert [r["reason"] for r in h.retries()] == ["missing_message_stop"]
    assert [m["content"] for m in h.journal.of_kind("message") if m["role"] == "assistant"] == [
        [{"type": "text", "text": "Done."}]
    ]


@pytest.mark.parametrize(
    ("headers", "planned"),
    [
        ({"retry-after": "2"}, 2.0),
        ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
        ({"retry-after": "3600"}, 60.0),
    ],
    ids=["seconds", "ms-preferred", "capped"],
)
def test_429_waits_what_retry_after_says(fake_model, make_agent, headers, planned):
    h = make_agent()
    fake_model.script(b.http_error(429, headers=headers), b.ok(text="Hi"))

    assert h.agent.run("hello") == "Hi"

    assert fake_model.request_count == 2
    assert h.sleep.calls == [planned]
    assert [(r["reason"], r["delay"]) for r in h.retries()] == [("status_429", planned)]


@pytest.mark.parametrize("headers", [{"retry-after": "whenever"}, {}], ids=["garbage", "absent"])
def test_429_without_a_usable_retry_after_backs_off(fake_model, make_agent, headers):
    """An unparseable or missing Retry-After is neither trusted nor a reason to hammer the server:
    the agent falls back to its own exponential backoff (0.5 s for the first retry, +-10 % jitter)."""
    h = make_agent()
    fake_model.script(b.http_error(429, headers=headers), b.ok(text="Hi"))

    assert h.agent.run("hello") == "Hi"

    assert fake_model.request_count == 2
    [planned] = h.sleep.calls
    assert 0.45 <= planned <= 0.55
    assert [(r["reason"], r["delay"]) for r in h.retries()] == [("status_429", planned)]


def test_429_gives_up_after_the_attempt_limit(fake_model, make_agent):
    h = make_agent(policy=RetryPolicy(max_attempts=3))
    fake_model.script(*[b.http_error(429, headers={"retry-after": "1"}) for _ in range(3)])

    with pytest.raises(
        RetriesExhaustedError, match="gave up after 3 attempts; last failure: status_429"
    ) as raised:
        h.agent.run("hello")

    assert raised.value.attempts == 3
    assert fake_model.request_count == 3
    assert h.sleep.calls == [1.0, 1.0]
    assert h.journal.of_kind("give_up")[0]["attempt"] == 3


def test_malformed_json_gives_up_after_bounded_retries(fake_model, make_agent):
    h = make_agent(policy=RetryPolicy(max_attempts=2))
    fake_model.script(b.malformed(after=2), b.malformed(after=2))

    with pytest.raises(RetriesExhaustedError, match="malformed_event"):
        h.agent.run("hello")

    assert fake_model.request_count == 2
    assert fake_model.bodies_identical(0, 1)
    assert len(h.sleep.calls) == 1


@pytest.mark.parametrize(
    ("error_type", "retried"),
    [
        ("overloaded_error", True),
        ("api_error", True),
        ("rate_limit_error", True),
        ("timeout_error", True),
        ("invalid_request_error", False),
    ],
)
def test_an_error_event_mid_stream(fake_model, make_agent, error_type, retried):
    """The HTTP status was already 200, so the error event's type alone decides: the transient
    ones (overloaded, api, rate limit, timeout) are retried with the same body, a bad request is not."""
    h = make_agent()
    fake_model.script(
        b.error_event(after=2, error_type=error_type), *([b.ok(text="Recovered")] if retried else [])
    )

    if retried:
        assert h.agent.run("hello") == "Recovered"
    else:
        with pytest.raises(ModelCallError, match=error_type):
            h.agent.run("hello")

    assert fake_model.request_count == (2 if retried else 1)
    assert not retried or fake_model.requests[1].raw == fake_model.requests[0].raw
    assert [r["reason"] for r in h.retries()] == ([error_type] if retried else [])


def test_server_errors_back_off_exponentially_with_jitter_and_a_cap(fake_model, make_agent):
    """Planned delays for base 0.5 s, cap 3 s, jitter 10 %, random.Random(1234): the draws
    0.966, 0.441, 0.007, 0.911 scale 0.5, 1, 2, 4 by 1.093, 0.988, 0.901, 1.082; the last is capped."""
    policy = RetryPolicy(max_attempts=5, base_delay=0.5, max_delay=3.0, jitter=0.1)
    h = make_agent(policy=policy, seed=1234)
    fake_model.script(
        b.http_error(500), b.http_error(529), b.http_error(503), b.http_error(502), b.ok(text="Up")
    )

    assert h.agent.run("status?") == "Up"

    assert fake_model.request_count == 5
    assert h.sleep.calls == pytest.approx([0.5466453535692, 0.9881465198351, 1.8029965880234, 3.0])
    assert [r["reason"] for r in h.retries()] == ["status_500", "status_529", "status_503", "status_502"]


@pytest.mark.parametrize("status", [408, 409])
def test_timeout_and_conflict_statuses_are_retried(fake_model, make_agent, status):
    h = make_agent()
    fake_model.script(b.http_error(status), b.ok(text="Hi"))

    assert h.agent.run("hello") == "Hi"

    assert fake_model.request_count == 2
    assert [r["reason"] for r in h.retries()] == [f"status_{status}"]


@pytest.mark.parametrize("status", [400, 401, 403, 404])
def test_client_errors_are_not_retried(fake_model, make_agent, status):
    h = make_agent()
    fake_model.script(b.http_error(status))

    with pytest.raises(ModelCallError, match=f"status_{status}") as raised:
        h.agent.run("hello")

    assert raised.value.attempts == 1
    assert fake_model.request_count == 1
    assert h.sleep.calls == []


def test_one_agent_attempt_is_one_request(fake_model, make_agent):
    """The SDK's own retries are off: with a single allowed attempt, a 500 costs exactly one request."""
    h = make_agent(policy=RetryPolicy(max_attempts=1))
    fake_model.script(b.http_error(500))

    with pytest.raises(RetriesExhaustedError):
        h.agent.run("hello")

    assert fake_model.request_count == 1


def test_retries_are_explicit_journal_events(fake_model, make_agent, tmp_path):
    """Raw chunks of the failed attempt stay in the journal as evidence; only the successful attempt
    becomes a message; the retry is announced (attempt, reason, planned delay) before the wait."""
    path = tmp_path / "journal.jsonl"
    h = make_agent(journal_path=path)
    fake_model.script(b.cut(after=4, text="Partial answer here"), b.ok(text="Full answer"))

    h.agent.run("answer")

    events = h.journal.load(path)
    kinds = [e["kind"] for e in events]
    retry = events[kinds.index("retry")]
    assert (retry["turn"], retry["attempt"], retry["reason"]) == (1, 1, "disconnect")
    assert retry["delay"] == h.sleep.calls[0]
    assert kinds.index("retry") < kinds.index("retry_start")
    assert events[kinds.index("retry_start")]["attempt"] == 2
    failed = [e["event"] for e in events if e["kind"] == "chunk" and e["attempt"] == 1]
    assert [e["type"] for e in failed] == ["message_start", "content_block_start", "content_block_delta"]
    assert failed[-1]["delta"]["text"] == "Partial"
    replies = [e for e in events if e["kind"] == "message" and e["role"] == "assistant"]
    assert [(r["attempt"], r["content"]) for r in replies] == [(2, [{"type": "text", "text": "Full answer"}])]
    assert all(events[seq]["attempt"] == 2 for seq in replies[0]["chunks"])
