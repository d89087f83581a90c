"""Shared vocabulary of the retry operators: what a retry path is, by meaning rather than spelling.

A *retry loop* is a ``for``/``while`` loop that handles a failure (a ``try``/``except``, a
status check, a retry predicate) and either is named like one (``for attempt in
range(max_retries)``, ``while retries_left > 0``, a counter ``attempt += 1`` in its body), sleeps
before going round again, or is the outer loop of a function named like a retry helper. A loop
that merely skips bad items (``for line in lines: try ... except: continue``) is none of these,
and neither is an agent's turn loop that happens to catch errors.

A node is *in a retry path* when its innermost loop (within its own function) is a retry loop,
or, outside any loop, when its function or class is named like a retry helper
(``_sleep_for_retry``, ``should_retry``, ``RetryPolicy.delay``). Retry *libraries* (tenacity,
backoff) keep their loop inside the decorator; their arguments are recognised by qualified name.

Identifiers are split into lower-case words (``maxRetries`` -> ``max``, ``retries``), so
``entries`` is never mistaken for ``tries``.
"""

from __future__ import annotations

from collections.abc import Iterator
from weakref import WeakKeyDictionary

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.vocabulary import (  # noqa: F401 - re-exported for the retry operators
    DURATION_WORDS,
    FAILURE_WORDS,
    FATAL_ERRORS,
    FATAL_EXAMPLE,
    FATAL_WORDS,
    GAVE_UP_WORDS,
    RETRY_WORDS,
    RETRYABLE_4XX,
    RETRYABLE_ERROR_WORDS,
    RETRYABLE_ERRORS,
    SLEEP_FUNCTIONS,
    SLEEPER_WORDS,
    TEMPORARY_WORDS,
    TIME_WORDS,
    WAIT_VERBS,
    WAITER_WORDS,
    http_status,
    identifier,
    is_count_name,
    is_fatal_name,
    is_retry_name,
    is_retryable_status,
    is_status_name,
    words,
)
from mutagent.mutation.context import SourceContext


def identifiers_in(ctx: SourceContext, node: cst.CSTNode) -> list[str]:
    """Every name a reader sees in ``node``: plain names and attribute names."""
    return [n.value for n in ctx.descendants(node, m.Name())]


# -- scopes and loops --------------------------------------------------------------------------

_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
_LOOPS = (cst.For, cst.While)


def own(ctx: SourceContext, loop: cst.For | cst.While, matcher: m.BaseMatcherNode) -> list[cst.CSTNode]:
    """Nodes of ``loop``'s body matching ``matcher``, leaving out nested loops, functions and classes:
    what the loop itself does on each pass."""
    found = []
    for node in ctx.descendants(loop.body, matcher):
        for ancestor in ctx.ancestors(node):
            if ancestor is loop:
                found.append(node)
                break
            if isinstance(ancestor, _SCOPES + _LOOPS):
                break
    return found


def innermost_loop(ctx: SourceContext, node: cst.CSTNode) -> cst.For | cst.While | None:
    """The loop ``node`` runs in, within its own function (a nested def starts afresh)."""
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, _LOOPS):
            return ancestor
        if isinstance(ancestor, _SCOPES):
            return None
    return None


def enclosing_scope(ctx: SourceContext, node: cst.CSTNode) -> cst.CSTNode | None:
    """The innermost function, lambda or class around ``node``."""
    return ctx.enclosing(node, _SCOPES)


def _scope_is_retry_named(ctx: SourceContext, node: cst.CSTNode) -> bool:
    """``node`` sits in a function named like a retry helper, or in a method of a retry class."""
    scope = enclosing_scope(ctx, node)
    if isinstance(scope, cst.FunctionDef):
        if is_retry_name(scope.name.value) or is_fatal_name(scope.name.value):
            return True
        owner = enclosing_scope(ctx, scope)
        return isinstance(owner, cst.ClassDef) and is_retry_name(owner.name.value)
    return False


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


_COUNTING = frozenset({"builtins.range", "itertools.count", "itertools.repeat"})
_NUMBER = m.Integer() | m.Float()


