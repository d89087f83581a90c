"""The wire dialects the fake server speaks, chosen per request by its path."""

from __future__ import annotations

from mutagent.fakeserver.dialects.anthropic import AnthropicDialect
from mutagent.fakeserver.dialects.base import Dialect, RequestContext
from mutagent.fakeserver.dialects.openai_chat import OpenAIChatDialect

ANTHROPIC = AnthropicDialect()
OPENAI = OpenAIChatDialect()

#: Request paths (without query) -> dialect. ``/chat/completions`` alone covers an OpenAI client
#: whose base_url lacks ``/v1``.
ROUTES: dict[str, Dialect] = {
    "/v1/messages": ANTHROPIC,
    "/messages": ANTHROPIC,
    "/v1/chat/completions": OPENAI,
    "/chat/completions": OPENAI,
}


def dialect_named(name: str) -> Dialect:
    """The dialect called ``name`` ("anthropic" or "openai")."""
    for dialect in (ANTHROPIC, OPENAI):
        if dialect.name == name:
            return dialect
    raise ValueError(f"unknown dialect {name!r}: use 'anthropic' or 'openai'")


def dialect_for_path(path: str) -> Dialect | None:
    """The dialect serving ``path`` (query string ignored), or None for an unknown path."""
    return ROUTES.get(path.split("?", 1)[0].rstrip("/") or "/")


__all__ = ["ANTHROPIC", "OPENAI", "Dialect", "RequestContext", "dialect_for_path", "dialect_named"]
