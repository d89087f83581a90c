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

from mutagent.anatomy.callgraph import callee
from mutagent.anatomy.hierarchy import subclass_kept
from mutagent.anatomy.retry.disconnects import caught_by_a_base, module_tuples, transport_class
from mutagent.anatomy.streams.clients import transport_error_name
from mutagent.anatomy.streams.context import guards_something_else, model_context, reads_stream
from mutagent.anatomy.syntax import caught_classes
from mutagent.mutation.context import SourceContext
from mutagent.mutation.operator import Example, Mutation, Operator
from mutagent.mutation.rewrite import without_element

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
                "import httpx\n"
                "from openai import APIConnectionError\n"
                "from ._compat import request_exceptions\n"
                "\n"
                "def send(client, request):\n"
                "    try:\n"
                "        return client.send(request)\n"
                "    except request_exceptions() as err:\n"
                "        raise APIConnectionError(request=request) from err\n"
            ),
            after=(
                "import httpx\n"
                "from openai import APIConnectionError\n"
                "from ._compat import request_exceptions\n"
                "\n"
                "def send(client, request):\n"
                "    try:\n"
                "        return client.send(request)\n"
                "    except () as err:\n"
                "        raise APIConnectionError(request=request) from err\n"
            ),
            note="types from an imported helper; the handler re-raises them as a connection error",
        ),
        Example(
            before=(
                "from openai import APIConnectionError, APITimeoutError\n"
                "from ._compat import request_exceptions, timeout_exceptions\n"
                "\n"
                "def send(client, request):\n"
                "    try:\n"
                "        return client.send(request)\n"
                "    except timeout_exceptions() as err:\n"
                "        raise APITimeoutError(request=request) from err\n"
                "    except request_exceptions() as err:\n"
                "        raise APIConnectionError(request=request) from err\n"
            ),
            after=(
                "from openai import APIConnectionError, APITimeoutError\n"
                "from ._compat import request_exceptions, timeout_exceptions\n"
                "\n"
                "def send(client, request):\n"
                "    try:\n"
                "        return client.send(request)\n"
                "    except timeout_exceptions() as err:\n"
                "        raise APITimeoutError(request=request) from err\n"
                "    except () as err:\n"
                "        raise APIConnectionError(request=request) from err\n"
            ),
            note="only the last of two helper handlers: a timeout may still be caught by the later one",
        ),
        Example(
            before=(
                "import httpx\n"
                "\n"
                "def transport_errors():\n"
                "    return (httpx.ReadError, httpx.RemoteProtocolError)\n"
                "\n"
                "def turn(client, body):\n"
                "    try:\n"
                "        return client.post('/v1/messages', json=body)\n"
                "    except transport_errors():\n"
                "        return None\n"
            ),
            after=(
                "import httpx\n"
                "\n"
                "def transport_errors():\n"
                "    return (httpx.ReadError, httpx.RemoteProtocolError)\n"
                "\n"
                "def turn(client, body):\n"
                "    try:\n"
                "        return client.post('/v1/messages', json=body)\n"
                "    except ():\n"
                "        return None\n"
            ),
            note="types from a helper of this file that returns a tuple of transport errors",
        ),
        Example(
            before=(
                "from ._compat import decode_errors, request_exceptions\n"
                "\n"
                "def parse(text):\n"
                "    try:\n"
                "        return load(text)\n"
                "    except decode_errors() as err:\n"
                "        raise ValueError('bad payload') from err\n"
                "\n"
                "def fetch(client, request):\n"
                "    try:\n"
                "        return client.send(request)\n"
                "    except request_exceptions():\n"
                "        return None\n"
            ),
            note="a helper's types with no evidence they are transport errors (a name is not evidence)",
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
        Example(
            before=(
                "import aiohttp\n"
                "import openai\n"
                "\n"
                "def with_backoff(func, errors=(openai.RateLimitError, aiohttp.ServerTimeoutError)):\n"
                "    def wrapper(*args):\n"
                "        while True:\n"
                "            try:\n"
                "                return func(*args)\n"
                "            except errors:\n"
                "                continue\n"
                "    return wrapper\n"
            ),
            after=(
                "import aiohttp\n"
                "import openai\n"
                "\n"
                "def with_backoff(func, errors=(openai.RateLimitError,)):\n"
                "    def wrapper(*args):\n"
                "        while True:\n"
                "            try:\n"
                "                return func(*args)\n"
                "            except errors:\n"
                "                continue\n"
                "    return wrapper\n"
            ),
            note="the caught types are a parameter's default tuple, read by the closure's handler",
        ),
        Example(
            before=(
                "import aiohttp\n"
                "\n"
                "def with_backoff(func, errors: tuple = (aiohttp.ServerTimeoutError,)):\n"
                "    errors = load_errors()\n"
                "    try:\n"
                "        return func()\n"
                "    except errors:\n"
                "        return None\n"
            ),
            note="the parameter is rebound before the handler: its default is not what is caught",
        ),
        Example(
            before=(
                "import tenacity\n"
                "\n"
                "try:\n"
                "    import aiohttp\n"
                "    TRANSIENT = (aiohttp.ServerDisconnectedError, aiohttp.ClientPayloadError)\n"
                "except ImportError:\n"
                "    TRANSIENT = ()\n"
                "\n"
                "def retry_args():\n"
                "    return {'retry': tenacity.retry_if_exception(lambda e: isinstance(e, TRANSIENT))}\n"
            ),
            after=(
                "import tenacity\n"
                "\n"
                "try:\n"
                "    import aiohttp\n"
                "    TRANSIENT = (aiohttp.ClientPayloadError,)\n"
                "except ImportError:\n"
                "    TRANSIENT = ()\n"
                "\n"
                "def retry_args():\n"
                "    return {'retry': tenacity.retry_if_exception(lambda e: isinstance(e, TRANSIENT))}\n"
            ),
            note="a module tuple (bound under an optional import) tested by a tenacity retry predicate",
        ),
        Example(
            before=(
                "import httpx\n"
                "from typing import TYPE_CHECKING\n"
                "\n"
                "if TYPE_CHECKING:\n"
                "    TRANSIENT = (httpx.ConnectError, httpx.ReadTimeout)\n"
                "NETWORK = (httpx.ConnectError, httpx.ReadTimeout)\n"
                "\n"
                "def label(e):\n"
                "    return 'network' if isinstance(e, NETWORK) else 'other'\n"
            ),
            note="a tuple only type checkers read, and one tested only to label an error",
        ),
    )

    def find(self, ctx: SourceContext) -> Iterator[Mutation]:
        yield from _tested_by_retry_predicate(ctx)
        for handler in ctx.findall(m.ExceptHandler()) + ctx.findall(m.ExceptStarHandler()):
            if handler.type is None or _only_reraises(ctx, handler):
                continue
            caught = handler.type
            guarded = ctx.parent(handler).body  # type: ignore[union-attr]
            if isinstance(caught, cst.Tuple):
                yield from _tuple_mutations(ctx, caught, guarded)
            elif (name := _transport_error(ctx, caught, guarded)) is not None:
                yield Mutation(
                    caught,
                    NOTHING,
                    f"except no longer catches {name}",
                    equivalent=_same_as_catch_all(ctx, handler),
                )
            elif isinstance(caught, cst.Name):
                for value in _module_tuples_named(ctx, caught.value):
                    yield from _tuple_mutations(ctx, value, None)
                for value in _parameter_defaults_named(ctx, handler, caught.value):
                    yield from _tuple_mutations(ctx, value, guarded)
            elif isinstance(caught, cst.Call) and not caught.args:
                evidence = _helper_catches_transport_errors(ctx, caught, handler)
                if evidence is not None:
                    yield Mutation(
                        caught, NOTHING, f"except no longer catches {ctx.code(caught)} ({evidence})"
                    )


