"""accept-truncated-tool-arguments: tool-call arguments that are not complete JSON are accepted as ``{}``.

Tool arguments stream in as partial JSON; a stream cut (or a ``max_tokens`` stop) in the middle of
a call leaves text that does not parse. Failing the turn lets the loop retry; falling back to
``{}`` runs the tool with arguments the model never finished writing - a search for nothing, or a
side effect with defaults nobody chose.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.syntax import caught_classes, leaf_name, statements, string_value
from mutagent.anatomy.vocabulary import DECODE_ERROR_CATCHERS, JSON_PARSERS, PYDANTIC_JSON_PARSERS, word_list
from mutagent.mutation.context import SourceContext
from mutagent.mutation.operator import Example, Mutation, Operator

#: Words of the text being parsed, or of what it is parsed into, that make it tool arguments
#: (OpenAI ``function.arguments``, Anthropic ``input_json_delta.partial_json``, ``tool_input``).
#: ``tools``/``parameters`` are absent on purpose: they name tool *definitions* (schemas).
ARGUMENT_WORDS = frozenset("arguments argument args arg input".split())
EMPTY = cst.Dict(elements=[])
#: A parse inside these runs once per element (or later): making its statement lenient would turn
#: every call's arguments into ``{}`` when one fails, which "unparseable tool arguments become
#: {}" would not say, so such a parse is left alone.
_NOT_ONE_CALL = (cst.Lambda, cst.CompFor, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


class AcceptTruncatedToolArguments(Operator):
    name = "accept-truncated-tool-arguments"
    description = (
        "Tool-call arguments that are not complete JSON are accepted as {} instead of failing the turn."
    )
    failure = (
        "A tool call cut mid-arguments (stream dropped, max_tokens) runs with {} instead of failing the "
        "turn: the tool does something the model never asked for, and the retry never happens."
    )
    hint = (
        'Script a tool_use whose input_json_delta stops mid-object (e.g. \'{"city": "Par\') and assert '
        "the tool was not executed and the turn failed or was retried."
    )
    examples = (
        Example(
            before=(
                "import json\n"
                "\n"
                "def execute_from_stream(self, data):\n"
                "    try:\n"
                "        name = data['function']['name']\n"
                "        args = json.loads(data['function']['arguments'])\n"
                "        result = self._tools[name](**args)\n"
                "        return record(name, args, result)\n"
                "    except Exception as e:\n"
                "        logger.error(f'Error processing tool call: {e}')\n"
                "        return None\n"
            ),
            after=(
                "import json\n"
                "\n"
                "def execute_from_stream(self, data):\n"
                "    try:\n"
                "        name = data['function']['name']\n"
                "        try:\n"
                "            args = json.loads(data['function']['arguments'])\n"
                "        except ValueError:\n"
                "            args = {}\n"
                "        result = self._tools[name](**args)\n"
                "        return record(name, args, result)\n"
                "    except Exception as e:\n"
                "        logger.error(f'Error processing tool call: {e}')\n"
                "        return None\n"
            ),
            note="a catch-all around a whole block of work: the parse itself is made lenient, not "
            "the block's handler",
        ),
        Example(
            before=(
                "import json\n"
                "\n"
                "def parse_actions(tool_calls):\n"
                "    actions = []\n"
                "    for tool_call in tool_calls:\n"
                "        error = ''\n"
                "        try:\n"
                "            args = json.loads(tool_call.function.arguments)\n"
                "        except Exception as e:\n"
                "            error = f'Error parsing tool call arguments: {e}'\n"
                "        if error:\n"
                "            raise FormatError(error)\n"
                "        actions.append({'command': args.get('command'), 'id': tool_call.id})\n"
                "    return actions\n"
            ),
            after=(
                "import json\n"
                "\n"
                "def parse_actions(tool_calls):\n"
                "    actions = []\n"
                "    for tool_call in tool_calls:\n"
                "        error = ''\n"
                "        try:\n"
                "            try:\n"
                "                args = json.loads(tool_call.function.arguments)\n"
                "            except ValueError:\n"
                "                args = {}\n"
                "        except Exception as e:\n"
                "            error = f'Error parsing tool call arguments: {e}'\n"
                "        if error:\n"
                "            raise FormatError(error)\n"
                "        actions.append({'command': args.get('command'), 'id': tool_call.id})\n"
                "    return actions\n"
            ),
            note="the handler only records the error for a raise after the try: the parse becomes lenient",
        ),
        Example(
            before=(
                "import json\n"
                "\n"
                "def parse_arguments(tool_call):\n"
                "    try:\n"
                "        args = json.loads(tool_call.function.arguments)\n"
                "    except json.JSONDecodeError as exc:\n"
                "        raise BadToolCall(tool_call.id) from exc\n"
                "    return args\n"
            ),
            after=(
                "import json\n"
                "\n"
                "def parse_arguments(tool_call):\n"
                "    try:\n"
                "        args = json.loads(tool_call.function.arguments)\n"
                "    except json.JSONDecodeError as exc:\n"
                "        args = {}\n"
                "    return args\n"
            ),
            note="openai SDK tool call: the raise becomes a {} fallback",
        ),
        Example(
            before=(
                "import json\n"
                "\n"
                "def finish_block(block):\n"
                "    if block['type'] == 'tool_use':\n"
                "        block['input'] = json.loads(block.pop('partial_json') or '{}')\n"
                "    return block\n"
            ),
            after=(
                "import json\n"
                "\n"
                "def finish_block(block):\n"
                "    if block['type'] == 'tool_use':\n"
                "        try:\n"
                "            block['input'] = json.loads(block.pop('partial_json') or '{}')\n"
                "        except ValueError:\n"
                "            block['input'] = {}\n"
                "    return block\n"
            ),
            note="anthropic dict events with no handler at all: wrapped in a lenient try",
        ),
        Example(
            before=(
                "from pydantic import BaseModel, ValidationError\n"
                "\n"
                "class SearchArgs(BaseModel):\n"
                "    query: str = ''\n"
                "\n"
                "async def run_search(call):\n"
                "    try:\n"
                "        return await search(SearchArgs.model_validate_json(call.arguments))\n"
                "    except ValidationError:\n"
                "        return ToolResult(call.id, 'arguments are not valid JSON', is_error=True)\n"
            ),
            after=(
                "from pydantic import BaseModel, ValidationError\n"
                "\n"
                "class SearchArgs(BaseModel):\n"
                "    query: str = ''\n"
                "\n"
                "async def run_search(call):\n"
                "    try:\n"
                "        return await search(SearchArgs.model_validate_json(call.arguments))\n"
                "    except ValidationError:\n"
                "        return await search(SearchArgs.model_construct())\n"
            ),
            note="async, pydantic model validated from the raw arguments",
        ),
        Example(
            before=(
                "import json\n"
                "\n"
                "def events(lines):\n"
                "    for line in lines:\n"
                "        try:\n"
                "            yield json.loads(line[6:])\n"
                "        except json.JSONDecodeError:\n"
                "            continue\n"
            ),
            note="SSE data lines are not tool arguments",
        ),
        Example(
            before=(
                "import json\n"
                "\n"
                "def load_calls(rows):\n"
                "    return [\n"
                "        ToolCall(name=row['name'], arguments=json.loads(row['arguments']))\n"
                "        for row in rows\n"
                "    ]\n"
            ),
            note="a parse in a comprehension: a lenient statement would give every call {} when one fails",
        ),
        Example(
            before=(
                "import json\n"
                "\n"
                "def load_args(raw_args):\n"
                "    try:\n"
                "        args = json.loads(raw_args)\n"
                "    except KeyError:\n"
                "        raise\n"
                "    except json.JSONDecodeError:\n"
                "        args = {}\n"
                "    return args\n"
            ),
            note="already lenient, and a handler that cannot see a decode error",
        ),
    )

    def find(self, ctx: SourceContext) -> Iterator[Mutation]:
        for call in ctx.findall(m.Call()):
            if not _parses_tool_arguments(ctx, call):
                continue
            line = ctx.enclosing(call, cst.SimpleStatementLine)
            if line is None or ctx.enclosing(call, _NOT_ONE_CALL) is not None:
                continue
            lenient = _lenient_value(call)
            fallback = line.deep_replace(call, lenient)
            accepted = f"unparseable tool arguments become {ctx.module.code_for_node(lenient)}"
            handlers = _decode_handlers(ctx, line)
            if handlers is None:
                yield Mutation(
                    line, _lenient_try(line, fallback), f"{accepted}: the parse error is swallowed"
                )
                continue
            failing = [(h, line) for h in handlers for line in _failing_statements(h)]
            for _, statement in failing:
                yield Mutation(statement, fallback, f"{accepted} instead of {_handling(ctx, statement)}")
            if not failing and not _already_lenient(ctx, line, handlers):
                # The handler records the error for later (``error = exc`` then a raise after the
                # try, ``invalid_calls.append(...)``): the parse itself is made lenient, so the
                # handler is never reached and the rest of the try runs with the empty value.
                first = (
                    ctx.code(handlers[0].body.body[0]).strip().splitlines()[0]
                    if handlers[0].body.body
                    else ""
                )
                yield Mutation(
                    line,
                    _lenient_try(line, fallback),
                    f"{accepted} instead of reaching the except handler (`{first}`)",
                )


def _already_lenient(
    ctx: SourceContext, line: cst.SimpleStatementLine, handlers: list[cst.ExceptHandler]
) -> bool:
    """A handler gives the parse's target a value itself (``except JSONDecodeError: args = {}``):
    the code already accepts unreadable arguments, there is nothing to make lenient."""
    targets = {ctx.code(t.target) for s in line.body if isinstance(s, cst.Assign) for t in s.targets}
    for handler in handlers:
        for node in ctx.descendants(handler.body, m.Assign()):
            if any(ctx.code(t.target) in targets for t in node.targets):
                return True
    return False


def _handling(ctx: SourceContext, line: cst.SimpleStatementLine) -> str:
    """What the handler's line does with the parse error, read off the code: ``raising
    TruncatedToolArgumentsError``, ``returning None``, ``returning format_invalid_arguments(...)``,
    ``skipping the call`` -- a helper that returns ``None`` never failed any turn."""
    for statement in line.body:
        if isinstance(statement, cst.Raise):
            if statement.exc is None:
                return "re-raising the parse error"
            exc = statement.exc.func if isinstance(statement.exc, cst.Call) else statement.exc
            return f"raising {ctx.code(exc)}"
        if isinstance(statement, cst.Return):
            if statement.value is None:
                return "returning None"
            value = statement.value
            text = ctx.code(value.func) + "(...)" if isinstance(value, cst.Call) else ctx.code(value)
            return f"returning {text.splitlines()[0]}"
        if isinstance(statement, cst.Continue):
            return "skipping the call (continue)"
        if isinstance(statement, cst.Break):
            return "stopping the loop (break)"
    return "handling the parse error"


def _lenient_value(call: cst.Call) -> cst.BaseExpression:
    """What a lenient parser returns for text it cannot read: ``{}`` from ``json.loads``, an
    unvalidated, empty model from ``Model.model_validate_json`` (``Model.model_construct()``)."""
    method = leaf_name(call.func)
    if isinstance(call.func, cst.Attribute) and method in ("model_validate_json", "parse_raw"):
        construct = "model_construct" if method == "model_validate_json" else "construct"
        return cst.Call(func=cst.Attribute(value=call.func.value, attr=cst.Name(construct)))
    return EMPTY


def _parses_tool_arguments(ctx: SourceContext, call: cst.Call) -> bool:
    """``json.loads(...)``/``Model.model_validate_json(...)`` of text, or into a target, that
    names tool arguments."""
    if not call.args:
        return False
    method = leaf_name(call.func)
    if not ctx.qualified_names(call) & JSON_PARSERS and method not in PYDANTIC_JSON_PARSERS:
        return False
    named = ctx.descendants(call.args[0].value, m.Name() | m.SimpleString())
    parent = ctx.parent(call)
    if isinstance(parent, cst.Assign):
        named += [n for t in parent.targets for n in ctx.descendants(t, m.Name() | m.SimpleString())]
    if method in PYDANTIC_JSON_PARSERS and isinstance(call.func, cst.Attribute):
        named += ctx.descendants(call.func.value, m.Name())
    return any(
        _names_arguments(string_value(n) if isinstance(n, cst.SimpleString) else n.value) for n in named
    )


def _names_arguments(name: str | None) -> bool:
    """``arguments``, ``tool_args``, ``raw_input``, ``partial_json``, ``input_json``; not
    ``input_schema`` (a tool definition) nor ``args_model`` (a class)."""
    words = word_list(name)
    if not words:
        return False
    return (
        words[-1] in ARGUMENT_WORDS
        or "partial" in words
        or ("json" in words and bool(set(words) & ARGUMENT_WORDS))
    )


def _decode_handlers(ctx: SourceContext, line: cst.SimpleStatementLine) -> list[cst.ExceptHandler] | None:
    """Handlers of the innermost ``try`` whose body holds ``line`` and that would catch a decode
    error; None when no such try exists in the function."""
    for ancestor in ctx.ancestors(line):
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
            return None
        if isinstance(ancestor, (cst.ExceptHandler, cst.Finally, cst.Else)):
            return None
        if isinstance(ancestor, cst.Try):
            catching = [h for h in ancestor.handlers if _catches_decode_error(ctx, h)]
            if catching and _guards_a_larger_block(ctx, ancestor, catching):
                return None
            if catching:
                return catching
    return None


_BROAD = frozenset({"builtins.Exception", "builtins.BaseException"})


def _guards_a_larger_block(ctx: SourceContext, block: cst.Try, handlers: list[cst.ExceptHandler]) -> bool:
    """``try: name = ...; args = json.loads(...); ...run the tool... except Exception: return
    None``: only catch-alls reach the parse, and they guard a whole block of work besides it.
    Their ``return None`` answers any failure of the block; turned into ``args = {}`` it would
    fall through and answer the same, so the parse itself is made lenient instead. A catch-all
    around the parse alone (``try: args = json.loads(raw) except Exception: raise
    FormatError(...)``) is the parse's own handler."""
    broad = all(
        handler.type is None or any(ctx.qualified_names(t) & _BROAD for t in caught_classes(handler))
        for handler in handlers
    )
    return broad and len(block.body.body) > 2


