"""The retry-classification role's vocabulary in code: HTTP status checks
(``resp.status_code == 429``), error classes read as retryable or fatal by qualified name, and
what raising a class tells the retry loop (``TransientError`` retries, ``PermanentError`` does
not)."""

from __future__ import annotations

import libcst as cst

from mutagent.anatomy.vocabulary import (
    FATAL_ERRORS,
    GAVE_UP_WORDS,
    RETRYABLE_ERROR_WORDS,
    RETRYABLE_ERRORS,
    TEMPORARY_WORDS,
    http_status,
    identifier,
    is_fatal_name,
    is_status_name,
    words,
)
from mutagent.mutation.context import SourceContext


def is_status_comparison(ctx: SourceContext, comparison: cst.CSTNode) -> bool:
    """``status == 429``, ``resp.status_code >= 500``, ``e.status_code in (429, 529)``."""
    if not isinstance(comparison, cst.Comparison):
        return False
    operands = [comparison.left] + [target.comparator for target in comparison.comparisons]
    if not any(is_status_name(identifier(op)) for op in operands):
        return False
    for operand in operands:
        if http_status(operand) is not None:
            return True
        if isinstance(operand, (cst.Tuple, cst.List, cst.Set)) and any(
            http_status(el.value) is not None for el in operand.elements
        ):
            return True
    return False


def error_kind(ctx: SourceContext, node: cst.CSTNode) -> str | None:
    """``"retryable"`` for a transient error class (rate limit, overload, timeout, dropped
    connection), ``"fatal"`` for one that retrying cannot fix (auth, bad request), else None."""
    names = {q.rsplit(".", 1)[-1] for q in ctx.qualified_names(node)} | {identifier(node) or ""}
    if names & FATAL_ERRORS:
        return "fatal"
    if names & RETRYABLE_ERRORS:
        return "retryable"
    for name in names - {""}:
        parts = set(words(name))
        if parts & RETRYABLE_ERROR_WORDS or {"rate", "limit"} <= parts:
            return "retryable"
    return None


def exception_verdict(ctx: SourceContext, node: cst.CSTNode) -> str | None:
    """What raising the class ``node`` (``TransientFailure(...)``, ``errors.Fatal``) tells the
    retry loop: ``"retryable"`` (Transient, Retryable, TryAgain, Temporary, RateLimit...),
    ``"fatal"`` (Fatal, Permanent, NonRetryable, AuthenticationError...) or None."""
    if isinstance(node, cst.Call):
        node = node.func
    if not isinstance(node, (cst.Name, cst.Attribute)):
        return None
    name = identifier(node) or ""
    if not name[:1].isupper():
        return None  # ``raise make_error(...)``: a factory, not a class we can read
    if is_fatal_name(name):
        return "fatal"
    kind = error_kind(ctx, node)
    if kind:
        return kind
    parts = set(words(name))
    if parts & TEMPORARY_WORDS or {"try", "again"} <= parts:
        return "retryable"
    if "retry" in parts and not parts & GAVE_UP_WORDS:
        return "retryable"
    return None
