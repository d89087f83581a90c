"""The stream & transport operators: examples, alias resolution, async code, silence on unrelated
code, and - the part that matters - that each mutant, executed, really lets the failure through
that its operator names (the original code stops it, the mutant does not)."""

from __future__ import annotations

import asyncio
import json
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest
from testkit.operator_runs import mutants, mutated

from mutagent.mutation.generate import generate_for_source
from mutagent.mutation.registry import all_operators

STREAM_OPERATORS = (
    "drop-disconnect-handling",
    "skip-stop-marker-check",
    "accept-empty-response",
    "drop-idle-timeout",
    "drop-response-close",
    "enable-sdk-retries",
    "overwrite-closed-block",
    "ignore-length-stop",
    "accept-truncated-tool-arguments",
)
ROOT = Path(__file__).resolve().parents[2]


def load(source: str) -> dict:
    """Execute a module's source and return its namespace."""
    namespace: dict = {"__name__": "mutant_under_test"}
    exec(compile(textwrap.dedent(source), "<mutant>", "exec"), namespace)
    return namespace


def only(name: str, source: str) -> str:
    variants = mutated(name, source)
    assert len(variants) == 1, variants
    return variants[0]


# -- examples -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", STREAM_OPERATORS)
def test_examples(name: str) -> None:
    operator = all_operators()[name]
    matching = [e for e in operator.examples if not e.must_not_match]
    silent = [e for e in operator.examples if e.must_not_match]
    assert len(matching) >= 3 and len(silent) >= 2
    for example in operator.examples:
        produced = generate_for_source(example.before, "example.py", [operator])
        sources = [mu.mutated_source(example.before) for mu in produced]
        for source in sources:
            compile(source, "mutant.py", "exec")
        if example.must_not_match:
            assert sources == [], example.note
        else:
            assert example.after in sources, example.note


@pytest.mark.parametrize("name", STREAM_OPERATORS)
def test_metadata(name: str) -> None:
    operator = all_operators()[name]
    assert operator.family == "agent"
    assert operator.description and "\n" not in operator.description
    assert operator.failure and operator.hint
    module = ROOT / "operators" / f"{name.replace('-', '_')}.py"
    assert module.read_text().startswith(f'"""{name}: ')


# -- drop-disconnect-handling ---------------------------------------------------------------------

DISCONNECT = """
    {imports}

    def attempt(fail):
        try:
            fail()
        except {caught}:
            return "retry"
        return "ok"
"""


@pytest.mark.parametrize(
    ("imports", "caught", "raised"),
    [
        ("from httpx2 import RemoteProtocolError as RPE", "RPE", "httpx2.RemoteProtocolError"),
        ("import httpx2 as h", "h.ReadError", "httpx2.ReadError"),
        ("import anthropic", "anthropic.APIConnectionError", "anthropic.APIConnectionError"),
        ("from anthropic import APITimeoutError as Slow", "(ValueError, Slow)", "anthropic.APITimeoutError"),
        ("import socket", "socket.timeout", "socket.timeout"),
        ("import anthropic", "ConnectionResetError", "builtins.ConnectionResetError"),
    ],
)
def test_disconnect_aliases(imports: str, caught: str, raised: str) -> None:
    source = DISCONNECT.format(imports=imports, caught=caught)
    found = mutants("drop-disconnect-handling", source)
    assert [mu.description for mu in found] == [f"except no longer catches {raised}"]


def test_disconnect_mutant_lets_the_drop_through() -> None:
    import httpx2

    source = DISCONNECT.format(imports="import httpx2", caught="(httpx2.RemoteProtocolError, KeyError)")

    def drop() -> None:
        raise httpx2.RemoteProtocolError("peer closed connection without sending complete message body")

    assert load(source)["attempt"](drop) == "retry"
    mutant = only("drop-disconnect-handling", source)
    with pytest.raises(httpx2.RemoteProtocolError):
        load(mutant)["attempt"](drop)
    assert "KeyError" in mutant  # the other type is still caught


def test_disconnect_module_tuple_and_async() -> None:
    source = """
        import anthropic, asyncio

        TRANSIENT = (anthropic.APIConnectionError, anthropic.RateLimitError)

        async def turn(client):
            try:
                return await client.messages.create(model="m", max_tokens=1, messages=[])
            except TRANSIENT:
                return None
    """
    (variant,) = mutated("drop-disconnect-handling", source)
    assert "TRANSIENT = (anthropic.RateLimitError,)" in variant


