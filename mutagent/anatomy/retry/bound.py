"""The retry-bound role: what ends retrying after N attempts (or a time budget).

A retry bound is read in the spellings both retry-bound operators rewrite, each a site ``kind``:

* ``limit-check``: a comparison that names an attempt count (or the retry loop's variable) and
  decides whether another attempt happens (a retry loop's ``while`` test, an ``if`` that leaves,
  a predicate's ``return``), in a retry path or on a retry counter kept outside a loop. Each target
  of the comparison has a :class:`Reading`: an attempt ``limit``, a ``first-attempt`` test (a
  counter against 0 or 1: "did anything fail?", "is this a retry?") or an ``enabled-check`` (a
  limit against 0 or 1: "are retries enabled?"), which bounds no attempt;
* ``attempt-range``: the bound of ``range(...)`` in a retry ``for`` loop with no limit check of its own;
* ``library-limit``: tenacity's ``stop_after_attempt(n)`` and backoff's ``max_tries=n``;
* ``counting-loop``: the iterable of a retry ``for`` loop that counts (``range``, or an
  ``itertools.count`` whose variable feeds a limit);
* ``counter-step``: the step of an attempt counter a ``while`` retry loop's limit is built on, or
  of a retry helper that keeps its count between calls;
* ``loop-test``: a ``while`` retry loop's test that limits attempts or time, where no counter steps;
* ``give-up``: the test of an ``if`` that ends the retrying on an attempt count or time budget;
* ``library-stop``: tenacity's ``stop=`` or a stop strategy, and a backoff decorator given
  ``max_tries``/``max_time``.

retry-bound-off-by-one rewrites the first three kinds, unbounded-retry the other five; sites come
in the order each operator has always yielded them (mutant ids number identical mutants in that
order).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.agent_code import in_test
from mutagent.anatomy.callgraph import callee
from mutagent.anatomy.evidence import Evidence, RoleExample, RoleRecogniser, Site, Source
from mutagent.anatomy.exits import control_flow_exits
from mutagent.anatomy.retry.classification import is_status_comparison
from mutagent.anatomy.retry.loops import (
    in_retry_path,
    is_retry_loop,
    retry_library,
    retry_loop_evidence,
    retry_loops,
    scope_is_retry_named,
)
from mutagent.anatomy.syntax import (
    enclosing_scope,
    identifiers_in,
    innermost_loop,
    loop_variables,
    own,
    parameters,
)
from mutagent.anatomy.vocabulary import (
    ATTEMPT_LIMIT_WORDS,
    COUNTDOWN_WORDS,
    DURATION_WORDS,
    FAILURE_WORDS,
    TENACITY_STOPS,
    TIME_BUDGET_WORDS,
    identifier,
    is_count_name,
    words,
)
from mutagent.mutation.context import SourceContext

ROLE = "retry-bound"
OFF_BY_ONE_KINDS = ("limit-check", "attempt-range", "library-limit")
UNBOUNDED_KINDS = ("counting-loop", "counter-step", "loop-test", "give-up", "library-stop")


@dataclass(frozen=True)
class Reading:
    """How one target of a limit check reads: ``limit``, ``first-attempt`` or ``enabled-check``
    (see the module docstring); for the last two, the named operand, the literal (0 or 1) and
    the operator read with the name on the left. A ``delay-limit`` is a limit compared on a delay
    that grows by a constant factor each failure (``named`` is the delay operand, ``growth`` the
    factor's code): it counts attempts in doublings, so it shifts by one factor, not by one."""

    kind: str
    named: cst.BaseExpression | None = field(default=None, compare=False, repr=False)
    value: int | None = None
    symbol: str = ""
    growth: str = ""


@dataclass(frozen=True)
class RetryBound:
    """What an operator needs to rewrite and describe a retry-bound site: its ``kind``, the retry
    loop it bounds when that loop is in sight, a limit check's per-target readings, a library
    bound's ``what`` (``stop_after_attempt``, ``max_tries``, ``tenacity-stop``,
    ``backoff-limits``, ``stop-strategy``)."""

    kind: str
    loop: cst.For | cst.While | None = field(default=None, compare=False, repr=False)
    readings: tuple[Reading, ...] = ()
    what: str = ""


_SYMBOL = {cst.LessThan: "<", cst.LessThanEqual: "<=", cst.GreaterThan: ">", cst.GreaterThanEqual: ">="}


_RANGE = m.Call(func=m.Name("range"), args=[m.AtLeastN(n=1)])


def _decision(ctx: SourceContext, comparison: cst.Comparison) -> tuple[bool, str]:
    """Whether the comparison decides if another attempt happens (a retry loop's ``while`` test,
    an ``if`` that raises/returns/breaks/continues, or a predicate's ``return``), and where it sits."""
    previous: cst.CSTNode = comparison
    for ancestor in ctx.ancestors(comparison):
        if isinstance(ancestor, cst.While) and previous is ancestor.test:
            line = ctx.position(ancestor).start.line
            if is_retry_loop(ctx, ancestor):
                return True, f"the while test of the retry loop at line {line}"
            return False, f"the while test of the loop at line {line}, which is no retry loop"
        if isinstance(ancestor, cst.If) and previous is ancestor.test:
            decides = (
                control_flow_exits(ctx, ancestor.body)
                or _raises_for_status(ctx, ancestor.body)
                or (ancestor.orelse is not None and control_flow_exits(ctx, ancestor.orelse))
            )
            if decides:
                return True, "an if whose branch raises, returns, breaks, continues or raise_for_status()es"
            flag = _sets_flag_that_leaves(ctx, ancestor)
            if flag:
                return True, f"an if that clears {flag}, which a later if tests before leaving"
            return False, "an if whose branches neither leave nor raise"
        if isinstance(ancestor, cst.Return):
            return True, "a predicate's return"
        if not isinstance(ancestor, cst.BaseExpression):
            return False, "no while test, if or return decides on it"
        previous = ancestor
    return False, "no while test, if or return decides on it"


_FLAG = m.Assign(targets=[m.AssignTarget(target=m.Name())], value=m.Name("True") | m.Name("False"))


def _sets_flag_that_leaves(ctx: SourceContext, branch: cst.If) -> str | None:
    """``if retry_delay > RETRY_TIMEOUT: should_retry = False`` decides through a flag: the branch
    only sets boolean names, and a later ``if`` of the same function tests one of them and leaves
    (``if not should_retry: return None``). The flag's name, or None. A branch that sets a flag
    nobody tests before leaving (``if n > cap: truncated = True``, read only for a log) decides
    nothing."""
    flags: set[str] = set()
    for statement in branch.body.body if isinstance(branch.body, cst.IndentedBlock) else (branch.body,):
        simple = isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite))
        small = statement.body if simple else ()
        if not small or not all(m.matches(s, _FLAG) for s in small):
            return None
        flags.update(s.targets[0].target.value for s in small)
    if branch.orelse is not None or not flags:
        return None
    scope = enclosing_scope(ctx, branch)
    end = ctx.position(branch).end.line
    for later in ctx.descendants(scope, m.If()) if scope is not None else ():
        if ctx.position(later).start.line <= end or enclosing_scope(ctx, later) is not scope:
            continue
        tested = flags & set(identifiers_in(ctx, later.test))
        if tested and control_flow_exits(ctx, later.body):
            return sorted(tested)[0]
    return None


