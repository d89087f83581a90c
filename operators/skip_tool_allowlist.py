"""skip-tool-allowlist: the check that the requested tool is on the allow-list never refuses.

The model's tool name is a proposal, and a prompt injection can make it propose anything. The
executor must refuse names it does not know or does not allow, and answer with an error the
model can read. Without the check an unknown name crashes the loop or -- with a permissive
dispatcher (``getattr``, a shared registry) -- runs something the model was never offered.

Recognised guards (either polarity; ``if``/``elif``/``assert``/conditional expressions):

* membership of the requested name in a tool collection: ``name not in ALLOWED_TOOLS``,
  ``call.name not in self.allow``, ``block.name in self.tools``, ``tc.function.name not in
  available_functions``, ``enabled_tools``, ``tool_whitelist`` (deny-lists such as
  ``DISABLED_TOOLS`` too); a bare ``allowed``/``allow``/``registry`` counts inside tool-handling code;
* a lookup that came back empty: ``tool = self._tools.get(call.name)`` (or ``getattr(tools,
  name, None)``) then ``if tool is None`` / ``if not tool`` (or the walrus form);
* a predicate on the name: ``is_allowed(name)``, ``registry.has(name)``, ``tool_exists(name)``.

A registry is the allow-list only where nothing else is: when a function also checks the name
against an allow- or deny-list (``self.allow``, ``ALLOWED_TOOLS``, ``is_allowed(name)``), its
existence checks (``name not in self.tools``, ``tool is None`` after ``self.tools.get(name)``,
``registry.has(name)``) are left alone -- with the allow-list a subset of the registry, skipping
them changes nothing.

The refusal must be unmistakable (a raise, an error result, a message saying the tool is unknown
or not allowed) and on the side where the name is *not* allowed: refusing a name that *is*
registered is a duplicate-registration check, and ``if name in ("bash", "editor"): return kind``
is dispatch. Only the guard's operand changes, to the literal that skips the refusal. A membership
check followed by a lookup in the same collection (``if name in tools: tools[name](...)``) is
declined: without it an unknown name raises KeyError there and nothing unlisted runs, so "never
refuses" would misdescribe it. Skipping a ``tool is None`` check after ``tools.get(name)`` carries
the ``None`` on as the tool, and the description says so. Membership
checks of other things (users, argument keys, caches, registries of agents) are not allow-lists.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.dataflow import local_values
from mutagent.anatomy.syntax import final_name, is_constant
from mutagent.anatomy.tools.allowlist import (
    is_allow_list,
    is_tool_collection,
    is_tool_lookup,
    lookup_collection,
    names_tool,
    read_off_tool,
)
from mutagent.anatomy.tools.context import in_tool_context
from mutagent.anatomy.tools.guards import bypass, force, guard_of, guard_operands
from mutagent.anatomy.vocabulary import ALLOW_WORDS, TOOLISH, node_words
from mutagent.anatomy.vocabulary import tool_words as words
from mutagent.mutation.context import SourceContext
from mutagent.mutation.operator import Example, Mutation, Operator

#: A predicate on a tool name asks one of these: ``is_allowed(name)``, ``registry.has(name)``.
_PREDICATES = frozenset(
    (
        "allowed permitted allowlisted whitelisted has contains exists registered supports available enabled"
    ).split()
)


def _is_lookup(ctx: SourceContext, expr: cst.BaseExpression) -> bool:
    """A lookup of the requested tool in a tool collection (see ``anatomy.tools.allowlist``)."""
    return is_tool_lookup(ctx, expr)


def _about_tools(ctx: SourceContext, *parts: cst.CSTNode) -> bool:
    """Tool words in the check itself, or the check sits in tool-handling code: a bare
    ``allowed`` or ``registry`` is only an allow-list of tools there."""
    return any(node_words(ctx, part) & TOOLISH for part in parts) or in_tool_context(ctx, parts[0])


_DENY_HEADS = frozenset(
    "denylist blacklist blocklist disabled blocked forbidden denied banned exclude excluded deny".split()
)


def _passing_value(ctx: SourceContext, operand: cst.BaseExpression) -> bool | None:
    """If ``operand`` checks the requested tool against the allow-list, the value it has for a
    tool that may run (``name in TOOLS`` -> True, ``tool is None`` -> False, ``name in
    DISABLED_TOOLS`` -> False); None if it is no such check."""
    if isinstance(operand, cst.Comparison) and len(operand.comparisons) == 1:
        left, (target,) = operand.left, operand.comparisons
        right = target.comparator
        if isinstance(target.operator, (cst.In, cst.NotIn)):
            literal = isinstance(right, (cst.List, cst.Tuple, cst.Set)) and all(
                is_constant(element.value) for element in right.elements
            )
            if not (literal or is_tool_collection(ctx, right)):
                return None
            if not (names_tool(left) or (read_off_tool(ctx, left) and is_allow_list(ctx, right))):
                return None
            if not (in_tool_context(ctx, operand) if literal else _about_tools(ctx, operand, right)):
                return None
            denied = bool(node_words(ctx, right) & _DENY_HEADS)
            return isinstance(target.operator, cst.In) != denied
        if isinstance(target.operator, (cst.Equal, cst.NotEqual)):
            # ``call.function.name != "bash"``: the one tool offered, compared by name
            named, other = (left, right) if names_tool(left) else (right, left)
            if names_tool(named) and isinstance(other, cst.SimpleString) and in_tool_context(ctx, operand):
                return isinstance(target.operator, cst.Equal)
            return None
        if isinstance(target.operator, (cst.Is, cst.IsNot)) and m.matches(right, m.Name("None")):
            found = _passing_value(ctx, left)
            return None if found is None else isinstance(target.operator, cst.IsNot)
        return None
    if isinstance(operand, cst.NamedExpr) or (isinstance(operand, cst.Call) and _is_lookup(ctx, operand)):
        return True if _is_lookup(ctx, operand) and _about_tools(ctx, operand) else None
    if isinstance(operand, cst.Name):
        found = any(_is_lookup(ctx, value) for value in local_values(ctx, operand)) and _about_tools(
            ctx, operand
        )
        return True if found else None
    if isinstance(operand, cst.Call):
        own = words(final_name(operand) or "")
        asks = own & _PREDICATES and (own & TOOLISH or is_tool_collection(ctx, operand.func))
        if isinstance(operand.func, cst.Attribute) and own & _PREDICATES:
            asks = asks or is_tool_collection(ctx, operand.func.value)
        found = (
            bool(asks) and any(names_tool(arg.value) for arg in operand.args) and _about_tools(ctx, operand)
        )
        return True if found else None
    return None


def _none_unless_allowed(ctx: SourceContext, operand: cst.BaseExpression) -> cst.Name | None:
    """``tool = tools.get(name) if name in available else None`` followed by ``if tool is None:``
    refusing: the conditional expression is the allow-list, its ``None`` side the way to the
    refusal. The literal that always takes the lookup side, or None."""
    found = guard_of(ctx, operand)
    if found is None or not isinstance(found[0], cst.IfExp):
        return None
    choice, sense = found
    if not (m.matches(choice.orelse, m.Name("None")) and _is_lookup(ctx, choice.body)):
        return None
    assign = ctx.parent(choice)
    if not (
        isinstance(assign, cst.Assign)
        and len(assign.targets) == 1
        and isinstance(assign.targets[0].target, cst.Name)
    ):
        return None
    name = assign.targets[0].target.value
    scope = ctx.enclosing_function(choice) or ctx.module
    for guard in ctx.descendants(
        scope,
        m.If(test=m.Comparison(left=m.Name(name), comparisons=[m.ComparisonTarget(m.Is(), m.Name("None"))])),
    ):
        if bypass(ctx, guard.test, strict=True) is not None:
            return force(sense, test_value=True)
    return None


def _indexed_after(ctx: SourceContext, operand: cst.BaseExpression) -> bool:
    """``if name not in self._tools: return error`` followed by ``self._tools[name]``: without the
    check an unknown name raises KeyError at that lookup -- nothing unlisted runs, so "never
    refuses" would misdescribe the mutant, and the operator declines it."""
    if not (
        isinstance(operand, cst.Comparison)
        and isinstance(operand.comparisons[0].operator, (cst.In, cst.NotIn))
    ):
        return False
    collection, name = ctx.code(operand.comparisons[0].comparator), ctx.code(operand.left)
    scope = ctx.enclosing_function(operand) or ctx.module
    start = ctx.position(operand).end
    for lookup in ctx.descendants(scope, m.Subscript()):
        if (
            ctx.code(lookup.value) == collection
            and len(lookup.slice) == 1
            and ctx.code(lookup.slice[0].slice) == name
            and (ctx.position(lookup).start.line, ctx.position(lookup).start.column)
            > (start.line, start.column)
        ):
            return True
    return False


