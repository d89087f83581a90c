"""skip-argument-validation: the tool's arguments are no longer checked against its schema.

Tool arguments are model output: keys go missing, types drift (``"3"`` for ``3``), and extra
keys smuggle in parameters the tool never declared. The executor must validate before running
and answer a bad call with an error the model can correct. Without it the tool runs on
garbage, crashes deep inside, or silently does the wrong thing.

Recognised (by meaning, not by one spelling):

* a validating call -- named to validate/check and given the arguments (or named for them):
  ``jsonschema.validate(args, schema)``, ``validator.validate(call.input)``,
  ``validate_args(spec, payload)``, ``schema_violation(schema, call.input)`` -- used as a
  statement is removed (``pass``); one whose result is used as the arguments is replaced by the raw
  arguments; one used in a guard (``if not is_valid(args)``, or via a variable: ``problem =
  schema_violation(...)`` then ``if problem is not None``) never refuses;
* pydantic: ``Model.model_validate(args)`` -> ``Model.model_construct(**args)`` (v1:
  ``parse_obj`` -> ``construct``), ``model_validate_json(raw)`` -> ``model_construct(**json.loads(raw))``
  when ``json`` is imported, ``TypeAdapter(...).validate_python(args)`` -> ``args``, and
  ``Model(**args)`` for a pydantic model defined in the file -> ``Model.model_construct(**args)``:
  the object keeps its type, only validation is gone;
* hand-written checks in guards: required keys (``key not in args``), unexpected keys
  (``key not in properties``/``props``/``schema["properties"]`` for a key taken from the
  arguments), problems collected from the arguments (``problems = self._problems(tool,
  call.args)``, ``missing = [k for k in required if k not in args]``, then ``if problems:``
  refusing -- the variable named for what is wrong: problems, errors, violations, missing,
  unknown, invalid, extra), types
  (``isinstance(args["n"], int)``, ``isinstance(value, expected)`` for a value taken from them),
  but not a type *dispatch* (``if isinstance(x, list): ... elif isinstance(x, dict): ...``).

* schema rules that collect problems instead of refusing at once, in a method of the tool's
  contract (``if key not in payload: found.append("missing ...")``): each rule gets its own
  mutant that keeps it from recording its problem (the collection must be returned, or named for
  problems, and hold complaints).

What is validated must be the tool's arguments (``arguments``, ``args`` unless it is the
function's own ``*args``, ``call.input``, ``tc.function.arguments``, ``tool_input``; ``kwargs``,
``input`` and ``params`` only when qualified by the call or in tool-handling code), a parameter
of a function of the file that callers hand the arguments to (``contract.problems(call.arguments)``
makes ``payload`` in ``def problems(self, payload)`` the arguments), or a value read from them --
not the result of a call that was given them, a function signature's ``parameters``, a config, a
request's settings (``validate_output_config_conflict``, ``validate_session_conversation_settings``,
guardrail configuration, input content types) or an API response. Hand-written guards must refuse unmistakably
(raise, or answer with an error message).
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.agent_code import agent_code
from mutagent.anatomy.dataflow import local_values
from mutagent.anatomy.syntax import caught_classes, final_name, final_name_or_key, is_constant, names_in, walk
from mutagent.anatomy.tools.allowlist import is_tool_collection
from mutagent.anatomy.tools.arguments import (
    from_arguments,
    is_argument_name,
    is_validation_call,
    mentions_arguments,
)
from mutagent.anatomy.tools.guards import bypass, guard_leaves, guard_of, guard_operands
from mutagent.anatomy.vocabulary import PYDANTIC_VALIDATORS, REFUSAL_WORDS, REQUEST_SUBJECTS, node_words
from mutagent.anatomy.vocabulary import tool_words as words
from mutagent.mutation.context import SourceContext
from mutagent.mutation.operator import Example, Mutation, Operator

#: Where a schema declares its keys: ``key not in properties`` for a key taken from the arguments.
_SCHEMA_KEYS = frozenset(
    "properties property props prop required schema fields expected declared allowed inputs".split()
)
#: A variable named for what is wrong with the arguments: ``problems``, ``errors``, ``missing``.
_PROBLEM_WORDS = frozenset(
    "problem problems error errors violation violations missing unknown invalid extra extras".split()
)
#: A model named for arguments: ``WeatherArgs``, ``SearchArguments``, ``self.arg_model`` (not
#: ``Params``: protocol layers name their request models so).
_MODEL_WORDS = frozenset("args arguments argument arg kwargs".split())
_WRAPPERS = frozenset("list tuple sorted len bool any next iter".split())


def _validator_outcome(ctx: SourceContext, value: cst.BaseExpression) -> bool:
    """``schema_violation(...)``, ``list(validator.iter_errors(args))``, ``await validate(args)``."""
    while True:
        if isinstance(value, cst.Await):
            value = value.expression
        elif isinstance(value, cst.Call) and final_name(value) in _WRAPPERS and value.args:
            value = value.args[0].value
        else:
            return isinstance(value, cst.Call) and is_validation_call(ctx, value)


def _tested_name(operand: cst.BaseExpression) -> cst.Name | None:
    """The variable a guard leaf tests: ``problem``, ``errors is not None``, ``len(errors) > 0``."""
    if isinstance(operand, cst.Comparison) and len(operand.comparisons) == 1:
        if not is_constant(operand.comparisons[0].comparator):
            return None
        operand = operand.left
    if isinstance(operand, cst.Call) and final_name(operand) in _WRAPPERS and len(operand.args) == 1:
        operand = operand.args[0].value
    return operand if isinstance(operand, cst.Name) else None


def _argument_check(ctx: SourceContext, operand: cst.BaseExpression) -> tuple[str, bool | None] | None:
    """What kind of argument check a guard leaf is, and the value it has when the arguments pass
    (None: either, as for a validator whose result may be a problem or an ok). ``"validator"``:
    the outcome of a validating call, which may refuse by returning the problem;
    ``"hand-written"``: membership or isinstance on the arguments, which must refuse unmistakably."""
    if _configures_a_tool(ctx, operand):
        return None
    inner = operand.expression if isinstance(operand, cst.Await) else operand
    if isinstance(inner, cst.Call) and is_validation_call(ctx, inner):
        return "validator", None
    # ``problem = schema_violation(...)`` / ``errors = list(validator.iter_errors(args))`` then a test on it
    tested = _tested_name(inner)
    if tested is not None and any(_validator_outcome(ctx, value) for value in local_values(ctx, tested)):
        return "validator", None
    if tested is not None and _collected_problems(ctx, tested):
        return "hand-written", None
    if isinstance(inner, cst.Comparison) and len(inner.comparisons) == 1:
        target = inner.comparisons[0]
        if isinstance(target.operator, (cst.In, cst.NotIn)):
            if node_words(ctx, inner.left) & _INJECTED:
                return None  # ``self.ctx_param_name not in all_kwargs``: what the framework injects
            required = mentions_arguments(ctx, target.comparator)
            extra = from_arguments(ctx, inner.left) and _names_schema_keys(ctx, target.comparator)
            return ("hand-written", isinstance(target.operator, cst.In)) if required or extra else None
    if m.matches(inner, m.Call(func=m.Name("isinstance"))) and inner.args:
        # either polarity: ``not isinstance(args, dict)`` refuses, so may ``isinstance(value, bool)``
        subject = inner.args[0].value
        if from_arguments(ctx, subject) and not _dispatches_on_type(ctx, inner, ctx.code(subject)):
            return "hand-written", None
    return None


#: A key naming what the framework injects into a call (its context object), not what the model
#: supplies: checking it is present checks the framework's wiring, not the model's arguments.
_INJECTED = frozenset("ctx context".split())

_RECORDING_METHODS = frozenset("append add extend insert update".split())


def _recorded_into(ctx: SourceContext, branch: cst.BaseSuite) -> str | None:
    """The collection a rule's branch only records a problem into (``found.append(f"missing
    {key}")``, ``errors[key] = "wrong type"``), or None when the branch does anything else."""
    collections = set()
    for statement in _small_statements(branch):
        if isinstance(statement, cst.Expr) and isinstance(statement.value, cst.Call):
            func = statement.value.func
            if isinstance(func, cst.Attribute) and func.attr.value in _RECORDING_METHODS:
                if isinstance(func.value, (cst.Name, cst.Attribute)):
                    collections.add(ctx.code(func.value))
                    continue
        elif isinstance(statement, cst.Assign) and len(statement.targets) == 1:
            target = statement.targets[0].target
            if isinstance(target, cst.Subscript) and isinstance(target.value, (cst.Name, cst.Attribute)):
                collections.add(ctx.code(target.value))
                continue
        return None
    return collections.pop() if len(collections) == 1 else None


