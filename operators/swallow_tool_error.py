"""swallow-tool-error: a tool's failure is no longer reported back to the model as an error.

When a tool crashes or is refused, the model must be told -- or it treats an empty or
half-written answer as the truth and builds on it. Loops that catch everything around the tool
call and carry on are common; so are loops that flag the error for the user but not for the
model. A test that only checks "the loop did not crash" passes; one that asserts the error
result the model received kills it.

The mutation follows the style the code reports errors in:

* an error flag on a tool result construct (``"is_error": True``, ``is_error=failed``, MCP
  ``isError=True``, ``block["is_error"] = True``, ``result.is_error = True``) becomes ``False``,
  and langchain's ``ToolMessage(..., status="error")`` becomes ``status="success"``;
* in an ``except`` around a tool invocation (``tools[name](...)``, ``handler(...)``,
  ``tool.run(...)``, ``session.call_tool(...)``) in a function without such a flag
  (OpenAI/Responses loops, tools returning strings), an error flag variable (``failed = True``,
  ``ok = False``) is flipped; else the failure field of a result object or dict the handler builds
  (``Outcome(text=str(err), failed=True)``, ``{"ok": False, ...}``) says success; else, when the
  handler reports through a helper of the same file (``return _fail(name, "handler_error", ...)``),
  the failure field of what that helper returns says success (the description says that every
  failure the helper reports then reads as success); or else the error report (``output = f"Error: {e}"``,
  ``return {"error": str(e)}``, the content of a tool result built there) becomes empty
  (``""``/``{}``), so the failure reads as an empty success.

Also: the branch that answers a request for an unknown tool with an error report instead of
raising (``if tool is None: error_msg = f"Tool {name} not found"``; see
``mutagent.anatomy.tools.unknown``) has its report emptied; an error text appended to the
values sent back, or given as the ``error=`` of a result object (``ActionResult(error=...)``),
or made by a failure function from the exception and returned, becomes empty too.

Handlers that always re-raise, only log, or guard a model call rather than a tool are left
alone; a handler that re-raises only some failures (``if isinstance(e, InterruptedError):
raise``) or returns a report before raising still reports the others to the model.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.agent_code import agent_code
from mutagent.anatomy.syntax import final_name, string_value, walk
from mutagent.anatomy.tools.context import in_tool_context
from mutagent.anatomy.tools.failures import caught_name, renders_failure
from mutagent.anatomy.tools.invocation import invokes_tool
from mutagent.anatomy.tools.results import fields_of, tool_results
from mutagent.anatomy.tools.unknown import unknown_tool_answers
from mutagent.anatomy.vocabulary import ERROR_FLAG_KEYS
from mutagent.anatomy.vocabulary import tool_words as words
from mutagent.mutation.context import SourceContext
from mutagent.mutation.operator import Example, Mutation, Operator
from mutagent.mutation.rewrite import empty_like

_ERROR_FLAG_WORDS = frozenset("error errored failed failure crashed".split())
_SUCCESS_FLAG_WORDS = frozenset("ok success succeeded successful".split())
_FALSE, _TRUE = cst.Name("False"), cst.Name("True")


def _flag_assignments(ctx: SourceContext) -> Iterator[cst.Assign]:
    """``block["is_error"] = ...`` and ``result.is_error = ...``."""
    key = m.SubscriptElement(slice=m.Index(value=m.SimpleString() | m.ConcatenatedString()))
    target = m.Subscript(slice=[key]) | m.Attribute(attr=m.Name(m.MatchIfTrue(ERROR_FLAG_KEYS.__contains__)))
    for assign in agent_code(ctx, m.Assign(targets=[m.AssignTarget(target=target)])):
        written = assign.targets[0].target
        if (
            isinstance(written, cst.Subscript)
            and string_value(written.slice[0].slice.value) not in ERROR_FLAG_KEYS
        ):
            continue
        yield assign


_FAILED_STATUSES = frozenset({"error", "failed", "failure"})


def _flag_flips(ctx: SourceContext, handler: cst.ExceptHandler) -> list[Mutation]:
    """``failed = True`` -> ``False``, ``ok = False`` -> ``True`` and ``status = "error"`` ->
    ``"success"`` in the handler."""
    flips = []
    for node in walk(handler.body):
        if not (isinstance(node, cst.Assign) and len(node.targets) == 1):
            continue
        target = node.targets[0].target
        named = words(target.value) if isinstance(target, cst.Name) else frozenset()
        if named & {"status", "outcome"} and string_value(node.value) in _FAILED_STATUSES:
            success = cst.SimpleString('"success"')
            description = (
                f"{ctx.code(target)} = {ctx.code(node.value)} becomes success: the failure reads as one"
            )
            flips.append(Mutation(node.value, success, description))
            continue
        if m.matches(node.value, m.Name("True")) and named & _ERROR_FLAG_WORDS:
            flips.append(Mutation(node.value, _FALSE, f"error flag {ctx.code(target)} stays False"))
        elif m.matches(node.value, m.Name("False")) and named & _SUCCESS_FLAG_WORDS:
            flips.append(Mutation(node.value, _TRUE, f"success flag {ctx.code(target)} stays True"))
    return flips


def _emptied_reports(ctx: SourceContext, handler: cst.ExceptHandler, results: dict) -> list[Mutation]:
    """The error text or data the handler hands on (``output = f"Error: {e}"``, ``return
    {"error": str(e)}``, the content of a tool result built there) becomes empty."""
    caught = caught_name(handler)
    emptied = []
    reported = _names_bound_to_reports(handler, caught)
    for node in walk(handler.body):
        if isinstance(node, cst.Return) and isinstance(node.value, cst.Name) and node.value.value in reported:
            said = "the caught tool error is reported as an empty result"
            # ``result = await failure_error_function(error=e)`` ... ``return result``
            emptied.append(Mutation(node.value, cst.SimpleString('""'), said))
        if isinstance(node, (cst.Assign, cst.AnnAssign, cst.Return)) and node.value is not None:
            empty = empty_like(node.value)
            if id(node.value) not in results and empty is not None and renders_failure(node.value, caught):
                emptied.append(
                    Mutation(node.value, empty, "the caught tool error is reported as an empty result")
                )
        if m.matches(node, _APPEND) and renders_failure(node.args[0].value, caught):
            empty = empty_like(node.args[0].value)
            if empty is not None:  # ``values.append(f"Execution error in {name}: {err}")``
                said = "the caught tool error is collected as empty"
                emptied.append(Mutation(node.args[0].value, empty, said))
        if isinstance(node, cst.Call) and id(node) not in results and _names_a_result(node):
            for arg in node.args:
                if arg.keyword is not None and words(arg.keyword.value) & {"error", "errors"}:
                    if renders_failure(arg.value, caught) and empty_like(arg.value) is not None:
                        emptied.append(
                            Mutation(
                                arg.value,
                                empty_like(arg.value),
                                f"the caught tool error goes back as {final_name(node)} with an empty "
                                f"{arg.keyword.value}",
                            )
                        )
        for content in results[id(node)].contents if id(node) in results else ():
            if renders_failure(content, caught) and any(a is handler for a in ctx.ancestors(content)):
                empty = empty_like(content) or cst.SimpleString('""')
                emptied.append(Mutation(content, empty, "the caught tool error goes back as empty content"))
    return emptied


_APPEND = m.Call(func=m.Attribute(attr=m.Name("append")), args=[m.Arg(keyword=None, star="")])
_RESULT_OBJECT_NOUNS = frozenset("result results output outcome observation".split())


def _names_bound_to_reports(handler: cst.ExceptHandler, caught: str | None) -> set[str]:
    """Locals the handler binds to a report built by a call from the caught error (``result =
    await make_failure_text(error=e)``) -- a value no literal can empty in place."""
    bound = set()
    for node in walk(handler.body):
        if m.matches(node, m.Assign(targets=[m.AssignTarget(target=m.Name())])):
            value = node.value.expression if isinstance(node.value, cst.Await) else node.value
            if isinstance(value, cst.Call) and empty_like(value) is None and renders_failure(value, caught):
                bound.add(node.targets[0].target.value)
    return bound


def _names_a_result(call: cst.Call) -> bool:
    """A constructor named for what an action or tool produced: ``ActionResult(...)``,
    ``StepOutcome(...)`` -- whose ``error=`` text is how the model learns of the failure."""
    name = final_name(call) or ""
    return name[:1].isupper() and bool(words(name) & _RESULT_OBJECT_NOUNS)


def _field_flips(
    ctx: SourceContext, construct: cst.CSTNode
) -> list[tuple[cst.BaseExpression, cst.BaseExpression, str]]:
    """(value, success value, field) for the failure fields of a dict or constructor call:
    ``failed=True``/``"error": True`` -> ``False``, ``ok=False`` -> ``True``, ``status="error"`` ->
    ``"success"``. An ``error=str(e)`` text is a report, not a flag."""
    fields = fields_of(ctx, construct)
    flips = []
    for key, values in fields.values.items() if fields else ():
        named = words(key)
        for value in values:
            if m.matches(value, m.Name("True")) and named & (_ERROR_FLAG_WORDS | {"iserror"}):
                flips.append((value, _FALSE, key))
            elif m.matches(value, m.Name("False")) and named & _SUCCESS_FLAG_WORDS:
                flips.append((value, _TRUE, key))
            elif key in ("status", "outcome") and string_value(value) in ("error", "failed", "failure"):
                flips.append((value, cst.SimpleString('"success"'), key))
    return flips


def _reported_fields(ctx: SourceContext, handler: cst.ExceptHandler) -> list[Mutation]:
    """A result object or dict built in the handler says the tool failed (``Outcome(text=str(err),
    failed=True)``, ``{"ok": False, "error": ...}``): that field says success instead."""
    flips = []
    for node in walk(handler.body):
        if isinstance(node, (cst.Dict, cst.Call)):
            for value, success, key in _field_flips(ctx, node):
                label = final_name(node) if isinstance(node, cst.Call) else "result"
                flips.append(
                    Mutation(
                        value,
                        success,
                        f"the caught tool error goes back as {label} with {key}={ctx.code(success)}",
                    )
                )
    return flips


def _helper_reports(ctx: SourceContext, handler: cst.ExceptHandler) -> list[Mutation]:
    """``return _fail(name, "handler_error", str(exc))``: the handler reports through a helper of
    this file; the failure field of what the helper builds says success instead. Every failure
    reported through that helper then reads as success, which the description says."""
    flips = []
    for node in walk(handler.body):
        if not (isinstance(node, (cst.Return, cst.Assign)) and isinstance(node.value, (cst.Call, cst.Await))):
            continue
        call = node.value.expression if isinstance(node.value, cst.Await) else node.value
        name = final_name(call)
        if not isinstance(call, cst.Call) or not name or name[:1].isupper():
            continue
        for helper in ctx.nodes(cst.FunctionDef):
            if helper.name.value != name or helper is ctx.enclosing_function(handler):
                continue
            for returned in walk(helper.body):
                if isinstance(returned, cst.Return) and isinstance(returned.value, (cst.Dict, cst.Call)):
                    for value, success, key in _field_flips(ctx, returned.value):
                        flips.append(
                            Mutation(
                                value,
                                success,
                                f"`{name}(...)`, which reports the caught tool error, sets {key}="
                                f"{ctx.code(success)}: every failure it reports reads as success",
                            )
                        )
    return flips


def _always_raises(handler: cst.ExceptHandler) -> bool:
    """The handler raises on every path: a ``raise`` among its own statements, not only under an
    ``if`` (``if isinstance(e, InterruptedError): raise`` re-raises some failures and reports the
    rest to the model)."""
    if any(isinstance(node, cst.Return) for node in walk(handler.body)):
        return False  # ``if continue_on_error: return Result(error=...)`` then ``raise``: one path reports
    for statement in handler.body.body:
        if isinstance(statement, cst.SimpleStatementLine) and any(
            isinstance(small, cst.Raise) for small in statement.body
        ):
            return True
        nested = isinstance(statement, (cst.With, cst.Try))
        if nested and any(isinstance(n, cst.Raise) for n in walk(statement)):
            return True
    return False


def _handler_mutations(ctx: SourceContext, handler: cst.ExceptHandler, results: dict) -> list[Mutation]:
    """One sound mutation per style: flip the error flag if the handler sets one, or the failure
    field of the result it builds (itself or through a helper of this file), else empty the report."""
    if _always_raises(handler):
        return []  # the failure travels on as an exception; whoever catches it reports it
    return (
        _flag_flips(ctx, handler)
        or _reported_fields(ctx, handler)
        or _helper_reports(ctx, handler)
        or _emptied_reports(ctx, handler, results)
    )


def _flagged_results(ctx: SourceContext) -> Iterator[tuple[cst.BaseExpression, cst.BaseExpression, str]]:
    """(flag value, its success value, description) of every tool result's error flag."""
    for result in tool_results(ctx):
        for flag in result.error_flags:
            yield flag, _FALSE, f"{result.label} error flag forced to False: the failure reads as success"
        if result.error_flags:
            continue  # the error flag is what the model reads; a status beside it is bookkeeping
        for key in ("status", "outcome"):  # ToolMessage(status="error"), ToolReturnPart(outcome="failed")
            for status in result.fields.all(key):
                if string_value(status) in _FAILED_STATUSES:
                    yield (
                        status,
                        cst.SimpleString('"success"'),
                        f"{result.label} {key} {string_value(status)} -> success: the failure reads as one",
                    )


