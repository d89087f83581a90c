"""Code that talks to a model: functions that read a stream or handle stream events, their
async twins, classes that wrap a stream, and code that visibly waits on something else (a tool,
a subprocess). It keeps the HTTP-level checks off a tool's or a tracer's HTTP calls."""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.streams.clients import is_http_call, is_model_call
from mutagent.anatomy.streams.stop_check import stop_marker
from mutagent.anatomy.syntax import is_literal, keyword, leaf_name, parameters, string_value
from mutagent.anatomy.vocabulary import (
    ASYNC_LIMITS,
    MODEL_ENDPOINT_HINTS,
    SDK_PACKAGES,
    SSE_READS,
    STREAM_EVENT_MARKERS,
    STREAM_EVENT_WORDS,
    STREAM_READS,
    last_word,
    tokens,
)
from mutagent.anatomy.vocabulary import (
    cached_analysis as _cached,
)
from mutagent.mutation.context import SourceContext


def handles_stream_events(ctx: SourceContext, node: cst.CSTNode) -> bool:
    """Whether ``node`` sits in a function that processes stream events: it takes an
    event/chunk/delta, is named for one, or itself mentions stream event types."""
    func = ctx.enclosing_function(node)
    if func is None:
        return False
    if any(last_word(p) in STREAM_EVENT_WORDS for p in parameters(func)):
        return True
    if tokens(func.name.value) & (STREAM_EVENT_WORDS | {"block", "blocks"}):
        return True
    return _cached(ctx, f"markers:{id(func)}", lambda: _mentions_events(ctx, func))


def _mentions_events(ctx: SourceContext, scope: cst.CSTNode) -> bool:
    for string in ctx.descendants(scope, m.SimpleString()):
        value = string_value(string)
        if value is not None and (value in STREAM_EVENT_MARKERS or value.startswith("response.")):
            return True
    return False


def reads_stream(ctx: SourceContext, node: cst.CSTNode) -> bool:
    """An ``async for``, a next-chunk read, a model call or an HTTP request inside ``node``."""
    if ctx.descendants(node, m.For(asynchronous=m.Asynchronous())):
        return True
    for call in ctx.descendants(node, m.Call()):
        if _is_read_call(call) or is_model_call(call) or is_http_call(ctx, call):
            return True
    return False


def _is_read_call(call: cst.Call) -> bool:
    """``stream.__anext__()``, ``queue.get()``, ``ws.recv()``; a ``get`` given a key
    (``config.get("timeout", 30)``) is a mapping lookup, not a read."""
    name = leaf_name(call.func)
    if name == "get" and any(arg.keyword is None for arg in call.args):
        return False
    return name in STREAM_READS


def model_context(ctx: SourceContext, node: cst.CSTNode) -> bool:
    """Whether ``node`` is in code that talks to a model: its function makes a model call,
    streams (``stream=True``, ``aiter_lines``, ``async for``) or handles stream events, or its
    file imports a model SDK or names a model endpoint or stream event. Keeps the HTTP-level
    checks off a tool's or a tracer's HTTP calls."""
    func = ctx.enclosing_function(node)
    if func is not None and _cached(ctx, f"streams:{id(func)}", lambda: _streams_in(ctx, func)):
        return True
    if func is not None and any(_streams_or_twin(ctx, twin) for twin in async_twins(ctx, func)):
        return True
    owner = ctx.parent(ctx.parent(func)) if func is not None else None
    if isinstance(owner, cst.ClassDef) and _cached(
        ctx, f"class-streams:{id(owner)}", lambda: _class_streams(ctx, owner)
    ):
        return True
    return _cached(ctx, "model-file", lambda: _model_file(ctx))


def _streams_or_twin(ctx: SourceContext, func: cst.FunctionDef) -> bool:
    return _cached(ctx, f"streams:{id(func)}", lambda: _streams_in(ctx, func))  # type: ignore[return-value]


def builds_streaming_object(ctx: SourceContext, value: cst.CSTNode) -> bool:
    """``ChatCompletionStream(...)``: a constructor of a class of this file that reads a stream."""
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name)):
        return False
    return any(
        cls.name.value == value.func.value
        and _cached(ctx, f"class-streams:{id(cls)}", lambda cls=cls: _class_streams(ctx, cls))
        for cls in ctx.nodes(cst.ClassDef)
    )


def _class_streams(ctx: SourceContext, cls: cst.ClassDef) -> bool:
    """A method of the class (or the async twin of one) reads a stream: its ``close()``,
    ``__exit__`` and the like release that stream (``Stream.close`` beside ``Stream.__stream__``)."""
    body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ()
    for method in (node for node in body if isinstance(node, cst.FunctionDef)):
        if _streams_or_twin(ctx, method) or any(_streams_or_twin(ctx, t) for t in async_twins(ctx, method)):
            return True
        if _calls_streaming_function(ctx, method):
            return True
    return False


