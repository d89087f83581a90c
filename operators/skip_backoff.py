"""skip-backoff: the wait before a retry becomes zero.

An agent that retries at once hammers a provider that just said it is overloaded or rate
limited, burns its retry budget in milliseconds and turns a brief outage into a failed task.
Tests that only check "the retry happened" pass anyway; only a test that asserts the planned
delay (a fake sleep's argument, the gap between two requests at the fake server) notices.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.retry.backoff import waits_after_failure
from mutagent.anatomy.retry.loops import retry_library
from mutagent.anatomy.retry.waits import is_injected_wait, is_sleep_call
from mutagent.anatomy.vocabulary import DELAY_KEYWORDS
from mutagent.mutation.context import SourceContext
from mutagent.mutation.operator import Example, Mutation, Operator

# tenacity calls ``wait(retry_state)``; backoff calls ``wait_gen(**kwargs)`` and ``send``s into
# the generator: a generator expression of zeros accepts both ``send(None)`` and ``send(exc)``.
_NO_WAIT = {
    "tenacity": cst.parse_expression("lambda _: 0"),
    "backoff": cst.parse_expression("lambda **_: (0 for _ in iter(int, 1))"),
}


def _delay_argument(call: cst.Call) -> cst.Arg | None:
    """The argument that says how long to sleep: the first positional one, or a delay keyword."""
    for arg in call.args:
        if arg.keyword is None and arg.star == "":
            return arg
        if arg.keyword is not None and arg.keyword.value in DELAY_KEYWORDS:
            return arg
    return None


def _library_wait(ctx: SourceContext, call: cst.Call) -> cst.Arg | None:
    """tenacity's ``wait=`` strategy, or backoff's wait generator (first argument or ``wait_gen=``)."""
    library = retry_library(ctx, call)
    if library == "tenacity":
        return next((a for a in call.args if a.keyword and a.keyword.value == "wait"), None)
    if library == "backoff" and any(
        q.split(".")[-1] in ("on_exception", "on_predicate") for q in ctx.qualified_names(call)
    ):
        return next(
            (a for a in call.args if (a.keyword and a.keyword.value == "wait_gen") or a.keyword is None), None
        )
    return None


def _wait_strategy(ctx: SourceContext, call: cst.Call) -> bool:
    """A tenacity wait strategy built apart from the decorator (``kwargs["wait"] =
    wait_exponential_jitter(...)``); one passed as ``wait=`` to ``retry(...)`` is that call's."""
    if retry_library(ctx, call) != "tenacity":
        return False
    names = {q.rsplit(".", 1)[-1] for q in ctx.qualified_names(call)}
    if not any(name.startswith("wait_") and name != "wait_none" for name in names):
        return False
    arg = ctx.parent(call)
    owner = ctx.parent(arg) if isinstance(arg, cst.Arg) else None
    return not (isinstance(owner, cst.Call) and _library_wait(ctx, owner) is arg)


