"""Which model API a module speaks, and how: what a survivor's hint must be written for.

A hint that speaks of ``input_json_delta`` to a non-streaming OpenAI loop is a false statement
about that loop. This module reads one module with libcst and says which API it talks to
(Anthropic Messages, OpenAI Chat Completions, OpenAI Responses), whether through the official
SDK or raw HTTP, whether it streams, and whether it is async.

The evidence is ranked, because the weak kind outnumbers the strong one: the API calls the module
makes (``client.responses.create``, ``client.chat.completions.create``, ``client.messages.create``
or ``.stream``, recognised by their attribute path on a client held anywhere) decide; failing
those, the endpoints it names (``"/v1/chat/completions"``); only then the SDK names it imports. A
Responses loop that imports five of ``openai``'s exception classes is still a Responses loop.
Names are resolved through libcst's ``QualifiedNameProvider`` (``from anthropic import
AsyncAnthropic as A`` is still Anthropic).

Code of an SDK's own transport layer (a file inside the ``anthropic`` or ``openai`` package, or a
package that makes no model API call at all but drives an HTTP library with an SDK's names) has
no agent loop around it: ``Dialect.transport`` says so, and its hints speak of a transport-level
test instead of an agent built on that SDK.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import PurePosixPath

import libcst as cst
import libcst.matchers as m
from libcst.metadata import MetadataWrapper, QualifiedNameProvider

ANTHROPIC = "anthropic"
OPENAI_CHAT = "openai-chat"
OPENAI_RESPONSES = "openai-responses"
UNKNOWN = "unknown"

API_LABELS = {
    ANTHROPIC: "Anthropic Messages",
    OPENAI_CHAT: "OpenAI Chat Completions",
    OPENAI_RESPONSES: "OpenAI Responses",
    UNKNOWN: "an unrecognised model API",
}
ENDPOINTS = {
    ANTHROPIC: "/v1/messages",
    OPENAI_CHAT: "/v1/chat/completions",
    OPENAI_RESPONSES: "/v1/responses",
}
HTTP_LIBRARIES = ("httpx", "httpx2", "requests", "aiohttp", "urllib3")


SDK_PACKAGES = ("anthropic", "openai")


@dataclass(frozen=True)
class Dialect:
    """How a piece of agent code talks to its model: the facts a hint has to fit."""

    api: str = UNKNOWN  # ANTHROPIC, OPENAI_CHAT, OPENAI_RESPONSES or UNKNOWN
    sdk: bool = True  # the official SDK (False: raw HTTP through httpx/requests/aiohttp)
    streaming: bool = False
    is_async: bool = False
    transport: bool = False  # an SDK's own transport layer: no agent loop around this code

    @property
    def known(self) -> bool:
        return self.api != UNKNOWN

    @property
    def endpoint(self) -> str:
        return ENDPOINTS.get(self.api, "/v1/messages")

    @property
    def sdk_name(self) -> str:
        """The SDK package this dialect's code is written against (``anthropic`` or ``openai``)."""
        return "anthropic" if self.api in (ANTHROPIC, UNKNOWN) else "openai"

    def describe(self) -> str:
        """``"OpenAI Chat Completions via the SDK, not streaming, async"``."""
        if self.transport:
            return f"the {self.sdk_name} SDK's own transport layer (no agent loop around it)"
        how = "via the SDK" if self.sdk else "over raw HTTP"
        return (
            f"{API_LABELS[self.api]} {how}, {'streaming' if self.streaming else 'not streaming'}, "
            f"{'async' if self.is_async else 'sync'}"
        )


