"""The agent's turn loop and its bound.

A *turn loop* is a ``for``/``while`` loop whose every pass talks to the model (directly, through
a call named for it such as ``self.llm.invoke``, or through a function of the same file that
does), that counts or bounds turns by name (``for turn in range(max_turns)``, ``while
self.steps_taken <= self.step_budget``, ``self._rounds += 1``), and that is not a retry loop
(attempts of one request are the retry family's business).

Its *bound* is what ends the loop after N turns, in any of these spellings:

* ``range(N)`` as the loop's iterable (the loop just ends; often a ``raise`` follows it);
* a comparison of a turn counter with a turn limit in the ``while`` test (the loop goes on while
  it holds: sense ``continue``), in an ``if`` of the loop whose body leaves it (``raise``,
  ``break``, ``return``: sense ``stop``), or in a predicate or check of the same file called there
  (``while not self._should_halt()``, ``self._check_turns()``), read through ``not``.

Pages, tokens, usage, chunks and attempts are counted and bounded too, but they are not turns:
their names never make a turn counter (see ``vocabulary.NOT_TURN_WORDS``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.callgraph import callee, model_call_evidence, own_calls
from mutagent.anatomy.model_calls import direct_model_call, endpoint_request, program_call
from mutagent.anatomy.retry.loops import is_retry_loop
from mutagent.anatomy.vocabulary import (
    EXCEEDED_WORDS,
    LIMIT_WORDS,
    NOT_TURN_WORDS,
    REQUEST_WORDS,
    STOP_SIGNAL_WORDS,
    STORE_CALLS,
    identifier,
    is_count_name,
    is_turn_limit_name,
    is_turn_name,
    words,
)
from mutagent.mutation.context import SourceContext

_ORDERING = (cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual)
_EQUALITY = (cst.Equal, cst.NotEqual)
_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
_LOOPS = (cst.For, cst.While)
_STEP = m.AugAssign(
    target=m.Name() | m.Attribute(), operator=m.AddAssign() | m.SubtractAssign(), value=m.Integer()
)


@dataclass(frozen=True)
class TurnBound:
    """One bound of a turn loop. ``node`` is the ``range(...)`` call or the comparison;
    ``sense`` is ``"stop"`` when the comparison holding ends the loop, ``"continue"`` when it
    holding allows another turn (a ``range`` bound is ``"continue"``); ``raises`` names the
    exception raised once the bound is reached, if the code raises one."""

    kind: str  # "range" | "comparison"
    node: cst.CSTNode
    sense: str
    counter: str
    limit: str
    raises: str | None
    evidence: tuple[str, ...]
    index: int = 0  # which target of a chained comparison (``0 < limit <= calls``) is the bound
    state: str | None = None  # how the counter outlives one call (a bound re-entered, not looped)
    countdown: bool = False  # the counter counts down to the bound (``remaining -= 1``)


@dataclass(frozen=True)
class TurnLoop:
    loop: cst.For | cst.While
    evidence: tuple[str, ...]
    bounds: tuple[TurnBound, ...] = field(default=())


def _names(ctx: SourceContext, node: cst.CSTNode) -> list[str]:
    """Names a reader sees in ``node`` (``self.max_turns`` -> ``self``, ``max_turns``)."""
    return [n.value for n in ctx.descendants(node, m.Name())]


def _loop_variables(loop: cst.CSTNode) -> set[str]:
    if not isinstance(loop, cst.For):
        return set()
    target = loop.target
    items = [e.value for e in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else [target]
    return {item.value for item in items if isinstance(item, cst.Name)}


def _side_roles(
    ctx: SourceContext, side: cst.CSTNode, loop_vars: set[str], extra: frozenset[str] = frozenset()
) -> tuple[str, bool]:
    """(``"turn"`` for an operand named as a turn counter, ``"other"`` for any other variable,
    ``""`` for a literal; whether it is a turn limit) for one operand of a comparison. A literal 0
    or 1 is a "first turn?" test, never a limit."""
    names = _names(ctx, side)
    literal = isinstance(side, cst.Integer)
    limit = any(_is_limit(n, extra) for n in names) or (literal and int(side.value, 0) > 1)
    if limit or literal or not names:
        return "", limit
    turn = any(_is_turn(n, extra) for n in names) or bool(set(names) & loop_vars)
    return ("turn" if turn else "other"), False


def _is_turn(name: str, extra: frozenset[str]) -> bool:
    parts = set(words(name))
    return is_turn_name(name) or bool(parts & extra and not parts & NOT_TURN_WORDS)


def _is_limit(name: str, extra: frozenset[str]) -> bool:
    return is_turn_limit_name(name) or (_is_turn(name, extra) and bool(set(words(name)) & LIMIT_WORDS))


def _operands(comparison: cst.Comparison, index: int) -> tuple[cst.BaseExpression, cst.BaseExpression]:
    left = comparison.left if index == 0 else comparison.comparisons[index - 1].comparator
    return left, comparison.comparisons[index].comparator


def turn_pair(  # type: ignore[assignment]
    ctx: SourceContext,
    node: cst.CSTNode,
    loop_vars: set[str] = frozenset(),
    extra: frozenset[str] = frozenset(),
) -> int | None:
    """The index of the comparison target of ``node`` that compares a turn counter with a turn
    limit (``turn > max_turns``, ``self.steps_taken <= self.step_budget``, ``self._rounds >=
    self._round_cap``, the second half of ``0 < self.step_limit <= self.n_calls``), or None.

    A counter named for turns may meet a literal limit above 1; any other counter must meet a
    limit named for turns. Nothing compared with ``None``, a string or a float, and nothing
    that mentions attempts or retries, is a turn bound."""
    if not isinstance(node, cst.Comparison):
        return None
    names = _names(ctx, node)
    if "None" in names or any(is_count_name(n) for n in names):
        return None
    if ctx.descendants(node, m.SimpleString() | m.Float() | m.FormattedString()):
        return None
    for index, target in enumerate(node.comparisons):
        if not isinstance(target.operator, _ORDERING + _EQUALITY):
            continue
        sides = _operands(node, index)
        roles = [_side_roles(ctx, side, loop_vars, extra) for side in sides]
        for counter, limit in ((0, 1), (1, 0)):
            if not roles[limit][1]:
                continue
            if roles[counter][0] == "turn":
                return index
            if roles[counter][0] == "other" and not isinstance(sides[limit], cst.Integer):
                return index
    return None


def turn_comparison(ctx: SourceContext, node: cst.CSTNode, loop_vars: set[str] = frozenset()) -> bool:  # type: ignore[assignment]
    """Whether ``node`` is a turn bound comparison (see :func:`turn_pair`)."""
    return turn_pair(ctx, node, loop_vars) is not None


def test_leaves(ctx: SourceContext, test: cst.CSTNode, negated: bool = False):  # noqa: ANN202 - generator
    """(leaf, negated) for the leaves of a boolean test, through ``and``/``or``/``not``/parens."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        yield from test_leaves(ctx, test.expression, not negated)
    elif isinstance(test, cst.BooleanOperation):
        yield from test_leaves(ctx, test.left, negated)
        yield from test_leaves(ctx, test.right, negated)
    else:
        yield test, negated


