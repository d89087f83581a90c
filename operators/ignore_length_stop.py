"""ignore-length-stop: a response cut by the output limit is treated as a complete answer.

When the model stops on ``max_tokens`` (OpenAI ``finish_reason == "length"``, Responses
``status == "incomplete"``, Gemini ``MAX_TOKENS``) the answer is cut mid-sentence, and a tool
call may be cut mid-argument. An agent must notice: continue, raise, or report it. Without that
check the truncated text becomes the final answer, and no happy-path test sees the difference.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.exits import fails, only_reports
from mutagent.anatomy.streams.stop_reasons import is_bare_reason_name, is_reason_field
from mutagent.anatomy.syntax import leaf_name, string_value
from mutagent.anatomy.vocabulary import (
    LENGTH_ENUM_MEMBERS,
    LENGTH_MARKERS,
    NORMAL_END_MARKERS,
    STOP_REASON_VALUES,
    tokens,
)
from mutagent.mutation.context import SourceContext
from mutagent.mutation.operator import Example, Mutation, Operator
from mutagent.mutation.rewrite import FALSE, TRUE, without_element

_POSITIVE = (cst.Equal, cst.Is)
_NEGATIVE = (cst.NotEqual, cst.IsNot)


class IgnoreLengthStop(Operator):
    name = "ignore-length-stop"
    description = "A response that stopped on the output limit (max_tokens/length) reads as complete."
    failure = (
        "A reply cut by max_tokens (finish_reason 'length', status 'incomplete') is returned as the "
        "final answer: truncated text, or a half-written tool call, is taken as the model's intent."
    )
    hint = (
        "Script a response whose stop_reason is max_tokens (finish_reason 'length') and assert the "
        "agent raises, continues or reports truncation instead of returning the partial text."
    )
    examples = (
        Example(
            before=(
                "def check(message):\n"
                "    if message.stop_reason == 'max_tokens':\n"
                "        raise OutputTruncated(message.usage.output_tokens)\n"
                "    return message\n"
            ),
            after=(
                "def check(message):\n"
                "    if False:\n"
                "        raise OutputTruncated(message.usage.output_tokens)\n"
                "    return message\n"
            ),
            note="anthropic message object",
        ),
        Example(
            before=(
                "async def answer(client, messages):\n"
                "    data = (await client.post('/chat/completions', json={'messages': messages})).json()\n"
                "    choice = data['choices'][0]\n"
                "    if choice['finish_reason'] in ('length', 'content_filter'):\n"
                "        return None\n"
                "    return choice['message']['content']\n"
            ),
            after=(
                "async def answer(client, messages):\n"
                "    data = (await client.post('/chat/completions', json={'messages': messages})).json()\n"
                "    choice = data['choices'][0]\n"
                "    if choice['finish_reason'] in ('content_filter',):\n"
                "        return None\n"
                "    return choice['message']['content']\n"
            ),
            note="raw async httpx, OpenAI dicts: 'length' leaves the tuple, content_filter stays checked",
        ),
        Example(
            before=(
                "FINISH = {\n"
                "    'end_turn': 'stop',\n"
                "    'tool_use': 'tool_calls',\n"
                "    'max_tokens': 'length',\n"
                "}\n"
            ),
            after=(
                "FINISH = {\n"
                "    'end_turn': 'stop',\n"
                "    'tool_use': 'tool_calls',\n"
                "    'max_tokens': 'stop',\n"
                "}\n"
            ),
            note="a dict literal mapping provider stop reasons onto neutral ones",
        ),
        Example(
            before=(
                "from anthropic.types import StopReason\n"
                "\n"
                "TO_OPENAI = dict(tool_use='tool_calls', max_tokens='length')\n"
                "FROM_ENUM = {StopReason.END_TURN: 'stop', StopReason.MAX_TOKENS: 'length'}\n"
            ),
            after=(
                "from anthropic.types import StopReason\n"
                "\n"
                "TO_OPENAI = dict(tool_use='tool_calls', max_tokens='stop')\n"
                "FROM_ENUM = {StopReason.END_TURN: 'stop', StopReason.MAX_TOKENS: 'length'}\n"
            ),
            note="a dict(...) table without a normal entry: 'length' becomes the normal 'stop'",
        ),
        Example(
            before=(
                "async def consume(events):\n"
                "    async for event in events:\n"
                "        if event.type == 'response.completed':\n"
                "            return event.response\n"
                "        elif getattr(event, 'type', None) in {'response.incomplete', 'response.failed'}:\n"
                "            raise TerminalFailure(event.type)\n"
            ),
            after=(
                "async def consume(events):\n"
                "    async for event in events:\n"
                "        if event.type == 'response.completed':\n"
                "            return event.response\n"
                "        elif getattr(event, 'type', None) in {'response.failed'}:\n"
                "            raise TerminalFailure(event.type)\n"
            ),
            note="the Responses API's response.incomplete terminal event, whatever holds the event type",
        ),
        Example(
            before=(
                "TERMINAL = ['response.completed', 'response.incomplete', 'response.failed']\n"
                "\n"
                "def check(event, text):\n"
                "    if not text and event.type != 'response.incomplete':\n"
                "        raise EmptyResponse(event)\n"
                "    return text\n"
            ),
            note="a list of event names, and a test that only exempts a cut response from another error",
        ),
        Example(
            before=(
                "def final_response(events):\n"
                "    for event in events:\n"
                "        if event.type in ('response.completed', 'response.incomplete'):\n"
                "            return event.response\n"
                "        if event.type == 'response.done' or event.type == 'response.incomplete':\n"
                "            return event.response\n"
            ),
            note="response.incomplete beside response.completed is one more way to end, not a length check",
        ),
        Example(
            before=(
                "from anthropic.types import StopReason\n"
                "\n"
                "FROM_ENUM = {StopReason.END_TURN: 'stop', StopReason.MAX_TOKENS: 'length'}\n"
            ),
            after=(
                "from anthropic.types import StopReason\n"
                "\n"
                "FROM_ENUM = {StopReason.END_TURN: 'stop', StopReason.MAX_TOKENS: 'stop'}\n"
            ),
            note="a table keyed by enum members named for the stop reasons",
        ),
        Example(
            before=(
                "OPENAI_TO_GEMINI = {\n"
                "    'max_tokens': 'max_output_tokens',\n"
                "    'temperature': 'temperature',\n"
                "    'top_p': 'top_p',\n"
                "    'stop': 'stop_sequences',\n"
                "}\n"
            ),
            note="a table renaming request parameters, keyed by 'max_tokens' and 'stop' among others",
        ),
        Example(
            before=("def done(response):\n    return response.status != 'incomplete'\n"),
            after=("def done(response):\n    return True\n"),
            note="OpenAI Responses status",
        ),
        Example(
            before=(
                "def route(reason):\n"
                "    match reason.stop_reason:\n"
                "        case 'end_turn':\n"
                "            return 'done'\n"
                "        case 'max_tokens':\n"
                "            return 'continue'\n"
            ),
            after=(
                "def route(reason):\n"
                "    match reason.stop_reason:\n"
                "        case 'end_turn':\n"
                "            return 'done'\n"
                "        case 'max_tokens' if False:\n"
                "            return 'continue'\n"
            ),
            note="match/case on the stop reason",
        ),
        Example(
            before=(
                "def stream_once(client, msgs):\n"
                "    reply = Reply()\n"
                "    for chunk in client.chat.completions.create(model='m', messages=msgs, stream=True):\n"
                "        if chunk.choices and chunk.choices[0].finish_reason:\n"
                "            reply.finish = chunk.choices[0].finish_reason\n"
                "    if reply.finish == 'length':\n"
                "        raise OutputLimitReached(reply.content[-80:])\n"
                "    return reply\n"
            ),
            after=(
                "def stream_once(client, msgs):\n"
                "    reply = Reply()\n"
                "    for chunk in client.chat.completions.create(model='m', messages=msgs, stream=True):\n"
                "        if chunk.choices and chunk.choices[0].finish_reason:\n"
                "            reply.finish = chunk.choices[0].finish_reason\n"
                "    if False:\n"
                "        raise OutputLimitReached(reply.content[-80:])\n"
                "    return reply\n"
            ),
            note="openai SDK stream, the reason kept under a bare `finish` attribute",
        ),
        Example(
            before=(
                "def request(prompt, key, limit):\n"
                "    body = {'model': 'm', 'max_tokens': 1024, 'stop': ['\\n']}\n"
                "    if key == 'length':\n"
                "        return len(prompt)\n"
                "    if body['max_tokens'] > limit:\n"
                "        raise ValueError('too long')\n"
                "    return body\n"
            ),
            note="request parameters and an unrelated 'length' key",
        ),
        Example(
            before=(
                "async def attempt(self, payload):\n"
                "    turn = await self.read(payload)\n"
                "    if not turn.text and not turn.calls and turn.finish_reason != 'length':\n"
                "        raise RetryableError('empty response')\n"
                "    if not turn.text and turn.stop not in ('length', 'max_tokens'):\n"
                "        raise EmptyReply()\n"
                "    return turn\n"
            ),
            note="`!= 'length'` only exempts a cut reply from the empty-response error "
            "(accept-empty-response mutates that check)",
        ),
        Example(
            before=("def ok(message):\n    return message.stop_reason in ('end_turn', 'tool_use')\n"),
            note="a stop-reason check that does not mention the output limit",
        ),
        Example(
            before=(
                "import logging\n"
                "\n"
                "def result(response):\n"
                "    if response.finish_reason == 'length':\n"
                "        logging.getLogger(__name__).warning('truncated; raise max_tokens')\n"
                "    return response\n"
            ),
            note="a length check that only logs a warning: the cut reply is returned either way",
        ),
    )

    def find(self, ctx: SourceContext) -> Iterator[Mutation]:
        for comparison in ctx.findall(m.Comparison(comparisons=[m.ComparisonTarget()])):
            yield from _comparison(ctx, comparison)
        for case in ctx.findall(m.MatchCase()):
            if _reasonish(ctx.parent(case).subject):  # type: ignore[union-attr]
                yield from _case(case)
        for mapping in ctx.findall(m.Dict() | m.Call(func=m.Name("dict"))):
            yield from _mapping(ctx, mapping)


def _case(case: cst.MatchCase) -> Iterator[Mutation]:
    """``case "max_tokens":`` never matches (a False guard); ``case "length" | "content_filter":``
    loses its ``"length"`` alternative."""
    pattern = case.pattern
    if _length_value(pattern):
        guard = case.with_changes(
            guard=FALSE,
            whitespace_before_if=cst.SimpleWhitespace(" "),
            whitespace_after_if=cst.SimpleWhitespace(" "),
        )
        yield Mutation(case, guard, "the case for a max_tokens/length stop never matches")
    elif isinstance(pattern, cst.MatchOr):
        for alternative in pattern.patterns:
            if _length_value(alternative.pattern):
                rest = [p for p in pattern.patterns if p is not alternative]
                if rest:
                    rest[-1] = rest[-1].with_changes(separator=cst.MaybeSentinel.DEFAULT)
                    label = f"{cst.Module([]).code_for_node(alternative.pattern)} leaves the case"
                    yield Mutation(
                        pattern, pattern.with_changes(patterns=rest), f"{label}: a cut reply passes"
                    )


def _length_value(node: cst.CSTNode) -> bool:
    """``"max_tokens"``/``"length"``/... or ``StopReason.MAX_TOKENS``/``FinishReason.LENGTH``."""
    if isinstance(node, cst.MatchValue):
        node = node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value in LENGTH_ENUM_MEMBERS
    value = string_value(node)
    return value is not None and (value in LENGTH_MARKERS or value == "incomplete")


def _reasonish(expr: cst.CSTNode) -> bool:
    """A stop/finish reason or a response status, or a bare ``finish``/``stop`` (``reply.finish``):
    every caller also requires a comparison with a length value, which makes that one a reason."""
    return (
        is_reason_field(expr)
        or is_bare_reason_name(expr)
        or bool(tokens(leaf_name(expr)) & {"reason", "status"})
    )


def _exempts_from_other_error(ctx: SourceContext, comparison: cst.Comparison) -> bool:
    """``if not turn.text and turn.finish_reason != "length": raise EmptyResponse``: the negative
    check only exempts a cut reply from another error. Making it always true does not ignore the
    length stop, it reports a cut reply as that other error (accept-empty-response and its kin
    cover the other check)."""
    node: cst.CSTNode = comparison
    parent = ctx.parent(node)
    if not isinstance(parent, cst.BooleanOperation):
        return False
    while isinstance(parent, cst.BooleanOperation):
        if not isinstance(parent.operator, cst.And):
            return False
        node, parent = parent, ctx.parent(parent)
    return isinstance(parent, cst.If) and parent.test is node and fails(parent.body)


def _comparison(ctx: SourceContext, comparison: cst.Comparison) -> Iterator[Mutation]:
    """``reason == "max_tokens"`` never true, ``reason != "length"`` always true, ``"length"``
    out of ``reason in ("length", "content_filter")``."""
    left, target = comparison.left, comparison.comparisons[0]
    op, right = target.operator, target.comparator
    if isinstance(op, (cst.In, cst.NotIn)) and isinstance(right, (cst.Tuple, cst.List, cst.Set)):
        events = [e for e in right.elements if string_value(e.value) in LENGTH_EVENTS]
        if events and any(_normal_end(e.value) for e in right.elements):
            # ``event.type in ("response.completed", "response.incomplete")``: the events that end
            # the stream, a cut one as well as a complete one: nothing here counts a response as
            # cut, so no mutant can say it no longer does
            return
        if events and not (isinstance(op, cst.NotIn) and _exempts_from_other_error(ctx, comparison)):
            # ``event.type in {"response.incomplete", "response.failed"}``: the terminal event that
            # says the output limit (or a filter) cut the response, whatever holds the type
            for element in events:
                smaller = without_element(right, element)
                label = f"{ctx.code(element.value)} no longer counts as a cut response"
                if smaller is None:
                    yield Mutation(comparison, FALSE if isinstance(op, cst.In) else TRUE, label)
                else:
                    yield Mutation(right, smaller, label)
            return
        if isinstance(op, cst.NotIn) and _exempts_from_other_error(ctx, comparison):
            return
        if not _reasonish(left) or any(string_value(e.value) in NORMAL_END_MARKERS for e in right.elements):
            return  # a set of every valid status ("completed", "incomplete", ...) is no length check
        for element in right.elements:
            if _length_value(element.value) and _matches_field(left, element.value):
                smaller = without_element(right, element)
                if smaller is None:
                    yield Mutation(
                        comparison, FALSE if isinstance(op, cst.In) else TRUE, "max_tokens stop ignored"
                    )
                else:
                    yield Mutation(
                        right, smaller, f"{ctx.code(element.value)} no longer counts as a truncated reply"
                    )
        return
    if not isinstance(op, _POSITIVE + _NEGATIVE):
        return
    if isinstance(op, _NEGATIVE) and _exempts_from_other_error(ctx, comparison):
        return
    if _beside_normal_end(ctx, comparison):
        return  # ``type == "response.completed" or type == "response.incomplete"``: no length check
    if _only_warns(ctx, comparison):
        return  # ``if reason == "length": log.warning(...)``: the cut reply passes either way
    for field, value in ((left, right), (right, left)):
        if string_value(value) in LENGTH_EVENTS or (
            _reasonish(field) and _length_value(value) and _matches_field(field, value)
        ):
            never = FALSE if isinstance(op, _POSITIVE) else TRUE
            yield Mutation(comparison, never, "the max_tokens/length stop check never fires")
            return


def _only_warns(ctx: SourceContext, comparison: cst.Comparison) -> bool:
    """The comparison is (a conjunct of) the test of an ``if`` without ``else`` whose body only
    logs: nothing is refused or continued, so "the check never fires" changes nothing."""
    node: cst.CSTNode = comparison
    parent = ctx.parent(node)
    while isinstance(parent, cst.BooleanOperation) and isinstance(parent.operator, cst.And):
        node, parent = parent, ctx.parent(parent)
    return (
        isinstance(parent, cst.If)
        and parent.test is node
        and parent.orelse is None
        and only_reports(parent.body)
    )


def _normal_end(node: cst.CSTNode) -> bool:
    """``"response.completed"``, ``"end_turn"``, ``"stop"``...: a value meaning a complete answer."""
    value = string_value(node)
    return value is not None and (value in NORMAL_END_EVENTS or value in NORMAL_END_MARKERS)


def _beside_normal_end(ctx: SourceContext, comparison: cst.Comparison) -> bool:
    """The comparison is one of a chain that lists the normal end too, on the same field and in
    the same sense: ``t == "response.completed" or t == "response.incomplete"`` (or ``t !=
    ... and t != ...``) accepts a cut response as one more way to finish; it is no length check,
    and a mutant of it would read inverted."""
    left, target = comparison.left, comparison.comparisons[0]
    wanted = cst.Or if isinstance(target.operator, _POSITIVE) else cst.And
    chain: cst.CSTNode = comparison
    parent = ctx.parent(chain)
    while isinstance(parent, cst.BooleanOperation) and isinstance(parent.operator, wanted):
        chain, parent = parent, ctx.parent(parent)
    if chain is comparison:
        return False
    field = ctx.code(left).strip()

    def leaves(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        if isinstance(node, cst.BooleanOperation) and isinstance(node.operator, wanted):
            yield from leaves(node.left)
            yield from leaves(node.right)
        else:
            yield node

    for leaf in leaves(chain):
        if leaf is comparison or not isinstance(leaf, cst.Comparison) or len(leaf.comparisons) != 1:
            continue
        other = leaf.comparisons[0]
        same_sense = isinstance(other.operator, _POSITIVE if wanted is cst.Or else _NEGATIVE)
        if same_sense and ctx.code(leaf.left).strip() == field and _normal_end(other.comparator):
            return True
    return False


def _matches_field(field: cst.CSTNode, value: cst.CSTNode) -> bool:
    """``"incomplete"`` is a status; the other markers are stop/finish reasons."""
    if string_value(value) == "incomplete":
        return "status" in tokens(leaf_name(field))
    return True


#: Terminal stream events that mean the output was cut (the Responses API's ``response.incomplete``
#: carries ``incomplete_details.reason == "max_output_tokens"``).
LENGTH_EVENTS = frozenset({"response.incomplete"})
#: Terminal stream events of a complete response, beside which ``response.incomplete`` is just
#: another way for the stream to end.
NORMAL_END_EVENTS = frozenset({"response.completed", "response.done", "message_stop"})
#: The normal end in the same vocabulary as a length value, for a table without a normal entry
#: (``{"tool_use": "tool_calls", "max_tokens": "length"}``).
_NORMAL_FOR = {
    "length": "stop",
    "max_tokens": "end_turn",
    "MAX_TOKENS": "STOP",
    "max_output_tokens": "completed",
}
#: Words of a value that stands for a cut reply: ``"length"``, ``"truncated"``, ``"incomplete"``.
_CUT_VALUE_WORDS = frozenset("length truncated truncation incomplete limit cut".split())


def _table_key(node: cst.CSTNode) -> str | None:
    """A table key as a stop reason: ``"max_tokens"``, or ``StopReason.MAX_TOKENS`` read as
    ``max_tokens`` (an enum member named for the reason)."""
    if isinstance(node, cst.Attribute):
        return node.attr.value.lower()
    return string_value(node)


def _table_entries(mapping: cst.Dict | cst.Call) -> list[tuple[str | None, cst.BaseExpression]]:
    """``{key: value}`` entries of a dict literal, or the keywords of ``dict(end_turn=..., ...)``."""
    if isinstance(mapping, cst.Dict):
        return [(_table_key(e.key), e.value) for e in mapping.elements if isinstance(e, cst.DictElement)]
    return [(arg.keyword.value, arg.value) for arg in mapping.args if arg.keyword is not None]


def _reason_value(node: cst.CSTNode) -> bool:
    """What a stop-reason table maps a reason to: another reason (``"length"``), a word for a cut
    reply (``"truncated"``), an enum member (``FinishReason.LENGTH``) -- not a request parameter
    (``"max_output_tokens"`` in a parameter-renaming table is keyed by ``"max_tokens"`` too)."""
    if isinstance(node, cst.Attribute):
        return True
    value = string_value(node)
    return value is not None and (value in STOP_REASON_VALUES or bool(tokens(value) & _CUT_VALUE_WORDS))


def _mapping(ctx: SourceContext, mapping: cst.Dict | cst.Call) -> Iterator[Mutation]:
    """``{"end_turn": "stop", "max_tokens": "length"}`` (or ``dict(...)``, or enum keys): the
    length entry maps to the normal end. Only a table most of whose keys are stop reasons is one
    (``{"max_tokens": "max_output_tokens", "stop": "stop_sequences", ...}`` renames parameters)."""
    entries = [(key, value) for key, value in _table_entries(mapping) if key is not None]
    reasons = [key for key, _ in entries if key in STOP_REASON_VALUES or key.upper() in STOP_REASON_VALUES]
    if len(reasons) < 2 or 2 * len(reasons) <= len(entries):
        return
    normal = next((value for key, value in entries if key in NORMAL_END_MARKERS), None)
    if normal is not None and not isinstance(normal, (cst.SimpleString, cst.Attribute, cst.Name)):
        return
    for key, value in entries:
        if key not in LENGTH_MARKERS and key.upper() not in LENGTH_ENUM_MEMBERS:
            continue
        if not isinstance(value, (cst.SimpleString, cst.Attribute)) or not _reason_value(value):
            continue
        target = normal
        if target is None:
            default = _NORMAL_FOR.get(string_value(value) or "")
            if default is None:
                continue
            target = cst.SimpleString(repr(default))
        if ctx.code(value) != ctx.code(target):
            yield Mutation(value, target, f"stop reason {key!r} maps to the normal end ({ctx.code(target)})")