def _small_statements(branch: cst.BaseSuite) -> list[cst.CSTNode]:
    if isinstance(branch, cst.SimpleStatementSuite):
        return list(branch.body)
    found: list[cst.CSTNode] = []
    for line in branch.body:
        if not isinstance(line, cst.SimpleStatementLine):
            return [line]  # a nested block: not a plain recording branch
        found.extend(line.body)
    return found


def _only_pass(branch: cst.BaseSuite) -> cst.BaseSuite:
    """The branch with its statements replaced by ``pass``."""
    if isinstance(branch, cst.SimpleStatementSuite):
        return branch.with_changes(body=[cst.Pass()])
    return branch.with_changes(body=[cst.SimpleStatementLine([cst.Pass()])])


def _silenced_rule(ctx: SourceContext, operand: cst.BaseExpression) -> tuple[cst.BaseSuite, str] | None:
    """A schema rule that collects problems instead of refusing at once (``if key not in payload:
    found.append(...)`` in a contract's ``problems(self, payload)``): the branch that records the
    problem, and the collection. The collection must be what the function returns or be named for
    problems, so the problems reach the caller's refusal. The branch (not the test) is emptied:
    forcing the test false would hand the value to the ``elif`` rules after it, which may index
    the schema by an unexpected key and crash instead of letting the call pass."""
    found = guard_of(ctx, operand)
    if found is None or not isinstance(found[0], cst.If):
        return None
    guard, _ = found
    collection = _recorded_into(ctx, guard.body)
    if collection is None:
        return None
    func = ctx.enclosing_function(guard)
    returned = {
        ctx.code(node.value)
        for node in (walk(func.body) if func is not None else ())
        if isinstance(node, cst.Return) and node.value is not None
    }
    if not words(collection) & _PROBLEM_WORDS and not (
        collection in returned and _records_messages(ctx, guard.body)
    ):
        return None
    return guard.body, collection


#: What a problem message says: "missing", "unexpected", "should be", "expected an integer".
_COMPLAINT_WORDS = frozenset("should expected expects expect must not only".split())


def _records_messages(ctx: SourceContext, branch: cst.BaseSuite) -> bool:
    """Every value the branch records is a message complaining about the arguments."""
    for node in walk(branch):
        if isinstance(node, cst.Call) and final_name(node) in _RECORDING_METHODS:
            values = [arg.value for arg in node.args]
        elif isinstance(node, cst.Assign):
            values = [node.value]
        else:
            continue
        for value in values:
            text = " ".join(
                str(n.evaluated_value) if isinstance(n, cst.SimpleString) else n.value
                for n in walk(value)
                if isinstance(n, (cst.SimpleString, cst.FormattedStringText))
            )
            if not words(text) & (_COMPLAINT_WORDS | REFUSAL_WORDS):
                return False
    return True


_CONFIGURING = frozenset({"__init__", "__post_init__", "model_post_init", "__init_subclass__"})


def _configures_a_tool(ctx: SourceContext, node: cst.CSTNode) -> bool:
    """In a constructor or a pydantic validator: ``isinstance(kwargs["args_schema"], dict)`` in
    ``BaseTool.__init__`` checks how the tool is configured, not what a call passes it."""
    func = ctx.enclosing_function(node)
    if func is None:
        return False
    if func.name.value in _CONFIGURING:
        return True
    return any("validator" in words(ctx.code(d.decorator)) for d in func.decorators)