@pytest.mark.parametrize(
    "caught",
    ["ValueError", "Exception", "KeyError", "(KeyError, TypeError)", "OSError", "json.JSONDecodeError"],
)
def test_disconnect_ignores_other_errors(caught: str) -> None:
    source = DISCONNECT.format(imports="import json", caught=caught)
    assert mutants("drop-disconnect-handling", source) == []


def test_disconnect_builtins_count_only_in_model_code() -> None:
    """``ConnectionResetError`` is as often a pipe's as the model connection's: without any sign
    that the code talks to a model (an SDK import, an endpoint, a stream read) it is left alone."""
    plain = DISCONNECT.format(imports="", caught="(ConnectionResetError, BrokenPipeError)")
    assert mutants("drop-disconnect-handling", plain) == []
    streaming = """
        def lines(response):
            try:
                yield from response.iter_lines()
            except ConnectionResetError:
                yield None
    """
    assert len(mutants("drop-disconnect-handling", streaming)) == 1


def test_disconnect_ignores_a_tools_timeout() -> None:
    source = """
        import anyio

        async def run_tool(tool, args):
            try:
                with anyio.fail_after(30):
                    return await tool(args)
            except TimeoutError:
                return "tool timed out"
    """
    assert mutants("drop-disconnect-handling", source) == []


# -- skip-stop-marker-check -----------------------------------------------------------------------

STOP_CHECK = """
    def collect(events):
        saw_stop = False
        text = ""
        for event in events:
            if event["type"] == "content_block_delta":
                text += event["delta"]["text"]
            elif event["type"] == "message_stop":
                saw_stop = True
        if not saw_stop:
            raise EOFError("stream ended without message_stop")
        return text
"""
TRUNCATED = [{"type": "content_block_delta", "delta": {"text": "Hel"}}]


def test_stop_check_mutant_accepts_a_truncated_stream() -> None:
    with pytest.raises(EOFError):
        load(STOP_CHECK)["collect"](TRUNCATED)
    assert load(only("skip-stop-marker-check", STOP_CHECK))["collect"](TRUNCATED) == "Hel"


def test_stop_check_async_raw_sse_for_else() -> None:
    source = """
        async def read(lines):
            out = []
            async for line in lines:
                if line.strip() == "data: [DONE]":
                    break
                out.append(line)
            else:
                raise EOFError("no [DONE]")
            return out
    """

    async def cut():
        yield "data: {}"

    with pytest.raises(EOFError):
        asyncio.run(load(source)["read"](cut()))
    assert asyncio.run(load(only("skip-stop-marker-check", source))["read"](cut())) == ["data: {}"]


def test_stop_check_positive_flag_then_raise() -> None:
    source = """
        def finish(state):
            if state.completed_response is not None:
                return state.completed_response
            raise EOFError("closed before response.completed")

        def on_event(state, event):
            if event.type == "response.completed":
                state.completed_response = event.response
    """
    variant = only("skip-stop-marker-check", source)
    assert "if True:" in variant


def test_stop_check_any_over_events_and_typed_sdk_events() -> None:
    source = """
        from anthropic.types import RawMessageStopEvent

        def check(events):
            if not any(e["type"] == "message_stop" for e in events):
                raise EOFError("truncated")

        async def consume(stream):
            finished = False
            async for event in stream:
                if isinstance(event, RawMessageStopEvent):
                    finished = True
            assert finished, "stream closed early"
    """
    descriptions = [mu.description for mu in mutants("skip-stop-marker-check", source)]
    assert len(descriptions) == 2, descriptions
    assert any("assertion" in d for d in descriptions)


def test_stop_check_ignores_unrelated_guards() -> None:
    source = """
        def setup(api_key, items):
            if not api_key:
                raise ValueError("api_key missing")
            done = False
            for item in items:
                if item == "message_stop":
                    done = True
                    break
            while not done:
                done = True
            return api_key
    """
    assert mutants("skip-stop-marker-check", source) == []


# -- accept-empty-response ------------------------------------------------------------------------