def block_exit(ctx: SourceContext, block: cst.CSTNode) -> str | None:
    """How ``block`` leaves the loop: ``raise X``, ``return``, ``break``; None if it does not."""
    for statement in ctx.descendants(block, m.Raise() | m.Return() | m.Break()):
        if any(isinstance(a, _SCOPES + _LOOPS) for a in _within(ctx, statement, block)):
            continue
        if isinstance(statement, cst.Raise):
            return f"raise {_raised(ctx, statement) or ''}".strip()
        return "return" if isinstance(statement, cst.Return) else "break"
    return None


def _raised(ctx: SourceContext, statement: cst.Raise) -> str | None:
    """The class ``raise`` raises: ``raise X(...)``, ``raise X``, or ``raise err`` where ``err =
    X(...)`` in the same function."""
    exc = statement.exc
    scope = ctx.enclosing_function(statement)
    if isinstance(exc, cst.Name) and scope is not None:
        assigned = m.Assign(targets=[m.AssignTarget(m.Name(exc.value))], value=m.Call())
        for assign in ctx.descendants(scope, assigned):
            exc = assign.value
            break
    if isinstance(exc, cst.Call):
        exc = exc.func
    return identifier(exc) if exc is not None else None


def _within(ctx: SourceContext, node: cst.CSTNode, stop: cst.CSTNode) -> list[cst.CSTNode]:
    found = []
    for ancestor in ctx.ancestors(node):
        if ancestor is stop:
            break
        found.append(ancestor)
    return found


