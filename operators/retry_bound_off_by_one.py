"""retry-bound-off-by-one: the attempt limit of a retry loop is shifted by one.

"Retry 3 times" is 3 or 4 requests depending on one ``<`` versus ``<=``, and the two readings
differ in cost, in latency and in whether the last failure reaches the user. A suite whose fake
server fails "enough" times and then succeeds passes either way; only a test that counts the
requests of a call that keeps failing (or succeeds exactly on the last allowed attempt) decides.

The limits are the anatomy's retry-bound role (:mod:`mutagent.anatomy.retry.bound`: limit checks,
the ``range(...)`` of a retry loop without one, tenacity's ``stop_after_attempt(n)`` and backoff's
``max_tries=n``); this module shifts each by one and says what that does.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from mutagent.anatomy.dominance import decided_earlier
from mutagent.anatomy.retry.bound import OFF_BY_ONE_KINDS, RETRY_BOUND, Reading, RetryBound
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


def _one_growth_early(ctx: SourceContext, comparison: cst.Comparison, reading: Reading) -> Mutation:
    """``retry_delay > RETRY_TIMEOUT`` -> ``retry_delay * 2 > RETRY_TIMEOUT``: the give-up reads
    the delay the next failure would wait, so it fires one attempt early."""
    operand = reading.named
    if not isinstance(operand, (cst.Name, cst.Attribute, cst.Subscript, cst.Call)):
        operand = operand.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    factor = cst.parse_expression(reading.growth)
    grown = cst.BinaryOperation(left=operand, operator=cst.Multiply(), right=factor)
    if comparison.left is reading.named:
        replacement = comparison.with_changes(left=grown)
    else:
        targets = [
            t.with_changes(comparator=grown) if t.comparator is reading.named else t
            for t in comparison.comparisons
        ]
        replacement = comparison.with_changes(comparisons=targets)
    delay = " ".join(ctx.code(reading.named).split())
    description = (
        f"give-up on the growing delay {delay} shifted by one attempt "
        f"({delay} * {reading.growth} compared): one retry fewer"
    )
    return Mutation(comparison, replacement, description)


def _limit_check(ctx: SourceContext, comparison: cst.Comparison, bound: RetryBound) -> Iterator[Mutation]:
    for replacement, change, index, new_type in _shift(comparison):
        reading = bound.readings[index]
        if reading.kind == "first-attempt":
            # ``failed_attempts <= 0``, ``attempt > 1``: "did anything fail?", "is this a retry?" --
            # accounting and first-attempt tests, not an attempt limit.
            continue
        if reading.kind == "delay-limit":
            # The delay doubles each failure: ``<`` versus ``<=`` almost never changes the attempt
            # count; one attempt fewer is the give-up reading the delay one growth step ahead.
            yield _one_growth_early(ctx, comparison, reading)
            continue
        equivalent = decided_earlier(ctx, comparison, index) if new_type is not None else None
        if reading.kind == "enabled-check":
            # ``max_retries > 0`` asks "are retries enabled?", it bounds no attempt: no live mutant.
            # Listed only where the shift is provably equivalent, so the report says why that
            # predicate has no mutant to kill.
            if equivalent is None:
                continue
            description = _enabled_label(ctx, reading.named, reading.value, reading.symbol, change)
        else:
            description = f"attempt limit shifted by one ({change})"
        yield Mutation(comparison, replacement, description, equivalent=equivalent)


class RetryBoundOffByOne(Operator):
    name = "retry-bound-off-by-one"
    roles = ("retry-bound",)
    role_kinds = OFF_BY_ONE_KINDS
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
                "            time.sleep(retry_delay)\n"
            ),
            after=(
                "import time\n\n"
                "def send(client, messages):\n"
                "    retry_delay = 0.125\n"
                "    while True:\n"
                "        try:\n"
                "            return client.chat.completions.create(messages=messages)\n"
                "        except ConnectionError:\n"
                "            should_retry = True\n"
                "            retry_delay *= 2\n"
                "            if retry_delay * 2 > 60:\n"
                "                should_retry = False\n"
                "            if not should_retry:\n"
                "                return None\n"
                "            time.sleep(retry_delay)\n"
            ),
            note="a give-up on a doubling delay moves by one doubling, not by <= versus <",
        ),
        Example(
            before=(
                "import time\n\n"
                "def send(client, messages, log):\n"
                "    delay = 0.5\n"
                "    while True:\n"
                "        try:\n"
                "            return client.chat.completions.create(messages=messages)\n"
                "        except ConnectionError:\n"
                "            delay *= 2\n"
                "            if delay > 30:\n"
                "                delay = 30\n"
                "            log(delay)\n"
                "            time.sleep(delay)\n"
            ),
            note="a doubling delay that is only capped bounds no attempt",
        ),
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
        for site in RETRY_BOUND.sites(ctx):
            bound = site.detail
            if site.kind == "limit-check":
                yield from _limit_check(ctx, site.node, bound)
            elif site.kind == "attempt-range":
                yield Mutation(site.node, plus_one(site.node), "retry loop runs one attempt more")
            elif site.kind == "library-limit":
                yield Mutation(site.node, plus_one(site.node), f"{bound.what} allows one attempt more")