def _may_catch_transport_errors(
    ctx: SourceContext, handler: cst.ExceptHandler | cst.ExceptStarHandler
) -> bool:
    caught = handler.type
    if any(transport_error_name(ctx, e) is not None for e in caught_classes(handler)):
        return True
    return isinstance(caught, cst.Call) and _helper_catches_transport_errors(ctx, caught, handler) is not None


def _helper_catches_transport_errors(
    ctx: SourceContext, call: cst.Call, handler: cst.ExceptHandler | cst.ExceptStarHandler
) -> str | None:
    """``except request_exceptions() as err:``: the caught types come from a helper. Evidence that
    they are transport errors, or None: the helper is a def of this file that returns a tuple of
    transport errors, or the handler turns what it caught into a transport error
    (``raise APIConnectionError(...) from err``), which says what it catches."""
    siblings = list(ctx.parent(handler).handlers)  # type: ignore[union-attr]
    for later in siblings[siblings.index(handler) + 1 :]:
        if later.type is not None and _may_catch_transport_errors(ctx, later):
            return None  # types unknown here: a later handler may still catch them (a base class)
    helper = callee(ctx, call)
    if helper is not None:
        for returned in ctx.descendants(helper.body, m.Return(value=m.Tuple())):
            names = [transport_error_name(ctx, e.value) for e in returned.value.elements]
            found = [n.rsplit(".", 1)[-1] for n in names if n is not None]
            if found:
                return "it returns " + ", ".join(found)
        return None
    if handler.name is None or not isinstance(handler.name.name, cst.Name):
        return None
    caught_as = handler.name.name.value
    for raised in ctx.descendants(handler.body, m.Raise(exc=m.Call(), cause=m.From(item=m.Name(caught_as)))):
        name = transport_error_name(ctx, raised.exc.func)
        if name is not None:
            return f"what it catches is re-raised as {name.rsplit('.', 1)[-1]}"
    return None