_GROWTH = m.AugAssign(
    target=m.Name() | m.Attribute(), operator=m.MultiplyAssign(), value=m.Integer() | m.Float()
)


def growing_delays(ctx: SourceContext, loop: cst.For | cst.While) -> list[cst.AugAssign]:
    """Steps that multiply a delay by a constant factor above 1 each time round the retry loop
    (``retry_delay *= 2``): after n failures the delay is ``base * factor**n``, so a give-up
    compared on it (``if retry_delay > RETRY_TIMEOUT``) counts attempts in doublings. Only a name
    that says it is a wait counts (``scale *= 2`` in a retry loop is no delay)."""
    if not is_retry_loop(ctx, loop):
        return []
    return [
        step
        for step in own(ctx, loop, _GROWTH)
        if float(step.value.evaluated_value) > 1
        and set(words(identifier(step.target) or "")) & DURATION_WORDS
    ]


def _growing_delay_in(ctx: SourceContext, comparison: cst.Comparison) -> cst.AugAssign | None:
    """The step of the growing delay (see :func:`growing_delays`) the comparison reads, if any."""
    loop = innermost_loop(ctx, comparison)
    if loop is None:
        return None
    names = set(identifiers_in(ctx, comparison))
    return next((s for s in growing_delays(ctx, loop) if identifier(s.target) in names), None)


def _decides(ctx: SourceContext, comparison: cst.Comparison) -> bool:
    """The comparison decides whether another attempt happens (see :func:`_decision`)."""
    return _decision(ctx, comparison)[0]


def _raises_for_status(ctx: SourceContext, body: cst.BaseSuite) -> bool:
    """``if tries >= MAX_TRIES: resp.raise_for_status()``: the httpx/requests way of giving up
    (the call raises the HTTP error the loop was retrying)."""
    return bool(ctx.descendants(body, m.Call(func=m.Attribute(attr=m.Name("raise_for_status")))))


def _counts_attempts(ctx: SourceContext, comparison: cst.Comparison) -> bool:
    """An attempt counter or limit takes part (``attempt``, ``max_retries``, ``retries_left``, or
    the variable of the retry loop around it); statuses, delays and ``None`` checks do not."""
    if is_status_comparison(ctx, comparison):
        return False
    names = set(identifiers_in(ctx, comparison))
    if "None" in names or any(
        isinstance(n, (cst.SimpleString, cst.Float))
        for n in ctx.descendants(comparison, m.SimpleString() | m.Float())
    ):
        return False
    loop = innermost_loop(ctx, comparison)
    if loop is not None and is_retry_loop(ctx, loop) and names & loop_variables(loop):
        return True
    return any(is_count_name(name) for name in names) or _growing_delay_in(ctx, comparison) is not None


def _retry_counter_outside_loop(ctx: SourceContext, comparison: cst.Comparison) -> bool:
    """``self.retries >= self.max_retries`` decides a retry even where the retry is a recursive call."""
    return any(
        is_count_name(n) and {"retries", "retry"} & set(words(n)) for n in identifiers_in(ctx, comparison)
    )


_MIRROR = {cst.LessThan: ">", cst.LessThanEqual: ">=", cst.GreaterThan: "<", cst.GreaterThanEqual: "<="}


def _small_literal(node: cst.CSTNode) -> int | None:
    if isinstance(node, cst.Integer) and int(node.value, 0) in (0, 1):
        return int(node.value, 0)
    return None


def _against_zero_or_one(
    ctx: SourceContext, comparison: cst.Comparison, index: int
) -> tuple[str, cst.BaseExpression, int, str] | None:
    """(``"limit"``/``"counter"``, the named operand, the literal, the operator read with the
    name on the left) when the ``index``-th test compares an attempt name with 0 or 1."""
    left = comparison.left if index == 0 else comparison.comparisons[index - 1].comparator
    right = comparison.comparisons[index].comparator
    operator = comparison.comparisons[index].operator
    if type(operator) not in _SYMBOL:
        return None
    for named, literal, symbol in (
        (left, right, _SYMBOL[type(operator)]),
        (right, left, _MIRROR[type(operator)]),
    ):
        value = _small_literal(literal)
        if value is None or _small_literal(named) is not None:
            continue
        names = [n for n in identifiers_in(ctx, named) if is_count_name(n)]
        if not names:
            return None
        parts = {w for n in names for w in words(n)}
        if parts & COUNTDOWN_WORDS:
            return None
        return ("limit" if parts & ATTEMPT_LIMIT_WORDS else "counter"), named, value, symbol
    return None


def _library_bound(ctx: SourceContext, call: cst.Call) -> Iterator[tuple[cst.BaseExpression, str]]:
    """tenacity's ``stop_after_attempt(n)`` and backoff's ``max_tries=n``."""
    library = retry_library(ctx, call)
    if library == "tenacity" and any(q.endswith("stop_after_attempt") for q in ctx.qualified_names(call)):
        if call.args:
            yield call.args[0].value, "stop_after_attempt"
    elif library == "backoff":
        for arg in call.args:
            if arg.keyword and arg.keyword.value == "max_tries" and not m.matches(arg.value, m.Name("None")):
                yield arg.value, "max_tries"


_STEP = m.AugAssign(
    target=m.Name() | m.Attribute(), operator=m.AddAssign() | m.SubtractAssign(), value=m.Integer()
)


_ORDERING = m.Comparison(
    comparisons=[
        m.AtLeastN(
            m.ComparisonTarget(
                operator=m.LessThan() | m.LessThanEqual() | m.GreaterThan() | m.GreaterThanEqual()
            ),
            n=1,
        )
    ]
)


def _limit_inputs(ctx: SourceContext, loop: cst.For | cst.While) -> set[str]:
    """Names a limit can be built on: compared in the loop (or its ``while`` test), or handed to a
    helper called for its effect, which may give up by raising (``self._back_off(attempt, ...)``);
    a counter that only feeds a delay (``wait = backoff(attempt)``) bounds nothing."""
    names = set(identifiers_in(ctx, loop.test)) if isinstance(loop, cst.While) else set()
    for comparison in own(ctx, loop, m.Comparison()):
        names.update(identifiers_in(ctx, comparison))
    for statement in own(ctx, loop, m.Expr(value=m.Call() | m.Await(expression=m.Call()))):
        call = statement.value.expression if isinstance(statement.value, cst.Await) else statement.value
        for arg in call.args:
            names.update(identifiers_in(ctx, arg.value))
    return names


