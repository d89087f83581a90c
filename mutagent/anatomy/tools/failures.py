"""Failure reports: text or data that tells the model a tool failed.

Read by two roles. The swallow-tool-error role empties such a report (the failure then reads as
an empty success); the tool-result role leaves it out of the *output* a tool produced, because a
report composed by the loop (``f"Error: {e}"``, ``"Encountered error: " + str(e)``, ``f"Tool
{name} not found"``) is no tool's output: cutting it to ten characters cuts nothing the tool
returned.
"""

from __future__ import annotations

import libcst as cst

from mutagent.anatomy.syntax import walk
from mutagent.anatomy.vocabulary import tool_words as words
from mutagent.mutation.context import SourceContext

#: Words of a message that reports a failure.
REPORT_WORDS = frozenset("error failed failure exception crashed traceback".split())


def caught_name(handler: cst.ExceptHandler) -> str | None:
    """``e`` of ``except Exception as e``."""
    return handler.name.name.value if handler.name and isinstance(handler.name.name, cst.Name) else None


def renders_failure(expr: cst.BaseExpression, caught: str | None) -> bool:
    """Text or data that tells of the failure: it uses the caught exception (not just passes it
    on), calls ``traceback.format_exc()``, or is a message with an error word in it."""
    if isinstance(expr, cst.Name):
        return False
    inner = list(walk(expr))
    if caught and any(isinstance(n, cst.Name) and n.value == caught for n in inner):
        return True
    if any(isinstance(n, cst.Name) and n.value == "format_exc" for n in inner) or any(
        isinstance(n, cst.Attribute) and n.attr.value == "format_exc" for n in inner
    ):
        return True
    text = " ".join(s.value for s in inner if isinstance(s, (cst.SimpleString, cst.FormattedStringText)))
    return bool(words(text) & REPORT_WORDS)


def composed_failure(ctx: SourceContext, expr: cst.BaseExpression) -> bool:
    """``expr`` is a failure report the loop composed, not a tool's output: it renders the
    exception caught by an enclosing handler, or it is text (an f-string, a literal, a
    concatenation) that says error/failed/not found."""
    for ancestor in ctx.ancestors(expr):
        if isinstance(ancestor, cst.ExceptHandler) and renders_failure(expr, caught_name(ancestor)):
            return True
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
            break
    if isinstance(expr, (cst.FormattedString, cst.SimpleString, cst.ConcatenatedString, cst.BinaryOperation)):
        text = " ".join(
            s.value for s in walk(expr) if isinstance(s, (cst.SimpleString, cst.FormattedStringText))
        )
        said = words(text)
        return bool(said & REPORT_WORDS or {"not", "found"} <= said or said & {"unknown"})
    return False