def _names_schema_keys(ctx: SourceContext, expr: cst.BaseExpression) -> bool:
    """``properties``, ``schema["properties"]``, ``spec.required``, or a local bound to one
    (``props = schema.get("properties", {})``)."""
    if node_words(ctx, expr) & _SCHEMA_KEYS:
        return True
    return isinstance(expr, cst.Name) and any(
        node_words(ctx, value) & _SCHEMA_KEYS for value in local_values(ctx, expr) if value is not expr
    )


def _collected_problems(ctx: SourceContext, tested: cst.Name) -> bool:
    """``problems = self._problems(tool, call.args)`` or ``missing = [k for k in required if k not
    in args]``: a variable named for what is wrong (see ``_PROBLEM_WORDS``) that is computed from
    the tool's arguments. A guard on it that refuses is the validation."""
    if not words(tested.value) & _PROBLEM_WORDS or words(tested.value) & REQUEST_SUBJECTS:
        return False
    for value in local_values(ctx, tested):
        if isinstance(value, cst.Await):
            value = value.expression
        if isinstance(value, cst.Call) and words(final_name(value) or "") & REQUEST_SUBJECTS:
            continue  # ``budget_error = _budget_error(..., kwargs=kwargs)`` checks the request
        if isinstance(value, cst.Call) and any(from_arguments(ctx, arg.value) for arg in value.args):
            return True
        if isinstance(value, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)) and any(
            isinstance(node, (cst.Name, cst.Attribute, cst.Subscript)) and mentions_arguments(ctx, node)
            for node in walk(value)
        ):
            return True
    return False


def _dispatches_on_type(ctx: SourceContext, check: cst.Call, subject: str) -> bool:
    """``if isinstance(x, list): ... elif isinstance(x, dict): ... else: raise`` handles each type
    it knows: that is dispatch, not validation, even though its last ``else`` refuses."""
    chain = ctx.enclosing(check, cst.If)
    if isinstance(chain, cst.If) and _hands_back(ctx, chain.body, subject) and not _raise_follows(ctx, chain):
        return True  # ``if isinstance(x, str): ...; return x`` then other types: handled, not refused
    while chain is not None and isinstance(ctx.parent(chain), cst.If) and ctx.parent(chain).orelse is chain:
        chain = ctx.parent(chain)

    def tests_subject(node: cst.If) -> bool:
        return any(
            m.matches(leaf, m.Call(func=m.Name("isinstance")))
            and leaf.args
            and ctx.code(leaf.args[0].value) == subject
            for leaf in guard_leaves(node.test)
        )

    tested = 0
    first = chain
    while isinstance(chain, cst.If):
        tested += tests_subject(chain)
        chain = chain.orelse
    # ``if isinstance(x, str): return ...`` then ``if isinstance(x, dict): ...``: consecutive
    # statements dispatching on the same value are a chain too.
    siblings = getattr(ctx.parent(first), "body", ()) if first is not None else ()
    if isinstance(siblings, (list, tuple)) and first in siblings:
        tested += sum(1 for s in siblings if s is not first and isinstance(s, cst.If) and tests_subject(s))
    return tested >= 2


def _raise_follows(ctx: SourceContext, guard: cst.If) -> bool:
    """``if isinstance(args, dict): return args`` followed by ``raise ...``: that is validation."""
    if guard.orelse is not None:
        return isinstance(guard.orelse, cst.Else) and any(
            isinstance(n, cst.Raise) for n in walk(guard.orelse.body)
        )
    siblings = getattr(ctx.parent(guard), "body", ())
    if not isinstance(siblings, (list, tuple)) or guard not in siblings:
        return False
    following = list(siblings)[list(siblings).index(guard) + 1 :]
    return (
        bool(following)
        and isinstance(following[0], cst.SimpleStatementLine)
        and isinstance(following[0].body[0], cst.Raise)
    )


def _hands_back(ctx: SourceContext, branch: cst.BaseSuite, subject: str) -> bool:
    """The branch ends by returning the tested value itself (or something built from it)."""
    body = branch.body if isinstance(branch, cst.IndentedBlock) else [branch]
    last = body[-1] if body else None
    if isinstance(last, cst.SimpleStatementLine):
        last = last.body[-1]
    if not (isinstance(last, cst.Return) and last.value is not None):
        return False
    return any(
        ctx.code(node) == subject for node in walk(last.value) if isinstance(node, (cst.Name, cst.Attribute))
    )


def _is_pydantic_model(ctx: SourceContext, name: str, seen: frozenset[str] = frozenset()) -> bool:
    """A class defined in this file that derives (perhaps indirectly) from pydantic's BaseModel."""
    for cls in ctx.nodes(cst.ClassDef):
        if cls.name.value == name and name not in seen:
            for base in cls.bases:
                qualified = ctx.qualified_names(base.value)
                if qualified & {"pydantic.BaseModel", "pydantic.main.BaseModel"}:
                    return True
                if isinstance(base.value, cst.Name) and _is_pydantic_model(
                    ctx, base.value.value, seen | {name}
                ):
                    return True
    return False


_VALIDATION_ERRORS = frozenset({"pydantic.ValidationError", "pydantic_core.ValidationError"})


def _catches_pydantic_validation(ctx: SourceContext, call: cst.Call) -> bool:
    """``call`` is in the body of a ``try`` one of whose handlers catches pydantic's ValidationError."""
    previous: cst.CSTNode = call
    for ancestor in ctx.ancestors(call):
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda)):
            return False
        if isinstance(ancestor, cst.Try) and previous is ancestor.body:
            for handler in ancestor.handlers:
                if any(ctx.qualified_names(t) & _VALIDATION_ERRORS for t in caught_classes(handler)):
                    return True
        previous = ancestor
    return False


