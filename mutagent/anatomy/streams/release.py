"""The stream-release role's values: what opens a streamed response that holds a connection
until released (``stream=True``, ``.messages.stream(...)``, ``client.stream(...)``), and the
variables that hold one."""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.dataflow import bound_values
from mutagent.anatomy.streams.clients import is_http_call, is_model_call
from mutagent.anatomy.syntax import attribute_chain, is_literal, keyword, leaf_name
from mutagent.anatomy.vocabulary import (
    STREAM_EVENT_WORDS,
    TRANSPORT_SENDS,
    last_word,
)
from mutagent.mutation.context import SourceContext


def streaming_producer(ctx: SourceContext, expr: cst.CSTNode) -> bool:
    """Whether ``expr`` opens a streamed response that holds a connection until released:
    a model or HTTP call with ``stream=True``, ``.messages.stream(...)``, ``client.stream(...)``,
    ``.with_streaming_response.``, an aiohttp request (its body is read lazily)."""
    if isinstance(expr, cst.Await):
        expr = expr.expression
    if not isinstance(expr, cst.Call):
        return False
    if leaf_name(expr.func) in TRANSPORT_SENDS and expr.args:
        return True  # an httpx transport hands back the response with its body still unread
    flag = keyword(expr, "stream")
    if (
        flag is not None
        and is_literal(flag.value, "True")
        and (is_model_call(expr) or is_http_call(ctx, expr))
    ):
        return True
    chain = attribute_chain(expr.func)
    if "with_streaming_response" in chain:
        return True
    if chain and chain[-1] == "stream" and (is_model_call(expr) or is_http_call(ctx, expr)):
        return True
    return False


def is_stream_value(ctx: SourceContext, expr: cst.CSTNode) -> bool:
    """A variable holding a streamed response: bound to a streaming producer, or named for one
    (``stream``, ``self._raw_stream``, ``failed_response``) and not bound to a file."""
    values = bound_values(ctx, expr)
    if any(streaming_producer(ctx, value) for value in values):
        return True
    if any(
        isinstance(v, cst.Call) and leaf_name(v.func) in ("open", "_open", "StringIO", "BytesIO")
        for v in values
    ):
        return False
    names = [leaf_name(expr)]
    # ``stream_to_close = self.completion_stream``: an alias of a value named for a stream
    names += [leaf_name(v) for v in values if isinstance(v, (cst.Name, cst.Attribute))]
    return any(
        name and not name[:1].isupper()  # ``StreamHandler.close(self)``: a class, not a value
        and last_word(name) in _STREAM_VALUE_WORDS
        for name in names
    )


_STREAM_VALUE_WORDS = frozenset({"stream", "response", "resp", "sse", "eventsource"})


#: Words of a helper or context manager named for releasing what it is handed
#: (``closing_stream(events)``, ``aclosing_stream(source)``, ``_close_quietly(stream)``).
_CLOSING_WORDS = frozenset({"closing", "aclosing", "close", "aclose"})


def names_closing(name: str | None) -> bool:
    """``closing_stream``/``aclosing_stream``/``_close_quietly``: a callable named for closing."""
    return bool(name) and bool(_CLOSING_WORDS & {w.lower() for w in name.split("_") if w})  # type: ignore[union-attr]


def _event_loop_over(ctx: SourceContext, block: cst.CSTNode, source: cst.CSTNode) -> bool:
    """``block`` holds ``for event in source:`` (or ``async for chunk in source``): the source
    is read as a stream of events, by the loop variable's name (``event``, ``chunk``, ``delta``)."""
    wanted = ctx.code(source).strip()
    for loop in ctx.descendants(block, m.For()):
        if ctx.code(loop.iter).strip() != wanted:
            continue
        target = loop.target
        if isinstance(target, cst.Name) and last_word(target.value) in STREAM_EVENT_WORDS:
            return True
    return False


def _opened_file(ctx: SourceContext, expr: cst.CSTNode) -> bool:
    return any(
        isinstance(v, cst.Call) and leaf_name(v.func) in ("open", "_open", "StringIO", "BytesIO")
        for v in [expr, *bound_values(ctx, expr)]
    )


