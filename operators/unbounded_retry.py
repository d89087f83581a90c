"""unbounded-retry: a retry loop never gives up.

An agent whose provider is down for good (a revoked key answered as 500, a stream that always
breaks at the same event) should fail the task after a bounded number of attempts and say why.
Without the give-up it retries forever: the run hangs, costs pile up and nothing is reported. The
mutant keeps the attempt counter from advancing, so every limit check built on it stays false.

What gives up is the anatomy's retry-bound role (:mod:`mutagent.anatomy.retry.bound`: counting
loops, counter steps, while tests, give-up checks, library stop conditions); this module makes
each one never end the retrying and says how.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from mutagent.anatomy.retry.bound import RETRY_BOUND, UNBOUNDED_KINDS
from mutagent.mutation.context import SourceContext
from mutagent.mutation.operator import Example, Mutation, Operator


def _endless(ctx: SourceContext, iterable: cst.Call) -> cst.BaseExpression:
    """An endless iterator stuck at the first value ``range(...)``/``count(...)`` would produce,
    written with builtins only (``iter(callable, sentinel)`` never meets a ``None`` sentinel)."""
    first: cst.BaseExpression = cst.Integer("0")
    is_range = "builtins.range" in ctx.qualified_names(iterable)
    if iterable.args and (not is_range or len(iterable.args) > 1):
        first = iterable.args[0].value
    return cst.parse_expression(f"iter(lambda: {cst.Module([]).code_for_node(first)}, None)")


def _library_stop(node: cst.CSTNode, what: str) -> Mutation:
    """tenacity's ``stop=`` (or a stop strategy) becomes a condition that never holds; a backoff
    decorator loses ``max_tries``/``max_time``."""
    if what == "backoff-limits":
        call: cst.Call = node  # type: ignore[assignment]
        args = [a for a in call.args if not (a.keyword and a.keyword.value in ("max_tries", "max_time"))]
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return Mutation(call, call.with_changes(args=args), "backoff decorator loses max_tries/max_time")
    return Mutation(node, cst.parse_expression("lambda _: False"), "tenacity stop condition never holds")


class UnboundedRetry(Operator):
    name = "unbounded-retry"
    roles = ("retry-bound",)
    role_kinds = UNBOUNDED_KINDS
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
                "            retry_delay *= 1\n"
                "            if retry_delay > 60:\n"
                "                should_retry = False\n"
                "            if not should_retry:\n"
                "                return None\n"
                "            time.sleep(retry_delay)\n"
            ),
            note="a retry bounded by its doubling delay: frozen, the delay never reaches the give-up",
        ),
        Example(
            before=(
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
                "            time.sleep(2 ** attempt)\n"
            ),
            after=(
                "import time\n\n"
                "def retryable(exc, attempt, retries):\n"
                "    return True and isinstance(exc, TimeoutError)\n\n"
                "def call(client, retries=3):\n"
                "    for attempt in range(retries + 1):\n"
                "        try:\n"
                "            return client.complete()\n"
                "        except Exception as exc:\n"
                "            if not retryable(exc, attempt, retries):\n"
                "                raise\n"
                "            time.sleep(2 ** attempt)\n"
            ),
            note="the attempt bound a retry predicate returns, its counter fed by the retry loop",
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
            note="a doubling delay that is only capped: no give-up is built on it",
        ),
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
        for site in RETRY_BOUND.sites(ctx):
            node = site.node
            if site.kind == "counting-loop":
                yield Mutation(node, _endless(ctx, node), "retry loop never runs out of attempts")
            elif site.kind == "counter-step" and site.detail.what == "growing-delay":
                # The delay counts the attempts in doublings: frozen, it never reaches the give-up.
                one = node.with_changes(value=cst.Integer("1"))
                what = f"growing delay {ctx.code(node.target)}, which the give-up compares, never grows"
                yield Mutation(node, one, what)
            elif site.kind == "counter-step" and site.detail.what == "failure-count":
                zero = node.with_changes(value=cst.Integer("0"))
                counter = ctx.code(node.target)
                what = f"failure counter {counter} never advances: the failure limit is never reached"
                yield Mutation(node, zero, what)
            elif site.kind == "counter-step":
                zero = node.with_changes(value=cst.Integer("0"))
                yield Mutation(node, zero, f"attempt counter {ctx.code(node.target)} never advances")
            elif site.kind == "loop-test":
                yield Mutation(node, cst.Name("True"), "retry loop condition always holds")
            elif site.kind == "give-up" and site.detail.what == "keeps-going":
                what = "retry predicate's attempt bound always allows another attempt"
                yield Mutation(node, cst.Name("True"), what)
            elif site.kind == "give-up":
                yield Mutation(node, cst.Name("False"), "give-up check never fires")
            elif site.kind == "library-stop":
                yield _library_stop(node, site.detail.what)
