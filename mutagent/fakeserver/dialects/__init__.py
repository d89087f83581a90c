"""The wire dialects the fake server speaks, chosen per request by its path."""

from __future__ import annotations

from mutagent.fakeserver.dialects.anthropic import AnthropicDialect
from mutagent.fakeserver.dialects.base import Dialect, RequestContext
from mutagent.fakeserver.dialects.openai_chat import OpenAIChatDialect
from mutagent.fakeserver.dialects.openai_responses import OpenAIResponsesDialect

ANTHROPIC = AnthropicDialect()
OPENAI = OpenAIChatDialect()
RESPONSES = OpenAIResponsesDialect()
DIALECTS: tuple[Dialect, ...] = (ANTHROPIC, OPENAI, RESPONSES)

#: Request paths (without query) -> dialect. ``/chat/completions`` alone covers an OpenAI client
#: whose base_url lacks ``/v1``.
ROUTES: dict[str, Dialect] = {
    "/v1/messages": ANTHROPIC,
    "/messages": ANTHROPIC,
    "/v1/chat/completions": OPENAI,
    "/chat/completions": OPENAI,
    "/v1/responses": RESPONSES,
    "/responses": RESPONSES,
}


def dialect_named(name: str) -> Dialect:
    """The dialect called ``name`` ("anthropic", "openai" or "responses")."""
    for dialect in DIALECTS:
        if dialect.name == name:
            return dialect
    raise ValueError(f"unknown dialect {name!r}: use 'anthropic', 'openai' or 'responses'")


def dialect_for_path(path: str) -> Dialect | None:
    """The dialect serving ``path`` (query string ignored), or None for an unknown path."""
    return ROUTES.get(path.split("?", 1)[0].rstrip("/") or "/")


__all__ = [
    "ANTHROPIC",
    "DIALECTS",
    "OPENAI",
    "RESPONSES",
    "Dialect",
    "RequestContext",
    "dialect_for_path",
    "dialect_named",
]