def test_empty_response_mutant_returns_nothing() -> None:
    source = """
        class EmptyResponse(Exception):
            pass

        def answer(message):
            if not message.content:
                raise EmptyResponse(message.id)
            return message.content[0]
    """
    empty = SimpleNamespace(id="msg_1", content=[])
    original = load(source)
    with pytest.raises(original["EmptyResponse"]):
        original["answer"](empty)
    namespace = load(only("accept-empty-response", source))
    with pytest.raises(IndexError):  # the empty reply now goes on instead of being refused
        namespace["answer"](empty)


def test_empty_response_openai_dicts_and_pydantic() -> None:
    source = """
        from pydantic import BaseModel

        class Reply(BaseModel):
            text: str = ""
            tool_calls: list = []

        def check(data, reply: Reply):
            if not data.get("choices"):
                raise RuntimeError("no choices")
            if not (reply.text or reply.tool_calls):
                raise RuntimeError("empty reply")
            return reply
    """
    variants = mutated("accept-empty-response", source)
    assert len(variants) == 2
    assert any('if False:\n        raise RuntimeError("no choices")' in v for v in variants)


def test_empty_response_none_content_without_tool_calls() -> None:
    source = """
        def reply(message):
            if message.content is None and not message.tool_calls:
                raise RuntimeError("empty reply")
            return message
    """
    (variant,) = mutated("accept-empty-response", source)
    assert "if False:" in variant


def test_empty_response_ignores_input_validation() -> None:
    source = """
        def send(client, prompt, messages, content):
            if not prompt:
                raise ValueError("prompt is empty")
            if len(messages) == 0:
                raise ValueError("no messages")
            if not content:
                raise ValueError("content is required")
            return client.messages.create(messages=messages)
    """
    assert mutants("accept-empty-response", source) == []


# -- drop-idle-timeout ----------------------------------------------------------------------------


def test_idle_timeout_alias_and_value() -> None:
    source = """
        import anthropic
        import httpx2 as h

        TIMEOUT = h.Timeout(10.0, read=30.0)
        client = anthropic.Anthropic(api_key="sk-test", timeout=TIMEOUT)
    """
    namespace = load(only("drop-idle-timeout", source))
    assert namespace["TIMEOUT"].read is None
    assert namespace["TIMEOUT"].connect == 10.0


def test_idle_timeout_ignores_http_calls_of_code_that_is_no_model_client() -> None:
    source = """
        import httpx2

        def export_spans(spans):
            with httpx2.Client(timeout=httpx2.Timeout(5.0, read=10.0)) as client:
                return client.post("https://tracing.example/ingest", json=spans, timeout=3)
    """
    assert mutants("drop-idle-timeout", source) == []


def test_idle_timeout_wait_for_mutant_waits_forever() -> None:
    source = """
        import asyncio

        async def next_event(queue):
            return await asyncio.wait_for(queue.get(), timeout=0.01)
    """

    async def scenario(module: dict) -> str:
        queue: asyncio.Queue[str] = asyncio.Queue()
        asyncio.get_running_loop().call_later(0.1, queue.put_nowait, "late event")
        try:
            return await module["next_event"](queue)
        except asyncio.TimeoutError:  # not yet the builtin TimeoutError on Python 3.10
            return "timed out"

    assert asyncio.run(scenario(load(source))) == "timed out"
    assert asyncio.run(scenario(load(only("drop-idle-timeout", source)))) == "late event"


def test_idle_timeout_sdk_call_and_watchdog() -> None:
    source = """
        import time

        def ask(client, messages, last_chunk_at, idle_timeout):
            if time.monotonic() - last_chunk_at > idle_timeout:
                raise TimeoutError("stalled")
            return client.messages.create(model="m", messages=messages, max_tokens=8, timeout=20)
    """
    variants = mutated("drop-idle-timeout", source)
    assert any('> float("inf"):' in v for v in variants)
    assert any("timeout=None)" in v for v in variants)


def test_idle_timeout_ignores_tools_and_locks() -> None:
    source = """
        import asyncio, subprocess

        async def tool(proc, lock, q):
            subprocess.run(["true"], timeout=5)
            await asyncio.wait_for(proc.wait(), 10)
            lock.acquire(timeout=1)
            return q.get(timeout=2)
    """
    assert mutants("drop-idle-timeout", source) == []