class SkipBackoff(Operator):
    name = "skip-backoff"
    description = "The wait before a retry becomes zero."
    failure = (
        "The agent retries a failed model call immediately instead of backing off, so an overloaded or "
        "rate-limited provider is hit again at once and the retry budget is spent in milliseconds."
    )
    hint = (
        "Assert the delay between the failed request and its retry: the argument your fake sleep "
        "received, or the gap between the two requests the fake server recorded."
    )
    examples = (
        Example(
            before=(
                "import asyncio\n"
                "import aiohttp\n\n"
                "async def post(session, url, body):\n"
                "    try:\n"
                "        response = await session.request('POST', url, json=body)\n"
                "    except aiohttp.ClientOSError:\n"
                "        await asyncio.sleep(2)\n"
                "        response = await session.request('POST', url, json=body)\n"
                "    return response\n"
            ),
            after=(
                "import asyncio\n"
                "import aiohttp\n\n"
                "async def post(session, url, body):\n"
                "    try:\n"
                "        response = await session.request('POST', url, json=body)\n"
                "    except aiohttp.ClientOSError:\n"
                "        await asyncio.sleep(0)\n"
                "        response = await session.request('POST', url, json=body)\n"
                "    return response\n"
            ),
            note="a one-shot retry without a loop: the handler waits, then issues the failed request again",
        ),
        Example(
            before=(
                "import asyncio\n"
                "import aiohttp\n\n"
                "async def post(session, fallback, url, body):\n"
                "    try:\n"
                "        response = await session.request('POST', url, json=body)\n"
                "    except aiohttp.ClientOSError:\n"
                "        await asyncio.sleep(2)\n"
                "        response = await fallback.request('POST', url, json=body)\n"
                "    return response\n"
            ),
            note="the handler waits, then asks another client: a fallback, not a second attempt",
        ),
        Example(
            before=(
                "import time\n\n"
                "def call(client, max_attempts=3):\n"
                "    for attempt in range(max_attempts):\n"
                "        try:\n"
                "            return client.messages.create(model='m', messages=[])\n"
                "        except Exception:\n"
                "            time.sleep(2 ** attempt)\n"
            ),
            after=(
                "import time\n\n"
                "def call(client, max_attempts=3):\n"
                "    for attempt in range(max_attempts):\n"
                "        try:\n"
                "            return client.messages.create(model='m', messages=[])\n"
                "        except Exception:\n"
                "            time.sleep(0)\n"
            ),
            note="sync hand-written loop, exponential backoff",
        ),
        Example(
            before=(
                "import asyncio as aio\n"
                "import httpx\n\n"
                "async def post(client: httpx.AsyncClient, body, retries=4):\n"
                "    delay = 0.5\n"
                "    while True:\n"
                "        resp = await client.post('/v1/chat/completions', json=body)\n"
                "        if resp.status_code != 429 or retries == 0:\n"
                "            return resp\n"
                "        retries -= 1\n"
                "        await aio.sleep(delay)\n"
                "        delay *= 2\n"
            ),
            after=(
                "import asyncio as aio\n"
                "import httpx\n\n"
                "async def post(client: httpx.AsyncClient, body, retries=4):\n"
                "    delay = 0.5\n"
                "    while True:\n"
                "        resp = await client.post('/v1/chat/completions', json=body)\n"
                "        if resp.status_code != 429 or retries == 0:\n"
                "            return resp\n"
                "        retries -= 1\n"
                "        await aio.sleep(0)\n"
                "        delay *= 2\n"
            ),
            note="async raw httpx loop on a status check, aliased asyncio",
        ),
        Example(
            before=(
                "class Agent:\n"
                "    def _sleep_for_retry(self, failure, attempt):\n"
                "        self.journal.append({'event': 'retry', 'attempt': attempt})\n"
                "        self.sleep(self.policy.delay(failure, attempt))\n"
            ),
            after=(
                "class Agent:\n"
                "    def _sleep_for_retry(self, failure, attempt):\n"
                "        self.journal.append({'event': 'retry', 'attempt': attempt})\n"
                "        self.sleep(0)\n"
            ),
            note="helper function with an injected sleeper",
        ),
        Example(
            before=(
                "from tenacity import retry, stop_after_attempt, wait_random_exponential\n"
                "import openai\n\n"
                "@retry(wait=wait_random_exponential(min=1, max=60), stop=stop_after_attempt(6))\n"
                "def complete(client, **kwargs):\n"
                "    return client.chat.completions.create(**kwargs)\n"
            ),
            after=(
                "from tenacity import retry, stop_after_attempt, wait_random_exponential\n"
                "import openai\n\n"
                "@retry(wait=lambda _: 0, stop=stop_after_attempt(6))\n"
                "def complete(client, **kwargs):\n"
                "    return client.chat.completions.create(**kwargs)\n"
            ),
            note="tenacity decorator on an openai call",
        ),
        Example(
            before=(
                "import backoff\n"
                "import anthropic\n\n"
                "@backoff.on_exception(backoff.expo, anthropic.RateLimitError, max_tries=5)\n"
                "def ask(client, prompt):\n"
                "    return client.messages.create(model='m', max_tokens=64, messages=[prompt])\n"
            ),
            after=(
                "import backoff\n"
                "import anthropic\n\n"
                "@backoff.on_exception(lambda **_: (0 for _ in iter(int, 1)), "
                "anthropic.RateLimitError, max_tries=5)\n"
                "def ask(client, prompt):\n"
                "    return client.messages.create(model='m', max_tokens=64, messages=[prompt])\n"
            ),
            note="backoff decorator on an anthropic call",
        ),
        Example(
            before=(
                "class Assistant:\n"
                "    def _call_model(self):\n"
                "        tries = 0\n"
                "        while True:\n"
                "            tries += 1\n"
                "            try:\n"
                "                return self._stream_once()\n"
                "            except TransientFailure as failure:\n"
                "                pause = failure.wait_s or self.delay_s\n"
                "                self.sleeper(pause)\n"
            ),
            after=(
                "class Assistant:\n"
                "    def _call_model(self):\n"
                "        tries = 0\n"
                "        while True:\n"
                "            tries += 1\n"
                "            try:\n"
                "                return self._stream_once()\n"
                "            except TransientFailure as failure:\n"
                "                pause = failure.wait_s or self.delay_s\n"
                "                self.sleeper(0)\n"
            ),
            note="an injected sleeper not called sleep (openai SDK loop)",
        ),
        Example(
            before=(
                "async def fetch(send, wait, max_attempts=4):\n"
                "    for attempt in range(max_attempts):\n"
                "        try:\n"
                "            return await send()\n"
                "        except OSError:\n"
                "            await wait(min(2 ** attempt, 30))\n"
            ),
            after=(
                "async def fetch(send, wait, max_attempts=4):\n"
                "    for attempt in range(max_attempts):\n"
                "        try:\n"
                "            return await send()\n"
                "        except OSError:\n"
                "            await wait(0)\n"
            ),
            note="an injected async wait(...) with a computed delay",
        ),
        Example(
            before=(
                "def post(client, body, delay_fn, retries=3):\n"
                "    for attempt in range(retries):\n"
                "        resp = client.post('/v1/messages', json=body)\n"
                "        if resp.status_code != 529:\n"
                "            return resp\n"
                "        delay_fn(0.5 * 2 ** attempt)\n"
            ),
            after=(
                "def post(client, body, delay_fn, retries=3):\n"
                "    for attempt in range(retries):\n"
                "        resp = client.post('/v1/messages', json=body)\n"
                "        if resp.status_code != 529:\n"
                "            return resp\n"
                "        delay_fn(0)\n"
            ),
            note="a delay_fn hook on a status-checking loop",
        ),
        Example(
            before=(
                "def call_with_retry(self, request, max_attempts=3):\n"
                "    for attempt in range(max_attempts):\n"
                "        try:\n"
                "            return self.transport.send(request)\n"
                "        except ConnectionError:\n"
                "            self.stop_event.wait()\n"
                "            self.worker.join()\n"
                "            self.inbox.get(timeout=self.poll_s)\n"
                "            self.wait_for_approval(request)\n"
                "            self.pause(request)\n"
            ),
            note="look-alikes in a retry loop: no-argument waits, joins, queue reads, approvals",
        ),
        Example(
            before=(
                "import time\n\n"
                "def stream_slowly(handler, chunks, pace):\n"
                "    for chunk in chunks:\n"
                "        handler.wfile.write(chunk)\n"
                "        time.sleep(pace)\n"
            ),
            note="a fake server pacing its stream: a sleep, but no retry",
        ),
        Example(
            before=(
                "import asyncio\n\n"
                "async def consume(events):\n"
                "    for event in events:\n"
                "        try:\n"
                "            handle(event)\n"
                "        except ValueError:\n"
                "            continue\n"
                "        await asyncio.sleep(0.01)\n"
            ),
            note="a loop that skips bad events and yields to the event loop is not a retry loop",
        ),
        Example(
            before=(
                "from tenacity import AsyncRetrying, wait_exponential_jitter\n\n"
                "def retry_kwargs(params):\n"
                "    kwargs = {}\n"
                "    kwargs['wait'] = wait_exponential_jitter(**params)\n"
                "    return AsyncRetrying(**kwargs)\n"
            ),
            after=(
                "from tenacity import AsyncRetrying, wait_exponential_jitter\n\n"
                "def retry_kwargs(params):\n"
                "    kwargs = {}\n"
                "    kwargs['wait'] = lambda _: 0\n"
                "    return AsyncRetrying(**kwargs)\n"
            ),
            note="a tenacity wait strategy built into keyword arguments",
        ),
        Example(
            before=(
                "def wait_for_approval(queue):\n"
                "    return queue.get()\n\n"
                "def handle(queue):\n"
                "    return wait_for_approval(queue)\n"
            ),
            note="a function of this file named wait_*, not tenacity's",
        ),
    )

    def find(self, ctx: SourceContext) -> Iterator[Mutation]:
        for call in ctx.findall(m.Call()):
            if (is_sleep_call(ctx, call) or is_injected_wait(ctx, call)) and waits_after_failure(ctx, call):
                arg = _delay_argument(call)
                if arg is not None:
                    yield Mutation(
                        arg.value, cst.Integer("0"), f"sleep before retry ({ctx.code(arg.value)}) becomes 0"
                    )
            if _wait_strategy(ctx, call):
                yield Mutation(call, _NO_WAIT["tenacity"], "tenacity wait strategy becomes no wait at all")
                continue
            wait = _library_wait(ctx, call)
            if wait is not None:
                library = retry_library(ctx, call)
                yield Mutation(
                    wait.value, _NO_WAIT[library], f"{library} wait strategy becomes no wait at all"
                )