def _looked_up_tool_class(ctx: SourceContext, model: cst.BaseExpression) -> bool:
    """``message_class = self.llm_tools_map.get(request)`` (or ``[request]``): the model validated
    is the requested tool's own class, so what it validates is that tool's call. A class looked up
    in a registry of anything else (``self.schemas.get(kind)``) is not."""
    if not isinstance(model, cst.Name):
        return False
    values = [v for v in local_values(ctx, model) if v is not model]
    for value in values:
        is_get = isinstance(value, cst.Call) and final_name(value) == "get"
        if is_get and isinstance(value.func, cst.Attribute):
            value = value.func.value
        elif isinstance(value, cst.Subscript):
            value = value.value
        else:
            return False
        if not is_tool_collection(ctx, value):
            return False
    return bool(values)


def _is_parameter(ctx: SourceContext, node: cst.CSTNode, name: str) -> bool:
    """``annotation`` in ``annotation(**value)`` is a parameter of the enclosing function: a
    model class handed in (``convert(value, annotation)``), not a function of the file."""
    function = ctx.enclosing_function(node)
    if function is None:
        return False
    params = function.params
    return any(p.name.value == name for p in (*params.posonly_params, *params.params, *params.kwonly_params))


def _refuses_invalid_arguments(ctx: SourceContext, call: cst.Call) -> bool:
    """``try: validated = action.param_model(**params) except Exception as e: raise
    ValueError(f"Invalid parameters ...")``: the handler of the ``try`` around ``call`` raises a
    refusal (named invalid/validation), so building the model is what checks the arguments. A
    handler that logs and goes on (``except Exception: model = None``) says nothing."""
    previous: cst.CSTNode = call
    for ancestor in ctx.ancestors(call):
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda)):
            return False
        if isinstance(ancestor, cst.Try) and previous is ancestor.body:
            return any(
                any(
                    isinstance(n, cst.Raise) and n.exc is not None and node_words(ctx, n.exc) & _INVALID_WORDS
                    for n in walk(handler.body)
                )
                for handler in ancestor.handlers
            )
        previous = ancestor
    return False


_INVALID_WORDS = frozenset("invalid validation malformed".split())


def _imports_json(ctx: SourceContext) -> bool:
    return bool(
        ctx.findall(
            m.Import(names=[m.ZeroOrMore(), m.ImportAlias(name=m.Name("json"), asname=None), m.ZeroOrMore()])
        )
    )


def _unvalidated(ctx: SourceContext, call: cst.Call) -> cst.BaseExpression | None:
    """The same value built without validation, for pydantic's validating entry points."""
    name = final_name(call)
    data = next((a.value for a in call.args if a.keyword is None and not a.star), None)
    data = data or next(
        (a.value for a in call.args if a.keyword and a.keyword.value in ("obj", "json_data")), None
    )
    if name not in PYDANTIC_VALIDATORS or data is None or not isinstance(call.func, cst.Attribute):
        return None
    model = call.func.value
    wrapped = isinstance(data, cst.Dict) and any(
        isinstance(e, cst.DictElement) and from_arguments(ctx, e.value) for e in data.elements
    )  # ``wrapper.model_validate({"value": v})`` for ``v`` taken from the arguments
    if not (
        from_arguments(ctx, data)
        or wrapped
        or words(final_name_or_key(model) or "") & _MODEL_WORDS
        or (_looked_up_tool_class(ctx, model) and _catches_pydantic_validation(ctx, call))
    ):
        return None
    if name in ("validate_python",):
        return data
    if name in ("model_validate_json", "parse_raw", "validate_json"):
        if not _imports_json(ctx):
            return None
        data = cst.parse_expression(f"json.loads({ctx.code(data)})")
        if name == "validate_json":
            return data
    construct = "construct" if name in ("parse_obj", "parse_raw") else "model_construct"
    return cst.Call(func=cst.Attribute(model, cst.Name(construct)), args=[cst.Arg(data, star="**")])


def _raw_arguments(ctx: SourceContext, call: cst.Call) -> cst.BaseExpression | None:
    """The one argument of a validating call that is the tool's arguments themselves."""
    candidates = [a.value for a in call.args if not a.star and from_arguments(ctx, a.value)]
    return candidates[0] if len(candidates) == 1 else None


