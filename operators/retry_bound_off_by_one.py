"""retry-bound-off-by-one: the attempt limit of a retry loop is shifted by one.

"Retry 3 times" is 3 or 4 requests depending on one ``<`` versus ``<=``, and the two readings
differ in cost, in latency and in whether the last failure reaches the user. A suite whose fake
server fails "enough" times and then succeeds passes either way; only a test that counts the
requests of a call that keeps failing (or succeeds exactly on the last allowed attempt) decides.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.dominance import decided_earlier
from mutagent.anatomy.exits import control_flow_exits
from mutagent.anatomy.retry.classification import is_status_comparison
from mutagent.anatomy.retry.loops import in_retry_path, is_retry_loop, retry_library
from mutagent.anatomy.syntax import identifiers_in, innermost_loop, loop_variables
from mutagent.anatomy.vocabulary import ATTEMPT_LIMIT_WORDS, COUNTDOWN_WORDS, is_count_name, words
from mutagent.mutation.context import SourceContext
from mutagent.mutation.operator import Example, Mutation, Operator
from mutagent.mutation.rewrite import plus_one

_SHIFTED: dict[type, type] = {
    cst.LessThan: cst.LessThanEqual,
    cst.LessThanEqual: cst.LessThan,
    cst.GreaterThan: cst.GreaterThanEqual,
    cst.GreaterThanEqual: cst.GreaterThan,
}
_SYMBOL = {cst.LessThan: "<", cst.LessThanEqual: "<=", cst.GreaterThan: ">", cst.GreaterThanEqual: ">="}
_RANGE = m.Call(func=m.Name("range"), args=[m.AtLeastN(n=1)])


def _decides(ctx: SourceContext, comparison: cst.Comparison) -> bool:
    """The comparison decides whether another attempt happens: a retry loop's ``while`` test, an
    ``if`` that raises/returns/breaks/continues, or a predicate's ``return``."""
    previous: cst.CSTNode = comparison
    for ancestor in ctx.ancestors(comparison):
        if isinstance(ancestor, cst.While) and previous is ancestor.test:
            return is_retry_loop(ctx, ancestor)
        if isinstance(ancestor, cst.If) and previous is ancestor.test:
            return (
                control_flow_exits(ctx, ancestor.body)
                or _raises_for_status(ctx, ancestor.body)
                or (ancestor.orelse is not None and control_flow_exits(ctx, ancestor.orelse))
            )
        if isinstance(ancestor, cst.Return):
            return True
        if not isinstance(ancestor, cst.BaseExpression):
            return False
        previous = ancestor
    return False


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
    return any(is_count_name(name) for name in names)


def _retry_counter_outside_loop(ctx: SourceContext, comparison: cst.Comparison) -> bool:
    """``self.retries >= self.max_retries`` decides a retry even where the retry is a recursive call."""
    return any(
        is_count_name(n) and {"retries", "retry"} & set(words(n)) for n in identifiers_in(ctx, comparison)
    )


def _shift(comparison: cst.Comparison) -> Iterator[tuple[cst.Comparison, str, int, type | None]]:
    """(mutated comparison, what changed, which target, the new ordering operator or None)."""
    for i, target in enumerate(comparison.comparisons):
        operator = target.operator
        new_type = _SHIFTED.get(type(operator))
        if new_type is not None:
            new_operator = new_type(
                whitespace_before=operator.whitespace_before, whitespace_after=operator.whitespace_after
            )
            new_target = target.with_changes(operator=new_operator)
            change = f"{_SYMBOL[type(operator)]} becomes {_SYMBOL[new_type]}"
        elif isinstance(operator, (cst.Equal, cst.NotEqual)):
            new_target = target.with_changes(comparator=plus_one(target.comparator))
            change = "compared value + 1"
        else:
            continue
        targets = list(comparison.comparisons)
        targets[i] = new_target
        yield comparison.with_changes(comparisons=targets), change, i, new_type


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


def _enabled_label(
    ctx: SourceContext, named: cst.BaseExpression, value: int, symbol: str, change: str
) -> str:
    """``max_retries > 0`` asks "are retries enabled?": shifting it flips the answer for a limit
    of exactly ``value``; say which way."""
    holds_after = symbol in (">", "<")  # strict before: the mutant now holds at equality
    enabled_when_holds = symbol in (">", ">=")
    enabled = holds_after == enabled_when_holds
    name = " ".join(ctx.code(named).split())
    state = "enabled" if enabled else "disabled"
    return f"retries-enabled check shifted by one ({change}): {name} == {value} now reads as retries {state}"


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