def _returns_true(ctx: SourceContext, block: cst.CSTNode) -> bool:
    return bool(ctx.descendants(block, m.Return(value=m.Name("True"))))


def _raise_after(ctx: SourceContext, loop: cst.CSTNode) -> str | None:
    """``X`` when the statement right after the loop (or its ``else``) raises ``X``."""
    if getattr(loop, "orelse", None) is not None:
        found = block_exit(ctx, loop.orelse)
        if found and found.startswith("raise"):
            return found.removeprefix("raise ").strip() or None
    parent = ctx.parent(loop)
    body = getattr(parent, "body", None)
    if isinstance(body, (list, tuple)) and loop in body:
        index = list(body).index(loop)
        if index + 1 < len(body):
            following = body[index + 1]
            if isinstance(following, cst.SimpleStatementLine) and isinstance(following.body[0], cst.Raise):
                return _raised(ctx, following.body[0])
    return None


def raised_class(exit_: str | None) -> str | None:
    if exit_ and exit_.startswith("raise "):
        return exit_.removeprefix("raise ") or None
    return None


def _predicate_bounds(
    ctx: SourceContext, func: cst.FunctionDef, stop_when_true: bool, loop_vars: set[str], via: str
) -> list[TurnBound]:
    """Bounds inside a predicate (``_should_halt``) or check (``_check_turns``) the loop calls.
    ``stop_when_true``: the predicate returning True ends the loop (None for a check called as a
    statement, whose only way to end the loop is to raise)."""
    found = []
    for comparison in ctx.descendants(func.body, m.Comparison()):
        if not turn_comparison(ctx, comparison, loop_vars):
            continue
        for ancestor in ctx.ancestors(comparison):
            if isinstance(ancestor, cst.Return) and stop_when_true is not None:
                negated = dict(test_leaves(ctx, ancestor.value)).get(comparison)
                if negated is None:
                    break
                stop = stop_when_true != negated
                found.append(_bound(ctx, comparison, "stop" if stop else "continue", None, via))
                break
            if isinstance(ancestor, cst.If):
                negated = dict(test_leaves(ctx, ancestor.test)).get(comparison)
                if negated is None:
                    break
                exit_ = block_exit(ctx, ancestor.body)
                if exit_ and exit_.startswith("raise"):
                    sense = "continue" if negated else "stop"
                    found.append(_bound(ctx, comparison, sense, raised_class(exit_), via))
                elif stop_when_true is not None and _returns_true(ctx, ancestor.body):
                    stop = stop_when_true != negated
                    found.append(_bound(ctx, comparison, "stop" if stop else "continue", None, via))
                break
            if isinstance(ancestor, _SCOPES):
                break
    return found


def _bound(
    ctx: SourceContext,
    comparison: cst.Comparison,
    sense: str,
    raises: str | None,
    via: str,
    extra: frozenset[str] = frozenset(),
) -> TurnBound:
    index = turn_pair(ctx, comparison, set(), extra)
    index = 0 if index is None else index
    left, right = _operands(comparison, index)
    counter, limit = (right, left) if _side_roles(ctx, left, set(), extra)[1] else (left, right)
    counter_text, limit_text = ctx.code(counter).strip(), ctx.code(limit).strip()
    evidence = (f"{via}compares turn counter {counter_text} with limit {limit_text}",)
    return TurnBound("comparison", comparison, sense, counter_text, limit_text, raises, evidence, index)


