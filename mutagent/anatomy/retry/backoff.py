"""The backoff role: a wait that runs between a failed attempt and the next one (in an
``except``, behind a failure test, or after the statement that leaves the loop on success), as
opposed to a poll interval on the success path of the same loop. Without a loop, a wait in an
``except`` handler that then repeats the failed call is a one-shot retry's backoff."""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.exits import control_flow_exits
from mutagent.anatomy.retry.classification import is_status_comparison
from mutagent.anatomy.retry.loops import is_retry_loop, scope_is_retry_named
from mutagent.anatomy.syntax import ancestors_within, enclosing_scope, identifiers_in, innermost_loop
from mutagent.anatomy.vocabulary import (
    FAILURE_WORDS,
    is_count_name,
    is_fatal_name,
    is_retry_name,
    words,
)
from mutagent.mutation.context import SourceContext


def _failure_test(ctx: SourceContext, test: cst.CSTNode) -> bool:
    if any(is_status_comparison(ctx, c) for c in ctx.descendants(test, m.Comparison())):
        return True
    names = identifiers_in(ctx, test)
    return any(
        is_retry_name(n) or is_fatal_name(n) or is_count_name(n) or set(words(n)) & FAILURE_WORDS
        for n in names
    )


def _callee_code(ctx: SourceContext, call: cst.Call) -> str:
    return " ".join(ctx.code(call.func).split())


def retries_once(ctx: SourceContext, node: cst.CSTNode) -> bool:
    """``node`` waits in an ``except`` handler that then issues the failed call again: ``try:
    response = await session.request(...) except ClientOSError: await asyncio.sleep(1); response =
    await session.request(...)``, a one-shot retry with no loop. The repeated call must be the
    one the ``try`` made (same callee) and come after the wait; a handler that waits and re-raises
    or falls back to another call repeats nothing."""
    handler = ctx.enclosing(node, cst.ExceptHandler)
    if handler is None or enclosing_scope(ctx, handler) is not enclosing_scope(ctx, node):
        return False
    attempt = ctx.parent(handler)
    if not isinstance(attempt, cst.Try):
        return False
    tried = {_callee_code(ctx, c) for c in ctx.descendants(attempt.body, m.Call())}
    after = ctx.position(node).end
    for call in ctx.descendants(handler.body, m.Call()):
        start = ctx.position(call).start
        if (start.line, start.column) > (after.line, after.column) and _callee_code(ctx, call) in tried:
            return True
    return False


def waits_after_failure(ctx: SourceContext, node: cst.CSTNode) -> bool:
    """``node`` (a sleep) runs between a failed attempt and the next one: in a retry helper, or in a
    retry loop inside an ``except``, inside a branch that tested for failure, or at the loop's top
    level after a statement that leaves the loop on success. A poll interval on the success path of
    the same loop (``if item is None: sleep(1)``) is not a backoff."""
    loop = innermost_loop(ctx, node)
    if loop is None:
        return scope_is_retry_named(ctx, node) or retries_once(ctx, node)
    if not is_retry_loop(ctx, loop):
        return False
    previous, guarded = node, False
    for ancestor in ancestors_within(ctx, node, loop):
        if isinstance(ancestor, (cst.ExceptHandler, cst.ExceptStarHandler)):
            return True
        if isinstance(ancestor, cst.If) and previous is not ancestor.test:
            if _failure_test(ctx, ancestor.test):
                return True
            guarded = True
        if isinstance(ancestor, cst.IndentedBlock) and ctx.parent(ancestor) is loop:
            if guarded or previous not in ancestor.body:
                return False
            earlier = ancestor.body[: ancestor.body.index(previous)]
            return any(isinstance(s, (cst.If, cst.Try)) and control_flow_exits(ctx, s.body) for s in earlier)
        previous = ancestor
    return False
