"""Tool results: the tool-result and tool-call-id roles.

Agent loops spell a *tool result* many ways: an Anthropic ``{"type": "tool_result",
"tool_use_id": ..., "content": ...}`` block (or ``ToolResultBlockParam(...)``), an OpenAI
``{"role": "tool", "tool_call_id": ..., "content": ...}`` message, a Responses ``{"type":
"function_call_output", "call_id": ..., "output": ...}`` item, a legacy ``{"role": "function",
...}`` message, an MCP ``CallToolResult(...)``, or -- without a ``type``/``role`` discriminator --
anything pairing a call id (``tool_use_id``/``tool_call_id``/``call_id``) with a payload
(``content``/``output``/``result``/``is_error``): the Assistants API's ``{"tool_call_id": ...,
"output": ...}``, langchain's ``ToolMessage``, autogen's ``FunctionExecutionResult``, a project's
own dataclass, pydantic model or TypedDict. It may be a dict literal (plus the keys assigned into
it later in the function: ``response["content"] = out``), ``dict(...)``, or a constructor called
with keywords, or positionally when the class is defined in the file. Method calls that merely
*mention* the fields (``journal.record(tool_use_id=...)``) are not results: only constructors are.

Beyond those shapes: a Gemini function response (``Part.from_function_response(name=...,
response=...)``, paired by name); a tool's output object without a provider call id
(``ToolOutput(content=..., is_error=...)``, ``ToolCallResult(tool_id=..., ...)``: a constructor
named for a tool *and* an output); an observation step built from a tool's output; call ids
kept in a tool message's extra fields. A message that keeps ``content=""`` has its output read
from its payload field. A record of a call handed back to the caller (``ToolCallingRecord``) is
not a result. ``observation_slots`` finds tool outputs filed under an observation key or
collected for a builder of results.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.agent_code import in_test
from mutagent.anatomy.dataflow import local_values
from mutagent.anatomy.syntax import final_name, is_constant, string_value, walk
from mutagent.anatomy.tools.invocation import is_tool_invocation
from mutagent.anatomy.vocabulary import (
    CONTENT_KEYS as _CONTENT_KEYS,
)
from mutagent.anatomy.vocabulary import (
    DIALECT_OF_ID as _DIALECT_OF_ID,
)
from mutagent.anatomy.vocabulary import (  # the stream/tool vocabulary lives there
    ERROR_FLAG_KEYS,
    TELEMETRY_WORDS,
    TOOL_CAMEL,
    TOOL_NOUNS,
    node_words,
)
from mutagent.anatomy.vocabulary import (
    ID_KEYS as _ID_KEYS,
)
from mutagent.anatomy.vocabulary import (
    PAYLOAD_KEYS as _PAYLOAD_KEYS,
)
from mutagent.anatomy.vocabulary import (
    RESULT_NOUNS as _RESULT_NOUNS,
)
from mutagent.anatomy.vocabulary import (
    tool_words as words,
)
from mutagent.mutation.context import SourceContext


@dataclass(frozen=True)
class Fields:
    """A dict literal, ``dict(...)`` call or constructor call read as field name -> value nodes.

    A dict literal bound to a name also owns the keys assigned into it afterwards in the same
    function (``response = {"type": "tool_result", ...}`` then ``response["content"] = out``).
    """

    node: cst.Dict | cst.Call
    values: dict[str, list[cst.BaseExpression]]

    def first(self, key: str) -> cst.BaseExpression | None:
        found = self.values.get(key)
        return found[0] if found else None

    def all(self, key: str | None) -> list[cst.BaseExpression]:
        return list(self.values.get(key, ())) if key else []


def _class_fields(ctx: SourceContext) -> dict[str, list[str]]:
    """Annotated fields, in order, of every class defined in this file (dataclass/NamedTuple order)."""

    def compute() -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for cls in ctx.nodes(cst.ClassDef):
            names = []
            lines = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ()
            for line in (x for x in lines if isinstance(x, cst.SimpleStatementLine)):
                for small in line.body:
                    if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                        if "ClassVar" not in ctx.code(small.annotation.annotation):
                            names.append(small.target.value)
            found.setdefault(cls.name.value, names)
        return found

    return ctx.cached(("tools", "class_fields"), compute)


#: The Gemini SDK's builders of a function response: ``types.Part.from_function_response(name=...,
#: response=...)`` and ``types.FunctionResponse(name=..., response=..., id=...)``. Gemini pairs
#: the response with its call by the function's ``name`` (and ``id`` when the call had one).
GEMINI_RESPONSE_BUILDERS = frozenset({"from_function_response", "FunctionResponse"})


def is_constructor(ctx: SourceContext, call: cst.Call) -> bool:
    """``ToolResult(...)``, ``types.CallToolResult(...)``, ``dict(...)``, ``make_tool_result(...)``:
    a call that builds a value, as opposed to a method that logs or records one."""
    name = final_name(call)
    if name is None:
        return False
    if name in GEMINI_RESPONSE_BUILDERS:
        return True
    if name[:1].isupper() or (name == "dict" and isinstance(call.func, cst.Name) and not _rebinds_dict(ctx)):
        return True
    parts = words(name)
    return (
        bool(parts & {"result", "output", "message"})
        and bool(parts & (TOOL_NOUNS | {"call"}))
        and not (
            parts & {"log", "record", "emit", "trace", "print", "debug", "info", "warn", "warning", "send"}
        )
    )


#: Library constructors whose leading parameters are fields: langchain's ``ToolMessage(content, ...)``.
_KNOWN_POSITIONAL = {"ToolMessage": ("content",), "FunctionMessage": ("content",)}


def _rebinds_dict(ctx: SourceContext) -> bool:
    """Whether the file binds the name ``dict`` itself (then ``dict(...)`` is not the builtin).
    Cheaper than scope analysis, which costs as much as parsing the file."""

    def compute() -> bool:
        bound = m.Name("dict")
        return bool(
            ctx.findall(m.AssignTarget(target=bound))
            or ctx.findall(m.FunctionDef(name=bound))
            or ctx.findall(m.ClassDef(name=bound))
            or ctx.findall(m.ImportAlias(asname=m.AsName(name=bound)))
            or ctx.findall(m.ImportAlias(name=bound))
            or ctx.findall(m.Param(name=bound))
        )

    return ctx.cached(("tools", "rebinds_dict"), compute)


def _key_writes(ctx: SourceContext, scope: cst.CSTNode) -> dict[tuple[str, str], list[cst.BaseExpression]]:
    """``name["key"] = value`` assignments in one function (or module), by (name, key)."""

    def compute() -> dict[tuple[str, str], list[cst.BaseExpression]]:
        found: dict[tuple[str, str], list[cst.BaseExpression]] = {}
        for node in walk(scope):
            if not isinstance(node, cst.Assign):
                continue
            for target in (t.target for t in node.targets):
                if (
                    isinstance(target, cst.Subscript)
                    and isinstance(target.value, cst.Name)
                    and len(target.slice) == 1
                ):
                    index = target.slice[0].slice
                    key = string_value(index.value) if isinstance(index, cst.Index) else None
                    if key is not None:
                        found.setdefault((target.value.value, key), []).append(node.value)
        return found

    return ctx.cached(("tools", "key_writes", id(scope)), compute)


def _bound_name(ctx: SourceContext, node: cst.CSTNode) -> str | None:
    parent = ctx.parent(node)
    if (
        isinstance(parent, cst.Assign)
        and len(parent.targets) == 1
        and isinstance(parent.targets[0].target, cst.Name)
    ):
        return parent.targets[0].target.value
    if isinstance(parent, cst.AnnAssign) and isinstance(parent.target, cst.Name):
        return parent.target.value
    return None


def fields_of(ctx: SourceContext, node: cst.CSTNode) -> Fields | None:
    """Read ``node`` as named fields, or None if it is neither a dict literal nor a constructor."""
    values: dict[str, list[cst.BaseExpression]] = {}
    if isinstance(node, cst.Dict):
        for element in node.elements:
            key = string_value(element.key) if isinstance(element, cst.DictElement) else None
            if key is not None:
                values.setdefault(key, []).append(element.value)
        name = _bound_name(ctx, node)
        if name is not None:
            scope = ctx.enclosing_function(node) or ctx.module
            for (written, key), assigned in _key_writes(ctx, scope).items():
                if written == name:
                    values.setdefault(key, []).extend(assigned)
        return Fields(node, values) if values else None
    if not isinstance(node, cst.Call) or not is_constructor(ctx, node):
        return None
    positional = [arg for arg in node.args if arg.keyword is None and not arg.star]
    if positional:
        name = node.func.value if isinstance(node.func, cst.Name) else None
        declared = _class_fields(ctx).get(name or "") or list(
            _KNOWN_POSITIONAL.get(final_name(node) or "", ())
        )
        for arg, declared_name in zip(positional, declared, strict=False):
            values[declared_name] = [arg.value]
    for arg in node.args:
        if arg.keyword is not None:
            values[arg.keyword.value] = [arg.value]
    return Fields(node, values) if values else None


@dataclass(frozen=True)
class ToolResult:
    """One tool result construct: which API's shape it has and where its id and payload are."""

    fields: Fields
    dialect: str  # "anthropic" | "openai" | "responses" | "function" | "mcp" | "gemini" | "tool-output"
    id_key: str | None
    content_key: str | None

    @property
    def node(self) -> cst.Dict | cst.Call:
        return self.fields.node

    @property
    def ids(self) -> list[cst.BaseExpression]:
        return self.fields.all(self.id_key)

    @property
    def contents(self) -> list[cst.BaseExpression]:
        return self.fields.all(self.content_key)

    @property
    def error_flags(self) -> list[cst.BaseExpression]:
        return [value for key in ERROR_FLAG_KEYS for value in self.fields.all(key)]

    @property
    def label(self) -> str:
        """How a description names it: ``tool_result``, ``role "tool" message``, ``ToolMessage``..."""
        if self.dialect == "gemini":
            return "function_response"
        if isinstance(self.node, cst.Call) and final_name(self.node) != "dict":
            return final_name(self.node) or "tool result"
        if self.fields.first("type") is None and self.fields.first("role") is None:
            return "tool result"
        return {
            "anthropic": "tool_result",
            "openai": 'role "tool" message',
            "responses": "function_call_output",
            "function": 'role "function" message',
            "mcp": "CallToolResult",
            "gemini": "function_response",
            "tool-output": "tool output",
        }[self.dialect]


