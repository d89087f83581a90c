"""skip-approval: a side-effecting tool runs without the approval it requires.

Sending mail, creating tickets, paying, deleting: tools with side effects must wait for a human
(or a policy) to say yes, and a refusal must reach the model as an error instead of a silent
success. A loop that loses the check still passes every test that approves everything, or that
only looks at the final answer; only a test that *denies* approval and asserts nothing happened
catches it.

Recognised guards (``if``/``elif``/``assert``/conditional expressions, either polarity):

* an approval *answer*: ``approved``, ``not self._approve(call)``, ``await confirm(call)``,
  ``approvals.get(call.id)``, ``approval_status is None`` (pending: the call is interrupted),
  ``decision != "approve"``, ``input("Run it? [y/N]") != "y"`` -- the operand becomes the literal
  that lets the call through. A name must be *about the answer* (its last word ``approved``,
  ``approval``, ``status``, ``decision``...): ``approval_scope_identity`` is not, nor is an
  ``on_approval`` callback;
* failing that, an approval *requirement* whose branch refuses for want of approval while a call
  is handled: ``tool.requires_approval``, ``spec.side_effect`` with ``raise ApprovalRequired(...)``
  -- the requirement becomes false. A requirement whose branch asks for approval itself (a
  nested answer check) is left to that inner check; one checked while a tool is configured
  (``__post_init__``) is no gate.

A guard whose avoided side itself approves the call (``if approval_status is True:
approved.append(run); continue``) or whose bypassed rejection falls through to the pending path is
not a "never refuses" site: skipping the first is stricter, the second sends a decided call back to
pending. Where such an approving branch is followed by the pending path, the mutant takes the
approving branch always (``if not needs_approval:`` -> ``if not False:``), and says that an
undecided call is approved instead of waiting.

The guard must sit in tool-handling code (see ``_tools.in_tool_context``) or test a side effect,
so an order's own ``approved`` field in business logic is not mistaken for tool approval.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.dataflow import local_values
from mutagent.anatomy.syntax import (
    final_name,
    final_name_or_key,
    is_constant,
    single_comparison,
    string_value,
    walk,
)
from mutagent.anatomy.tools.approval import (
    PENDING_WORDS,
    asks_for_approval,
    gates_side_effect,
    names_requirement,
    pending_approval,
)
from mutagent.anatomy.tools.context import in_tool_context
from mutagent.anatomy.tools.guards import (
    branches,
    bypass,
    force,
    guard_leaves,
    guard_of,
    guards,
    refusal_level,
)
from mutagent.anatomy.tools.invocation import invokes_tool
from mutagent.anatomy.vocabulary import node_words, ordered_words
from mutagent.anatomy.vocabulary import tool_words as words
from mutagent.mutation.context import SourceContext
from mutagent.mutation.operator import Example, Mutation, Operator

_APPROVAL = frozenset(
    (
        "approved approval approvals approve approves approver confirm confirmed confirmation confirms "
        "consent consented"
    ).split()
)
#: What a gate may hand back instead of running the call: the approval request itself.
_PENDING = _APPROVAL | {"pending", "interruption", "interrupt", "request"}
_REQUIRES = frozenset("requires require required needs need".split())
_SIDE_EFFECT = frozenset(
    ("side effect effects destructive dangerous mutating mutates sensitive risky irreversible unsafe").split()
)


def _asks_human(ctx: SourceContext, node: cst.CSTNode) -> bool:
    return any(
        isinstance(n, cst.Call) and final_name(n) == "input" and "builtins.input" in ctx.qualified_names(n)
        for n in walk(node)
    )


#: ``approval_status``, ``user_decision``... the last word of a name that holds the answer.
_ANSWER_TAILS = _APPROVAL | {
    "status",
    "decision",
    "result",
    "response",
    "answer",
    "granted",
    "given",
    "ok",
    "state",
}


def _head(expr: cst.BaseExpression) -> list[str]:
    """The words of the name a guard leaf is about: ``self._approve(call)`` -> approve;
    ``approvals.get(call.id)`` -> approvals; ``await confirm(call)`` -> confirm."""
    if isinstance(expr, cst.Await):
        expr = expr.expression
    if (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Attribute)
        and final_name(expr) in ("get", "lookup")
    ):
        expr = expr.func.value
    return ordered_words(final_name_or_key(expr) or "")


def _sides(leaf: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(leaf, cst.Comparison) and len(leaf.comparisons) == 1:
        return [leaf.left, leaf.comparisons[0].comparator]
    return [leaf]


def _is_state(ctx: SourceContext, leaf: cst.BaseExpression) -> bool:
    """Whether approval was given: ``approved``, ``self._approve(call)``, ``approval_status is None``,
    ``decision != "approve"``, ``input(...) == "y"`` -- not ``approval_scope_identity`` (not an
    answer), ``on_approval`` (a callback) or ``requires_approval`` (a requirement)."""
    if _asks_human(ctx, leaf):
        return True
    for side in _sides(leaf):
        if asks_for_approval(ctx, side):
            return True
        text = string_value(side)
        head = ordered_words(text) if text is not None else _head(side)
        if (
            head
            and set(head) & _APPROVAL
            and head[-1] in _ANSWER_TAILS
            and head[0] != "on"
            and not set(head) & _REQUIRES
        ):
            return True
    return False


def _is_requirement(ctx: SourceContext, leaf: cst.BaseExpression) -> bool:
    """Whether approval is needed: ``tool.requires_approval``, ``spec.side_effect``, "
    "``needs_approval(call)``."""
    head = set(_head(_sides(leaf)[0]))
    return bool(head & _SIDE_EFFECT) or bool(head & _REQUIRES and head & _APPROVAL)


