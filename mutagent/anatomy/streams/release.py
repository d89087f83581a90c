"""The stream-release role's values: what opens a streamed response that holds a connection
until released (``stream=True``, ``.messages.stream(...)``, ``client.stream(...)``), and the
variables that hold one."""

from __future__ import annotations

import libcst as cst

from mutagent.anatomy.dataflow import bound_values
from mutagent.anatomy.streams.clients import is_http_call, is_model_call
from mutagent.anatomy.syntax import attribute_chain, is_literal, keyword, leaf_name
from mutagent.anatomy.vocabulary import (
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
    name = leaf_name(expr)
    if not name or name[:1].isupper():  # ``StreamHandler.close(self)``: a class, not a value
        return False
    return last_word(name) in {"stream", "response", "resp", "sse", "eventsource"}