# client.messages.create / .stream (Anthropic), client.chat.completions.create / .stream,
# client.responses.create / .stream; ``.beta.`` variants end the same way
_ANTHROPIC_CALL = m.Call(
    func=m.Attribute(value=m.Attribute(attr=m.Name("messages")), attr=m.Name("create") | m.Name("stream"))
)
_CHAT_CALL = m.Call(
    func=m.Attribute(
        value=m.Attribute(value=m.Attribute(attr=m.Name("chat")), attr=m.Name("completions")),
        attr=m.Name("create") | m.Name("stream") | m.Name("parse"),
    )
)
_RESPONSES_CALL = m.Call(
    func=m.Attribute(value=m.Attribute(attr=m.Name("responses")), attr=m.Name("create") | m.Name("stream"))
)
_STREAM_METHOD = m.Call(func=m.Attribute(attr=m.Name("stream")))
_STREAM_TRUE = m.Arg(keyword=m.Name("stream"), value=m.Name("True"))
_STREAM_KEY = m.DictElement(key=m.SimpleString(), value=m.Name("True"))
_LINE_READERS = m.Call(
    func=m.Attribute(
        attr=m.Name("iter_lines") | m.Name("aiter_lines") | m.Name("iter_events") | m.Name("iter_sse")
    )
)


