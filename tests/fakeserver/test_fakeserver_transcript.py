"""Record and replay: a recording server forwards to an upstream (here a second fake server on
loopback), writes each exchange as JSONL without credentials, and a replaying server serves the
transcript back byte for byte."""

from __future__ import annotations

import http.client
import json
import threading
import time

import anthropic
import httpx2
import pytest

from mutagent.fakeserver import FakeModelServer, ToolCall
from mutagent.fakeserver import behaviours as b
from mutagent.fakeserver.transcript import TranscriptError, load_exchanges

SECRET = "sk-ant-very-secret-key"
REQUEST = {"model": "claude-test", "max_tokens": 64, "messages": [{"role": "user", "content": "hi"}]}


def drive(base_url: str) -> list[object]:
    """The same three calls against any server: a tool turn, a 429, a cut stream."""
    outcomes: list[object] = []
    with anthropic.Anthropic(base_url=base_url, api_key=SECRET, max_retries=0) as client:
        with client.messages.stream(**REQUEST) as stream:
            message = stream.get_final_message()
        outcomes.append([block.model_dump(exclude_none=True) for block in message.content])
        with pytest.raises(anthropic.RateLimitError) as info:
            client.messages.create(stream=True, **REQUEST)
        outcomes.append((info.value.status_code, info.value.response.headers.get("retry-after")))
        with pytest.raises(httpx2.RemoteProtocolError):
            list(client.messages.create(stream=True, **REQUEST))
        outcomes.append("cut")
    return outcomes


def raw_body(server: FakeModelServer, request: dict | None = None) -> bytes:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        conn.request("POST", "/v1/messages", body=json.dumps(request or {**REQUEST, "stream": True}))
        return conn.getresponse().read()
    finally:
        conn.close()


@pytest.fixture
def recorded(tmp_path):
    """Record the three calls against an upstream fake; return (transcript path, outcomes, upstream)."""
    path = tmp_path / "session.jsonl"
    with FakeModelServer() as upstream:
        upstream.script(
            b.ok(text="Let me look.", tool_calls=[ToolCall("toolu_1", "lookup", {"q": "x"})]),
            b.http_error(429, headers={"retry-after": "1"}),
            b.cut(after=4, text="Hello world"),
        )
        with FakeModelServer(upstream=upstream.base_url, record_to=path) as recorder:
            outcomes = drive(recorder.base_url)
            assert [r.outcome for r in recorder.requests] == ["proxied"] * 3
        # anthropic 2.x authenticates with "Authorization: Bearer"; older clients send x-api-key
        assert SECRET in str(dict(upstream.requests[0].headers))  # forwarded upstream ...
    return path, outcomes, upstream


def test_transcript_holds_each_exchange_without_credentials(recorded) -> None:
    path, outcomes, _ = recorded
    text = path.read_text()
    assert SECRET not in text  # ... but never written down
    lines = [json.loads(line) for line in text.splitlines()]
    assert len(lines) == 3
    headers = {name.lower(): value for name, value in lines[0]["request"]["headers"]}
    assert headers["authorization"] == "[redacted]" and "accept" in headers
    assert lines[0]["request"]["body"]["messages"] == REQUEST["messages"]
    assert [line["response"]["status"] for line in lines] == [200, 429, 200]
    assert [line["response"]["complete"] for line in lines] == [True, True, False]
    offsets = [chunk["t"] for chunk in lines[0]["response"]["chunks"]]
    assert offsets == sorted(offsets) and "event: message_stop" in "".join(
        chunk["text"] for chunk in lines[0]["response"]["chunks"]
    )
    assert outcomes[1] == (429, "1")


def test_replay_reproduces_what_the_agent_saw(recorded) -> None:
    path, outcomes, _ = recorded
    with FakeModelServer() as replayer:
        replayer.replay(path)
        assert drive(replayer.base_url) == outcomes
        assert [r.replay_body_matched for r in replayer.responses] == [True, True, True]
        assert replayer.remaining == [] and replayer.problems() == []