def counter_and_limit(
    ctx: SourceContext, comparison: cst.Comparison, extra: frozenset[str] = frozenset()
) -> tuple[str, str]:
    """The code of the counter and of the limit a turn comparison compares (as a bound reads them)."""
    bound = _bound(ctx, comparison, "stop", None, "", extra)
    return bound.counter, bound.limit


def _loop_bounds(ctx: SourceContext, loop: cst.For | cst.While, loop_vars: set[str]) -> list[TurnBound]:
    bounds: list[TurnBound] = []
    after = _raise_after(ctx, loop)
    tests: list[tuple[cst.CSTNode, bool]] = []  # (test, True if the test holding ends the loop)
    if isinstance(loop, cst.While):
        tests.append((loop.test, False))
    for branch in _own(ctx, loop, m.If()):
        exit_ = block_exit(ctx, branch.body)
        if exit_:
            tests.append((branch.test, True))
            for leaf, negated in test_leaves(ctx, branch.test):
                if turn_comparison(ctx, leaf, loop_vars):
                    sense = "continue" if negated else "stop"
                    bounds.append(_bound(ctx, leaf, sense, raised_class(exit_), ""))
    if isinstance(loop, cst.While):
        for leaf, negated in test_leaves(ctx, loop.test):
            if turn_comparison(ctx, leaf, loop_vars):
                bounds.append(_bound(ctx, leaf, "stop" if negated else "continue", after, ""))
    for test, holding_stops in tests:
        for leaf, negated in test_leaves(ctx, test):
            target = callee(ctx, leaf)
            if target is not None:
                stop_when_true = holding_stops != negated
                via = f"{target.name.value}() "
                bounds.extend(_predicate_bounds(ctx, target, stop_when_true, loop_vars, via))
    for target in reached_defs(ctx, loop.body):
        bounds.extend(_predicate_bounds(ctx, target, None, loop_vars, f"{target.name.value}() "))
    return bounds


def reached_defs(ctx: SourceContext, node: cst.CSTNode, depth: int = 2) -> list[cst.FunctionDef]:
    """Defs of this file that running ``node`` calls, followed ``depth`` levels deep (a check
    such as ``query()`` that raises ``LimitsExceeded``, called by ``step()`` in the loop)."""
    found: list[cst.FunctionDef] = []
    own_def = ctx.enclosing_function(node)
    frontier = [node]
    for _ in range(depth):
        following = []
        for part in frontier:
            for call in own_calls(ctx, part):
                target = callee(ctx, call)
                if target is not None and target is not own_def and target not in found:
                    found.append(target)
                    following.append(target.body)
        frontier = following
    return found


def _own(ctx: SourceContext, loop: cst.CSTNode, matcher: m.BaseMatcherNode) -> list[cst.CSTNode]:
    """Nodes of ``loop``'s body matching ``matcher``, outside nested loops and definitions."""
    found = []
    for node in ctx.descendants(loop.body, matcher):  # type: ignore[attr-defined]
        if not any(isinstance(a, _SCOPES + _LOOPS) for a in _within(ctx, node, loop)):
            found.append(node)
    return found


def _is_range(ctx: SourceContext, node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Call) and "builtins.range" in ctx.qualified_names(node)


def _turn_named(ctx: SourceContext, loop: cst.For | cst.While) -> str | None:
    header = (loop.target, loop.iter) if isinstance(loop, cst.For) else (loop.test,)
    for part in header:
        for name in _names(ctx, part):
            if is_turn_name(name):
                return f"loop header names turns: {name}"
    for step in _own(ctx, loop, m.AugAssign(operator=m.AddAssign())):
        name = identifier(step.target)
        if is_turn_name(name):
            return f"counts turns: {ctx.code(step).strip()}"
    return None


def _limit_named(ctx: SourceContext, node: cst.CSTNode) -> bool:
    """``node`` names a limit (``self.max_reflections``, ``get_max_remote_calls(config)``) and
    nothing of what else is counted and bounded (tokens, pages, attempts)."""
    parts = {part for name in _names(ctx, node) for part in words(name)}
    return bool(parts & LIMIT_WORDS) and not parts & NOT_TURN_WORDS


