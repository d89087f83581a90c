"""skip-stop-marker-check: the check that a stream ended with its end-of-turn marker is bypassed.

A connection closed partway through a turn must never read as a complete message: without the
``message_stop`` / ``[DONE]`` / ``response.completed`` check (or a ``stop_reason`` presence
check) the truncated text is journaled as the model's answer and enters history. Providers and
proxies do close streams early, and nothing else in the loop notices.

The marker is known by meaning: a literal, a constant bound to one (``DONE = "[DONE]"``), or an end
sentinel (``SENTINEL = object()``, not ``_MISSING``); a flag set on it, also when an accumulator
object keeps it and its owner reads it (``if not acc.complete``), or when the accumulator lives
elsewhere but the flag is named for completion and the raise says the stream ended too early; and
the ``raise`` after a loop that returns on the marker (reached only when the stream ran out).
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.dataflow import owner_of, references, same_place
from mutagent.anatomy.exits import fails, raised_names
from mutagent.anatomy.streams.context import reads_stream
from mutagent.anatomy.streams.stop_check import (
    in_own_loop,
    in_stop_branch,
    is_stop_flag,
    predicate_source,
    reason_presence,
    stop_flags,
    stop_test,
)
from mutagent.anatomy.streams.stop_reasons import is_reason_field, is_stop_reason
from mutagent.anatomy.syntax import (
    absence_of,
    condition_leaves,
    condition_sites,
    is_literal,
    leaf_name,
    presence_of,
    single_comparison,
    statements,
)
from mutagent.anatomy.vocabulary import tokens
from mutagent.mutation.context import SourceContext
from mutagent.mutation.operator import Example, Mutation, Operator
from mutagent.mutation.rewrite import FALSE, TRUE


class SkipStopMarkerCheck(Operator):
    name = "skip-stop-marker-check"
    description = "The check that the stream ended with its end-of-turn marker is bypassed."
    failure = (
        "A stream cut before message_stop/[DONE]/response.completed reads as a complete answer: "
        "the truncated reply is returned and written to history instead of being retried."
    )
    hint = (
        "Script a response that ends cleanly but without its end-of-turn marker and assert the turn "
        "fails or is retried (a second request), never returned as an answer."
    )
    examples = (
        Example(
            before=(
                "def collect(stream):\n"
                "    saw_stop = False\n"
                "    text = []\n"
                "    for event in stream:\n"
                "        if event.type == 'content_block_delta':\n"
                "            text.append(event.delta.text)\n"
                "        elif event.type == 'message_stop':\n"
                "            saw_stop = True\n"
                "    if not saw_stop:\n"
                "        raise IncompleteStream('no message_stop')\n"
                "    return ''.join(text)\n"
            ),
            after=(
                "def collect(stream):\n"
                "    saw_stop = False\n"
                "    text = []\n"
                "    for event in stream:\n"
                "        if event.type == 'content_block_delta':\n"
                "            text.append(event.delta.text)\n"
                "        elif event.type == 'message_stop':\n"
                "            saw_stop = True\n"
                "    if False:\n"
                "        raise IncompleteStream('no message_stop')\n"
                "    return ''.join(text)\n"
            ),
            note="anthropic SDK events, a seen-stop flag guarding a raise",
        ),
        Example(
            before=(
                "import json\n"
                "\n"
                "async def chat(client, body):\n"
                "    parts = []\n"
                "    async with client.stream('POST', '/v1/chat/completions', json=body) as resp:\n"
                "        async for line in resp.aiter_lines():\n"
                "            if line == 'data: [DONE]':\n"
                "                break\n"
                "            if line.startswith('data: '):\n"
                "                parts.append(json.loads(line[6:]))\n"
                "        else:\n"
                "            raise StreamCut('closed before [DONE]')\n"
                "    return parts\n"
            ),
            after=(
                "import json\n"
                "\n"
                "async def chat(client, body):\n"
                "    parts = []\n"
                "    async with client.stream('POST', '/v1/chat/completions', json=body) as resp:\n"
                "        async for line in resp.aiter_lines():\n"
                "            if line == 'data: [DONE]':\n"
                "                break\n"
                "            if line.startswith('data: '):\n"
                "                parts.append(json.loads(line[6:]))\n"
                "        else:\n"
                "            pass\n"
                "    return parts\n"
            ),
            note="raw httpx SSE for OpenAI chat, async for-else: the else that fires without [DONE]",
        ),
        Example(
            before=(
                "class Reader:\n"
                "    def __init__(self):\n"
                "        self.final = None\n"
                "\n"
                "    def on_event(self, event):\n"
                "        match event['type']:\n"
                "            case 'response.completed':\n"
                "                self.final = event['response']\n"
                "\n"
                "    def result(self):\n"
                "        if self.final is None:\n"
                "            raise RuntimeError('stream closed before response.completed')\n"
                "        return self.final\n"
            ),
            after=(
                "class Reader:\n"
                "    def __init__(self):\n"
                "        self.final = None\n"
                "\n"
                "    def on_event(self, event):\n"
                "        match event['type']:\n"
                "            case 'response.completed':\n"
                "                self.final = event['response']\n"
                "\n"
                "    def result(self):\n"
                "        if False:\n"
                "            raise RuntimeError('stream closed before response.completed')\n"
                "        return self.final\n"
            ),
            note="OpenAI Responses dict events through match/case; the flag holds the final response",
        ),
        Example(
            before=(
                "def finish(chunks):\n"
                "    finish_reason = None\n"
                "    for chunk in chunks:\n"
                "        if chunk.choices and chunk.choices[0].finish_reason:\n"
                "            finish_reason = chunk.choices[0].finish_reason\n"
                "    if finish_reason is None or not chunks:\n"
                "        raise Truncated()\n"
                "    return finish_reason\n"
            ),
            after=(
                "def finish(chunks):\n"
                "    finish_reason = None\n"
                "    for chunk in chunks:\n"
                "        if chunk.choices and chunk.choices[0].finish_reason:\n"
                "            finish_reason = chunk.choices[0].finish_reason\n"
                "    if False or not chunks:\n"
                "        raise Truncated()\n"
                "    return finish_reason\n"
            ),
            note="openai chunks: a finish_reason presence check, one operand of an or",
        ),
        Example(
            before=(
                "def read(lines):\n"
                "    done = False\n"
                "    out = []\n"
                "    for line in lines:\n"
                "        done = done or line.strip() == 'data: [DONE]'\n"
                "        out.append(line)\n"
                "    return Result(out, complete=done)\n"
            ),
            after=(
                "def read(lines):\n"
                "    done = True\n"
                "    out = []\n"
                "    for line in lines:\n"
                "        done = done or line.strip() == 'data: [DONE]'\n"
                "        out.append(line)\n"
                "    return Result(out, complete=done)\n"
            ),
            note="no explicit check: the flag starts out as if the marker had been seen",
        ),
        Example(
            before=(
                "def stream_once(client, msgs):\n"
                "    reply = Reply()\n"
                "    for chunk in client.chat.completions.create(model='m', messages=msgs, stream=True):\n"
                "        if chunk.choices and chunk.choices[0].finish_reason:\n"
                "            reply.finish = chunk.choices[0].finish_reason\n"
                "    if reply.finish is None:\n"
                "        raise TransientFailure('stream ended without a finish_reason')\n"
                "    return reply\n"
            ),
            after=(
                "def stream_once(client, msgs):\n"
                "    reply = Reply()\n"
                "    for chunk in client.chat.completions.create(model='m', messages=msgs, stream=True):\n"
                "        if chunk.choices and chunk.choices[0].finish_reason:\n"
                "            reply.finish = chunk.choices[0].finish_reason\n"
                "    if False:\n"
                "        raise TransientFailure('stream ended without a finish_reason')\n"
                "    return reply\n"
            ),
            note="openai SDK (it eats [DONE]): a missing finish reason, kept as `finish`, is the end marker",
        ),
        Example(
            before=(
                "def chat(http, body):\n"
                "    data = http.post('/api/chat', json=body).json()\n"
                "    if not data.get('done_reason'):\n"
                "        raise Incomplete(data)\n"
                "    return data['message']\n"
            ),
            after=(
                "def chat(http, body):\n"
                "    data = http.post('/api/chat', json=body).json()\n"
                "    if False:\n"
                "        raise Incomplete(data)\n"
                "    return data['message']\n"
            ),
            note="Ollama's done_reason",
        ),
        Example(
            before=(
                "class ReplyAccumulator:\n"
                "    def __init__(self):\n"
                "        self.parts = []\n"
                "        self.complete = False\n"
                "\n"
                "    def add(self, event):\n"
                "        if event['type'] == 'content_block_delta':\n"
                "            self.parts.append(event['delta']['text'])\n"
                "        elif event['type'] == 'message_stop':\n"
                "            self.complete = True\n"
                "\n"
                "def read_reply(events):\n"
                "    acc = ReplyAccumulator()\n"
                "    for event in events:\n"
                "        acc.add(event)\n"
                "    if not acc.complete:\n"
                "        raise TruncatedReplyError('stream ended before the end-of-turn event')\n"
                "    return ''.join(acc.parts)\n"
            ),
            after=(
                "class ReplyAccumulator:\n"
                "    def __init__(self):\n"
                "        self.parts = []\n"
                "        self.complete = False\n"
                "\n"
                "    def add(self, event):\n"
                "        if event['type'] == 'content_block_delta':\n"
                "            self.parts.append(event['delta']['text'])\n"
                "        elif event['type'] == 'message_stop':\n"
                "            self.complete = True\n"
                "\n"
                "def read_reply(events):\n"
                "    acc = ReplyAccumulator()\n"
                "    for event in events:\n"
                "        acc.add(event)\n"
                "    if False:\n"
                "        raise TruncatedReplyError('stream ended before the end-of-turn event')\n"
                "    return ''.join(acc.parts)\n"
            ),
            note="a flag on an accumulator object, set by its class on message_stop, read by its owner",
        ),
        Example(
            before=(
                "def read_reply(events, acc):\n"
                "    for event in events:\n"
                "        acc.feed(event)\n"
                "    if not acc.complete:\n"
                "        raise TruncatedReplyError('stream ended before the end-of-turn event')\n"
                "    return acc.text\n"
            ),
            after=(
                "def read_reply(events, acc):\n"
                "    for event in events:\n"
                "        acc.feed(event)\n"
                "    if False:\n"
                "        raise TruncatedReplyError('stream ended before the end-of-turn event')\n"
                "    return acc.text\n"
            ),
            note="an accumulator defined elsewhere: a completion flag whose raise says the stream was cut",
        ),
        Example(
            before=(
                "SENTINEL = object()\n"
                "\n"
                "def relay(source):\n"
                "    for chunk in source:\n"
                "        if chunk is SENTINEL:\n"
                "            return\n"
                "        yield chunk\n"
                "    raise StreamCutError('producer closed without the end sentinel')\n"
            ),
            after=(
                "SENTINEL = object()\n"
                "\n"
                "def relay(source):\n"
                "    for chunk in source:\n"
                "        if chunk is SENTINEL:\n"
                "            return\n"
                "        yield chunk\n"
                "    pass\n"
            ),
            note="an end sentinel compared inside a generator, the raise after the loop",
        ),
        Example(
            before=(
                "import json\n"
                "\n"
                "DONE = '[DONE]'\n"
                "\n"
                "def events(response):\n"
                "    finished = False\n"
                "    for line in response.iter_lines():\n"
                "        data = line.removeprefix('data:').strip()\n"
                "        if data.startswith(DONE):\n"
                "            finished = True\n"
                "            break\n"
                "        yield json.loads(data)\n"
                "    if not finished:\n"
                "        raise StreamCutError('stream closed before [DONE]')\n"
            ),
            after=(
                "import json\n"
                "\n"
                "DONE = '[DONE]'\n"
                "\n"
                "def events(response):\n"
                "    finished = False\n"
                "    for line in response.iter_lines():\n"
                "        data = line.removeprefix('data:').strip()\n"
                "        if data.startswith(DONE):\n"
                "            finished = True\n"
                "            break\n"
                "        yield json.loads(data)\n"
                "    if False:\n"
                "        raise StreamCutError('stream closed before [DONE]')\n"
            ),
            note="a prefix test on the event data against a marker constant, followed by break",
        ),
        Example(
            before=(
                "async def run_turn(events):\n"
                "    final = None\n"
                "    async for event in events:\n"
                "        terminal = None\n"
                "        if isinstance(event, ResponseCompletedEvent):\n"
                "            terminal = event.response\n"
                "        if terminal is not None:\n"
                "            final = Reply(terminal.output, terminal.usage)\n"
                "    if final is None:\n"
                "        raise ModelBehaviorError('no final response')\n"
                "    return final\n"
            ),
            after=(
                "async def run_turn(events):\n"
                "    final = None\n"
                "    async for event in events:\n"
                "        terminal = None\n"
                "        if isinstance(event, ResponseCompletedEvent):\n"
                "            terminal = event.response\n"
                "        if terminal is not None:\n"
                "            final = Reply(terminal.output, terminal.usage)\n"
                "    if False:\n"
                "        raise ModelBehaviorError('no final response')\n"
                "    return final\n"
            ),
            note="a value built only once the completed event's response was kept: set one step later",
        ),
        Example(
            before=(
                "def summarise(chunks):\n"
                "    total = None\n"
                "    for chunk in chunks:\n"
                "        usage = chunk.usage\n"
                "        if usage is not None:\n"
                "            total = usage.total_tokens\n"
                "    if total is None:\n"
                "        raise ValueError('no usage reported')\n"
                "    return total\n"
            ),
            note="a value set when another field is present, with no end marker behind it",
        ),
        Example(
            before=(
                "_MISSING = object()\n"
                "\n"
                "def first(items, default=_MISSING):\n"
                "    for item in items:\n"
                "        if item is _MISSING:\n"
                "            return default\n"
                "        yield item\n"
                "    raise LookupError('no items')\n"
                "\n"
                "def wait(job):\n"
                "    if not job.done:\n"
                "        raise RuntimeError('job still running')\n"
                "    for chunk in job.chunks:\n"
                "        if chunk == 'message_stop':\n"
                "            break\n"
                "    raise StreamCutError('stream ended')\n"
            ),
            note="an absent-value sentinel, a done flag whose raise says nothing of a stream, and a raise "
            "after a loop that also breaks on the marker (it runs either way)",
        ),
        Example(
            before=(
                "def configure(api_key, events):\n"
                "    if not api_key:\n"
                "        raise ValueError('api_key is required')\n"
                "    for event in events:\n"
                "        if event.type == 'message_stop':\n"
                "            break\n"
                "    return api_key\n"
            ),
            note="an unrelated `if not x: raise`, and a marker test with no check depending on it",
        ),
        Example(
            before=(
                "def pump(stream, sink):\n"
                "    done = False\n"
                "    while not done:\n"
                "        event = next(stream)\n"
                "        if event['type'] == 'message_stop':\n"
                "            done = True\n"
                "        sink.append(event)\n"
                "    if event['type'] != 'error':\n"
                "        return sink\n"
                "    raise StreamFailed(event)\n"
            ),
            note="a flag that only drives the read loop, and a comparison with another event type",
        ),
        Example(
            before=(
                "class Worker:\n"
                "    def __init__(self):\n"
                "        self.stop = False\n"
                "        self.finish = None\n"
                "        self.finish_time = None\n"
                "\n"
                "    def step(self, stop_event):\n"
                "        if not self.stop:\n"
                "            raise Paused()\n"
                "        if stop_event.is_set():\n"
                "            raise Cancelled()\n"
                "        if self.finish_time is None:\n"
                "            raise NotStarted('no finish_time yet')\n"
                "        if self.finish is None:\n"
                "            raise NotDone()\n"
            ),
            note="a `stop` flag, a stop event, a finish time, and a `finish` nothing shows to be a reason",
        ),
        Example(
            before=(
                "class Wrapper:\n"
                "    def _cut_short(self):\n"
                "        return self.active and self.received_finish_reason is None\n"
                "\n"
                "    def __next__(self):\n"
                "        try:\n"
                "            return next(self.chunks)\n"
                "        except StopIteration:\n"
                "            if self._cut_short():\n"
                "                raise IncompleteStream('ended before a finish_reason')\n"
                "            raise\n"
            ),
            after=(
                "class Wrapper:\n"
                "    def _cut_short(self):\n"
                "        return self.active and self.received_finish_reason is None\n"
                "\n"
                "    def __next__(self):\n"
                "        try:\n"
                "            return next(self.chunks)\n"
                "        except StopIteration:\n"
                "            if False:\n"
                "                raise IncompleteStream('ended before a finish_reason')\n"
                "            raise\n"
            ),
            note="a one-line predicate (call graph) that no finish reason came; its own test is a site too",
        ),
        Example(
            before=(
                "def end_hop(hop, last_error):\n"
                "    gave_up = hop.finish_reason is None and not hop.feedback\n"
                "    if gave_up and last_error is not None:\n"
                "        raise last_error\n"
            ),
            after=(
                "def end_hop(hop, last_error):\n"
                "    gave_up = False and not hop.feedback\n"
                "    if gave_up and last_error is not None:\n"
                "        raise last_error\n"
            ),
            note="a local holding the missing-finish-reason test, read by a branch that raises",
        ),
        Example(
            before=(
                "class ChatStream:\n"
                "    def push(self, chunk):\n"
                "        if chunk['choices'][0].get('finish_reason') is not None:\n"
                "            self.terminal = True\n"
                "\n"
                "    def finish(self):\n"
                "        if not self.terminal:\n"
                "            raise StreamError('stream ended without a completion reason')\n"
            ),
            after=(
                "class ChatStream:\n"
                "    def push(self, chunk):\n"
                "        if chunk['choices'][0].get('finish_reason') is not None:\n"
                "            self.terminal = True\n"
                "\n"
                "    def finish(self):\n"
                "        if False:\n"
                "            raise StreamError('stream ended without a completion reason')\n"
            ),
            note="a flag the object sets once the finish reason arrives",
        ),
        Example(
            before=(
                "def consume(stream, memory):\n"
                "    completed = False\n"
                "    for chunk in stream:\n"
                "        choice = chunk.choices[0]\n"
                "        if choice.finish_reason:\n"
                "            completed = True\n"
                "            memory.record(choice)\n"
                "    return completed\n"
            ),
            after=(
                "def consume(stream, memory):\n"
                "    completed = False\n"
                "    for chunk in stream:\n"
                "        choice = chunk.choices[0]\n"
                "        if True:\n"
                "            completed = True\n"
                "            memory.record(choice)\n"
                "    return completed\n"
            ),
            note="the reading loop's branch that finalises the reply once the finish reason arrives",
        ),
        Example(
            before=(
                "def translate(chunk):\n"
                "    is_finished = False\n"
                "    if chunk.choices[0].finish_reason:\n"
                "        is_finished = True\n"
                "    return {'text': chunk.choices[0].delta.content, 'is_finished': is_finished}\n"
                "\n"
                "def tally(chunks, counts):\n"
                "    for chunk in chunks:\n"
                "        if chunk.finish_reason:\n"
                "            counts[chunk.finish_reason] += 1\n"
            ),
            note="a per-chunk translator's field and a tally of reasons: no completeness check",
        ),
        Example(
            before=(
                "class Wrapper:\n"
                "    def _cut_short(self):\n"
                "        return self.received_finish_reason is None\n"
                "\n"
                "    def close(self):\n"
                "        if self._cut_short():\n"
                "            log.info('closed early')\n"
            ),
            note="a predicate whose caller only logs: nothing refuses the cut stream",
        ),
        Example(
            before=(
                "async def call_llm(client, messages):\n"
                "    result = None\n"
                "    async for chunk in client.create_stream(messages):\n"
                "        if isinstance(chunk, CreateResult):\n"
                "            result = chunk\n"
                "        else:\n"
                "            yield chunk\n"
                "    if result is None:\n"
                "        raise RuntimeError('No final model result in streaming mode.')\n"
                "    yield result\n"
            ),
            after=(
                "async def call_llm(client, messages):\n"
                "    result = None\n"
                "    async for chunk in client.create_stream(messages):\n"
                "        if isinstance(chunk, CreateResult):\n"
                "            result = chunk\n"
                "        else:\n"
                "            yield chunk\n"
                "    if False:\n"
                "        raise RuntimeError('No final model result in streaming mode.')\n"
                "    yield result\n"
            ),
            note="the stream's own final item (the assembled result) missing after the loop",
        ),
        Example(
            before=(
                "def first_row(rows):\n"
                "    found = None\n"
                "    for row in rows:\n"
                "        if row.ok:\n"
                "            found = row\n"
                "    if found is None:\n"
                "        raise LookupError('no row')\n"
                "    return found\n"
            ),
            note="a search over rows that are no model stream",
        ),
    )

    def find(self, ctx: SourceContext) -> Iterator[Mutation]:
        checked: list[cst.BaseExpression] = []
        for node in ctx.nodes(cst.If):
            for site in self._negative_sites(ctx, node):
                checked.append(site)
                yield Mutation(site, FALSE, f"check `{ctx.code(site)}` for the end-of-turn marker bypassed")
            for site in self._positive_sites(ctx, node):
                checked.append(site)
                yield Mutation(
                    site, TRUE, f"`{ctx.code(site)}` assumed: a stream without its end marker passes"
                )
        for node in ctx.nodes(cst.Assert):
            if self._marker_missing(ctx, node.test) is False and not in_stop_branch(ctx, node):
                checked.append(node.test)
                yield Mutation(node.test, TRUE, "assertion that the end-of-turn marker arrived bypassed")
        for loop in ctx.nodes(cst.For) + ctx.nodes(cst.While):
            if loop.orelse is not None and fails(loop.orelse.body) and self._breaks_on_marker(ctx, loop):
                replacement = loop.orelse.body.with_changes(body=[cst.SimpleStatementLine([cst.Pass()])])
                yield Mutation(
                    loop.orelse.body, replacement, "loop-else that fires without the end marker emptied"
                )
            after = _raise_after(ctx, loop)
            if after is not None and loop.orelse is None and _returns_on_marker(ctx, loop):
                yield Mutation(
                    after,
                    cst.Pass(),
                    f"`{ctx.code(after).splitlines()[0]}` after the loop (reached only when the stream "
                    "runs out before its end marker) removed: a cut stream ends quietly",
                )
        yield from self._through_predicates(ctx, checked)
        for node in ctx.nodes(cst.If):
            if fails(node.body) and _final_item_missing(ctx, node):
                checked.append(node.test)
                what = f"check `{ctx.code(node.test)}` that the stream's final result arrived bypassed"
                yield Mutation(node.test, FALSE, what)
        for node in ctx.nodes(cst.If):
            if _finalises_on_reason(ctx, node):
                checked.append(node.test)
                yield Mutation(
                    node.test,
                    TRUE,
                    f"`{ctx.code(node.test)}` assumed: every chunk finalises the reply, so a stream "
                    "cut before its finish reason is recorded as complete",
                )
        yield from self._initialised_flags(ctx, checked)

    def _through_predicates(
        self, ctx: SourceContext, checked: list[cst.BaseExpression]
    ) -> Iterator[Mutation]:
        """A completeness check one step away, by the call graph or a local: ``if
        self._should_fail_on_clean_eof(): raise ...`` where that method returns ``... and
        self.received_finish_reason is None``, or ``gave_up = hop.finish_reason is None and ...``
        then ``if gave_up: raise``. The guarded branch fails; the marker test sits in the
        predicate's ``return`` or the local's value."""
        done: set[int] = set()
        for node in ctx.nodes(cst.If):
            if not fails(node.body) or in_stop_branch(ctx, node):
                continue
            for leaf in condition_leaves(node.test):
                source = predicate_source(ctx, leaf)
                if source is None:
                    continue
                inner = condition_sites(source, lambda x: self._marker_missing(ctx, x) is True)
                if not inner:
                    continue
                if isinstance(leaf, cst.Call):
                    checked.append(leaf)
                    yield Mutation(
                        leaf, FALSE, f"check `{ctx.code(leaf)}` for the end-of-turn marker bypassed"
                    )
                for site in inner:
                    if id(site) not in done:
                        done.add(id(site))
                        checked.append(site)
                        yield Mutation(
                            site, FALSE, f"check `{ctx.code(site)}` for the end-of-turn marker bypassed"
                        )

    @staticmethod
    def _marker_missing(ctx: SourceContext, test: cst.BaseExpression) -> bool | None:
        """False if ``test`` holds only once the marker arrived (``saw_stop``, ``final is not
        None``, ``"message_stop" in seen``), True if it holds when it is missing, else None."""
        marker = stop_test(ctx, test)
        if marker is not None:
            return not marker
        missing = absence_of(test)
        if missing is not None and (is_stop_flag(ctx, missing) or _reason(ctx, test, missing)):
            return True
        present = presence_of(test)
        if present is not None and (is_stop_flag(ctx, present) or _reason(ctx, test, present)):
            return False
        return None

    def _negative_sites(self, ctx: SourceContext, node: cst.If) -> list[cst.BaseExpression]:
        """``if not saw_stop: raise ...``: the test (or its operand) that must become False. A flag
        kept by code this file does not show (``if not acc.complete``) counts when its name says
        the reply completed and the raise says the stream ended too early."""
        if not fails(node.body) or in_stop_branch(ctx, node):
            return []
        cut_short = _reports_cut_stream(ctx, node)
        return condition_sites(
            node.test,
            lambda leaf: (
                self._marker_missing(ctx, leaf) is True or (cut_short and _completion_flag_missing(leaf))
            ),
        )

    def _positive_sites(self, ctx: SourceContext, node: cst.If) -> list[cst.BaseExpression]:
        """``if saw_stop: return msg`` followed by a raise (or with ``else: raise``): the test
        becomes True, so the stream passes whether or not the marker arrived."""
        if len(list(condition_leaves(node.test))) != 1 or self._marker_missing(ctx, node.test) is not False:
            return []
        if in_stop_branch(ctx, node):
            return []
        if _is_event_dispatch(ctx, node):
            return []
        if isinstance(node.orelse, cst.Else):
            return [node.test] if fails(node.orelse.body) else []
        following = _next_statement(ctx, node)
        leaves = node.orelse is None and _leaves(node.body) and following is not None
        return [node.test] if leaves and fails(cst.IndentedBlock(body=[following])) else []

    @staticmethod
    def _breaks_on_marker(ctx: SourceContext, loop: cst.For | cst.While) -> bool:
        """The loop body leaves with ``break`` when the marker arrives (a for-else idiom)."""
        for node in ctx.descendants(loop.body, m.If()):
            if any(stop_test(ctx, leaf) is True for leaf in condition_leaves(node.test)):
                if any(isinstance(s, cst.Break) for s in statements(node.body)):
                    return True
        return False

    @staticmethod
    def _initialised_flags(ctx: SourceContext, checked: list[cst.BaseExpression]) -> Iterator[Mutation]:
        """A flag no check reads: start it True, as if the marker had already been seen."""
        reads = [read for site in checked for read in references(ctx, site)]
        done: set[tuple[str, int]] = set()
        for flag in stop_flags(ctx):
            key = (ctx.code(flag), id(owner_of(ctx, flag)))
            if key in done or not isinstance(flag, (cst.Name, cst.Attribute)):
                continue
            done.add(key)
            if any(same_place(ctx, flag, read) for read in reads) or _drives_a_loop(ctx, flag):
                continue
            if not _is_read(ctx, flag):
                continue  # a flag nobody reads: starting it True would change nothing
            for assign in ctx.findall(m.Assign(targets=[m.AssignTarget()], value=m.Name("False"))):
                if same_place(ctx, assign.targets[0].target, flag):
                    description = f"{ctx.code(flag)} starts out True: a stream without its end marker"
                    yield Mutation(assign.value, TRUE, f"{description} reads as complete")
                    break


def _final_item_missing(ctx: SourceContext, node: cst.If) -> bool:
    """``if model_result is None: raise`` right after ``async for chunk in client.create_stream():
    if isinstance(chunk, CreateResult): model_result = chunk``: the stream's own final item (the
    assembled result that only a complete stream yields) is missing. Three pieces meet: the loop
    reads a model stream, the variable is set only from the loop's item, and the check follows
    the loop and fails."""
    missing = absence_of(node.test)
    if not isinstance(missing, cst.Name):
        return False
    parent = ctx.parent(node)
    body = list(getattr(parent, "body", ()))
    if node not in body or body.index(node) == 0:
        return False
    loop = body[body.index(node) - 1]
    if not isinstance(loop, cst.For) or not isinstance(loop.target, cst.Name):
        return False
    if not (reads_stream(ctx, loop) or "stream" in tokens(leaf_name(loop.iter) or "")):
        return False
    sets = [
        a
        for a in ctx.descendants(loop.body, m.Assign())
        if any(m.matches(t.target, m.Name(missing.value)) for t in a.targets)
    ]
    return bool(sets) and all(m.matches(a.value, m.Name(loop.target.value)) for a in sets)


def _finalises_on_reason(ctx: SourceContext, node: cst.If) -> bool:
    """``if choice.finish_reason: stream_completed = True; ...record the reply...``: the one
    branch where a chat stream's finish reason marks the reply complete (a flag named for
    completion is set True). Two pieces of evidence meet: the test is the reason's presence and
    the branch records completion. A branch that only counts or logs reasons sets no such flag."""
    leaves = list(condition_leaves(node.test))
    if len(leaves) != 1 or reason_presence(node.test) is None or in_stop_branch(ctx, node):
        return False
    if not in_own_loop(ctx, node):
        return False  # a per-chunk translator marks one chunk; only the reading loop finalises
    for statement in statements(node.body):
        if isinstance(statement, cst.Assign) and is_literal(statement.value, "True"):
            for target in statement.targets:
                name = leaf_name(target.target) or ""
                if tokens(name) & _COMPLETION_WORDS:
                    return True
    return False


def _reason(ctx: SourceContext, test: cst.BaseExpression, field: cst.BaseExpression) -> bool:
    """``field`` is the stop reason ``test`` checks for presence: a reason field however tested
    (``not finish_reason``), or a bare ``finish``/``stop`` the file shows to be a reason, only when
    compared with None (``reply.finish is None``; ``if not self.stop`` may be a flag). With an SDK
    that consumes ``[DONE]``, a missing finish reason is the only end marker left to check."""
    if is_reason_field(field):
        return True
    parts = single_comparison(test)
    return parts is not None and is_literal(parts[2], "None") and is_stop_reason(ctx, field)


#: Names of a flag that records "the reply completed": ``complete``, ``acc.done``, ``self._finished``,
#: ``saw_end``, ``got_message_stop``.
_COMPLETION_WORDS = frozenset("complete completed done finished ended stopped terminated".split())
_SEEN_WORDS = frozenset("saw seen got received has had reached".split())
_MARKER_WORDS = frozenset("stop end done finish eof terminal final completed".split())
#: What a raise says when a stream ended before its end-of-turn marker.
_CUT_WORDS = frozenset("truncated truncation incomplete premature prematurely unfinished cut eof".split())
_STREAM_WORDS = frozenset("stream reply response turn message output sse events event".split())
_ENDED_WORDS = frozenset("ended end ends closed before without missing marker early stop".split())


def _completion_flag_missing(leaf: cst.BaseExpression) -> bool:
    """``not acc.complete`` / ``self._done is False``: a test that a flag named for the reply's
    completion is not set."""
    missing = absence_of(leaf)
    if not isinstance(missing, (cst.Name, cst.Attribute)):
        return False
    name = missing.value if isinstance(missing, cst.Name) else missing.attr.value
    named = set(tokens(name))
    return bool(named & _COMPLETION_WORDS) or (bool(named & _SEEN_WORDS) and bool(named & _MARKER_WORDS))


def _reports_cut_stream(ctx: SourceContext, node: cst.If) -> bool:
    """The guarded raise says the stream ended too early: ``TruncatedReplyError("stream ended
    before the end-of-turn event")``, ``IncompleteStream(...)``."""
    said = raised_names(node.body)
    if said & _CUT_WORDS:
        return True
    return bool(said & _STREAM_WORDS) and bool(said & _ENDED_WORDS)


def _raise_after(ctx: SourceContext, loop: cst.For | cst.While) -> cst.Raise | None:
    """The ``raise`` that directly follows ``loop`` in its block, if any."""
    following = _next_statement(ctx, loop)
    if isinstance(following, cst.SimpleStatementLine) and isinstance(following.body[0], cst.Raise):
        return following.body[0]
    return None


def _returns_on_marker(ctx: SourceContext, loop: cst.For | cst.While) -> bool:
    """The loop leaves its function with ``return`` once the end marker (or an end sentinel)
    arrives, and never ``break``s: only a stream that ran out without it reaches the statement
    after the loop (``if chunk is SENTINEL: return`` ... ``raise StreamCutError(...)``)."""
    if isinstance(loop, cst.While) and not m.matches(loop.test, m.Name("True")):
        return False
    own_breaks = [
        node
        for node in ctx.descendants(loop.body, m.Break())
        if ctx.enclosing(node, (cst.For, cst.While)) is loop
    ]
    if own_breaks:
        return False
    for node in ctx.descendants(loop.body, m.If()):
        if any(stop_test(ctx, leaf) is True for leaf in condition_leaves(node.test)) and _leaves_by_return(
            node.body
        ):
            return True
    return False


def _leaves_by_return(block: cst.BaseSuite) -> bool:
    body = statements(block)
    return bool(body) and isinstance(body[-1], cst.Return)


def _next_statement(ctx: SourceContext, node: cst.CSTNode) -> cst.BaseStatement | None:
    parent = ctx.parent(node)
    body = getattr(parent, "body", None)
    if isinstance(body, (list, tuple)) and node in body:
        index = list(body).index(node)
        if index + 1 < len(body):
            return body[index + 1]
    return None


def _leaves(block: cst.BaseSuite) -> bool:
    """The block ends by leaving (``return``/``break``/``continue``/``raise``)."""
    body = statements(block)
    return bool(body) and isinstance(body[-1], (cst.Return, cst.Break, cst.Continue, cst.Raise))


def _is_event_dispatch(ctx: SourceContext, node: cst.If) -> bool:
    """``for event in stream: if event.type == "message_stop": ...`` dispatches on each event;
    only a test of a flag or of the final state is a completeness check."""
    if stop_test(ctx, node.test) is None:
        return False
    names = {ctx.code(n) for n in ctx.descendants(node.test, m.Name())}
    for loop in ctx.ancestors(node):
        if isinstance(loop, cst.For) and names & {
            ctx.code(n) for n in ctx.descendants(loop.target, m.Name())
        }:
            return True
    return False


def _is_read(ctx: SourceContext, flag: cst.CSTNode) -> bool:
    """``flag`` is used somewhere other than as an assignment target."""
    targets = {id(t.target) for a in ctx.nodes(cst.Assign) for t in a.targets}
    targets |= {id(a.target) for a in ctx.nodes(cst.AnnAssign) + ctx.nodes(cst.AugAssign)}
    return any(
        id(ref) not in targets and type(ref) is type(flag) and same_place(ctx, ref, flag)
        for ref in references(ctx, ctx.module)
    )


def _drives_a_loop(ctx: SourceContext, flag: cst.CSTNode) -> bool:
    """The flag appears in a ``while`` test or in a test inside a loop (``if done: break``):
    starting it True would stop the reading itself, not skip a completeness check."""
    for loop in ctx.nodes(cst.While):
        if any(same_place(ctx, flag, read) for read in references(ctx, loop.test)):
            return True
    for node in ctx.nodes(cst.If):
        if ctx.enclosing(node, (cst.For, cst.While)) is None:
            continue
        if any(same_place(ctx, flag, read) for read in references(ctx, node.test)):
            return True
    return False
