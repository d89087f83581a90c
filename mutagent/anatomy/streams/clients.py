"""SDK and HTTP clients, calls to a model API resource, HTTP requests, and transport
(connection, timeout) exceptions, all by qualified name or by the SDKs' own resource names."""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.dataflow import bound_values
from mutagent.anatomy.syntax import attribute_chain, leaf_name
from mutagent.anatomy.vocabulary import (
    HTTP_CLIENT_CLASSES,
    HTTP_PACKAGES,
    HTTP_VERBS,
    MODEL_METHODS,
    MODEL_RESOURCES,
    SDK_PACKAGES,
    TRANSPORT_ERRORS,
    UNAMBIGUOUS_TRANSPORT_ERRORS,
    last_word,
)
from mutagent.mutation.context import SourceContext


def transport_error_name(ctx: SourceContext, expr: cst.BaseExpression) -> str | None:
    """The qualified name of ``expr`` if it names a transport/connection/timeout exception."""
    for name in sorted(ctx.qualified_names(expr)):
        leaf = name.rsplit(".", 1)[-1]
        if leaf in UNAMBIGUOUS_TRANSPORT_ERRORS and "." in name:
            return name
        for module, classes in TRANSPORT_ERRORS.items():
            if leaf in classes and (name == f"{module}.{leaf}" or name.startswith(f"{module}.")):
                return name
    return None


def qualified_leaf(ctx: SourceContext, node: cst.CSTNode) -> tuple[str, str] | None:
    """(package, last name) of what ``node`` resolves to, if it resolves to an import."""
    for name in sorted(ctx.qualified_names(node)):
        if "." in name:
            return name.split(".", 1)[0], name.rsplit(".", 1)[-1]
    return None


def is_client_constructor(ctx: SourceContext, call: cst.CSTNode) -> bool:
    """``anthropic.Anthropic(...)``, ``openai.AsyncOpenAI(...)``, ``httpx2.Client(...)``,
    ``aiohttp.ClientSession(...)``, ``requests.Session()``, any alias."""
    if not isinstance(call, cst.Call):
        return False
    resolved = qualified_leaf(ctx, call)
    if resolved is None:
        return False
    package, leaf = resolved
    if package in HTTP_PACKAGES:
        return leaf in HTTP_CLIENT_CLASSES
    return package in SDK_PACKAGES and leaf[:1].isupper() and not leaf.endswith(("Error", "Timeout"))


def _annotation_is_client(ctx: SourceContext, expr: cst.CSTNode) -> bool:
    """A parameter annotated with a client class (``client: httpx2.AsyncClient``)."""
    if not isinstance(expr, cst.Name):
        return False
    func = ctx.enclosing_function(expr)
    if func is None:
        return False
    for param in [*func.params.params, *func.params.kwonly_params, *func.params.posonly_params]:
        if param.name.value == expr.value and param.annotation is not None:
            for node in ctx.descendants(param.annotation.annotation, m.Name() | m.Attribute()):
                if qualified_leaf(ctx, node) and is_client_constructor(ctx, cst.Call(func=node)):
                    return True
    return False


def is_client(ctx: SourceContext, expr: cst.CSTNode) -> bool:
    """Whether ``expr`` holds an SDK or HTTP client: bound to a client constructor, annotated
    with a client class, or named as one (``client``, ``session``, ``http``)."""
    if any(is_client_constructor(ctx, value) for value in bound_values(ctx, expr)):
        return True
    if _annotation_is_client(ctx, expr):
        return True
    name = leaf_name(expr)
    return bool(name) and last_word(name) in {"client", "session", "http", "httpx"}


def is_model_call(call: cst.CSTNode) -> bool:
    """A call on a model API resource: ``x.messages.create``, ``x.chat.completions.stream``..."""
    if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute):
        return False
    chain = attribute_chain(call.func)
    return call.func.attr.value in MODEL_METHODS and bool(MODEL_RESOURCES & set(chain[:-1]))


def is_http_call(ctx: SourceContext, call: cst.CSTNode) -> bool:
    """An HTTP request: ``httpx2.post``/``requests.get``/``aiohttp.request`` or a verb on a client."""
    if not isinstance(call, cst.Call):
        return False
    resolved = qualified_leaf(ctx, call)
    if resolved is not None and resolved[0] in HTTP_PACKAGES and resolved[1] in HTTP_VERBS:
        return True
    func = call.func
    return isinstance(func, cst.Attribute) and func.attr.value in HTTP_VERBS and is_client(ctx, func.value)
