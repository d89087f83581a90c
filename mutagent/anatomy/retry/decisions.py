"""Where a retry decision is taken by structure rather than by name: a counted loop that returns
on success and raises once exhausted, a handler that waits and sends the same request again, and an
``if`` that chooses between giving up and another attempt by the classes it raises. Each is one
piece of evidence the misclassify-retryable recognisers combine with the vocabulary of errors."""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.retry.classification import exception_verdict
from mutagent.mutation.context import SourceContext


def tries_until_success(ctx: SourceContext, loop: cst.CSTNode, attempt: cst.Try) -> bool:
    """``for _ in range(3): try: return module(...) except ContextWindowExceededError: shrink()``
    then ``raise`` after the loop: a counted loop whose ``try`` returns on success, whose handler
    falls through to the next round, and whose exhaustion raises is a retry loop even with no
    retry word or sleep. A loop over data (``for line in lines``), or one that goes on after its
    last round, is not."""
    if not isinstance(loop, cst.For) or ctx.parent(attempt) is not loop.body or loop.orelse is not None:
        return False
    counting = loop.iter
    if not (isinstance(counting, cst.Call) and ctx.qualified_names(counting) & {"builtins.range"}):
        return False
    tried = attempt.body.body
    last = tried[-1] if tried else None
    if not (isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[-1], cst.Return)):
        return False
    block = ctx.parent(loop)
    statements = list(block.body) if isinstance(block, (cst.IndentedBlock, cst.Module)) else []
    position = next((i for i, s in enumerate(statements) if s is loop), None)
    after = statements[position + 1] if position is not None and position + 1 < len(statements) else None
    return isinstance(after, cst.SimpleStatementLine) and isinstance(after.body[-1], cst.Raise)


def resends_after_wait(ctx: SourceContext, attempt: cst.Try, handler: cst.ExceptHandler) -> bool:
    """``except (ClientOSError, TransportError): await asyncio.sleep(1); response = await
    session.request(...)``: a handler outside any loop that waits and then makes the call of the
    ``try`` body again is a one-shot retry; the classes it catches are its retryable ones. A
    handler that only waits (a pause before re-raising) or only calls something else (a fallback
    model) retries nothing."""
    from mutagent.anatomy.retry.waits import is_sleep_like

    calls = ctx.descendants(handler.body, m.Call())
    if not any(is_sleep_like(ctx, c) for c in calls):
        return False
    tried = {ctx.code(c.func) for c in ctx.descendants(attempt.body, m.Call())}
    return any(not is_sleep_like(ctx, c) and ctx.code(c.func) in tried for c in calls)


def _gives_up(ctx: SourceContext, raise_: cst.Raise, other: str | None) -> bool:
    """A raise that ends the attempts: a fatal class, or the error as it is (``raise``, ``raise
    mapped_exception``) when the other way out raises the retryable class."""
    verdict = exception_verdict(ctx, raise_.exc) if raise_.exc is not None else None
    if verdict == "fatal":
        return True
    plain = raise_.exc is None or isinstance(raise_.exc, (cst.Name, cst.Attribute)) and verdict is None
    return plain and other == "retryable"


def verdict_gate(ctx: SourceContext, branch: cst.CSTNode) -> bool:
    """``if <test>: raise mapped_exception`` followed by ``raise MidStreamFallbackError(...)`` (or
    ``if <test>: raise`` followed by ``raise PermanentError(...)``): the test alone chooses between
    giving up and another attempt. Its predicates classify the error."""
    if not isinstance(branch, cst.If) or branch.orelse is not None:
        return False
    block = ctx.parent(branch)
    if not isinstance(block, cst.IndentedBlock):
        return False
    statements = list(block.body)
    position = next((i for i, s in enumerate(statements) if s is branch), None)
    if position is None or position + 1 >= len(statements):
        return False
    inside, after = branch.body.body[-1] if branch.body.body else None, statements[position + 1]

    def only_raise(statement: cst.CSTNode | None) -> cst.Raise | None:
        if isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[-1], cst.Raise):
            return statement.body[-1]
        return None

    first, second = only_raise(inside), only_raise(after)
    if first is None or second is None:
        return False
    kinds = [exception_verdict(ctx, r.exc) if r.exc is not None else None for r in (first, second)]
    if kinds[1] == "retryable":
        return _gives_up(ctx, first, "retryable")
    if kinds[0] == "retryable":
        return _gives_up(ctx, second, "retryable")
    return kinds[1] == "fatal" and first.exc is None  # ``raise`` goes back to the loop as it is