def _counting_bound(ctx: SourceContext, loop: cst.For) -> bool:
    """``range(...)`` bounds the loop itself; an endless ``itertools.count()`` bounds it only
    through a limit built on its variable (otherwise the bound is elsewhere, e.g. a deadline)."""
    if not isinstance(loop.iter, cst.Call):
        return False
    qualified = ctx.qualified_names(loop.iter)
    if "builtins.range" in qualified:
        return True
    return "itertools.count" in qualified and bool(loop_variables(loop) & _limit_inputs(ctx, loop))


def _counters(ctx: SourceContext, loop: cst.While) -> list[cst.AugAssign]:
    """Steps (``attempt += 1``, ``retries_left -= 1``) of counters the loop's limits are built on."""
    inputs = _limit_inputs(ctx, loop)
    steps = [step for step in own(ctx, loop, _STEP) if identifier(step.target) in inputs]
    return steps + _delay_bounds(ctx, loop)


def _delay_bounds(ctx: SourceContext, loop: cst.For | cst.While) -> list[cst.AugAssign]:
    """Growing-delay steps (:func:`growing_delays`) a give-up of the loop is built on: the delay is
    compared where the comparison decides whether another attempt happens. A delay that is only
    capped (``if delay > max_delay: delay = max_delay``) bounds nothing."""
    decided: set[str] = set()
    for comparison in own(ctx, loop, m.Comparison()):
        if _decides(ctx, comparison) and not is_status_comparison(ctx, comparison):
            decided.update(identifiers_in(ctx, comparison))
    return [step for step in growing_delays(ctx, loop) if identifier(step.target) in decided]


def _limit_names(ctx: SourceContext, node: cst.CSTNode) -> bool:
    """``node`` mentions an attempt count or a time budget (``attempt``, ``deadline``, ``monotonic()``)."""
    return any(is_count_name(n) or set(words(n)) & TIME_BUDGET_WORDS for n in identifiers_in(ctx, node))


def _bounds_attempts(ctx: SourceContext, test: cst.BaseExpression) -> bool:
    """A ``while`` test that limits attempts, not one that keeps a worker alive (``not self.stopped``)."""
    return not m.matches(test, m.Name("True")) and _limit_names(ctx, test)


def _give_ups(ctx: SourceContext, loop: cst.While) -> Iterator[cst.BaseExpression]:
    """Tests of ``if`` branches that end the loop on a limit (``if time.monotonic() > deadline: raise``),
    as opposed to branches that go round again (``continue``) or check a status."""
    for branch in own(ctx, loop, m.If()):
        comparisons = ctx.descendants(branch.test, _ORDERING)
        if not comparisons or any(is_status_comparison(ctx, c) for c in comparisons):
            continue
        if not any(_limit_names(ctx, c) for c in comparisons):
            continue
        if control_flow_exits(ctx, branch.body) and not ctx.descendants(branch.body, m.Continue()):
            yield branch.test


def _gives_up(ctx: SourceContext, body: cst.BaseSuite) -> bool:
    """A branch that ends the retrying: it raises, or returns nothing. A ``return True`` or
    ``return False`` answers a predicate whose meaning the words decide (``should_retry``,
    ``should_disable_retries``), so it does not count."""
    for node in ctx.descendants(body, m.Raise() | m.Return()):
        if enclosing_scope(ctx, node) is not enclosing_scope(ctx, body):
            continue
        if isinstance(node, cst.Raise) or node.value is None or m.matches(node.value, m.Name("None")):
            return True
    return False


def _against_first_attempts(comparison: cst.Comparison) -> bool:
    """``attempt > 1``, ``retries >= 0``: "is this a retry at all?", not a limit."""
    sides = [comparison.left, *(target.comparator for target in comparison.comparisons)]
    return any(isinstance(side, cst.Integer) and side.evaluated_value <= 1 for side in sides)


def _count_from_caller(ctx: SourceContext, test: cst.BaseExpression, function: cst.FunctionDef) -> bool:
    """The give-up compares a parameter (``def _back_off(self, attempt, ...)``): the count lives in
    the caller's loop, which has its own mutant where it advances."""
    names = parameters(function)
    for name in ctx.descendants(test, m.Name()):
        parent = ctx.parent(name)
        if isinstance(parent, cst.Attribute) and parent.attr is name:
            continue
        if name.value in names - {"self", "cls"}:
            return True
    return False


def _stateful_give_ups(ctx: SourceContext) -> Iterator[tuple[cst.If, cst.FunctionDef]]:
    """Give-up branches of a retry strategy that keeps its count between calls instead of looping
    (a hook or callback of a class named like a retry policy: ``self._attempt += 1`` then ``if
    self._attempt >= self._max_attempts: return``). The loop that repeats the call is elsewhere;
    this branch is the only thing that ends it."""
    for branch in ctx.findall(m.If()):
        if innermost_loop(ctx, branch) is not None or not in_retry_path(ctx, branch):
            continue
        function = enclosing_scope(ctx, branch)
        comparisons = ctx.descendants(branch.test, _ORDERING)
        if not isinstance(function, cst.FunctionDef) or not comparisons:
            continue
        if any(is_status_comparison(ctx, c) or _against_first_attempts(c) for c in comparisons) or not any(
            _limit_names(ctx, c) for c in comparisons
        ):
            continue
        if _gives_up(ctx, branch.body) and not _count_from_caller(ctx, branch.test, function):
            yield branch, function


def _fed_counters(ctx: SourceContext, function: cst.FunctionDef) -> set[str]:
    """Parameters of ``function`` that a retry loop of this file hands its attempt count: the
    loop's variable or a counter it steps (``for attempt in range(n): ... _retryable(exc,
    attempt, n)``). Positional arguments map in order (``self``/``cls`` skipped for methods)."""
    names = [p.name.value for p in function.params.params]
    if names[:1] in (["self"], ["cls"]):
        names = names[1:]
    fed: set[str] = set()
    for call in ctx.findall(m.Call()):
        if callee(ctx, call) is not function:
            continue
        loop = innermost_loop(ctx, call)
        if loop is None or not is_retry_loop(ctx, loop):
            continue
        counts = loop_variables(loop) | {identifier(s.target) for s in own(ctx, loop, _STEP)}
        for position, arg in enumerate(call.args):
            if arg.star or not set(identifiers_in(ctx, arg.value)) & counts:
                continue
            if arg.keyword is not None:
                fed.add(arg.keyword.value)
            elif position < len(names):
                fed.add(names[position])
    return fed


