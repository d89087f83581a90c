"""truncate-tool-results: the content sent back as a tool result is cut to its first 10 characters.

The model can only reason about what the loop hands back. A loop that shortens, summarises or
mangles tool output makes the model answer from a fragment -- and a test that only checks "a
tool result was sent" or "the final answer came back" never notices. Only a test that compares
the tool result the fake model server received with what the tool produced kills this.

Recognised: the ``content``/``output`` of every tool result construct (see ``_tools``: Anthropic
``tool_result`` blocks and ``ToolResultBlockParam``, OpenAI ``role: "tool"`` messages, Responses
``function_call_output`` items, MCP ``CallToolResult``, langchain ``ToolMessage``, same-shaped
dataclasses, pydantic models and TypedDicts), including content assigned into the dict later
(``response["content"] = str(out)``). Text is sliced where it is given; list-of-blocks content
-- a literal, a comprehension, a local list (annotated ``list[...]``, or built with ``append``)
-- has the ``text`` of its text blocks sliced instead. Constants (``"ok"``, ``PLACEHOLDER``) and
calls that return data (``model_dump()``) are left alone: slicing them cuts no tool's text.

Also recognised (see ``mutagent.anatomy.tools.results``): a message that keeps ``content=""`` and
the output in a field of its own (``FunctionCallingMessage(result=...)``), a tool's output object
without a call id (``ToolOutput(content=...)``), a result object's ``value`` field, a Gemini
function response (its dict payload has each value's text cut), an observation step built from a
tool's output, a tool's output filed under an observation key (``trajectory[f"observation_{i}"]
= tools[name](...)``) and tool outputs collected for a builder of results. A record of the call
handed back to the caller (``ToolCallingRecord``) is not what the model reads."""

from __future__ import annotations

import re
from collections.abc import Iterator

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.dataflow import local_values
from mutagent.anatomy.syntax import final_name, final_name_or_key, is_constant, walk
from mutagent.anatomy.tools.results import (
    dict_payload,
    observation_slots,
    summarised_outputs,
    text_values,
    tool_results,
)
from mutagent.mutation.context import SourceContext
from mutagent.mutation.operator import Example, Mutation, Operator
from mutagent.mutation.rewrite import first_chars

_CONTAINERS = (
    cst.List,
    cst.ListComp,
    cst.Tuple,
    cst.Dict,
    cst.DictComp,
    cst.Set,
    cst.SetComp,
    cst.GeneratorExp,
)


#: Calls that return Python data (dicts, lists), which slicing would not cut as text.
_STRUCTURED = frozenset(
    ("model_dump dict to_dict asdict dump_python list tuple items values keys copy").split()
)


def _appended(ctx: SourceContext, name: cst.Name) -> list[cst.BaseExpression]:
    """What is added to the list ``name`` in its function: ``name.append(x)``, ``name.extend(xs)``,
    ``name += xs``."""
    scope = ctx.enclosing_function(name) or ctx.module
    found: list[cst.BaseExpression] = []
    for node in walk(scope):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.args:
            if node.func.attr.value in ("append", "extend", "insert") and m.matches(
                node.func.value, m.Name(name.value)
            ):
                found.append(node.args[-1].value)
        elif isinstance(node, cst.AugAssign) and m.matches(node.target, m.Name(name.value)):
            found.append(node.value)
    return found


def _declared_as_blocks(ctx: SourceContext, name: cst.Name) -> bool:
    """``content: list[TextBlockParam]`` (a parameter or an annotated assignment in the function):
    the value is a list of blocks, so slicing it would cut blocks, not text."""
    scope = ctx.enclosing_function(name)
    if scope is None:
        return False
    annotations = [p.annotation for p in scope.params.params if p.name.value == name.value and p.annotation]
    annotations += [
        n.annotation
        for n in walk(scope.body)
        if isinstance(n, cst.AnnAssign) and m.matches(n.target, m.Name(name.value))
    ]
    texts = [ctx.code(a.annotation) for a in annotations]
    return any(
        re.search(r"\b(list|List|Sequence|Iterable)\b", t) and not re.search(r"\bstr\b", t) for t in texts
    )


