"""Which model API a module speaks, and how: what a survivor's hint must be written for.

A hint that speaks of ``input_json_delta`` to a non-streaming OpenAI loop is a false statement
about that loop. This module reads one module with libcst and says which API it talks to
(Anthropic Messages, OpenAI Chat Completions, OpenAI Responses), whether through the official
SDK or raw HTTP, whether it streams, and whether it is async. Names are resolved through
libcst's ``QualifiedNameProvider`` (``from anthropic import AsyncAnthropic as A`` is still
Anthropic); SDK resource calls on a client held in a variable (``self.client.messages.stream``)
are recognised by their attribute path, which is what identifies the API on such a call.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

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


@dataclass(frozen=True)
class Dialect:
    """How a piece of agent code talks to its model: the facts a hint has to fit."""

    api: str = UNKNOWN  # ANTHROPIC, OPENAI_CHAT, OPENAI_RESPONSES or UNKNOWN
    sdk: bool = True  # the official SDK (False: raw HTTP through httpx/requests/aiohttp)
    streaming: bool = False
    is_async: bool = False

    @property
    def known(self) -> bool:
        return self.api != UNKNOWN

    @property
    def endpoint(self) -> str:
        return ENDPOINTS.get(self.api, "/v1/messages")

    def describe(self) -> str:
        """``"OpenAI Chat Completions via the SDK, not streaming, async"``."""
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
        self.apis: dict[str, int] = {}
        self.sdk_names = 0
        self.http_names = 0
        self.streaming = False
        self.is_async = False

    def _vote(self, api: str, weight: int = 1) -> None:
        self.apis[api] = self.apis.get(api, 0) + weight

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
                self._vote(ANTHROPIC)
                self.sdk_names += 1
            elif root == "openai":
                self._vote(OPENAI_RESPONSES if ".responses" in name else OPENAI_CHAT)
                self.sdk_names += 1
            elif root in HTTP_LIBRARIES:
                self.http_names += 1

    def visit_Call(self, node: cst.Call) -> None:
        if m.matches(node, _CHAT_CALL):
            self._vote(OPENAI_CHAT, 5)
        elif m.matches(node, _RESPONSES_CALL):
            self._vote(OPENAI_RESPONSES, 5)
        elif m.matches(node, _ANTHROPIC_CALL):
            self._vote(ANTHROPIC, 5)
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
            self._vote(OPENAI_CHAT, 3)
        elif value.rstrip("/").endswith("/responses"):
            self._vote(OPENAI_RESPONSES, 3)
        elif "/v1/messages" in value:
            self._vote(ANTHROPIC, 3)
        elif value in ("message_stop", "content_block_delta", "input_json_delta", "[DONE]"):
            self.streaming = True
            if value != "[DONE]":
                self._vote(ANTHROPIC)

    def visit_Await(self, node: cst.Await) -> None:
        self.is_async = True


@lru_cache(maxsize=256)
def detect_dialect(source: str) -> Dialect:
    """The dialect of one module's source (``api == UNKNOWN`` when it names no model API)."""
    try:
        wrapper = MetadataWrapper(cst.parse_module(source))
    except (cst.ParserSyntaxError, RecursionError, ValueError):
        return Dialect()
    reader = _Reader()
    wrapper.visit(reader)
    api = max(reader.apis, key=lambda key: reader.apis[key]) if reader.apis else UNKNOWN
    sdk = not (reader.http_names and not reader.sdk_names)
    return Dialect(api=api, sdk=sdk, streaming=reader.streaming, is_async=reader.is_async)


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


def dialect_of_file(sources: dict[str, str], file: str) -> Dialect:
    """The dialect of ``file``; when that file names no API, the package's (its siblings')."""
    own = detect_dialect(sources.get(file, ""))
    package = combine([detect_dialect(text) for text in sources.values()])
    if own.known:
        if own.api == package.api:  # a retry helper of a streaming loop serves that stream
            return Dialect(own.api, own.sdk, own.streaming or package.streaming, own.is_async)
        return own
    return Dialect(
        api=package.api,
        sdk=package.sdk,
        streaming=package.streaming,
        is_async=own.is_async or package.is_async,
    )