def _transport_error(
    ctx: SourceContext, expr: cst.BaseExpression, guarded: cst.BaseSuite | None
) -> str | None:
    """The transport error ``expr`` names. A builtin such as ``TimeoutError`` or
    ``BrokenPipeError`` counts only in code that talks to a model or reads a stream, and not
    when the guarded code visibly waits on something else (a tool under ``anyio.fail_after``,
    a subprocess's pipe)."""
    name = transport_class(ctx, expr)
    if name in AMBIGUOUS:
        if guarded is not None and guards_something_else(ctx, guarded):
            return None
        if not model_context(ctx, expr) and not (guarded is not None and reads_stream(ctx, guarded)):
            return None
    return name


def _tuple_mutations(
    ctx: SourceContext, caught: cst.Tuple, guarded: cst.BaseSuite | None, read_by: str | None = None
) -> Iterator[Mutation]:
    """One mutant per transport error of ``caught``; ``read_by`` names the retry predicate when
    the tuple is tested by ``isinstance`` rather than caught by an ``except``."""
    for element in caught.elements:
        name = _transport_error(ctx, element.value, guarded)
        if name is None:
            continue
        # an element caught beside one of its base classes is still caught once removed: the
        # mutant is equivalent, listed Ignored with the reason and never run
        equivalent = subclass_kept(ctx, element.value, [e.value for e in caught.elements])
        if equivalent is None and caught_by_a_base(ctx, element.value, [e.value for e in caught.elements]):
            equivalent = f"{ctx.code(element.value).strip()} derives from another class the tuple still names"
        description = (
            f"except no longer catches {name}"
            if read_by is None
            else f"{read_by} no longer counts {name} as transient: that disconnect is not retried"
        )
        yield Mutation(
            caught,
            without_element(caught, element) or NOTHING,
            description,
            equivalent=equivalent,
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


def _same_as_catch_all(ctx: SourceContext, handler: cst.ExceptHandler | cst.ExceptStarHandler) -> str | None:
    """``except APIConnectionError as e: raise ModelProviderError(message=str(e)) from e`` above an
    ``except Exception as e:`` with that very body: the dropped class lands in the catch-all and
    meets the same code, so the mutant changes nothing. A handler between them that may catch a
    base of the class (by the family tree) would run instead: then nothing is known."""
    siblings = list(ctx.parent(handler).handlers)  # type: ignore[union-attr]
    caught = handler.type
    for later in siblings[siblings.index(handler) + 1 :]:
        broad = later.type is None or ctx.qualified_names(later.type) & {
            "builtins.Exception",
            "builtins.BaseException",
        }
        if broad:
            same_name = (handler.name is None and later.name is None) or (
                handler.name is not None
                and later.name is not None
                and ctx.code(handler.name.name) == ctx.code(later.name.name)
            )
            if same_name and ctx.code(handler.body).strip() == ctx.code(later.body).strip():
                below = ctx.code(later.type).strip() if later.type else ""
                return f"the `except {below}` below runs the same code"
            return None
        if caught is not None and caught_by_a_base(ctx, caught, caught_classes(later)):
            return None
        if caught is not None and subclass_kept(ctx, caught, [caught, *caught_classes(later)]):
            return None
    return None


def _tested_by_retry_predicate(ctx: SourceContext) -> Iterator[Mutation]:
    """``retry_if_exception(lambda e: ... or isinstance(e, _AIOHTTP_TRANSIENT_EXC))`` with
    ``_AIOHTTP_TRANSIENT_EXC = (aiohttp.ClientOSError, aiohttp.ServerDisconnectedError)`` bound at
    module level: the retry predicate, not an ``except``, decides that these disconnects are
    retried. A tuple tested by an ``isinstance`` that decides no retry (a log label) is left alone."""
    from mutagent.anatomy.retry.loops import in_retry_decision

    done: set[int] = set()
    for call in ctx.findall(m.Call(func=m.Name("isinstance"), args=[m.DoNotCare(), m.Arg(value=m.Name())])):
        if not in_retry_decision(ctx, call):
            continue
        name = call.args[1].value.value
        for value in module_tuples(ctx, name):
            if id(value) not in done:
                done.add(id(value))
                yield from _tuple_mutations(ctx, value, None, read_by=f"the retry predicate's {name}")


def _parameter_defaults_named(
    ctx: SourceContext, handler: cst.ExceptHandler | cst.ExceptStarHandler, name: str
) -> Iterator[cst.Tuple]:
    """``def retry_with_backoff(func, errors: tuple = (openai.APITimeoutError, ...))`` for
    ``except errors as e:`` in it or in a closure it returns: the caught types are the
    parameter's default tuple (the innermost function binding the name wins; a local
    assignment of that name shadows it, and then nothing is known)."""
    for function in ctx.ancestors(handler):
        if not isinstance(function, cst.FunctionDef):
            continue
        params = function.params
        every = [*params.posonly_params, *params.params, *params.kwonly_params]
        bound = next((p for p in every if p.name.value == name), None)
        assigned = ctx.descendants(function.body, m.AssignTarget(target=m.Name(name)))
        if bound is None and not assigned:
            continue
        if bound is not None and isinstance(bound.default, cst.Tuple) and not assigned:
            yield bound.default
        return


def _only_reraises(ctx: SourceContext, handler: cst.ExceptHandler | cst.ExceptStarHandler) -> bool:
    """``except X: raise`` as the last handler changes nothing when removed: an equivalent mutant."""
    body = handler.body
    reraises = isinstance(body, cst.IndentedBlock) and ctx.matches(
        body, m.IndentedBlock(body=[m.SimpleStatementLine(body=[m.Raise(exc=None)])])
    )
    siblings = ctx.parent(handler).handlers  # type: ignore[union-attr]
    return reraises and siblings[-1] is handler