def _asks_inside(ctx: SourceContext, guard: cst.CSTNode) -> bool:
    """The guarded block runs its own approval check (so the requirement is not the gate)."""
    body = getattr(guard, "body", None)
    if body is None or isinstance(guard, cst.IfExp):
        return False
    return any(
        isinstance(n, (cst.If, cst.Assert))
        and n is not guard
        and any(_is_state(ctx, x) for x in guard_leaves(n.test))
        for n in walk(body)
    )


_CALL_PARAMS = frozenset(
    ("call calls args arguments kwargs input invocation item block request action").split()
)


def _at_call_time(ctx: SourceContext, guard: cst.CSTNode) -> bool:
    """The guard runs while a call is handled (its function takes the call or its arguments, or
    runs the tool), not while a tool is defined or configured (``__post_init__(self)``)."""
    function = ctx.enclosing_function(guard)
    if function is None:
        return False
    return bool(node_words(ctx, function.params) & _CALL_PARAMS) or invokes_tool(ctx, function.body)


def _implied(ctx: SourceContext, leaf: cst.BaseExpression, guard: cst.CSTNode) -> bool:
    """``call.confirmed is not None and call.confirmed is True``: the first leaf holds whenever the
    second does, so forcing it alone lets nothing through (an equivalent mutant, not a skipped
    approval)."""
    parts = single_comparison(leaf)
    if parts is None or not isinstance(parts[1], cst.IsNot) or not m.matches(parts[2], m.Name("None")):
        return False
    subject = ctx.code(parts[0])
    test = getattr(guard, "test", None)
    operations = ctx.descendants(test, m.BooleanOperation()) if test is not None else []
    if not operations or not all(isinstance(op.operator, cst.And) for op in operations):
        return False  # only a plain ``a and b and c`` makes every leaf required
    for sibling in guard_leaves(test):
        if sibling is leaf:
            continue
        if ctx.code(sibling) == subject:  # ``x is not None and x``
            return True
        other = single_comparison(sibling)
        if (
            other is not None
            and ctx.code(other[0]) == subject
            and isinstance(other[1], (cst.Is, cst.Equal))
            and not m.matches(other[2], m.Name("None"))
        ):
            return True  # ``x is not None and x is True`` / ``x == "approved"``
    return False


