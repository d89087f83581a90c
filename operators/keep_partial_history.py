"""keep-partial-history: a failed attempt's partial output is no longer rolled back before the retry.

When a stream breaks mid-answer, whatever was already appended (a half-written assistant message,
half of a tool call) must leave the conversation before the turn is retried; otherwise the retry
sends it back to the model, which continues or duplicates it, and a dangling ``tool_use`` makes
the next request invalid. The retry still "works", so only a test that compares the retried
request with the first one, or inspects history after a mid-stream failure, notices.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.retry.loops import in_retry_path, is_retry_loop
from mutagent.anatomy.syntax import innermost_loop
from mutagent.anatomy.vocabulary import (
    ACCUMULATOR_WORDS,
    HISTORY_WORDS,
    PARTIAL_WORDS,
    ROLLBACK_VERBS,
    identifier,
    words,
)
from mutagent.mutation.context import SourceContext
from mutagent.mutation.operator import Example, Mutation, Operator

_LAST = m.Integer("-1") | m.UnaryOperation(operator=m.Minus(), expression=m.Integer("1"))
_OPEN_SLICE = m.Slice(upper=None, lower=m.DoNotCare())


def _is_history(node: cst.CSTNode) -> bool:
    return bool(set(words(identifier(node) or "")) & HISTORY_WORDS)


def _is_partial(node: cst.CSTNode) -> bool:
    return bool(set(words(identifier(node) or "")) & PARTIAL_WORDS)


def _in_handler(ctx: SourceContext, node: cst.CSTNode) -> bool:
    """In an ``except`` or ``finally`` block of its own function."""
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, (cst.ExceptHandler, cst.ExceptStarHandler, cst.Finally)):
            return True
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return False
    return False


def _after_failure(ctx: SourceContext, statement: cst.CSTNode, discarded: cst.CSTNode) -> bool:
    """History rolled back in an ``except``/``finally`` block or on a retry path; a partial buffer
    only on a retry path (a parser clearing its buffer after a malformed event retries nothing)."""
    if _is_history(discarded) and _in_handler(ctx, statement):
        return True
    return in_retry_path(ctx, statement)


def _same(ctx: SourceContext, a: cst.CSTNode, b: cst.CSTNode) -> bool:
    return ctx.code(a).strip() == ctx.code(b).strip()


def _kept(node: cst.CSTNode) -> bool:
    return _is_history(node) or _is_partial(node)


def _rollback(ctx: SourceContext, statement: cst.BaseSmallStatement) -> cst.BaseExpression | None:
    """The history or partial buffer the statement throws output away from, if it is a rollback."""
    if isinstance(statement, cst.Expr) and m.matches(statement.value, m.Call(func=m.Attribute())):
        call = statement.value
        method, owner = call.func.attr.value, call.func.value
        last = not call.args or (len(call.args) == 1 and m.matches(call.args[0].value, _LAST))
        if (method == "pop" and last and _is_history(owner)) or (
            method == "clear" and not call.args and _kept(owner)
        ):
            return owner
    if isinstance(statement, cst.Del):
        targets = (
            [el.value for el in statement.target.elements]
            if isinstance(statement.target, cst.Tuple)
            else [statement.target]
        )
        for target in targets:
            if isinstance(target, cst.Subscript) and _kept(target.value) and len(target.slice) == 1:
                if m.matches(target.slice[0].slice, m.Index(value=_LAST) | _OPEN_SLICE):
                    return target.value
    if isinstance(statement, cst.Assign) and len(statement.targets) == 1:
        target, value = statement.targets[0].target, statement.value
        if not _kept(target):
            return None
        # history = history[:checkpoint]; history[:] = history[:n]
        if (
            isinstance(value, cst.Subscript)
            and _same(ctx, value.value, _base(target))
            and _keeps_prefix(value)
        ):
            return _base(target)
        # history[n:] = []
        if isinstance(target, cst.Subscript) and m.matches(value, m.List(elements=[]) | m.Tuple(elements=[])):
            if m.matches(target.slice[0].slice, m.Slice()):
                return target.value
        # history = snapshot / list(snapshot) / copy.deepcopy(saved), restoring what was there before
        if _in_handler(ctx, statement) and _restores_snapshot(ctx, target, value):
            return _base(target)
    return None


def _rollback_call(ctx: SourceContext, statement: cst.CSTNode) -> bool:
    """``await rewind()`` / ``self.rollback()`` as a statement on the failure path of a retry loop
    (in its ``except``, or in the branch that goes round again)."""
    if not isinstance(statement, cst.Expr):
        return False
    call = statement.value.expression if isinstance(statement.value, cst.Await) else statement.value
    if not isinstance(call, cst.Call):
        return False
    verb = call.func.attr.value if isinstance(call.func, cst.Attribute) else identifier(call.func)
    if not set(words(verb or "")) & ROLLBACK_VERBS:
        return False
    loop = innermost_loop(ctx, statement)
    if loop is None or not is_retry_loop(ctx, loop):
        return False
    if not any(_filled_by_attempt(ctx, loop, held) for held in _rolled_back(call)):
        return False  # a name is no evidence: what it rewinds may be delivery tracking, not output
    for ancestor in ctx.ancestors(statement):
        if ancestor is loop:
            return False
        if isinstance(ancestor, (cst.ExceptHandler, cst.ExceptStarHandler)):
            return True
        if isinstance(ancestor, cst.IndentedBlock) and any(
            m.matches(s, m.SimpleStatementLine(body=[m.Continue()])) for s in ancestor.body
        ):
            return True  # the branch that goes round again
    return False


def _rolled_back(call: cst.Call) -> list[cst.BaseExpression]:
    """What a rollback call acts on: its receiver (``self.history.rollback()``) and its arguments
    (``rollback(messages, checkpoint)``), when they are named like history or an accumulator."""
    held = [a.value for a in call.args]
    if isinstance(call.func, cst.Attribute):
        held.append(call.func.value)
    return [
        h
        for h in held
        if isinstance(h, (cst.Name, cst.Attribute))
        and (_is_history(h) or set(words(identifier(h) or "")) & ACCUMULATOR_WORDS)
    ]


#: Methods that add output to a history or an accumulator.
_FILLERS = frozenset({"append", "extend", "insert", "add", "feed", "write", "push", "update"})


def _filled_by_attempt(ctx: SourceContext, loop: cst.For | cst.While, held: cst.BaseExpression) -> bool:
    """Data-flow evidence that ``held`` holds the attempt's partial output: inside the retry loop
    the attempt appends to it (``held.append(...)``, ``held += ...``, ``held[k] = ...``, or a
    fill method of anything reached through it, ``held.messages.append(...)``)."""
    text = ctx.code(held).strip()

    def reaches(expr: cst.CSTNode) -> bool:
        code = ctx.code(expr).strip()
        return code == text or code.startswith(text + ".") or code.startswith(text + "[")

    for call in ctx.descendants(loop.body, m.Call(func=m.Attribute())):
        if call.func.attr.value in _FILLERS and reaches(call.func.value):
            return True
    for aug in ctx.descendants(loop.body, m.AugAssign()):
        if reaches(aug.target):
            return True
    for assign in ctx.descendants(loop.body, m.Assign()):
        if any(isinstance(t.target, cst.Subscript) and reaches(t.target) for t in assign.targets):
            return True
    return False


def _keeps_prefix(subscript: cst.Subscript) -> bool:
    """``history[:checkpoint]`` rolls back; ``history[-10:]`` trims old turns and is no rollback."""
    if len(subscript.slice) != 1 or not isinstance(subscript.slice[0].slice, cst.Slice):
        return False
    window = subscript.slice[0].slice
    return window.lower is None and window.upper is not None


def _base(target: cst.BaseExpression) -> cst.BaseExpression:
    """``history`` for ``history[:]``, the target itself otherwise."""
    return target.value if isinstance(target, cst.Subscript) else target


_COPY = m.Call(
    func=m.Name("list") | m.Attribute(attr=m.Name("deepcopy") | m.Name("copy")) | m.Name("deepcopy")
)


def _restores_snapshot(ctx: SourceContext, target: cst.BaseExpression, value: cst.BaseExpression) -> bool:
    source = value
    if m.matches(value, _COPY) and len(value.args) == 1:
        source = value.args[0].value
    elif m.matches(value, m.Call(func=m.Attribute(attr=m.Name("copy")), args=[])):
        source = value.func.value
    if m.matches(source, m.Name("None") | m.Name("True") | m.Name("False")):
        return False
    return isinstance(source, (cst.Name, cst.Attribute)) and not _same(ctx, source, _base(target))


#: A value that starts an attempt afresh: ``[]``, ``""``, ``{}``, ``list()``, ``StreamAssembler()``.
_FRESH = (
    m.List(elements=[])
    | m.Dict(elements=[])
    | m.Tuple(elements=[])
    | m.SimpleString(value=m.MatchIfTrue(lambda v: v.strip("bBrRuU") in ('""', "''")))
    | m.Call(args=[])
)


def _fresh_buffers(
    ctx: SourceContext, loop: cst.For | cst.While
) -> Iterator[tuple[cst.BaseSmallStatement, str]]:
    """``parts = []`` at the top of each attempt, where ``parts`` also exists before the loop: the
    reset is what discards the previous attempt's partial output."""
    function = ctx.enclosing_function(loop)
    if function is None:
        return
    loop_start = ctx.position(loop).start.line
    for statement in ctx.descendants(loop.body, m.Assign(targets=[m.AssignTarget(target=m.Name())])):
        name = statement.targets[0].target.value
        if not m.matches(statement.value, _FRESH):
            continue
        if innermost_loop(ctx, statement) is not loop or not (
            _is_partial(statement.targets[0].target) or _is_history(statement.targets[0].target)
        ):
            continue
        earlier = [
            a
            for a in ctx.descendants(function.body, m.Assign(targets=[m.AssignTarget(target=m.Name(name))]))
            if ctx.position(a).start.line < loop_start
        ]
        if earlier:
            yield statement, f"{name} is no longer reset before the next attempt"