def _payload_from_tool(ctx: SourceContext, fields: Fields, id_key: str) -> str | None:
    """The field whose value is what a tool invocation returned (``observation=tools[name].run(args)``,
    or a local bound to it), whatever the field is called -- in a dict or in an object named for a
    result (``StepResult``), not in the arguments of an error formatter (``ToolErrorFormatterArgs``)."""
    if isinstance(fields.node, cst.Call) and not words(final_name(fields.node) or "") & _RESULT_NOUNS:
        return None
    for key, values in fields.values.items():
        if key == id_key:
            continue
        for value in values:
            candidates = local_values(ctx, value) if isinstance(value, cst.Name) else [value]
            for candidate in candidates:
                inner = candidate.expression if isinstance(candidate, cst.Await) else candidate
                if isinstance(inner, cst.Call) and is_tool_invocation(ctx, inner):
                    return key
    return None


#: Words naming what a tool produced, in a constructor's name (``ToolOutput``, ``ToolCallResult``).
_OUTPUT_NOUNS = frozenset("result results output outputs return response".split())
#: Keys that hold a message's extra, provider-specific fields (llama-index's ``additional_kwargs``).
_EXTRA_WORDS = frozenset("additional extra kwargs metadata".split())


def _prefer_payload(fields: Fields, content_key: str | None) -> str | None:
    """The field that carries the tool's output. A message that keeps its ``content`` empty and the
    output in a field of its own (camel's ``FunctionCallingMessage(content="", result=out)``) is
    read at that field: a constant content is no output."""
    if content_key is None or not all(is_constant(v) for v in fields.all(content_key)):
        return content_key
    for key in (*_CONTENT_KEYS, *_PAYLOAD_KEYS):
        if key != content_key and any(not is_constant(v) for v in fields.all(key)):
            return key
    return content_key


