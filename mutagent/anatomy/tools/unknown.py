"""The unknown-tool answer: the branch a loop takes when the model asks for a tool it does not
have, and which answers the model with an error report instead of raising.

A loop looks the requested tool up in its registry and, when it is missing, either raises (the
failure travels on as an exception) or tells the model (``error_msg = f"Tool {name} not found"``
then a tool result built from it). Only the second is a report *to the model*; emptied, the model
is told nothing went wrong. The branch is recognised from two pieces of evidence that must both
hold:

* the test asks whether the lookup failed: ``tool is None`` / ``not tool`` for a local bound to
  a lookup in a tool collection (``tool = self._tools.get(name)``, ``registry.get_tool(name)``),
  or ``name in self.tools`` / ``name not in TOOLS`` (a collection whose head noun is a registry
  word: ``tools``, ``registry``, ``handlers``, ``toolbox``);
* the missing side does not raise and builds a report in it: text or an ``{"error": ...}`` dict
  assigned or returned there.

``if cache.get(key) is None:`` (no tool collection) and ``if tool is None: raise
ToolNotFound(name)`` (an exception, handled by whoever catches it) are not this role.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.agent_code import in_test
from mutagent.anatomy.dataflow import local_values
from mutagent.anatomy.syntax import final_name_or_key, is_constant, string_value, walk
from mutagent.anatomy.vocabulary import REGISTRY_WORDS, TOOL_CAMEL
from mutagent.anatomy.vocabulary import tool_words as words
from mutagent.mutation.context import SourceContext

#: Words of a report that tells of a failure (in its text or its dict keys).
_FAILURE_WORDS = frozenset(
    "error errors failed failure unknown invalid unavailable missing exception crashed".split()
)
#: Lookups on a collection (``tools.get(name)``, ``registry.get_tool(name)``).
_LOOKUP_VERBS = frozenset("get lookup find resolve".split())


_IS_NONE = m.Comparison(comparisons=[m.ComparisonTarget(operator=m.Is(), comparator=m.Name("None"))])


_APPEND = m.Call(func=m.Attribute(attr=m.Name("append")), args=[m.Arg(keyword=None, star="")])


@dataclass(frozen=True)
class UnknownToolAnswer:
    """The ``if`` that tells a missing tool from a present one, and the statements of its
    missing side (which answer the model)."""

    guard: cst.If
    missing: tuple[cst.BaseStatement, ...]

    def reports(self) -> Iterator[cst.BaseExpression]:
        """The text or error dicts the missing side assigns or returns: ``error_msg =
        f"Tool '{name}' not found"``, ``result = {"error": error_msg}``, ``return "Unknown tool"``."""
        for statement in self.missing:
            for node in walk(statement):
                if isinstance(node, (cst.Assign, cst.AnnAssign, cst.Return)) and node.value is not None:
                    if _is_report(node.value):
                        yield node.value
                elif m.matches(node, _APPEND) and _is_report(node.args[0].value):
                    yield node.args[0].value  # ``values.append(f"Unknown tool: {name}")``


def _is_report(value: cst.BaseExpression) -> bool:
    """Text that says the tool is missing or failed (``f"Tool {name} not found"``, ``"Unknown
    tool"``), or a dict with an ``error`` key; a prompt or log text built there is neither."""
    if isinstance(value, (cst.FormattedString, cst.SimpleString, cst.ConcatenatedString)):
        if isinstance(value, cst.FormattedString):
            text = " ".join(p.value for p in value.parts if isinstance(p, cst.FormattedStringText))
        else:
            text = string_value(value) or ""
        return bool(words(text) & (_FAILURE_WORDS | {"not"}))
    if isinstance(value, cst.Dict):
        keys = {string_value(e.key) for e in value.elements if isinstance(e, cst.DictElement)}
        return any(words(k or "") & _FAILURE_WORDS for k in keys)
    return False


def _is_registry(expr: cst.BaseExpression) -> bool:
    """A collection of tools, by its last word (``self._internal_tools``, ``TOOL_REGISTRY``,
    ``self.handlers``)."""
    leaf = final_name_or_key(expr) if isinstance(expr, (cst.Attribute, cst.Name)) else None
    leaf = leaf or ""
    parts = [p for p in re.split(r"[^a-z0-9]+", TOOL_CAMEL.sub("_", leaf).lower()) if p]
    return bool(parts) and parts[-1] in REGISTRY_WORDS


def _looked_up(ctx: SourceContext, name: cst.Name) -> bool:
    """``name`` is bound to a lookup in a tool collection: ``tools.get(n)``, ``self.registry.get_tool(n)``."""
    for value in local_values(ctx, name):
        inner = value.expression if isinstance(value, cst.Await) else value
        if not (isinstance(inner, cst.Call) and isinstance(inner.func, cst.Attribute)):
            continue
        verb = words(inner.func.attr.value)
        if verb & _LOOKUP_VERBS and (_is_registry(inner.func.value) or verb & {"tool"}):
            return True
    return False


def _missing_side(ctx: SourceContext, guard: cst.If) -> tuple[cst.BaseStatement, ...] | None:
    """The statements run when the requested tool is missing, or None if the test is no such check."""
    test = guard.test
    body = tuple(guard.body.body)
    orelse = tuple(guard.orelse.body.body) if isinstance(guard.orelse, cst.Else) else None
    if m.matches(test, _IS_NONE):
        left = test.left
        return body if isinstance(left, cst.Name) and _looked_up(ctx, left) else None
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = test.expression
        return body if isinstance(inner, cst.Name) and _looked_up(ctx, inner) else None
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        if not _is_registry(target.comparator) or is_constant(test.left):
            return None
        if isinstance(target.operator, cst.NotIn):
            return body
        if isinstance(target.operator, cst.In):
            return orelse
    return None


def unknown_tool_answers(ctx: SourceContext) -> list[UnknownToolAnswer]:
    """Every branch (outside tests) that answers a request for a missing tool with a report."""

    def compute() -> list[UnknownToolAnswer]:
        found = []
        for guard in ctx.findall(m.If()):
            if in_test(ctx, guard):
                continue
            missing = _missing_side(ctx, guard)
            if not missing or any(isinstance(n, cst.Raise) for s in missing for n in walk(s)):
                continue
            answer = UnknownToolAnswer(guard, missing)
            if any(True for _ in answer.reports()):
                found.append(answer)
        return found

    return ctx.cached(("tools", "unknown_tool_answers"), compute)
