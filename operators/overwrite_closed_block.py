"""overwrite-closed-block: the stream assembler's "first close wins" guard is removed.

Streams deliver duplicates and stragglers: a second ``content_block_stop`` for the same index, a
late delta after the block closed, events after ``message_stop``. An assembler that does not
ignore them rewrites a block that was already final, so what was streamed to the user and what
is stored in history disagree. Line coverage of the happy path never exercises the guard.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.exits import exits_early, fails, raised_names
from mutagent.anatomy.streams.context import handles_stream_events
from mutagent.anatomy.streams.stop_check import is_stop_flag
from mutagent.anatomy.streams.stop_reasons import is_reason_field, is_stop_reason
from mutagent.anatomy.syntax import (
    condition_sites,
    is_literal,
    leaf_name,
    negated,
    presence_of,
    root_name,
    single_comparison,
)
from mutagent.anatomy.vocabulary import STREAM_EVENT_WORDS, tokens, word_list
from mutagent.mutation.context import SourceContext
from mutagent.mutation.operator import Example, Mutation, Operator
from mutagent.mutation.rewrite import FALSE

#: Words of a state meaning "no longer accepts events".
CLOSED_WORDS = frozenset(
    ("closed done finished finalized finalised complete completed stopped ended sealed terminated").split()
)
#: Words of a state meaning "still accepts events" (``if index not in self._open: return``).
OPEN_WORDS = frozenset("open opened active live streaming inprogress".split())


class OverwriteClosedBlock(Operator):
    name = "overwrite-closed-block"
    description = "The assembler's first-close-wins guard is removed: late events rewrite closed blocks."
    failure = (
        "A duplicate stop, a late delta or an event after the end of the message rewrites a block that "
        "was already closed: history no longer matches what was streamed."
    )
    hint = (
        "Feed the assembler (or script the fake server with) a duplicate content_block_stop / a delta "
        "after the stop for the same index, and assert the assembled block is the first-closed one."
    )
    examples = (
        Example(
            before=(
                "class Assembler:\n"
                "    def __init__(self):\n"
                "        self.blocks = {}\n"
                "        self.closed = set()\n"
                "\n"
                "    def on_event(self, event):\n"
                "        index = event['index']\n"
                "        if index in self.closed:\n"
                "            return\n"
                "        if event['type'] == 'content_block_stop':\n"
                "            self.closed.add(index)\n"
                "        else:\n"
                "            self.blocks[index] = self.blocks.get(index, '') + event['delta']['text']\n"
            ),
            after=(
                "class Assembler:\n"
                "    def __init__(self):\n"
                "        self.blocks = {}\n"
                "        self.closed = set()\n"
                "\n"
                "    def on_event(self, event):\n"
                "        index = event['index']\n"
                "        if False:\n"
                "            return\n"
                "        if event['type'] == 'content_block_stop':\n"
                "            self.closed.add(index)\n"
                "        else:\n"
                "            self.blocks[index] = self.blocks.get(index, '') + event['delta']['text']\n"
            ),
            note="anthropic dict events, a set of closed indexes",
        ),
        Example(
            before=(
                "from dataclasses import dataclass\n"
                "\n"
                "@dataclass\n"
                "class ToolCallState:\n"
                "    arguments: str = ''\n"
                "    done: bool = False\n"
                "\n"
                "def apply_chunk(calls, chunk):\n"
                "    for delta in chunk.choices[0].delta.tool_calls or []:\n"
                "        state = calls.setdefault(delta.index, ToolCallState())\n"
                "        if state.done:\n"
                "            continue\n"
                "        state.arguments += delta.function.arguments or ''\n"
            ),
            after=(
                "from dataclasses import dataclass\n"
                "\n"
                "@dataclass\n"
                "class ToolCallState:\n"
                "    arguments: str = ''\n"
                "    done: bool = False\n"
                "\n"
                "def apply_chunk(calls, chunk):\n"
                "    for delta in chunk.choices[0].delta.tool_calls or []:\n"
                "        state = calls.setdefault(delta.index, ToolCallState())\n"
                "        if False:\n"
                "            continue\n"
                "        state.arguments += delta.function.arguments or ''\n"
            ),
            note="openai chunks, a dataclass flag, continue in a loop",
        ),
        Example(
            before=(
                "class Collector:\n"
                "    def __init__(self):\n"
                "        self.saw_stop = False\n"
                "        self.text = ''\n"
                "\n"
                "    async def handle(self, event):\n"
                "        if self.saw_stop or event.type == 'ping':\n"
                "            return\n"
                "        if event.type == 'message_stop':\n"
                "            self.saw_stop = True\n"
                "        elif event.type == 'content_block_delta':\n"
                "            self.text += event.delta.text\n"
            ),
            after=(
                "class Collector:\n"
                "    def __init__(self):\n"
                "        self.saw_stop = False\n"
                "        self.text = ''\n"
                "\n"
                "    async def handle(self, event):\n"
                "        if False or event.type == 'ping':\n"
                "            return\n"
                "        if event.type == 'message_stop':\n"
                "            self.saw_stop = True\n"
                "        elif event.type == 'content_block_delta':\n"
                "            self.text += event.delta.text\n"
            ),
            note="async SDK events: nothing after message_stop counts",
        ),
        Example(
            before=(
                "import json\n"
                "\n"
                "async def read_turn(lines):\n"
                "    turn = Turn()\n"
                "    async for line in lines:\n"
                "        data = line[5:].strip()\n"
                "        if data == '[DONE]':\n"
                "            break\n"
                "        for choice in json.loads(data).get('choices') or []:\n"
                "            if turn.finish_reason is not None:\n"
                "                continue\n"
                "            turn.text += (choice.get('delta') or {}).get('content') or ''\n"
                "            if choice.get('finish_reason'):\n"
                "                turn.finish_reason = choice['finish_reason']\n"
                "    return turn\n"
            ),
            after=(
                "import json\n"
                "\n"
                "async def read_turn(lines):\n"
                "    turn = Turn()\n"
                "    async for line in lines:\n"
                "        data = line[5:].strip()\n"
                "        if data == '[DONE]':\n"
                "            break\n"
                "        for choice in json.loads(data).get('choices') or []:\n"
                "            if False:\n"
                "                continue\n"
                "            turn.text += (choice.get('delta') or {}).get('content') or ''\n"
                "            if choice.get('finish_reason'):\n"
                "                turn.finish_reason = choice['finish_reason']\n"
                "    return turn\n"
            ),
            note="hand-parsed OpenAI SSE: deltas after the choice's finish_reason are stray",
        ),
        Example(
            before=(
                "class Writer:\n"
                "    def write(self, data):\n"
                "        if self._closed:\n"
                "            raise ValueError('I/O operation on closed file')\n"
                "        self._buffer.append(data)\n"
                "\n"
                "    def close(self):\n"
                "        if self.closed:\n"
                "            return\n"
                "        self._closed = True\n"
            ),
            note="a file-like object's closed checks, no stream events",
        ),
        Example(
            before=(
                "def drain(tasks, events):\n"
                "    for task in tasks:\n"
                "        if task.done():\n"
                "            continue\n"
                "        task.cancel()\n"
                "    for event in events:\n"
                "        if event.closed:\n"
                "            log(event)\n"
            ),
            note="futures' done() and a closed test that does not skip the event",
        ),
        Example(
            before=(
                "class Relay:\n"
                "    def on_event(self, event):\n"
                "        if self.stop is not None:\n"
                "            return\n"
                "        if event.finish_time is not None:\n"
                "            return\n"
                "        if event.choices[0].finish_reason:\n"
                "            return\n"
                "        self.text += event.delta\n"
            ),
            note="a `stop` callback, a finish time, and the incoming event's own finish reason",
        ),
        Example(
            before=(
                "class Sequence:\n"
                "    def accept(self, event):\n"
                "        if self.ended:\n"
                "            raise StreamError('an event after the final end event')\n"
                "        if event.type == 'end':\n"
                "            self.ended = True\n"
            ),
            after=(
                "class Sequence:\n"
                "    def accept(self, event):\n"
                "        if False:\n"
                "            raise StreamError('an event after the final end event')\n"
                "        if event.type == 'end':\n"
                "            self.ended = True\n"
            ),
            note="a guard that refuses a straggler after the end with an error",
        ),
        Example(
            before=(
                "class Events:\n"
                "    def next_event(self, event):\n"
                "        if self.closed:\n"
                "            raise StopIteration\n"
                "        return event\n"
            ),
            note="an iterator that ends once closed: StopIteration is the end of reading, no refused event",
        ),
    )

    def find(self, ctx: SourceContext) -> Iterator[Mutation]:
        for node in ctx.nodes(cst.If):
            if node.orelse is not None or not handles_stream_events(ctx, node):
                continue
            if not (exits_early(node.body) or _refuses_late_event(node.body)):
                continue
            for site in condition_sites(node.test, lambda leaf: _already_closed(ctx, leaf)):
                # a late delta rewrites a closed block; a late chunk of an abandoned attempt is
                # streamed out: both are "taken in after the close"
                yield Mutation(
                    site, FALSE, f"guard `{ctx.code(site)}` removed: a late event is taken in after the close"
                )


def _refuses_late_event(body: cst.BaseSuite) -> bool:
    """``if self.ended: raise StreamError("event after its final end event")``: the guard refuses
    the straggler with an error instead of dropping it. Ending the iteration (``raise
    StopIteration``) is no refusal: it is how an iterator says it is done."""
    if not fails(body):
        return False
    return not (raised_names(body) & {"stop", "iteration"} >= {"stop", "iteration"})


def _already_closed(ctx: SourceContext, test: cst.BaseExpression) -> bool:
    """``block.closed``, ``index in self._closed``, ``index not in self._open``, ``not block.open``,
    ``self._done``, ``state.get("finished")``, ``block.is_closed()``, or a flag set when the
    end-of-turn marker arrived (``if self.saw_stop: return``)."""
    inner = negated(test)
    if inner is not None:
        return _state(inner, OPEN_WORDS)
    parts = single_comparison(test)
    if parts is not None and isinstance(parts[1], (cst.In, cst.NotIn)):
        return _state(parts[2], OPEN_WORDS if isinstance(parts[1], cst.NotIn) else CLOSED_WORDS)
    present = presence_of(test)
    if present is not None and (is_stop_flag(ctx, present) or _finished(ctx, test, present)):
        return True
    if present is test or (parts is not None and is_literal(parts[2], "True")):
        return _state(parts[0] if parts is not None else test, CLOSED_WORDS)
    return isinstance(test, cst.Call) and _state(test, CLOSED_WORDS)


def _finished(ctx: SourceContext, test: cst.BaseExpression, present: cst.BaseExpression) -> bool:
    """``turn.finish_reason is not None`` / ``if choice.finish_reason:``: the choice already got
    its finish reason, so what follows is a stray event; ``self.finished is not None``: a state
    named as ended, set once. A bare ``finish``/``stop`` counts only when compared with None and
    the file shows it holds a stop reason (a ``self.stop`` flag never does)."""
    if _incoming(ctx, present):
        return False  # ``if chunk.finish_reason: return`` skips the final chunk, not a stray one
    if is_reason_field(present):
        return True
    parts = single_comparison(test)
    if parts is None or not is_literal(parts[2], "None"):
        return False
    words = word_list(leaf_name(present))
    return bool(words) and (words[-1] in CLOSED_WORDS or is_stop_reason(ctx, present))


#: Names of what arrives with the event being handled, as opposed to the assembler's state.
_INCOMING_WORDS = STREAM_EVENT_WORDS | {"choice", "line", "data", "payload"}


def _incoming(ctx: SourceContext, expr: cst.BaseExpression) -> bool:
    """``expr`` reads the incoming event (``chunk.choices[0].finish_reason``, ``choice.get(...)``):
    named as an event/chunk/choice, or the target of an enclosing ``for``."""
    root = root_name(expr)
    if root is None or root in ("self", "cls"):
        return False
    words = word_list(root)
    if words and words[-1] in _INCOMING_WORDS:
        return True
    for loop in ctx.ancestors(expr):
        if isinstance(loop, cst.For) and root in {n.value for n in ctx.descendants(loop.target, m.Name())}:
            return True
    return False


def _state(expr: cst.BaseExpression, words: frozenset[str]) -> bool:
    """``expr`` reads a state named by ``words``; a call counts only as ``is_closed()`` (a bare
    ``done()`` is an asyncio future, not a block)."""
    if isinstance(expr, cst.Call) and leaf_name(expr) is None:
        name = leaf_name(expr.func) or ""
        return name.startswith(("is_", "_is_")) and bool(tokens(name) & words)
    return bool(tokens(leaf_name(expr)) & words)