class _Reader(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (QualifiedNameProvider,)

    def __init__(self) -> None:
        super().__init__()
        self.calls: dict[str, int] = {}  # API calls made: the deciding evidence
        self.endpoints: dict[str, int] = {}  # endpoint paths named in strings
        self.names: dict[str, int] = {}  # SDK names imported or used (exception classes, clients)
        self.sdk_names = 0
        self.http_names = 0
        self.streaming = False
        self.is_async = False

    @staticmethod
    def _vote(tally: dict[str, int], api: str) -> None:
        tally[api] = tally.get(api, 0) + 1

    def _names(self, node: cst.CSTNode) -> set[str]:
        try:
            return {q.name for q in self.get_metadata(QualifiedNameProvider, node, set())}
        except KeyError:
            return set()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if node.asynchronous is not None:
            self.is_async = True

    def visit_Name(self, node: cst.Name) -> None:
        for name in self._names(node):
            root = name.split(".")[0]
            if root == "anthropic":
                self._vote(self.names, ANTHROPIC)
                self.sdk_names += 1
            elif root == "openai":
                self._vote(self.names, OPENAI_RESPONSES if ".responses" in name else OPENAI_CHAT)
                self.sdk_names += 1
            elif root in HTTP_LIBRARIES:
                self.http_names += 1

    def visit_Call(self, node: cst.Call) -> None:
        if m.matches(node, _CHAT_CALL):
            self._vote(self.calls, OPENAI_CHAT)
        elif m.matches(node, _RESPONSES_CALL):
            self._vote(self.calls, OPENAI_RESPONSES)
        elif m.matches(node, _ANTHROPIC_CALL):
            self._vote(self.calls, ANTHROPIC)
        if m.matches(node, _STREAM_METHOD) or m.matches(node, _LINE_READERS):
            self.streaming = True
        if any(m.matches(arg, _STREAM_TRUE) for arg in node.args):
            self.streaming = True

    def visit_DictElement(self, node: cst.DictElement) -> None:
        if m.matches(node, _STREAM_KEY) and isinstance(node.key, cst.SimpleString):
            if node.key.evaluated_value == "stream":
                self.streaming = True

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        value = node.evaluated_value
        if not isinstance(value, str):
            return
        if "/chat/completions" in value:
            self._vote(self.endpoints, OPENAI_CHAT)
        elif value.rstrip("/").endswith("/responses"):
            self._vote(self.endpoints, OPENAI_RESPONSES)
        elif "/v1/messages" in value:
            self._vote(self.endpoints, ANTHROPIC)
        elif value in ("message_stop", "content_block_delta", "input_json_delta", "[DONE]"):
            self.streaming = True
            if value != "[DONE]":
                self._vote(self.names, ANTHROPIC)

    def visit_Await(self, node: cst.Await) -> None:
        self.is_async = True


@dataclass(frozen=True)
class Scan:
    """What one module says about its model API, tier by tier (see the module docstring)."""

    calls: tuple[tuple[str, int], ...] = ()
    endpoints: tuple[tuple[str, int], ...] = ()
    names: tuple[tuple[str, int], ...] = ()
    sdk_names: int = 0
    http_names: int = 0
    streaming: bool = False
    is_async: bool = False

    @property
    def api(self) -> str:
        """The API of the strongest tier with any evidence (ties: the first seen)."""
        for tier in (self.calls, self.endpoints, self.names):
            if tier:
                return max(tier, key=lambda item: item[1])[0]
        return UNKNOWN

    @property
    def calls_a_model(self) -> bool:
        """The module makes a model API call or names a model endpoint: an agent loop's code."""
        return bool(self.calls or self.endpoints)


@lru_cache(maxsize=256)
def scan(source: str) -> Scan:
    """The evidence in one module's source (empty for a module that does not parse)."""
    try:
        wrapper = MetadataWrapper(cst.parse_module(source))
    except (cst.ParserSyntaxError, RecursionError, ValueError):
        return Scan()
    reader = _Reader()
    wrapper.visit(reader)
    return Scan(
        calls=tuple(reader.calls.items()),
        endpoints=tuple(reader.endpoints.items()),
        names=tuple(reader.names.items()),
        sdk_names=reader.sdk_names,
        http_names=reader.http_names,
        streaming=reader.streaming,
        is_async=reader.is_async,
    )


def detect_dialect(source: str) -> Dialect:
    """The dialect of one module's source (``api == UNKNOWN`` when it names no model API)."""
    found = scan(source)
    sdk = not (found.http_names and not found.sdk_names)
    return Dialect(api=found.api, sdk=sdk, streaming=found.streaming, is_async=found.is_async)


def combine(dialects: list[Dialect]) -> Dialect:
    """The dialect of a package from its modules': the most common known API, streaming or async
    if any module is (a tool module speaks no API itself but belongs to its package's loop)."""
    known = [d for d in dialects if d.known]
    if not known:
        return Dialect(is_async=any(d.is_async for d in dialects))
    counts: dict[str, int] = {}
    for dialect in known:
        counts[dialect.api] = counts.get(dialect.api, 0) + 1
    api = max(counts, key=lambda key: counts[key])
    return Dialect(
        api=api,
        sdk=any(d.sdk for d in known if d.api == api),
        streaming=any(d.streaming for d in known if d.api == api),
        is_async=any(d.is_async for d in dialects),
    )


def sdk_package_of(file: str) -> str | None:
    """``anthropic`` or ``openai`` when ``file`` lies inside that SDK's own package."""
    parts = PurePosixPath(file.replace("\\", "/")).parts[:-1]
    return next((part for part in parts if part in SDK_PACKAGES), None)


def _package_dialect(sources: dict[str, str]) -> Dialect:
    """The package's dialect, from the modules that call a model when there are any: a module that
    only imports an SDK's exception classes does not outvote the loop that makes the calls."""
    callers = [text for text in sources.values() if scan(text).calls_a_model]
    return combine([detect_dialect(text) for text in (callers or list(sources.values()))])


def dialect_of_file(sources: dict[str, str], file: str) -> Dialect:
    """The dialect of ``file``; when that file names no API, the package's (its siblings').

    ``transport`` is set for code inside an SDK's own package, and for a module driving an HTTP
    library with an SDK's names in a package where nothing calls a model API."""
    found = scan(sources.get(file, ""))
    own = detect_dialect(sources.get(file, ""))
    package = _package_dialect(sources)
    in_sdk = sdk_package_of(file)
    nobody_calls = not any(scan(text).calls_a_model for text in sources.values())
    transport = in_sdk is not None or (nobody_calls and found.http_names > 0 and found.sdk_names > 0)
    if transport:
        api = own.api if own.known else package.api
        if not own.known and in_sdk == "openai":
            api = OPENAI_CHAT
        elif not own.known and in_sdk == "anthropic":
            api = ANTHROPIC
        return Dialect(api, True, own.streaming or package.streaming, own.is_async, transport=True)
    if own.known and found.calls_a_model:
        return Dialect(own.api, own.sdk, own.streaming or package.streaming, own.is_async)
    if own.known and own.api == package.api:  # a retry helper of a streaming loop serves that stream
        return Dialect(own.api, own.sdk, own.streaming or package.streaming, own.is_async)
    if package.known:  # names alone (an exception class) do not outvote the package's calls
        return Dialect(
            api=package.api,
            sdk=package.sdk,
            streaming=package.streaming,
            is_async=own.is_async or package.is_async,
        )
    return own
