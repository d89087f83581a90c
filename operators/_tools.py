"""Shared vocabulary of the tool operators: tool results and tool-contract checks, by meaning.

Agent loops spell the same things many ways. A *tool result* (:func:`tool_results`) is an
Anthropic ``{"type": "tool_result", "tool_use_id": ..., "content": ...}`` block (or
``ToolResultBlockParam(...)``), an OpenAI ``{"role": "tool", "tool_call_id": ..., "content": ...}``
message, a Responses ``{"type": "function_call_output", "call_id": ..., "output": ...}`` item, a
legacy ``{"role": "function", ...}`` message, an MCP ``CallToolResult(...)``, or -- without a
``type``/``role`` discriminator -- anything pairing a call id (``tool_use_id``/``tool_call_id``/
``call_id``) with a payload (``content``/``output``/``result``/``is_error``): the Assistants API's
``{"tool_call_id": ..., "output": ...}``, langchain's ``ToolMessage``, autogen's
``FunctionExecutionResult``, a project's own dataclass, pydantic model or TypedDict. It may be a
dict literal (plus the keys assigned into it later in the function: ``response["content"] = out``),
``dict(...)``, or a constructor called with keywords, or positionally when the class is defined
in the file. Method calls that merely *mention* the fields (``journal.record(tool_use_id=...)``)
are not results: only constructors are.

A *contract check* is a guard -- a leaf of an ``if``/``elif``/``assert``/conditional-expression
test, reached through ``and``/``or``/``not`` only -- exactly one of whose branches refuses
(raises, answers with an error, or leaves early) while the other carries on or runs the tool.
:func:`bypass` returns the literal that makes such a guard never refuse, whatever its polarity
(``if name not in tools: refuse`` and ``if name in tools: run() else: refuse`` alike). Branches
that do work of their own (a loop, a ``try``), hand over to an ``elif`` chain or return a value
are not refusals; comments never count.

Identifiers and keys are split into lower-case words (``ALLOWED_TOOLS`` -> ``allowed``, ``tools``;
``requiresApproval`` -> ``requires``, ``approval``) so vocabulary matches whole words only. Test
modules and pytest test functions are not agent code and are left alone (:func:`in_test`).
Nothing in here yields mutations; the operator modules decide what to change.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.vocabulary import (  # the stream/tool vocabulary lives there
    ALLOW_WORDS,
    ERROR_FLAG_KEYS,
    PYDANTIC_VALIDATORS,
    REGISTRY_WORDS,
    REQUEST_SUBJECTS,
    TELEMETRY_WORDS,
    TOOL_CONTEXT_WORDS,
    TOOL_NOUNS,
    TOOLISH,
    node_words,
    ordered_words,
)
from mutagent.anatomy.vocabulary import (
    ARG_LEAVES as _ARG_LEAVES,
)
from mutagent.anatomy.vocabulary import (
    ARG_MODIFIERS as _ARG_MODIFIERS,
)
from mutagent.anatomy.vocabulary import (
    ARGUMENT_READS as _READS,
)
from mutagent.anatomy.vocabulary import (
    CALLER_NOUNS as _CALLER_NOUNS,
)
from mutagent.anatomy.vocabulary import (
    COLLECTION_HEADS as _COLLECTION_HEADS,
)
from mutagent.anatomy.vocabulary import (
    CONTENT_KEYS as _CONTENT_KEYS,
)
from mutagent.anatomy.vocabulary import (
    DIALECT_OF_ID as _DIALECT_OF_ID,
)
from mutagent.anatomy.vocabulary import (
    ERROR_FLAGS as _ERROR_FLAGS,
)
from mutagent.anatomy.vocabulary import (
    ERROR_STATUSES as _ERROR_STATUSES,
)
from mutagent.anatomy.vocabulary import (
    ID_KEYS as _ID_KEYS,
)
from mutagent.anatomy.vocabulary import (
    INVOKE_VERBS as _INVOKE_VERBS,
)
from mutagent.anatomy.vocabulary import (
    MAPPING_HEADS as _MAPPING_HEADS,
)
from mutagent.anatomy.vocabulary import (
    NEGATED as _NEGATED,
)
from mutagent.anatomy.vocabulary import (
    NOT_INVOKING as _NOT_INVOKING,
)
from mutagent.anatomy.vocabulary import (
    PARSE_VERBS as _PARSE_VERBS,
)
from mutagent.anatomy.vocabulary import (
    PAYLOAD_KEYS as _PAYLOAD_KEYS,
)
from mutagent.anatomy.vocabulary import (
    REFUSAL_WORDS as _REFUSAL_WORDS,
)
from mutagent.anatomy.vocabulary import (
    RESULT_NOUNS as _RESULT_NOUNS,
)
from mutagent.anatomy.vocabulary import (
    SUCCESS_FLAGS as _SUCCESS_FLAGS,
)
from mutagent.anatomy.vocabulary import (
    TOOL_CALL_WORDS as _TOOL_CALL_WORDS,
)
from mutagent.anatomy.vocabulary import (
    TOOL_CAMEL as _CAMEL,
)
from mutagent.anatomy.vocabulary import (
    TOOL_NAME_WORDS as _TOOL_NAME_WORDS,
)
from mutagent.anatomy.vocabulary import (
    UNWRAP_CALLS as _UNWRAP_CALLS,
)
from mutagent.anatomy.vocabulary import (
    VALIDATE_WORDS as _VALIDATE_WORDS,
)
from mutagent.anatomy.vocabulary import (
    tool_words as words,
)
from mutagent.mutation.context import SourceContext

# -- words ------------------------------------------------------------------------------------


def final_name(node: cst.CSTNode) -> str | None:
    """The name a reader calls a callee or value by: ``self.tools.get`` -> ``get``."""
    if isinstance(node, cst.Await):
        node = node.expression
    if isinstance(node, cst.Call):
        node = node.func
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return None


def string_value(node: cst.CSTNode | None) -> str | None:
    """The value of a plain (non f-) string literal."""
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def is_literal(node: cst.CSTNode) -> bool:
    """A constant whose value no tool outcome can change."""
    if isinstance(node, cst.Name):
        return node.value in ("None", "True", "False")
    if isinstance(node, cst.UnaryOperation):
        return is_literal(node.expression)
    return isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.Integer, cst.Float, cst.Imaginary))


_SKIPPED_FIELDS = frozenset(
    (
        "lpar rpar comma semicolon colon dot equal first_colon second_colon leading_lines "
        "lines_after_decorators header footer newline trailing_whitespace"
    ).split()
)
_NODE_FIELDS: dict[type, tuple[str, ...]] = {}


def _children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The syntactic children of ``node`` (punctuation and whitespace left out), in no
    particular order. ``CSTNode.children`` re-runs libcst's visitor for every node, which made
    scanning a function cost more than parsing the file."""
    names = _NODE_FIELDS.get(type(node))
    if names is None:
        names = _NODE_FIELDS[type(node)] = tuple(
            f.name
            for f in dataclasses.fields(node)
            if f.name not in _SKIPPED_FIELDS and not f.name.startswith("whitespace")
        )
    found: list[cst.CSTNode] = []
    for name in names:
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            found.append(value)
        elif isinstance(value, (list, tuple)):
            found.extend(item for item in value if isinstance(item, cst.CSTNode))
    return found