def consumed_in_with(
    ctx: SourceContext, statement: cst.With, item: cst.WithItem
) -> cst.BaseExpression | None:
    """What a ``with`` releases on exit when its body reads it as an event stream: the value a
    closing helper is handed (``with closing_stream(events): for event in events:``) or the
    value bound by ``as`` (``with response as stream: for event in stream:``). Two pieces of
    evidence meet: the ``with`` owns the value's release (a closing helper, or the context
    manager itself) and the body consumes it event by event. A file read line by line (``with
    open(p) as f: for line in f``) or rows of a cursor are neither; ``None`` when it is not one."""
    expr = item.item.expression if isinstance(item.item, cst.Await) else item.item
    source: cst.BaseExpression | None = None
    if isinstance(expr, cst.Call) and len(expr.args) == 1 and names_closing(leaf_name(expr.func)):
        source = expr.args[0].value
    elif item.asname is not None and isinstance(item.asname.name, cst.Name):
        source = item.asname.name
    if source is None or _opened_file(ctx, expr) or _opened_file(ctx, source):
        return None
    if _event_loop_over(ctx, statement.body, source):
        return source
    if item.asname is None and _iterated_by_hand(ctx, statement.body, source):
        return source  # ``with closing_stream(source): it = iter(source); ... next(it)``
    return None


def _iterated_by_hand(ctx: SourceContext, block: cst.CSTNode, source: cst.CSTNode) -> bool:
    """``iter(source)``/``aiter(source)``/``source.__aiter__()`` in ``block``: an iterator is
    taken from the source and advanced by hand."""
    wanted = ctx.code(source).strip()
    for call in ctx.descendants(block, m.Call()):
        func = call.func
        if isinstance(func, cst.Name) and func.value in ("iter", "aiter") and len(call.args) == 1:
            if ctx.code(call.args[0].value).strip() == wanted:
                return True
        if isinstance(func, cst.Attribute) and func.attr.value in ("__iter__", "__aiter__"):
            if ctx.code(func.value).strip() == wanted:
                return True
    return False


def _self_attribute(expr: cst.CSTNode) -> str | None:
    if (
        isinstance(expr, cst.Attribute)
        and isinstance(expr.value, cst.Name)
        and expr.value.value == "self"
    ):
        return expr.attr.value
    return None


#: Calls that advance an iterator by hand. Not ``send``: ``self._client.send(request)`` is an HTTP
#: client sending a request, and closing that client is no stream release.
_ADVANCE = frozenset({"__next__", "__anext__", "asend"})


def iterated_source(ctx: SourceContext, receiver: cst.CSTNode) -> bool:
    """``receiver`` is the iterator its code reads from: iterated by a ``for``/``async for``,
    advanced by ``__anext__()``/``next()``/``anext()``, in the same function (or the function
    around a nested one), or, for ``self._source``, in any method of the same class
    (``async def __anext__(self): return await self._gen.__anext__()`` beside ``aclose``).
    Closing such a receiver stops what produces the stream."""
    wanted = ctx.code(receiver).strip()
    attribute = _self_attribute(receiver)
    if attribute is not None:
        scope: cst.CSTNode | None = ctx.enclosing(receiver, cst.ClassDef)
    else:
        scope = ctx.enclosing_function(receiver)
        outer = ctx.enclosing_function(scope) if scope is not None else None
        scope = outer or scope
    if scope is None:
        return False
    for loop in ctx.descendants(scope, m.For()):
        if ctx.code(loop.iter).strip() == wanted:
            return True
    for call in ctx.descendants(scope, m.Call()):
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in _ADVANCE:
            if ctx.code(func.value).strip() == wanted:
                return True
        elif isinstance(func, cst.Name) and func.value in ("next", "anext") and call.args:
            if ctx.code(call.args[0].value).strip() == wanted:
                return True
    return False


def stream_wrapper_class(ctx: SourceContext, node: cst.CSTNode) -> cst.ClassDef | None:
    """The class around ``node`` when it is an iterator (``__next__``/``__anext__``) whose own
    ``close``/``aclose`` releases something: a wrapper around a stream, so ``self.close()`` in
    its ``__exit__`` or its error path releases that stream."""
    cls = ctx.enclosing(node, cst.ClassDef)
    if not isinstance(cls, cst.ClassDef) or not isinstance(cls.body, cst.IndentedBlock):
        return None
    methods = {s.name.value: s for s in cls.body.body if isinstance(s, cst.FunctionDef)}
    if not ({"__next__", "__anext__"} & methods.keys()):
        return None
    for name in ("close", "aclose"):
        method = methods.get(name)
        if method is None:
            continue
        for call in ctx.descendants(method, m.Call()):
            if leaf_name(call.func) in ("close", "aclose", "release") or (
                isinstance(call.func, cst.Name) and call.func.value != name and names_closing(call.func.value)
            ):
                return cls
    return None