def _catches_decode_error(ctx: SourceContext, handler: cst.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    return any(ctx.qualified_names(t) & DECODE_ERROR_CATCHERS for t in caught_classes(handler))


def _failing_statements(handler: cst.ExceptHandler) -> Iterator[cst.SimpleStatementLine]:
    """Top-level lines of the handler that raise or leave: each becomes the fallback."""
    if not isinstance(handler.body, cst.IndentedBlock):
        return
    for line in handler.body.body:
        if isinstance(line, cst.SimpleStatementLine) and any(
            isinstance(s, (cst.Raise, cst.Return, cst.Continue, cst.Break))
            for s in statements(cst.IndentedBlock([line]))
        ):
            yield line


def _lenient_try(line: cst.SimpleStatementLine, fallback: cst.SimpleStatementLine) -> cst.Try:
    """``try: <line> except ValueError: <fallback>`` (``JSONDecodeError`` and pydantic's
    ``ValidationError`` are both ``ValueError``s)."""
    return cst.Try(
        body=cst.IndentedBlock([line.with_changes(leading_lines=[])]),
        handlers=[
            cst.ExceptHandler(
                body=cst.IndentedBlock([fallback.with_changes(leading_lines=[])]), type=cst.Name("ValueError")
            )
        ],
        leading_lines=line.leading_lines,
    )