def test_replayed_bytes_equal_the_recorded_bytes(recorded) -> None:
    path, _, _ = recorded
    exchange = load_exchanges(path)[0]
    with FakeModelServer() as replayer:
        replayer.replay(path)
        assert raw_body(replayer, {**REQUEST, "stream": True, "max_tokens": 1}) == exchange.body
        assert replayer.responses[0].replay_body_matched is False  # served anyway; the mismatch is reported


def test_replay_can_keep_the_original_pacing(tmp_path) -> None:
    path = tmp_path / "slow.jsonl"
    with FakeModelServer() as upstream:
        upstream.script(b.slow(delay=0.03, text="one two three"))
        with FakeModelServer(upstream=upstream.base_url, record_to=path) as recorder:
            raw_body(recorder)
    chunks = load_exchanges(path)[0].chunks
    span = chunks[-1][0] - chunks[0][0]
    assert span >= 0.2
    with FakeModelServer() as replayer:
        replayer.replay(path, time_scale=1.0)
        started = time.monotonic()
        raw_body(replayer)
        assert time.monotonic() - started >= span * 0.9


def test_unreachable_upstream_is_a_502_and_nothing_is_written(tmp_path) -> None:
    path = tmp_path / "none.jsonl"
    with FakeModelServer() as dead:
        dead_url = dead.base_url
    with FakeModelServer(upstream=dead_url, record_to=path) as recorder:
        conn = http.client.HTTPConnection("127.0.0.1", recorder.port, timeout=5)
        conn.request("POST", "/v1/messages", body=json.dumps(REQUEST))
        response = conn.getresponse()
        assert response.status == 502 and b"unreachable" in response.read()
        conn.close()
    assert path.read_text() == ""


def test_bad_configuration_and_bad_transcripts_fail_with_one_line(tmp_path) -> None:
    with pytest.raises(ValueError, match="both upstream= and record_to="):
        FakeModelServer(upstream="http://127.0.0.1:1")
    with pytest.raises(ValueError, match="http\\(s\\) base URL"):
        FakeModelServer(upstream="ftp://example", record_to=tmp_path / "x.jsonl")
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"request": {}}\n')
    with pytest.raises(TranscriptError, match="broken.jsonl:1: not a transcript exchange"):
        load_exchanges(broken)
    with pytest.raises(TranscriptError, match="cannot read transcript"):
        load_exchanges(tmp_path / "missing.jsonl")


def test_closing_a_recorder_interrupts_a_stalled_upstream(tmp_path) -> None:
    path = tmp_path / "stalled.jsonl"
    with FakeModelServer() as upstream:
        upstream.script(b.stall(seconds=None, after=1))
        recorder = FakeModelServer(upstream=upstream.base_url, record_to=path).start()
        outcome: list[object] = []

        def agent() -> None:
            try:
                outcome.append(raw_body(recorder))
            except (OSError, http.client.HTTPException) as err:
                outcome.append(err)

        client = threading.Thread(target=agent, daemon=True)
        client.start()
        deadline = time.monotonic() + 5
        while not (upstream.responses and upstream.responses[0].frames_sent) and time.monotonic() < deadline:
            time.sleep(0.01)
        started = time.monotonic()
        recorder.close()
        assert time.monotonic() - started < 3.0
        client.join(5)
        assert isinstance(outcome[0], http.client.IncompleteRead)  # the agent saw the stream end short
    (line,) = load_exchanges(path)
    assert line.complete is False and b"message_start" in line.body


def test_upstream_headers_replace_the_clients_credentials_and_stay_out_of_the_file(tmp_path) -> None:
    path = tmp_path / "keyed.jsonl"
    real_key = "sk-ant-the-real-one"
    with FakeModelServer() as upstream:
        upstream.script(b.ok(text="hi"))
        with FakeModelServer(
            upstream=upstream.base_url, record_to=path, upstream_headers={"x-api-key": real_key}
        ) as rec:
            with anthropic.Anthropic(base_url=rec.base_url, api_key="dummy", max_retries=0) as client:
                client.messages.create(**REQUEST)
        seen = upstream.requests[0].headers
        assert seen["x-api-key"] == real_key and "authorization" not in seen
    text = path.read_text()
    assert real_key not in text and "dummy" not in text
