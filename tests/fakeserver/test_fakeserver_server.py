"""The server itself: recording helpers, bad requests, invariant violations, requests beyond the
script, early-stop detection, random mode, and that nothing leaks when clients walk away."""

from __future__ import annotations

import http.client
import json
import socket
import struct
import threading
import time

import anthropic
import openai
import psutil
import pytest

from mutagent.fakeserver import FakeModelServer, ToolCall
from mutagent.fakeserver import behaviours as b

BASE = {"model": "m", "max_tokens": 32}


def post(server, body, path="/v1/messages", headers=None, method="POST", timeout=5.0):
    """One raw request; returns (status, headers, body bytes)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=timeout)
    try:
        payload = body if isinstance(body, bytes) else json.dumps(body).encode()
        conn.request(
            method, path, body=payload, headers={"Content-Type": "application/json", **(headers or {})}
        )
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


def user(text="hi"):
    return {**BASE, "stream": True, "messages": [{"role": "user", "content": text}]}


# -- recording helpers -----------------------------------------------------------------------------


def test_requests_are_recorded_with_headers_body_and_time() -> None:
    with FakeModelServer() as server:
        server.script(b.ok(), b.ok())
        post(server, user("first"), headers={"X-Trace": "abc"})
        post(server, user("second"))
        first, second = server.requests
        assert server.request_count == 2
        assert first.path == "/v1/messages" and first.method == "POST" and first.dialect == "anthropic"
        assert (
            first.headers["x-trace"] == "abc"
            and first.headers["X-TRACE"] == "abc"
            and "x-trace" in first.headers
        )
        assert first.body["messages"][0]["content"] == "first" and json.loads(first.raw) == first.body
        assert 0 <= server.gap(0, 1) == second.time - first.time
        assert not server.bodies_identical(0, 1) and server.bodies_identical(1, 1)
        assert [r.outcome for r in server.requests] == ["scripted", "scripted"]


def test_bodies_identical_ignores_key_order_and_spacing() -> None:
    with FakeModelServer() as server:
        server.script(b.ok(), b.ok())
        post(server, b'{"model": "m", "max_tokens": 32, "messages": [{"role": "user", "content": "x"}]}')
        post(server, b'{"messages":[{"content":"x","role":"user"}],"max_tokens":32,"model":"m"}')
        assert server.bodies_identical(0, 1)


BLOCKS = [{"type": "text", "text": "42 "}, {"type": "text", "text": "C"}]


def test_tool_results_by_id_in_each_dialect() -> None:
    anthropic_history = {**BASE, "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "t", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": BLOCKS}]},
    ]}  # fmt: skip
    openai_history = {"model": "m", "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function",
                                              "function": {"name": "t", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
    ]}  # fmt: skip
    with FakeModelServer() as server:
        server.script(b.ok(), b.ok())
        post(server, anthropic_history)
        post(server, openai_history, path="/v1/chat/completions")
        assert server.tool_results(0) == {"toolu_1": "42 C"}
        assert server.tool_results() == {"call_1": "sunny"}
        assert server.all_tool_results() == {"toolu_1": "42 C", "call_1": "sunny"}
        with pytest.raises(IndexError, match="saw 2"):
            server.tool_results(5)


def test_sdk_agent_turn_sends_tool_result_back_under_its_id() -> None:
    with FakeModelServer() as server:
        server.script(
            b.ok(text=None, tool_calls=[ToolCall("toolu_7", "add", {"a": 1, "b": 2})]), b.ok(text="3")
        )
        with anthropic.Anthropic(base_url=server.base_url, api_key="k", max_retries=0) as client:
            messages = [{"role": "user", "content": "1+2?"}]
            first = client.messages.create(model="m", max_tokens=32, messages=messages)
            call = first.content[0]
            answer = {
                "type": "tool_result",
                "tool_use_id": call.id,
                "content": str(call.input["a"] + call.input["b"]),
            }
            messages += [
                {"role": "assistant", "content": [c.model_dump(exclude_none=True) for c in first.content]},
                {"role": "user", "content": [answer]},
            ]
            client.messages.create(model="m", max_tokens=32, messages=messages)
        assert server.tool_results() == {"toolu_7": "3"}
        assert server.problems() == []


# -- invariant violations, bad requests, requests beyond the script --------------------------------


def test_violating_request_gets_a_400_naming_the_id_and_is_recorded() -> None:
    orphan = {**BASE, "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "t", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_WRONG", "content": "x"}]},
    ]}  # fmt: skip
    with FakeModelServer() as server:
        server.script(b.ok())
        with anthropic.Anthropic(base_url=server.base_url, api_key="k", max_retries=0) as client:
            with pytest.raises(anthropic.BadRequestError, match="toolu_WRONG") as info:
                client.messages.create(**orphan)
        assert "toolu_1" in info.value.message
        assert server.requests[0].outcome == "violation"
        assert any("toolu_WRONG" in v for v in server.violations) and any(
            "toolu_1" in v for v in server.violations
        )
        assert server.remaining == ["ok"]  # a rejected request does not use up the script
        assert any("toolu_WRONG" in p for p in server.problems())
        with pytest.raises(AssertionError, match="toolu_WRONG"):
            server.verify()


def test_openai_violation_is_a_400_too() -> None:
    body = {"model": "m", "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function",
                                              "function": {"name": "t", "arguments": "{}"}}]},
        {"role": "user", "content": "never answered"},
    ]}  # fmt: skip
    with FakeModelServer() as server:
        with openai.OpenAI(base_url=server.base_url + "/v1", api_key="k", max_retries=0) as client:
            with pytest.raises(openai.BadRequestError, match="call_1"):
                client.chat.completions.create(**body)
        assert server.violations and "call_1" in server.violations[0]


@pytest.mark.parametrize(
    "raw, path, method, status, reason",
    [
        (b"{not json", "/v1/messages", "POST", 400, "not valid JSON"),
        (b'{"model": "m", "messages": []}', "/v1/messages", "POST", 400, "'max_tokens'"),
        (b'{"model": "m", "max_tokens": "10", "messages": []}', "/v1/messages", "POST", 400, "wrong type"),
        (
            b'{"model": "m", "messages": [{"content": "x"}]}',
            "/v1/chat/completions",
            "POST",
            400,
            "messages[0]",
        ),
        (b"[1, 2]", "/v1/chat/completions", "POST", 400, "JSON object"),
        (b"", "/v1/messages", "POST", 400, "JSON object"),
        (b"{}", "/v1/embeddings", "POST", 404, "no model API"),
        (b"", "/v1/messages", "GET", 405, "use POST"),
    ],
)
def test_bad_requests_get_a_clear_error_and_do_not_use_the_script(raw, path, method, status, reason) -> None:
    with FakeModelServer() as server:
        server.script(b.ok())
        got, _, body = post(server, raw, path=path, method=method)
        assert got == status
        message = json.loads(body)["error"]["message"]
        assert reason in message and message.startswith("mutagent fake model:") and "\n" not in message
        assert server.requests[0].outcome == "bad_request" and reason in server.requests[0].error
        assert server.remaining == ["ok"] and server.problems() == []
        assert post(server, user())[0] == 200  # the server is still serving


def test_huge_body_is_refused_without_crashing() -> None:
    with FakeModelServer(max_body_bytes=1024 * 1024) as server:
        server.script(b.ok())
        huge = json.dumps(
            {**BASE, "messages": [{"role": "user", "content": "x" * (3 * 1024 * 1024)}]}
        ).encode()
        status, _, body = post(server, huge)
        assert status == 400 and "over the 1048576-byte limit" in json.loads(body)["error"]["message"]
        assert server.requests[0].raw == b"" and server.requests[0].outcome == "bad_request"
        assert post(server, user())[0] == 200


@pytest.mark.parametrize("reset", [False, True])
def test_a_client_vanishing_mid_body_is_recorded_not_a_crash(reset) -> None:
    with FakeModelServer() as server:
        server.script(b.ok())
        sock = socket.create_connection(("127.0.0.1", server.port), timeout=5)
        sock.sendall(b'POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{"model"')
        if reset:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()
        assert server.wait_for_responses(1, timeout=5)
        assert server.requests[0].outcome == "bad_request"
        assert "ended after 8 of 1000" in server.requests[0].error or "went away" in server.requests[0].error
        assert server.problems() == [] and server.remaining == ["ok"]


def test_a_bug_in_the_server_surfaces_as_a_problem(monkeypatch) -> None:
    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr("mutagent.fakeserver.server.build_plan", broken)
    with FakeModelServer() as server:
        server.script(b.ok())
        status, _, body = post(server, user())
        assert status == 500 and b"internal error: RuntimeError: boom" in body
        assert server.wait_for_responses(1, timeout=5)
        assert server.problems() == ["internal error: request #0: RuntimeError: boom"]


def test_request_beyond_the_script_is_a_500_the_sdk_does_not_retry_and_a_problem() -> None:
    with FakeModelServer() as server:
        server.script(b.ok())
        with anthropic.Anthropic(base_url=server.base_url, api_key="k", max_retries=2) as client:
            client.messages.create(**user())
            with pytest.raises(anthropic.InternalServerError, match="beyond the script"):
                client.messages.create(**user())
        assert [r.index for r in server.unexpected] == [1]  # x-should-retry: false kept it to one
        assert server.problems() == ["1 request(s) beyond the script: #1 POST /v1/messages"]


def test_unused_behaviours_are_a_problem_only_when_asked() -> None:
    with FakeModelServer() as server:
        server.script(b.ok(), b.cut())
        post(server, user())
        assert server.problems() == []
        assert server.problems(require_consumed=True) == [
            "1 scripted behaviour(s) never requested: cut(after=3)"
        ]


def test_script_refuses_things_that_are_not_behaviours() -> None:
    with FakeModelServer() as server:
        with pytest.raises(TypeError, match="script\\(\\) takes behaviours"):
            server.script("ok")
        server.script([b.ok(), b.empty()])
        assert server.remaining == ["ok", "empty"]


def test_base_url_before_start_is_a_clear_error() -> None:
    with pytest.raises(RuntimeError, match="not started"):
        FakeModelServer().base_url  # noqa: B018 - the property access is the test


# -- the wire --------------------------------------------------------------------------------------


def raw_exchange(server, body) -> bytes:
    """Send one request on a bare socket and read until the server closes (or resets)."""
    payload = json.dumps(body).encode()
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        sock.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: %d\r\n\r\n%s" % (len(payload), payload))  # fmt: skip
        received = b""
        try:
            while piece := sock.recv(65536):
                received += piece
        except ConnectionResetError:
            received += b"<RST>"
        return received


def test_streams_are_chunked_sse_and_a_cut_lacks_the_terminating_chunk() -> None:
    with FakeModelServer() as server:
        server.script(b.ok(text="Hi"), b.cut(after=2), b.drop())
        complete = raw_exchange(server, user())
        head = complete.split(b"\r\n\r\n", 1)[0].lower()
        assert b"content-type: text/event-stream" in head and b"transfer-encoding: chunked" in head
        assert b"connection: close" in head and complete.endswith(b"\r\n0\r\n\r\n")
        cut = raw_exchange(server, user())
        assert b"event: content_block_start" in cut and not cut.endswith(b"0\r\n\r\n")
        assert b"message_delta" not in cut
        assert raw_exchange(server, user()) == b""  # dropped: not even a status line


# -- early stop, disconnects and leaks -------------------------------------------------------------


def test_detects_a_client_that_stops_reading_and_releases_the_connection() -> None:
    with FakeModelServer() as server:
        server.script(b.endless(delay=0.01))
        with anthropic.Anthropic(base_url=server.base_url, api_key="k", max_retries=0) as client:
            with client.messages.stream(**BASE, messages=[{"role": "user", "content": "go on"}]) as stream:
                for count, _ in enumerate(stream):
                    if count == 5:
                        break  # leaving the context manager closes the response
        assert server.wait_for_responses(timeout=5)
        response = server.responses[0]
        assert response.client_closed_early and not response.completed and response.frames_sent >= 3
        assert server.client_disconnects == [0]


def test_a_client_that_stops_reading_but_holds_the_connection_is_not_counted_as_released() -> None:
    with FakeModelServer() as server:
        server.script(b.endless(delay=0.02))
        payload = json.dumps(user()).encode()
        sock = socket.create_connection(("127.0.0.1", server.port), timeout=5)
        try:
            sock.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s"
                         % (len(payload), payload))  # fmt: skip
            sock.recv(100)  # read a little, then stop reading without closing
            assert not server.wait_for_responses(timeout=0.3)  # still streaming into the void
            assert not server.responses[0].client_closed_early
        finally:
            sock.close()
        assert server.wait_for_responses(timeout=5)
        assert server.responses[0].client_closed_early


def test_close_ends_a_stall_promptly_and_joins_everything() -> None:
    server = FakeModelServer().start()
    server.script(b.stall(seconds=None, after=1))
    errors: list[BaseException] = []

    def agent() -> None:
        try:
            with anthropic.Anthropic(
                base_url=server.base_url, api_key="k", max_retries=0, timeout=30
            ) as client:
                list(client.messages.create(**user()))
        except Exception as err:  # noqa: BLE001 - whatever the SDK raises is what we record
            errors.append(err)

    thread = threading.Thread(target=agent)
    thread.start()
    deadline = time.monotonic() + 5
    while not (server.responses and server.responses[0].frames_sent) and time.monotonic() < deadline:
        time.sleep(0.01)
    started = time.monotonic()
    server.close()
    assert time.monotonic() - started < 3.0  # generous: a stall would otherwise last forever
    thread.join(5)
    assert not thread.is_alive() and errors  # the client saw the connection end
    assert server.responses[0].server_closed and server.responses[0].finished
    assert not [t for t in threading.enumerate() if t.name.startswith(f"fake-model-{server.port}")]


def test_no_threads_or_sockets_leak_when_clients_disconnect_mid_stall() -> None:
    def one_round() -> None:
        with FakeModelServer() as server:
            server.script(b.stall(seconds=None, after=2))
            with anthropic.Anthropic(
                base_url=server.base_url, api_key="k", max_retries=0, timeout=0.15
            ) as client:
                with pytest.raises(Exception):  # noqa: B017 - the timeout type is documented elsewhere
                    list(client.messages.create(**user()))
            assert server.wait_for_responses(timeout=5)
            assert server.client_disconnects == [0]

    one_round()  # warm up lazily created resources (SDK, selectors, ...)
    process = psutil.Process()
    threads, fds = threading.active_count(), process.num_fds()
    one_round()
    deadline = time.monotonic() + 3
    while (threading.active_count(), process.num_fds()) != (threads, fds) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert threading.active_count() == threads
    assert process.num_fds() == fds


# -- random mode through the server ----------------------------------------------------------------


def run_random(seed: int, count: int = 25) -> list[tuple[str, int | None, int]]:
    with FakeModelServer() as server:
        server.random_mode(seed, stall_seconds=0.05, retry_after=0.01, slow_delay=0.002)
        for _ in range(count):
            try:
                post(server, user(), timeout=3)
            except (OSError, http.client.HTTPException):
                pass  # cuts, resets and drops are the point
        assert server.wait_for_responses(count, timeout=10)
        assert server.unexpected == [] and len(server.drawn) == count
        return [(r.behaviour, r.status, r.frames_sent) for r in server.responses]


def test_random_mode_replays_the_same_faults_for_the_same_seed() -> None:
    first = run_random(2024)
    assert first == run_random(2024)
    assert len({name.split("(")[0] for name, _, _ in first}) >= 4  # a mix, not one kind
    assert first != run_random(2025)


def test_random_mode_runs_after_the_script() -> None:
    with FakeModelServer() as server:
        server.script(b.http_error(429))
        server.random_mode(1, weights={"ok": 1})
        assert post(server, user())[0] == 429
        assert post(server, user())[0] == 200
        assert [r.outcome for r in server.requests] == ["scripted", "random"] and server.drawn == ["ok"]


def test_random_seed_in_the_constructor_turns_random_mode_on() -> None:
    with FakeModelServer(random_seed=3, random_weights={"empty": 1}) as server:
        assert post(server, user())[0] == 200
        assert server.drawn == ["empty"] and server.unexpected == []
