"""unbounded-retry: a retry loop never gives up.

An agent whose provider is down for good (a revoked key answered as 500, a stream that always
breaks at the same event) should fail the task after a bounded number of attempts and say why.
Without the give-up it retries forever: the run hangs, costs pile up and nothing is reported. The
mutant keeps the attempt counter from advancing, so every limit check built on it stays false.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.exits import control_flow_exits
from mutagent.anatomy.retry.classification import is_status_comparison
from mutagent.anatomy.retry.loops import in_retry_path, retry_library, retry_loops
from mutagent.anatomy.syntax import (
    enclosing_scope,
    identifiers_in,
    innermost_loop,
    loop_variables,
    own,
    parameters,
)
from mutagent.anatomy.vocabulary import TENACITY_STOPS, TIME_BUDGET_WORDS, identifier, is_count_name, words
from mutagent.mutation.context import SourceContext
from mutagent.mutation.operator import Example, Mutation, Operator

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


def _endless(ctx: SourceContext, iterable: cst.Call) -> cst.BaseExpression:
    """An endless iterator stuck at the first value ``range(...)``/``count(...)`` would produce,
    written with builtins only (``iter(callable, sentinel)`` never meets a ``None`` sentinel)."""
    first: cst.BaseExpression = cst.Integer("0")
    is_range = "builtins.range" in ctx.qualified_names(iterable)
    if iterable.args and (not is_range or len(iterable.args) > 1):
        first = iterable.args[0].value
    return cst.parse_expression(f"iter(lambda: {cst.Module([]).code_for_node(first)}, None)")


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
    return [step for step in own(ctx, loop, _STEP) if identifier(step.target) in inputs]


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


def _library_stop(ctx: SourceContext, call: cst.Call) -> tuple[cst.CSTNode, cst.CSTNode, str] | None:
    """tenacity's ``stop=`` becomes a condition that never holds; backoff loses ``max_tries``/``max_time``."""
    library = retry_library(ctx, call)
    if library == "tenacity":
        stop = next((a for a in call.args if a.keyword and a.keyword.value == "stop"), None)
        if stop is not None:
            return stop.value, cst.parse_expression("lambda _: False"), "tenacity stop condition never holds"
    if library == "backoff":
        limits = [a for a in call.args if a.keyword and a.keyword.value in ("max_tries", "max_time")]
        if limits:
            args = [a for a in call.args if a not in limits]
            args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            return call, call.with_changes(args=args), "backoff decorator loses max_tries/max_time"
    return None


def _stop_strategy(ctx: SourceContext, call: cst.Call) -> tuple[cst.CSTNode, cst.CSTNode, str] | None:
    """A tenacity stop strategy built apart from the decorator (``kwargs["stop"] =
    stop_after_attempt(n)``, handed to ``Retrying(**kwargs)`` later) never holds."""
    if retry_library(ctx, call) != "tenacity":
        return None
    if not {q.rsplit(".", 1)[-1] for q in ctx.qualified_names(call)} & TENACITY_STOPS:
        return None
    return call, cst.parse_expression("lambda _: False"), "tenacity stop condition never holds"