def _candidates(
    ctx: SourceContext, guard: cst.CSTNode, leaves: list[cst.BaseExpression]
) -> list[cst.BaseExpression]:
    """The approval state leaves of a guard; failing those, its requirement leaves, when the
    guard refuses for want of approval at call time and asks nobody itself."""
    states = [leaf for leaf in leaves if _is_state(ctx, leaf) and not _implied(ctx, leaf, guard)]
    if states:
        return states
    requirements = [leaf for leaf in leaves if _is_requirement(ctx, leaf)]
    if not requirements or _asks_inside(ctx, guard) or not _at_call_time(ctx, guard):
        return []
    return requirements if node_words(ctx, guard) & _APPROVAL else []


#: A branch that lets a call through: ``approved_runs.append(run)``, ``allowed.add(call)``.
_LETS_THROUGH = frozenset(
    "approved allowed accepted granted permitted runnable ready approve allow selected chosen".split()
)
_RECORDING = frozenset("append add extend insert".split())
#: Where an undecided call goes: a pending list, an interruption.
_PENDING_PATH = frozenset("pending interruption interruptions interrupt interrupted".split())


def _guard_effect(ctx: SourceContext, guard: cst.CSTNode) -> str | None:
    """What keeping the guard's "refusing" side (the side ``bypass`` avoids) from running does,
    when that is not letting an unapproved call run: ``"stricter"`` when that side itself lets the
    call through (``if approval_status is True: approved.append(run); continue``, ``return True``
    in an ``is_tool_approved()``), ``"to-pending"`` when a call it no longer stops falls through to
    the pending-approval path (``if approval_status is False: reject(...); continue`` followed by
    ``pending.append(call)``: the decided call goes back to pending, it does not run). Either
    mutant would be labelled "never refuses" falsely."""
    if not isinstance(guard, cst.If):
        return None
    when_true, when_false = branches(ctx, guard)
    refusing = (
        when_true
        if refusal_level(ctx, when_true, _PENDING) >= refusal_level(ctx, when_false, _PENDING)
        else when_false
    )
    func = ctx.enclosing_function(guard)
    answers_approval = func is not None and bool(words(func.name.value) & (_APPROVAL | _LETS_THROUGH))
    for node in (n for part in refusing for n in walk(part)):
        if answers_approval and isinstance(node, cst.Return) and m.matches(node.value, m.Name("True")):
            return "stricter"  # ``is_tool_approved()`` answering yes: skipping that answers no
        if (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and node.func.attr.value in _RECORDING
            and words(ctx.code(node.func.value)) & _LETS_THROUGH
        ):
            return "stricter"
    if refusing is when_true and guard.orelse is None and _falls_to_pending(ctx, guard):
        return "to-pending"
    if _records_the_decision(ctx, when_true, when_false):
        return "records"
    return None


#: First words of a call that writes a decision down without acting on it.
_APPROVES = frozenset("approve allow grant permit accept".split())
_REJECTS = frozenset("reject deny refuse decline".split())


def _records_the_decision(
    ctx: SourceContext, when_true: list[cst.CSTNode], when_false: list[cst.CSTNode]
) -> bool:
    """``if approved: context.approve_tool(item) else: context.reject_tool(item)``: each side only
    writes the decision down (the answer sent on reads the decision itself). Forced, the check
    records an approval for a rejected call, but nothing runs: "never refuses" would be false."""

    def first_words(side: list[cst.CSTNode]) -> set[str]:
        calls = [n for part in side for n in walk(part) if isinstance(n, cst.Call)]
        return {(ordered_words(final_name(c) or "") or [""])[0] for c in calls}

    if invokes_tool(ctx, when_true) or invokes_tool(ctx, when_false):
        return False
    yes, no = first_words(when_true), first_words(when_false)
    return bool((yes & _APPROVES and no & _REJECTS) or (yes & _REJECTS and no & _APPROVES))


def _falls_to_pending(ctx: SourceContext, guard: cst.If) -> bool:
    """What follows the guard in its block sends the call to pending approval."""
    siblings = getattr(ctx.parent(guard), "body", ())
    if not isinstance(siblings, (list, tuple)):
        return False
    after = list(siblings)[next((i for i, stmt in enumerate(siblings) if stmt is guard), len(siblings)) + 1 :]
    return any(node_words(ctx, statement) & _PENDING_PATH for statement in after)


