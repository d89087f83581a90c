"""Failure reports: text or data that tells the model a tool failed (``f"Error: {e}"``,
``{"error": str(exc)}``, ``traceback.format_exc()``). The swallow-tool-error role empties such a
report: the failure then reads as an empty success."""

from __future__ import annotations

import libcst as cst

from mutagent.anatomy.syntax import walk
from mutagent.anatomy.vocabulary import tool_words as words

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