class SkipArgumentValidation(Operator):
    name = "skip-argument-validation"
    description = "The tool's arguments are no longer checked against its schema before it runs."
    failure = (
        "Arguments with missing keys, wrong types or undeclared extras reach the tool: it runs on "
        "garbage or crashes, instead of the model getting an error it can correct."
    )
    hint = (
        "Script tool calls with a missing required argument, a wrong type and an extra key; assert "
        "the tool never ran and the next request carries an error result for each."
    )
    examples = (
        Example(
            before=(
                "import pydantic\n"
                "\n"
                "def convert(value, annotation):\n"
                "    try:\n"
                "        return annotation(**value)\n"
                "    except pydantic.ValidationError as e:\n"
                "        raise UnknownArgumentError(str(e))\n"
                "\n"
                "def convert_arguments(args, signature):\n"
                "    return {name: convert(args[name], p.annotation) for name, p in signature.items()}\n"
            ),
            after=(
                "import pydantic\n"
                "\n"
                "def convert(value, annotation):\n"
                "    try:\n"
                "        return annotation.model_construct(**value)\n"
                "    except pydantic.ValidationError as e:\n"
                "        raise UnknownArgumentError(str(e))\n"
                "\n"
                "def convert_arguments(args, signature):\n"
                "    return {name: convert(args[name], p.annotation) for name, p in signature.items()}\n"
            ),
            note="a model class handed in as a parameter, built from a value the caller takes from "
            "the arguments, in a try that catches pydantic's ValidationError",
        ),
        Example(
            before=(
                "def execute_action(self, action_name, params):\n"
                "    action = self.registry.actions[action_name]\n"
                "    try:\n"
                "        validated = action.param_model(**params)\n"
                "    except Exception as e:\n"
                "        raise ValueError(f'Invalid parameters {params}: {e}') from e\n"
                "    return action.function(validated)\n"
            ),
            after=(
                "def execute_action(self, action_name, params):\n"
                "    action = self.registry.actions[action_name]\n"
                "    try:\n"
                "        validated = action.param_model.model_construct(**params)\n"
                "    except Exception as e:\n"
                "        raise ValueError(f'Invalid parameters {params}: {e}') from e\n"
                "    return action.function(validated)\n"
            ),
            note="a catch-all whose raise says the parameters are invalid: building the model validates",
        ),
        Example(
            before=(
                "def execute_action(self, action_name, params):\n"
                "    action = self.registry.actions[action_name]\n"
                "    try:\n"
                "        validated = action.param_model(**params)\n"
                "    except Exception:\n"
                "        validated = None\n"
                "    return action.function(validated)\n"
            ),
            note="a catch-all that goes on with None refuses nothing",
        ),
        Example(
            before=(
                "import pydantic\n"
                "\n"
                "def get_tool_message(self, request, data):\n"
                "    message_class = self.llm_tools_map.get(request)\n"
                "    try:\n"
                "        return message_class.model_validate(data)\n"
                "    except pydantic.ValidationError as ve:\n"
                "        raise ve\n"
            ),
            after=(
                "import pydantic\n"
                "\n"
                "def get_tool_message(self, request, data):\n"
                "    message_class = self.llm_tools_map.get(request)\n"
                "    try:\n"
                "        return message_class.model_construct(**data)\n"
                "    except pydantic.ValidationError as ve:\n"
                "        raise ve\n"
            ),
            note="the model is the requested tool's class, looked up in the tool map",
        ),
        Example(
            before=(
                "import pydantic\n"
                "\n"
                "def validate_run(inputs, tools):\n"
                "    entries = []\n"
                "    for input in inputs:\n"
                "        entries.append(pydantic.TypeAdapter(InputEntries).validate_python(input))\n"
                "    return entries\n"
            ),
            note="`input` is an element of the run's inputs, not a tool call's arguments",
        ),
        Example(
            before=(
                "class FunctionTool:\n"
                "    def call(self, *args, **kwargs):\n"
                "        all_kwargs = {**self.partial_params, **kwargs}\n"
                "        if self.ctx_param_name not in all_kwargs:\n"
                "            raise ValueError('Context is required for this tool')\n"
                "        return self._fn(*args, **all_kwargs)\n"
            ),
            note="the framework's injected context, not the model's arguments",
        ),
        Example(
            before=(
                "from pydantic import ValidationError\n\n"
                "def prepare(schema, raw_input):\n"
                "    data = _parse_tool_json_input(raw_input)\n"
                "    try:\n"
                "        parsed = schema.params_model(**data)\n"
                "    except ValidationError as err:\n"
                "        raise ModelBehaviorError(str(err)) from err\n"
                "    return parsed\n\n"
                "def invoke(tool, call):\n"
                "    return tool.run(prepare(tool.schema, call.arguments))\n"
            ),
            after=(
                "from pydantic import ValidationError\n\n"
                "def prepare(schema, raw_input):\n"
                "    data = _parse_tool_json_input(raw_input)\n"
                "    try:\n"
                "        parsed = schema.params_model.model_construct(**data)\n"
                "    except ValidationError as err:\n"
                "        raise ModelBehaviorError(str(err)) from err\n"
                "    return parsed\n\n"
                "def invoke(tool, call):\n"
                "    return tool.run(prepare(tool.schema, call.arguments))\n"
            ),
            note="a params model reached through an attribute, fed by a parse helper, "
            "in a try that catches pydantic's ValidationError",
        ),
        Example(
            before=(
                "import jsonschema\n"
                "from pydantic import ValidationError\n\n"
                "def prepare(schema, call, settings):\n"
                "    data = _parse_tool_json_input(call.arguments)\n"
                "    try:\n"
                "        options = schema.settings_model(**settings)\n"
                "    except ValidationError:\n"
                "        options = None\n"
                "    try:\n"
                "        return schema.params_model(**data)\n"
                "    except jsonschema.ValidationError:\n"
                "        return None\n"
            ),
            note="a settings model fed no arguments; a model call whose try catches another library's "
            "ValidationError (no evidence it validates with pydantic)",
        ),
        Example(
            before=(
                "import jsonschema\n\n"
                "def execute(block, tools):\n"
                "    tool = tools[block.name]\n"
                "    jsonschema.validate(instance=block.input, schema=tool.input_schema)\n"
                "    return tool.fn(**block.input)\n"
            ),
            after=(
                "import jsonschema\n\n"
                "def execute(block, tools):\n"
                "    tool = tools[block.name]\n"
                "    pass\n"
                "    return tool.fn(**block.input)\n"
            ),
            note="jsonschema.validate as a statement on an Anthropic tool_use input",
        ),
        Example(
            before=(
                "import json\n"
                "from pydantic import BaseModel\n\n"
                "class WeatherArgs(BaseModel):\n"
                "    city: str\n"
                "    days: int = 1\n\n"
                "async def get_weather(tool_call):\n"
                "    params = WeatherArgs.model_validate_json(tool_call.function.arguments)\n"
                "    return await fetch(params.city, params.days)\n"
            ),
            after=(
                "import json\n"
                "from pydantic import BaseModel\n\n"
                "class WeatherArgs(BaseModel):\n"
                "    city: str\n"
                "    days: int = 1\n\n"
                "async def get_weather(tool_call):\n"
                "    params = WeatherArgs.model_construct(**json.loads(tool_call.function.arguments))\n"
                "    return await fetch(params.city, params.days)\n"
            ),
            note="pydantic model on OpenAI JSON arguments, async",
        ),
        Example(
            before=(
                "from pydantic import BaseModel\n\n"
                "class CreateTicket(BaseModel):\n"
                "    title: str\n\n"
                "def create_ticket(arguments):\n"
                "    ticket = CreateTicket(**arguments)\n"
                "    return store(ticket)\n"
            ),
            after=(
                "from pydantic import BaseModel\n\n"
                "class CreateTicket(BaseModel):\n"
                "    title: str\n\n"
                "def create_ticket(arguments):\n"
                "    ticket = CreateTicket.model_construct(**arguments)\n"
                "    return store(ticket)\n"
            ),
            note="pydantic model constructed from the arguments",
        ),
        Example(
            before=(
                "def parse(name, args, schemas):\n"
                "    schema = schemas[name]\n"
                '    for key in schema["required"]:\n'
                "        if key not in args:\n"
                '            raise ToolError("missing_argument", key)\n'
                '    for key, expected in schema["types"].items():\n'
                "        if not isinstance(args.get(key), expected):\n"
                '            raise ToolError("invalid_argument", key)\n'
                "    return name, args\n"
            ),
            after=(
                "def parse(name, args, schemas):\n"
                "    schema = schemas[name]\n"
                '    for key in schema["required"]:\n'
                "        if key not in args:\n"
                '            raise ToolError("missing_argument", key)\n'
                '    for key, expected in schema["types"].items():\n'
                "        if not True:\n"
                '            raise ToolError("invalid_argument", key)\n'
                "    return name, args\n"
            ),
            note="hand-written required-key and type checks",
        ),
        Example(
            before=(
                "def handle(item, registry):\n"
                "    spec = registry[item.name]\n"
                "    problem = schema_violation(spec.parameters, item.arguments)\n"
                "    if problem is not None:\n"
                '        return {"type": "function_call_output", "call_id": item.call_id, "output": '
                "problem}\n"
                '    return {"type": "function_call_output", "call_id": item.call_id, "output": '
                "spec.fn(item.arguments)}\n"
            ),
            after=(
                "def handle(item, registry):\n"
                "    spec = registry[item.name]\n"
                "    problem = schema_violation(spec.parameters, item.arguments)\n"
                "    if False:\n"
                '        return {"type": "function_call_output", "call_id": item.call_id, "output": '
                "problem}\n"
                '    return {"type": "function_call_output", "call_id": item.call_id, "output": '
                "spec.fn(item.arguments)}\n"
            ),
            note="Responses API runner; a validator that returns the problem",
        ),
        Example(
            before=(
                "import jsonschema\n"
                "from pydantic import BaseModel\n\n"
                "class Settings(BaseModel):\n"
                "    model: str\n\n"
                "def load(config, raw):\n"
                "    jsonschema.validate(config, CONFIG_SCHEMA)\n"
                "    reply = Settings.model_validate(raw)\n"
                "    return reply\n"
            ),
            note="validating a config or an API response is not a tool's arguments",
        ),
        Example(
            before=(
                "def repl(read):\n"
                "    while True:\n"
                "        user_input = read()\n"
                '        if "quit" in user_input:\n'
                "            break\n"
                "        if not isinstance(user_input, str):\n"
                "            continue\n"
            ),
            note="free text named like an input, checked without any refusal",
        ),
        Example(
            before=(
                "class Assistant:\n"
                "    def _execute(self, call):\n"
                "        tool = self.tools[call.name]\n"
                "        problems = self._problems(tool, call.args)\n"
                "        if problems:\n"
                '            return "ERROR invalid arguments: " + "; ".join(problems)\n'
                "        return tool.func(**call.args)\n"
            ),
            after=(
                "class Assistant:\n"
                "    def _execute(self, call):\n"
                "        tool = self.tools[call.name]\n"
                "        problems = self._problems(tool, call.args)\n"
                "        if False:\n"
                '            return "ERROR invalid arguments: " + "; ".join(problems)\n'
                "        return tool.func(**call.args)\n"
            ),
            note="problems collected from the arguments by a helper, then refused",
        ),
        Example(
            before=(
                "def run_tool(spec, args):\n"
                '    missing = [k for k in spec["required"] if k not in args]\n'
                "    if missing:\n"
                '        raise ToolError(f"missing arguments: {missing}")\n'
                "    return spec.fn(**args)\n"
            ),
            after=(
                "def run_tool(spec, args):\n"
                '    missing = [k for k in spec["required"] if k not in args]\n'
                "    if False:\n"
                '        raise ToolError(f"missing arguments: {missing}")\n'
                "    return spec.fn(**args)\n"
            ),
            note="missing keys collected by a comprehension",
        ),
        Example(
            before=(
                "def check_arguments(schema, args):\n"
                '    props = schema.get("properties", {})\n'
                "    for key in args:\n"
                "        if key not in props:\n"
                '            return f"unexpected argument {key!r}"\n'
                "    return None\n"
            ),
            after=(
                "def check_arguments(schema, args):\n"
                '    props = schema.get("properties", {})\n'
                "    for key in args:\n"
                "        if False:\n"
                '            return f"unexpected argument {key!r}"\n'
                "    return None\n"
            ),
            note="an argument key not among the schema's properties (`props`)",
        ),
        Example(
            before=(
                "class ToolContract:\n"
                "    def problems(self, payload):\n"
                "        found = []\n"
                "        for key in self.required:\n"
                "            if key not in payload:\n"
                "                found.append(f'missing required field {key!r}')\n"
                "        for key, value in payload.items():\n"
                "            if key not in self.properties:\n"
                "                found.append(f'unexpected field {key!r}')\n"
                "            elif not isinstance(value, TYPES[self.properties[key]]):\n"
                "                found.append(f'field {key!r} should be {self.properties[key]}')\n"
                "        return found\n"
                "\n"
                "def execute(contract, call):\n"
                "    problems = contract.problems(call.arguments)\n"
                "    if problems:\n"
                "        return {'role': 'tool', 'tool_call_id': call.id, 'content': '; '.join(problems)}\n"
                "    return {'role': 'tool', 'tool_call_id': call.id, 'content': contract.run(call)}\n"
            ),
            after=(
                "class ToolContract:\n"
                "    def problems(self, payload):\n"
                "        found = []\n"
                "        for key in self.required:\n"
                "            if key not in payload:\n"
                "                pass\n"
                "        for key, value in payload.items():\n"
                "            if key not in self.properties:\n"
                "                found.append(f'unexpected field {key!r}')\n"
                "            elif not isinstance(value, TYPES[self.properties[key]]):\n"
                "                found.append(f'field {key!r} should be {self.properties[key]}')\n"
                "        return found\n"
                "\n"
                "def execute(contract, call):\n"
                "    problems = contract.problems(call.arguments)\n"
                "    if problems:\n"
                "        return {'role': 'tool', 'tool_call_id': call.id, 'content': '; '.join(problems)}\n"
                "    return {'role': 'tool', 'tool_call_id': call.id, 'content': contract.run(call)}\n"
            ),
            note="a schema rule in a method of the tool's contract, fed the call's arguments: required field",
        ),
        Example(
            before=(
                "class ToolContract:\n"
                "    def problems(self, payload):\n"
                "        found = []\n"
                "        for key in self.required:\n"
                "            if key not in payload:\n"
                "                found.append(f'missing required field {key!r}')\n"
                "        for key, value in payload.items():\n"
                "            if key not in self.properties:\n"
                "                found.append(f'unexpected field {key!r}')\n"
                "            elif not isinstance(value, TYPES[self.properties[key]]):\n"
                "                found.append(f'field {key!r} should be {self.properties[key]}')\n"
                "        return found\n"
                "\n"
                "def execute(contract, call):\n"
                "    problems = contract.problems(call.arguments)\n"
                "    if problems:\n"
                "        return {'role': 'tool', 'tool_call_id': call.id, 'content': '; '.join(problems)}\n"
                "    return {'role': 'tool', 'tool_call_id': call.id, 'content': contract.run(call)}\n"
            ),
            after=(
                "class ToolContract:\n"
                "    def problems(self, payload):\n"
                "        found = []\n"
                "        for key in self.required:\n"
                "            if key not in payload:\n"
                "                found.append(f'missing required field {key!r}')\n"
                "        for key, value in payload.items():\n"
                "            if key not in self.properties:\n"
                "                pass\n"
                "            elif not isinstance(value, TYPES[self.properties[key]]):\n"
                "                found.append(f'field {key!r} should be {self.properties[key]}')\n"
                "        return found\n"
                "\n"
                "def execute(contract, call):\n"
                "    problems = contract.problems(call.arguments)\n"
                "    if problems:\n"
                "        return {'role': 'tool', 'tool_call_id': call.id, 'content': '; '.join(problems)}\n"
                "    return {'role': 'tool', 'tool_call_id': call.id, 'content': contract.run(call)}\n"
            ),
            note="the same contract: the unexpected-field rule",
        ),
        Example(
            before=(
                "class ToolContract:\n"
                "    def problems(self, payload):\n"
                "        found = []\n"
                "        for key in self.required:\n"
                "            if key not in payload:\n"
                "                found.append(f'missing required field {key!r}')\n"
                "        for key, value in payload.items():\n"
                "            if key not in self.properties:\n"
                "                found.append(f'unexpected field {key!r}')\n"
                "            elif not isinstance(value, TYPES[self.properties[key]]):\n"
                "                found.append(f'field {key!r} should be {self.properties[key]}')\n"
                "        return found\n"
                "\n"
                "def execute(contract, call):\n"
                "    problems = contract.problems(call.arguments)\n"
                "    if problems:\n"
                "        return {'role': 'tool', 'tool_call_id': call.id, 'content': '; '.join(problems)}\n"
                "    return {'role': 'tool', 'tool_call_id': call.id, 'content': contract.run(call)}\n"
            ),
            after=(
                "class ToolContract:\n"
                "    def problems(self, payload):\n"
                "        found = []\n"
                "        for key in self.required:\n"
                "            if key not in payload:\n"
                "                found.append(f'missing required field {key!r}')\n"
                "        for key, value in payload.items():\n"
                "            if key not in self.properties:\n"
                "                found.append(f'unexpected field {key!r}')\n"
                "            elif not isinstance(value, TYPES[self.properties[key]]):\n"
                "                pass\n"
                "        return found\n"
                "\n"
                "def execute(contract, call):\n"
                "    problems = contract.problems(call.arguments)\n"
                "    if problems:\n"
                "        return {'role': 'tool', 'tool_call_id': call.id, 'content': '; '.join(problems)}\n"
                "    return {'role': 'tool', 'tool_call_id': call.id, 'content': contract.run(call)}\n"
            ),
            note="the same contract: the type rule",
        ),
        Example(
            before=(
                "def create(self, params, session, input, **kwargs):\n"
                "    validate_output_config_conflict(params.get('output_config'), params.get('format'))\n"
                "    validate_session_conversation_settings(session, kwargs.get('conversation_id'))\n"
                "    self._validate_input_content_types(input)\n"
                "    headers = kwargs.pop('extra_headers', None)\n"
                "    if headers is not None and not isinstance(headers, dict):\n"
                "        raise TypeError('extra_headers must be a mapping')\n"
                "    return self._client.post('/v1/messages', json=params, headers=headers)\n"
            ),
            note="request-configuration validators (output config, session settings, input content "
            "types, request kwargs) check the request, not a tool call's arguments",
        ),
        Example(
            before=(
                "class SearchTool(BaseTool):\n"
                "    def __init__(self, **kwargs):\n"
                "        if not isinstance(kwargs['args_schema'], dict):\n"
                "            raise TypeError('args_schema must be a dict')\n"
                "\n"
                "    def _to_args(self, tool_input):\n"
                "        input_args = self.args_schema\n"
                "        if isinstance(input_args, dict):\n"
                "            raise ValueError('string inputs are not allowed with a JSON schema')\n"
                "        if isinstance(tool_input, str):\n"
                "            return (tool_input,), {}\n"
                "        if isinstance(tool_input, dict):\n"
                "            return (), dict(tool_input)\n"
                "        raise TypeError('unsupported input')\n"
                "\n"
                "def retry(func, kwargs, budget):\n"
                "    budget_error = _budget_error(budget=budget, kwargs=kwargs)\n"
                "    if budget_error is not None:\n"
                "        raise budget_error\n"
                "    return func(**kwargs)\n"
            ),
            note="a tool's constructor checking its configuration, a schema bound to an args-like "
            "name, a type dispatch in consecutive ifs, and a token budget computed from request kwargs",
        ),
        Example(
            before=(
                "import json\n"
                "\n"
                "def parse_args(raw_arguments):\n"
                "    arguments = json.loads(raw_arguments)\n"
                "    if isinstance(arguments, dict):\n"
                "        return arguments\n"
                "    raise ToolError('arguments must be an object')\n"
            ),
            after=(
                "import json\n"
                "\n"
                "def parse_args(raw_arguments):\n"
                "    arguments = json.loads(raw_arguments)\n"
                "    if True:\n"
                "        return arguments\n"
                "    raise ToolError('arguments must be an object')\n"
            ),
            note="a positive type check that hands the arguments back, the raise right after it",
        ),
        Example(
            before=(
                "def parse_input(self, tool_input):\n"
                "    if isinstance(tool_input, str):\n"
                "        if self.schema_is_json:\n"
                "            raise ValueError('string inputs need a model schema')\n"
                "        return tool_input\n"
                "    return {k: v for k, v in tool_input.items() if k in self.fields}\n"
            ),
            note="a type dispatch whose string branch hands the input back; its nested raise is "
            "about the schema, and other inputs carry on below",
        ),
        Example(
            before=(
                "def build(arguments):\n"
                "    result = {}\n"
                "    if 'model' in arguments:\n"
                "        result['modelId'] = arguments['model']\n"
                "    return result\n"
            ),
            note="a branch that copies a field into what it returns records no problem",
        ),
        Example(
            before=(
                "import os\n\n"
                "def settings(config):\n"
                '    missing = [k for k in ("API_KEY", "MODEL") if k not in os.environ]\n'
                "    if missing:\n"
                '        raise RuntimeError(f"missing settings: {missing}")\n'
                "    errors = lint(config)\n"
                "    if errors:\n"
                '        raise ValueError("invalid config")\n'
            ),
            note="problems collected from the environment or a config, not from a tool's arguments",
        ),
        Example(
            before=(
                "def admit(tool_use, policies):\n"
                "    args = tool_use['input']\n"
                "    if isinstance(args, dict) and 'background' in args:\n"
                "        policy = policies.get(tool_use['name'])\n"
                "        if policy is None:\n"
                "            return {'status': 'error', 'content': 'no background run for this tool'}\n"
                "        policy.schedule(args.pop('background'))\n"
                "    return None\n"
            ),
            note="a type test that only decides whether optional work runs; the refusal inside "
            "belongs to the nested check",
        ),
        Example(
            before=(
                "def user_message(agent, input=None, **kwargs):\n"
                "    if callable(agent.build_message):\n"
                "        return agent.build_message(input)\n"
                "    if isinstance(input, dict):\n"
                "        return Message.model_validate(input)\n"
                "    return Message(role='user', content=str(input))\n"
            ),
            note="a run's input validated into a message; callable() asks about a value, it runs no tool",
        ),
    )

    def find(self, ctx: SourceContext) -> Iterator[Mutation]:
        yield from self._bypassed_guards(ctx)
        for statement in agent_code(ctx, m.Expr(value=m.Call() | m.Await(expression=m.Call()))):
            call = statement.value.expression if isinstance(statement.value, cst.Await) else statement.value
            if is_validation_call(ctx, call):
                yield Mutation(statement, cst.Pass(), f"argument validation `{ctx.code(call)}` removed")
        for call in agent_code(ctx, m.Call()):
            replacement = _unvalidated(ctx, call) or self._constructed(ctx, call) or self._raw(ctx, call)
            if replacement is not None:
                yield Mutation(call, replacement, f"`{ctx.code(call)}` no longer validates the arguments")

    @staticmethod
    def _bypassed_guards(ctx: SourceContext) -> Iterator[Mutation]:
        for operand in guard_operands(ctx):
            check = _argument_check(ctx, operand)
            if check is None:
                continue
            kind, passing = check
            silenced = _silenced_rule(ctx, operand) if kind == "hand-written" else None
            if silenced is not None:
                branch, collection = silenced
                yield Mutation(
                    branch,
                    _only_pass(branch),
                    f"argument rule `{ctx.code(operand)}` no longer adds its problem to `{collection}`: "
                    "arguments breaking it pass",
                )
                continue
            if kind == "validator":  # ``if problem: return problem`` refuses by handing the problem back
                skipped = bypass(ctx, operand, vocabulary=node_words(ctx, operand))
            else:
                skipped = bypass(ctx, operand, strict=True)
            if skipped is not None and passing in (None, skipped.value == "True"):
                yield Mutation(operand, skipped, f"argument check `{ctx.code(operand)}` never refuses")

    @staticmethod
    def _raw(ctx: SourceContext, call: cst.Call) -> cst.BaseExpression | None:
        """``args = validate_args(spec, args)`` -> ``args = args``: the validated value replaces the
        raw one and is not itself tested (that case is a guard)."""
        parent = ctx.parent(call)
        if not (isinstance(parent, cst.Assign) and len(parent.targets) == 1):
            return None
        target = parent.targets[0].target
        if not (isinstance(target, cst.Name) and is_argument_name(target.value)):
            return None
        if not is_validation_call(ctx, call):
            return None
        if any(n.value == target.value for leaf in guard_operands(ctx) for n in names_in(leaf)):
            return None
        return _raw_arguments(ctx, call)

    @staticmethod
    def _constructed(ctx: SourceContext, call: cst.Call) -> cst.BaseExpression | None:
        """``Model(**args)`` for a pydantic model of this file -> ``Model.model_construct(**args)``;
        also ``schema.params_model(**args)`` (a model reached through an attribute) when the call
        sits in a ``try`` that catches pydantic's ValidationError: what it raises says it validates."""
        stars = [a for a in call.args if a.star == "**"]
        if not (len(call.args) == len(stars) == 1 and from_arguments(ctx, stars[0].value)):
            return None
        if isinstance(call.func, cst.Name):
            if not (
                _is_pydantic_model(ctx, call.func.value)
                or (_is_parameter(ctx, call, call.func.value) and _catches_pydantic_validation(ctx, call))
            ):
                return None
        elif not (
            isinstance(call.func, cst.Attribute)
            and "model" in words(call.func.attr.value)
            and (_catches_pydantic_validation(ctx, call) or _refuses_invalid_arguments(ctx, call))
        ):
            return None
        return cst.Call(func=cst.Attribute(call.func, cst.Name("model_construct")), args=call.args)