# -- drop-response-close --------------------------------------------------------------------------


class _Stream:
    """A streamed response that records whether it was released."""

    def __init__(self, log: list[str]) -> None:
        self.log = log

    def __enter__(self) -> _Stream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> _Stream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()

    def __iter__(self):
        yield from ("a", "b", "STOP", "never read")

    def close(self) -> None:
        self.log.append("closed")


def test_response_close_with_statement_mutant_leaks() -> None:
    source = """
        def first_words(client):
            words = []
            with client.messages.stream(model="m") as stream:
                for word in stream:
                    if word == "STOP":
                        break
                    words.append(word)
            return words
    """

    def run(module: dict) -> list[str]:
        log: list[str] = []
        client = SimpleNamespace(messages=SimpleNamespace(stream=lambda **_: _Stream(log)))
        assert module["first_words"](client) == ["a", "b"]
        return log

    assert run(load(source)) == ["closed"]
    assert run(load(only("drop-response-close", source))) == []


def test_response_close_async_with_and_finally() -> None:
    source = """
        async def read(session, body):
            async with session.post("https://api.anthropic.com/v1/messages", json=body) as resp:
                return resp

        async def drain(http, request):
            response = await http.send(request, stream=True)
            try:
                return 1
            finally:
                response.close()
    """
    variants = mutated("drop-response-close", source)
    assert len(variants) == 2
    log: list[str] = []
    session = SimpleNamespace(post=lambda url, json: _Stream(log))
    for variant in variants:
        if "nullcontext" in variant:
            asyncio.run(load(variant)["read"](session, {}))
    assert log == []


def test_response_close_ignores_files_and_clients() -> None:
    source = """
        import httpx2

        def save(path, data):
            handle = open(path, "w")
            try:
                handle.write(data)
            finally:
                handle.close()
            client = httpx2.Client()
            try:
                return client.get("https://example.com").text
            finally:
                client.close()
    """
    assert mutants("drop-response-close", source) == []


# -- enable-sdk-retries ---------------------------------------------------------------------------


def test_sdk_retries_mutant_restores_the_default() -> None:
    source = """
        from anthropic import Anthropic as Client

        def make():
            return Client(api_key="sk-test", base_url="http://127.0.0.1:9", max_retries=0)
    """
    assert load(source)["make"]().max_retries == 0
    assert load(only("enable-sdk-retries", source))["make"]().max_retries == 2


def test_sdk_retries_ignores_other_max_retries() -> None:
    source = """
        import anthropic

        a = anthropic.Anthropic(max_retries=5)
        b = make_policy(max_retries=0)
        c = Agent(max_retries=0)
    """
    assert mutants("enable-sdk-retries", source) == []


# -- overwrite-closed-block -----------------------------------------------------------------------

ASSEMBLER = """
    class Assembler:
        def __init__(self):
            self.text = {}
            self.closed = set()

        def feed(self, event):
            index = event["index"]
            if index in self.closed:
                return
            if event["type"] == "content_block_stop":
                self.closed.add(index)
            else:
                self.text[index] = self.text.get(index, "") + event["delta"]
"""


def test_closed_block_mutant_lets_a_late_delta_in() -> None:
    events = [
        {"type": "content_block_delta", "index": 0, "delta": "Hello"},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_delta", "index": 0, "delta": " (late)"},
    ]

    def run(module: dict) -> str:
        assembler = module["Assembler"]()
        for event in events:
            assembler.feed(event)
        return assembler.text[0]

    assert run(load(ASSEMBLER)) == "Hello"
    assert run(load(only("overwrite-closed-block", ASSEMBLER))) == "Hello (late)"


def test_closed_block_ignores_files_and_futures() -> None:
    source = """
        class Buffer:
            def write(self, data):
                if self.closed:
                    return
                self.parts.append(data)

        def reap(tasks):
            for task in tasks:
                if task.done():
                    continue
                task.cancel()
    """
    assert mutants("overwrite-closed-block", source) == []


# -- ignore-length-stop ---------------------------------------------------------------------------


