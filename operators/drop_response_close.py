"""drop-response-close: the release of a streamed response when the consumer stops early is removed.

A streamed response holds its connection until it is read to the end or closed. An agent that
stops reading early (it saw ``message_stop``, the user cancelled, an error was raised) and never
closes the response leaks the connection: the pool runs dry after a few turns, the server keeps
generating tokens nobody reads, and an adapter blocked on a full channel hangs forever.

A response is a stream when it comes from a streaming call (``stream=True``, ``.stream(...)``, an
httpx transport's ``handle_request``), from a class of the file that reads a stream, or is named
for one in model code. Model code is known by the function (it streams, or its ``async`` twin
does: SDKs write ``Stream.__stream__`` and ``AsyncStream.__stream__``), by its class (a method of
it reads the stream, so its ``close()`` releases it) or by the file. The release is a ``close()``
/ ``aclose()`` on the early-exit path, a close helper handed the stream in a ``finally``, or a
``with`` / ``closing()`` / ``aclosing()`` around the stream.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.dataflow import bound_values
from mutagent.anatomy.retry.loops import in_retry_path
from mutagent.anatomy.streams.clients import is_http_call, qualified_leaf
from mutagent.anatomy.streams.context import builds_streaming_object, model_context
from mutagent.anatomy.streams.release import (
    consumed_in_with,
    is_stream_value,
    iterated_source,
    names_closing,
    stream_wrapper_class,
    streaming_producer,
)
from mutagent.anatomy.syntax import caught_classes, leaf_name
from mutagent.mutation.context import SourceContext
from mutagent.mutation.operator import Example, Mutation, Operator

#: ``contextlib.nullcontext(x)`` enters nothing and exits nothing: wrapping what the real context
#: manager's ``__enter__``/``__aenter__`` returned keeps the body working on the same object
#: while nothing releases it on the way out. Spelled through ``__import__`` so that the mutant
#: needs no new import line.
NULLCONTEXT = cst.parse_expression('__import__("contextlib").nullcontext')
CLOSE_METHODS = frozenset({"close", "aclose", "release"})
#: Methods whose whole job is to release: a close() in them is the release, wherever it sits.
RELEASING_METHODS = frozenset("close aclose __exit__ __aexit__ __del__ cancel stop shutdown".split())


class DropResponseClose(Operator):
    name = "drop-response-close"
    description = "The release of a streamed response when the consumer stops early is removed."
    failure = (
        "When the agent stops reading a stream early (end marker seen, error, cancellation) the "
        "response is never closed: its connection leaks and the server keeps streaming to nobody."
    )
    hint = (
        "Stop consuming mid-stream (break after the end marker, or raise from a handler) against a "
        "fake server that streams forever, and assert the server saw the client disconnect."
    )
    examples = (
        Example(
            before=(
                "def answer(client, body):\n"
                "    with client.messages.stream(**body) as s:\n"
                "        for text in s.text_stream:\n"
                "            if text.endswith('STOP'):\n"
                "                break\n"
                "    return s.get_final_text()\n"
            ),
            after=(
                "def answer(client, body):\n"
                '    with __import__("contextlib").nullcontext(client.messages.stream(**body)'
                ".__enter__()) as s:\n"
                "        for text in s.text_stream:\n"
                "            if text.endswith('STOP'):\n"
                "                break\n"
                "    return s.get_final_text()\n"
            ),
            note="anthropic SDK stream context manager: entered, never exited",
        ),
        Example(
            before=(
                "async def lines(http, url, body):\n"
                "    response = await http.send(http.build_request('POST', url, json=body), stream=True)\n"
                "    try:\n"
                "        async for line in response.aiter_lines():\n"
                "            yield line\n"
                "    finally:\n"
                "        await response.aclose()\n"
            ),
            after=(
                "async def lines(http, url, body):\n"
                "    response = await http.send(http.build_request('POST', url, json=body), stream=True)\n"
                "    try:\n"
                "        async for line in response.aiter_lines():\n"
                "            yield line\n"
                "    finally:\n"
                "        pass\n"
            ),
            note="raw httpx async stream closed in finally",
        ),
        Example(
            before=(
                "async def events(session, url, body):\n"
                "    async with session.post(url, json=body) as resp:\n"
                "        async for raw in resp.content:\n"
                "            yield raw\n"
            ),
            after=(
                "async def events(session, url, body):\n"
                '    async with __import__("contextlib").nullcontext(await session.post(url, json=body)'
                ".__aenter__()) as resp:\n"
                "        async for raw in resp.content:\n"
                "            yield raw\n"
            ),
            note="aiohttp response as async context manager",
        ),
        Example(
            before=(
                "import openai\n"
                "\n"
                "def deltas(client: openai.OpenAI, messages):\n"
                "    stream = client.chat.completions.create(model='m', messages=messages, stream=True)\n"
                "    try:\n"
                "        for chunk in stream:\n"
                "            yield chunk.choices[0].delta\n"
                "    except GeneratorExit:\n"
                "        stream.close()\n"
                "        raise\n"
            ),
            after=(
                "import openai\n"
                "\n"
                "def deltas(client: openai.OpenAI, messages):\n"
                "    stream = client.chat.completions.create(model='m', messages=messages, stream=True)\n"
                "    try:\n"
                "        for chunk in stream:\n"
                "            yield chunk.choices[0].delta\n"
                "    except GeneratorExit:\n"
                "        pass\n"
                "        raise\n"
            ),
            note="openai Stream closed when the consumer stops the generator",
        ),
        Example(
            before=(
                "class Stream:\n"
                "    def __stream__(self):\n"
                "        response = self.response\n"
                "        try:\n"
                "            for sse in self._decoder.iter_bytes(response.iter_bytes()):\n"
                "                yield sse.json()\n"
                "        finally:\n"
                "            response.close()\n"
                "\n"
                "class AsyncStream:\n"
                "    async def __stream__(self):\n"
                "        response = self.response\n"
                "        try:\n"
                "            async for sse in self._decoder.aiter_bytes(response.aiter_bytes()):\n"
                "                yield sse.json()\n"
                "        finally:\n"
                "            await response.aclose()\n"
            ),
            after=(
                "class Stream:\n"
                "    def __stream__(self):\n"
                "        response = self.response\n"
                "        try:\n"
                "            for sse in self._decoder.iter_bytes(response.iter_bytes()):\n"
                "                yield sse.json()\n"
                "        finally:\n"
                "            pass\n"
                "\n"
                "class AsyncStream:\n"
                "    async def __stream__(self):\n"
                "        response = self.response\n"
                "        try:\n"
                "            async for sse in self._decoder.aiter_bytes(response.aiter_bytes()):\n"
                "                yield sse.json()\n"
                "        finally:\n"
                "            await response.aclose()\n"
            ),
            note="the sync twin of an SDK stream: its async twin shows it reads a model stream",
        ),
        Example(
            before=(
                "class EventStream:\n"
                "    def __init__(self, response):\n"
                "        self.response = response\n"
                "\n"
                "    async def __aiter__(self):\n"
                "        async for line in self.response.aiter_lines():\n"
                "            yield line\n"
                "\n"
                "    async def aclose(self):\n"
                "        await self.response.aclose()\n"
            ),
            after=(
                "class EventStream:\n"
                "    def __init__(self, response):\n"
                "        self.response = response\n"
                "\n"
                "    async def __aiter__(self):\n"
                "        async for line in self.response.aiter_lines():\n"
                "            yield line\n"
                "\n"
                "    async def aclose(self):\n"
                "        pass\n"
            ),
            note="a stream object's own aclose(): another method of its class reads the stream",
        ),
        Example(
            before=(
                "class Download:\n"
                "    def __init__(self, response):\n"
                "        self.response = response\n"
                "\n"
                "    def read(self):\n"
                "        return self.response.content\n"
                "\n"
                "    def close(self):\n"
                "        self.response.close()\n"
            ),
            note="a class that never reads a stream: its close() releases no model stream",
        ),
        Example(
            before=(
                "class RetryingTransport:\n"
                "    def handle_request(self, request):\n"
                "        response = self.wrapped.handle_request(request)\n"
                "        try:\n"
                "            self.validate(response)\n"
                "        except Exception:\n"
                "            response.close()\n"
                "            raise\n"
                "        return response\n"
            ),
            after=(
                "class RetryingTransport:\n"
                "    def handle_request(self, request):\n"
                "        response = self.wrapped.handle_request(request)\n"
                "        try:\n"
                "            self.validate(response)\n"
                "        except Exception:\n"
                "            pass\n"
                "            raise\n"
                "        return response\n"
            ),
            note="an httpx transport's response (body unread) released before the retry that follows",
        ),
        Example(
            before=(
                "from contextlib import aclosing\n"
                "\n"
                "async def relay(model, queue):\n"
                "    async with aclosing(model.stream_events()) as events:\n"
                "        async for event in events:\n"
                "            queue.put_nowait(event)\n"
            ),
            after=(
                "from contextlib import aclosing\n"
                "\n"
                "async def relay(model, queue):\n"
                '    async with __import__("contextlib").nullcontext(model.stream_events()) as events:\n'
                "        async for event in events:\n"
                "            queue.put_nowait(event)\n"
            ),
            note="aclosing() around a call named for the stream it returns",
        ),
        Example(
            before=(
                "async def attempt(get_stream, sink):\n"
                "    stream = get_stream()\n"
                "    try:\n"
                "        async for event in stream:\n"
                "            await sink(event)\n"
                "    finally:\n"
                "        await _close_quietly(stream)\n"
            ),
            after=(
                "async def attempt(get_stream, sink):\n"
                "    stream = get_stream()\n"
                "    try:\n"
                "        async for event in stream:\n"
                "            await sink(event)\n"
                "    finally:\n"
                "        pass\n"
            ),
            note="a helper named for closing, handed the stream in a finally",
        ),
        Example(
            before=(
                "async def pump(get_stream, sink):\n"
                "    stream = get_stream()\n"
                "    while True:\n"
                "        try:\n"
                "            event = await stream.__anext__()\n"
                "        except StopAsyncIteration:\n"
                "            await _close_quietly(stream)\n"
                "            await stream.aclose()\n"
                "            return\n"
                "        await sink(event)\n"
            ),
            note="a close right after the stream ran to its end (StopAsyncIteration): nothing is left open",
        ),
        Example(
            before=(
                "from contextlib import closing\n"
                "\n"
                "def export(path, rows):\n"
                "    handle = open_file(path)\n"
                "    try:\n"
                "        with closing(make_writer(handle)) as writer:\n"
                "            writer.write(rows)\n"
                "    finally:\n"
                "        close_quietly(handle)\n"
            ),
            note="closing() and a close helper around a file, not a stream",
        ),
        Example(
            before=(
                "class Router:\n"
                "    def route(self, request):\n"
                "        response = self.app.handle(request)\n"
                "        try:\n"
                "            self.validate(response)\n"
                "        except Exception:\n"
                "            response.close()\n"
                "            raise\n"
                "        return response\n"
            ),
            note="a response from something that is not an HTTP transport, in code that streams nothing",
        ),
        Example(
            before=(
                "class Downloader:\n"
                "    def fetch(self, url):\n"
                "        response = self.http.get(url)\n"
                "        try:\n"
                "            return response.content\n"
                "        finally:\n"
                "            response.close()\n"
                "\n"
                "class AsyncReader:\n"
                "    async def fetch(self, url):\n"
                "        async for chunk in self.http.stream(url):\n"
                "            yield chunk\n"
            ),
            note="an async method of the same name in another class is no twin of this one",
        ),
        Example(
            before=(
                "def save(path, lines, lock):\n"
                "    with open(path, 'w') as out, lock:\n"
                "        out.writelines(lines)\n"
                "    f = open(path)\n"
                "    try:\n"
                "        return f.read()\n"
                "    finally:\n"
                "        f.close()\n"
            ),
            note="files and locks are not streamed responses",
        ),
        Example(
            before=(
                "import httpx2\n"
                "\n"
                "def fetch(url):\n"
                "    client = httpx2.Client()\n"
                "    try:\n"
                "        return client.get(url).json()\n"
                "    finally:\n"
                "        client.close()\n"
            ),
            note="closing the client at the end is not releasing a stream early",
        ),
        Example(
            before=(
                "from .lifecycle import closing_stream\n"
                "\n"
                "def relay(backend, request, sink):\n"
                "    events = backend.stream(request)\n"
                "    with closing_stream(events):\n"
                "        for event in events:\n"
                "            sink(event)\n"
            ),
            after=(
                "from .lifecycle import closing_stream\n"
                "\n"
                "def relay(backend, request, sink):\n"
                "    events = backend.stream(request)\n"
                '    with __import__("contextlib").nullcontext(events):\n'
                "        for event in events:\n"
                "            sink(event)\n"
            ),
            note="a helper named for closing a stream, handed the events the body reads",
        ),
        Example(
            before=(
                "import openai\n"
                "\n"
                "def parse(response, sink):\n"
                "    with response as stream:\n"
                "        for event in stream:\n"
                "            if event.type == 'content.done':\n"
                "                break\n"
                "            sink(event)\n"
            ),
            after=(
                "import openai\n"
                "\n"
                "def parse(response, sink):\n"
                '    with __import__("contextlib").nullcontext(response.__enter__()) as stream:\n'
                "        for event in stream:\n"
                "            if event.type == 'content.done':\n"
                "                break\n"
                "            sink(event)\n"
            ),
            note="a stream manager entered by `with ... as stream` and read event by event",
        ),
        Example(
            before=(
                "import openai\n"
                "\n"
                "def report(path, sink):\n"
                "    with open(path) as stream:\n"
                "        for event in stream:\n"
                "            sink(event)\n"
                "    with closing(make_cursor()) as rows:\n"
                "        for row in rows:\n"
                "            sink(row)\n"
            ),
            note="a file read line by line and a cursor's rows are no streamed response",
        ),
        Example(
            before=(
                "class EventStream:\n"
                "    def __init__(self, response):\n"
                "        self.response = response\n"
                "        self.generator = stream_events(response)\n"
                "\n"
                "    def __next__(self):\n"
                "        return next(self.generator)\n"
                "\n"
                "    def __exit__(self, *exc):\n"
                "        self.close()\n"
                "\n"
                "    def close(self):\n"
                "        self.response.close()\n"
                "\n"
                "def stream_events(response):\n"
                "    for chunk in response.iter_bytes():\n"
                "        yield chunk\n"
            ),
            after=(
                "class EventStream:\n"
                "    def __init__(self, response):\n"
                "        self.response = response\n"
                "        self.generator = stream_events(response)\n"
                "\n"
                "    def __next__(self):\n"
                "        return next(self.generator)\n"
                "\n"
                "    def __exit__(self, *exc):\n"
                "        pass\n"
                "\n"
                "    def close(self):\n"
                "        self.response.close()\n"
                "\n"
                "def stream_events(response):\n"
                "    for chunk in response.iter_bytes():\n"
                "        yield chunk\n"
            ),
            note=(
                "self.close() in the __exit__ of a stream wrapper; the class holds the stream that "
                "a function of its file reads (its close() is a site too)"
            ),
        ),
        Example(
            before=(
                "class Countdown:\n"
                "    def __init__(self, n):\n"
                "        self.n = n\n"
                "\n"
                "    def __next__(self):\n"
                "        self.n -= 1\n"
                "        return self.n\n"
                "\n"
                "    def __exit__(self, *exc):\n"
                "        self.close()\n"
                "\n"
                "    def close(self):\n"
                "        self.n = 0\n"
            ),
            note="an iterator whose close() releases nothing: its self.close() is no stream release",
        ),
        Example(
            before=(
                "import openai\n"
                "\n"
                "class Relay:\n"
                "    def __init__(self, gen):\n"
                "        self._gen = gen\n"
                "\n"
                "    async def __anext__(self):\n"
                "        return await self._gen.__anext__()\n"
                "\n"
                "    async def aclose(self):\n"
                "        await self._gen.aclose()\n"
            ),
            after=(
                "import openai\n"
                "\n"
                "class Relay:\n"
                "    def __init__(self, gen):\n"
                "        self._gen = gen\n"
                "\n"
                "    async def __anext__(self):\n"
                "        return await self._gen.__anext__()\n"
                "\n"
                "    async def aclose(self):\n"
                "        pass\n"
            ),
            note="the iterator a model-code wrapper reads from, closed by its aclose()",
        ),
        Example(
            before=(
                "import time\n"
                "\n"
                "def with_retries(send, attempts):\n"
                "    for attempt in range(attempts):\n"
                "        try:\n"
                "            return send()\n"
                "        except TemporaryError as exc:\n"
                "            exc.response.close()\n"
                "            time.sleep(2 ** attempt)\n"
                "    raise GaveUp()\n"
            ),
            after=(
                "import time\n"
                "\n"
                "def with_retries(send, attempts):\n"
                "    for attempt in range(attempts):\n"
                "        try:\n"
                "            return send()\n"
                "        except TemporaryError as exc:\n"
                "            pass\n"
                "            time.sleep(2 ** attempt)\n"
                "    raise GaveUp()\n"
            ),
            note="a failed attempt's response released in a retry loop's except, before the next attempt",
        ),
        Example(
            before=(
                "def fetch_all(send, urls):\n"
                "    pages = []\n"
                "    for url in urls:\n"
                "        try:\n"
                "            pages.append(send(url))\n"
                "        except HTTPError as exc:\n"
                "            exc.response.close()\n"
                "            continue\n"
                "    return pages\n"
            ),
            note="a loop over urls that skips failures is no retry: nothing is attempted again",
        ),
        Example(
            before=(
                "import openai\n"
                "\n"
                "class ApiClient:\n"
                "    def request(self, req):\n"
                "        return self._client.send(req)\n"
                "\n"
                "    def close(self):\n"
                "        self._client.close()\n"
            ),
            note="a client that sends requests is no iterator: its close at shutdown releases no stream",
        ),
    )

    def find(self, ctx: SourceContext) -> Iterator[Mutation]:
        for item in ctx.findall(m.WithItem()):
            statement = ctx.parent(item)
            if isinstance(statement, cst.With) and (
                self._streams(ctx, item.item, statement.asynchronous is not None)
                or (
                    consumed_in_with(ctx, statement, item) is not None
                    and (model_context(ctx, item) or _stream_closer(item.item))
                )
            ):
                yield Mutation(
                    item.item,
                    _entered_only(item.item, statement.asynchronous is not None),
                    (f"`with {ctx.code(item.item).splitlines()[0]}` no longer releases the response on exit"),
                )
        for call in ctx.findall(m.Call(func=m.Attribute(attr=m.Name()))):
            if call.func.attr.value in CLOSE_METHODS and (
                _releases_a_stream(ctx, call.func.value) or _releases_by_role(ctx, call)
            ):
                line = _statement_of(ctx, call)
                if line is not None and _on_early_exit_path(ctx, line) and not _after_exhaustion(ctx, line):
                    yield Mutation(
                        line, cst.Pass(), f"{ctx.code(call)} removed: the response is not released"
                    )
        for call in ctx.findall(m.Call(func=m.Name())):
            # ``_close_async_iterator_quietly(stream)`` in a ``finally``: a helper named for closing,
            # handed the stream
            if "close" in {w.lower() for w in call.func.value.split("_")} and len(call.args) == 1:
                line = _statement_of(ctx, call)
                if (
                    line is not None
                    and ctx.enclosing(line, (cst.Finally, cst.ExceptHandler)) is not None
                    and not _after_exhaustion(ctx, line)
                    and _releases_a_stream(ctx, call.args[0].value)
                ):
                    yield Mutation(line, cst.Pass(), f"{ctx.code(call)} removed: the stream is not released")

    @staticmethod
    def _streams(ctx: SourceContext, item: cst.BaseExpression, asynchronous: bool) -> bool:
        """A streaming producer, a variable holding one, ``contextlib.closing(stream)``, or an
        HTTP request in ``async with`` (aiohttp reads the body lazily, whatever the request)."""
        inner = item.expression if isinstance(item, cst.Await) else item
        if streaming_producer(ctx, inner):
            return True
        if asynchronous and is_http_call(ctx, inner) and model_context(ctx, inner):
            return True
        if isinstance(inner, (cst.Name, cst.Attribute)):
            return any(streaming_producer(ctx, value) for value in bound_values(ctx, inner))
        if isinstance(inner, cst.Call) and qualified_leaf(ctx, inner) in (
            ("contextlib", "closing"),
            ("contextlib", "aclosing"),
        ):
            return bool(inner.args) and (
                is_stream_value(ctx, inner.args[0].value) or _opens_stream(inner.args[0].value)
            )
        return False


def _opens_stream(expr: cst.BaseExpression) -> bool:
    """``model_run_context_stream(...)``, ``self.stream_events(...)``: a call named for the stream
    it returns (what ``aclosing(...)`` is handed)."""
    if isinstance(expr, cst.Await):
        expr = expr.expression
    if not isinstance(expr, cst.Call):
        return False
    func = expr.func
    name = (
        func.value
        if isinstance(func, cst.Name)
        else func.attr.value
        if isinstance(func, cst.Attribute)
        else ""
    )
    return "stream" in name.lower().split("_")


def _releases_a_stream(ctx: SourceContext, receiver: cst.BaseExpression) -> bool:
    """The receiver holds a streamed response: bound to a streaming call, or named like one in
    code that talks to a model (a tool's ``response.close()`` is no model stream)."""
    if any(
        streaming_producer(ctx, value) or builds_streaming_object(ctx, value)
        for value in bound_values(ctx, receiver)
    ):
        return True
    return is_stream_value(ctx, receiver) and model_context(ctx, receiver)


def _stream_closer(item: cst.BaseExpression) -> bool:
    """``closing_stream(source)``/``aclosing_stream(source)``: a helper named for closing a stream."""
    inner = item.expression if isinstance(item, cst.Await) else item
    if not isinstance(inner, cst.Call):
        return False
    words = {w.lower() for w in (leaf_name(inner.func) or "").split("_")}
    return names_closing(leaf_name(inner.func)) and "stream" in words


def _releases_by_role(ctx: SourceContext, call: cst.Call) -> bool:
    """A close whose receiver is a stream by its role rather than by its name or producer:
    ``self.close()`` in a stream wrapper (an iterator whose own close releases what it wraps);
    the iterator the code reads from (``self._gen.aclose()`` beside ``__anext__``), in model
    code; or a failed attempt's response (``exc.response.close()``) released in the ``except``
    of a retry loop before the next attempt."""
    receiver = call.func.value  # type: ignore[attr-defined]
    if isinstance(receiver, cst.Name) and receiver.value == "self":
        return stream_wrapper_class(ctx, call) is not None and model_context(ctx, call)
    if iterated_source(ctx, receiver) and model_context(ctx, call):
        return True
    return (
        is_stream_value(ctx, receiver)
        and ctx.enclosing(call, (cst.ExceptHandler, cst.FunctionDef)) is not None
        and isinstance(ctx.enclosing(call, (cst.ExceptHandler, cst.FunctionDef)), cst.ExceptHandler)
        and in_retry_path(ctx, call)
    )


def _entered_only(item: cst.BaseExpression, asynchronous: bool) -> cst.BaseExpression:
    """``nullcontext(item.__enter__())`` (``await item.__aenter__()`` in ``async with``)."""
    if (
        isinstance(item, cst.Call)
        and len(item.args) == 1
        and isinstance(item.func, (cst.Name, cst.Attribute))
    ):
        name = item.func.attr.value if isinstance(item.func, cst.Attribute) else item.func.value
        if names_closing(name):  # ``closing(x)``, ``aclosing_stream(x)``: they hand back x
            return cst.Call(func=NULLCONTEXT, args=[cst.Arg(item.args[0].value)])
    target = (
        item
        if isinstance(item, (cst.Call, cst.Name, cst.Attribute, cst.Subscript))
        else item.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    )
    enter = cst.Call(
        func=cst.Attribute(value=target, attr=cst.Name("__aenter__" if asynchronous else "__enter__"))
    )
    return cst.Call(func=NULLCONTEXT, args=[cst.Arg(cst.Await(enter) if asynchronous else enter)])


def _statement_of(ctx: SourceContext, call: cst.Call) -> cst.Expr | None:
    """The expression statement ``x.close()`` / ``await x.aclose()`` that ``call`` is, if it is one."""
    parent = ctx.parent(call)
    if isinstance(parent, cst.Await):
        parent = ctx.parent(parent)
    return parent if isinstance(parent, cst.Expr) else None


def _on_early_exit_path(ctx: SourceContext, statement: cst.CSTNode) -> bool:
    """In a ``finally``/``except``, in a releasing method, or in a block that then leaves."""
    for ancestor in ctx.ancestors(statement):
        if isinstance(ancestor, (cst.Finally, cst.ExceptHandler, cst.ExceptStarHandler)):
            return True
        if isinstance(ancestor, cst.FunctionDef):
            return ancestor.name.value in RELEASING_METHODS
        if isinstance(ancestor, cst.IndentedBlock) and not isinstance(ctx.parent(ancestor), cst.FunctionDef):
            last = ancestor.body[-1] if ancestor.body else None
            if isinstance(last, cst.SimpleStatementLine) and isinstance(
                last.body[-1], (cst.Break, cst.Return, cst.Raise)
            ):
                return True
    return False


_EXHAUSTED = frozenset({"StopIteration", "StopAsyncIteration"})


def _after_exhaustion(ctx: SourceContext, statement: cst.CSTNode) -> bool:
    """In an ``except StopAsyncIteration:`` (or ``StopIteration``): the stream has just run to its
    end, so a generator has already run its own cleanup and its close is a no-op. Removing that
    close leaves nothing open, so "the stream is not released" would be false there."""
    handler = ctx.enclosing(
        statement, (cst.ExceptHandler, cst.ExceptStarHandler, cst.Finally, cst.FunctionDef)
    )
    if not isinstance(handler, cst.ExceptHandler) or handler.type is None:
        return False
    types = caught_classes(handler)
    names = {t.attr.value if isinstance(t, cst.Attribute) else getattr(t, "value", None) for t in types}
    return bool(names) and names <= _EXHAUSTED