def _values_cut(payload: cst.BaseExpression) -> cst.DictComp:
    """``{k: str(v)[:10] for k, v in payload.items()}``: every value's text cut."""
    source = cst.Module([]).code_for_node(payload)
    cut = cst.parse_expression(f"{{k: str(v)[:10] for k, v in ({source}).items()}}")
    return cst.ensure_type(cut, cst.DictComp)


def _text_targets(
    ctx: SourceContext, content: cst.BaseExpression, opaque: bool, depth: int = 0
) -> list[cst.BaseExpression]:
    """The expressions whose text reaches the model: the text of the content's text blocks when
    it is (or was built as) a list of blocks, else the content itself when it may be text
    (``opaque``: not for MCP, whose content is always a list of blocks)."""
    leaf = final_name_or_key(content) if isinstance(content, (cst.Name, cst.Attribute)) else None
    if is_constant(content) or (leaf and leaf.isupper()):
        return []  # a constant (``"done"``, ``PLACEHOLDER``): cutting it changes nothing the tool did
    if isinstance(content, cst.Name) and _fed_constants_only(ctx, content):
        return []  # ``def _status_part(self, call, content)`` only ever given fixed status texts
    if isinstance(content, cst.Call) and final_name(content) in _STRUCTURED:
        return []  # ``model_dump()``/``to_dict()`` hand back data, not text
    texts = text_values(ctx, content)
    if texts or isinstance(content, _CONTAINERS):
        return [text for text in texts if not is_constant(text)]
    if isinstance(content, cst.Name) and depth < 3:
        values = local_values(ctx, content)
        if any(isinstance(value, _CONTAINERS) for value in values) or _declared_as_blocks(ctx, content):
            built = [target for value in values for target in _text_targets(ctx, value, opaque, depth + 1)]
            added = [text for value in _appended(ctx, content) for text in text_values(ctx, value)]
            return built + [text for text in added if not is_constant(text)]
    return [content] if opaque else []


def _constant(ctx: SourceContext, expr: cst.BaseExpression, depth: int = 0) -> bool:
    """A literal, an UPPER_CASE constant, a choice between constants, or a local bound only to those."""
    if is_constant(expr):
        return True
    if isinstance(expr, (cst.Name, cst.Attribute)) and (final_name_or_key(expr) or "").isupper():
        return True
    if isinstance(expr, cst.IfExp):
        return _constant(ctx, expr.body, depth) and _constant(ctx, expr.orelse, depth)
    if isinstance(expr, cst.Name) and depth < 2:
        values = local_values(ctx, expr)
        return bool(values) and all(_constant(ctx, value, depth + 1) for value in values)
    return False


def _fed_constants_only(ctx: SourceContext, content: cst.Name) -> bool:
    """``content`` is a parameter of its function, and every call of that function in this file
    passes it a constant: the text is the framework's own, not what a tool produced."""
    func = ctx.enclosing_function(content)
    if func is None or local_values(ctx, content):
        return False
    params = [*func.params.posonly_params, *func.params.params]
    names = [p.name.value for p in params]
    if content.value not in names:
        return False
    position = names.index(content.value)
    fed: list[cst.BaseExpression] = []
    for call in ctx.nodes(cst.Call):
        if final_name(call) != func.name.value:
            continue
        offset = 1 if isinstance(call.func, cst.Attribute) and names[:1] in (["self"], ["cls"]) else 0
        keyword = next((a.value for a in call.args if a.keyword and a.keyword.value == content.value), None)
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        value = (
            keyword
            if keyword is not None
            else (positional[position - offset] if 0 <= position - offset < len(positional) else None)
        )
        if value is None:
            return False
        fed.append(value)
    return bool(fed) and all(_constant(ctx, value) for value in fed)