def _nested_ids(fields: Fields) -> dict[str, list[cst.BaseExpression]]:
    """Call ids kept in a message's extra fields: ``ChatMessage(role="tool", blocks=...,
    additional_kwargs={"tool_call_id": result.tool_id})``. Only a dict literal under a key named
    for extra fields counts; the id is still the one the provider reads to pair the result."""
    found: dict[str, list[cst.BaseExpression]] = {}
    for key, values in fields.values.items():
        if not words(key) & _EXTRA_WORDS:
            continue
        for value in (v for v in values if isinstance(v, cst.Dict)):
            for element in value.elements:
                name = string_value(element.key) if isinstance(element, cst.DictElement) else None
                if name in _ID_KEYS:
                    found.setdefault(name, []).append(element.value)
    return found


def _with_nested_ids(fields: Fields, id_key: str) -> tuple[Fields, str | None]:
    """``fields`` with the call id found in its extra fields (when it has none of its own)."""
    if fields.values.get(id_key):
        return fields, id_key
    nested = _nested_ids(fields)
    if id_key in nested:
        return Fields(fields.node, {**fields.values, id_key: nested[id_key]}), id_key
    return fields, id_key


def _named_for_output(fields: Fields) -> bool:
    """A constructor whose name says it holds what a tool produced (``ToolCallResult``)."""
    name = final_name(fields.node) if isinstance(fields.node, cst.Call) else None
    return bool(name and name[:1].isupper() and words(name) & _OUTPUT_NOUNS)