def walk(node: cst.CSTNode, into: Callable[[cst.CSTNode], bool] | None = None) -> Iterator[cst.CSTNode]:
    """``node`` and its descendants, not entering nested functions, classes or lambdas (nor any
    descendant ``into`` rejects: it is left out with everything under it)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        if current is not node and isinstance(current, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        stack.extend(child for child in _children(current) if into is None or into(child))


# -- vocabulary -------------------------------------------------------------------------------


# -- constructs with named fields -------------------------------------------------------------


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


def is_constructor(ctx: SourceContext, call: cst.Call) -> bool:
    """``ToolResult(...)``, ``types.CallToolResult(...)``, ``dict(...)``, ``make_tool_result(...)``:
    a call that builds a value, as opposed to a method that logs or records one."""
    name = final_name(call)
    if name is None:
        return False
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


# -- tool results -----------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolResult:
    """One tool result construct: which API's shape it has and where its id and payload are."""

    fields: Fields
    dialect: str  # "anthropic" | "openai" | "responses" | "function" | "mcp"
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


def _classify(fields: Fields, ctx: SourceContext | None = None) -> ToolResult | None:
    keys = fields.values.keys()
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
        if id_key and (content_key or set(ERROR_FLAG_KEYS) & keys):
            return ToolResult(fields, _DIALECT_OF_ID[id_key], id_key, content_key)
    if isinstance(fields.node, cst.Call) and final_name(fields.node) == "CallToolResult":
        return ToolResult(fields, "mcp", None, "content")
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


def _assignments(ctx: SourceContext, scope: cst.CSTNode) -> dict[str, list[cst.BaseExpression]]:
    """Plain ``x = ...``/``x: T = ...``/``(x := ...)`` values by name, for one function (or module)."""

    def compute() -> dict[str, list[cst.BaseExpression]]:
        found: dict[str, list[cst.BaseExpression]] = {}
        for node in walk(scope):
            if isinstance(node, cst.Assign):
                targets = [t.target for t in node.targets]
            elif isinstance(node, (cst.AnnAssign, cst.NamedExpr)) and node.value is not None:
                targets = [node.target]
            else:
                continue
            for target in targets:
                if isinstance(target, cst.Name):
                    found.setdefault(target.value, []).append(node.value)
        return found

    return ctx.cached(("tools", "assignments", id(scope)), compute)


