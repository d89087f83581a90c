"""accept-empty-response: the check that turns an empty model response into an error is removed.

A model (or a proxy in front of it) sometimes stops without producing anything: no content
blocks, no choices, empty text and no tool calls. Accepted silently, that degenerate reply is
written into history and every later turn pays for it; raised as an error, the retry layer gets
a chance to repair it.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.dataflow import bound_values
from mutagent.anatomy.exits import raised_names
from mutagent.anatomy.streams.clients import is_model_call
from mutagent.anatomy.streams.empty import handles_empty_reply, says_empty
from mutagent.anatomy.streams.release import streaming_producer
from mutagent.anatomy.syntax import (
    condition_leaves,
    condition_sites,
    is_literal,
    leaf_name,
    negated,
    parameters,
    root_name,
    single_comparison,
)
from mutagent.anatomy.vocabulary import tokens, word_list
from mutagent.mutation.context import SourceContext
from mutagent.mutation.operator import Example, Mutation, Operator
from mutagent.mutation.rewrite import FALSE, TRUE

#: Fields only a model response has (OpenAI ``choices``/``tool_calls``/``output_text``, Gemini
#: ``candidates``, Anthropic tool ``tool_use`` blocks, LangChain ``generations``).
RESPONSE_FIELDS = frozenset(
    (
        "choices candidates tool_calls tool_uses tool_use function_call output_text content_blocks "
        "generations"
    ).split()
)
#: Field and variable words a response shares with other data (``content``, ``text``...): they
#: count only with other evidence that the value came from a model.
CONTENT_WORDS = frozenset(
    (
        "content contents text texts output outputs parts blocks completion answer reply choices candidates "
        "calls uses"
    ).split()
)
#: Words of variables/classes holding a model reply, and of errors that talk about one.
RESPONSE_WORDS = frozenset(
    (
        "message msg response resp completion reply choice chunk chunks event events final assistant answer "
        "model llm turn assembled generation candidate stream delta deltas blocks choices json"
    ).split()
)
#: Words of an error about bad input (``"content is required"``, ``"must contain one item"``).
VALIDATION_WORDS = frozenset(
    "must required invalid unsupported support missing expected user argument arguments".split()
)
#: Words of an error about a missing reply (``EmptyResponseError``, ``"model returned no content"``);
#: "empty" alone is not enough (``ValueError("config is empty")``).
ERROR_WORDS = frozenset("response reply completion model assistant answer choices".split())
#: First words of boolean attributes: ``supports_text`` is a capability, not text.
FLAG_PREFIXES = frozenset("is supports support can should use allow enable enabled".split())
#: Roots of request-side data: an empty prompt or message list is an input error, not this bug.
REQUEST_WORDS = frozenset(
    (
        "request req prompt prompts params kwargs args config settings options user input inputs query "
        "arguments messages payload"
    ).split()
)
_EMPTY_LITERALS = (cst.List, cst.Tuple, cst.Dict, cst.SimpleString)


class AcceptEmptyResponse(Operator):
    name = "accept-empty-response"
    description = "The check that turns an empty model response into an error is removed."
    failure = (
        "A response with no content blocks / no choices / no text and no tool calls is accepted as "
        "an answer: an empty assistant message enters history instead of the turn being retried."
    )
    hint = (
        "Script a response that stops without any content (message_start, message_delta, message_stop "
        "only) and assert the agent retries it (a second request) or fails, never returns ''."
    )
    examples = (
        Example(
            before=(
                "def final_message(stream):\n"
                "    message = stream.get_final_message()\n"
                "    if not message.content:\n"
                "        raise EmptyResponse(message.id)\n"
                "    return message\n"
            ),
            after=(
                "def final_message(stream):\n"
                "    message = stream.get_final_message()\n"
                "    if False:\n"
                "        raise EmptyResponse(message.id)\n"
                "    return message\n"
            ),
            note="anthropic SDK message object",
        ),
        Example(
            before=(
                "async def ask(client, messages):\n"
                "    data = (await client.post('/v1/chat/completions', json={'messages': messages})).json()\n"
                "    if len(data.get('choices', [])) == 0:\n"
                "        raise ModelError('no choices in response')\n"
                "    return data['choices'][0]['message']\n"
            ),
            after=(
                "async def ask(client, messages):\n"
                "    data = (await client.post('/v1/chat/completions', json={'messages': messages})).json()\n"
                "    if False:\n"
                "        raise ModelError('no choices in response')\n"
                "    return data['choices'][0]['message']\n"
            ),
            note="raw httpx, OpenAI dicts, len(...) == 0",
        ),
        Example(
            before=(
                "from dataclasses import dataclass\n"
                "\n"
                "@dataclass\n"
                "class Turn:\n"
                "    text: str\n"
                "    tool_calls: list\n"
                "\n"
                "    def check(self):\n"
                "        if not self.text.strip() and not self.tool_calls:\n"
                "            raise EmptyTurnError()\n"
                "        return self\n"
            ),
            after=(
                "from dataclasses import dataclass\n"
                "\n"
                "@dataclass\n"
                "class Turn:\n"
                "    text: str\n"
                "    tool_calls: list\n"
                "\n"
                "    def check(self):\n"
                "        if False:\n"
                "            raise EmptyTurnError()\n"
                "        return self\n"
            ),
            note="dataclass: no text and no tool calls, the whole conjunction is one check",
        ),
        Example(
            before=(
                "def collect(events):\n"
                "    parts = [e.delta.text for e in events if e.type == 'content_block_delta']\n"
                "    assert parts, 'the model returned nothing'\n"
                "    return ''.join(parts)\n"
            ),
            after=(
                "def collect(events):\n"
                "    parts = [e.delta.text for e in events if e.type == 'content_block_delta']\n"
                "    assert True, 'the model returned nothing'\n"
                "    return ''.join(parts)\n"
            ),
            note="an assertion as the check",
        ),
        Example(
            before=(
                "def send(client, prompt, messages):\n"
                "    if not prompt:\n"
                "        raise ValueError('prompt must not be empty')\n"
                "    if not messages:\n"
                "        raise ValueError('messages required')\n"
                "    return client.messages.create(messages=messages + [prompt])\n"
            ),
            note="input validation of the request, not of the response",
        ),
        Example(
            before=(
                "def render(block, content):\n"
                "    if not content:\n"
                "        raise ValueError('content is required')\n"
                "    if not block.text:\n"
                "        return ''\n"
                "    return block.text\n"
            ),
            note="a parameter check, and an emptiness test that does not fail",
        ),
        Example(
            before=(
                "def step(llm, chat):\n"
                "    reply = llm.chat(chat)\n"
                "    text = reply.message.content\n"
                "    if not text:\n"
                "        note = 'Your previous response was empty. Answer or call a tool.'\n"
                "        return Retry(messages=[reply.message, note])\n"
                "    return parse(text)\n"
            ),
            after=(
                "def step(llm, chat):\n"
                "    reply = llm.chat(chat)\n"
                "    text = reply.message.content\n"
                "    if False:\n"
                "        note = 'Your previous response was empty. Answer or call a tool.'\n"
                "        return Retry(messages=[reply.message, note])\n"
                "    return parse(text)\n"
            ),
            note="an empty reply found by the truthiness of its text and answered with a corrective turn",
        ),
        Example(
            before=(
                "async def final(stream):\n"
                "    last_response = None\n"
                "    async for last_response in stream:\n"
                "        pass\n"
                "    if last_response is None:\n"
                "        raise ValueError('Got empty streaming response')\n"
                "    return last_response\n"
            ),
            after=(
                "async def final(stream):\n"
                "    last_response = None\n"
                "    async for last_response in stream:\n"
                "        pass\n"
                "    if False:\n"
                "        raise ValueError('Got empty streaming response')\n"
                "    return last_response\n"
            ),
            note="a whole reply missing, and the error says the response was empty",
        ),
        Example(
            before=(
                "def pick(response):\n"
                "    choice = response.choices[0] if response.choices else None\n"
                "    if choice is None:\n"
                "        raise ProviderError('no choice in the completion')\n"
                "    return choice\n"
            ),
            after=(
                "def pick(response):\n"
                "    choice = response.choices[0] if response.choices else None\n"
                "    if False:\n"
                "        raise ProviderError('no choice in the completion')\n"
                "    return choice\n"
            ),
            note="a choice read from a model response's choices, missing",
        ),
        Example(
            before=(
                "def wait_for(poll):\n"
                "    response = poll()\n"
                "    if response is None:\n"
                "        raise TimeoutError('no answer in time')\n"
                "    choice = input('pick one: ')\n"
                "    if choice is None:\n"
                "        raise ValueError('invalid choice')\n"
                "\n"
                "def relay(stream, out):\n"
                "    for delta in stream:\n"
                "        text = delta.content\n"
                "        if not text:\n"
                "            log.debug('empty delta')\n"
                "            continue\n"
                "        out.write(text)\n"
            ),
            note="a poll that timed out, a menu choice, and a skipped empty delta: no empty reply refused",
        ),
    )

    def find(self, ctx: SourceContext) -> Iterator[Mutation]:
        for node in ctx.nodes(cst.If):
            if handles_empty_reply(ctx, node.body):
                for site in condition_sites(node.test, lambda t, n=node: _empty_test(ctx, t, n.body)):
                    yield Mutation(site, FALSE, f"empty-response check `{ctx.code(site)}` removed")
        for node in ctx.nodes(cst.Assert):
            present = [leaf for leaf in condition_leaves(node.test) if _response_data(ctx, leaf, None)]
            if len(present) == len(list(condition_leaves(node.test))):
                yield Mutation(
                    node.test,
                    TRUE,
                    f"assertion `{ctx.code(node.test)}` that the response is not empty removed",
                )


def _empty_test(ctx: SourceContext, test: cst.BaseExpression, body: cst.BaseSuite) -> bool:
    """``not X``, ``len(X) == 0``, ``X == []``, ``not X.strip()``, ``not (X or Y)`` over response data."""
    inner = negated(test)
    if inner is not None:
        if isinstance(inner, cst.BooleanOperation) and isinstance(inner.operator, cst.Or):
            return all(_response_data(ctx, leaf, body) for leaf in condition_leaves(inner))
        return _response_data(ctx, inner, body)
    parts = single_comparison(test)
    if parts is None:
        return False
    left, op, right = parts
    if ctx.matches(left, m.Call(func=m.Name("len"), args=[m.Arg()])):
        zero = ctx.matches(right, m.Integer("0")) and isinstance(op, (cst.Equal, cst.LessThanEqual))
        below_one = ctx.matches(right, m.Integer("1")) and isinstance(op, cst.LessThan)
        return (zero or below_one) and _response_data(ctx, left.args[0].value, body)
    empty_literal = (
        isinstance(right, _EMPTY_LITERALS) and ctx.code(right) in ("[]", "()", "{}", "''", '""')
    ) or (is_literal(right, "None"))
    return empty_literal and isinstance(op, (cst.Equal, cst.Is)) and _response_data(ctx, left, body)


def _response_data(ctx: SourceContext, expr: cst.BaseExpression, body: cst.BaseSuite | None) -> bool:
    """Whether ``expr`` reads a model response's content: a field only responses have, or a
    content-like field/variable with evidence that it holds a model reply (its root, what it was
    assigned, or the error raised). A bare parameter counts only if the error names an empty
    response: otherwise it is input validation."""
    name = leaf_name(expr) or ""
    words = word_list(name) or [""]
    root = root_name(expr)
    if words[0] in FLAG_PREFIXES or tokens(root) & REQUEST_WORDS:
        return False
    if words[-1] not in CONTENT_WORDS:
        return _whole_reply(ctx, expr, body, words[-1], root)
    if name in RESPONSE_FIELDS:
        return True
    raised = raised_names(body) if body is not None else set()
    if raised & VALIDATION_WORDS:
        return False
    if name == root and root in parameters(ctx.enclosing_function(expr)):
        return "empty" in raised and bool(raised & ERROR_WORDS)
    if raised & ERROR_WORDS:
        return True
    evidence = set(tokens(root))
    if root in ("self", "cls"):
        owner = ctx.enclosing(expr, cst.ClassDef)
        evidence = tokens(owner.name.value) if owner is not None else set()
    values = bound_values(ctx, expr if isinstance(expr, cst.Name) else _root_node(expr))
    if any(is_model_call(v) or streaming_producer(ctx, v) for v in values):
        return True
    evidence |= {word for value in values for word in _words_of(ctx, value)}
    return bool(evidence & RESPONSE_WORDS)


#: Last words of a variable holding a whole reply (``last_response``, ``choice``, ``model_output``).
REPLY_WORDS = frozenset("response resp reply choice completion output message".split())


def _whole_reply(
    ctx: SourceContext, expr: cst.BaseExpression, body: cst.BaseSuite | None, last: str, root: str | None
) -> bool:
    """A whole reply (or a part the branch names) tested for emptiness, by converging evidence:
    its name says reply (``last_response``, ``choice``) and it was read from a model response
    (``choice = response.choices[0] if response.choices else None``) or the branch says the reply
    came back empty; or a field of a value named for model output (``model_output.action``)
    whose branch says it came back empty. An ``if response is None: raise TimeoutError(...)``
    that says nothing of emptiness, or a user's menu ``choice``, is not one."""
    if body is None:
        return False
    empty = says_empty(ctx, body)
    if last in REPLY_WORDS and (isinstance(expr, cst.Name) or root in ("self",)):
        values = bound_values(ctx, expr)
        if empty or any(
            is_model_call(v) or streaming_producer(ctx, v) or _words_of(ctx, v) & RESPONSE_FIELDS
            for v in values
        ):
            return True
    if empty and isinstance(expr, cst.Attribute) and root not in (None, "self", "cls"):
        return bool(tokens(root) & RESPONSE_WORDS) and bool(tokens(root) & {"model", "llm", "assistant"})
    return False


def _root_node(expr: cst.CSTNode) -> cst.CSTNode:
    while isinstance(expr, (cst.Attribute, cst.Subscript, cst.Call)):
        expr = expr.value if not isinstance(expr, cst.Call) else expr.func
    return expr


def _words_of(ctx: SourceContext, value: cst.CSTNode) -> set[str]:
    """Words of every name and string key in an expression (``resp.json()`` -> resp, json)."""
    words: set[str] = set()
    for node in ctx.descendants(value, m.Name() | m.SimpleString()):
        words |= tokens(node.value)
    return words