def _tool_output_object(fields: Fields) -> ToolResult | None:
    """A constructor named for a tool's output (``ToolOutput``, ``ToolCallResult``,
    ``FunctionResult``) that carries no provider call id: the tool's side of the result, which
    the loop turns into the message. Its ``content``/``output`` is what the model is shown, its
    ``is_error`` the failure flag, and a ``tool_id``/``call_id``-like field names the call it
    answers. A ``ToolCall``/``ToolSpec`` (no output noun) or a ``Document(content=...)`` (no tool
    noun) is none of this."""
    if not isinstance(fields.node, cst.Call):
        return None
    name = final_name(fields.node) or ""
    parts = words(name)
    if not (name[:1].isupper() and parts & (TOOL_NOUNS | {"call"}) and parts & _OUTPUT_NOUNS):
        return None
    keys = fields.values.keys()
    content_key = _prefer_payload(fields, next((k for k in _CONTENT_KEYS if k in keys), None))
    id_key = next(
        (
            k
            for k in keys
            if words(k) & {"id"} and words(k) - {"id"} and words(k) - {"id"} <= (TOOL_NOUNS | {"call"})
        ),
        None,
    )
    if content_key is None and not set(ERROR_FLAG_KEYS) & keys and id_key is None:
        return None
    return ToolResult(fields, "tool-output", id_key, content_key)


def _observation_step(ctx: SourceContext | None, fields: Fields) -> ToolResult | None:
    """A step named for an observation whose ``observation`` reads a tool's output
    (``ObservationReasoningStep(observation=str(result.tool_output.content))``): the text a ReAct
    prompt shows the model after the tool ran. An observation made of anything else (a model's
    reply, a constant) is not a tool's."""
    if ctx is None or not isinstance(fields.node, cst.Call):
        return None
    name = final_name(fields.node) or ""
    if not (name[:1].isupper() and "observation" in words(name)):
        return None
    for value in fields.all("observation"):
        said = node_words(ctx, value)
        if said & TOOL_NOUNS and said & _OUTPUT_NOUNS:
            return ToolResult(fields, "tool-output", None, "observation")
    return None


#: The head noun of a class that keeps an account of a call (camel's ``ToolCallingRecord``, a
#: ``ToolCallLog``): handed back to the caller or a log, never what the model receives.
_BOOKKEEPING_HEADS = frozenset("record records log logs trace span metric metrics".split())


def _bookkeeping(fields: Fields) -> bool:
    if not isinstance(fields.node, cst.Call):
        return False
    name = final_name(fields.node) or ""
    parts = re.split(r"[^a-z0-9]+", TOOL_CAMEL.sub("_", name).lower())
    return name[:1].isupper() and parts[-1] in _BOOKKEEPING_HEADS


def _classify(fields: Fields, ctx: SourceContext | None = None) -> ToolResult | None:
    if _bookkeeping(fields):
        return None
    found = _classify_shape(fields, ctx)
    if found is None or found.id_key is None:
        return found
    merged, id_key = _with_nested_ids(found.fields, found.id_key)
    return ToolResult(merged, found.dialect, id_key, _prefer_payload(merged, found.content_key))


