"""mismatch-tool-call-id: the id sent back with a tool result no longer matches the call it answers.

Every provider pairs a tool result with its call by id (``tool_use_id``, ``tool_call_id``,
``call_id``). A loop that echoes the wrong id -- a stale variable, the message id, the id of the
previous call in a parallel batch -- gets a 400 from the real API or, worse, makes the model
attribute one tool's output to another. Tests that only look at result text never see it.

Recognised: the id field of every tool result construct (see ``_tools``): ``tool_use_id`` of
Anthropic ``tool_result`` blocks/``ToolResultBlockParam``, ``tool_call_id`` of OpenAI
``role: "tool"`` messages (also langchain's ``ToolMessage``), ``call_id`` of Responses
``function_call_output`` items, and the same fields of the project's own dataclasses, pydantic
models and TypedDicts (by keyword, or by position when the class is defined in the file). The
ids of the *calls* themselves (``tool_use`` blocks, ``function_call`` items) are never touched.
Also: a ``role: "tool"`` message whose id sits in its extra fields (``additional_kwargs=
{"tool_call_id": ...}``), a tool's result object naming its call by a ``tool_id`` field
(``ToolCallResult``), and a Gemini function response, paired with its call by the function's
``name`` (or ``id``). A record of the call handed back to the caller (``ToolCallingRecord``) is
not what the model reads.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.tools.results import tool_results
from mutagent.mutation.context import SourceContext
from mutagent.mutation.operator import Example, Mutation, Operator
from mutagent.mutation.rewrite import atom


class MismatchToolCallId(Operator):
    name = "mismatch-tool-call-id"
    description = "The id sent back with a tool result no longer matches the id of its call."
    failure = (
        "A tool result is echoed under an id the model never issued, so the real API rejects the "
        "request or the model pairs the output with the wrong call."
    )
    hint = (
        "Script a turn with two tool calls and assert each tool result in the next request carries "
        "exactly the id of the call it answers (the fake server's pairing invariant does this too)."
    )
    examples = (
        Example(
            before=(
                "def run_tools(message, tools):\n"
                "    return [\n"
                '        {"type": "tool_result", "tool_use_id": block.id, "content": '
                "tools[block.name](**block.input)}\n"
                "        for block in message.content\n"
                '        if block.type == "tool_use"\n'
                "    ]\n"
            ),
            after=(
                "def run_tools(message, tools):\n"
                "    return [\n"
                '        {"type": "tool_result", "tool_use_id": block.id + "x", "content": '
                "tools[block.name](**block.input)}\n"
                "        for block in message.content\n"
                '        if block.type == "tool_use"\n'
                "    ]\n"
            ),
            note="Anthropic tool_result dict",
        ),
        Example(
            before=(
                "from langchain_core.messages import ToolMessage\n\n"
                "async def answer(tool_calls, tools):\n"
                "    out = []\n"
                "    for tc in tool_calls:\n"
                '        value = await tools[tc["name"]].ainvoke(tc["args"])\n'
                '        out.append(ToolMessage(content=str(value), tool_call_id=tc["id"]))\n'
                "    return out\n"
            ),
            after=(
                "from langchain_core.messages import ToolMessage\n\n"
                "async def answer(tool_calls, tools):\n"
                "    out = []\n"
                "    for tc in tool_calls:\n"
                '        value = await tools[tc["name"]].ainvoke(tc["args"])\n'
                '        out.append(ToolMessage(content=str(value), tool_call_id=tc["id"] + "x"))\n'
                "    return out\n"
            ),
            note="OpenAI-style tool message as a pydantic model, async runner",
        ),
        Example(
            before=(
                "def outputs(response, dispatch):\n"
                "    items = []\n"
                "    for item in response.output:\n"
                '        if item.type == "function_call":\n'
                '            items.append(dict(type="function_call_output", call_id=item.call_id, '
                "output=dispatch(item)))\n"
                "    return items\n"
            ),
            after=(
                "def outputs(response, dispatch):\n"
                "    items = []\n"
                "    for item in response.output:\n"
                '        if item.type == "function_call":\n'
                '            items.append(dict(type="function_call_output", call_id=item.call_id + "x", '
                "output=dispatch(item)))\n"
                "    return items\n"
            ),
            note="Responses API item built with dict(...)",
        ),
        Example(
            before=(
                "from dataclasses import dataclass\n\n"
                "@dataclass\n"
                "class ToolReply:\n"
                "    tool_call_id: str\n"
                "    content: str\n\n"
                "def reply(call, text):\n"
                "    return ToolReply(call.id, text)\n"
            ),
            after=(
                "from dataclasses import dataclass\n\n"
                "@dataclass\n"
                "class ToolReply:\n"
                "    tool_call_id: str\n"
                "    content: str\n\n"
                "def reply(call, text):\n"
                '    return ToolReply(call.id + "x", text)\n'
            ),
            note="the project's own dataclass, built positionally",
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
                '    return StepResult(call_id=call.id + "x", observation=observation)\n'
            ),
            note="a result object (StepResult) pairing the call id with the tool's observation",
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
                "def observation(action, content):\n"
                "    msg = {'content': content}\n"
                "    if 'tool_call_id' in action:\n"
                "        msg['tool_call_id'] = action['tool_call_id']\n"
                "        msg['role'] = 'tool'\n"
                "    else:\n"
                "        msg['role'] = 'user'\n"
                "    return msg\n"
            ),
            after=(
                "def observation(action, content):\n"
                "    msg = {'content': content}\n"
                "    if 'tool_call_id' in action:\n"
                "        msg['tool_call_id'] = action['tool_call_id'] + \"x\"\n"
                "        msg['role'] = 'tool'\n"
                "    else:\n"
                "        msg['role'] = 'user'\n"
                "    return msg\n"
            ),
            note="a message that becomes role 'tool' in one branch only, its keys written after the literal",
        ),
        Example(
            before=(
                "def echo(action, content):\n"
                "    msg = {'content': content, 'tool_call_id': action['id']}\n"
                "    msg['role'] = 'user'\n"
                "    return msg\n"
            ),
            note="a user message that mentions a call id is no tool result",
        ),
        Example(
            before=(
                "def echo(message, block):\n"
                '    message.append({"type": "tool_use", "id": block.id, "name": block.name, "input": '
                "block.input})\n"
                '    message.append({"type": "function_call", "call_id": block.id, "name": block.name, '
                '"arguments": "{}"})\n'
            ),
            note="the calls themselves carry ids too, but they are not results",
        ),
        Example(
            before=(
                "import logging\n\n"
                "def trace(log: logging.Logger, journal, call, result):\n"
                '    journal.record("tool", tool_use_id=call.id, is_error=result.is_error)\n'
                '    log.info("tool done", extra={"tool_call_id": call.id, "ms": result.ms})\n'
            ),
            note="logging that mentions the id is not the result sent to the model",
        ),
        Example(
            before=(
                "def trace_tool(tracer, call, output):\n"
                "    tracer.log_event({'type': 'tool_result', 'tool_use_id': call.id, 'content': output})\n"
            ),
            note="a tool result handed to a tracer is a trace's copy, not the one the model receives",
        ),
        Example(
            before=(
                "def tool_messages(results, scratchpad):\n"
                "    for r in results:\n"
                "        scratchpad.append(ChatMessage(role='tool', blocks=r.output.blocks,\n"
                "            additional_kwargs={'tool_call_id': r.tool_id}))\n"
            ),
            after=(
                "def tool_messages(results, scratchpad):\n"
                "    for r in results:\n"
                "        scratchpad.append(ChatMessage(role='tool', blocks=r.output.blocks,\n"
                "            additional_kwargs={'tool_call_id': r.tool_id + \"x\"}))\n"
            ),
            note="a role 'tool' message whose call id sits in its extra fields",
        ),
        Example(
            before=(
                "async def call_tool(ev, tools):\n"
                "    output = await tools[ev.tool_name].acall(**ev.tool_kwargs)\n"
                "    return ToolCallResult(tool_name=ev.tool_name, tool_id=ev.tool_id, "
                "tool_output=output)\n"
            ),
            after=(
                "async def call_tool(ev, tools):\n"
                "    output = await tools[ev.tool_name].acall(**ev.tool_kwargs)\n"
                '    return ToolCallResult(tool_name=ev.tool_name, tool_id=ev.tool_id + "x", '
                "tool_output=output)\n"
            ),
            note="a tool's result event names the call it answers by a tool_id field",
        ),
        Example(
            before=(
                "def plan(ev, ctx):\n"
                "    for c in ev.tool_calls:\n"
                "        ctx.send_event(ToolCall(tool_name=c.tool_name, tool_kwargs=c.tool_kwargs, "
                "tool_id=c.tool_id))\n"
                "\n"
                "def final(result, scratchpad):\n"
                "    scratchpad.append(ChatMessage(role='assistant', content=str(result.content),\n"
                "                                  additional_kwargs={'tool_call_id': result.tool_id}))\n"
            ),
            note="a call event (no output noun) and an assistant message carrying an id in its extras",
        ),
        Example(
            before=(
                "def record(func_name, args, result, tool_call_id):\n"
                "    return ToolCallingRecord(tool_name=func_name, args=args, result=result, "
                "tool_call_id=tool_call_id)\n"
            ),
            note="a record of the call handed back to the caller, not the message the model reads",
        ),
        Example(
            before=(
                "from google.genai import types\n\n"
                "def answer(part, function_map):\n"
                "    out = function_map[part.function_call.name](**part.function_call.args)\n"
                "    return types.FunctionResponse(name=part.function_call.name, "
                "response={'result': out})\n"
            ),
            after=(
                "from google.genai import types\n\n"
                "def answer(part, function_map):\n"
                "    out = function_map[part.function_call.name](**part.function_call.args)\n"
                '    return types.FunctionResponse(name=part.function_call.name + "x", '
                "response={'result': out})\n"
            ),
            note="Gemini pairs a function response with its call by the function's name",
        ),
        Example(
            before=(
                "from google.genai import types\n\n"
                "def ask_again(call_name, args):\n"
                "    return types.Part(function_call=types.FunctionCall(name=call_name, args=args))\n"
            ),
            note="a Gemini function call (not its response) names the function too",
        ),
    )

    def find(self, ctx: SourceContext) -> Iterator[Mutation]:
        for result in tool_results(ctx):
            for ident in result.ids:
                if not m.matches(ident, m.Name("None")):
                    wrong = cst.BinaryOperation(
                        left=atom(ident), operator=cst.Add(), right=cst.SimpleString('"x"')
                    )
                    yield Mutation(ident, wrong, f"{result.label} {result.id_key} no longer matches its call")
