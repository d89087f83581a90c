"""The approval role's interactive side: a helper that *asks* a person whether to go on
(``self.io.confirm_ask("Run shell command?")``, ``Confirm.ask(...)``, ``await
ask_for_approval(call)``), and whether what the answer lets through is a side-effecting action
(running a shell command, creating or editing a file) rather than reading or showing something.

A yes/no question in a guard is approval only when both hold: ``confirm_ask("Add URL to the
chat?")`` before a scrape, or ``confirm_ask("Try to proceed anyway?")`` before sending an
oversized request, asks the user something, but nothing with a side effect waits on the answer.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import libcst as cst

from mutagent.anatomy.syntax import final_name, string_value, walk
from mutagent.anatomy.tools.guards import branches, refusal_level
from mutagent.anatomy.vocabulary import node_words
from mutagent.anatomy.vocabulary import tool_words as words
from mutagent.mutation.context import SourceContext

#: Words that make a question one of approval: ``confirm_ask``, ``ask_approval``, ``Confirm.ask``.
APPROVAL_WORDS = frozenset(
    "approve approval confirm confirmation consent permission authorize authorise".split()
)
#: Verbs of putting a question to someone: the call's result is their answer.
ASK_VERBS = frozenset("ask prompt input query".split())
#: A name that asks *about* the question (whether one exists, is needed, is configured) is no answer.
_NOT_AN_ANSWER = frozenset("has needs need requires require required should on handler callback".split())
#: Actions with effects outside the program that a person is asked to allow: running a command,
#: creating, editing or deleting a file, installing, pushing, sending, paying.
SIDE_EFFECT_VERBS = frozenset(
    (
        "run runs execute exec shell create creates edit edits write writes delete deletes remove "
        "overwrite install commit push send pay touch modify apply deploy kill"
    ).split()
)


def asks_for_approval(ctx: SourceContext, expr: cst.BaseExpression) -> bool:
    """``self.io.confirm_ask(...)``, ``await ask_for_approval(call)``, ``Confirm.ask(...)``,
    ``prompt_confirmation(...)``: a call (awaited or not) whose callee asks (an ask verb) for
    approval (an approval word) -- its result is the answer. Not ``has_confirm_prompt()`` (asks
    whether a question exists), ``needs_approval(call)`` (a requirement) or a callback
    (``on_confirm_ask``)."""
    if isinstance(expr, cst.Await):
        expr = expr.expression
    if not isinstance(expr, cst.Call):
        return False
    found = node_words(ctx, expr.func)
    return bool(found & APPROVAL_WORDS and found & ASK_VERBS and not found & _NOT_AN_ANSWER)


def question(call: cst.Call) -> str:
    """The text of the question a confirm helper puts (its string arguments)."""
    texts = [string_value(arg.value) for arg in call.args]
    fstrings = [
        part.value
        for arg in call.args
        if isinstance(arg.value, cst.FormattedString)
        for part in arg.value.parts
        if isinstance(part, cst.FormattedStringText)
    ]
    return " ".join([t for t in texts if t] + fstrings)


def _following(ctx: SourceContext, guard: cst.If) -> list[cst.CSTNode]:
    """The statements after ``guard`` in its block: what runs once a refusing ``if`` without an
    ``else`` has let the call through."""
    siblings = getattr(ctx.parent(guard), "body", ())
    if not isinstance(siblings, (list, tuple)):
        return []
    index = next((i for i, stmt in enumerate(siblings) if stmt is guard), len(siblings))
    return list(siblings[index + 1 :])


def approved_side(ctx: SourceContext, guard: cst.CSTNode) -> Sequence[cst.CSTNode]:
    """What runs when the guard does not refuse: the non-refusing branch, or -- for ``if not
    ok: return`` -- the statements that follow the guard."""
    if not isinstance(guard, cst.If):
        return []
    when_true, when_false = branches(ctx, guard)
    level_true, level_false = refusal_level(ctx, when_true), refusal_level(ctx, when_false)
    if level_true == level_false:
        return []
    side = when_false if level_true > level_false else when_true
    if not side or (guard.orelse is None and side is when_false):
        return _following(ctx, guard)
    return side


def _call_words(nodes: Iterable[cst.CSTNode]) -> frozenset[str]:
    """The words of the callees called in ``nodes`` (what the code does, not what it mentions)."""
    found: set[str] = set()
    for node in nodes:
        for inner in walk(node):
            if isinstance(inner, cst.Call):
                found |= words(final_name(inner) or "")
    return frozenset(found)


def gates_side_effect(ctx: SourceContext, guard: cst.CSTNode, asking: cst.Call) -> bool:
    """Whether the answer to ``asking`` lets a side-effecting action through: the question names
    one ("Create new file?", "Allow edits to file ...?") or the approved side calls one
    (``run_cmd(command)``, ``touch_file(path)``). The function's name is not asked: a function
    that runs shell commands may also ask whether to add their output to the chat."""
    if words(question(asking)) & SIDE_EFFECT_VERBS:
        return True
    return bool(_call_words(approved_side(ctx, guard)) & SIDE_EFFECT_VERBS)


#: Words of a requirement: ``requires_confirmation``, ``needs_approval``.
REQUIRE_WORDS = frozenset("requires require required needs need".split())
#: Words of a call waiting for approval: ``confirmation_status == "pending"``, ``_is_server_deferred``.
PENDING_WORDS = frozenset("pending deferred defer awaiting".split())


def names_requirement(ctx: SourceContext, expr: cst.BaseExpression) -> bool:
    """``run_ctx.requires_confirmation(fc.name)``, ``tool.needs_approval``: whether approval is
    needed -- a requirement word and an approval word in the callee's or attribute's own name
    (``requires_auth(...)`` and ``approval_required_count`` are not: no approval, no predicate)."""
    if isinstance(expr, cst.Await):
        expr = expr.expression
    name = final_name(expr)
    found = words(name or "")
    return bool(found & REQUIRE_WORDS and found & APPROVAL_WORDS) and "count" not in found


def pending_approval(ctx: SourceContext, expr: cst.BaseExpression) -> bool:
    """``getattr(fc, "confirmation_status", None) == "pending"``: the call's approval status
    compared with a waiting value. ``job.status == "pending"`` (no approval) is not."""
    if not (isinstance(expr, cst.Comparison) and len(expr.comparisons) == 1):
        return False
    if not isinstance(expr.comparisons[0].operator, cst.Equal):
        return False
    sides = (expr.left, expr.comparisons[0].comparator)
    texts = [string_value(side) for side in sides]
    waiting = any(text is not None and words(text) & PENDING_WORDS for text in texts)
    subject = [side for side, text in zip(sides, texts, strict=True) if text is None]
    return waiting and any(node_words(ctx, side) & APPROVAL_WORDS for side in subject)