def _pass_steps(ctx: SourceContext, loop: cst.For | cst.While) -> list[cst.AugAssign]:
    """Counters stepped by a constant on every pass: ``x += 1`` / ``x -= 1`` as a statement of
    the loop's own body (not under an ``if`` or an ``except``, which count only some passes)."""
    found = []
    for statement in loop.body.body:  # type: ignore[union-attr]
        if isinstance(statement, cst.SimpleStatementLine):
            found += [small for small in statement.body if m.matches(small, _STEP)]
    return [
        step
        for step in found
        if not any(is_count_name(n) or set(words(n)) & NOT_TURN_WORDS for n in _names(ctx, step.target))
    ]


def _initial_limit(ctx: SourceContext, loop: cst.CSTNode, counter: str) -> str | None:
    """The limit-named value a countdown starts from (``remaining = get_max_remote_calls(cfg)``)."""
    function = ctx.enclosing_function(loop)
    if function is None:
        return None
    for assign in ctx.descendants(function.body, m.Assign() | m.AnnAssign()):
        targets = [t.target for t in assign.targets] if isinstance(assign, cst.Assign) else [assign.target]
        if assign.value is not None and any(ctx.code(t).strip() == counter for t in targets):
            if _limit_named(ctx, assign.value):
                return ctx.code(assign.value).strip()
    return None


def _budget_bounds(ctx: SourceContext, loop: cst.For | cst.While) -> list[TurnBound]:
    """Bounds on a counter the loop steps once per pass, whatever it is named, when the data flow
    says it is a budget of the loop's passes (of its model calls): an up-counter compared with a
    limit-named value (``self.num_reflections >= self.max_reflections``), or a countdown started
    from a limit-named value and compared with 0 (``while remaining_remote_calls > 0``), in the
    ``while`` test or in an ``if`` of the loop whose body leaves it."""
    bounds: list[TurnBound] = []
    tests: list[tuple[cst.CSTNode, str | None, bool]] = []  # (test, exit, holding stops the loop)
    if isinstance(loop, cst.While):
        tests.append((loop.test, None, False))
    for branch in _own(ctx, loop, m.If()):
        exit_ = block_exit(ctx, branch.body)
        if exit_:
            tests.append((branch.test, exit_, True))
    for step in _pass_steps(ctx, loop):
        counter = ctx.code(step.target).strip()
        countdown = isinstance(step.operator, cst.SubtractAssign)
        start = _initial_limit(ctx, loop, counter) if countdown else None
        if countdown and start is None:
            continue
        for test, exit_, holding_stops in tests:
            for leaf, negated in test_leaves(ctx, test):
                if not isinstance(leaf, cst.Comparison) or len(leaf.comparisons) != 1:
                    continue
                target = leaf.comparisons[0]
                if not isinstance(target.operator, _ORDERING + _EQUALITY):
                    continue
                sides = [leaf.left, target.comparator]
                codes = [ctx.code(side).strip() for side in sides]
                if counter not in codes:
                    continue
                other = sides[1 - codes.index(counter)]
                if countdown and not (isinstance(other, cst.Integer) and int(other.value, 0) == 0):
                    continue
                if not countdown and (isinstance(other, cst.Integer) or not _limit_named(ctx, other)):
                    continue
                stop = holding_stops != negated
                raises = raised_class(exit_) if exit_ else _raise_after(ctx, loop)
                limit = ctx.code(other).strip()
                what = f"counts down from {start}" if countdown else f"is compared with limit {limit}"
                evidence = (f"{ctx.code(step).strip()} on every pass; {counter} {what}",)
                bounds.append(
                    TurnBound(
                        "comparison",
                        leaf,
                        "stop" if stop else "continue",
                        counter,
                        limit,
                        raises,
                        evidence,
                        countdown=countdown,
                    )
                )
    return bounds


def turn_loops(ctx: SourceContext) -> list[TurnLoop]:
    """Every turn loop of the file with its bounds, in document order (cached per file)."""
    return ctx.cached(("anatomy", "turn-loops"), lambda: _find(ctx))


