"""drop-idle-timeout: a read/idle timeout or stream watchdog is disabled (no limit at all).

A provider that stops sending mid-stream without closing the connection hangs an agent that has
no idle limit: the SDKs default to ten minutes or to none. The read timeout, the ``wait_for``
around the next chunk or the "no event for N seconds" watchdog is what turns a stall into a
retryable error, and only a test that stalls the fake server proves it is there.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.callgraph import callee, own_calls
from mutagent.anatomy.dataflow import bound_values
from mutagent.anatomy.exits import fails
from mutagent.anatomy.model_calls import direct_model_call
from mutagent.anatomy.streams.clients import (
    is_client_constructor,
    is_http_call,
    is_model_call,
    qualified_leaf,
)
from mutagent.anatomy.streams.context import model_context, reads_stream
from mutagent.anatomy.syntax import attribute_chain, is_literal, keyword, leaf_name, string_value
from mutagent.anatomy.vocabulary import (
    ASYNC_LIMITS,
    MODEL_OBJECT_WORDS,
    MODEL_VERBS,
    SDK_PACKAGES,
    tokens,
    words,
)
from mutagent.mutation.context import SourceContext
from mutagent.mutation.operator import Example, Mutation, Operator

NONE = cst.Name("None")
INFINITY = cst.parse_expression('float("inf")')

#: Timeout configuration classes and the fields that bound a read between two chunks (``total``
#: bounds the whole response, a stall included). A bare first argument sets every field.
TIMEOUT_CONFIGS: dict[tuple[str, str], tuple[str, ...]] = {
    ("httpx", "Timeout"): ("read",),
    ("httpx2", "Timeout"): ("read",),
    ("httpcore", "Timeout"): ("read",),
    ("anthropic", "Timeout"): ("read",),
    ("openai", "Timeout"): ("read",),
    ("aiohttp", "ClientTimeout"): ("sock_read", "total"),
}
CLOCKS = frozenset({"time.monotonic", "time.time", "time.perf_counter", "time.monotonic_ns", "time.time_ns"})
_CLOCK_METHODS = frozenset("time monotonic now clock _clock _now".split())
#: Words that make a clock comparison an idle watchdog by themselves ...
IDLE_WORDS = frozenset("idle stall stalled watchdog silence silent inactivity".split())
#: ... and words that do so only in code that streams from a model (a heartbeat or a retry
#: deadline also compares clocks).
WATCHDOG_WORDS = frozenset("timeout last heartbeat".split())


class DropIdleTimeout(Operator):
    name = "drop-idle-timeout"
    description = "A read/idle timeout or stream watchdog is disabled: it becomes no limit at all."
    failure = (
        "A stalled stream (the server stops sending but keeps the connection open) hangs the agent "
        "forever instead of failing fast into a retry."
    )
    hint = (
        "Make the fake server stall mid-stream for longer than the idle limit and assert the agent "
        "gives up on that attempt within a bound (and retries), e.g. under a pytest timeout."
    )
    examples = (
        Example(
            before=(
                "import anthropic\n"
                "import httpx2\n"
                "\n"
                "client = anthropic.Anthropic(timeout=httpx2.Timeout(60.0, connect=5.0, read=20.0))\n"
            ),
            after=(
                "import anthropic\n"
                "import httpx2\n"
                "\n"
                "client = anthropic.Anthropic(timeout=httpx2.Timeout(60.0, connect=5.0, read=None))\n"
            ),
            note="anthropic client, httpx2 read timeout",
        ),
        Example(
            before=(
                "import asyncio\n"
                "\n"
                "async def events(stream, idle):\n"
                "    iterator = stream.__aiter__()\n"
                "    while True:\n"
                "        event = await asyncio.wait_for(iterator.__anext__(), timeout=idle)\n"
                "        yield event\n"
            ),
            after=(
                "import asyncio\n"
                "\n"
                "async def events(stream, idle):\n"
                "    iterator = stream.__aiter__()\n"
                "    while True:\n"
                "        event = await asyncio.wait_for(iterator.__anext__(), timeout=None)\n"
                "        yield event\n"
            ),
            note="async: wait_for around the next event",
        ),
        Example(
            before=(
                "import aiohttp\n"
                "\n"
                "API_URL = 'https://api.anthropic.com/v1/messages'\n"
                "TIMEOUT = aiohttp.ClientTimeout(total=None, sock_read=30)\n"
                "\n"
                "async def lines(session, body):\n"
                "    async with session.post(API_URL, json=body, timeout=TIMEOUT) as r:\n"
                "        async for line in r.content:\n"
                "            yield line\n"
            ),
            after=(
                "import aiohttp\n"
                "\n"
                "API_URL = 'https://api.anthropic.com/v1/messages'\n"
                "TIMEOUT = aiohttp.ClientTimeout(total=None, sock_read=None)\n"
                "\n"
                "async def lines(session, body):\n"
                "    async with session.post(API_URL, json=body, timeout=TIMEOUT) as r:\n"
                "        async for line in r.content:\n"
                "            yield line\n"
            ),
            note="aiohttp socket read timeout",
        ),
        Example(
            before=(
                "from openai import OpenAI\n"
                "\n"
                "def ask(client: OpenAI, messages):\n"
                "    return client.chat.completions.create(model='m', messages=messages, timeout=15)\n"
            ),
            after=(
                "from openai import OpenAI\n"
                "\n"
                "def ask(client: OpenAI, messages):\n"
                "    return client.chat.completions.create(model='m', messages=messages, timeout=None)\n"
            ),
            note="openai per-request timeout",
        ),
        Example(
            before=(
                "import time\n"
                "\n"
                "class Watchdog:\n"
                "    def __init__(self, idle_limit):\n"
                "        self.idle_limit = idle_limit\n"
                "        self.last_event = time.monotonic()\n"
                "\n"
                "    def check(self):\n"
                "        if time.monotonic() - self.last_event > self.idle_limit:\n"
                "            raise StreamStalled()\n"
            ),
            after=(
                "import time\n"
                "\n"
                "class Watchdog:\n"
                "    def __init__(self, idle_limit):\n"
                "        self.idle_limit = idle_limit\n"
                "        self.last_event = time.monotonic()\n"
                "\n"
                "    def check(self):\n"
                '        if time.monotonic() - self.last_event > float("inf"):\n'
                "            raise StreamStalled()\n"
            ),
            note="a hand-written idle watchdog",
        ),
        Example(
            before=(
                "import asyncio\n"
                "import subprocess\n"
                "\n"
                "async def run_tool(proc, lock):\n"
                "    await asyncio.wait_for(proc.communicate(), timeout=30)\n"
                "    subprocess.run(['ls'], timeout=5)\n"
                "    lock.acquire(timeout=1)\n"
            ),
            note="timeouts of tools and locks, not of a model stream",
        ),
        Example(
            before=(
                "import asyncio\n"
                "\n"
                "async def _bounded(awaitable, timeout):\n"
                "    task = asyncio.ensure_future(awaitable)\n"
                "    done, _ = await asyncio.wait({task}, timeout=timeout)\n"
                "    if task in done:\n"
                "        return await task\n"
                "    task.cancel()\n"
                "    raise TimeoutError(timeout)\n"
                "\n"
                "async def events(stream, idle):\n"
                "    while True:\n"
                "        yield await _bounded(stream.__anext__(), idle)\n"
            ),
            after=(
                "import asyncio\n"
                "\n"
                "async def _bounded(awaitable, timeout):\n"
                "    task = asyncio.ensure_future(awaitable)\n"
                "    done, _ = await asyncio.wait({task}, timeout=None)\n"
                "    if task in done:\n"
                "        return await task\n"
                "    task.cancel()\n"
                "    raise TimeoutError(timeout)\n"
                "\n"
                "async def events(stream, idle):\n"
                "    while True:\n"
                "        yield await _bounded(stream.__anext__(), idle)\n"
            ),
            note="asyncio.wait on a task whose awaitable a caller fills with the next stream event",
        ),
        Example(
            before=(
                "import asyncio\n"
                "\n"
                "async def _bounded(awaitable, timeout):\n"
                "    task = asyncio.ensure_future(awaitable)\n"
                "    done, _ = await asyncio.wait({task}, timeout=timeout)\n"
                "    return done\n"
                "\n"
                "async def run_tools(calls):\n"
                "    await _bounded(asyncio.gather(*(c.execute() for c in calls)), 30)\n"
                "    await asyncio.wait({asyncio.create_task(flush_logs())}, timeout=5)\n"
            ),
            note="asyncio.wait on tool runs and a log flush: no stream read is waited on",
        ),
        Example(
            before=(
                "import asyncio\n"
                "import anthropic\n"
                "\n"
                "async def cancel_tool_call(self, name):\n"
                "    task = asyncio.create_task(self.call_tool(name, self.settings.get('retries')))\n"
                "    done, _ = await asyncio.wait({task}, timeout=1)\n"
                "    return done\n"
            ),
            note="a tool call waited on after a cancel; the settings lookup in its arguments is no read",
        ),
        Example(
            before=(
                "import time\n"
                "\n"
                "def check_budget(started, budget):\n"
                "    if time.monotonic() - started > budget:\n"
                "        raise RetriesExhausted('gave up')\n"
            ),
            note="a retry budget: a clock comparison that is no stream watchdog",
        ),
        Example(
            before=(
                "import asyncio\n"
                "\n"
                "class Agent:\n"
                "    async def _model_output(self, messages):\n"
                "        return await self.llm.ainvoke(messages)\n"
                "\n"
                "    async def step(self, messages):\n"
                "        return await asyncio.wait_for(self._model_output(messages), timeout=self.limit)\n"
            ),
            after=(
                "import asyncio\n"
                "\n"
                "class Agent:\n"
                "    async def _model_output(self, messages):\n"
                "        return await self.llm.ainvoke(messages)\n"
                "\n"
                "    async def step(self, messages):\n"
                "        return await asyncio.wait_for(self._model_output(messages), timeout=None)\n"
            ),
            note="wait_for around a call that reaches the model through the file's call graph",
        ),
        Example(
            before=(
                "import litellm\n"
                "\n"
                "def send(messages, request_timeout):\n"
                "    kwargs = {'model': 'gpt-x', 'messages': messages}\n"
                "    kwargs['timeout'] = request_timeout\n"
                "    return litellm.completion(**kwargs)\n"
            ),
            after=(
                "import litellm\n"
                "\n"
                "def send(messages, request_timeout):\n"
                "    kwargs = {'model': 'gpt-x', 'messages': messages}\n"
                "    kwargs['timeout'] = None\n"
                "    return litellm.completion(**kwargs)\n"
            ),
            note="a timeout entry of the keyword arguments spread into a model call",
        ),
        Example(
            before=(
                "import asyncio\n"
                "\n"
                "async def run(tool, call, lock, options):\n"
                "    await asyncio.wait_for(lock.acquire(), timeout=5)\n"
                "    options['timeout'] = 30\n"
                "    return await asyncio.wait_for(tool.run(**call.arguments), timeout=60)\n"
            ),
            note="a lock, a tool run and an options dict no model call receives",
        ),
    )

    def find(self, ctx: SourceContext) -> Iterator[Mutation]:
        for call in ctx.findall(m.Call()):
            yield from _config_mutations(ctx, call)
            yield from _timeout_keyword(ctx, call)
            yield from _async_limit(ctx, call)
            yield from _wait_limit(ctx, call)
        for node in ctx.findall(m.If()):
            yield from _watchdog(ctx, node)
        for assign in ctx.findall(m.Assign(targets=[m.AssignTarget(target=m.Subscript())])):
            yield from _timeout_entry(ctx, assign)


def _config_mutations(ctx: SourceContext, call: cst.Call) -> Iterator[Mutation]:
    """``httpx2.Timeout(60, read=20)`` -> ``read=None``; ``httpx2.Timeout(30)`` -> ``Timeout(None)``."""
    resolved = qualified_leaf(ctx, call)
    fields = TIMEOUT_CONFIGS.get(resolved) if resolved else None
    if not fields:
        return
    if not _configures_a_model_call(ctx, call):
        return
    found = [keyword(call, field) for field in fields]
    for field, arg in zip(fields, found, strict=True):
        if arg is not None and not is_literal(arg.value, "None"):
            yield Mutation(arg.value, NONE, f"{resolved[1]}({field}=...) becomes None: no {field} limit")
    positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
    if positional and found[0] is None and not is_literal(positional[0].value, "None"):
        yield Mutation(
            positional[0].value, NONE, f"{resolved[1]}'s default limit becomes None: no read limit"
        )


def _timeout_keyword(ctx: SourceContext, call: cst.Call) -> Iterator[Mutation]:
    """``timeout=`` of a model client, a model call or an HTTP request becomes None."""
    arg = keyword(call, "timeout")
    if arg is None or is_literal(arg.value, "None"):
        return
    configs = [arg.value, *bound_values(ctx, arg.value)] if isinstance(arg.value, cst.Name) else [arg.value]
    if any(isinstance(c, cst.Call) and qualified_leaf(ctx, c) in TIMEOUT_CONFIGS for c in configs):
        return  # the config object's own fields are mutated instead
    if (
        _model_api(ctx, call)
        or (is_http_call(ctx, call) or is_client_constructor(ctx, call))
        and model_context(ctx, call)
    ):
        yield Mutation(arg.value, NONE, f"timeout of {ctx.code(call.func)}(...) becomes None")


def _timeout_entry(ctx: SourceContext, assign: cst.Assign) -> Iterator[Mutation]:
    """``kwargs["timeout"] = request_timeout`` where the same function then hands ``**kwargs`` to a
    call that (by name or the file's call graph) talks to the model: the entry is that call's
    timeout. A ``"timeout"`` key of a dict that no model call receives is not."""
    target = assign.targets[0].target
    if not isinstance(target, cst.Subscript) or len(target.slice) != 1:
        return
    index = target.slice[0].slice
    if not isinstance(index, cst.Index) or string_value(index.value) != "timeout":
        return
    if is_literal(assign.value, "None") or not isinstance(target.value, cst.Name):
        return
    func = ctx.enclosing_function(assign)
    if func is None:
        return
    mapping = target.value.value
    for call in ctx.descendants(func, m.Call()):
        spread = any(a.star == "**" and m.matches(a.value, m.Name(mapping)) for a in call.args)
        line = ctx.enclosing(call, cst.SimpleStatementLine)
        if spread and line is not None and _reaches_model(ctx, line, depth=1):
            yield Mutation(
                assign.value, NONE, f"the timeout handed to {ctx.code(call.func)}(**{mapping}) becomes None"
            )
            return


def _reaches_model(ctx: SourceContext, node: cst.CSTNode, depth: int = 2) -> bool:
    """Running ``node`` calls the model itself: an SDK or endpoint call, a model object's verb
    (``self.llm.ainvoke(...)``, ``litellm.completion(...)``), or a function of the file that makes
    one (the call graph, ``depth`` levels deep). A whole step or a browser action that reaches a
    model only through other work (with its own limits) is not one."""
    for call in own_calls(ctx, node):
        if direct_model_call(ctx, call):
            return True
        chain = set(words(ctx.code(call.func)))
        if chain & MODEL_OBJECT_WORDS and chain & MODEL_VERBS:
            return True
        if "litellm" in chain and chain & {"completion", "acompletion"}:
            return True
        target = callee(ctx, call)
        if target is not None and depth > 0 and _reaches_model(ctx, target.body, depth - 1):
            return True
    return False


def _model_api(ctx: SourceContext, call: cst.Call) -> bool:
    """An SDK client, a model call or ``with_options``: its timeout is always a model's."""
    sdk = any(name.split(".", 1)[0] in SDK_PACKAGES for name in ctx.qualified_names(call))
    chain = attribute_chain(call.func)
    return (sdk and is_client_constructor(ctx, call)) or is_model_call(call) or chain[-1:] == ["with_options"]


def _configures_a_model_call(ctx: SourceContext, config: cst.Call) -> bool:
    """A timeout object passed straight to an SDK client or model call, or built in model code."""
    arg = ctx.parent(config)
    owner = ctx.parent(arg) if isinstance(arg, cst.Arg) else None
    return (isinstance(owner, cst.Call) and _model_api(ctx, owner)) or model_context(ctx, config)


def _async_limit(ctx: SourceContext, call: cst.Call) -> Iterator[Mutation]:
    """``asyncio.wait_for(next_chunk, 30)`` / ``async with asyncio.timeout(30):`` around a stream read."""
    name = next((q for q in ctx.qualified_names(call) if q in ASYNC_LIMITS), None)
    if name is None:
        return
    position, field = ASYNC_LIMITS[name]
    arg = keyword(call, field) or keyword(call, "timeout")
    positional = [a for a in call.args if a.keyword is None]
    if arg is None and len(positional) > position:
        arg = positional[position]
    if arg is None or is_literal(arg.value, "None"):
        return
    guarded: list[cst.CSTNode] = positional[:1] if name == "asyncio.wait_for" else _with_body(ctx, call)
    limit = INFINITY if name.startswith("trio.") else NONE
    if any(reads_stream(ctx, node) for node in guarded) and model_context(ctx, call):
        yield Mutation(arg.value, limit, f"{name} limit around a stream read removed")
    elif name == "asyncio.wait_for" and guarded and _reaches_model(ctx, guarded[0]):
        # ``asyncio.wait_for(self._get_model_output(msgs), timeout=...)``: by the call graph the
        # awaited call talks to the model; the limit is that call's watchdog
        what = f"{name} limit around the model call removed: a stalled model is waited on for ever"
        yield Mutation(arg.value, limit, what)


_SCHEDULERS = frozenset({"asyncio.ensure_future", "asyncio.create_task"})


def _wait_limit(ctx: SourceContext, call: cst.Call) -> Iterator[Mutation]:
    """``done, pending = await asyncio.wait({task}, timeout=t)`` where ``task`` is (by data flow
    in the file) a stream read: the wait is that read's watchdog, and without the limit a stalled
    stream is waited on for ever."""
    if "asyncio.wait" not in ctx.qualified_names(call):
        return
    arg = keyword(call, "timeout")
    positional = [a for a in call.args if a.keyword is None]
    if arg is None or is_literal(arg.value, "None") or not positional:
        return
    waited = positional[0].value
    elements = (
        [e.value for e in waited.elements] if isinstance(waited, (cst.Set, cst.List, cst.Tuple)) else [waited]
    )
    for element in elements:
        read = _stream_read_awaited(ctx, element)
        if read is not None:
            yield Mutation(
                arg.value,
                NONE,
                f"asyncio.wait limit removed: the stream read `{read}` is awaited with no limit",
            )
            return


def _stream_read_awaited(ctx: SourceContext, expr: cst.BaseExpression) -> str | None:
    """The stream read a waited task runs: ``task = asyncio.ensure_future(stream.__anext__())``,
    or a parameter of this function that a caller in the file fills with a stream read."""
    values = [*bound_values(ctx, expr)] if isinstance(expr, cst.Name) else [expr]
    for value in values:
        if isinstance(value, cst.Call) and ctx.qualified_names(value) & _SCHEDULERS and value.args:
            value = value.args[0].value
        if isinstance(value, cst.Call) and reads_stream(ctx, value):
            return ctx.code(value)
        if isinstance(value, cst.Name):
            for argument in _arguments_for(ctx, value):
                if isinstance(argument, cst.Call) and reads_stream(ctx, argument):
                    return ctx.code(argument)
    return None


def _arguments_for(ctx: SourceContext, name: cst.Name) -> list[cst.BaseExpression]:
    """What callers in this file pass for ``name`` when it is a parameter of its module-level
    function (positionally or by keyword)."""
    func = ctx.enclosing_function(name)
    if func is None or ctx.parent(func) is not ctx.module:
        return []
    ordered = [p.name.value for p in (*func.params.posonly_params, *func.params.params)]
    keyword_only = {p.name.value for p in func.params.kwonly_params}
    if name.value not in ordered and name.value not in keyword_only:
        return []
    found: list[cst.BaseExpression] = []
    for call in ctx.findall(m.Call(func=m.Name(func.name.value))):
        for position, passed in enumerate(call.args):
            if passed.keyword is not None:
                if passed.keyword.value == name.value:
                    found.append(passed.value)
            elif not passed.star and position < len(ordered) and ordered[position] == name.value:
                found.append(passed.value)
    return found


def _with_body(ctx: SourceContext, call: cst.Call) -> list[cst.CSTNode]:
    item = ctx.parent(call)
    statement = ctx.parent(item) if isinstance(item, cst.WithItem) else None
    return [statement.body] if isinstance(statement, cst.With) else []


def _watchdog(ctx: SourceContext, node: cst.If) -> Iterator[Mutation]:
    """``if clock() - last_event > idle_limit: raise Stalled`` -> the limit becomes infinite."""
    test = node.test
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return
    op, limit = test.comparisons[0].operator, test.comparisons[0].comparator
    elapsed = test.left
    if isinstance(op, (cst.LessThan, cst.LessThanEqual)):
        elapsed, limit = limit, elapsed
    elif not isinstance(op, (cst.GreaterThan, cst.GreaterThanEqual)):
        return
    if not _reads_clock(ctx, elapsed) or not fails(node.body):
        return
    words = {w for n in ctx.descendants(test, m.Name()) for w in tokens(n.value)}
    if not words & IDLE_WORDS:  # "timeout", "last": a watchdog only in code that streams from a model
        if not (words & WATCHDOG_WORDS or _raises_timeout(ctx, node.body)) or not model_context(ctx, node):
            return
    yield Mutation(limit, INFINITY, f"watchdog limit {ctx.code(limit)} becomes infinite")


def _reads_clock(ctx: SourceContext, expr: cst.CSTNode, depth: int = 2) -> bool:
    """A clock call (``time.monotonic()``, ``loop.time()``, an injected ``self._clock()``), or a
    variable assigned from one (``elapsed = now() - start``), in ``expr``."""
    for call in ctx.descendants(expr, m.Call()):
        if ctx.qualified_names(call) & CLOCKS or leaf_name(call.func) in _CLOCK_METHODS:
            return True
    if depth == 0:
        return False
    for name in ctx.descendants(expr, m.Name()):
        if any(_reads_clock(ctx, value, depth - 1) for value in bound_values(ctx, name)):
            return True
    return False


def _raises_timeout(ctx: SourceContext, body: cst.BaseSuite) -> bool:
    for raise_ in ctx.descendants(body, m.Raise()):
        if raise_.exc is not None and tokens(ctx.code(raise_.exc)) & {"timeout", "stall", "stalled", "idle"}:
            return True
    return False