class RetryBoundOffByOne(Operator):
    name = "retry-bound-off-by-one"
    description = "The attempt limit of a retry loop is shifted by one."
    failure = (
        "The agent makes one attempt more (or fewer) than configured: an extra paid request against a "
        "provider that keeps failing, or a give-up one attempt too early."
    )
    hint = (
        "Make every attempt fail and assert the exact number of requests the fake server received; "
        "also let a call succeed exactly on the last allowed attempt."
    )
    examples = (
        Example(
            before=(
                "import time\n\n"
                "def post(client, body):\n"
                "    tries = 0\n"
                "    while True:\n"
                "        tries += 1\n"
                "        resp = client.post('/v1/chat/completions', json=body)\n"
                "        if resp.status_code == 429 or resp.status_code >= 500:\n"
                "            if tries >= MAX_TRIES:\n"
                "                resp.raise_for_status()\n"
                "            time.sleep(2 ** tries)\n"
                "            continue\n"
                "        return resp.json()\n"
            ),
            after=(
                "import time\n\n"
                "def post(client, body):\n"
                "    tries = 0\n"
                "    while True:\n"
                "        tries += 1\n"
                "        resp = client.post('/v1/chat/completions', json=body)\n"
                "        if resp.status_code == 429 or resp.status_code >= 500:\n"
                "            if tries > MAX_TRIES:\n"
                "                resp.raise_for_status()\n"
                "            time.sleep(2 ** tries)\n"
                "            continue\n"
                "        return resp.json()\n"
            ),
            note="httpx/requests style: the give-up is raise_for_status() on the last failed response",
        ),
        Example(
            before=(
                "import anthropic\n\n"
                "def create(client, policy, **kw):\n"
                "    attempt = 0\n"
                "    while True:\n"
                "        attempt += 1\n"
                "        try:\n"
                "            return client.messages.create(**kw)\n"
                "        except anthropic.APIConnectionError:\n"
                "            if attempt >= policy.max_attempts:\n"
                "                raise\n"
            ),
            after=(
                "import anthropic\n\n"
                "def create(client, policy, **kw):\n"
                "    attempt = 0\n"
                "    while True:\n"
                "        attempt += 1\n"
                "        try:\n"
                "            return client.messages.create(**kw)\n"
                "        except anthropic.APIConnectionError:\n"
                "            if attempt > policy.max_attempts:\n"
                "                raise\n"
            ),
            note="sync anthropic loop with a give-up check",
        ),
        Example(
            before=(
                "import asyncio\n"
                "import httpx\n\n"
                "async def fetch(client, url, tries=3):\n"
                "    for i in range(tries):\n"
                "        r = await client.get(url)\n"
                "        if r.status_code == 503:\n"
                "            await asyncio.sleep(1)\n"
                "            continue\n"
                "        return r\n"
                "    raise RuntimeError('gave up')\n"
            ),
            after=(
                "import asyncio\n"
                "import httpx\n\n"
                "async def fetch(client, url, tries=3):\n"
                "    for i in range(tries + 1):\n"
                "        r = await client.get(url)\n"
                "        if r.status_code == 503:\n"
                "            await asyncio.sleep(1)\n"
                "            continue\n"
                "        return r\n"
                "    raise RuntimeError('gave up')\n"
            ),
            note="async raw httpx loop bounded by range",
        ),
        Example(
            before=(
                "from dataclasses import dataclass\n\n"
                "@dataclass\n"
                "class RetryPolicy:\n"
                "    max_retries: int = 2\n\n"
                "    def should_retry(self, retries_taken: int) -> bool:\n"
                "        return retries_taken < self.max_retries\n"
            ),
            after=(
                "from dataclasses import dataclass\n\n"
                "@dataclass\n"
                "class RetryPolicy:\n"
                "    max_retries: int = 2\n\n"
                "    def should_retry(self, retries_taken: int) -> bool:\n"
                "        return retries_taken <= self.max_retries\n"
            ),
            note="policy dataclass predicate",
        ),
        Example(
            before=(
                "import openai\n"
                "from tenacity import retry, retry_if_exception_type, stop_after_attempt\n\n"
                "@retry(stop=stop_after_attempt(5), retry=retry_if_exception_type(openai.RateLimitError))\n"
                "def chat(client, messages):\n"
                "    return client.chat.completions.create(model='m', messages=messages)\n"
            ),
            after=(
                "import openai\n"
                "from tenacity import retry, retry_if_exception_type, stop_after_attempt\n\n"
                "@retry(stop=stop_after_attempt(6), retry=retry_if_exception_type(openai.RateLimitError))\n"
                "def chat(client, messages):\n"
                "    return client.chat.completions.create(model='m', messages=messages)\n"
            ),
            note="tenacity stop condition",
        ),
        Example(
            before=(
                "def should_replay_locked(retry_settings):\n"
                "    if retry_settings is None:\n"
                "        return True\n"
                "    max_retries = retry_settings.max_retries\n"
                "    return max_retries is None or max_retries > 0\n"
            ),
            note='an "are retries enabled?" predicate: it bounds no attempt',
        ),
        Example(
            before=(
                "def disable_sdk_retries(retry_settings, attempt):\n"
                "    if retry_settings.max_retries is not None and retry_settings.max_retries <= 0:\n"
                "        return True\n"
                "    max_retries = retry_settings.max_retries\n"
                "    return max_retries is not None and max_retries > 0\n"
            ),
            after=(
                "def disable_sdk_retries(retry_settings, attempt):\n"
                "    if retry_settings.max_retries is not None and retry_settings.max_retries <= 0:\n"
                "        return True\n"
                "    max_retries = retry_settings.max_retries\n"
                "    return max_retries is not None and max_retries >= 0\n"
            ),
            note="equivalent: the earlier check already returned when max_retries == 0, so this mutant is "
            "listed as Ignored with that reason and never run",
        ),
        Example(
            before=(
                "def apply_retry_attempt_usage(usage, failed_attempts):\n"
                "    if failed_attempts <= 0:\n"
                "        return usage\n"
                "    usage.requests += failed_attempts\n"
                "    return usage\n"
            ),
            note='usage accounting of failed attempts ("did any attempt fail?"), not an attempt limit',
        ),
        Example(
            before=(
                "def disable_provider_retries(attempt, stateful):\n"
                "    if attempt > 1:\n"
                "        return stateful\n"
                "    return False\n"
            ),
            note='"is this a retry?" (attempt > 1) asks about the first attempt, it bounds nothing',
        ),
        Example(
            before=(
                "def run_tools(calls, max_calls):\n"
                "    results = []\n"
                "    for i in range(max_calls):\n"
                "        try:\n"
                "            results.append(calls[i]())\n"
                "        except IndexError:\n"
                "            break\n"
                "        if len(results) >= 10:\n"
                "            break\n"
                "    return results\n"
            ),
            note="a range loop that handles an error but is no retry loop",
        ),
        Example(
            before=(
                "import time\n\n"
                "def send(request, attempt, max_attempts, deadline):\n"
                "    if attempt > 1:\n"
                "        print(f'attempt {attempt} of {max_attempts}')\n"
                "    while True:\n"
                "        try:\n"
                "            return request()\n"
                "        except TimeoutError:\n"
                "            if time.monotonic() > deadline:\n"
                "                raise\n"
                "            time.sleep(1)\n"
            ),
            note="a count compared only to log, and a deadline check: neither bounds attempts",
        ),
    )

    def find(self, ctx: SourceContext) -> Iterator[Mutation]:
        checked_loops = set()
        for comparison in ctx.findall(m.Comparison()):
            if not _counts_attempts(ctx, comparison) or not _decides(ctx, comparison):
                continue
            if in_retry_path(ctx, comparison) or _retry_counter_outside_loop(ctx, comparison):
                checked_loops.add(id(innermost_loop(ctx, comparison)))
                for replacement, change, index, new_type in _shift(comparison):
                    against = _against_zero_or_one(ctx, comparison, index)
                    if against is not None and against[0] == "counter":
                        # ``failed_attempts <= 0``, ``attempt > 1``: "did anything fail?", "is this
                        # a retry?" -- accounting and first-attempt tests, not an attempt limit.
                        continue
                    equivalent = decided_earlier(ctx, comparison, index) if new_type is not None else None
                    if against is not None:
                        # ``max_retries > 0`` asks "are retries enabled?", it bounds no attempt:
                        # no live mutant. Listed only where the shift is provably equivalent, so
                        # the report says why that predicate has no mutant to kill.
                        if equivalent is None:
                            continue
                        description = _enabled_label(ctx, against[1], against[2], against[3], change)
                    else:
                        description = f"attempt limit shifted by one ({change})"
                    yield Mutation(comparison, replacement, description, equivalent=equivalent)
        for loop in ctx.findall(m.For(iter=_RANGE)):
            # A give-up check inside the loop is the real bound; shifting the range as well would
            # only add a mutant no test can kill.
            if is_retry_loop(ctx, loop) and id(loop) not in checked_loops:
                bound = loop.iter.args[min(1, len(loop.iter.args) - 1)].value
                yield Mutation(bound, plus_one(bound), "retry loop runs one attempt more")
        for call in ctx.findall(m.Call()):
            for bound, what in _library_bound(ctx, call):
                yield Mutation(bound, plus_one(bound), f"{what} allows one attempt more")
