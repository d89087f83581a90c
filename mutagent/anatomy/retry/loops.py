"""What a retry path is, by meaning rather than spelling.

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
``entries`` is never mistaken for ``tries`` (see :mod:`mutagent.anatomy.vocabulary`).
"""

from __future__ import annotations

from weakref import WeakKeyDictionary

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.callgraph import model_call_evidence
from mutagent.anatomy.evidence import Evidence, Source
from mutagent.anatomy.model_calls import direct_model_call
from mutagent.anatomy.retry.classification import is_status_comparison
from mutagent.anatomy.retry.waits import is_sleep_like
from mutagent.anatomy.syntax import (
    LOOPS,
    ancestors_within,
    enclosing_scope,
    identifiers_in,
    innermost_loop,
    own,
)
from mutagent.anatomy.vocabulary import (
    TIME_WORDS,
    identifier,
    is_count_name,
    is_fatal_name,
    is_retry_name,
    words,
)
from mutagent.mutation.context import SourceContext


def scope_is_retry_named(ctx: SourceContext, node: cst.CSTNode) -> bool:
    """``node`` sits in a function named like a retry helper, or in a method of a retry class."""
    scope = enclosing_scope(ctx, node)
    if isinstance(scope, cst.FunctionDef):
        if is_retry_name(scope.name.value) or is_fatal_name(scope.name.value):
            return True
        owner = enclosing_scope(ctx, scope)
        return isinstance(owner, cst.ClassDef) and is_retry_name(owner.name.value)
    return False


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


def _reasks_model(ctx: SourceContext, loop: cst.For | cst.While) -> bool:
    """A loop whose header counts attempts (``while num_attempts < max_attempts``, ``for nth_try
    in range(max_retries_on_error + 1)``), that talks to the model and leaves early (a ``return``
    or ``break``) once a reply is good: it re-asks the model after a failed reply (no valid
    speaker named, generated code that failed), a retry whose failure is judged from the reply
    rather than caught. A loop that samples n replies never leaves early; an agent's turn loop
    counts turns, not attempts."""
    header = (loop.target, loop.iter) if isinstance(loop, cst.For) else (loop.test,)
    if not any(is_count_name(name) for part in header for name in identifiers_in(ctx, part)):
        return False
    if not own(ctx, loop, m.Return() | m.Break()):
        return False
    return model_call_evidence(ctx, loop.body, lambda call: direct_model_call(ctx, call)) is not None


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
        and not any(isinstance(a, LOOPS) for a in ancestors_within(ctx, loop, scope))
    )


_CACHE: WeakKeyDictionary[SourceContext, dict[int, bool]] = WeakKeyDictionary()


def is_retry_loop(ctx: SourceContext, loop: cst.CSTNode) -> bool:
    """See the module docstring. Cached per file: every retry operator asks about the same loops."""
    if not isinstance(loop, LOOPS):
        return False
    cache = _CACHE.setdefault(ctx, {})
    if id(loop) not in cache:
        cache[id(loop)] = (
            (isinstance(loop, cst.While) or _iterates_attempts(ctx, loop))
            and (_handles_failure(ctx, loop) or _reasks_model(ctx, loop))
            and (
                _named_like_retry(ctx, loop)
                or any(is_sleep_like(ctx, c) for c in own(ctx, loop, m.Call()))
                or _outer_loop_of_retry_helper(ctx, loop)
            )
        )
    return cache[id(loop)]


def retry_loop_evidence(
    ctx: SourceContext, loop: cst.For | cst.While
) -> tuple[list[Evidence], list[Evidence]]:
    """(present, missing): the parts of :func:`is_retry_loop`'s verdict on ``loop``, each as
    evidence. A retry loop needs the first two and one of the last three."""
    line = ctx.position(loop).start.line
    present: list[Evidence] = []
    missing: list[Evidence] = []

    def weigh(holds: bool, source: Source, yes: str, no: str) -> None:
        (present if holds else missing).append(
            Evidence(source, f"the loop at line {line} {yes if holds else no}")
        )

    if isinstance(loop, cst.For):
        weigh(
            _iterates_attempts(ctx, loop),
            Source.STRUCTURE,
            "iterates a count, a delay schedule or a retry object, as a retry loop does",
            "iterates data (no count, delay schedule or retry object)",
        )
    if not _handles_failure(ctx, loop) and _reasks_model(ctx, loop):
        text = "counts attempts in its header and re-asks the model until a reply is good"
        weigh(True, Source.CALL_GRAPH, text, "")
    else:
        weigh(
            _handles_failure(ctx, loop),
            Source.STRUCTURE,
            "handles a failure (except, status check or retry predicate)",
            "handles no failure (no except, status check or retry predicate)",
        )
    weigh(_named_like_retry(ctx, loop), Source.NAMES, "is named for attempts", "names no attempts")
    sleeps = any(is_sleep_like(ctx, c) for c in own(ctx, loop, m.Call()))
    weigh(sleeps, Source.NAMES, "waits before going round again", "never waits before going round again")
    weigh(
        _outer_loop_of_retry_helper(ctx, loop),
        Source.NAMES,
        "is the outer loop of a function named like a retry helper",
        "is not the outer loop of a retry helper",
    )
    return present, missing


def retry_loops(ctx: SourceContext) -> list[cst.For | cst.While]:
    """Every retry loop of the file, in document order."""
    return [loop for loop in ctx.nodes(cst.For) + ctx.nodes(cst.While) if is_retry_loop(ctx, loop)]


def in_retry_path(ctx: SourceContext, node: cst.CSTNode) -> bool:
    """``node`` runs on the way from a failed attempt to the next one (see the module docstring)."""
    loop = innermost_loop(ctx, node)
    if loop is not None:
        return is_retry_loop(ctx, loop)
    return scope_is_retry_named(ctx, node)


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