def _iterates_attempts(ctx: SourceContext, loop: cst.For) -> bool:
    """A ``for`` loop can only retry if it counts (``range``, ``itertools.count``, ``enumerate`` of
    those), walks a delay schedule (``(1, 2, 4)``, ``self.backoff_delays``) or a retry object;
    a loop over events, lines or tool calls processes data, whatever it catches."""
    iterable = loop.iter
    if m.matches(iterable, m.Call(func=m.Name("enumerate"), args=[m.AtLeastN(n=1)])):
        iterable = iterable.args[0].value
    if isinstance(iterable, cst.Call) and ctx.qualified_names(iterable) & _COUNTING:
        return True
    if (
        isinstance(iterable, (cst.Tuple, cst.List))
        and iterable.elements
        and all(m.matches(el.value, _NUMBER) for el in iterable.elements)
    ):
        return True
    name = identifier(iterable) or ""
    return is_retry_name(name) or is_count_name(name) or bool(set(words(name)) & TIME_WORDS)


_TRY = m.Try(handlers=[m.AtLeastN(n=1)]) | m.TryStar()


def _handles_failure(ctx: SourceContext, loop: cst.For | cst.While) -> bool:
    """The loop body catches an exception, checks an HTTP status or asks a retry predicate."""
    if own(ctx, loop, _TRY):
        return True
    for branch in own(ctx, loop, m.If()):
        if any(is_status_comparison(ctx, c) for c in ctx.descendants(branch.test, m.Comparison())):
            return True
        if any(is_retry_name(identifier(c)) for c in ctx.descendants(branch.test, m.Call())):
            return True
    return False


def _named_like_retry(ctx: SourceContext, loop: cst.For | cst.While) -> bool:
    """The loop's header or its counter says it counts attempts."""
    header = (loop.target, loop.iter) if isinstance(loop, cst.For) else (loop.test,)
    for part in header:
        for name in identifiers_in(ctx, part):
            if is_count_name(name) or is_retry_name(name):
                return True
    counters = own(ctx, loop, m.AugAssign(target=m.Name() | m.Attribute()))
    return any(is_count_name(identifier(c.target)) for c in counters)


def _outer_loop_of_retry_helper(ctx: SourceContext, loop: cst.For | cst.While) -> bool:
    scope = enclosing_scope(ctx, loop)
    return (
        isinstance(scope, cst.FunctionDef)
        and is_retry_name(scope.name.value)
        and not any(isinstance(a, _LOOPS) for a in _ancestors_within(ctx, loop, scope))
    )


def _ancestors_within(ctx: SourceContext, node: cst.CSTNode, stop: cst.CSTNode) -> Iterator[cst.CSTNode]:
    for ancestor in ctx.ancestors(node):
        if ancestor is stop:
            return
        yield ancestor


_CACHE: WeakKeyDictionary[SourceContext, dict[int, bool]] = WeakKeyDictionary()


def is_retry_loop(ctx: SourceContext, loop: cst.CSTNode) -> bool:
    """See the module docstring. Cached per file: every retry operator asks about the same loops."""
    if not isinstance(loop, _LOOPS):
        return False
    cache = _CACHE.setdefault(ctx, {})
    if id(loop) not in cache:
        cache[id(loop)] = (
            (isinstance(loop, cst.While) or _iterates_attempts(ctx, loop))
            and _handles_failure(ctx, loop)
            and (
                _named_like_retry(ctx, loop)
                or any(is_sleep_like(ctx, c) for c in own(ctx, loop, m.Call()))
                or _outer_loop_of_retry_helper(ctx, loop)
            )
        )
    return cache[id(loop)]


def retry_loops(ctx: SourceContext) -> list[cst.For | cst.While]:
    """Every retry loop of the file, in document order."""
    return [loop for loop in ctx.nodes(cst.For) + ctx.nodes(cst.While) if is_retry_loop(ctx, loop)]


def in_retry_path(ctx: SourceContext, node: cst.CSTNode) -> bool:
    """``node`` runs on the way from a failed attempt to the next one (see the module docstring)."""
    loop = innermost_loop(ctx, node)
    if loop is not None:
        return is_retry_loop(ctx, loop)
    return _scope_is_retry_named(ctx, node)