def _calls_streaming_function(ctx: SourceContext, method: cst.FunctionDef) -> bool:
    """The method calls a module-level function of this file that reads a stream
    (``self.generator = stream_events(response, decoder)`` in ``EventStream.__init__``): by the
    call graph, the object holds that stream."""
    functions = _cached(
        ctx,
        "module-functions",
        lambda: {
            node.name.value: node
            for node in (ctx.module.body if ctx.module is not None else ())
            if isinstance(node, cst.FunctionDef)
        },
    )
    for call in ctx.descendants(method, m.Call(func=m.Name())):
        target = functions.get(call.func.value)  # type: ignore[union-attr]
        if target is not None and target is not method and _streams_or_twin(ctx, target):
            return True
    return False


def _sync_spelling(name: str) -> str:
    """``AsyncStream`` -> ``Stream``, ``async_iter_events``/``iter_events_async`` -> ``iter_events``,
    ``__aexit__`` -> ``__exit__``."""
    if name.startswith("__a") and name.endswith("__") and len(name) > 5:
        return "__" + name[3:]
    for prefix in ("Async", "async_", "_async_"):
        if name.startswith(prefix) and len(name) > len(prefix):
            return name[len(prefix) :] if prefix != "_async_" else "_" + name[len(prefix) :]
    for suffix in ("_async", "Async"):
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def async_twins(ctx: SourceContext, func: cst.FunctionDef) -> list[cst.FunctionDef]:
    """The ``async def`` counterparts of a plain ``def`` in the same file: SDKs write every stream
    twice (``Stream.__stream__`` and ``AsyncStream.__stream__``, ``iter_lines`` and
    ``aiter_lines``), and what the async one shows (an ``async for`` over the response) holds
    for the sync one, which reads through a plain ``for``."""
    if func.asynchronous is not None:
        return []

    def compute() -> dict[tuple[str, ...], list[cst.FunctionDef]]:
        index: dict[tuple[str, ...], list[cst.FunctionDef]] = {}
        for other in ctx.nodes(cst.FunctionDef):
            if other.asynchronous is None:
                continue
            scope = ctx.scope_of(other.name)
            *owners, own = scope or (other.name.value,)
            keys = {own, _sync_spelling(own)}
            if own.startswith("a") and len(own) > 1:
                keys.add(own[1:])  # aiter_lines / iter_lines, aclose / close
            for key in keys:
                index.setdefault((*map(_sync_spelling, owners), key), []).append(other)
        return index

    index = _cached(ctx, "async-twins", compute)
    scope = ctx.scope_of(func.name)
    return [twin for twin in index.get(tuple(map(_sync_spelling, scope)), []) if twin is not func]  # type: ignore[union-attr]


def _streams_in(ctx: SourceContext, func: cst.FunctionDef) -> bool:
    if handles_stream_events(ctx, func.body) or ctx.descendants(func, m.For(asynchronous=m.Asynchronous())):
        return True
    for call in ctx.descendants(func, m.Call()):
        flag = keyword(call, "stream")
        if (
            is_model_call(call)
            or leaf_name(call.func) in SSE_READS
            or (flag and not is_literal(flag.value, "False", "None") and is_http_call(ctx, call))
            or (flag and is_literal(flag.value, "True"))
        ):
            return True
    return False


def _model_file(ctx: SourceContext) -> bool:
    for node in ctx.nodes(cst.Import) + ctx.nodes(cst.ImportFrom):
        names = [a.name for a in node.names] if isinstance(node, cst.Import) else [node.module]
        for name in names:
            if name is not None and ctx.code(name).split(".")[0] in SDK_PACKAGES:
                return True
    texts = [string_value(string) for string in ctx.nodes(cst.SimpleString)]
    texts += [part.value for part in ctx.nodes(cst.FormattedStringText)]  # f"{base}/v1/messages"
    for value in texts:
        if value and (
            value in STREAM_EVENT_MARKERS
            or stop_marker(value)
            or any(h in value for h in MODEL_ENDPOINT_HINTS)
        ):
            return True
    return False


#: Calls and attributes of local processes and pipes: a ``BrokenPipeError`` or ``TimeoutError``
#: around them is a tool's, not the model connection's.
_PROCESS_MODULES = ("subprocess.", "asyncio.create_subprocess", "os.", "shutil.", "multiprocessing.", "pty.")


_PROCESS_ATTRIBUTES = frozenset("stdin stdout stderr communicate wait poll kill terminate".split())


def guards_something_else(ctx: SourceContext, node: cst.CSTNode) -> bool:
    """``node`` reads no stream and visibly waits on something else: a timeout wrapper or a
    ``timeout=`` call (a tool, a lock), a subprocess or pipe. A ``TimeoutError`` or
    ``BrokenPipeError`` caught around it is not a dropped model connection."""
    if reads_stream(ctx, node):
        return False
    for call in ctx.descendants(node, m.Call()):
        names = ctx.qualified_names(call)
        timeouts = any(
            arg.keyword is not None and "timeout" in tokens(arg.keyword.value) for arg in call.args
        )
        if timeouts or names & set(ASYNC_LIMITS):
            return True
        if any(name.startswith(_PROCESS_MODULES) for name in names) or "open" in {leaf_name(call.func)}:
            return True
    return any(n.attr.value in _PROCESS_ATTRIBUTES for n in ctx.descendants(node, m.Attribute()))