def _tests_lookup(ctx: SourceContext, operand: cst.BaseExpression) -> bool:
    """``tool is None`` / ``not tool`` after ``tool = tools.get(name)``: skipping it carries the
    ``None`` on as the tool."""
    if isinstance(operand, cst.Comparison):
        operand = operand.left
    return isinstance(operand, cst.Name) and any(_is_lookup(ctx, v) for v in local_values(ctx, operand))


#: Exceptions a catch-all handler names: calling ``None`` raises a TypeError it catches.
_CATCH_ALL = frozenset({"Exception", "BaseException", "TypeError"})


def _none_call_caught(ctx: SourceContext, operand: cst.BaseExpression) -> bool:
    """``tool = self._tools.get(name)``; ``if tool is None: result = "not found"`` ``else: try:
    result = tool(**args) except Exception as e: result = f"failed: {e}"``: without the check the
    ``None`` is called inside a catch-all that answers with an error result -- nothing unlisted
    runs, only the message changes, so "never refuses" would misdescribe the mutant. A ``None``
    handed on to a helper (``self._run_tool(tool, call)``) or called outside a ``try`` is not."""
    subject = operand.left if isinstance(operand, cst.Comparison) else operand
    if isinstance(subject, cst.UnaryOperation):
        subject = subject.expression
    if not (isinstance(subject, cst.Name) and _tests_lookup(ctx, subject)):
        return False
    scope = ctx.enclosing_function(operand) or ctx.module
    for call in ctx.descendants(scope, m.Call(func=m.Name(subject.value))):
        for ancestor in ctx.ancestors(call):
            if ancestor is scope:
                break
            if isinstance(ancestor, cst.Try) and any(_answers_any_error(ctx, h) for h in ancestor.handlers):
                return True
    return False