class TruncateToolResults(Operator):
    name = "truncate-tool-results"
    description = "The content sent back as a tool result is cut to its first 10 characters."
    failure = (
        "The model receives only the first 10 characters of what the tool produced, so it answers "
        "from a fragment (or calls the tool again) while the loop looks perfectly healthy."
    )
    hint = (
        "Have a tool return a long, distinctive text and assert the tool result in the next request "
        "the fake model server received equals it in full (not just that a tool result was sent)."
    )
    examples = (
        Example(
            before=(
                "def run_tools(response, tools):\n"
                "    results = []\n"
                "    for block in response.content:\n"
                '        if block.type == "tool_use":\n'
                "            output = tools[block.name](**block.input)\n"
                "            results.append({\n"
                '                "type": "tool_result",\n'
                '                "tool_use_id": block.id,\n'
                '                "content": [{"type": "text", "text": str(output)}],\n'
                "            })\n"
                '    return {"role": "user", "content": results}\n'
            ),
            after=(
                "def run_tools(response, tools):\n"
                "    results = []\n"
                "    for block in response.content:\n"
                '        if block.type == "tool_use":\n'
                "            output = tools[block.name](**block.input)\n"
                "            results.append({\n"
                '                "type": "tool_result",\n'
                '                "tool_use_id": block.id,\n'
                '                "content": [{"type": "text", "text": str(output)[:10]}],\n'
                "            })\n"
                '    return {"role": "user", "content": results}\n'
            ),
            note="Anthropic tool_result dict with list-of-blocks content: the text is cut",
        ),
        Example(
            before=(
                "import json\n\n"
                "async def answer_tool_calls(message, registry):\n"
                "    replies = []\n"
                "    for call in message.tool_calls:\n"
                "        result = await registry[call.function.name](**json.loads(call.function.arguments))\n"
                '        replies.append({"role": "tool", "tool_call_id": call.id, "content": '
                "json.dumps(result)})\n"
                "    return replies\n"
            ),
            after=(
                "import json\n\n"
                "async def answer_tool_calls(message, registry):\n"
                "    replies = []\n"
                "    for call in message.tool_calls:\n"
                "        result = await registry[call.function.name](**json.loads(call.function.arguments))\n"
                '        replies.append({"role": "tool", "tool_call_id": call.id, "content": '
                "json.dumps(result)[:10]})\n"
                "    return replies\n"
            ),
            note='OpenAI Chat Completions role:"tool" message, async tool runner',
        ),
        Example(
            before=(
                "def tool_outputs(response, run):\n"
                "    return [\n"
                '        {"type": "function_call_output", "call_id": item.call_id, "output": run(item.name, '
                "item.arguments)}\n"
                "        for item in response.output\n"
                '        if item.type == "function_call"\n'
                "    ]\n"
            ),
            after=(
                "def tool_outputs(response, run):\n"
                "    return [\n"
                '        {"type": "function_call_output", "call_id": item.call_id, "output": run(item.name, '
                "item.arguments)[:10]}\n"
                "        for item in response.output\n"
                '        if item.type == "function_call"\n'
                "    ]\n"
            ),
            note="Responses API function_call_output item in a comprehension",
        ),
        Example(
            before=(
                "from dataclasses import dataclass\n\n"
                "@dataclass\n"
                "class ToolResult:\n"
                "    tool_use_id: str\n"
                "    content: str\n"
                "    is_error: bool = False\n\n"
                "def execute(call, handlers):\n"
                "    text = handlers[call.name](call.input)\n"
                "    return ToolResult(call.id, text)\n"
            ),
            after=(
                "from dataclasses import dataclass\n\n"
                "@dataclass\n"
                "class ToolResult:\n"
                "    tool_use_id: str\n"
                "    content: str\n"
                "    is_error: bool = False\n\n"
                "def execute(call, handlers):\n"
                "    text = handlers[call.name](call.input)\n"
                "    return ToolResult(call.id, text[:10])\n"
            ),
            note="the project's own dataclass, built positionally",
        ),
        Example(
            before=(
                "from anthropic.types import ToolResultBlockParam\n\n"
                "def to_param(block, out: str) -> ToolResultBlockParam:\n"
                '    return ToolResultBlockParam(type="tool_result", tool_use_id=block.id, content=out)\n'
            ),
            after=(
                "from anthropic.types import ToolResultBlockParam\n\n"
                "def to_param(block, out: str) -> ToolResultBlockParam:\n"
                '    return ToolResultBlockParam(type="tool_result", tool_use_id=block.id, '
                "content=out[:10])\n"
            ),
            note="the anthropic SDK's TypedDict constructor",
        ),
        Example(
            before=(
                "def step(call, tools):\n"
                "    observation = tools[call.name].run(call.args)\n"
                "    return StepResult(call_id=call.id, observation=observation)\n"
            ),
            after=(
                "def step(call, tools):\n"
                "    observation = tools[call.name].run(call.args)\n"
                "    return StepResult(call_id=call.id, observation=observation[:10])\n"
            ),
            note="a result object whose payload field is named for what the tool returned (observation)",
        ),
        Example(
            before=(
                "def plan(message):\n"
                "    return [ToolCall(call_id=c.id, name=c.function.name, arguments=c.function.arguments)\n"
                "            for c in message.tool_calls]\n"
            ),
            note="a call object carries an id and arguments, but nothing a tool produced",
        ),
        Example(
            before=(
                "def turn(history, prompt, reply):\n"
                '    history.append({"role": "user", "content": prompt})\n'
                '    history.append({"role": "assistant", "content": reply.text, "tool_calls": '
                "reply.calls})\n"
                '    history.append({"type": "tool_use", "id": reply.id, "name": reply.name, "input": '
                "reply.input})\n"
            ),
            note="user/assistant messages and a tool_use block carry content, but no tool result",
        ),
        Example(
            before=(
                "def record(journal, call, output, is_error):\n"
                '    journal.record("tool", tool_use_id=call.id, content=output, is_error=is_error)\n'
                '    return {"type": "tool_result", "tool_use_id": call.id, "content": "done"}\n'
            ),
            note="a journal call that mentions the fields, and a tool result whose content is a constant",
        ),
        Example(
            before=(
                "def _status(call, content):\n"
                "    return {'type': 'tool_result', 'tool_use_id': call.id, 'content': content}\n"
                "\n"
                "def done(call):\n"
                "    return _status(call, FINAL_RESULT_PROCESSED)\n"
                "\n"
                "def skipped(call, won):\n"
                "    message = ALREADY_PROCESSED if won else NOT_THE_FINAL_RESULT\n"
                "    return _status(call, message)\n"
            ),
            note="a helper's content parameter that every caller in the file feeds a fixed status text",
        ),
        Example(
            before=(
                "import json\n\n"
                "def end_tool_span(self, span, call, output):\n"
                "    self._add_event(\n"
                "        span,\n"
                "        'gen_ai.tool.message',\n"
                "        event_attributes={'role': 'tool', 'content': json.dumps(output), 'id': call.id},\n"
                "    )\n"
                "    span.add_event('tool', {'role': 'tool', 'tool_call_id': call.id, 'content': output})\n"
            ),
            note="a tool message recorded on a trace span: a copy for observability, not the model's",
        ),
        Example(
            before=(
                "def record_tool_calling(self, func_name, result, tool_call_id):\n"
                "    msg = FunctionCallingMessage(role_name=self.role, content='', func_name=func_name,\n"
                "                                 result=result, tool_call_id=tool_call_id)\n"
                "    self.update_memory(msg)\n"
            ),
            after=(
                "def record_tool_calling(self, func_name, result, tool_call_id):\n"
                "    msg = FunctionCallingMessage(role_name=self.role, content='', func_name=func_name,\n"
                "                                 result=result[:10], tool_call_id=tool_call_id)\n"
                "    self.update_memory(msg)\n"
            ),
            note="a message that keeps its content empty and the tool's output in a field of its own",
        ),
        Example(
            before=(
                "def call(self, *args, **kwargs):\n"
                "    raw = self._fn(*args, **kwargs)\n"
                "    return ToolOutput(content=str(raw), tool_name=self.name, raw_output=raw)\n"
            ),
            after=(
                "def call(self, *args, **kwargs):\n"
                "    raw = self._fn(*args, **kwargs)\n"
                "    return ToolOutput(content=str(raw)[:10], tool_name=self.name, raw_output=raw)\n"
            ),
            note="a tool's output object without a call id: its content is what the agent shows the model",
        ),
        Example(
            before=(
                "def store(text, func_name, result, tool_call_id):\n"
                "    doc = Document(content=text, is_error=False)\n"
                "    return doc, ToolCallingRecord(tool_name=func_name, result=result, "
                "tool_call_id=tool_call_id)\n"
            ),
            note="a Document (not named for a tool) and a record handed back to the caller",
        ),
        Example(
            before=(
                "from google.genai import types\n\n"
                "def function_response_parts(calls, function_map):\n"
                "    parts = []\n"
                "    for call in calls:\n"
                "        try:\n"
                "            response = {'result': function_map[call.name](**call.args)}\n"
                "        except Exception as e:\n"
                "            response = {'error': str(e)}\n"
                "        parts.append(types.Part.from_function_response(name=call.name, response=response))\n"
                "    return parts\n"
            ),
            after=(
                "from google.genai import types\n\n"
                "def function_response_parts(calls, function_map):\n"
                "    parts = []\n"
                "    for call in calls:\n"
                "        try:\n"
                "            response = {'result': function_map[call.name](**call.args)}\n"
                "        except Exception as e:\n"
                "            response = {'error': str(e)}\n"
                "        parts.append(types.Part.from_function_response(name=call.name, "
                "response={k: str(v)[:10] for k, v in (response).items()}))\n"
                "    return parts\n"
            ),
            note="a Gemini function response: its dict payload has each value's text cut",
        ),
        Example(
            before=(
                "from google.genai import types\n\n"
                "def ask_again(call_name, args):\n"
                "    return types.Part(function_call=types.FunctionCall(name=call_name, args=args))\n"
            ),
            note="a Gemini function call (not its response) names the function too",
        ),
        Example(
            before=(
                "def forward(self, trajectory, pred, idx):\n"
                "    try:\n"
                '        trajectory[f"observation_{idx}"] = self.tools[pred.tool](**pred.args)\n'
                "    except Exception as err:\n"
                '        trajectory[f"observation_{idx}"] = f"Execution error: {err}"\n'
            ),
            after=(
                "def forward(self, trajectory, pred, idx):\n"
                "    try:\n"
                '        trajectory[f"observation_{idx}"] = self.tools[pred.tool](**pred.args)[:10]\n'
                "    except Exception as err:\n"
                '        trajectory[f"observation_{idx}"] = f"Execution error: {err}"\n'
            ),
            note="a ReAct trajectory files the tool's output under an observation key the prompt renders",
        ),
        Example(
            before=(
                "def results(tool_calls, values, is_errors):\n"
                "    return [ToolCallResult(call_id=c.id, name=c.name, value=v, is_error=e)\n"
                "            for c, v, e in zip(tool_calls, values, is_errors)]\n"
            ),
            after=(
                "def results(tool_calls, values, is_errors):\n"
                "    return [ToolCallResult(call_id=c.id, name=c.name, value=v[:10], is_error=e)\n"
                "            for c, v, e in zip(tool_calls, values, is_errors)]\n"
            ),
            note="a result object named for the output keeps the tool's return in a value field",
        ),
        Example(
            before=(
                "def think(self, trajectory, idx, prompt):\n"
                '    trajectory[f"observation_{idx}"] = self.model.generate(prompt)\n'
                '    trajectory["output_tokens"] = self.tools.run_count(prompt)\n'
                "    return ToolCall(call_id=idx, name='search', value=prompt)\n"
            ),
            note="a model's text under an observation key, a token count, a call (not a result) with a value",
        ),
        Example(
            before=(
                "def execute_tool_calls(self, tool_calls):\n"
                "    values = []\n"
                "    for call in tool_calls:\n"
                "        value = self.tools[call.name](**call.args)\n"
                "        values.append(value)\n"
                "    return ToolCallResults.from_calls_and_values(tool_calls, values)\n"
            ),
            after=(
                "def execute_tool_calls(self, tool_calls):\n"
                "    values = []\n"
                "    for call in tool_calls:\n"
                "        value = self.tools[call.name](**call.args)\n"
                "        values.append(value[:10])\n"
                "    return ToolCallResults.from_calls_and_values(tool_calls, values)\n"
            ),
            note="tool outputs collected one per call and handed to the builder of the results",
        ),
        Example(
            before=(
                "def handle_tool_call_results(self, results, reasoning):\n"
                "    for r in results:\n"
                "        reasoning.append(ObservationStep(observation=str(r.tool_output.content)))\n"
            ),
            after=(
                "def handle_tool_call_results(self, results, reasoning):\n"
                "    for r in results:\n"
                "        reasoning.append(ObservationStep(observation=str(r.tool_output.content)[:10]))\n"
            ),
            note="a ReAct observation step built from a tool's output",
        ),
        Example(
            before=(
                "def timings(self, tool_calls, log):\n"
                "    durations = []\n"
                "    for call in tool_calls:\n"
                "        value = self.tools[call.name](**call.args)\n"
                "        durations.append(value)\n"
                "    log.info('ran %d tools', len(durations))\n"
                "    return ObservationStep(observation=self.model.reply_text)\n"
            ),
            note="tool values only counted, and an observation made from the model's reply",
        ),
        Example(
            before=(
                "def summarize(calls_and_results, template):\n"
                "    def fmt(call: FunctionCall, result: FunctionExecutionResult) -> str:\n"
                "        return template.format(tool_name=call.name, result=result.content)\n"
                "\n"
                "    return '\\n'.join(fmt(c, r) for c, r in calls_and_results)\n"
            ),
            after=(
                "def summarize(calls_and_results, template):\n"
                "    def fmt(call: FunctionCall, result: FunctionExecutionResult) -> str:\n"
                "        return template.format(tool_name=call.name, result=result.content[:10])\n"
                "\n"
                "    return '\\n'.join(fmt(c, r) for c, r in calls_and_results)\n"
            ),
            note="a summary step renders each tool result's output into the text the model is shown",
        ),
        Example(
            before=(
                "def describe(reply: ChatResult, template) -> str:\n"
                "    return template.format(result=reply.content)\n"
                "\n"
                "def failed(result: FunctionExecutionResult) -> bool:\n"
                "    return result.content == 'error'\n"
            ),
            note="a model reply's content rendered, and a tool result's content only compared",
        ),
        Example(
            before=(
                "def step(self, requests):\n"
                "    tool_call_records = []\n"
                "    for request in requests:\n"
                "        record = self.execute_tool(request)\n"
                "        tool_call_records.append(record)\n"
                "    return ChatAgentResponse(self.msgs, tool_call_records)\n"
            ),
            note="records of the calls collected for the caller's info, not outputs shown to the model",
        ),
    )

    def find(self, ctx: SourceContext) -> Iterator[Mutation]:
        for shown in summarised_outputs(ctx):
            cut = "the tool output in the summary shown to the model is cut to its first 10 characters"
            yield Mutation(shown, first_chars(shown), cut)
        for observed in observation_slots(ctx):
            cut = "the tool's output, as the model is shown it, is cut to its first 10 characters"
            yield Mutation(observed, first_chars(observed), cut)
        for result in tool_results(ctx):
            may_be_text = result.dialect != "mcp"  # MCP content is always a list of blocks
            for content in result.contents:
                if result.dialect == "gemini" and dict_payload(ctx, content):
                    cut = f"{result.label} {result.content_key} values cut to their first 10 characters"
                    yield Mutation(content, _values_cut(content), cut)
                    continue
                for target in _text_targets(ctx, content, may_be_text):
                    description = f"{result.label} {result.content_key} cut to its first 10 characters"
                    yield Mutation(target, first_chars(target), description)