def local_values(ctx: SourceContext, name: cst.Name) -> list[cst.BaseExpression]:
    """Values assigned to ``name`` in the function where it is used (or at module level)."""
    scope = ctx.enclosing_function(name) or ctx.module
    return _assignments(ctx, scope).get(name.value, [])


# -- tool invocation and tool context ---------------------------------------------------------


def _not_invoking(verb: str) -> bool:
    """A verb that looks a tool up or answers it (``get``), or its async twin (``aget``, as
    ``ainvoke`` is ``invoke``'s)."""
    return verb in _NOT_INVOKING or (verb[:1] == "a" and verb[1:] in _NOT_INVOKING)


def is_tool_invocation(ctx: SourceContext, call: cst.Call) -> bool:
    """``TOOLS[name](**args)``, ``handler(args)``, ``spec.fn(...)``, ``run_tool(...)``,
    ``session.call_tool(...)``, ``tool.invoke(...)``, ``self.registry.execute(...)``."""
    func = call.func
    if isinstance(func, cst.Subscript):
        return bool(node_words(ctx, func.value) & (REGISTRY_WORDS | TOOL_NOUNS))
    name = final_name(call)
    if not name or name.lstrip("_")[:1].isupper():
        return False
    if isinstance(func, cst.Name) and any(q.startswith("builtins.") for q in ctx.qualified_names(call)):
        return False  # ``callable(handler)`` asks, it does not call
    parts = [p for p in re.split(r"[^a-z0-9]+", _CAMEL.sub("_", name).lower()) if p]
    if not parts or _not_invoking(parts[0]) or parts[-1] in _NOT_INVOKING:
        return False
    if parts[-1] in TOOL_NOUNS:
        return True
    if parts[-1] in _INVOKE_VERBS or parts[0] in _INVOKE_VERBS:
        return bool((set(parts) | node_words(ctx, func)) & _CALLER_NOUNS)
    return False


def invokes_tool(ctx: SourceContext, nodes: cst.CSTNode | Sequence[cst.CSTNode]) -> bool:
    """Whether a tool is invoked anywhere in ``nodes`` (outside nested functions)."""
    tops = [nodes] if isinstance(nodes, cst.CSTNode) else nodes
    return any(isinstance(n, cst.Call) and is_tool_invocation(ctx, n) for top in tops for n in walk(top))


def in_tool_context(ctx: SourceContext, node: cst.CSTNode) -> bool:
    """Whether ``node`` sits in code that handles tool calls: a function or class named for it
    (``run_tool``, ``Executor``, ``dispatch``), taking a tool call (``tool_call``, ``spec``), or
    invoking a tool / building a tool result itself."""
    return any(_handles_tools(ctx, owner) for owner in ctx.ancestors(node) if isinstance(owner, _DEFS))


_DEFS = (cst.FunctionDef, cst.ClassDef)


def _handles_tools(ctx: SourceContext, owner: cst.FunctionDef | cst.ClassDef) -> bool:
    def compute() -> bool:
        if not owner.name.value.startswith("__") and words(owner.name.value) & TOOL_CONTEXT_WORDS:
            return True
        if isinstance(owner, cst.ClassDef):
            return False
        if node_words(ctx, owner.params) & TOOL_CONTEXT_WORDS or invokes_tool(ctx, owner.body):
            return True
        return any(ctx.enclosing_function(result.node) is owner for result in tool_results(ctx))

    return ctx.cached(("tools", "handles_tools", id(owner)), compute)


# -- guards -----------------------------------------------------------------------------------


def guard_of(ctx: SourceContext, operand: cst.BaseExpression) -> tuple[cst.CSTNode, bool] | None:
    """The ``if``/``assert``/conditional expression whose test ``operand`` is a leaf of, and
    whether the test is true when ``operand`` is (false under an odd number of ``not``)."""
    sense, node = True, operand
    for parent in ctx.ancestors(operand):
        if isinstance(parent, (cst.If, cst.Assert, cst.IfExp)) and parent.test is node:
            return parent, sense
        if isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not):
            sense = not sense
        elif not isinstance(parent, cst.BooleanOperation):
            return None
        node = parent
    return None