def _predicate_polarity(ctx: SourceContext, comparison: cst.Comparison) -> bool | None:
    """For a one-target ordering in a retry predicate: True when it holds while attempts remain
    (``attempt < retries``), False when it holds once they are spent (``tries >= max_tries``),
    None when the file cannot say which side counts. The counter is the parameter a retry loop
    feeds (:func:`_fed_counters`), else the side without limit words against one with them."""
    if len(comparison.comparisons) != 1 or type(comparison.comparisons[0].operator) not in _SYMBOL:
        return None
    left, right = comparison.left, comparison.comparisons[0].comparator
    function = enclosing_scope(ctx, comparison)
    fed = _fed_counters(ctx, function) if isinstance(function, cst.FunctionDef) else set()

    def counts(side: cst.BaseExpression) -> bool:
        return isinstance(side, cst.Name) and side.value in fed

    def limits(side: cst.BaseExpression) -> bool:
        return any(set(words(n)) & ATTEMPT_LIMIT_WORDS for n in identifiers_in(ctx, side))

    if counts(left) != counts(right):
        counter_left = counts(left)
    elif limits(left) != limits(right):
        counter_left = limits(right)
    else:
        return None
    symbol = _SYMBOL[type(comparison.comparisons[0].operator)]
    return (symbol in ("<", "<=")) == counter_left


def _predicate_bounds(ctx: SourceContext) -> Iterator[tuple[cst.Comparison, bool]]:
    """The attempt bound of a retry predicate outside any loop (``def _retryable(state, exc,
    attempt, retries): return ... and attempt < retries and is_retryable(exc)``): the retry loop
    that asks it is elsewhere, so this comparison is what ends it. Only a comparison joined to the
    return by ``and``/``or`` (no ``not`` in between, so its polarity is read from its direction),
    and only where the counting side is known; with the polarity (True: holds to keep going)."""
    for comparison in ctx.findall(m.Comparison()):
        if innermost_loop(ctx, comparison) is not None or not in_retry_path(ctx, comparison):
            continue
        if not _counts_attempts(ctx, comparison) or _reading(ctx, comparison, 0).kind != "limit":
            continue
        parent = ctx.parent(comparison)
        while isinstance(parent, cst.BooleanOperation):
            parent = ctx.parent(parent)
        if not isinstance(parent, cst.Return):
            continue
        polarity = _predicate_polarity(ctx, comparison)
        if polarity is not None:
            yield comparison, polarity


def _library_stop(ctx: SourceContext, call: cst.Call) -> tuple[cst.CSTNode, str] | None:
    """tenacity's ``stop=`` (its value) and a backoff decorator given ``max_tries``/``max_time``
    (the call): (node, ``"tenacity-stop"``/``"backoff-limits"``)."""
    library = retry_library(ctx, call)
    if library == "tenacity":
        stop = next((a for a in call.args if a.keyword and a.keyword.value == "stop"), None)
        if stop is not None:
            return stop.value, "tenacity-stop"
    if library == "backoff":
        limits = [a for a in call.args if a.keyword and a.keyword.value in ("max_tries", "max_time")]
        if limits:
            return call, "backoff-limits"
    return None


def _stop_strategy(ctx: SourceContext, call: cst.Call) -> tuple[cst.CSTNode, str] | None:
    """A tenacity stop strategy built apart from the decorator (``kwargs["stop"] =
    stop_after_attempt(n)``, handed to ``Retrying(**kwargs)`` later): (the call, ``"stop-strategy"``)."""
    if retry_library(ctx, call) != "tenacity":
        return None
    if not {q.rsplit(".", 1)[-1] for q in ctx.qualified_names(call)} & TENACITY_STOPS:
        return None
    return call, "stop-strategy"


_FAILURE_COUNT_WORDS = frozenset({"failures", "errors", "fails", "failed"})
_ZERO = m.Assign(value=m.Integer("0"))
_FAILURE_TEST_WORDS = FAILURE_WORDS - {"ok", "success", "succeeded", "successful"}


def _failure_counters(ctx: SourceContext) -> dict[str, list[cst.AugAssign]]:
    """Counters of consecutive failures (``self.state.consecutive_failures``): named for failures,
    stepped ``+= 1`` on a failure path (in an ``except``, or behind a test that names an error)
    and reset to 0 elsewhere, so they count failures in a row, the attempts at a step that keeps
    failing. Name -> its steps. A plain error tally never reset (``self.total_errors += 1``) counts
    no retries."""

    def compute() -> dict[str, list[cst.AugAssign]]:
        steps: dict[str, list[cst.AugAssign]] = {}
        for step in ctx.findall(_STEP):
            name = identifier(step.target) or ""
            if not isinstance(step.operator, cst.AddAssign) or not set(words(name)) & _FAILURE_COUNT_WORDS:
                continue
            if _on_failure_path(ctx, step):
                steps.setdefault(name, []).append(step)
        resets = {
            identifier(target.target)
            for assign in ctx.findall(_ZERO)
            for target in assign.targets
        }
        return {name: found for name, found in steps.items() if name in resets}

    return ctx.cached(("anatomy", "failure-counters"), compute)


def _on_failure_path(ctx: SourceContext, node: cst.CSTNode) -> bool:
    """``node`` runs because something failed: in an ``except``, or in an ``if`` branch whose test
    names an error or failure (``if result.error:``), or in a function named for handling one."""
    previous = node
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, (cst.ExceptHandler, cst.ExceptStarHandler)):
            return True
        if isinstance(ancestor, cst.If) and previous is not ancestor.test:
            if {w for n in identifiers_in(ctx, ancestor.test) for w in words(n)} & _FAILURE_TEST_WORDS:
                return True
        if isinstance(ancestor, cst.FunctionDef):
            # ``_handle_step_error``: a function named for handling a failure runs on its path.
            return bool(set(words(ancestor.name.value)) & _FAILURE_TEST_WORDS)
        if isinstance(ancestor, cst.ClassDef):
            return False
        previous = ancestor
    return False


def _failure_limit(ctx: SourceContext, comparison: cst.Comparison) -> str | None:
    """The consecutive-failure counter (:func:`_failure_counters`) a comparison bounds against a
    limit (``self.state.consecutive_failures >= self.settings.max_failures``) where it decides
    whether the loop goes on: the counter's name, or None."""
    if len(comparison.comparisons) != 1 or type(comparison.comparisons[0].operator) not in _SYMBOL:
        return None
    counters = _failure_counters(ctx)
    sides = (comparison.left, comparison.comparisons[0].comparator)
    named = [{n for n in identifiers_in(ctx, side) if n in counters} for side in sides]
    limits = [any(set(words(n)) & ATTEMPT_LIMIT_WORDS for n in identifiers_in(ctx, side)) for side in sides]
    for index in (0, 1):
        if named[index] and not named[1 - index] and limits[1 - index] and not limits[index]:
            if innermost_loop(ctx, comparison) is not None and _decides(ctx, comparison):
                return sorted(named[index])[0]
    return None