def _approves_undecided(ctx: SourceContext, leaf: cst.BaseExpression, guard: cst.CSTNode) -> cst.Name | None:
    """``if not needs_approval: approved.append(run); continue`` followed by the pending path: the
    guard's body is the way past the gate, so the bypass is the literal that always takes it --
    every undecided call is approved instead of waiting."""
    found = guard_of(ctx, leaf)
    if found is None or not isinstance(guard, cst.If) or guard.orelse is not None:
        return None
    _, sense = found
    lets_through = any(
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value in _RECORDING
        and words(ctx.code(node.func.value)) & _LETS_THROUGH
        for node in walk(guard.body)
    )
    if not lets_through or not _falls_to_pending(ctx, guard):
        return None
    return force(sense, test_value=True)


def _asks_before_acting(ctx: SourceContext, guard: cst.CSTNode, leaves: list[cst.BaseExpression]) -> bool:
    """``if not self.io.confirm_ask("Create new file?"): return`` outside tool-handling code: an
    interactive confirm helper whose yes lets a side-effecting action through (see
    ``anatomy.tools.approval``). ``confirm_ask("Add URL to the chat?")`` before a read is not."""
    for leaf in leaves:
        for side in _sides(leaf):
            call = side.expression if isinstance(side, cst.Await) else side
            asking = isinstance(call, cst.Call) and asks_for_approval(ctx, call)
            if asking and gates_side_effect(ctx, guard, call):
                return True
    return False


def _deferral_filters(ctx: SourceContext) -> Iterator[Mutation]:
    """``to_defer = [fc for fc in calls if run_ctx.requires_confirmation(fc.name) or
    _is_server_deferred(fc)]``: a comprehension sorting tool calls by whether they need approval.
    Each approval requirement in its filter (and, beside one, a test named for a call waiting on
    approval) becomes ``False``: calls that need approval land with the ones that run. A filter
    with no approval requirement (``[c for c in calls if c.pending]``) is not sorted by approval."""
    for compif in ctx.findall(m.CompIf()):
        leaves = guard_leaves(compif.test)
        required = [leaf for leaf in leaves if names_requirement(ctx, leaf)]
        if not required or not (_at_call_time(ctx, compif) or _sorts_calls(ctx, compif)):
            continue
        waiting = [
            leaf
            for leaf in leaves
            if leaf not in required
            and isinstance(leaf, cst.Call)
            and words(final_name(leaf) or "") & PENDING_WORDS
        ]
        for leaf in [*required, *waiting]:
            yield Mutation(
                leaf,
                cst.Name("False"),
                f"approval requirement `{ctx.code(leaf)}` never holds: calls that need approval are "
                "not held back and run without it",
            )


def _sorts_calls(ctx: SourceContext, compif: cst.CompIf) -> bool:
    """The comprehension iterates tool calls: ``for fc in fcalls`` with ``fcalls =
    get_function_calls(res.outputs)`` -- not ``for t in tools`` (tool definitions)."""
    comp_for = ctx.parent(compif)
    if not isinstance(comp_for, cst.CompFor):
        return False
    sources = [comp_for.iter]
    if isinstance(comp_for.iter, cst.Name):
        sources += [v for v in local_values(ctx, comp_for.iter) if v is not comp_for.iter]
    return any(node_words(ctx, source) & {"call", "calls"} for source in sources)


def _requirement_answers(ctx: SourceContext) -> Iterator[Mutation]:
    """The predicate a loop asks before holding a call for approval: ``def
    requires_confirmation(self, tool_name): ...; return config.get("requires_confirmation",
    False)`` (named for the requirement) or ``return getattr(fc, "confirmation_status", None) ==
    "pending"`` (the call's approval status is pending). Its computed answer becomes ``False``:
    every call is reported as needing no approval. Constant returns (``return False``) stay."""
    for ret in ctx.findall(m.Return()):
        function = ctx.enclosing_function(ret)
        if function is None or ret.value is None or is_constant(ret.value):
            continue
        own = words(function.name.value)
        named = bool(own & {"requires", "require", "needs", "need"} and own & _APPROVAL)
        if named or pending_approval(ctx, ret.value):
            yield Mutation(
                ret.value,
                cst.Name("False"),
                f"approval predicate `{function.name.value}` always answers False: a call that needs "
                "approval runs without it",
            )


