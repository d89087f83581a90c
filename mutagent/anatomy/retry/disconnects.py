"""Transport errors as a family tree: which connection, timeout and disconnect classes derive
from which, per library, so that a tuple naming a class beside one of its bases is read as
catching it twice (dropping the child changes nothing: an equivalent mutant, not a bug)."""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from mutagent.mutation.context import SourceContext

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


def caught_by_a_base(
    ctx: SourceContext, element: cst.BaseExpression, caught: list[cst.BaseExpression]
) -> bool:
    """Another class of ``caught`` is a base class of ``element`` by the table above (for a
    library the static reading of ``mutagent.anatomy.hierarchy`` cannot find installed): an
    ``except``/``isinstance`` tuple without ``element`` still matches it."""
    own = [f for f in map(_family_and_class, ctx.qualified_names(element)) if f]
    others = {
        f
        for other in caught
        if other is not element
        for f in map(_family_and_class, ctx.qualified_names(other))
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


def transport_class(ctx: SourceContext, expr: cst.BaseExpression) -> str | None:
    """The transport error ``expr`` names (see :func:`transport_error_name`), also when it is
    looked up at run time so that a missing optional library is tolerated:
    ``getattr(httpx, 'TimeoutException', None)`` names ``httpx.TimeoutException``."""
    from mutagent.anatomy.streams.clients import transport_error_name
    from mutagent.anatomy.vocabulary import TRANSPORT_ERRORS

    if (
        isinstance(expr, cst.Call)
        and m.matches(expr.func, m.Name("getattr"))
        and len(expr.args) >= 2
        and isinstance(expr.args[1].value, cst.SimpleString)
    ):
        attr = expr.args[1].value.evaluated_value
        for module in sorted(ctx.qualified_names(expr.args[0].value)):
            root = module.split(".")[0]
            if isinstance(attr, str) and attr in TRANSPORT_ERRORS.get(root, ()):
                return f"{module}.{attr}"
        return None
    return transport_error_name(ctx, expr)


def module_tuples(ctx: SourceContext, name: str) -> list[cst.Tuple]:
    """The tuples a module-level ``name`` is bound to, in any branch of a module-level ``if`` or
    ``try`` (an optional import: ``try: import aiohttp; TRANSIENT = (aiohttp.ClientOSError, ...)``),
    directly or filtered at run time (``tuple(cls for cls in (...) if cls is not None)``)."""
    found: list[cst.Tuple] = []
    for assign in ctx.findall(
        m.Assign(targets=[m.AssignTarget(m.Name(name))]) | m.AnnAssign(target=m.Name(name))
    ):
        if ctx.enclosing(assign, (cst.FunctionDef, cst.ClassDef, cst.Lambda)) is not None:
            continue
        if only_for_type_checkers(ctx, assign):
            continue  # never runs: a mutant there changes nothing
        value = assign.value
        if isinstance(value, cst.Tuple):
            found.append(value)
        elif m.matches(value, m.Call(func=m.Name("tuple"), args=[m.Arg(value=m.GeneratorExp())])):
            generator = value.args[0].value
            if isinstance(generator.for_in.iter, cst.Tuple):
                found.append(generator.for_in.iter)
    return found


def only_for_type_checkers(ctx: SourceContext, node: cst.CSTNode) -> bool:
    """``node`` is in the body of ``if TYPE_CHECKING:``, which never runs."""
    child = node
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.If) and child is ancestor.body:
            test = ancestor.test
            name = test.attr.value if isinstance(test, cst.Attribute) else getattr(test, "value", None)
            if name == "TYPE_CHECKING":
                return True
        child = ancestor
    return False
