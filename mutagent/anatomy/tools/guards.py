"""Contract checks, the shape shared by the allow-list, approval, tenant-scope and
argument-validation roles.

A *contract check* is a guard -- a leaf of an ``if``/``elif``/``assert``/conditional-expression
test, reached through ``and``/``or``/``not`` only -- exactly one of whose branches refuses
(raises, answers with an error, or leaves early) while the other carries on or runs the tool.
:func:`bypass` returns the literal that makes such a guard never refuse, whatever its polarity
(``if name not in tools: refuse`` and ``if name in tools: run() else: refuse`` alike). Branches
that do work of their own (a loop, a ``try``), hand over to an ``elif`` chain or return a value
are not refusals; comments never count.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.agent_code import in_test
from mutagent.anatomy.syntax import final_name, is_constant, walk
from mutagent.anatomy.tools.invocation import invokes_tool
from mutagent.anatomy.vocabulary import (
    ERROR_FLAGS as _ERROR_FLAGS,
)
from mutagent.anatomy.vocabulary import (
    ERROR_STATUSES as _ERROR_STATUSES,
)
from mutagent.anatomy.vocabulary import (
    NEGATED as _NEGATED,
)
from mutagent.anatomy.vocabulary import (
    REFUSAL_WORDS as _REFUSAL_WORDS,
)
from mutagent.anatomy.vocabulary import (
    SUCCESS_FLAGS as _SUCCESS_FLAGS,
)
from mutagent.anatomy.vocabulary import (  # the stream/tool vocabulary lives there
    node_words,
    ordered_words,
)
from mutagent.anatomy.vocabulary import (
    tool_words as words,
)
from mutagent.mutation.context import SourceContext


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


#: Calls that only report (a warning, a log line, a print): a branch made of these refuses nothing.
_REPORTERS = frozenset("warn warning info debug log print exception error critical tool_warning".split())


def _only_reports(statement: cst.CSTNode) -> bool:
    """``warnings.warn(...)``/``logger.error(...)`` as a statement of its own."""
    return (
        isinstance(statement, cst.Expr)
        and isinstance(statement.value, cst.Call)
        and final_name(statement.value) in _REPORTERS
    )


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
    if top and all(_only_reports(n) for n in top):
        return 0  # ``warnings.warn("Toolset ... not found")`` and nothing else: the caller decides
    text = _spoken(outright)
    if (
        any(isinstance(n, cst.Raise) for n in outright)
        or words(text) & _REFUSAL_WORDS
        or _NEGATED.search(text)
        # ``return self._toolset_not_found_result(tool_use)``: a helper named for the refusal
        or _NEGATED.search(" ".join(ordered_words(text)))
        or _flags_an_error(outright)
    ):
        return 2
    for n in inner:
        if isinstance(n, (cst.Continue, cst.Break)):
            return 1
        if isinstance(n, cst.Return) and (
            n.value is None or is_constant(n.value) or node_words(ctx, n.value) & vocabulary
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
        and is_constant(guard.body)
        and is_constant(guard.orelse)
        and isinstance(ctx.parent(guard), cst.Arg)
    )


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