class SkipApproval(Operator):
    name = "skip-approval"
    description = "A side-effecting tool runs without the approval it requires."
    failure = (
        "The approval gate for side-effecting tools never refuses, so a create/send/delete the user "
        "never approved is executed and reported to the model as done."
    )
    hint = (
        "Deny approval (an approver that says no) for a side-effecting call and assert the tool did not "
        "run and the model got an error result saying approval was refused."
    )
    examples = (
        Example(
            before=(
                "async def run(run_ctx, outputs):\n"
                "    fcalls = get_function_calls(outputs)\n"
                "    to_defer = [fc for fc in fcalls if run_ctx.requires_confirmation(fc.name)]\n"
                "    to_execute = [fc for fc in fcalls if fc not in to_defer]\n"
                "    return await run_ctx.execute_function_calls(to_execute), to_defer\n"
            ),
            after=(
                "async def run(run_ctx, outputs):\n"
                "    fcalls = get_function_calls(outputs)\n"
                "    to_defer = [fc for fc in fcalls if False]\n"
                "    to_execute = [fc for fc in fcalls if fc not in to_defer]\n"
                "    return await run_ctx.execute_function_calls(to_execute), to_defer\n"
            ),
            note="tool calls sorted by an approval requirement in a comprehension",
        ),
        Example(
            before=(
                "def listed(tools):\n"
                "    return [t.name for t in tools if t.requires_approval]\n"
            ),
            note="tool definitions listed for display: no call is held back",
        ),
        Example(
            before=(
                "def _is_server_deferred(fc):\n"
                "    return getattr(fc, 'confirmation_status', None) == 'pending'\n"
            ),
            after=(
                "def _is_server_deferred(fc):\n"
                "    return False\n"
            ),
            note="the predicate answering whether a call waits for approval",
        ),
        Example(
            before=(
                "def is_waiting(job):\n"
                "    return job.status == 'pending'\n"
            ),
            note="a pending job, not a call waiting for approval",
        ),
        Example(
            before=(
                "def handle_shell_commands(self, commands):\n"
                "    if not self.io.confirm_ask('Run shell command?', subject=commands):\n"
                "        return\n"
                "    for command in commands:\n"
                "        run_cmd(command)\n"
            ),
            after=(
                "def handle_shell_commands(self, commands):\n"
                "    if not True:\n"
                "        return\n"
                "    for command in commands:\n"
                "        run_cmd(command)\n"
            ),
            note="an interactive confirm helper asked before a shell command runs",
        ),
        Example(
            before=(
                "def check_for_urls(self, inp, urls):\n"
                "    for url in urls:\n"
                "        if self.io.confirm_ask('Add URL to the chat?', subject=url):\n"
                "            inp += self.commands.cmd_web(url)\n"
                "        else:\n"
                "            self.rejected_urls.add(url)\n"
                "    return inp\n"
            ),
            note="the same helper before a read: nothing with a side effect waits on the answer",
        ),
        Example(
            before=(
                "class Executor:\n"
                "    def run(self, raw, tenant_id, approved=False):\n"
                "        name, args = parse_tool_call(raw)\n"
                "        spec = self.tools[name]\n"
                "        if spec.side_effect and not approved:\n"
                '            raise ToolError("approval_required", "side effects need approval")\n'
                "        return spec.handler(args)\n"
            ),
            after=(
                "class Executor:\n"
                "    def run(self, raw, tenant_id, approved=False):\n"
                "        name, args = parse_tool_call(raw)\n"
                "        spec = self.tools[name]\n"
                "        if spec.side_effect and not True:\n"
                '            raise ToolError("approval_required", "side effects need approval")\n'
                "        return spec.handler(args)\n"
            ),
            note="an approved flag next to the side-effect requirement",
        ),
        Example(
            before=(
                "async def run_tool(self, call):\n"
                "    tool = self.tools[call.function.name]\n"
                "    if tool.needs_approval and not await self.confirm(call):\n"
                '        return {"role": "tool", "tool_call_id": call.id, "content": "The user declined."}\n'
                '    return {"role": "tool", "tool_call_id": call.id, "content": await '
                "tool.run(call.arguments)}\n"
            ),
            after=(
                "async def run_tool(self, call):\n"
                "    tool = self.tools[call.function.name]\n"
                "    if tool.needs_approval and not True:\n"
                '        return {"role": "tool", "tool_call_id": call.id, "content": "The user declined."}\n'
                '    return {"role": "tool", "tool_call_id": call.id, "content": await '
                "tool.run(call.arguments)}\n"
            ),
            note="OpenAI async runner with an awaited confirmation callback",
        ),
        Example(
            before=(
                "def execute(call, handlers):\n"
                '    if input(f"Run {call.name}? [y/N] ").strip().lower() != "y":\n'
                '        return ToolResult(call.id, "denied by the user", is_error=True)\n'
                "    return ToolResult(call.id, handlers[call.name](**call.input))\n"
            ),
            after=(
                "def execute(call, handlers):\n"
                "    if False:\n"
                '        return ToolResult(call.id, "denied by the user", is_error=True)\n'
                "    return ToolResult(call.id, handlers[call.name](**call.input))\n"
            ),
            note="asking on the terminal",
        ),
        Example(
            before=(
                "def check(tool, call):\n"
                "    if tool.requires_approval:\n"
                "        raise ApprovalRequired(call.id)\n"
            ),
            after=("def check(tool, call):\n    if False:\n        raise ApprovalRequired(call.id)\n"),
            note="the requirement itself refuses (approval comes back as a new request)",
        ),
        Example(
            before=(
                "def respond(item, policy, dispatch):\n"
                "    assert policy.approves(item.name) or item.name in READ_ONLY\n"
                '    return {"type": "function_call_output", "call_id": item.call_id, "output": '
                "dispatch(item)}\n"
            ),
            after=(
                "def respond(item, policy, dispatch):\n"
                "    assert True or item.name in READ_ONLY\n"
                '    return {"type": "function_call_output", "call_id": item.call_id, "output": '
                "dispatch(item)}\n"
            ),
            note="an assert in a Responses API runner",
        ),
        Example(
            before=(
                "def ship(order):\n"
                "    if not order.approved:\n"
                '        raise OrderError("order not approved")\n'
                "    return carrier.send(order)\n"
            ),
            note="business logic about an order's approval, not a tool call's",
        ),
        Example(
            before=(
                "def pending(calls, tools):\n"
                "    waiting = []\n"
                "    for call in calls:\n"
                "        if tools[call.name].requires_approval:\n"
                "            waiting.append(call)\n"
                "    return waiting\n"
            ),
            note="listing calls that need approval refuses nothing",
        ),
        Example(
            before=(
                "def partition(calls, decisions, tools):\n"
                "    approved, pending = [], []\n"
                "    for call in calls:\n"
                "        approval_status = decisions.get(call.id)\n"
                "        if approval_status is False:\n"
                "            reject(call, 'denied by the user')\n"
                "            continue\n"
                "        if approval_status is True:\n"
                "            approved.append(call)\n"
                "            continue\n"
                "        pending.append(call)\n"
                "    return approved, pending\n"
            ),
            after=(
                "def partition(calls, decisions, tools):\n"
                "    approved, pending = [], []\n"
                "    for call in calls:\n"
                "        approval_status = decisions.get(call.id)\n"
                "        if approval_status is False:\n"
                "            reject(call, 'denied by the user')\n"
                "            continue\n"
                "        if True:\n"
                "            approved.append(call)\n"
                "            continue\n"
                "        pending.append(call)\n"
                "    return approved, pending\n"
            ),
            note="the approving branch always taken: an undecided call is approved instead of pending "
            "(skipping it would only be stricter, and a rejected call not stopped goes back to pending)",
        ),
        Example(
            before=(
                "def triage(calls, decisions, tools):\n"
                "    pending = []\n"
                "    for call in calls:\n"
                "        approval_status = decisions.get(call.id)\n"
                "        if approval_status is False:\n"
                "            reject(call, 'denied by the user')\n"
                "            continue\n"
                "        pending.append(call)\n"
                "    return pending\n"
            ),
            note="a rejection that, bypassed, sends the decided call back to pending approval: "
            "nothing runs unapproved, so 'never refuses' would be false",
        ),
        Example(
            before=(
                "def resume(run, tools):\n"
                "    for call in run.tool_calls:\n"
                "        if call.confirmed is True and call.result is None:\n"
                "            run_tool(tools[call.name], call)\n"
                "        else:\n"
                "            reject_tool_call(run, call)\n"
                "            call.error = True\n"
            ),
            after=(
                "def resume(run, tools):\n"
                "    for call in run.tool_calls:\n"
                "        if True and call.result is None:\n"
                "            run_tool(tools[call.name], call)\n"
                "        else:\n"
                "            reject_tool_call(run, call)\n"
                "            call.error = True\n"
            ),
            note="a confirmed-call gate whose refusing side is a reject_tool_call(...): that answers "
            "the call, it does not run it",
        ),
        Example(
            before=(
                "async def answer_tool_approval(context, request, callback):\n"
                "    decision = await callback(request)\n"
                "    approved = decision['approve']\n"
                "    if approved:\n"
                "        context.approve_tool(request.item)\n"
                "    else:\n"
                "        context.reject_tool(request.item, message=decision.get('reason'))\n"
                "    return {'approval_request_id': request.id, 'approve': approved}\n"
            ),
            note="a decision written down on both sides; the answer sent on reads the decision itself, "
            "so forcing the check runs nothing unapproved",
        ),
        Example(
            before=(
                "async def answer_tool_approval(context, request, approval_status, callback):\n"
                "    if approval_status is None:\n"
                "        assert callback is not None, 'a callback is required for approval requests'\n"
                "        approval_status = (await callback(request))['approve']\n"
                "    return {'approval_request_id': request.id, 'approve': approval_status}\n"
            ),
            note="an undecided request asks the callback; the assert states a precondition, "
            "it refuses nothing",
        ),
        Example(
            before=(
                "def resume_tool_calls(run, tools):\n"
                "    for call in run.tool_calls:\n"
                "        if call.confirmed is not None and call.confirmed is True:\n"
                "            run_tool(tools[call.name], call)\n"
                "        else:\n"
                "            reject_tool_call(run, call)\n"
            ),
            after=(
                "def resume_tool_calls(run, tools):\n"
                "    for call in run.tool_calls:\n"
                "        if call.confirmed is not None and True:\n"
                "            run_tool(tools[call.name], call)\n"
                "        else:\n"
                "            reject_tool_call(run, call)\n"
            ),
            note="only the decisive leaf is forced: `is not None` beside `is True` would be an "
            "equivalent mutant",
        ),
        Example(
            before=(
                "def record(audit, call):\n"
                "    audit.write(call.id, 'approved' if call.confirmed is True else 'rejected')\n"
            ),
            note="a conditional word for an audit record: the decision is made elsewhere",
        ),
    )

    def find(self, ctx: SourceContext) -> Iterator[Mutation]:
        yield from _deferral_filters(ctx)
        yield from _requirement_answers(ctx)
        for guard in guards(ctx):
            leaves = guard_leaves(guard.test)
            about_approval = any(node_words(ctx, leaf) & (_SIDE_EFFECT | _REQUIRES) for leaf in leaves)
            if not (about_approval or in_tool_context(ctx, guard) or _asks_before_acting(ctx, guard, leaves)):
                continue
            effect = _guard_effect(ctx, guard)
            for leaf in _candidates(ctx, guard, leaves):
                let_through = bypass(ctx, leaf, vocabulary=_PENDING)
                if let_through is not None and effect is None:
                    yield Mutation(leaf, let_through, f"approval check `{ctx.code(leaf)}` never refuses")
                    continue
                approve_all = _approves_undecided(ctx, leaf, guard) if effect == "stricter" else None
                if approve_all is not None:
                    yield Mutation(
                        leaf,
                        approve_all,
                        f"approval check `{ctx.code(leaf)}` always lets the call through: an undecided "
                        "call is approved instead of waiting for approval",
                    )