def guard_leaves(test: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The operands of ``and``/``or``/``not`` in a test, left to right."""
    if isinstance(test, cst.BooleanOperation):
        return guard_leaves(test.left) + guard_leaves(test.right)
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return guard_leaves(test.expression)
    return [test]


def _top_statements(nodes: Sequence[cst.CSTNode]) -> list[cst.CSTNode]:
    """The statements of a branch itself (not those nested in its blocks)."""
    found: list[cst.CSTNode] = []
    for node in nodes:
        body = getattr(node, "body", None)
        if isinstance(node, cst.Else):
            body = node.body.body
        elif isinstance(node, (cst.IndentedBlock, cst.SimpleStatementSuite)):
            body = node.body
        else:
            body = [node]
        for statement in body:
            found.extend(statement.body if isinstance(statement, cst.SimpleStatementLine) else [statement])
    return found


def _spoken(nodes: Iterable[cst.CSTNode]) -> str:
    """The identifiers and string text among ``nodes``: what a branch says, comments left out
    (a comment explaining why the code "cannot" do something is no refusal)."""
    parts = []
    for node in nodes:
        if isinstance(node, cst.Name):
            parts.append(node.value)
        elif isinstance(node, cst.SimpleString):
            parts.append(str(node.evaluated_value))
        elif isinstance(node, cst.FormattedStringText):
            parts.append(node.value)
    return " ".join(parts)


def _flags_an_error(nodes: Iterable[cst.CSTNode]) -> bool:
    """A dict entry or keyword argument among ``nodes`` that marks a result as an error."""
    for node in nodes:
        if isinstance(node, cst.DictElement) and isinstance(node.key, cst.SimpleString):
            key, value = str(node.key.evaluated_value), node.value
        elif isinstance(node, cst.Arg) and node.keyword is not None:
            key, value = node.keyword.value, node.value
        else:
            continue
        key = key.lower()
        if key in _ERROR_FLAGS and not (isinstance(value, cst.Name) and value.value in ("False", "None")):
            if not (isinstance(value, cst.SimpleString) and not value.evaluated_value):
                return True
        if key in _SUCCESS_FLAGS and isinstance(value, cst.Name) and value.value == "False":
            return True
        if key in ("status", "outcome") and isinstance(value, cst.SimpleString):
            if str(value.evaluated_value).lower() in _ERROR_STATUSES:
                return True
    return False


def _unconditional(node: cst.CSTNode) -> bool:
    """Not a nested ``if`` or ``assert`` (see ``refusal_level``)."""
    return not isinstance(node, (cst.If, cst.Assert))


def refusal_level(
    ctx: SourceContext, nodes: Sequence[cst.CSTNode], vocabulary: frozenset[str] = frozenset()
) -> int:
    """2: the branch raises or answers with an error; 1: it only leaves early (``continue``,
    ``break``, a bare ``return``/``return None``, or a ``return`` of something named in
    ``vocabulary``); 0: it carries on, runs the tool, returns a value, does work of its own (a
    loop, a ``try``) or hands over to an ``elif`` chain."""
    if not nodes or (len(nodes) == 1 and isinstance(nodes[0], cst.If)) or invokes_tool(ctx, nodes):
        return 0
    top = _top_statements(nodes)
    inner = [n for node in nodes for n in walk(node)]
    if any(isinstance(n, (cst.Try, cst.For, cst.While)) for n in inner) and not any(
        isinstance(n, cst.Raise) for n in top
    ):
        return 0
    # only a refusal the branch makes whatever happens counts: one under a nested ``if`` belongs to
    # that inner check (``if isinstance(args, dict): ...; if not isinstance(flag, bool): return
    # error``), and the outer test only decides whether the work around it is done; an ``assert``
    # states a precondition of the work (``assert callback is not None, "a callback is
    # required"``), its failure is a crash, not an answer
    outright = [n for node in nodes for n in walk(node, into=_unconditional)]
    text = _spoken(outright)
    if (
        any(isinstance(n, cst.Raise) for n in outright)
        or words(text) & _REFUSAL_WORDS
        or _NEGATED.search(text)
        or _flags_an_error(outright)
    ):
        return 2
    for n in inner:
        if isinstance(n, (cst.Continue, cst.Break)):
            return 1
        if isinstance(n, cst.Return) and (
            n.value is None or is_literal(n.value) or node_words(ctx, n.value) & vocabulary
        ):
            return 1
    return 0


_EXITS = (cst.Return, cst.Raise, cst.Continue, cst.Break)


def _exits(statement: cst.CSTNode) -> bool:
    """A simple statement line (or one-line suite) that leaves: return/raise/continue/break."""
    return isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) and any(
        isinstance(small, _EXITS) for small in statement.body
    )


def _implicit_else(ctx: SourceContext, guard: cst.If) -> list[cst.CSTNode]:
    """After ``if ok: return run()``, the simple statements that follow, up to the one that
    leaves, are the else branch (``log(...); return "unknown tool"``). Anything else after the
    guard is the rest of the function, not a branch of it."""
    body = guard.body
    if not (_exits(body) or (isinstance(body, cst.IndentedBlock) and body.body and _exits(body.body[-1]))):
        return []
    siblings = getattr(ctx.parent(guard), "body", ())
    if not isinstance(siblings, (list, tuple)):
        return []
    index = next((i for i, stmt in enumerate(siblings) if stmt is guard), len(siblings))
    following: list[cst.CSTNode] = []
    for statement in siblings[index + 1 :]:
        if not isinstance(statement, cst.SimpleStatementLine):
            return []
        following.append(statement)
        if _exits(statement):
            return following
    return []


def branches(ctx: SourceContext, guard: cst.CSTNode) -> tuple[list[cst.CSTNode], list[cst.CSTNode]]:
    """What runs when the guard's test is true, and what runs when it is false. For an ``assert``
    the false side is the failure itself (represented by the assert)."""
    if isinstance(guard, cst.Assert):
        return [], [guard]
    if isinstance(guard, cst.IfExp):
        return [guard.body], [guard.orelse]
    assert isinstance(guard, cst.If)
    return [guard.body], ([guard.orelse] if guard.orelse else _implicit_else(ctx, guard))


def force(sense: bool, test_value: bool) -> cst.Name:
    """The literal an operand must become for its test to come out as ``test_value``."""
    return cst.Name("True" if test_value == sense else "False")


def bypass(
    ctx: SourceContext,
    operand: cst.BaseExpression,
    strict: bool = False,
    vocabulary: frozenset[str] = frozenset(),
) -> cst.Name | None:
    """The literal (``True``/``False``) that stops the guard ``operand`` belongs to from ever
    refusing, or None if ``operand`` is not a leaf of a guard with exactly one refusing side.

    ``strict`` asks for an unmistakable refusal (a raise or an error answer), not just an early
    exit; ``vocabulary`` names what an early ``return`` may hand back and still be a refusal
    (``return approval_request``).
    """
    found = guard_of(ctx, operand)
    if found is None:
        return None
    guard, sense = found
    if _picks_a_label(ctx, guard):
        return None
    if isinstance(guard, cst.Assert):
        on_true, on_false = 0, 2
    else:
        when_true, when_false = branches(ctx, guard)
        on_true = refusal_level(ctx, when_true, vocabulary)
        on_false = refusal_level(ctx, when_false, vocabulary)
    if on_true == on_false or max(on_true, on_false) < (2 if strict else 1):
        return None
    return force(sense, test_value=on_true < on_false)


def _picks_a_label(ctx: SourceContext, guard: cst.CSTNode) -> bool:
    """``audit(call, "approved" if call.confirmed else "rejected")``: a conditional expression
    between two constants handed to a call only chooses the word recorded; the decision it
    describes is made elsewhere, and forcing it refuses or lets through nothing."""
    return (
        isinstance(guard, cst.IfExp)
        and is_literal(guard.body)
        and is_literal(guard.orelse)
        and isinstance(ctx.parent(guard), cst.Arg)
    )


def is_test_file(ctx: SourceContext) -> bool:
    """A pytest module (``test_*.py``, ``*_test.py``, ``conftest.py``): its helpers build expected
    tool results and its asserts check them; none of that is agent code."""
    name = ctx.path.replace("\\", "/").rsplit("/", 1)[-1]
    return name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"


def in_test(ctx: SourceContext, node: cst.CSTNode) -> bool:
    """Inside a test module or a pytest test function."""
    return is_test_file(ctx) or any(
        isinstance(a, cst.FunctionDef) and a.name.value.startswith("test") for a in ctx.ancestors(node)
    )


def agent_code(ctx: SourceContext, matcher: m.BaseMatcherNode) -> list[cst.CSTNode]:
    """``ctx.findall(matcher)`` without what lies in tests (see :func:`in_test`)."""
    return [node for node in ctx.findall(matcher) if not in_test(ctx, node)]


def guards(ctx: SourceContext) -> list[cst.If | cst.Assert | cst.IfExp]:
    """Every ``if``/``elif``/``assert``/conditional expression outside test functions."""

    def compute() -> list[cst.If | cst.Assert | cst.IfExp]:
        found = [*ctx.findall(m.If()), *ctx.findall(m.Assert()), *ctx.findall(m.IfExp())]
        return [guard for guard in found if not in_test(ctx, guard)]

    return ctx.cached(("tools", "guards"), compute)


def guard_operands(ctx: SourceContext) -> list[cst.BaseExpression]:
    """Every leaf of every guard's test (see :func:`guards`), in document order."""
    return ctx.cached(
        ("tools", "guard_operands"), lambda: [leaf for g in guards(ctx) for leaf in guard_leaves(g.test)]
    )


def names_in(node: cst.CSTNode) -> Iterable[cst.Name]:
    return (n for n in walk(node) if isinstance(n, cst.Name))


# -- tool names and tool collections ----------------------------------------------------------


def names_tool(expr: cst.BaseExpression) -> bool:
    """The requested tool's name (or the tool): ``name``, ``block.name``, ``tc.function.name``,
    ``call["name"]``, ``tool_name``, ``fn_name`` -- not ``user.name``'s owner, ``__name__``,
    ``managed_agent_class_name`` or a string literal."""
    leaf = leaf_name(expr)
    if not leaf or leaf.startswith("__") or is_literal(expr):
        return False
    found = words(leaf)
    return bool(found) and found <= _TOOL_NAME_WORDS


def is_tool_collection(ctx: SourceContext, expr: cst.BaseExpression) -> bool:
    """A collection of tools by its head noun (see ``_COLLECTION_HEADS``), looking through
    ``.keys()``, ``set(...)`` and comprehensions: ``{t.name for t in self.tools}`` counts."""
    parts = _collection_words(expr)
    return bool(parts) and (
        parts[-1] in _COLLECTION_HEADS
        or (parts[-1] in _MAPPING_HEADS and bool(set(parts) & (TOOLISH | ALLOW_WORDS)))
    )


def is_allow_list(ctx: SourceContext, expr: cst.BaseExpression) -> bool:
    """A tool collection named as an allow- or deny-list (see ``ALLOW_WORDS``): ``self.allow``,
    ``ALLOWED_TOOLS``, ``enabled_tools``, ``allow_list`` -- not a plain registry (``self.tools``)."""
    parts = _collection_words(expr)
    return is_tool_collection(ctx, expr) and bool(set(parts or ()) & ALLOW_WORDS)


def _collection_words(expr: cst.BaseExpression) -> list[str] | None:
    """The words of a collection's own name, looking through ``.keys()``, ``set(...)`` and
    comprehensions."""
    for _ in range(4):
        if isinstance(expr, cst.Call) and expr.args and final_name(expr) in _UNWRAP_CALLS:
            expr = expr.args[0].value if isinstance(expr.func, cst.Name) else expr
        if (
            isinstance(expr, cst.Call)
            and isinstance(expr.func, cst.Attribute)
            and final_name(expr) in _UNWRAP_CALLS
        ):
            expr = expr.func.value
        elif isinstance(expr, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
            expr = expr.for_in.iter
        else:
            break
    leaf = leaf_name(expr)
    return ordered_words(leaf) if leaf else None


# -- tool arguments and their validation -----------------------------------------------------


def is_argument_name(name: str | None) -> bool:
    """``args``, ``tool_input``, ``fn_kwargs``, ``arguments_pre_parsed``, ``params`` -- not
    ``input_content``, ``signature.parameters`` (a schema's or a signature's parameters are not
    values) or ``__args__``."""
    if not name or name.startswith("__"):
        return False
    found = words(name)
    return bool(found & _ARG_LEAVES) and found <= _ARG_LEAVES | _ARG_MODIFIERS


def _names_arguments(ctx: SourceContext, node: cst.CSTNode, name: str | None) -> bool:
    """``arguments`` (and ``args``, unless it is the function's own ``*args``) is what tool-calling
    APIs call a call's arguments. ``kwargs``/``input``/``params`` are also what a model request, a
    runnable or an HTTP call takes (``kwargs.pop("extra_headers")``, ``filtered.input``): they
    name a tool's arguments only when qualified by the call (``tool_input``, ``call.input``,
    ``block.input``) or in tool-handling code."""
    if not is_argument_name(name):
        return False
    found = words(name or "")
    if found & {"arguments", "argument"} or found & _TOOL_CALL_WORDS:
        return True
    if found & {"args", "arg"} and not _own_varargs(ctx, node):
        return True
    if isinstance(node, (cst.Attribute, cst.Subscript)) and node_words(ctx, node.value) & (
        _TOOL_CALL_WORDS | {"block", "tool_call", "tool_use"}
    ):
        return True
    return in_tool_context(ctx, node)


def _own_varargs(ctx: SourceContext, node: cst.CSTNode) -> bool:
    """``args`` is the enclosing function's own ``*args``/``**kwargs``: what its caller passed."""
    func = ctx.enclosing_function(node)
    if func is None or not isinstance(node, cst.Name):
        return False
    stars = (func.params.star_arg, func.params.star_kwarg)
    return any(isinstance(p, cst.Param) and p.name.value == node.value for p in stars)


def _argument_parameters(ctx: SourceContext) -> frozenset[tuple[int, str]]:
    """(function id, parameter) of the functions of this file that are handed a tool call's
    arguments: ``problems = contract.problems(call.arguments)`` makes ``payload`` in ``def
    problems(self, payload)`` the arguments, whatever it is called."""

    def compute() -> frozenset[tuple[int, str]]:
        definitions: dict[str, list[cst.FunctionDef]] = {}
        for func in ctx.nodes(cst.FunctionDef):
            definitions.setdefault(func.name.value, []).append(func)
        found: set[tuple[int, str]] = set()
        for call in ctx.nodes(cst.Call):
            targets = definitions.get(final_name(call) or "")
            if not targets or in_test(ctx, call):
                continue
            for position, arg in enumerate(call.args):
                if arg.star or not mentions_arguments(ctx, arg.value, flow=False):
                    continue
                for func in targets:
                    params = [*func.params.posonly_params, *func.params.params]
                    if arg.keyword is not None:
                        names = {p.name.value for p in (*params, *func.params.kwonly_params)}
                        if arg.keyword.value in names:
                            found.add((id(func), arg.keyword.value))
                        continue
                    bound = (
                        isinstance(call.func, cst.Attribute)
                        and params
                        and params[0].name.value in ("self", "cls")
                    )
                    index = position + (1 if bound else 0)
                    if index < len(params):
                        found.add((id(func), params[index].name.value))
        return frozenset(found)

    return ctx.cached(("tools", "argument_parameters"), compute)


def leaf_name(expr: cst.BaseExpression) -> str | None:
    """``call["input"]`` -> ``input``; ``tc.function.name`` -> ``name``; ``get_name()`` -> ``get_name``."""
    if (
        isinstance(expr, cst.Subscript)
        and len(expr.slice) == 1
        and isinstance(expr.slice[0].slice, cst.Index)
    ):
        return string_value(expr.slice[0].slice.value)
    return final_name(expr)


def mentions_arguments(
    ctx: SourceContext, expr: cst.BaseExpression, depth: int = 0, flow: bool = True
) -> bool:
    """Whether ``expr`` reads the tool call's arguments: ``args``, ``call.input``,
    ``tc.function.arguments``, ``args["city"]``, ``arguments.get(key)``, ``json.loads(raw_args)``,
    ``kwargs or {}``, or a local bound to one of those. The *result* of a call that merely takes
    the arguments (``run(args)``) is not the arguments."""
    if depth > 3:
        return False
    if isinstance(expr, cst.Await):
        return mentions_arguments(ctx, expr.expression, depth + 1, flow)
    if isinstance(expr, cst.BooleanOperation):
        return mentions_arguments(ctx, expr.left, depth + 1, flow)
    if isinstance(expr, cst.IfExp):  # a choice between two values, no step of data flow
        return mentions_arguments(ctx, expr.body, depth, flow) or mentions_arguments(
            ctx, expr.orelse, depth, flow
        )
    if isinstance(expr, cst.Call):
        name = final_name(expr)
        if isinstance(expr.func, cst.Attribute) and name in _READS:
            return mentions_arguments(ctx, expr.func.value, depth + 1, flow)
        if name in ("loads", "dict", "deepcopy") and expr.args:
            return mentions_arguments(ctx, expr.args[0].value, depth + 1, flow)
        if set(words(name or "")) & _PARSE_VERBS:
            # ``_parse_tool_json_input(input_json=raw_args)``: parsing the arguments returns them
            return any(mentions_arguments(ctx, a.value, depth + 1, flow) for a in expr.args if not a.star)
        return False
    if isinstance(expr, (cst.Subscript, cst.Attribute)):
        return _names_arguments(ctx, expr, leaf_name(expr)) or mentions_arguments(
            ctx, expr.value, depth + 1, flow
        )
    if isinstance(expr, cst.Name):
        if flow and (id(ctx.enclosing_function(expr)), expr.value) in _argument_parameters(ctx):
            return True
        values = [value for value in local_values(ctx, expr) if value is not expr]
        if any(mentions_arguments(ctx, value, depth + 1, flow) for value in values):
            return True
        if values and all(isinstance(value, (cst.Name, cst.Attribute, cst.Subscript)) for value in values):
            return False  # ``input_args = self.args_schema``: what it was bound to says what it is
        return _names_arguments(ctx, expr, expr.value)
    return False


def from_arguments(ctx: SourceContext, expr: cst.BaseExpression) -> bool:
    """Whether ``expr`` is, or was read from, the tool's arguments; loop variables count:
    ``key`` and ``value`` in ``for key, value in arguments.items()``."""
    if mentions_arguments(ctx, expr):
        return True
    if not isinstance(expr, cst.Name):
        return False
    scope = ctx.enclosing_function(expr) or ctx.module
    return any(
        mentions_arguments(ctx, iterated) for iterated in _loop_sources(ctx, scope).get(expr.value, ())
    )


def _loop_sources(ctx: SourceContext, scope: cst.CSTNode) -> dict[str, list[cst.BaseExpression]]:
    """What each loop variable of a function iterates over (``for k, v in args.items()``)."""

    def compute() -> dict[str, list[cst.BaseExpression]]:
        found: dict[str, list[cst.BaseExpression]] = {}
        for loop in walk(scope):
            if isinstance(loop, (cst.For, cst.CompFor)):
                for name in names_in(loop.target):
                    found.setdefault(name.value, []).append(loop.iter)
        return found

    return ctx.cached(("tools", "loop_sources", id(scope)), compute)


def is_validation_call(ctx: SourceContext, call: cst.Call) -> bool:
    """``jsonschema.validate(args, schema)``, ``validator.is_valid(call.input)``,
    ``validate_args(spec, payload)``, ``schema_violation(schema, arguments)``,
    ``check_arguments(...)`` -- a check *of the tool's arguments*: its name validates and it is
    given the arguments (or is named for them and given something). ``validate_config(config)``,
    ``self.validate_arguments()`` (a definition checking itself) and ``validate_tool_result(...)``
    are not."""
    name = final_name(call)
    if not name or name in PYDANTIC_VALIDATORS or not call.args:
        return False
    own = words(name)
    if not (
        own & _VALIDATE_WORDS or ("errors" in own and node_words(ctx, call.func) & {"validator", "schema"})
    ):
        return False
    if own & _INVOKE_VERBS:  # ``call_fn_with_arg_validation(...)`` runs the tool, it does not only check
        return False
    rest = own - _VALIDATE_WORDS - {"is", "errors", "iter", "against", "with", "for", "and", "all"}
    if rest & REQUEST_SUBJECTS:  # ``validate_output_config_conflict(params.get(...))`` checks the request
        return False
    named_for_arguments = bool(rest & _ARG_LEAVES) and rest <= _ARG_LEAVES | _ARG_MODIFIERS
    if "check" in own and not (named_for_arguments or rest <= {"schema", "required", "types", "type"}):
        return False  # ``check_per_request_input_tokens(...)`` checks something else
    return named_for_arguments or any(from_arguments(ctx, arg.value) for arg in call.args)


# -- edits ------------------------------------------------------------------------------------

_ATOMS = (
    cst.Name,
    cst.Attribute,
    cst.Call,
    cst.Subscript,
    cst.SimpleString,
    cst.FormattedString,
    cst.List,
    cst.Dict,
    cst.Set,
    cst.ListComp,
    cst.DictComp,
    cst.SetComp,
    cst.Integer,
    cst.Float,
)


def atom(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``expr`` parenthesised unless it already binds tighter than a subscript or ``+``."""
    if isinstance(expr, _ATOMS) or expr.lpar:
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def first_chars(expr: cst.BaseExpression, n: int = 10) -> cst.Subscript:
    """``expr[:n]``."""
    return cst.Subscript(
        value=atom(expr), slice=[cst.SubscriptElement(cst.Slice(lower=None, upper=cst.Integer(str(n))))]
    )


def without(container: cst.Call | cst.Dict, item: cst.CSTNode) -> cst.Call | cst.Dict:
    """The call without one argument, or the dict literal without one element."""
    items = list(container.args if isinstance(container, cst.Call) else container.elements)
    position = items.index(item)
    del items[position]
    if items and position == len(items):  # removed the last one: do not leave its comma behind
        items[-1] = items[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    if isinstance(container, cst.Call):
        return container.with_changes(args=items)
    return container.with_changes(elements=items)


def empty_like(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """An empty value of the kind ``expr`` builds: ``{}`` for a dict literal, ``[]`` for a
    list, ``""`` for text (f-strings, ``str(e)``, ``json.dumps(...)``, concatenations), else None."""
    if isinstance(expr, (cst.Dict, cst.DictComp)):
        return cst.Dict([])
    if isinstance(expr, (cst.List, cst.ListComp)):
        return cst.List([])
    if isinstance(expr, (cst.FormattedString, cst.SimpleString, cst.ConcatenatedString, cst.BinaryOperation)):
        return cst.SimpleString('""')
    if isinstance(expr, cst.Call) and final_name(expr) in (
        "str",
        "repr",
        "dumps",
        "format",
        "format_exc",
        "join",
    ):
        return cst.SimpleString('""')
    return None