def _classify_shape(fields: Fields, ctx: SourceContext | None = None) -> ToolResult | None:
    keys = fields.values.keys()
    if isinstance(fields.node, cst.Call) and final_name(fields.node) in GEMINI_RESPONSE_BUILDERS:
        if "response" not in keys or "name" not in keys:
            return None
        return ToolResult(fields, "gemini", "id" if "id" in keys else "name", "response")
    kind, role = string_value(fields.first("type")), string_value(fields.first("role"))
    roles = {string_value(value) for value in fields.all("role")}
    if "tool" in roles:  # ``msg["role"] = "tool"`` in one branch, ``"user"`` in the other
        role = "tool"
    if kind == "tool_result":
        return ToolResult(fields, "anthropic", "tool_use_id", "content")
    if kind == "function_call_output":
        return ToolResult(fields, "responses", "call_id", "output")
    if role == "tool":
        return ToolResult(fields, "openai", "tool_call_id", "content")
    if role == "function":
        return ToolResult(fields, "function", None, "content")
    if kind is None and role is None:
        # no discriminator: an id of a call plus what it produced (``ToolMessage``, the Assistants
        # API's ``{"tool_call_id": ..., "output": ...}``, autogen's ``FunctionExecutionResult``)
        id_key = next((k for k in _ID_KEYS if k in keys), None)
        content_key = next((k for k in _CONTENT_KEYS if k in keys), None)
        if id_key and content_key is None:
            content_key = next((k for k in _PAYLOAD_KEYS if k in keys), None)
        if id_key and content_key is None and ctx is not None:
            content_key = _payload_from_tool(ctx, fields, id_key)
        if id_key and content_key is None and "value" in keys and _named_for_output(fields):
            content_key = "value"  # dspy's ``ToolCallResult(call_id=..., name=..., value=...)``
        if id_key and (content_key or set(ERROR_FLAG_KEYS) & keys):
            return ToolResult(fields, _DIALECT_OF_ID[id_key], id_key, content_key)
    if isinstance(fields.node, cst.Call) and final_name(fields.node) == "CallToolResult":
        return ToolResult(fields, "mcp", None, "content")
    if kind is None and role is None:
        return _tool_output_object(fields) or _observation_step(ctx, fields)
    return None


def recorded_for_telemetry(ctx: SourceContext, node: cst.CSTNode) -> bool:
    """``node`` (perhaps inside a larger literal) is handed to a call that records it for
    observability: ``self._add_event(span, "tool.message", event_attributes={...})``,
    ``span.set_attribute(...)``, ``logger.debug(...)``. The model never sees that copy."""
    child = node
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.Arg):
            if ancestor.keyword is not None and words(ancestor.keyword.value) & TELEMETRY_WORDS:
                return True
        elif isinstance(ancestor, cst.Call):
            if child is ancestor.func:
                return False
            said = set(node_words(ctx, ancestor.func))
            said.update(
                w for arg in ancestor.args if isinstance(arg.value, cst.Name) for w in words(arg.value.value)
            )
            return bool(said & TELEMETRY_WORDS)
        elif not isinstance(ancestor, (cst.BaseExpression, cst.BaseElement, cst.BaseDictElement)):
            return False
        child = ancestor
    return False


def tool_results(ctx: SourceContext) -> list[ToolResult]:
    """Every tool result construct in the file (outside test functions), in document order."""

    def compute() -> list[ToolResult]:
        found = []
        for node in [*ctx.findall(m.Dict()), *ctx.findall(m.Call())]:
            fields = fields_of(ctx, node)
            result = _classify(fields, ctx) if fields else None
            if result is not None and not in_test(ctx, node) and not recorded_for_telemetry(ctx, node):
                found.append(result)
        return found

    return ctx.cached(("tools", "tool_results"), compute)


def text_values(ctx: SourceContext, node: cst.CSTNode) -> list[cst.BaseExpression]:
    """The ``text`` of every text block (``{"type": "text", "text": X}``, ``TextContent(...)``,
    Responses ``input_text``/``output_text``) under ``node``."""
    found = []
    for candidate in walk(node):
        if isinstance(candidate, (cst.Dict, cst.Call)):
            fields = fields_of(ctx, candidate)
            kind = string_value(fields.first("type")) if fields else None
            if fields and kind in ("text", "input_text", "output_text"):
                found.extend(fields.all("text"))
    return found


def dict_payload(ctx: SourceContext, content: cst.BaseExpression) -> bool:
    """Whether a result's payload is a dict the model reads key by key (Gemini's ``response=
    {"result": out}`` / ``{"error": str(e)}``, literal or bound to a local): cutting it cuts the
    text of each value, not the dict."""
    if isinstance(content, cst.Dict):
        return True
    values = local_values(ctx, content) if isinstance(content, cst.Name) else []
    return bool(values) and all(isinstance(value, cst.Dict) for value in values)


#: Words of a key that files what a tool produced: ``trajectory[f"observation_{idx}"]``,
#: ``state["tool_output"]``.
_SLOT_WORDS = frozenset("observation observations output outputs".split())


