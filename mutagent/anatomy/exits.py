"""How a block ends: it raises or returns (``control_flow_exits``), fails loudly (``fails``),
only leaves quietly (``exits_early``), and what it raises (``raised_names``). Shared by the
recognisers of bounds, checks and guards, whose meaning is what their branch does."""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.syntax import SCOPES, ancestors_within, is_literal, leaf_name, statements, string_value
from mutagent.anatomy.vocabulary import (
    STREAM_ERROR_WORDS as _ERROR_WORDS,
)
from mutagent.anatomy.vocabulary import (
    tokens,
)
from mutagent.mutation.context import SourceContext


def control_flow_exits(ctx: SourceContext, block: cst.CSTNode) -> bool:
    """``block`` raises, returns, breaks or continues (its own statements, not a nested def's):
    a branch that ends or repeats an attempt."""
    for node in ctx.descendants(block, m.Raise() | m.Return() | m.Break() | m.Continue()):
        if not any(isinstance(a, SCOPES) for a in ancestors_within(ctx, node, block)):
            return True
    return False


def fails(block: cst.BaseSuite) -> bool:
    """Whether a block turns the situation into an error: it raises, or calls / returns / yields
    something named as an error (``self._fail(...)``, ``return ErrorEvent(...)``)."""
    for statement in statements(block):
        if isinstance(statement, cst.Raise):
            return True
        value = getattr(statement, "value", None)
        if isinstance(value, (cst.Yield, cst.Await)):
            value = value.value if isinstance(value, cst.Yield) else value.expression
        if isinstance(statement, (cst.Expr, cst.Return)) and isinstance(value, cst.Call):
            if tokens(leaf_name(value.func)) & _ERROR_WORDS and not _is_logging(value):
                return True
    return False


def _is_logging(call: cst.Call) -> bool:
    """``log.error(...)``, ``logger.exception(...)``, ``logging.error(...)``: reporting, not failing."""
    receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
    return receiver is not None and bool(
        tokens(leaf_name(receiver)) & {"log", "logger", "logging", "warnings"}
    )


def exits_early(block: cst.BaseSuite) -> bool:
    """A guard body that only leaves quietly: bare ``return``/``return None``, ``continue``."""
    body = statements(block)
    if not body:
        return False
    for statement in body:
        if isinstance(statement, cst.Return):
            if statement.value is not None and not is_literal(statement.value, "None"):
                return False
        elif not isinstance(statement, (cst.Continue, cst.Pass)):
            return False
    return not all(isinstance(s, cst.Pass) for s in body)


def raised_names(block: cst.BaseSuite) -> set[str]:
    """Words of what a block raises: class name and message text (``EmptyResponseError("no
    content")`` -> ``{"empty", "response", "error", "no", "content"}``)."""
    words: set[str] = set()
    for statement in statements(block):
        if isinstance(statement, cst.Raise) and statement.exc is not None:
            exc = statement.exc
            if isinstance(exc, cst.Call):
                words |= tokens(leaf_name(exc.func))
                for arg in exc.args:
                    text = string_value(arg.value)
                    if text is None and isinstance(arg.value, cst.FormattedString):
                        text = "".join(
                            part.value
                            for part in arg.value.parts
                            if isinstance(part, cst.FormattedStringText)
                        )
                    words |= tokens(text)
            else:
                words |= tokens(leaf_name(exc))
    return words


def only_reports(block: cst.BaseSuite) -> bool:
    """A block that only reports (``logger.warning(...)``, ``warnings.warn(...)``, ``print``,
    an ``import logging`` to do so): it changes no outcome, so the check guarding it decides
    nothing. ``if reason == "length": log.warning("truncated")`` lets the cut reply through
    whether the check fires or not."""
    body = statements(block)
    if not body:
        return False
    for statement in body:
        if isinstance(statement, (cst.Import, cst.ImportFrom, cst.Pass)):
            continue
        value = statement.value if isinstance(statement, cst.Expr) else None
        if not isinstance(value, cst.Call):
            return False
        if not (_is_logging(value) or _logs(value) or leaf_name(value.func) in ("print", "warn")):
            return False
    return True


_LOG_LEVELS = frozenset("debug info warning warn error exception critical log".split())


def _logs(call: cst.Call) -> bool:
    """``logging.getLogger(name).warning(...)``: a level method on a logger obtained in place."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value in _LOG_LEVELS):
        return False
    receiver = func.value
    while isinstance(receiver, (cst.Call, cst.Attribute)):
        inner = receiver.func if isinstance(receiver, cst.Call) else receiver.value
        if isinstance(receiver, cst.Attribute) and tokens(receiver.attr.value) & {"logger", "log"}:
            return True
        receiver = inner
    return isinstance(receiver, cst.Name) and bool(tokens(receiver.value) & {"log", "logger", "logging"})