def test_length_stop_mutant_accepts_a_cut_answer() -> None:
    source = """
        def final(message):
            if message.stop_reason == "max_tokens":
                raise OverflowError("cut")
            return message.text
    """
    cut = SimpleNamespace(stop_reason="max_tokens", text="The answer is")
    with pytest.raises(OverflowError):
        load(source)["final"](cut)
    assert load(only("ignore-length-stop", source))["final"](cut) == "The answer is"


def test_length_stop_enum_and_validity_sets() -> None:
    source = """
        def check(candidate, item):
            if candidate.finish_reason == FinishReason.MAX_TOKENS:
                raise OverflowError()
            return item.status in ("completed", "incomplete", "in_progress")
    """
    (variant,) = mutated("ignore-length-stop", source)
    assert "if False:" in variant


def test_length_stop_match_alternative_leaves_the_case() -> None:
    source = """
        def route(choice):
            match choice.finish_reason:
                case "length" | "content_filter":
                    raise OverflowError()
                case "stop":
                    return choice
    """
    (variant,) = mutated("ignore-length-stop", source)
    assert 'case "content_filter":' in variant
    finished = SimpleNamespace(finish_reason="length")
    assert load(variant)["route"](finished) is None  # the cut reply falls through unnoticed


# -- accept-truncated-tool-arguments --------------------------------------------------------------

TOOL_ARGS = """
    import json

    class BadToolCall(Exception):
        pass

    def arguments(call):
        try:
            args = json.loads(call["function"]["arguments"])
        except json.JSONDecodeError as exc:
            raise BadToolCall(call["id"]) from exc
        return args
"""


def test_truncated_arguments_mutant_runs_the_tool_with_nothing() -> None:
    call = {"id": "call_1", "function": {"arguments": '{"city": "Par'}}
    original = load(TOOL_ARGS)
    with pytest.raises(original["BadToolCall"]):
        original["arguments"](call)
    assert load(only("accept-truncated-tool-arguments", TOOL_ARGS))["arguments"](call) == {}


def test_truncated_arguments_wrap_style_executes() -> None:
    source = """
        import json

        def finish(block):
            block["input"] = json.loads(block["partial_json"])
            return block
    """
    block = {"partial_json": '{"q": "x'}
    with pytest.raises(json.JSONDecodeError):
        load(source)["finish"](dict(block))
    assert load(only("accept-truncated-tool-arguments", source))["finish"](dict(block))["input"] == {}


def test_truncated_arguments_ignores_sse_data_and_config() -> None:
    source = """
        import json

        def parse(line, path):
            try:
                event = json.loads(line[6:])
            except json.JSONDecodeError:
                return None
            with open(path) as f:
                config = json.loads(f.read())
            return event, config
    """
    assert mutants("accept-truncated-tool-arguments", source) == []


def test_truncated_arguments_description_says_what_the_handler_did() -> None:
    """A helper that answers unreadable arguments with ``None`` never failed a turn: the mutant's
    description names what the code did instead of the loop's usual "failing the turn"."""
    lenient = """
        import json

        def parse_tool_arguments(raw_arguments):
            try:
                parsed = json.loads(raw_arguments)
            except json.JSONDecodeError:
                return None
            return parsed
    """
    (quiet,) = mutants("accept-truncated-tool-arguments", lenient)
    assert quiet.description == "unparseable tool arguments become {} instead of returning None"
    (strict,) = mutants("accept-truncated-tool-arguments", TOOL_ARGS)
    assert strict.description == "unparseable tool arguments become {} instead of raising BadToolCall"
    assert "failing the turn" not in quiet.description + strict.description


# -- end markers seen through an accumulator, a sentinel or a constant ----------------------------


def test_skipped_check_on_an_accumulator_flag_returns_the_cut_reply() -> None:
    source = """
        class TruncatedReplyError(Exception):
            pass

        class Acc:
            def __init__(self):
                self.parts, self.complete = [], False

            def add(self, event):
                if event["type"] == "text":
                    self.parts.append(event["text"])
                elif event["type"] == "message_stop":
                    self.complete = True

        def read(events):
            acc = Acc()
            for event in events:
                acc.add(event)
            if not acc.complete:
                raise TruncatedReplyError("stream ended before the end-of-turn event")
            return "".join(acc.parts)
    """
    cut = [{"type": "text", "text": "Hel"}]
    original = load(source)
    with pytest.raises(original["TruncatedReplyError"]):
        original["read"](cut)
    assert load(only("skip-stop-marker-check", source))["read"](cut) == "Hel"