def _failure_test(ctx: SourceContext, test: cst.CSTNode) -> bool:
    if any(is_status_comparison(ctx, c) for c in ctx.descendants(test, m.Comparison())):
        return True
    names = identifiers_in(ctx, test)
    return any(
        is_retry_name(n) or is_fatal_name(n) or is_count_name(n) or set(words(n)) & FAILURE_WORDS
        for n in names
    )


def waits_after_failure(ctx: SourceContext, node: cst.CSTNode) -> bool:
    """``node`` (a sleep) runs between a failed attempt and the next one: in a retry helper, or in a
    retry loop inside an ``except``, inside a branch that tested for failure, or at the loop's top
    level after a statement that leaves the loop on success. A poll interval on the success path of
    the same loop (``if item is None: sleep(1)``) is not a backoff."""
    loop = innermost_loop(ctx, node)
    if loop is None:
        return _scope_is_retry_named(ctx, node)
    if not is_retry_loop(ctx, loop):
        return False
    previous, guarded = node, False
    for ancestor in _ancestors_within(ctx, node, loop):
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


def retry_library(ctx: SourceContext, call: cst.CSTNode) -> str | None:
    """``"tenacity"`` or ``"backoff"`` when ``call`` is that library's function, by qualified name."""
    for name in ctx.qualified_names(call) if isinstance(call, cst.Call) else ():
        root = name.split(".")[0]
        if root in ("tenacity", "backoff"):
            return root
    return None


def in_retry_decision(ctx: SourceContext, node: cst.CSTNode) -> bool:
    """``node`` decides whether to retry: in a retry path, or an argument of a retry call
    (``retry(retry=retry_if_exception_type(...))``, ``backoff.on_exception(..., giveup=...)``,
    ``urllib3.Retry(status_forcelist=...)``)."""
    if in_retry_path(ctx, node):
        return True
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.Call) and (
            retry_library(ctx, ancestor) or is_retry_name(identifier(ancestor))
        ):
            return True
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
            return False
    return False


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


# -- arithmetic on bounds ------------------------------------------------------------------------

_ATOMS = (
    cst.Name,
    cst.Attribute,
    cst.Call,
    cst.Subscript,
    cst.Integer,
    cst.BinaryOperation,
    cst.UnaryOperation,
)


def plus_one(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``expr + 1`` written as a person would: ``3`` -> ``4``, ``n + 1`` -> ``n + 2``, ``n - 1`` -> ``n``."""
    if isinstance(expr, cst.Integer) and not expr.lpar:
        return cst.Integer(str(int(expr.evaluated_value) + 1))
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.right, cst.Integer) and not expr.lpar:
        step = int(expr.right.evaluated_value)
        if isinstance(expr.operator, cst.Add):
            return expr.with_changes(right=cst.Integer(str(step + 1)))
        if isinstance(expr.operator, cst.Subtract):
            return expr.left if step == 1 else expr.with_changes(right=cst.Integer(str(step - 1)))
    operand = (
        expr
        if isinstance(expr, _ATOMS)
        else expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    )
    return cst.BinaryOperation(left=operand, operator=cst.Add(), right=cst.Integer("1"))


def control_flow_exits(ctx: SourceContext, block: cst.CSTNode) -> bool:
    """``block`` raises, returns, breaks or continues (its own statements, not a nested def's):
    a branch that ends or repeats an attempt."""
    for node in ctx.descendants(block, m.Raise() | m.Return() | m.Break() | m.Continue()):
        if not any(isinstance(a, _SCOPES) for a in _ancestors_within(ctx, node, block)):
            return True
    return False


def loop_variables(loop: cst.CSTNode) -> set[str]:
    """Names bound by a ``for`` loop's target (``attempt``, or ``attempt, delay``)."""
    if not isinstance(loop, cst.For):
        return set()
    target = loop.target
    elements = [el.value for el in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else [target]
    return {el.value for el in elements if isinstance(el, cst.Name)}