def _answers_any_error(ctx: SourceContext, handler: cst.ExceptHandler) -> bool:
    """``except Exception as e: result = f"failed: {e}"``: catches the TypeError of calling
    ``None`` and does not raise it on."""
    caught = (
        {final_name(n) for n in ctx.descendants(handler.type, m.Name() | m.Attribute())}
        if handler.type is not None
        else set(_CATCH_ALL)
    )
    return bool(caught & _CATCH_ALL) and not ctx.descendants(handler.body, m.Raise())


def _lookup_collection(ctx: SourceContext, expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """The collection a tool lookup (see :func:`_is_lookup`) reads."""
    return lookup_collection(ctx, expr)


def _is_explicit(ctx: SourceContext, operand: cst.BaseExpression) -> bool:
    """Whether an allow-list check (one :func:`_passing_value` accepts) asks an allow- or
    deny-list -- ``name in self.allow``, ``is_allowed(name)``, a literal list of names -- rather
    than whether the tool exists at all (``name in self.tools``, ``tool is None`` after
    ``tool = self.tools.get(name)``, ``registry.has(name)``)."""
    if isinstance(operand, cst.Comparison):
        left, right = operand.left, operand.comparisons[0].comparator
        if isinstance(operand.comparisons[0].operator, (cst.In, cst.NotIn)):
            return isinstance(right, (cst.List, cst.Tuple, cst.Set)) or is_allow_list(ctx, right)
        return _is_explicit(ctx, left)
    if isinstance(operand, cst.Name):
        return any(
            _is_lookup(ctx, value) and is_allow_list(ctx, _lookup_collection(ctx, value))
            for value in local_values(ctx, operand)
        )
    if isinstance(operand, cst.NamedExpr) or (isinstance(operand, cst.Call) and _is_lookup(ctx, operand)):
        collection = _lookup_collection(ctx, operand)
        return collection is not None and is_allow_list(ctx, collection)
    if isinstance(operand, cst.Call):
        own = words(final_name(operand) or "")
        owner = operand.func.value if isinstance(operand.func, cst.Attribute) else None
        return bool(own & ALLOW_WORDS) or (owner is not None and is_allow_list(ctx, owner))
    return False


def _has_explicit_check(ctx: SourceContext, function: cst.CSTNode | None) -> bool:
    """Whether ``function`` checks the requested tool against an allow- or deny-list of its own:
    then its registry-existence checks are not the allow-list (when the list is a subset of the
    registry, skipping the existence check changes nothing)."""

    def compute() -> bool:
        return any(
            ctx.enclosing_function(operand) is function
            and _passing_value(ctx, operand) is not None
            and _is_explicit(ctx, operand)
            and bypass(ctx, operand, strict=True) is not None
            for operand in guard_operands(ctx)
        )

    return ctx.cached(("skip-tool-allowlist", "explicit", id(function)), compute)


def _filter_bypass(ctx: SourceContext, operand: cst.BaseExpression) -> cst.Name | None:
    """``[t for t in tools if t.request in self.llm_tools_usable]``: a comprehension that keeps
    only the tools on an allow-list (the element kept is the tool iterated). The literal that
    keeps every tool, or None when ``operand`` is no such filter's membership test."""
    sense, node, compif = True, operand, None
    for parent in ctx.ancestors(operand):
        if isinstance(parent, cst.CompIf) and parent.test is node:
            compif = parent
            break
        if isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not):
            sense = not sense
        elif not isinstance(parent, cst.BooleanOperation):
            return None
        node = parent
    if compif is None:
        return None
    comprehension = ctx.enclosing(compif, (cst.ListComp, cst.SetComp, cst.GeneratorExp))
    if comprehension is None or not (
        isinstance(comprehension.elt, cst.Name)
        and m.matches(comprehension.for_in.target, m.Name(comprehension.elt.value))
        and is_tool_collection(ctx, comprehension.for_in.iter)
    ):
        return None
    if not (
        isinstance(operand, cst.Comparison)
        and len(operand.comparisons) == 1
        and isinstance(operand.comparisons[0].operator, (cst.In, cst.NotIn))
        and is_allow_list(ctx, operand.comparisons[0].comparator)
        and (names_tool(operand.left) or read_off_tool(ctx, operand.left))
    ):
        return None
    denied = bool(node_words(ctx, operand.comparisons[0].comparator) & _DENY_HEADS)
    kept_when = isinstance(operand.comparisons[0].operator, cst.In) != denied
    return force(sense, test_value=True) if kept_when else force(sense, test_value=False)


