"""The argument parsing and validation role: what reads a tool call's arguments (``args``,
``call.input``, ``tc.function.arguments``, ``json.loads(raw_args)``, a parameter handed them by a
caller of this file) and which calls validate them (``jsonschema.validate(args, schema)``), as
opposed to validating a request, a configuration or a tool's result."""

from __future__ import annotations

import libcst as cst

from mutagent.anatomy.agent_code import in_test
from mutagent.anatomy.dataflow import local_values
from mutagent.anatomy.syntax import final_name, final_name_or_key, names_in, walk
from mutagent.anatomy.tools.context import in_tool_context
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
    INVOKE_VERBS as _INVOKE_VERBS,
)
from mutagent.anatomy.vocabulary import (
    PARSE_VERBS as _PARSE_VERBS,
)
from mutagent.anatomy.vocabulary import (  # the stream/tool vocabulary lives there
    PYDANTIC_VALIDATORS,
    REQUEST_SUBJECTS,
    node_words,
)
from mutagent.anatomy.vocabulary import (
    TOOL_CALL_WORDS as _TOOL_CALL_WORDS,
)
from mutagent.anatomy.vocabulary import (
    VALIDATE_WORDS as _VALIDATE_WORDS,
)
from mutagent.anatomy.vocabulary import (
    tool_words as words,
)
from mutagent.mutation.context import SourceContext


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
        # ``convert(args[name], ...)`` makes ``value`` in ``def convert(value, ...)`` the arguments,
        # and ``convert`` handing ``value`` on to ``_parse_string(value, ...)`` makes that one's too:
        # a few rounds follow the arguments down the file's own helpers
        for _ in range(3):
            before = len(found)
            _bind_parameters(ctx, definitions, found)
            if len(found) == before:
                break
        return frozenset(found)

    return ctx.cached(("tools", "argument_parameters"), compute)


def _bind_parameters(
    ctx: SourceContext, definitions: dict[str, list[cst.FunctionDef]], found: set[tuple[int, str]]
) -> None:
    """One round of :func:`_argument_parameters`: the parameters of the file's functions that a
    call hands the arguments (or a parameter already known to hold them)."""
    for call in ctx.nodes(cst.Call):
        targets = definitions.get(final_name(call) or "")
        if not targets or in_test(ctx, call):
            continue
        for position, arg in enumerate(call.args):
            if arg.star or not (
                mentions_arguments(ctx, arg.value, flow=False)
                or (
                    isinstance(arg.value, cst.Name)
                    and (id(ctx.enclosing_function(call)), arg.value.value) in found
                )
            ):
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
        return _names_arguments(ctx, expr, final_name_or_key(expr)) or mentions_arguments(
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
        scope = ctx.enclosing_function(expr) or ctx.module
        iterated = _loop_sources(ctx, scope).get(expr.value, ())
        if iterated and not values:
            # ``for input in inputs:``: a loop variable is an element of what it iterates, not a
            # tool call's arguments because of its own name
            return any(mentions_arguments(ctx, source, depth + 1, flow) for source in iterated)
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