class UnboundedRetry(Operator):
    name = "unbounded-retry"
    description = "A retry loop never gives up: its attempt counter no longer advances."
    failure = (
        "The agent retries a call that will never succeed forever instead of failing after a bounded "
        "number of attempts: the run hangs and keeps paying for requests."
    )
    hint = (
        "Script the fake server to fail every attempt and assert the agent gives up with an error after "
        "the configured number of requests (a hang is reported as Timeout, which counts as detected)."
    )
    examples = (
        Example(
            before=(
                "import time\n"
                "import anthropic\n\n"
                "def create(client, max_attempts, **kw):\n"
                "    for attempt in range(1, max_attempts + 1):\n"
                "        try:\n"
                "            return client.messages.create(**kw)\n"
                "        except anthropic.APIStatusError:\n"
                "            if attempt == max_attempts:\n"
                "                raise\n"
                "            time.sleep(attempt)\n"
            ),
            after=(
                "import time\n"
                "import anthropic\n\n"
                "def create(client, max_attempts, **kw):\n"
                "    for attempt in iter(lambda: 1, None):\n"
                "        try:\n"
                "            return client.messages.create(**kw)\n"
                "        except anthropic.APIStatusError:\n"
                "            if attempt == max_attempts:\n"
                "                raise\n"
                "            time.sleep(attempt)\n"
            ),
            note="sync anthropic for-range loop with an in-loop give-up",
        ),
        Example(
            before=(
                "import asyncio\n"
                "import httpx\n\n"
                "async def stream(client, body, retries_left=3):\n"
                "    while retries_left > 0:\n"
                "        try:\n"
                "            async with client.stream('POST', '/v1/messages', json=body) as resp:\n"
                "                return [line async for line in resp.aiter_lines()]\n"
                "        except httpx.RemoteProtocolError:\n"
                "            retries_left -= 1\n"
                "            await asyncio.sleep(0.2)\n"
                "    raise RuntimeError('stream kept breaking')\n"
            ),
            after=(
                "import asyncio\n"
                "import httpx\n\n"
                "async def stream(client, body, retries_left=3):\n"
                "    while retries_left > 0:\n"
                "        try:\n"
                "            async with client.stream('POST', '/v1/messages', json=body) as resp:\n"
                "                return [line async for line in resp.aiter_lines()]\n"
                "        except httpx.RemoteProtocolError:\n"
                "            retries_left -= 0\n"
                "            await asyncio.sleep(0.2)\n"
                "    raise RuntimeError('stream kept breaking')\n"
            ),
            note="async raw httpx SSE reconnect loop with a countdown",
        ),
        Example(
            before=(
                "import time\n\n"
                "def poll_completion(client, deadline, **kw):\n"
                "    while time.monotonic() < deadline:\n"
                "        try:\n"
                "            return client.chat.completions.create(**kw)\n"
                "        except TimeoutError:\n"
                "            time.sleep(1)\n"
                "    raise TimeoutError('no answer before the deadline')\n"
            ),
            after=(
                "import time\n\n"
                "def poll_completion(client, deadline, **kw):\n"
                "    while True:\n"
                "        try:\n"
                "            return client.chat.completions.create(**kw)\n"
                "        except TimeoutError:\n"
                "            time.sleep(1)\n"
                "    raise TimeoutError('no answer before the deadline')\n"
            ),
            note="openai call retried until a deadline",
        ),
        Example(
            before=(
                "import backoff\n"
                "import openai\n\n"
                "@backoff.on_exception(backoff.expo, openai.APIConnectionError, max_tries=4)\n"
                "def complete(client, **kw):\n"
                "    return client.chat.completions.create(**kw)\n"
            ),
            after=(
                "import backoff\n"
                "import openai\n\n"
                "@backoff.on_exception(backoff.expo, openai.APIConnectionError)\n"
                "def complete(client, **kw):\n"
                "    return client.chat.completions.create(**kw)\n"
            ),
            note="backoff decorator helper",
        ),
        Example(
            before=(
                "def agent_loop(client, messages, max_turns=10):\n"
                "    for turn in range(max_turns):\n"
                "        reply = client.messages.create(messages=messages)\n"
                "        if reply.stop_reason != 'tool_use':\n"
                "            return reply\n"
                "        messages.append(run_tools(reply))\n"
                "    raise RuntimeError('too many turns')\n"
            ),
            note="an agent's turn loop is bounded too, but it is no retry loop",
        ),
        Example(
            before=(
                "def drain(queue):\n"
                "    done = 0\n"
                "    while queue:\n"
                "        try:\n"
                "            queue.pop()()\n"
                "        except KeyError:\n"
                "            continue\n"
                "        done += 1\n"
                "    return done\n"
            ),
            note="a work-queue loop that catches errors and counts",
        ),
        Example(
            before=(
                "from tenacity import Retrying, stop_after_attempt\n\n"
                "class RunnableRetry:\n"
                "    def _kwargs_retrying(self):\n"
                "        kwargs = {}\n"
                "        if self.max_attempt_number:\n"
                "            kwargs['stop'] = stop_after_attempt(self.max_attempt_number)\n"
                "        return kwargs\n\n"
                "    def _sync_retrying(self):\n"
                "        return Retrying(**self._kwargs_retrying())\n"
            ),
            after=(
                "from tenacity import Retrying, stop_after_attempt\n\n"
                "class RunnableRetry:\n"
                "    def _kwargs_retrying(self):\n"
                "        kwargs = {}\n"
                "        if self.max_attempt_number:\n"
                "            kwargs['stop'] = lambda _: False\n"
                "        return kwargs\n\n"
                "    def _sync_retrying(self):\n"
                "        return Retrying(**self._kwargs_retrying())\n"
            ),
            note="a tenacity stop strategy built into keyword arguments for Retrying(**kwargs)",
        ),
        Example(
            before=(
                "def stop_after_attempt(n):\n"
                "    return lambda state: state.attempt_number >= n\n\n"
                "POLICY = {'stop': stop_after_attempt(3)}\n"
            ),
            note="a function of this file that happens to share tenacity's name",
        ),
        Example(
            before=(
                "import asyncio\n\n"
                "class BackoffRetryPolicy:\n"
                "    def __init__(self, limit=4):\n"
                "        self.limit = limit\n"
                "        self.attempts = 0\n\n"
                "    async def on_model_error(self, event):\n"
                "        if not isinstance(event.error, TimeoutError):\n"
                "            return\n"
                "        self.attempts += 1\n"
                "        if self.attempts >= self.limit:\n"
                "            return\n"
                "        await asyncio.sleep(0.5)\n"
                "        event.retry = True\n"
            ),
            after=(
                "import asyncio\n\n"
                "class BackoffRetryPolicy:\n"
                "    def __init__(self, limit=4):\n"
                "        self.limit = limit\n"
                "        self.attempts = 0\n\n"
                "    async def on_model_error(self, event):\n"
                "        if not isinstance(event.error, TimeoutError):\n"
                "            return\n"
                "        self.attempts += 0\n"
                "        if self.attempts >= self.limit:\n"
                "            return\n"
                "        await asyncio.sleep(0.5)\n"
                "        event.retry = True\n"
            ),
            note="a retry strategy hook that keeps its count between calls (the loop is the caller's)",
        ),
        Example(
            before=(
                "import time\n\n"
                "class RetryBudget:\n"
                "    def check(self, error):\n"
                "        if time.monotonic() > self.deadline:\n"
                "            raise error\n"
                "        time.sleep(self.pause)\n"
            ),
            after=(
                "import time\n\n"
                "class RetryBudget:\n"
                "    def check(self, error):\n"
                "        if False:\n"
                "            raise error\n"
                "        time.sleep(self.pause)\n"
            ),
            note="a retry class's deadline check, with no counter to stop",
        ),
        Example(
            before=(
                "class RetryPolicy:\n"
                "    def delay(self):\n"
                "        wait = self.base * 2**self.attempts\n"
                "        if wait > self.max_delay:\n"
                "            wait = self.max_delay\n"
                "        return wait\n\n"
                "    def should_retry(self):\n"
                "        if self.attempts >= self.max_attempts:\n"
                "            return False\n"
                "        return True\n"
            ),
            note="a retry class's cap on the delay, and a predicate answering False: neither gives up itself",
        ),
        Example(
            before=(
                "class Paginator:\n"
                "    def advance(self):\n"
                "        self.pages += 1\n"
                "        if self.pages >= self.max_pages:\n"
                "            return\n"
                "        self.fetch()\n"
            ),
            note="a page counter with a limit, in a class that retries nothing",
        ),
        Example(
            before=(
                "import time\n\n"
                "class Agent:\n"
                "    def _back_off(self, attempt, error):\n"
                "        if attempt >= self.max_attempts:\n"
                "            raise RuntimeError(f'gave up after {attempt} attempts') from error\n"
                "        time.sleep(2 ** attempt)\n"
            ),
            note="a retry helper given the count by its caller: the caller's loop is where it advances",
        ),
        Example(
            before=(
                "class RetryNotice:\n"
                "    def on_error(self, error):\n"
                "        if self.attempts > 1:\n"
                "            return\n"
                "        self.log.warning('the model call failed, retrying')\n"
            ),
            note="'is this a retry at all?' asked in a retry helper is no give-up",
        ),
    )

    def find(self, ctx: SourceContext) -> Iterator[Mutation]:
        for loop in retry_loops(ctx):
            if isinstance(loop, cst.For):
                if _counting_bound(ctx, loop):
                    yield Mutation(
                        loop.iter, _endless(ctx, loop.iter), "retry loop never runs out of attempts"
                    )
                continue
            steps = _counters(ctx, loop)
            for step in steps:
                zero = step.with_changes(value=cst.Integer("0"))
                yield Mutation(step, zero, f"attempt counter {ctx.code(step.target)} never advances")
            if not steps and _bounds_attempts(ctx, loop.test):
                yield Mutation(loop.test, cst.Name("True"), "retry loop condition always holds")
            elif not steps:
                for test in _give_ups(ctx, loop):
                    yield Mutation(test, cst.Name("False"), "give-up check never fires")
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
                    zero = step.with_changes(value=cst.Integer("0"))
                    yield Mutation(step, zero, f"attempt counter {ctx.code(step.target)} never advances")
            if not steps:
                yield Mutation(branch.test, cst.Name("False"), "give-up check never fires")
        for call in ctx.findall(m.Call()):
            found = _library_stop(ctx, call) or _stop_strategy(ctx, call)
            if found:
                yield Mutation(*found)