def test_removed_raise_after_a_sentinel_loop_ends_a_cut_stream_quietly() -> None:
    source = """
        END = object()

        class StreamCutError(Exception):
            pass

        def relay(source):
            for chunk in source:
                if chunk is END:
                    return
                yield chunk
            raise StreamCutError("producer closed without the end sentinel")
    """
    original = load(source)
    assert list(original["relay"](["a", original["END"]])) == ["a"]
    with pytest.raises(original["StreamCutError"]):
        list(original["relay"](["a"]))
    assert list(load(only("skip-stop-marker-check", source))["relay"](["a"])) == ["a"]


def test_a_sync_stream_is_model_code_when_its_async_twin_is() -> None:
    twin = """
        class Stream:
            def __stream__(self):
                response = self.response
                try:
                    for sse in self._iter_events():
                        yield sse
                finally:
                    response.close()
    """
    assert mutants("drop-response-close", twin) == []  # alone, nothing says it reads a model stream
    both = (
        twin
        + """
        class AsyncStream:
            async def __stream__(self):
                response = self.response
                try:
                    async for sse in self._iter_events():
                        yield sse
                finally:
                    await response.aclose()
    """
    )
    found = {" ".join(mu.original.split()) for mu in mutants("drop-response-close", both)}
    assert found == {"response.close()", "await response.aclose()"}


# -- the sample agent -----------------------------------------------------------------------------


def test_every_stream_operator_finds_its_concern_in_the_sample_agent() -> None:
    """Each operator has at least one site in the sample agent; none has a site in the files
    whose job has nothing to do with streams (tools, tickets, journal, retry policy)."""
    operators = [all_operators()[name] for name in STREAM_OPERATORS]
    found: dict[str, set[str]] = {name: set() for name in STREAM_OPERATORS}
    for path in sorted((ROOT / "sample_agent").glob("*.py")):
        source = path.read_text()
        for mu in generate_for_source(source, path.name, operators):
            compile(mu.mutated_source(source), path.name, "exec")
            found[mu.operator].add(path.name)
    assert all(found.values()), {name: files for name, files in found.items() if not files}
    unrelated = {"tools.py", "tickets.py", "journal.py", "retry.py", "__main__.py", "__init__.py"}
    assert not {name: files & unrelated for name, files in found.items() if files & unrelated}


def test_a_subclass_caught_beside_its_base_is_ignored_as_equivalent() -> None:
    """Removing ``TimeoutException`` from ``(TransportError, TimeoutException)`` changes nothing
    (it is a ``TransportError``): an equivalent mutant, listed Ignored with the reason and never
    run. Removing the base is a real change."""
    source = textwrap.dedent(
        """
        import httpx2
        import openai

        def fetch(client, body):
            try:
                return client.post("/v1/chat/completions", json=body)
            except (httpx2.TransportError, httpx2.TimeoutException, httpx2.RemoteProtocolError):
                raise Transient("network")

        def stream(client, body):
            try:
                return client.chat.completions.create(stream=True, **body)
            except (openai.APIConnectionError, openai.APITimeoutError) as err:
                raise Transient(str(err)) from err
        """
    )
    made = mutants("drop-disconnect-handling", source)
    assert sorted(mu.description for mu in made if mu.ignored_reason is None) == [
        "except no longer catches httpx2.TransportError",
        "except no longer catches openai.APIConnectionError",
    ]
    ignored = {mu.description: mu.ignored_reason for mu in made if mu.ignored_reason is not None}
    assert ignored == {
        "except no longer catches httpx2.TimeoutException": "equivalent mutant: httpx2.TimeoutException "
        "is a subclass of httpx2.TransportError, which stays in the tuple: it is still matched",
        "except no longer catches httpx2.RemoteProtocolError": "equivalent mutant: "
        "httpx2.RemoteProtocolError is a subclass of httpx2.TransportError, which stays in the tuple: "
        "it is still matched",
        "except no longer catches openai.APITimeoutError": "equivalent mutant: openai.APITimeoutError "
        "is a subclass of openai.APIConnectionError, which stays in the tuple: it is still matched",
    }