def _runs_a_tool(ctx: SourceContext, guarded: cst.Try) -> bool:
    """The ``try`` invokes a tool (``tools[name](...)``), or is a tool's own ``run`` running its
    implementation (``context.run(self._run, ...)`` in ``BaseTool.run``)."""
    if invokes_tool(ctx, guarded.body):
        return True
    func = ctx.enclosing_function(guarded)
    cls = ctx.enclosing(guarded, cst.ClassDef)
    return (
        func is not None
        and cls is not None
        and bool(words(func.name.value) & {"run", "arun", "invoke", "ainvoke", "call", "acall", "execute"})
        and bool(words(cls.name.value) & {"tool", "tools"})
        and any(isinstance(n, cst.Call) for n in walk(guarded.body))
    )


class SwallowToolError(Operator):
    name = "swallow-tool-error"
    description = "A tool's failure is sent back to the model as a success (or an empty result)."
    failure = (
        "A tool crashes or is refused, but the model is told nothing went wrong -- is_error is dropped "
        "or the error text becomes empty -- so it trusts a missing answer and carries on."
    )
    hint = (
        "Make a tool raise and assert the next request carries an error result for that call: "
        "is_error true (Anthropic) or content naming the failure (OpenAI/Responses)."
    )
    examples = (
        Example(
            before=(
                "def run(block, tools):\n"
                "    try:\n"
                "        out = tools[block.name](**block.input)\n"
                '        return {"type": "tool_result", "tool_use_id": block.id, "content": str(out)}\n'
                "    except Exception as e:\n"
                '        return {"type": "tool_result", "tool_use_id": block.id, "content": f"Error: {e}", '
                '"is_error": True}\n'
            ),
            after=(
                "def run(block, tools):\n"
                "    try:\n"
                "        out = tools[block.name](**block.input)\n"
                '        return {"type": "tool_result", "tool_use_id": block.id, "content": str(out)}\n'
                "    except Exception as e:\n"
                '        return {"type": "tool_result", "tool_use_id": block.id, "content": f"Error: {e}", '
                '"is_error": False}\n'
            ),
            note="Anthropic is_error flag in a tool_result dict",
        ),
        Example(
            before=(
                "import json\n\n"
                "async def call_tools(message, functions, messages):\n"
                "    for tc in message.tool_calls:\n"
                "        try:\n"
                "            content = await "
                "functions[tc.function.name](**json.loads(tc.function.arguments))\n"
                "        except Exception as exc:\n"
                '            content = f"Error: {type(exc).__name__}: {exc}"\n'
                '        messages.append({"role": "tool", "tool_call_id": tc.id, "content": str(content)})\n'
            ),
            after=(
                "import json\n\n"
                "async def call_tools(message, functions, messages):\n"
                "    for tc in message.tool_calls:\n"
                "        try:\n"
                "            content = await "
                "functions[tc.function.name](**json.loads(tc.function.arguments))\n"
                "        except Exception as exc:\n"
                '            content = ""\n'
                '        messages.append({"role": "tool", "tool_call_id": tc.id, "content": str(content)})\n'
            ),
            note="OpenAI async runner: no error flag, so the error text becomes empty",
        ),
        Example(
            before=(
                "from mcp.types import CallToolResult, TextContent\n\n"
                "async def handle_call(name, arguments, registry):\n"
                "    try:\n"
                "        text = await registry.dispatch(name, arguments)\n"
                "    except Exception as err:\n"
                '        return CallToolResult(content=[TextContent(type="text", text=str(err))], '
                "isError=True)\n"
                '    return CallToolResult(content=[TextContent(type="text", text=text)])\n'
            ),
            after=(
                "from mcp.types import CallToolResult, TextContent\n\n"
                "async def handle_call(name, arguments, registry):\n"
                "    try:\n"
                "        text = await registry.dispatch(name, arguments)\n"
                "    except Exception as err:\n"
                '        return CallToolResult(content=[TextContent(type="text", text=str(err))], '
                "isError=False)\n"
                '    return CallToolResult(content=[TextContent(type="text", text=text)])\n'
            ),
            note="MCP server isError flag",
        ),
        Example(
            before=(
                "def run_tool(name, args):\n"
                "    try:\n"
                "        return TOOLS[name](**args)\n"
                "    except Exception as exc:\n"
                '        return {"error": str(exc)}\n'
            ),
            after=(
                "def run_tool(name, args):\n"
                "    try:\n"
                "        return TOOLS[name](**args)\n"
                "    except Exception as exc:\n"
                "        return {}\n"
            ),
            note="an error dict returned by the tool runner (Responses/OpenAI loops serialise it)",
        ),
        Example(
            before=(
                "from dataclasses import dataclass\n\n"
                "@dataclass\n"
                "class Outcome:\n"
                "    text: str\n"
                "    failed: bool\n\n"
                "def execute(tool, args):\n"
                "    try:\n"
                "        text = tool.run(args)\n"
                "        failed = False\n"
                "    except (TimeoutError, ValueError) as problem:\n"
                "        text = repr(problem)\n"
                "        failed = True\n"
                "    return Outcome(text, failed)\n"
            ),
            after=(
                "from dataclasses import dataclass\n\n"
                "@dataclass\n"
                "class Outcome:\n"
                "    text: str\n"
                "    failed: bool\n\n"
                "def execute(tool, args):\n"
                "    try:\n"
                "        text = tool.run(args)\n"
                "        failed = False\n"
                "    except (TimeoutError, ValueError) as problem:\n"
                "        text = repr(problem)\n"
                "        failed = False\n"
                "    return Outcome(text, failed)\n"
            ),
            note="an error flag variable set in the handler",
        ),
        Example(
            before=(
                "class SearchTool(BaseTool):\n"
                "    def run(self, tool_input, tool_call_id):\n"
                "        status = 'success'\n"
                "        try:\n"
                "            content = self._run(**tool_input)\n"
                "        except ToolException as e:\n"
                "            content = str(e)\n"
                "            status = 'error'\n"
                "        return ToolMessage(content, tool_call_id=tool_call_id, status=status)\n"
            ),
            after=(
                "class SearchTool(BaseTool):\n"
                "    def run(self, tool_input, tool_call_id):\n"
                "        status = 'success'\n"
                "        try:\n"
                "            content = self._run(**tool_input)\n"
                "        except ToolException as e:\n"
                "            content = str(e)\n"
                '            status = "success"\n'
                "        return ToolMessage(content, tool_call_id=tool_call_id, status=status)\n"
            ),
            note="a tool's own run() keeps its failure in a status variable (langchain's BaseTool)",
        ),
        Example(
            before=(
                "def failed_return(call, error):\n"
                "    return ToolReturnPart(\n"
                "        tool_name=call.tool_name,\n"
                "        content=f'The tool failed: {error}',\n"
                "        tool_call_id=call.tool_call_id,\n"
                "        outcome='failed',\n"
                "    )\n"
            ),
            after=(
                "def failed_return(call, error):\n"
                "    return ToolReturnPart(\n"
                "        tool_name=call.tool_name,\n"
                "        content=f'The tool failed: {error}',\n"
                "        tool_call_id=call.tool_call_id,\n"
                '        outcome="success",\n'
                "    )\n"
            ),
            note="a tool result object whose outcome field says it failed (pydantic-ai's ToolReturnPart)",
        ),
        Example(
            before=(
                "def run_call(call, handlers):\n"
                "    try:\n"
                "        text = handlers[call.name](**call.arguments)\n"
                "    except Exception as err:\n"
                "        return Outcome(text=str(err), failed=True)\n"
                "    return Outcome(text=text)\n"
            ),
            after=(
                "def run_call(call, handlers):\n"
                "    try:\n"
                "        text = handlers[call.name](**call.arguments)\n"
                "    except Exception as err:\n"
                "        return Outcome(text=str(err), failed=False)\n"
                "    return Outcome(text=text)\n"
            ),
            note="a result object built in the except of the tool call, its failure field flipped",
        ),
        Example(
            before=(
                "def _fail(name, code, message):\n"
                "    return {'tool': name, 'ok': False, 'error': {'code': code, 'message': message}}\n"
                "\n"
                "def dispatch(name, args, registry):\n"
                "    try:\n"
                "        value = registry[name](**args)\n"
                "    except Exception as exc:\n"
                "        return _fail(name, 'handler_error', str(exc))\n"
                "    return {'tool': name, 'ok': True, 'value': value}\n"
            ),
            after=(
                "def _fail(name, code, message):\n"
                "    return {'tool': name, 'ok': True, 'error': {'code': code, 'message': message}}\n"
                "\n"
                "def dispatch(name, args, registry):\n"
                "    try:\n"
                "        value = registry[name](**args)\n"
                "    except Exception as exc:\n"
                "        return _fail(name, 'handler_error', str(exc))\n"
                "    return {'tool': name, 'ok': True, 'value': value}\n"
            ),
            note="the failure reported through a helper of the file: what the helper builds says ok",
        ),
        Example(
            before=(
                "def _fail(code, message):\n"
                "    return {'ok': False, 'error': {'code': code, 'message': message}}\n"
                "\n"
                "def load_config(path):\n"
                "    try:\n"
                "        text = open(path).read()\n"
                "    except OSError as exc:\n"
                "        return _fail('unreadable', str(exc))\n"
                "    try:\n"
                "        return parse(text)\n"
                "    except ValueError as err:\n"
                "        return Outcome(text=str(err), failed=True)\n"
            ),
            note="failure results and a failure helper around work that runs no tool",
        ),
        Example(
            before=(
                "import anthropic\n\n"
                "def ask(client, messages):\n"
                "    try:\n"
                '        return client.messages.create(model="m", max_tokens=100, messages=messages)\n'
                "    except anthropic.APIError as e:\n"
                '        return f"Error: {e}"\n'
            ),
            note="an except around the model call, not a tool",
        ),
        Example(
            before=(
                "import logging\n\n"
                "def run(call, handlers, journal):\n"
                "    try:\n"
                "        result = handlers[call.name](call.input)\n"
                "    except Exception as exc:\n"
                '        logging.exception("tool %s failed: %s", call.name, exc)\n'
                "        raise ToolError(str(exc)) from exc\n"
                '    journal.record("tool", tool_use_id=call.id, is_error=result.is_error)\n'
                "    return result\n"
            ),
            note="a handler that logs and re-raises, and a journal entry naming is_error",
        ),
        Example(
            before=(
                "async def arun(agent, run_response):\n"
                "    try:\n"
                "        tools = await agent.aget_tools()\n"
                "        run_response.content = await agent.model.aresponse(tools=tools)\n"
                "    except InputCheckError as e:\n"
                "        run_response.content = str(e)\n"
                "    return run_response\n"
            ),
            note="aget_tools() looks the tools up (the async twin of get_tools): no tool runs in this try",
        ),
        Example(
            before=(
                "def execute(self, request):\n"
                "    tool = self._tools.get(request.name)\n"
                "    if tool is None:\n"
                "        result = f\"Tool '{request.name}' not found in registered tools\"\n"
                "    else:\n"
                "        result = tool(**request.args)\n"
                "    return self.record_tool_result(request.call_id, result)\n"
            ),
            after=(
                "def execute(self, request):\n"
                "    tool = self._tools.get(request.name)\n"
                "    if tool is None:\n"
                '        result = ""\n'
                "    else:\n"
                "        result = tool(**request.args)\n"
                "    return self.record_tool_result(request.call_id, result)\n"
            ),
            note="an unknown tool answered with an error text for the model, not an exception",
        ),
        Example(
            before=(
                "def dispatch(call, handlers, messages):\n"
                "    if call.name in handlers:\n"
                "        out = handlers[call.name](call.args)\n"
                "    else:\n"
                '        out = {"error": f"unknown tool {call.name}"}\n'
                '    messages.append({"role": "tool", "tool_call_id": call.id, "content": str(out)})\n'
            ),
            after=(
                "def dispatch(call, handlers, messages):\n"
                "    if call.name in handlers:\n"
                "        out = handlers[call.name](call.args)\n"
                "    else:\n"
                "        out = {}\n"
                '    messages.append({"role": "tool", "tool_call_id": call.id, "content": str(out)})\n'
            ),
            note="the registry membership test's else side answers with an error dict",
        ),
        Example(
            before=(
                "def execute(self, request):\n"
                "    tool = self._tools.get(request.name)\n"
                "    if tool is None:\n"
                '        raise ToolNotFound(f"unknown tool {request.name}")\n'
                "    return tool(**request.args)\n"
                "\n"
                "def cached_tool_schema(self, name):\n"
                "    schema = self._cache.get(name)\n"
                "    if schema is None:\n"
                '        schema = f"missing schema for {name}"\n'
                "    return schema\n"
            ),
            note="an unknown tool that raises travels as an exception; a cache miss is no tool lookup",
        ),
        Example(
            before=(
                "def call_tool(tool, tool_input):\n"
                "    try:\n"
                "        return tool.call(**tool_input)\n"
                "    except Exception as e:\n"
                "        return ToolOutput(content=str(e), tool_name=tool.name, raw_output=None, "
                "is_error=True)\n"
            ),
            after=(
                "def call_tool(tool, tool_input):\n"
                "    try:\n"
                "        return tool.call(**tool_input)\n"
                "    except Exception as e:\n"
                "        return ToolOutput(content=str(e), tool_name=tool.name, raw_output=None, "
                "is_error=False)\n"
            ),
            note="a tool's output object (no call id of its own) flagged as an error",
        ),
        Example(
            before=(
                "async def multi_act(self, actions):\n"
                "    results = []\n"
                "    for action in actions:\n"
                "        try:\n"
                "            results.append(await self.tools.act(action=action))\n"
                "        except Exception as e:\n"
                "            if isinstance(e, InterruptedError):\n"
                "                raise\n"
                "            results.append(ActionResult(error=f'{type(e).__name__}: {e}'))\n"
                "            return results\n"
                "    return results\n"
            ),
            after=(
                "async def multi_act(self, actions):\n"
                "    results = []\n"
                "    for action in actions:\n"
                "        try:\n"
                "            results.append(await self.tools.act(action=action))\n"
                "        except Exception as e:\n"
                "            if isinstance(e, InterruptedError):\n"
                "                raise\n"
                '            results.append(ActionResult(error=""))\n'
                "            return results\n"
                "    return results\n"
            ),
            note="an action run through the tool registry; its failure (re-raised only for a stop) "
            "reported as the result's error text",
        ),
        Example(
            before=(
                "async def step(self, action):\n"
                "    try:\n"
                "        return await self.act(action)\n"
                "    except Exception as e:\n"
                "        return ActionResult(error=f'failed: {e}')\n"
                "\n"
                "async def run(self, action):\n"
                "    try:\n"
                "        return await self.tools.act(action=action)\n"
                "    except Exception as e:\n"
                "        self.log.error(f'failed: {e}')\n"
                "        raise\n"
            ),
            note="the agent's own act() runs no tool; a handler that always re-raises reports nothing",
        ),
        Example(
            before=(
                "def execute_tool_calls(self, tool_calls):\n"
                "    values, is_errors = [], []\n"
                "    for call in tool_calls:\n"
                "        try:\n"
                "            values.append(self.tools[call.name](**call.args))\n"
                "        except Exception as err:\n"
                '            values.append(f"Execution error in {call.name}: {err}")\n'
                "    return values\n"
            ),
            after=(
                "def execute_tool_calls(self, tool_calls):\n"
                "    values, is_errors = [], []\n"
                "    for call in tool_calls:\n"
                "        try:\n"
                "            values.append(self.tools[call.name](**call.args))\n"
                "        except Exception as err:\n"
                '            values.append("")\n'
                "    return values\n"
            ),
            note="the error text collected into the list of values sent back",
        ),
        Example(
            before=(
                "async def create_function_result(call, client, continue_on_fn_error):\n"
                "    try:\n"
                "        res = await client.execute_tool(call.name, call.arguments)\n"
                "    except Exception as e:\n"
                "        if continue_on_fn_error is True:\n"
                "            return FunctionResultEntry(tool_call_id=call.tool_call_id, "
                'result=f"Error while executing {call.name}: {e}")\n'
                '        raise RunException(f"Failed to execute tool {call.name}") from e\n'
                "    return FunctionResultEntry(tool_call_id=call.tool_call_id, result=str(res))\n"
            ),
            after=(
                "async def create_function_result(call, client, continue_on_fn_error):\n"
                "    try:\n"
                "        res = await client.execute_tool(call.name, call.arguments)\n"
                "    except Exception as e:\n"
                "        if continue_on_fn_error is True:\n"
                "            return FunctionResultEntry(tool_call_id=call.tool_call_id, "
                'result="")\n'
                '        raise RunException(f"Failed to execute tool {call.name}") from e\n'
                "    return FunctionResultEntry(tool_call_id=call.tool_call_id, result=str(res))\n"
            ),
            note="a handler that raises unless configured to report: the report path is still the model's",
        ),
        Example(
            before=(
                "async def __call__(self, ctx, input):\n"
                "    try:\n"
                "        return await self._invoke_tool_impl(ctx, input)\n"
                "    except Exception as e:\n"
                "        result = await failure_error_function(ctx, error=e)\n"
                "        if result is None:\n"
                "            raise\n"
                "        return result\n"
            ),
            after=(
                "async def __call__(self, ctx, input):\n"
                "    try:\n"
                "        return await self._invoke_tool_impl(ctx, input)\n"
                "    except Exception as e:\n"
                "        result = await failure_error_function(ctx, error=e)\n"
                "        if result is None:\n"
                "            raise\n"
                '        return ""\n'
            ),
            note="the error text a failure function makes from the exception, returned as the tool's output",
        ),
        Example(
            before=(
                "def route(self, call, messages):\n"
                "    if call.name in self.tools:\n"
                "        return self.tools[call.name](**call.args)\n"
                "    else:\n"
                '        prompt = f"Choose one of {sorted(self.tools)} for {call.name}"\n'
                "        return self.ask_model(prompt, messages)\n"
            ),
            note="the missing side asks the model again with a prompt: no failure report to empty",
        ),
    )

    def find(self, ctx: SourceContext) -> Iterator[Mutation]:
        flagged = set()  # functions whose results carry an error flag: that flag is the mutation
        for flag, success, description in _flagged_results(ctx):
            flagged.add(id(ctx.enclosing_function(flag)))
            yield Mutation(flag, success, description)
        for assign in _flag_assignments(ctx):
            flagged.add(id(ctx.enclosing_function(assign)))
            yield Mutation(assign.value, _FALSE, f"{ctx.code(assign.targets[0].target)} forced to False")
        results = {id(result.node): result for result in tool_results(ctx)}
        for answer in unknown_tool_answers(ctx):
            if id(ctx.enclosing_function(answer.guard)) not in flagged and in_tool_context(ctx, answer.guard):
                for report in answer.reports():
                    empty = empty_like(report) or cst.SimpleString('""')
                    yield Mutation(report, empty, "the unknown-tool error report to the model becomes empty")
        for handler in agent_code(ctx, m.ExceptHandler()):
            guarded = ctx.parent(handler)
            if isinstance(guarded, cst.Try) and _runs_a_tool(ctx, guarded):
                if id(ctx.enclosing_function(handler)) not in flagged:
                    yield from _handler_mutations(ctx, handler, results)
