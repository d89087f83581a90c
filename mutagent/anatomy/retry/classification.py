"""The retry-classification role's vocabulary in code: HTTP status checks
(``resp.status_code == 429``), error classes read as retryable or fatal by qualified name, and
what raising a class tells the retry loop (``TransientError`` retries, ``PermanentError`` does
not)."""

from __future__ import annotations

import re

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.vocabulary import (
    FATAL_ERRORS,
    GAVE_UP_WORDS,
    RETRYABLE_ERROR_WORDS,
    RETRYABLE_ERRORS,
    TEMPORARY_WORDS,
    http_status,
    identifier,
    is_fatal_name,
    is_retry_name,
    is_status_name,
    words,
)
from mutagent.mutation.context import SourceContext

_STATUS_SPELLING = re.compile(r"([45])(\d\d|[xX][xX])")


#: A raised class named for a fallback (``MidStreamFallbackError``) hands the request to another
#: attempt on another deployment or model: a retry by another name. Only what is *raised* reads
#: so; a caught ``FallbackError`` says nothing about what happens next.
FALLBACK_WORDS = frozenset({"fallback"})


def status_string(node: cst.CSTNode) -> str | None:
    """The HTTP error status a string literal spells, as SDK generators write their retry tables
    (``"429"``, ``"503"``, ``"5XX"``): the code, or the range as ``"5XX"``. ``"200"``, ``"4040"``
    and ``"v1"`` spell none. A string alone is weak evidence; callers require an owner that says
    retry (``retry_config = (retries, ["429", "5XX"])``)."""
    if not isinstance(node, cst.SimpleString):
        return None
    value = node.evaluated_value
    if not isinstance(value, str):
        return None
    spelled = _STATUS_SPELLING.fullmatch(value.strip())
    if spelled is None:
        return None
    return value.strip().upper()


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
        if "timeout" in parts and parts & {"error", "exception"}:
            return "retryable"  # ``ModelTimeoutError``: worth another attempt, as ``TimeoutError``
    return None


def exception_verdict(ctx: SourceContext, node: cst.CSTNode) -> str | None:
    """What raising the class ``node`` (``TransientFailure(...)``, ``errors.Fatal``) tells the
    retry loop: ``"retryable"`` (Transient, Retryable, TryAgain, Temporary, RateLimit, Fallback...),
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
    if parts & FALLBACK_WORDS:
        return "retryable"  # ``MidStreamFallbackError``: the router makes another attempt elsewhere
    if "retry" in parts and not parts & GAVE_UP_WORDS:
        return "retryable"
    return None


def _retry_call(ctx: SourceContext, call: cst.Call) -> bool:
    """``retry_with_backoff(...)``, ``tenacity.retry(...)``: a call that repeats what it is given."""
    from mutagent.anatomy.retry.loops import retry_library

    return is_retry_name(identifier(call)) or retry_library(ctx, call) is not None


def runs_as_attempt(ctx: SourceContext, function: cst.FunctionDef | None) -> bool:
    """``function`` is the attempt a retry helper repeats: it is handed by name to a call that
    retries (``return retry_with_backoff(do_request, ...)``, ``tenacity.retry(...)(attempt)``) in
    the scope that defines it. What such a function raises is what the retry loop reacts to, so
    its checks classify errors although no loop or retry word is in sight. A function merely
    called by a retrying function is not it (it is called, not repeated)."""
    if function is None:
        return False

    def compute() -> bool:
        scope = ctx.enclosing(function, (cst.FunctionDef,)) or ctx.module
        name = function.name.value
        for call in ctx.descendants(scope, m.Call()):
            if any(isinstance(a.value, cst.Name) and a.value.value == name for a in call.args) and (
                _retry_call(ctx, call)
            ):
                return True
        return False

    return ctx.cached(("classification", "runs-as-attempt", id(function)), compute)


def verdict_fields(ctx: SourceContext) -> dict[str, tuple[int, str]]:
    """Record classes of this file that carry a retry verdict as a boolean field: ``@dataclass
    class ExInfo: name: str; retry: bool; description: str`` -> ``{"ExInfo": (1, "retry")}``
    (the field's position among the annotated fields, and its name). Each ``ExInfo("RateLimitError",
    True, ...)`` is then one row of an error table that says whether that error is retried. A
    boolean field named otherwise (``enabled: bool``), or a retry field that is no bool
    (``retry: RetryPolicy``, ``max_retries: int``), makes no verdict."""

    def compute() -> dict[str, tuple[int, str]]:
        found: dict[str, tuple[int, str]] = {}
        for cls in ctx.nodes(cst.ClassDef):
            fields = [
                s
                for line in cls.body.body
                if isinstance(line, cst.SimpleStatementLine)
                for s in line.body
                if isinstance(s, cst.AnnAssign) and isinstance(s.target, cst.Name)
            ]
            for index, field in enumerate(fields):
                name = field.target.value
                annotated_bool = m.matches(field.annotation.annotation, m.Name("bool"))
                parts = set(words(name))
                says_retry = (is_retry_name(name) and not parts & {"max", "count", "after", "delay"}) or (
                    is_fatal_name(name)
                )
                if annotated_bool and says_retry:
                    found[cls.name.value] = (index, name)
                    break
        return found

    return ctx.cached(("classification", "verdict-fields"), compute)