def turn_model_call(ctx: SourceContext, call: cst.Call) -> str | None:
    """Evidence that ``call`` asks the model for a turn: an SDK or HTTP model call, a request to a
    path the function assigned a model endpoint, or a call of an LM program (``self.react(...)``)."""
    return direct_model_call(ctx, call) or endpoint_request(ctx, call) or program_call(ctx, call)


def _find(ctx: SourceContext) -> list[TurnLoop]:

    def direct(call: cst.Call) -> str | None:
        return turn_model_call(ctx, call)

    found = []
    # document order is the order of the loops' start positions (one keyword each)
    for loop in ctx.in_document_order(ctx.nodes(cst.For) + ctx.nodes(cst.While)):
        named = _turn_named(ctx, loop)
        budget = _budget_bounds(ctx, loop)
        if named is None and budget:
            named = f"counts its passes: {budget[0].evidence[0]}"
        if named is None and not _has_turn_check(ctx, loop):
            continue
        if is_retry_loop(ctx, loop):
            continue
        model = model_call_evidence(ctx, loop.body, direct)
        if model is None and isinstance(loop, cst.For):
            model = model_call_evidence(ctx, loop.iter, direct)
        if model is None:
            continue
        loop_vars = (
            _loop_variables(loop) if isinstance(loop, cst.For) and _is_range(ctx, loop.iter) else set()
        )
        bounds = _loop_bounds(ctx, loop, loop_vars)
        bounds += [b for b in budget if all(b.node is not other.node for other in bounds)]
        if isinstance(loop, cst.For) and _is_range(ctx, loop.iter) and named:
            args = loop.iter.args
            limit = ctx.code(args[min(1, len(args) - 1)].value).strip() if args else ""
            bounds.insert(
                0,
                TurnBound(
                    "range",
                    loop.iter,
                    "continue",
                    ", ".join(sorted(loop_vars)) or "_",
                    limit,
                    _raise_after(ctx, loop),
                    (f"the loop runs {ctx.code(loop.iter).strip()} turns",),
                ),
            )
        evidence = tuple(e for e in (named, model) if e)
        found.append(TurnLoop(loop, evidence, tuple(bounds)))
    return found


def sibling_bound(ctx: SourceContext, bound: TurnBound) -> TurnBound | None:
    """Another bound of the same turn loop on the same counter (``range(max_tool_iterations)``
    and ``if loop_iteration == max_tool_iterations - 1: break``; ``while remaining > 0`` and
    ``if remaining == 0: break``), checked on every pass: either one alone still ends the loop,
    so removing only one leaves the loop bounded."""
    for turn_loop in turn_loops(ctx):
        if any(b.node is bound.node for b in turn_loop.bounds):
            for other in turn_loop.bounds:
                if other.node is bound.node or other.counter != bound.counter:
                    continue
                if _every_pass(ctx, turn_loop.loop, other.node):
                    return other
    return None


def _every_pass(ctx: SourceContext, loop: cst.For | cst.While, node: cst.CSTNode) -> bool:
    """``node`` is checked on every pass: in the loop's header, or in the test of an ``if`` that
    is a statement of the loop's own body (not one reached only on some path, under another
    ``if`` or in an ``except``)."""
    header = loop.iter if isinstance(loop, cst.For) else loop.test
    if node is header or any(a is header for a in ctx.ancestors(node)):
        return True
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.If):
            return ctx.parent(ancestor) is loop.body and any(
                leaf is node for leaf, _ in test_leaves(ctx, ancestor.test)
            )
    return False