class SkipToolAllowlist(Operator):
    name = "skip-tool-allowlist"
    description = "The check that the requested tool is on the allow-list never refuses."
    failure = (
        "A tool name the model invented (or was injected with) is no longer refused with an error "
        "result: the loop crashes on it, or runs a tool the model was never offered."
    )
    hint = (
        "Script the fake model to call a tool that is not on the list and assert nothing ran and the "
        "next request carries an error result naming the unknown tool."
    )
    examples = (
        Example(
            before=(
                "class Registry:\n"
                "  def create_action_model(self, include_actions=None):\n"
                "    available = {}\n"
                "    for name, action in self.registry.actions.items():\n"
                "        if include_actions is not None and name not in include_actions:\n"
                "            continue\n"
                "        available[name] = action\n"
                "    return available\n"
            ),
            after=(
                "class Registry:\n"
                "  def create_action_model(self, include_actions=None):\n"
                "    available = {}\n"
                "    for name, action in self.registry.actions.items():\n"
                "        if include_actions is not None and False:\n"
                "            continue\n"
                "        available[name] = action\n"
                "    return available\n"
            ),
            note="an include list of actions (the tools of this framework) restricting what is offered",
        ),
        Example(
            before=(
                "def build_prompt(self, include_history=None):\n"
                "    for name in self.sections:\n"
                "        if include_history is not None and name not in include_history:\n"
                "            continue\n"
                "        self.parts.append(name)\n"
            ),
            note="an include list of something other than tools",
        ),
        Example(
            before=(
                "class Agent:\n"
                "    def filter_user_tools(self, tools):\n"
                "        return [t for t in tools if t.default_value('request') in self.llm_tools_usable]\n"
            ),
            after=(
                "class Agent:\n"
                "    def filter_user_tools(self, tools):\n"
                "        return [t for t in tools if True]\n"
            ),
            note="a comprehension keeping only the tools on an allow-list (the tool is kept, its "
            "name read off it); `tools` followed by a restricting participle names the list",
        ),
        Example(
            before=(
                "def visible(self, users):\n"
                "    return [u for u in users if u.default_value('name') in self.allowed_users]\n"
            ),
            note="the same filter over users: not tools, not an allow-list of tools",
        ),
        Example(
            before=(
                "class Agent:\n"
                "    def get_function_call_class(self, msg):\n"
                "        tool_name = msg.function_call.name\n"
                "        if tool_name not in self.llm_tools_handled:\n"
                "            return None\n"
                "        return self.llm_tools_map[tool_name].model_validate(msg.function_call.arguments)\n"
            ),
            after=(
                "class Agent:\n"
                "    def get_function_call_class(self, msg):\n"
                "        tool_name = msg.function_call.name\n"
                "        if False:\n"
                "            return None\n"
                "        return self.llm_tools_map[tool_name].model_validate(msg.function_call.arguments)\n"
            ),
            note="against an allow-list (the tools this agent handles), leaving early is refusal enough",
        ),
        Example(
            before=(
                "class Agent:\n"
                "    def count(self, call):\n"
                "        if call.name not in self.tools_used:\n"
                "            return None\n"
                "        return self.usage[call.name]\n"
            ),
            note="`tools_used` is a history of what ran, not an allow-list; an early return is no refusal",
        ),
        Example(
            before=(
                "async def register(self, client, tool_configuration=None):\n"
                "    include = set(tool_configuration.get('include', [])) if tool_configuration else set()\n"
                "    exclude = set(tool_configuration.get('exclude', [])) if tool_configuration else set()\n"
                "    for tool in await client.get_tools():\n"
                "        tool_name = tool.function.name\n"
                "        if include:\n"
                "            if tool_name not in include:\n"
                "                continue\n"
                "        elif exclude:\n"
                "            if tool_name in exclude:\n"
                "                continue\n"
                "        self._callable_tools[tool_name] = tool\n"
            ),
            after=(
                "async def register(self, client, tool_configuration=None):\n"
                "    include = set(tool_configuration.get('include', [])) if tool_configuration else set()\n"
                "    exclude = set(tool_configuration.get('exclude', [])) if tool_configuration else set()\n"
                "    for tool in await client.get_tools():\n"
                "        tool_name = tool.function.name\n"
                "        if include:\n"
                "            if False:\n"
                "                continue\n"
                "        elif exclude:\n"
                "            if tool_name in exclude:\n"
                "                continue\n"
                "        self._callable_tools[tool_name] = tool\n"
            ),
            note="include/exclude lists read from a tool configuration (data flow); the exclude "
            "check gives a second mutant",
        ),
        Example(
            before=(
                "class Runner:\n"
                "    def _toolset_for(self, tool_use):\n"
                "        toolset = self._toolsets_by_family.get(tool_use.toolset_name)\n"
                "        if toolset is None:\n"
                "            warnings.warn(f'Toolset {tool_use.toolset_name} not found')\n"
                "        return toolset\n"
                "\n"
                "    def run_member(self, tool_use):\n"
                "        toolset = self._toolset_for(tool_use)\n"
                "        if toolset is None:\n"
                "            return self._toolset_not_found_result(tool_use)\n"
                "        return toolset.tool_result(tool_use)\n"
            ),
            after=(
                "class Runner:\n"
                "    def _toolset_for(self, tool_use):\n"
                "        toolset = self._toolsets_by_family.get(tool_use.toolset_name)\n"
                "        if toolset is None:\n"
                "            warnings.warn(f'Toolset {tool_use.toolset_name} not found')\n"
                "        return toolset\n"
                "\n"
                "    def run_member(self, tool_use):\n"
                "        toolset = self._toolset_for(tool_use)\n"
                "        if False:\n"
                "            return self._toolset_not_found_result(tool_use)\n"
                "        return toolset.tool_result(tool_use)\n"
            ),
            note="the lookup sits in a helper that returns it (call graph); a branch that only "
            "warns refuses nothing, so the helper's own check is left alone",
        ),
        Example(
            before=(
                "class Agent:\n"
                "    def _execute_tool(self, request):\n"
                "        tool = self._internal_tools.get(request.tool_name)\n"
                "        if tool is None:\n"
                "            result = f'Tool {request.tool_name} not found'\n"
                "        else:\n"
                "            try:\n"
                "                result = tool(**request.args)\n"
                "            except Exception as e:\n"
                "                result = f'Tool execution failed: {e}'\n"
                "        return result\n"
            ),
            note="without the check None is called inside a catch-all that answers with an error: "
            "nothing unlisted runs, only the message changes (declined)",
        ),
        Example(
            before=(
                "def parse_tool_call(item):\n"
                '    name, args = item.get("name"), item.get("arguments")\n'
                "    if name not in ALLOWED_TOOLS or not isinstance(args, dict):\n"
                '        raise ToolError("invalid_tool_call", "tool or arguments not allowed")\n'
                "    return name, args\n"
            ),
            after=(
                "def parse_tool_call(item):\n"
                '    name, args = item.get("name"), item.get("arguments")\n'
                "    if False or not isinstance(args, dict):\n"
                '        raise ToolError("invalid_tool_call", "tool or arguments not allowed")\n'
                "    return name, args\n"
            ),
            note="membership guard that raises; the other half of the test stays",
        ),
        Example(
            before=(
                "import json\n\n"
                "class Runner:\n"
                "    async def call_tool(self, tool_call):\n"
                "        name = tool_call.function.name\n"
                "        if name in self.functions:\n"
                "            output = await "
                "self.functions[name](**json.loads(tool_call.function.arguments))\n"
                "        else:\n"
                '            output = f"Unknown function: {name}"\n'
                '        return {"role": "tool", "tool_call_id": tool_call.id, "content": output}\n'
            ),
            note="positive membership whose allowed side indexes the same registry: without the "
            "check an unknown name raises KeyError there, no unlisted tool runs (declined)",
        ),
        Example(
            before=(
                "class Executor:\n"
                "    def execute(self, call):\n"
                "        handler = self._handlers.get(call.name)\n"
                "        if handler is None:\n"
                '            return ToolResult(call.id, f"tool {call.name} is not allowed", is_error=True)\n'
                "        return ToolResult(call.id, handler(call.input))\n"
            ),
            after=(
                "class Executor:\n"
                "    def execute(self, call):\n"
                "        handler = self._handlers.get(call.name)\n"
                "        if False:\n"
                '            return ToolResult(call.id, f"tool {call.name} is not allowed", is_error=True)\n'
                "        return ToolResult(call.id, handler(call.input))\n"
            ),
            note="registry lookup that came back None",
        ),
        Example(
            before=(
                "def dispatch(block, registry, enabled_tools):\n"
                "    if block.name in enabled_tools:\n"
                "        return registry[block.name](**block.input)\n"
                '    return {"type": "tool_result", "tool_use_id": block.id, "content": "unknown tool", '
                '"is_error": True}\n'
            ),
            after=(
                "def dispatch(block, registry, enabled_tools):\n"
                "    if True:\n"
                "        return registry[block.name](**block.input)\n"
                '    return {"type": "tool_result", "tool_use_id": block.id, "content": "unknown tool", '
                '"is_error": True}\n'
            ),
            note="early return of the tool's result from a registry with more tools than the enabled "
            "ones; the statement after it is the refusal",
        ),
        Example(
            before=(
                "def dispatch(block, registry):\n"
                "    if block.name in registry:\n"
                "        return registry[block.name](**block.input)\n"
                '    return {"type": "tool_result", "tool_use_id": block.id, "content": "unknown tool", '
                '"is_error": True}\n'
            ),
            note="the check and the lookup use the same registry: without the check an unknown name "
            "raises KeyError at the lookup, no unlisted tool runs (declined)",
        ),
        Example(
            before=(
                "def handle(item, policy):\n"
                "    if not policy.is_allowed(item.name):\n"
                '        return {"type": "function_call_output", "call_id": item.call_id, "output": '
                '"denied"}\n'
                "    return run(item)\n"
            ),
            after=(
                "def handle(item, policy):\n"
                "    if not True:\n"
                '        return {"type": "function_call_output", "call_id": item.call_id, "output": '
                '"denied"}\n'
                "    return run(item)\n"
            ),
            note="Responses API runner asking a policy object",
        ),
        Example(
            before=(
                "def login(user, admins):\n"
                "    if user.name not in admins:\n"
                "        raise PermissionError(user.name)\n"
                '    if "name" not in user.profile:\n'
                '        raise ValueError("profile without a name")\n'
            ),
            note="membership checks of users and keys are not tool allow-lists",
        ),
        Example(
            before=(
                "class Tools:\n"
                "    def load(self, name):\n"
                "        if name not in self.tools:\n"
                "            self.tools[name] = import_tool(name)\n"
                "        return self.tools[name]\n"
            ),
            note="a lazy registry fills itself; nothing is refused",
        ),
        Example(
            before=(
                "class Assistant:\n"
                "    def _execute(self, call):\n"
                "        tool = self.tools.get(call.name)\n"
                "        if tool is None or call.name not in self.allow:\n"
                '            return f"ERROR tool {call.name} is not permitted"\n'
                "        return tool.func(**call.args)\n"
            ),
            after=(
                "class Assistant:\n"
                "    def _execute(self, call):\n"
                "        tool = self.tools.get(call.name)\n"
                "        if tool is None or False:\n"
                '            return f"ERROR tool {call.name} is not permitted"\n'
                "        return tool.func(**call.args)\n"
            ),
            note="an allow-list (`self.allow`) besides the registry: only the allow-list check is mutated, "
            "the registry lookup is not (skipping it changes nothing when the list is a subset)",
        ),
        Example(
            before=(
                "import json\n\n"
                "def parse_actions(tool_calls):\n"
                "    actions = []\n"
                "    for tool_call in tool_calls:\n"
                "        error = ''\n"
                "        if tool_call.function.name != 'bash':\n"
                "            error += f'Unknown tool {tool_call.function.name}.'\n"
                "        if error:\n"
                "            raise FormatError(error)\n"
                "        actions.append(json.loads(tool_call.function.arguments)['command'])\n"
                "    return actions\n"
            ),
            after=(
                "import json\n\n"
                "def parse_actions(tool_calls):\n"
                "    actions = []\n"
                "    for tool_call in tool_calls:\n"
                "        error = ''\n"
                "        if False:\n"
                "            error += f'Unknown tool {tool_call.function.name}.'\n"
                "        if error:\n"
                "            raise FormatError(error)\n"
                "        actions.append(json.loads(tool_call.function.arguments)['command'])\n"
                "    return actions\n"
            ),
            note="the one offered tool compared by name; the refusal is collected and raised later",
        ),
        Example(
            before=(
                "def route(tool_call, handlers, messages):\n"
                "    if tool_call.name == 'finish':\n"
                "        return tool_call.arguments\n"
                "    if messages[-1].role != 'assistant':\n"
                "        messages.append({'role': 'assistant', 'content': ''})\n"
                "    return handlers[tool_call.name](tool_call.arguments)\n"
            ),
            note="a tool name compared to route a call (no refusal) and a role compared to a string",
        ),
        Example(
            before=(
                "def admit(request, allow_origins):\n"
                "    if request.name not in allow_origins:\n"
                '        raise PermissionError("origin not allowed")\n'
            ),
            note="an allow-list of something other than tools",
        ),
        Example(
            before=(
                "def answer(tool_use, tools_by_name, available):\n"
                "    tool = tools_by_name.get(tool_use.name) if tool_use.name in available else None\n"
                "    if tool is None:\n"
                "        return {'tool_use_id': tool_use.id, 'content': 'not found', 'is_error': True}\n"
                "    return tool.run(tool_use.input)\n"
            ),
            after=(
                "def answer(tool_use, tools_by_name, available):\n"
                "    tool = tools_by_name.get(tool_use.name) if True else None\n"
                "    if tool is None:\n"
                "        return {'tool_use_id': tool_use.id, 'content': 'not found', 'is_error': True}\n"
                "    return tool.run(tool_use.input)\n"
            ),
            note="the allow-list in a conditional lookup whose None the next check refuses",
        ),
        Example(
            before=(
                "def describe(tool_use, tools_by_name, available):\n"
                "    tool = tools_by_name.get(tool_use.name) if tool_use.name in available else None\n"
                "    return {'name': tool_use.name, 'known': tool is not None}\n"
            ),
            note="a conditional lookup nothing refuses on: describing, not gating",
        ),
        Example(
            before=(
                "class ToolRegistry:\n"
                "    def register(self, tool):\n"
                "        if self.tools.get(tool.name) is None:\n"
                "            key = tool.name.replace('-', '_')\n"
                "            twins = [n for n in self.tools if n.replace('-', '_') == key]\n"
                "            if twins:\n"
                "                raise ValueError(f'{tool.name} clashes with {twins[0]}')\n"
                "        self.tools[tool.name] = tool\n"
            ),
            note="registering a tool: the lookup only decides whether a name clash is looked for",
        ),
    )

    def find(self, ctx: SourceContext) -> Iterator[Mutation]:
        for operand in ctx.findall(m.Comparison()):
            keep_all = _filter_bypass(ctx, operand)
            if keep_all is not None:
                yield Mutation(
                    operand,
                    keep_all,
                    f"allow-list filter `{ctx.code(operand)}` never drops a tool: tools outside the "
                    "list are kept and run",
                )
        for operand in guard_operands(ctx):
            passing = _passing_value(ctx, operand)
            if passing is not None and not _is_explicit(ctx, operand):
                # an existence check in the registry is the allow-list only where there is no other
                if _has_explicit_check(ctx, ctx.enclosing_function(operand)):
                    continue
            if passing is not None:
                # against an allow- or deny-list, leaving early (``return None``, ``continue``) is
                # refusal enough; a registry-existence check must refuse unmistakably
                never_refuses = bypass(ctx, operand, strict=not _is_explicit(ctx, operand))
                looked_up = never_refuses is None and _none_unless_allowed(ctx, operand) is not None
                never_refuses = never_refuses or _none_unless_allowed(ctx, operand)
                if never_refuses is None or never_refuses.value != str(passing):
                    continue
                if _indexed_after(ctx, operand):
                    continue  # the name is then looked up with ``tools[name]``: a KeyError, no tool runs
                if _none_call_caught(ctx, operand):
                    continue  # ``None(**args)`` raises inside a catch-all that answers with an error
                description = f"allow-list check `{ctx.code(operand)}` never refuses"
                if looked_up:
                    description += ": a registered tool outside the allowed ones is looked up and runs"
                elif _tests_lookup(ctx, operand):
                    description += (
                        ": an unknown tool name carries on with no tool (None) instead of a refusal"
                    )
                yield Mutation(operand, never_refuses, description)
