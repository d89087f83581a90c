"""drop-disconnect-handling: an except clause stops catching one transport/connection/timeout error.

A connection that drops mid-stream (``httpx2.RemoteProtocolError``, aiohttp's
``ServerDisconnectedError``, ``anthropic.APIConnectionError``...) is the most common failure of a
streaming agent. The handler that turns it into a retry is exercised only when a test makes the
server cut the stream; without such a test the handler can vanish and the agent crashes on the
first flaky network.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst
import libcst.matchers as m

from mutagent.mutation.context import SourceContext
from mutagent.mutation.operator import Example, Mutation, Operator
from operators._streams import (
    guards_something_else,
    model_context,
    reads_stream,
    transport_error_name,
    without_element,
)

#: What a handler that lost its only type catches instead: the empty tuple, which compiles in
#: every Python version, never matches any exception, and reads as "catches nothing" in a diff
#: (a fresh ``type(...)`` class would also never match but hides the intent in noise).
NOTHING = cst.Tuple(elements=[])
#: Builtins raised as often by a tool, a lock or a pipe as by the model connection.
AMBIGUOUS = frozenset(
    (
        "builtins.TimeoutError asyncio.TimeoutError asyncio.exceptions.TimeoutError builtins.BrokenPipeError "
        "builtins.ConnectionResetError builtins.ConnectionError"
    ).split()
)


#: Base classes of the common transport errors, per library family (child -> its bases): an
#: element caught beside one of its bases in the same tuple is still caught once removed, so
#: dropping it would be an equivalent mutant.
_BASES: dict[str, dict[str, tuple[str, ...]]] = {
    "httpx": {
        "TimeoutException": ("TransportError",),
        "NetworkError": ("TransportError",),
        "ProtocolError": ("TransportError",),
        "ProxyError": ("TransportError",),
        "UnsupportedProtocol": ("TransportError",),
        "ConnectTimeout": ("TimeoutException",),
        "ReadTimeout": ("TimeoutException",),
        "WriteTimeout": ("TimeoutException",),
        "PoolTimeout": ("TimeoutException",),
        "ConnectError": ("NetworkError",),
        "ReadError": ("NetworkError",),
        "WriteError": ("NetworkError",),
        "CloseError": ("NetworkError",),
        "LocalProtocolError": ("ProtocolError",),
        "RemoteProtocolError": ("ProtocolError",),
        "TransportError": ("RequestError",),
        "DecodingError": ("RequestError",),
        "TooManyRedirects": ("RequestError",),
        "RequestError": ("HTTPError",),
        "HTTPStatusError": ("HTTPError",),
    },
    "sdk": {  # openai and anthropic share the hierarchy
        "APIConnectionError": ("APIError",),
        "APITimeoutError": ("APIConnectionError",),
        "APIStatusError": ("APIError",),
        "APIResponseValidationError": ("APIError",),
    },
    "aiohttp": {
        "ClientConnectionError": ("ClientError",),
        "ClientOSError": ("ClientConnectionError",),
        "ClientConnectorError": ("ClientOSError",),
        "ServerConnectionError": ("ClientConnectionError",),
        "ServerDisconnectedError": ("ServerConnectionError",),
        "ServerTimeoutError": ("ServerConnectionError",),
        "ConnectionTimeoutError": ("ServerTimeoutError",),
        "SocketTimeoutError": ("ServerTimeoutError",),
        "ClientPayloadError": ("ClientError",),
        "ClientResponseError": ("ClientError",),
    },
    "requests": {
        "ConnectionError": ("RequestException",),
        "Timeout": ("RequestException",),
        "ConnectTimeout": ("ConnectionError", "Timeout"),
        "ReadTimeout": ("Timeout",),
        "ChunkedEncodingError": ("RequestException",),
        "HTTPError": ("RequestException",),
    },
    "builtins": {
        "ConnectionError": ("OSError",),
        "ConnectionResetError": ("ConnectionError",),
        "ConnectionAbortedError": ("ConnectionError",),
        "ConnectionRefusedError": ("ConnectionError",),
        "BrokenPipeError": ("ConnectionError",),
        "TimeoutError": ("OSError",),
    },
}
_FAMILY = {"httpx": "httpx", "httpx2": "httpx", "openai": "sdk", "anthropic": "sdk", "aiohttp": "aiohttp"}
_FAMILY |= {"requests": "requests", "builtins": "builtins", "asyncio": "builtins", "socket": "builtins"}


def _family_and_class(qualified: str) -> tuple[str, str] | None:
    family = _FAMILY.get(qualified.split(".", 1)[0])
    return (family, qualified.rsplit(".", 1)[-1]) if family else None


def _caught_by_a_base(ctx: SourceContext, element: cst.Element, caught: cst.Tuple) -> bool:
    """Another element of ``caught`` is a base class of ``element`` (``except (httpx.TransportError,
    httpx.TimeoutException)``): removing ``element`` changes nothing."""
    own = [f for f in map(_family_and_class, ctx.qualified_names(element.value)) if f]
    others = {
        f
        for other in caught.elements
        if other is not element
        for f in map(_family_and_class, ctx.qualified_names(other.value))
        if f
    }
    for family, name in own:
        pending, seen = [name], set()
        while pending:
            current = pending.pop()
            for base in _BASES[family].get(current, ()):
                if (family, base) in others:
                    return True
                if base not in seen:
                    seen.add(base)
                    pending.append(base)
    return False


class DropDisconnectHandling(Operator):
    name = "drop-disconnect-handling"
    description = "An except clause no longer catches one transport/connection/timeout error."
    failure = (
        "A dropped or stalled connection escapes the handler meant for it, so instead of retrying "
        "the turn the agent crashes (or a broader handler misfiles it as another failure)."
    )
    hint = (
        "Make the fake server cut the stream mid-response, drop the connection before the response "
        "(`behaviours.drop()`), or stall it past the read timeout; for a refused connection point the "
        "client at `FakeModelServer.refused_url()`. Assert the agent retried: two requests, the same "
        "body, the failure journaled with its reason."
    )
    examples = (
        Example(
            before=(
                "import httpx2\n"
                "\n"
                "def turn(client, body):\n"
                "    try:\n"
                "        return consume(client.messages.create(**body, stream=True))\n"
                "    except (httpx2.RemoteProtocolError, httpx2.ReadError):\n"
                "        return retry(body)\n"
            ),
            after=(
                "import httpx2\n"
                "\n"
                "def turn(client, body):\n"
                "    try:\n"
                "        return consume(client.messages.create(**body, stream=True))\n"
                "    except (httpx2.ReadError,):\n"
                "        return retry(body)\n"
            ),
            note="sync anthropic SDK, tuple of httpx2 errors: one mutant per element",
        ),
        Example(
            before=(
                "from aiohttp import ServerDisconnectedError as Gone\n"
                "\n"
                "async def read_events(session, url):\n"
                "    try:\n"
                "        async with session.post(url) as resp:\n"
                "            return [line async for line in resp.content]\n"
                "    except Gone as exc:\n"
                "        raise Retryable(str(exc)) from exc\n"
            ),
            after=(
                "from aiohttp import ServerDisconnectedError as Gone\n"
                "\n"
                "async def read_events(session, url):\n"
                "    try:\n"
                "        async with session.post(url) as resp:\n"
                "            return [line async for line in resp.content]\n"
                "    except () as exc:\n"
                "        raise Retryable(str(exc)) from exc\n"
            ),
            note="async aiohttp, aliased import: the handler catches nothing",
        ),
        Example(
            before=(
                "import openai\n"
                "\n"
                "RETRYABLE = (openai.APIConnectionError, openai.RateLimitError)\n"
                "\n"
                "def complete(client, messages):\n"
                "    try:\n"
                "        return client.chat.completions.create(model='m', messages=messages)\n"
                "    except RETRYABLE:\n"
                "        return None\n"
            ),
            after=(
                "import openai\n"
                "\n"
                "RETRYABLE = (openai.RateLimitError,)\n"
                "\n"
                "def complete(client, messages):\n"
                "    try:\n"
                "        return client.chat.completions.create(model='m', messages=messages)\n"
                "    except RETRYABLE:\n"
                "        return None\n"
            ),
            note="openai, the caught types live in a module-level tuple",
        ),
        Example(
            before=(
                "import requests\n"
                "\n"
                "def stream_lines(url):\n"
                "    try:\n"
                "        with requests.post(url, stream=True, timeout=30) as r:\n"
                "            yield from r.iter_lines()\n"
                "    except (ValueError, requests.exceptions.ChunkedEncodingError, ConnectionResetError):\n"
                "        yield None\n"
            ),
            after=(
                "import requests\n"
                "\n"
                "def stream_lines(url):\n"
                "    try:\n"
                "        with requests.post(url, stream=True, timeout=30) as r:\n"
                "            yield from r.iter_lines()\n"
                "    except (ValueError, ConnectionResetError):\n"
                "        yield None\n"
            ),
            note="raw requests SSE; ValueError is left alone",
        ),
        Example(
            before=(
                "import json\n"
                "\n"
                "def parse(line):\n"
                "    try:\n"
                "        return json.loads(line)\n"
                "    except (ValueError, KeyError):\n"
                "        return None\n"
                "    except Exception:\n"
                "        raise\n"
            ),
            note="ValueError, KeyError and Exception are not transport errors",
        ),
        Example(
            before=(
                "class ConnectionError(Exception):\n"
                "    pass\n"
                "\n"
                "def load(db):\n"
                "    try:\n"
                "        return db.fetch()\n"
                "    except (ConnectionError, OSError):\n"
                "        return None\n"
            ),
            note="a project's own ConnectionError and OSError (file errors too) are not matched",
        ),
    )

    def find(self, ctx: SourceContext) -> Iterator[Mutation]:
        for handler in ctx.findall(m.ExceptHandler()) + ctx.findall(m.ExceptStarHandler()):
            if handler.type is None or _only_reraises(ctx, handler):
                continue
            caught = handler.type
            guarded = ctx.parent(handler).body  # type: ignore[union-attr]
            if isinstance(caught, cst.Tuple):
                yield from _tuple_mutations(ctx, caught, guarded)
            elif (name := _transport_error(ctx, caught, guarded)) is not None:
                yield Mutation(caught, NOTHING, f"except no longer catches {name}")
            elif isinstance(caught, cst.Name):
                for value in _module_tuples_named(ctx, caught.value):
                    yield from _tuple_mutations(ctx, value, None)


def _transport_error(
    ctx: SourceContext, expr: cst.BaseExpression, guarded: cst.BaseSuite | None
) -> str | None:
    """The transport error ``expr`` names. A builtin such as ``TimeoutError`` or
    ``BrokenPipeError`` counts only in code that talks to a model or reads a stream, and not
    when the guarded code visibly waits on something else (a tool under ``anyio.fail_after``,
    a subprocess's pipe)."""
    name = transport_error_name(ctx, expr)
    if name in AMBIGUOUS:
        if guarded is not None and guards_something_else(ctx, guarded):
            return None
        if not model_context(ctx, expr) and not (guarded is not None and reads_stream(ctx, guarded)):
            return None
    return name


def _tuple_mutations(
    ctx: SourceContext, caught: cst.Tuple, guarded: cst.BaseSuite | None
) -> Iterator[Mutation]:
    for element in caught.elements:
        name = _transport_error(ctx, element.value, guarded)
        if name is not None and not _caught_by_a_base(ctx, element, caught):
            yield Mutation(
                caught, without_element(caught, element) or NOTHING, f"except no longer catches {name}"
            )


def _module_tuples_named(ctx: SourceContext, name: str) -> Iterator[cst.Tuple]:
    """``RETRYABLE = (...)`` at module level, for ``except RETRYABLE:``."""
    pattern = m.Assign(targets=[m.AssignTarget(m.Name(name))], value=m.Tuple()) | m.AnnAssign(
        target=m.Name(name), value=m.Tuple()
    )
    for statement in ctx.module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if ctx.matches(small, pattern):
                    yield small.value


def _only_reraises(ctx: SourceContext, handler: cst.ExceptHandler | cst.ExceptStarHandler) -> bool:
    """``except X: raise`` as the last handler changes nothing when removed: an equivalent mutant."""
    body = handler.body
    reraises = isinstance(body, cst.IndentedBlock) and ctx.matches(
        body, m.IndentedBlock(body=[m.SimpleStatementLine(body=[m.Raise(exc=None)])])
    )
    siblings = ctx.parent(handler).handlers  # type: ignore[union-attr]
    return reraises and siblings[-1] is handler