def loose_turn_bounds(ctx: SourceContext) -> list[TurnBound]:
    """Turn bounds whose loop is not in sight (it runs in another file, or through a framework):
    an ``if`` comparing a turn (or model-request) counter with its limit whose body raises a
    limit error. Bounds already read from a turn loop of the file are not repeated."""

    def compute() -> list[TurnBound]:
        claimed = {id(b.node) for loop in turn_loops(ctx) for b in loop.bounds}
        found = []
        for branch in ctx.nodes(cst.If):
            raises = raised_class(block_exit(ctx, branch.body))
            parts = set(words(raises or ""))
            if not raises or not parts & EXCEEDED_WORDS or "rate" in parts:
                continue
            for leaf, negated in test_leaves(ctx, branch.test):
                if id(leaf) in claimed or turn_pair(ctx, leaf, set(), REQUEST_WORDS) is None:
                    continue
                bound = _bound(ctx, leaf, "continue" if negated else "stop", raises, "", REQUEST_WORDS)
                evidence = (*bound.evidence, f"raises {raises} once passed (the loop it bounds is elsewhere)")
                found.append(TurnBound(**{**bound.__dict__, "evidence": evidence}))
        return found

    return ctx.cached(("anatomy", "loose-turn-bounds"), compute)


def _persisted(ctx: SourceContext, function: cst.FunctionDef, counter: cst.CSTNode) -> str | None:
    """How a counter stepped in ``function`` outlives the call, so that each re-entry counts one
    more turn: it is an attribute (state on ``self`` or on a state object), or a local read from a
    store and written back to it (``n = await ctx.store.get("n"); n += 1; await ctx.store.set("n",
    n)``). A plain local reset on every call counts nothing across calls."""
    if isinstance(counter, cst.Attribute):
        return f"{ctx.code(counter).strip()} is state that outlives the call"
    if not isinstance(counter, cst.Name):
        return None
    for call in ctx.descendants(function.body, m.Call(func=m.Attribute())):
        verb = call.func.attr.value  # type: ignore[attr-defined]
        if verb in STORE_CALLS and any(m.matches(arg.value, m.Name(counter.value)) for arg in call.args):
            return f"{counter.value} is written back by {ctx.code(call.func).strip()}(...)"
    return None


def _stepped(ctx: SourceContext, function: cst.FunctionDef, counter: cst.CSTNode) -> cst.AugAssign | None:
    """A ``counter += 1`` (or ``-= 1`` for a countdown) that advances ``counter`` between entries:
    in ``function`` for a local, anywhere in the class for state on an object (a step method
    counts, the check method reads: ``self.n_stalled_steps += 1`` in ``step()``)."""
    code = ctx.code(counter).strip()
    scope: cst.CSTNode = function
    if isinstance(counter, cst.Attribute):
        scope = next((a for a in ctx.ancestors(function) if isinstance(a, cst.ClassDef)), ctx.module)
    for step in ctx.descendants(scope, _STEP):
        if ctx.code(step.target).strip() != code:
            continue
        if isinstance(counter, cst.Attribute) or ctx.enclosing_function(step) is function:
            return step
    return None


def _stop_signal(ctx: SourceContext, body: cst.CSTNode) -> str | None:
    """The class of what the branch returns to say the run must stop (``return StopMessage(...)``,
    ``return TerminationSignal(...)``), or None."""
    for statement in ctx.descendants(body, m.Return(value=m.Call())):
        name = identifier(statement.value.func) or ""  # type: ignore[union-attr]
        if name[:1].isupper() and set(words(name)) & STOP_SIGNAL_WORDS:
            return name
    return None


def _stop_signal_bound(
    ctx: SourceContext, branch: cst.If, leaf: cst.CSTNode, negated: bool, function: cst.FunctionDef
) -> TurnBound | None:
    """A termination condition the engine calls after each turn (``MaxMessageTermination``):
    state on ``self`` stepped in the same call (``self._message_count += len(new)``), compared
    with a limit-named value, in an ``if`` that returns a stop signal. What it counts need not
    be named for turns: the stop signal is what ends the run."""
    if negated or not isinstance(leaf, cst.Comparison) or len(leaf.comparisons) != 1:
        return None
    if not isinstance(leaf.comparisons[0].operator, _ORDERING):
        return None
    stop = _stop_signal(ctx, branch.body)
    if stop is None:
        return None
    sides = [leaf.left, leaf.comparisons[0].comparator]
    for index, side in enumerate(sides):
        other = sides[1 - index]
        if not isinstance(side, cst.Attribute) or not m.matches(side.value, m.Name("self")):
            continue
        if isinstance(other, cst.Integer) or not _limit_named(ctx, other):
            continue
        if any(is_count_name(n) or set(words(n)) & NOT_TURN_WORDS for n in _names(ctx, side)):
            continue
        code = ctx.code(side).strip()
        step = next(
            (
                s
                for s in ctx.descendants(function.body, m.AugAssign(operator=m.AddAssign()))
                if ctx.code(s.target).strip() == code and ctx.enclosing_function(s) is function
            ),
            None,
        )
        if step is None:
            continue
        state = f"{code} is state on self, stepped in the same call: {ctx.code(step).strip()}"
        limit = ctx.code(other).strip()
        evidence = (f"compares counter {code} with limit {limit}", f"returns {stop}; {state}")
        return TurnBound("comparison", leaf, "stop", code, limit, None, evidence, 0, state)
    return None