# -- the sites -------------------------------------------------------------------------------------


def _line(ctx: SourceContext, node: cst.CSTNode) -> int:
    return ctx.position(node).start.line


def _short(ctx: SourceContext, node: cst.CSTNode, limit: int = 50) -> str:
    text = " ".join(ctx.code(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _reading(ctx: SourceContext, comparison: cst.Comparison, index: int) -> Reading:
    delay = _growing_delay_in(ctx, comparison)
    if delay is not None:
        left = comparison.left if index == 0 else comparison.comparisons[index - 1].comparator
        name = identifier(delay.target)
        for operand in (left, comparison.comparisons[index].comparator):
            if name in identifiers_in(ctx, operand):
                return Reading("delay-limit", operand, growth=ctx.code(delay.value))
    against = _against_zero_or_one(ctx, comparison, index)
    if against is None:
        return Reading("limit")
    kind, named, value, symbol = against
    return Reading("enabled-check" if kind == "limit" else "first-attempt", named, value, symbol)


def _path_evidence(ctx: SourceContext, node: cst.CSTNode) -> tuple[list[Evidence], list[Evidence]]:
    """Whether ``node`` is in a retry path, and why (or why not)."""
    loop = innermost_loop(ctx, node)
    if loop is not None:
        present, missing = retry_loop_evidence(ctx, loop)
        if is_retry_loop(ctx, loop):
            return [Evidence(Source.STRUCTURE, f"in the retry loop at line {_line(ctx, loop)}"), *present], []
        return present, missing
    scope = enclosing_scope(ctx, node)
    name = scope.name.value if isinstance(scope, (cst.FunctionDef, cst.ClassDef)) else "module level"
    if scope_is_retry_named(ctx, node):
        return [
            Evidence(Source.NAMES, f"in {name}, named like a retry helper (or a retry class's method)")
        ], []
    return [], [
        Evidence(Source.NAMES, f"outside any loop, in {name}, which is not named like a retry helper")
    ]


def _limit_check(ctx: SourceContext, comparison: cst.Comparison, readings: tuple[Reading, ...]) -> Site:
    names = sorted({n for n in identifiers_in(ctx, comparison) if is_count_name(n)})
    loop = innermost_loop(ctx, comparison)
    present: list[Evidence] = []
    missing: list[Evidence] = []
    if names:
        present.append(Evidence(Source.NAMES, f"names attempts: {', '.join(names)}"))
    else:
        present.append(Evidence(Source.DATA_FLOW, "compares the variable of the retry loop around it"))
    present.append(Evidence(Source.STRUCTURE, f"decides: {_decision(ctx, comparison)[1]}"))
    if in_retry_path(ctx, comparison):
        present += _path_evidence(ctx, comparison)[0]
    else:
        present.append(Evidence(Source.NAMES, "a retry counter compared where the retry is a recursive call"))
    for index, reading in enumerate(readings):
        if reading.kind == "limit":
            continue
        named = " ".join(ctx.code(reading.named).split()) if reading.named is not None else "?"
        what = (
            "asks whether retries are enabled, bounds no attempt"
            if reading.kind == "enabled-check"
            else "a first-attempt or accounting test, no limit"
        )
        missing.append(
            Evidence(Source.NAMES, f"target {index + 1} compares {named} with {reading.value}: {what}")
        )
    bound = RetryBound("limit-check", loop, readings)
    return Site(ROLE, "limit-check", comparison, bound, tuple(present), tuple(missing))


def _loop_site(
    ctx: SourceContext, kind: str, node: cst.CSTNode, loop: cst.For | cst.While, text: str
) -> Site:
    present = [Evidence(Source.STRUCTURE, text), *retry_loop_evidence(ctx, loop)[0]]
    return Site(ROLE, kind, node, RetryBound(kind, loop), tuple(present))


def _library_site(kind: str, node: cst.CSTNode, what: str, text: str) -> Site:
    return Site(ROLE, kind, node, RetryBound(kind, None, (), what), (Evidence(Source.SDK_TYPES, text),))


_LIBRARY_TEXT = {
    "stop_after_attempt": "tenacity's stop_after_attempt(n)",
    "max_tries": "backoff's max_tries=",
    "tenacity-stop": "tenacity's stop= condition",
    "backoff-limits": "a backoff decorator given max_tries/max_time",
    "stop-strategy": "a tenacity stop strategy built apart from the decorator",
}


def _off_by_one_sites(ctx: SourceContext) -> Iterator[Site]:
    checked_loops = set()
    for comparison in ctx.findall(m.Comparison()):
        if not _counts_attempts(ctx, comparison) or not _decides(ctx, comparison):
            if _failure_limit(ctx, comparison):
                yield _limit_check(ctx, comparison, (Reading("limit"),))
            continue
        if in_retry_path(ctx, comparison) or _retry_counter_outside_loop(ctx, comparison):
            checked_loops.add(id(innermost_loop(ctx, comparison)))
            readings = tuple(_reading(ctx, comparison, i) for i in range(len(comparison.comparisons)))
            if any(reading.kind != "first-attempt" for reading in readings):
                yield _limit_check(ctx, comparison, readings)
    for loop in ctx.findall(m.For(iter=_RANGE)):
        # A give-up check inside the loop is the real bound; shifting the range as well would
        # only add a mutant no test can kill.
        if is_retry_loop(ctx, loop) and id(loop) not in checked_loops:
            bound = loop.iter.args[min(1, len(loop.iter.args) - 1)].value
            text = f"the bound of {_short(ctx, loop.iter)}, with no attempt limit checked inside the loop"
            yield _loop_site(ctx, "attempt-range", bound, loop, text)
    for call in ctx.findall(m.Call()):
        for bound, what in _library_bound(ctx, call):
            yield _library_site("library-limit", bound, what, _LIBRARY_TEXT[what])


def _step_site(
    ctx: SourceContext, step: cst.AugAssign, loop: cst.While | None, where: str, what: str = ""
) -> Site:
    target = " ".join(ctx.code(step.target).split())
    present = [Evidence(Source.DATA_FLOW, f"{target} is stepped here and read by {where}")]
    missing: list[Evidence] = []
    if loop is not None:
        present += retry_loop_evidence(ctx, loop)[0]
    else:
        missing.append(Evidence(Source.CALL_GRAPH, "the loop that repeats the call is not in sight"))
    what = "growing-delay" if isinstance(step.operator, cst.MultiplyAssign) else what
    bound = RetryBound("counter-step", loop, (), what)
    return Site(ROLE, "counter-step", step, bound, tuple(present), tuple(missing))


def _give_up_site(ctx: SourceContext, test: cst.BaseExpression, loop: cst.While | None) -> Site:
    present = [
        Evidence(Source.STRUCTURE, "an if that ends the retrying when it holds"),
        Evidence(Source.NAMES, f"compares an attempt count or a time budget: {_short(ctx, test)}"),
    ]
    missing: list[Evidence] = []
    if loop is not None:
        present += retry_loop_evidence(ctx, loop)[0]
        missing.append(Evidence(Source.DATA_FLOW, "no attempt counter is stepped in the loop"))
    else:
        present += _path_evidence(ctx, test)[0]
        missing.append(Evidence(Source.DATA_FLOW, "no counter compared there is stepped in its function"))
    return Site(ROLE, "give-up", test, RetryBound("give-up", loop), tuple(present), tuple(missing))


def _failure_give_up_site(ctx: SourceContext, comparison: cst.Comparison, counter: str) -> Site:
    present = [
        Evidence(Source.STRUCTURE, f"decides: {_decision(ctx, comparison)[1]}"),
        Evidence(Source.NAMES, f"bounds {counter} against a limit: {_short(ctx, comparison)}"),
        Evidence(Source.DATA_FLOW, f"{counter}: stepped on failure paths, reset to 0"),
    ]
    return Site(ROLE, "give-up", comparison, RetryBound("give-up"), tuple(present))


def _predicate_site(ctx: SourceContext, comparison: cst.Comparison, keeps_going: bool) -> Site:
    present = [
        Evidence(Source.STRUCTURE, "the attempt bound a retry predicate returns"),
        Evidence(Source.NAMES, f"compares an attempt count: {_short(ctx, comparison)}"),
        *_path_evidence(ctx, comparison)[0],
    ]
    what = "keeps-going" if keeps_going else "gives-up"
    return Site(ROLE, "give-up", comparison, RetryBound("give-up", None, (), what), tuple(present))


def _unbounded_sites(ctx: SourceContext) -> Iterator[Site]:
    for loop in retry_loops(ctx):
        if isinstance(loop, cst.For):
            if _counting_bound(ctx, loop):
                text = f"{_short(ctx, loop.iter)} counts the retry loop's attempts"
                yield _loop_site(ctx, "counting-loop", loop.iter, loop, text)
            continue
        steps = _counters(ctx, loop)
        for step in steps:
            yield _step_site(ctx, step, loop, f"the limit of the retry loop at line {_line(ctx, loop)}")
        if not steps and _bounds_attempts(ctx, loop.test):
            present = [
                Evidence(Source.STRUCTURE, "the retry loop's while test"),
                Evidence(Source.NAMES, f"limits attempts or time: {_short(ctx, loop.test)}"),
                *retry_loop_evidence(ctx, loop)[0],
            ]
            missing = (Evidence(Source.DATA_FLOW, "no attempt counter is stepped in the loop"),)
            yield Site(ROLE, "loop-test", loop.test, RetryBound("loop-test", loop), tuple(present), missing)
        elif not steps:
            for test in _give_ups(ctx, loop):
                yield _give_up_site(ctx, test, loop)
    stepped: set[int] = set()
    for branch, function in _stateful_give_ups(ctx):
        compared = set(identifiers_in(ctx, branch.test))
        steps = [
            step
            for step in ctx.descendants(function, _STEP)
            if enclosing_scope(ctx, step) is function and identifier(step.target) in compared
        ]
        for step in steps:
            if id(step) not in stepped:
                stepped.add(id(step))
                where = f"the give-up check at line {_line(ctx, branch)} of {function.name.value}()"
                yield _step_site(ctx, step, None, where)
        if not steps:
            yield _give_up_site(ctx, branch.test, None)
    for comparison in ctx.findall(m.Comparison()):
        counter = _failure_limit(ctx, comparison)
        if counter is None:
            continue
        yield _failure_give_up_site(ctx, comparison, counter)
        for step in _failure_counters(ctx)[counter]:
            if id(step) not in stepped:
                stepped.add(id(step))
                where = f"the consecutive-failure limit at line {_line(ctx, comparison)}"
                yield _step_site(ctx, step, None, where, "failure-count")
    for comparison, keeps_going in _predicate_bounds(ctx):
        yield _predicate_site(ctx, comparison, keeps_going)
    for call in ctx.findall(m.Call()):
        found = _library_stop(ctx, call) or _stop_strategy(ctx, call)
        if found:
            node, what = found
            yield _library_site("library-stop", node, what, _LIBRARY_TEXT[what])


def retry_bound_sites(ctx: SourceContext) -> list[Site[RetryBound]]:
    """Every retry-bound site of the file: retry-bound-off-by-one's kinds, then unbounded-retry's,
    each in the order that operator yields them. Cached per file."""
    return ctx.cached(
        ("anatomy", "retry-bound-sites"), lambda: [*_off_by_one_sites(ctx), *_unbounded_sites(ctx)]
    )


# -- explaining a node that is not a site ---------------------------------------------------------


def _weigh_comparison(
    ctx: SourceContext, comparison: cst.Comparison
) -> tuple[list[Evidence], list[Evidence]]:
    present: list[Evidence] = []
    missing: list[Evidence] = []
    if is_status_comparison(ctx, comparison):
        missing.append(Evidence(Source.NAMES, "a status check (retry classification), not an attempt bound"))
    elif not _counts_attempts(ctx, comparison):
        names = ", ".join(
            dict.fromkeys(n for n in identifiers_in(ctx, comparison) if n not in ("self", "cls"))
        )
        missing.append(Evidence(Source.NAMES, f"names no attempt count (names: {names or 'none'})"))
    else:
        present.append(Evidence(Source.NAMES, "names an attempt count or the retry loop's variable"))
    decides, where = _decision(ctx, comparison)
    (present if decides else missing).append(
        Evidence(Source.STRUCTURE, f"decides: {where}" if decides else f"decides nothing: {where}")
    )
    if _retry_counter_outside_loop(ctx, comparison) and not in_retry_path(ctx, comparison):
        present.append(Evidence(Source.NAMES, "a retry counter compared where the retry is a recursive call"))
    else:
        path_present, path_missing = _path_evidence(ctx, comparison)
        present += path_present
        missing += path_missing
    if not missing:
        missing.append(
            Evidence(Source.NAMES, "every target compares a counter with 0 or 1: a first-attempt test")
        )
    return present, missing


def _weigh_loop(ctx: SourceContext, node: cst.CSTNode, kind: str) -> tuple[list[Evidence], list[Evidence]]:
    loop = ctx.parent(node) if kind == "counting-loop" else ctx.enclosing(node, cst.For)
    present, missing = retry_loop_evidence(ctx, loop)
    if not is_retry_loop(ctx, loop):
        return present, missing or [Evidence(Source.STRUCTURE, "the loop is no retry loop")]
    if kind == "attempt-range":
        return present, [
            Evidence(Source.STRUCTURE, "an attempt limit is checked inside the loop: that is the bound")
        ]
    return present, [
        Evidence(
            Source.STRUCTURE, "the iterable neither is range(...) nor an itertools.count(...) feeding a limit"
        )
    ]


def _stateful_miss(ctx: SourceContext, node: cst.CSTNode, kind: str) -> Evidence:
    """Why a step or an if test of a retry helper (outside any loop) is no stateful give-up: the
    first of :func:`_stateful_give_ups`' conditions it fails."""
    if kind == "counter-step":
        return Evidence(
            Source.DATA_FLOW, "no give-up check of its function that ends the retrying compares it"
        )
    branch = ctx.parent(node)
    function = enclosing_scope(ctx, branch)
    comparisons = ctx.descendants(node, _ORDERING)
    if not isinstance(function, cst.FunctionDef) or not comparisons:
        return Evidence(Source.STRUCTURE, "the test orders nothing (no <, <=, >, >=) in a function")
    if any(is_status_comparison(ctx, c) for c in comparisons):
        return Evidence(Source.NAMES, "the test checks a status (retry classification)")
    if any(_against_first_attempts(c) for c in comparisons):
        return Evidence(Source.NAMES, "the test compares with 0 or 1: 'is this a retry at all?', no limit")
    if not any(_limit_names(ctx, c) for c in comparisons):
        return Evidence(Source.NAMES, "the test names no attempt count or time budget")
    if not _gives_up(ctx, branch.body):
        return Evidence(
            Source.STRUCTURE, "the branch neither raises nor returns nothing: it does not give up"
        )
    if _count_from_caller(ctx, node, function):
        return Evidence(
            Source.DATA_FLOW,
            f"the count is a parameter of {function.name.value}(): the caller's loop steps it (its site)",
        )
    return Evidence(
        Source.DATA_FLOW, "the counter it compares is stepped in its function: the steps are the sites"
    )


def _weigh_in_loop(ctx: SourceContext, node: cst.CSTNode, kind: str) -> tuple[list[Evidence], list[Evidence]]:
    """A counter step, a while test or a give-up test that is no site."""
    loop = innermost_loop(ctx, node) if kind != "loop-test" else ctx.parent(node)
    if loop is None:
        present, missing = _path_evidence(ctx, node)
        if not missing:
            missing.append(_stateful_miss(ctx, node, kind))
        return present, missing
    present, missing = retry_loop_evidence(ctx, loop)
    if not is_retry_loop(ctx, loop):
        return present, missing or [Evidence(Source.STRUCTURE, "the loop is no retry loop")]
    if isinstance(loop, cst.For):
        return present, [
            Evidence(Source.STRUCTURE, "the retry loop is a for loop: its iterable is the bound")
        ]
    if kind == "counter-step":
        return present, [
            Evidence(Source.DATA_FLOW, "the counter feeds no limit of the loop (never compared or passed)")
        ]
    if _counters(ctx, loop):
        return present, [
            Evidence(Source.DATA_FLOW, "the loop steps an attempt counter: its steps are the sites")
        ]
    if kind == "loop-test":
        return present, [Evidence(Source.NAMES, "the while test names no attempt count or time budget")]
    return present, [
        Evidence(
            Source.STRUCTURE,
            "the if does not end the loop on an attempt count or time budget (it checks a status, goes "
            "round again, or names neither)",
        )
    ]


class RetryBoundRole(RoleRecogniser):
    role = ROLE
    family = "retry"
    summary = (
        "What ends retrying: an attempt limit, the counter it is built on, or a library's stop condition."
    )
    examples = (
        RoleExample(
            "import anthropic\n\n"
            "def create(client, policy, **kw):\n"
            "    attempt = 0\n"
            "    while True:\n"
            "        attempt += 1\n"
            "        try:\n"
            "            return client.messages.create(**kw)\n"
            "        except anthropic.APIConnectionError:\n"
            "            if attempt >= policy.max_attempts:\n"
            "                raise\n",
            site="attempt >= policy.max_attempts",
            note="a give-up check in a while retry loop (its counter step is a site too)",
        ),
        RoleExample(
            "import asyncio\n\n"
            "async def fetch(client, url, tries=3):\n"
            "    for i in range(tries):\n"
            "        r = await client.get(url)\n"
            "        if r.status_code == 503:\n"
            "            await asyncio.sleep(1)\n"
            "            continue\n"
            "        return r\n",
            site="tries",
            note="the bound of range(...) in a retry for loop without a check of its own",
        ),
        RoleExample(
            "from dataclasses import dataclass\n\n"
            "@dataclass\n"
            "class RetryPolicy:\n"
            "    max_retries: int = 2\n\n"
            "    def should_retry(self, retries_taken: int) -> bool:\n"
            "        return retries_taken < self.max_retries\n",
            site="retries_taken < self.max_retries",
            note="a retry predicate of a policy class",
        ),
        RoleExample(
            "import asyncio\n"
            "import httpx\n\n"
            "async def stream(client, body, retries_left=3):\n"
            "    while retries_left > 0:\n"
            "        try:\n"
            "            return await client.post('/v1/messages', json=body)\n"
            "        except httpx.RemoteProtocolError:\n"
            "            retries_left -= 1\n"
            "            await asyncio.sleep(0.2)\n",
            site="retries_left -= 1",
            note="a countdown stepped in the loop its while test bounds",
        ),
        RoleExample(
            "import openai\n"
            "from tenacity import retry, stop_after_attempt\n\n"
            "@retry(stop=stop_after_attempt(5))\n"
            "def chat(client, messages):\n"
            "    return client.chat.completions.create(model='m', messages=messages)\n",
            site="5",
            note="tenacity's stop_after_attempt(n), read by qualified name",
        ),
        RoleExample(
            "import time\n\n"
            "def poll_completion(client, deadline, **kw):\n"
            "    while time.monotonic() < deadline:\n"
            "        try:\n"
            "            return client.chat.completions.create(**kw)\n"
            "        except TimeoutError:\n"
            "            time.sleep(1)\n",
            site="time.monotonic() < deadline",
            note="a time budget in a retry loop's while test",
        ),
        RoleExample(
            "import time\n\n"
            "def send(client, messages):\n"
            "    retry_delay = 0.125\n"
            "    while True:\n"
            "        try:\n"
            "            return client.chat.completions.create(messages=messages)\n"
            "        except ConnectionError:\n"
            "            should_retry = True\n"
            "            retry_delay *= 2\n"
            "            if retry_delay > 60:\n"
            "                should_retry = False\n"
            "            if not should_retry:\n"
            "                return None\n"
            "            time.sleep(retry_delay)\n",
            site="retry_delay > 60",
            note="a retry bounded by its doubling delay, the give-up carried by a flag a later if leaves on",
        ),
        RoleExample(
            "import time\n\n"
            "def retryable(exc, attempt, retries):\n"
            "    return attempt < retries and isinstance(exc, TimeoutError)\n\n"
            "def call(client, retries=3):\n"
            "    for attempt in range(retries + 1):\n"
            "        try:\n"
            "            return client.complete()\n"
            "        except Exception as exc:\n"
            "            if not retryable(exc, attempt, retries):\n"
            "                raise\n"
            "            time.sleep(2 ** attempt)\n",
            site="attempt < retries",
            note="the attempt bound a retry predicate returns, its counter fed by the retry loop's variable",
        ),
        RoleExample(
            "import time\n\n"
            "def send(client, messages, max_tries=5):\n"
            "    delay = 0.5\n"
            "    for attempt in range(max_tries):\n"
            "        try:\n"
            "            return client.chat.completions.create(messages=messages)\n"
            "        except ConnectionError:\n"
            "            delay *= 2\n"
            "            if delay > 30:\n"
            "                delay = 30\n"
            "            time.sleep(delay)\n",
            site="max_tries",
            note="a doubling delay only capped, never a give-up: the range is the bound, the cap is none",
        ),
        RoleExample(
            "async def select_speaker(model_client, messages, names, max_attempts=3):\n"
            "    num_attempts = 0\n"
            "    while num_attempts < max_attempts:\n"
            "        num_attempts += 1\n"
            "        response = await model_client.create(messages=messages)\n"
            "        if response.content in names:\n"
            "            return response.content\n"
            "        messages.append('Name one of: ' + ', '.join(names))\n"
            "    return names[0]\n",
            site="num_attempts < max_attempts",
            note="a loop that re-asks the model after an invalid reply, judged from the reply (no except)",
        ),
        RoleExample(
            "async def sample(model_client, messages, num_attempts=3):\n"
            "    replies = []\n"
            "    for attempt in range(num_attempts):\n"
            "        replies.append(await model_client.create(messages=messages))\n"
            "    return replies\n",
            note="n replies sampled from the model: the loop never leaves early, it retries nothing",
        ),
        RoleExample(
            "class Agent:\n"
            "    def run(self, max_steps):\n"
            "        while self.n_steps <= max_steps:\n"
            "            if self.consecutive_failures >= self.max_failures:\n"
            "                break\n"
            "            try:\n"
            "                self.step()\n"
            "                self.consecutive_failures = 0\n"
            "            except ValueError:\n"
            "                self.consecutive_failures += 1\n",
            site="self.consecutive_failures >= self.max_failures",
            note="a limit on failures in a row: stepped in an except, reset on success, ends the loop",
        ),
        RoleExample(
            "class Agent:\n"
            "    def run(self, max_steps, log):\n"
            "        while self.n_steps <= max_steps:\n"
            "            if self.consecutive_failures >= self.max_failures:\n"
            "                log.warning('many failures')\n"
            "            try:\n"
            "                self.step()\n"
            "                self.consecutive_failures = 0\n"
            "            except ValueError:\n"
            "                self.consecutive_failures += 1\n",
            note="the same counter compared only to log a warning: it ends nothing",
        ),
        RoleExample(
            "def agent_loop(client, messages, max_turns=10):\n"
            "    for turn in range(max_turns):\n"
            "        reply = client.messages.create(messages=messages)\n"
            "        if reply.stop_reason != 'tool_use':\n"
            "            return reply\n",
            note="an agent's turn loop is bounded too, but it is no retry loop",
        ),
        RoleExample(
            "def apply_retry_attempt_usage(usage, failed_attempts):\n"
            "    if failed_attempts <= 0:\n"
            "        return usage\n"
            "    usage.requests += failed_attempts\n"
            "    return usage\n",
            note="usage accounting of failed attempts, not an attempt limit",
        ),
        RoleExample(
            "def drain(queue):\n"
            "    done = 0\n"
            "    while queue:\n"
            "        try:\n"
            "            queue.pop()()\n"
            "        except KeyError:\n"
            "            continue\n"
            "        done += 1\n",
            note="a work-queue loop that catches errors and counts",
        ),
        RoleExample(
            "import time\n\n"
            "def send(client, messages, log):\n"
            "    delay = 0.5\n"
            "    while True:\n"
            "        try:\n"
            "            return client.chat.completions.create(messages=messages)\n"
            "        except ConnectionError:\n"
            "            delay *= 2\n"
            "            slow = False\n"
            "            if delay > 30:\n"
            "                slow = True\n"
            "            log(slow)\n"
            "            time.sleep(min(delay, 30))\n",
            note="a doubling delay compared only to set a flag nobody leaves on: no bound",
        ),
        RoleExample(
            "def stop_after_attempt(n):\n"
            "    return lambda state: state.attempt_number >= n\n\n"
            "POLICY = {'stop': stop_after_attempt(3)}\n",
            note="a function of this file that happens to share tenacity's name",
        ),
    )

    def sites(self, ctx: SourceContext) -> list[Site[RetryBound]]:
        return retry_bound_sites(ctx)

    def considered(self, ctx: SourceContext) -> list[tuple[cst.CSTNode, str]]:
        """Comparisons, the iterables and range bounds of ``for`` loops, counter steps, ``while``
        tests, ``if`` tests, the library sites (found by qualified name only) and the bounds
        retry predicates return."""
        found: list[tuple[cst.CSTNode, str]] = [(node, "limit-check") for node in ctx.nodes(cst.Comparison)]
        for loop in ctx.findall(m.For(iter=m.Call())):
            found.append((loop.iter, "counting-loop"))
            if m.matches(loop.iter, _RANGE):
                found.append((loop.iter.args[min(1, len(loop.iter.args) - 1)].value, "attempt-range"))
        found += [(step, "counter-step") for step in ctx.findall(_STEP) + ctx.findall(_GROWTH)]
        found += [(loop.test, "loop-test") for loop in ctx.nodes(cst.While)]
        found += [(branch.test, "give-up") for branch in ctx.nodes(cst.If)]
        found += [(site.node, site.kind) for site in self.sites(ctx) if site.kind.startswith("library-")]
        found += [
            (site.node, site.kind)
            for site in self.sites(ctx)
            if site.kind == "give-up" and isinstance(site.node, cst.Comparison)
        ]
        unique = {(id(node), kind): (node, kind) for node, kind in found if not in_test(ctx, node)}
        found = list(unique.values())
        found.sort(key=lambda pair: (_line(ctx, pair[0]), ctx.position(pair[0]).start.column))
        return found

    def weigh(
        self, ctx: SourceContext, node: cst.CSTNode, kind: str
    ) -> tuple[list[Evidence], list[Evidence]]:
        if kind == "limit-check":
            return _weigh_comparison(ctx, node)
        if kind in ("counting-loop", "attempt-range"):
            return _weigh_loop(ctx, node, kind)
        return _weigh_in_loop(ctx, node, kind)


RETRY_BOUND = RetryBoundRole()