def observation_slots(ctx: SourceContext) -> list[cst.BaseExpression]:
    """The tool invocations whose value is filed straight under a key named for an observation
    (``trajectory[f"observation_{idx}"] = self.tools[name](**args)``): a ReAct-style trajectory
    that the next prompt renders for the model. ``cache[f"observation_{i}"] = model.generate(...)``
    files no tool's output, and a key that only counts (``stats["output_tokens"]``) is no slot."""

    def compute() -> list[cst.BaseExpression]:
        found = []
        for assign in ctx.findall(m.Assign(targets=[m.AssignTarget(target=m.Subscript())])):
            target = assign.targets[0].target
            index = target.slice[0].slice if len(target.slice) == 1 else None
            key = index.value if isinstance(index, cst.Index) else None
            if key is None or in_test(ctx, assign):
                continue
            text = " ".join(
                s.value for s in walk(key) if isinstance(s, (cst.SimpleString, cst.FormattedStringText))
            )
            said = words(text)
            if not said & _SLOT_WORDS or said & {"tokens", "count", "len", "size"}:
                continue
            value = assign.value.expression if isinstance(assign.value, cst.Await) else assign.value
            if isinstance(value, cst.Call) and is_tool_invocation(ctx, value):
                found.append(assign.value)
        return found + _collected_outputs(ctx)

    return ctx.cached(("tools", "observation_slots"), compute)


def _collected_outputs(ctx: SourceContext) -> list[cst.BaseExpression]:
    """``values.append(value)`` where ``value`` is what a tool invocation returned and ``values``
    is handed to a builder of results (``ToolCallResults.from_tool_calls_and_values(calls, values,
    is_errors)``): the outputs collected for the model, one per call. A list of tool values that
    is only counted or logged is not handed to a result builder."""
    found = []
    append = m.Call(func=m.Attribute(value=m.Name(), attr=m.Name("append")), args=[m.Arg(value=m.Name())])
    for call in ctx.findall(append):
        scope = ctx.enclosing_function(call)
        if scope is None or in_test(ctx, call):
            continue
        item = call.args[0].value
        invoked = [v.expression if isinstance(v, cst.Await) else v for v in local_values(ctx, item)]
        if not any(isinstance(v, cst.Call) and is_tool_invocation(ctx, v) for v in invoked):
            continue
        listed = call.func.value.value
        if re.split(r"[^a-z0-9]+", TOOL_CAMEL.sub("_", listed).lower())[-1] in _BOOKKEEPING_HEADS:
            continue  # ``tool_call_records.append(record)``: an account for the caller, not the model
        for builder in walk(scope):
            if (
                isinstance(builder, cst.Call)
                and node_words(ctx, builder.func) & _OUTPUT_NOUNS
                and any(m.matches(arg.value, m.Name(listed)) for arg in builder.args)
            ):
                found.append(item)
                break
    return found


#: Fields of a tool's result object that hold what the tool produced.
_OUTPUT_FIELDS = frozenset({"content", "output", "result", "text"})


def summarised_outputs(ctx: SourceContext) -> list[cst.Attribute]:
    """A tool result's output read into a summary the model is shown: ``format(result=result.content,
    ...)`` or ``f"{result.content}"`` in a function that takes the result as a parameter annotated
    with a tool-result type (``result: FunctionExecutionResult``). Two pieces of evidence: the
    parameter's type is named for a tool and an output, and its output field is rendered into
    text. A parameter typed ``ChatResult``/``str`` or a field that is only compared is neither."""

    def compute() -> list[cst.Attribute]:
        found = []
        for function in ctx.nodes(cst.FunctionDef):
            typed = set()
            for param in function.params.params:
                annotation = ctx.code(param.annotation.annotation) if param.annotation else ""
                said = words(annotation)
                if said & (TOOL_NOUNS | {"call"}) and said & _OUTPUT_NOUNS:
                    typed.add(param.name.value)
            if not typed or in_test(ctx, function):
                continue
            for node in walk(function.body):
                if not (
                    isinstance(node, cst.Attribute)
                    and isinstance(node.value, cst.Name)
                    and node.value.value in typed
                    and node.attr.value in _OUTPUT_FIELDS
                ):
                    continue
                parent = ctx.parent(node)
                rendered = isinstance(parent, cst.FormattedStringExpression) or (
                    isinstance(parent, cst.Arg)
                    and isinstance(ctx.parent(parent), cst.Call)
                    and final_name(ctx.parent(parent)) == "format"
                )
                if rendered:
                    found.append(node)
        return found

    return ctx.cached(("tools", "summarised_outputs"), compute)