def _fresh_per_attempt(
    ctx: SourceContext, loop: cst.For | cst.While
) -> Iterator[tuple[int, cst.SimpleStatementLine]]:
    """``acc = ReplyAccumulator()`` as a statement of the attempt itself (the loop body, or the
    ``try`` that wraps the attempt), with no binding of that name before the loop: a fresh
    accumulator per attempt is how the previous attempt's partial output is dropped."""
    function = ctx.enclosing_function(loop)
    if function is None or not isinstance(loop.body, cst.IndentedBlock):
        return
    blocks = [loop.body] + [s.body for s in loop.body.body if isinstance(s, cst.Try)]
    loop_start = ctx.position(loop).start.line
    for block in blocks:
        for line in block.body:
            if not m.matches(
                line, m.SimpleStatementLine(body=[m.Assign(targets=[m.AssignTarget(m.Name())])])
            ):
                continue
            assign = line.body[0]
            value = assign.value
            name = assign.targets[0].target.value
            built = isinstance(value, cst.Call) and (identifier(value) or "")[:1].isupper()
            if not (built or m.matches(value, _FRESH)):
                continue
            if not (set(words(name)) | set(words(identifier(value) or ""))) & ACCUMULATOR_WORDS:
                continue
            earlier = [
                a
                for a in ctx.descendants(function.body, m.Assign(targets=[m.AssignTarget(m.Name(name))]))
                if ctx.position(a).start.line < loop_start
            ]
            if not earlier:
                yield blocks.index(block), line


