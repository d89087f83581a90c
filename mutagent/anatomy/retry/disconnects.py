"""Transport errors as a family tree: which connection, timeout and disconnect classes derive
from which, per library, so that a tuple naming a class beside one of its bases is read as
catching it twice (dropping the child changes nothing: an equivalent mutant, not a bug)."""

from __future__ import annotations

import libcst as cst

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