def stateful_turn_bounds(ctx: SourceContext) -> list[TurnBound]:
    """Turn bounds of a step the engine re-enters once per turn, with no loop in the function: an
    ``if`` comparing a turn counter with a turn limit whose body ends the run (``return``,
    ``raise``), where the counter outlives the call and is stepped between entries
    (``self._current_turn += 1`` in the same method or another of its class; a local count read
    from a workflow's context store, stepped and written back). Bounds already read
    from a turn loop, or as loose bounds, are not repeated."""

    def compute() -> list[TurnBound]:
        claimed = {id(b.node) for loop in turn_loops(ctx) for b in loop.bounds}
        claimed |= {id(b.node) for b in loose_turn_bounds(ctx)}
        found = []
        for branch in ctx.nodes(cst.If):
            function = ctx.enclosing_function(branch)
            if function is None or any(isinstance(a, _LOOPS) for a in _within(ctx, branch, function)):
                continue
            exit_ = block_exit(ctx, branch.body)
            if exit_ is None or exit_ == "break":
                continue
            for leaf, negated in test_leaves(ctx, branch.test):
                if id(leaf) in claimed:
                    continue
                if turn_pair(ctx, leaf) is None:
                    bound = _stop_signal_bound(ctx, branch, leaf, negated, function)
                    if bound is not None:
                        found.append(bound)
                    continue
                bound = _bound(ctx, leaf, "continue" if negated else "stop", raised_class(exit_), "")
                left, right = _operands(leaf, bound.index)
                counter = right if ctx.code(right).strip() == bound.counter else left
                step = _stepped(ctx, function, counter)
                state = _persisted(ctx, function, counter) if step is not None else None
                if state is None:
                    continue
                where = "in the same step" if ctx.enclosing_function(step) is function else (
                    f"in {ctx.enclosing_function(step).name.value}()"  # type: ignore[union-attr]
                )
                evidence = (*bound.evidence, f"{ctx.code(step).strip()} {where}; {state}")
                found.append(TurnBound(**{**bound.__dict__, "evidence": evidence, "state": state}))
        return found

    return ctx.cached(("anatomy", "stateful-turn-bounds"), compute)


def _has_turn_check(ctx: SourceContext, loop: cst.For | cst.While) -> bool:
    """The loop's test or an ``if`` of it compares turns, directly or in a def of this file the
    loop reaches."""
    tests = [loop.test] if isinstance(loop, cst.While) else []
    tests += [branch.test for branch in _own(ctx, loop, m.If())]
    for test in tests:
        if any(turn_comparison(ctx, c) for c in ctx.descendants(test, m.Comparison())):
            return True
    scopes = [target.body for target in reached_defs(ctx, loop)]
    return any(turn_comparison(ctx, c) for body in scopes for c in ctx.descendants(body, m.Comparison()))


__all__ = [
    "TurnBound",
    "TurnLoop",
    "block_exit",
    "counter_and_limit",
    "loose_turn_bounds",
    "raised_class",
    "reached_defs",
    "sibling_bound",
    "stateful_turn_bounds",
    "test_leaves",
    "turn_comparison",
    "turn_loops",
    "turn_model_call",
    "turn_pair",
]
