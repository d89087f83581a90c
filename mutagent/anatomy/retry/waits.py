"""What waits: sleeps under any alias, injected sleepers, helpers that sleep before the next
attempt, and expressions that compute a duration. Whether a wait is a *backoff* (it runs between
a failed attempt and the next) is :mod:`mutagent.anatomy.retry.backoff`'s question."""

from __future__ import annotations

import libcst as cst

from mutagent.anatomy.syntax import identifiers_in, string_value
from mutagent.anatomy.vocabulary import (
    CARRIED_SOURCE_WORDS,
    CARRIED_WAIT_WORDS,
    DURATION_WORDS,
    LIMIT_WORDS,
    SLEEP_FUNCTIONS,
    SLEEPER_WORDS,
    WAIT_VERBS,
    WAITER_WORDS,
    identifier,
    is_count_name,
    words,
)
from mutagent.mutation.context import SourceContext


def is_sleep_call(ctx: SourceContext, call: cst.CSTNode) -> bool:
    """``time.sleep``/``asyncio.sleep``/``anyio.sleep``/``trio.sleep`` under any alias, or an
    injected sleeper (``self.sleep``, ``sleep_fn``, ``await self._sleep(delay)``)."""
    if not isinstance(call, cst.Call):
        return False
    if ctx.qualified_names(call) & SLEEP_FUNCTIONS:
        return True
    parts = set(words(identifier(call) or ""))
    return "sleep" in parts and parts <= SLEEPER_WORDS


def is_sleep_like(ctx: SourceContext, call: cst.CSTNode) -> bool:
    """A sleep, or a helper that sleeps before the next attempt (``self._sleep_for_retry(...)``,
    ``await backoff(attempt)``): evidence that a loop waits between attempts."""
    if is_sleep_call(ctx, call):
        return True
    parts = words(identifier(call) or "")
    return "sleep" in parts and "before" not in parts or parts[-1:] == ("backoff",)


def is_duration(ctx: SourceContext, node: cst.CSTNode) -> bool:
    """``node`` computes a wait: a number, or an expression over durations or attempt counts
    (``pause``, ``min(delay, cap)``, ``2 ** attempt``, ``failure.retry_after or self.base_delay``)."""
    if isinstance(node, (cst.Integer, cst.Float)):
        return True
    names = identifiers_in(ctx, node)
    return any(set(words(n)) & DURATION_WORDS or is_count_name(n) for n in names)


def is_injected_wait(ctx: SourceContext, call: cst.CSTNode) -> bool:
    """A sleep under another name, called with a duration: ``self.sleeper(pause)``, ``wait(delay)``,
    ``await self.pause(backoff)``, ``delay_fn(2 ** attempt)``. The first positional argument must
    be a duration, so ``event.wait()``, ``self.wait_for_approval(call)`` or ``wait(job)`` are not."""
    if not isinstance(call, cst.Call) or is_sleep_call(ctx, call):
        return False
    parts = set(words(identifier(call) or ""))
    if not (parts & WAIT_VERBS and parts <= WAITER_WORDS):
        return False
    first = next((a for a in call.args if a.keyword is None and a.star == ""), None)
    return first is not None and is_duration(ctx, first.value)


def names_server_wait(name: str) -> bool:
    """``retry_after`` or ``wait_hint``: a server's wait carried on an object (not
    ``max_retry_after``, a cap, nor ``default_delay``)."""
    parts = set(words(name))
    if parts & LIMIT_WORDS or parts & {"min", "default", "base", "cap"}:
        return False
    return {"retry", "after"} <= parts or bool(parts & CARRIED_WAIT_WORDS and parts & CARRIED_SOURCE_WORDS)


def getattr_server_wait(call: cst.CSTNode) -> str | None:
    """``getattr(exc, "retry_after", None)``: the same read as ``exc.retry_after``, spelled for an
    object that may lack it. The attribute's name when it carries a server wait."""
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value == "getattr"):
        return None
    if len(call.args) < 2 or any(a.keyword or a.star for a in call.args):
        return None
    name = string_value(call.args[1].value)
    return name if name and names_server_wait(name) else None