def _hoisted(loop: cst.For | cst.While, index: int, line: cst.SimpleStatementLine) -> cst.CSTNode:
    """``loop`` without ``line``, as found in block ``index`` (0: the loop body, n: the n-th try)."""
    body = loop.body
    if index == 0:
        return loop.with_changes(body=body.with_changes(body=[s for s in body.body if s is not line]))
    tries = [s for s in body.body if isinstance(s, cst.Try)]
    attempt = tries[index - 1]
    new_try = attempt.with_changes(
        body=attempt.body.with_changes(body=[s for s in attempt.body.body if s is not line])
    )
    return loop.with_changes(body=body.with_changes(body=[new_try if s is attempt else s for s in body.body]))


class KeepPartialHistory(Operator):
    name = "keep-partial-history"
    description = "A failed attempt's partial output is no longer rolled back before the retry."
    failure = (
        "After a stream breaks mid-answer the half-written assistant message stays in history, so the retry "
        "sends it back: the model repeats or continues it, and a dangling tool_use invalidates the request."
    )
    hint = (
        "Break a stream mid-message, then assert the retried request's messages equal the first request's "
        "(no partial assistant turn) and that history holds exactly one complete reply afterwards."
    )
    examples = (
        Example(
            before=(
                "import anthropic\n\n"
                "def turn(client, messages, attempts=3):\n"
                "    for attempt in range(attempts):\n"
                "        messages.append({'role': 'assistant', 'content': ''})\n"
                "        try:\n"
                "            with client.messages.stream(messages=messages[:-1]) as stream:\n"
                "                for text in stream.text_stream:\n"
                "                    messages[-1]['content'] += text\n"
                "            return messages[-1]\n"
                "        except anthropic.APIConnectionError:\n"
                "            messages.pop()\n"
            ),
            after=(
                "import anthropic\n\n"
                "def turn(client, messages, attempts=3):\n"
                "    for attempt in range(attempts):\n"
                "        messages.append({'role': 'assistant', 'content': ''})\n"
                "        try:\n"
                "            with client.messages.stream(messages=messages[:-1]) as stream:\n"
                "                for text in stream.text_stream:\n"
                "                    messages[-1]['content'] += text\n"
                "            return messages[-1]\n"
                "        except anthropic.APIConnectionError:\n"
                "            pass\n"
            ),
            note="sync anthropic loop popping the partial message",
        ),
        Example(
            before=(
                "class Session:\n"
                "    async def ask(self, client, **kw):\n"
                "        checkpoint = len(self.history)\n"
                "        try:\n"
                "            async for chunk in await client.chat.completions.create(stream=True, **kw):\n"
                "                self.history.append(chunk.choices[0].delta)\n"
                "        except Exception:\n"
                "            del self.history[checkpoint:]\n"
                "            raise\n"
            ),
            after=(
                "class Session:\n"
                "    async def ask(self, client, **kw):\n"
                "        checkpoint = len(self.history)\n"
                "        try:\n"
                "            async for chunk in await client.chat.completions.create(stream=True, **kw):\n"
                "                self.history.append(chunk.choices[0].delta)\n"
                "        except Exception:\n"
                "            pass\n"
                "            raise\n"
            ),
            note="async openai: truncation to a saved length",
        ),
        Example(
            before=(
                "import copy\n"
                "import httpx\n\n"
                "def complete(client, state, body):\n"
                "    saved = copy.deepcopy(state.messages)\n"
                "    try:\n"
                "        for line in client.stream('POST', '/v1/messages', json=body).iter_lines():\n"
                "            state.messages[-1]['content'] += line\n"
                "    except httpx.ReadError:\n"
                "        state.messages = saved\n"
                "        raise\n"
            ),
            after=(
                "import copy\n"
                "import httpx\n\n"
                "def complete(client, state, body):\n"
                "    saved = copy.deepcopy(state.messages)\n"
                "    try:\n"
                "        for line in client.stream('POST', '/v1/messages', json=body).iter_lines():\n"
                "            state.messages[-1]['content'] += line\n"
                "    except httpx.ReadError:\n"
                "        pass\n"
                "        raise\n"
            ),
            note="raw httpx SSE: history restored from a snapshot",
        ),
        Example(
            before=(
                "import time\n\n"
                "def generate(model, prompt, max_attempts=3):\n"
                "    parts = []\n"
                "    for attempt in range(max_attempts):\n"
                "        parts = []\n"
                "        try:\n"
                "            for delta in model.stream(prompt):\n"
                "                parts.append(delta)\n"
                "            return ''.join(parts)\n"
                "        except ConnectionError:\n"
                "            time.sleep(attempt)\n"
            ),
            after=(
                "import time\n\n"
                "def generate(model, prompt, max_attempts=3):\n"
                "    parts = []\n"
                "    for attempt in range(max_attempts):\n"
                "        pass\n"
                "        try:\n"
                "            for delta in model.stream(prompt):\n"
                "                parts.append(delta)\n"
                "            return ''.join(parts)\n"
                "        except ConnectionError:\n"
                "            time.sleep(attempt)\n"
            ),
            note="a partial buffer reset at the top of each attempt",
        ),
        Example(
            before=(
                "import time\n\n"
                "def drain(queue, handle):\n"
                "    for attempt in range(5):\n"
                "        try:\n"
                "            handle(queue.pop())\n"
                "            return\n"
                "        except TimeoutError:\n"
                "            job = queue.pop()\n"
                "            time.sleep(1)\n"
            ),
            note="pops from a work queue in a retry loop",
        ),
        Example(
            before=(
                "def trim(messages, limit):\n"
                "    while len(messages) > limit:\n"
                "        messages.pop(0)\n\n"
                "def undo(editor):\n"
                "    editor.history.pop()\n\n"
                "def strip_cache(message):\n"
                "    try:\n"
                "        message.pop('cache_control')\n"
                "    except KeyError:\n"
                "        pass\n"
            ),
            note="history trimming, an editor's undo and a dict key removal are no rollback",
        ),
        Example(
            before=(
                "import anthropic\n\n"
                "def ask(client, **kw):\n"
                "    attempt = 0\n"
                "    while True:\n"
                "        acc = ReplyAccumulator()\n"
                "        try:\n"
                "            with client.messages.stream(**kw) as stream:\n"
                "                for event in stream:\n"
                "                    acc.feed(event)\n"
                "            return acc.finish()\n"
                "        except anthropic.APIConnectionError:\n"
                "            attempt += 1\n"
                "            if attempt >= 3:\n"
                "                raise\n"
            ),
            after=(
                "import anthropic\n\n"
                "def ask(client, **kw):\n"
                "    attempt = 0\n"
                "    acc = ReplyAccumulator()\n"
                "    while True:\n"
                "        try:\n"
                "            with client.messages.stream(**kw) as stream:\n"
                "                for event in stream:\n"
                "                    acc.feed(event)\n"
                "            return acc.finish()\n"
                "        except anthropic.APIConnectionError:\n"
                "            attempt += 1\n"
                "            if attempt >= 3:\n"
                "                raise\n"
            ),
            note="a fresh accumulator per attempt; hoisted out of the loop it keeps partial output",
        ),
        Example(
            before=(
                "import httpx\n\n"
                "async def complete(http, body, retries=3):\n"
                "    for attempt in range(retries):\n"
                "        try:\n"
                "            chunks = []\n"
                "            async with http.stream('POST', '/v1/chat/completions', json=body) as resp:\n"
                "                async for line in resp.aiter_lines():\n"
                "                    chunks.append(line)\n"
                "            return ''.join(chunks)\n"
                "        except httpx.ReadError:\n"
                "            continue\n"
            ),
            after=(
                "import httpx\n\n"
                "async def complete(http, body, retries=3):\n"
                "    chunks = []\n"
                "    for attempt in range(retries):\n"
                "        try:\n"
                "            async with http.stream('POST', '/v1/chat/completions', json=body) as resp:\n"
                "                async for line in resp.aiter_lines():\n"
                "                    chunks.append(line)\n"
                "            return ''.join(chunks)\n"
                "        except httpx.ReadError:\n"
                "            continue\n"
            ),
            note="async raw HTTP: a fresh list of chunks made inside the attempt's try",
        ),
        Example(
            before=(
                "import httpx\n\n"
                "def post(body, retries=3):\n"
                "    for attempt in range(retries):\n"
                "        client = httpx.Client(timeout=10)\n"
                "        try:\n"
                "            return client.post('/v1/messages', json=body).json()\n"
                "        except httpx.ReadError:\n"
                "            continue\n"
            ),
            note="a client made per attempt is no accumulator of partial output",
        ),
        Example(
            before=(
                "def render(events):\n"
                "    for event in events:\n"
                "        acc = ReplyAccumulator()\n"
                "        acc.feed(event)\n"
                "        print(acc.finish())\n"
            ),
            note="a fresh accumulator per item of a plain loop, no retry",
        ),
        Example(
            before=(
                "import asyncio\n\n"
                "async def stream_turn(client, transcript, max_retries=2):\n"
                "    attempt = 0\n"
                "    while True:\n"
                "        mark = transcript.checkpoint()\n"
                "        try:\n"
                "            async for delta in client.stream(transcript.messages):\n"
                "                transcript.messages.append(delta)\n"
                "            return transcript\n"
                "        except ConnectionError:\n"
                "            attempt += 1\n"
                "            if attempt > max_retries:\n"
                "                raise\n"
                "            await transcript.rewind(mark)\n"
                "            await asyncio.sleep(2 ** attempt)\n"
            ),
            after=(
                "import asyncio\n\n"
                "async def stream_turn(client, transcript, max_retries=2):\n"
                "    attempt = 0\n"
                "    while True:\n"
                "        mark = transcript.checkpoint()\n"
                "        try:\n"
                "            async for delta in client.stream(transcript.messages):\n"
                "                transcript.messages.append(delta)\n"
                "            return transcript\n"
                "        except ConnectionError:\n"
                "            attempt += 1\n"
                "            if attempt > max_retries:\n"
                "                raise\n"
                "            pass\n"
                "            await asyncio.sleep(2 ** attempt)\n"
            ),
            note="a rewind of the transcript the attempt appended its deltas to",
        ),
        Example(
            before=(
                "import asyncio\n\n"
                "async def get_with_retry(get_response, rewind, max_retries=2):\n"
                "    attempt = 0\n"
                "    while True:\n"
                "        try:\n"
                "            return await get_response()\n"
                "        except ConnectionError:\n"
                "            attempt += 1\n"
                "            if attempt > max_retries:\n"
                "                raise\n"
                "            await rewind()\n"
                "            await tracker.rollback_sent(pending_items)\n"
                "            await asyncio.sleep(2 ** attempt)\n"
            ),
            note="rewinds of delivery tracking (input re-marked as not yet sent): nothing shows they "
            "hold the attempt's output",
        ),
        Example(
            before=(
                "def replay(session, steps):\n"
                "    for step in steps:\n"
                "        try:\n"
                "            step.apply(session)\n"
                "        except ValueError:\n"
                "            session.undo()\n"
            ),
            note="an undo in a loop over steps that retries nothing",
        ),
    )

    def find(self, ctx: SourceContext) -> Iterator[Mutation]:
        for statement in ctx.findall(m.Expr() | m.Del() | m.Assign()):
            discarded = _rollback(ctx, statement)
            if discarded is not None and _after_failure(ctx, statement, discarded):
                what = ctx.code(statement).strip()
                yield Mutation(statement, cst.Pass(), f"rollback `{what}` removed: partial output kept")
            elif discarded is None and _rollback_call(ctx, statement):
                what = ctx.code(statement).strip()
                yield Mutation(
                    statement,
                    cst.Pass(),
                    f"rollback `{what}` removed: the failed attempt's output stays for the retry",
                )
        for loop in ctx.findall(m.For() | m.While()):
            if is_retry_loop(ctx, loop):
                for statement, description in _fresh_buffers(ctx, loop):
                    yield Mutation(statement, cst.Pass(), description)
                yield from self._hoist_accumulators(ctx, loop)

    @staticmethod
    def _hoist_accumulators(ctx: SourceContext, loop: cst.For | cst.While) -> Iterator[Mutation]:
        """The per-attempt accumulator is made once, before the loop: every attempt then adds to
        what the failed ones already collected."""
        block = ctx.parent(loop)
        if not isinstance(block, (cst.IndentedBlock, cst.Module)) or ctx.parent(block) is None:
            return
        for index, line in _fresh_per_attempt(ctx, loop):
            hoisted = line.with_changes(leading_lines=[])
            body = []
            for statement in block.body:
                if statement is loop:
                    body.extend([hoisted, _hoisted(loop, index, line)])
                else:
                    body.append(statement)
            what = ctx.code(line.body[0]).strip()
            yield Mutation(
                block,
                block.with_changes(body=body),
                f"`{what}` hoisted out of the retry loop: a failed attempt's partial output is kept "
                "into the next attempt",
            )
