"""Stop and finish reasons: the fields (``stop_reason``, ``finish_reason``), a bare ``finish``
that the file shows to be one, and their values (``"length"``, ``"tool_calls"``). Read by the
stop-check and length-stop roles."""

from __future__ import annotations

import libcst as cst

from mutagent.anatomy.dataflow import bindings, same_place
from mutagent.anatomy.syntax import leaf_name, single_comparison, string_value
from mutagent.anatomy.vocabulary import (
    BARE_REASON_NAMES as _BARE_REASON_NAMES,
)
from mutagent.anatomy.vocabulary import (
    REASON_SUBJECTS as _REASON_SUBJECTS,
)
from mutagent.anatomy.vocabulary import (
    STOP_REASON_VALUES,
    tokens,
    word_list,
)
from mutagent.anatomy.vocabulary import (
    cached_analysis as _cached,
)
from mutagent.mutation.context import SourceContext


def is_reason_field(expr: cst.CSTNode) -> bool:
    """``stop_reason``/``finish_reason``/``finishReason``/``end_reason``/``done_reason`` (or a
    ``..._cause``) however it is read. A bare ``finish``/``stop`` is not one by name alone: see
    :func:`is_bare_reason_name` and :func:`is_stop_reason`."""
    words = tokens(leaf_name(expr))
    return bool(words & {"reason", "cause"}) and bool(words & _REASON_SUBJECTS)


def is_bare_reason_name(expr: cst.CSTNode) -> bool:
    """``finish``/``stop``/``reply.finish``/``data["stop"]``: a name that is a stop reason when it
    is compared with a stop-reason value (``reply.finish == "length"``), never by itself."""
    if not isinstance(expr, (cst.Name, cst.Attribute, cst.Subscript)):
        return False
    words = word_list(leaf_name(expr))
    return len(words) == 1 and words[0] in _BARE_REASON_NAMES


def stop_reason_value(node: cst.CSTNode) -> bool:
    """``"length"``, ``"tool_calls"``, ``("end_turn", "tool_use")``: stop-reason values."""
    value = string_value(node)
    if value is not None:
        return value in STOP_REASON_VALUES
    if isinstance(node, (cst.Tuple, cst.List, cst.Set)) and node.elements:
        return all(string_value(e.value) in STOP_REASON_VALUES for e in node.elements)
    return False


def is_stop_reason(ctx: SourceContext, expr: cst.CSTNode) -> bool:
    """A stop reason: a reason field by name, or a bare ``finish``/``stop`` that the file itself
    shows to be one, by comparing the same variable with a stop-reason value (``reply.finish !=
    "tool_calls"``) or assigning it a reason field (``reply.finish = choice.finish_reason``). A
    ``self.stop`` flag, a ``stop_event`` or a ``finish_time`` never is."""
    if is_reason_field(expr):
        return True
    if not is_bare_reason_name(expr):
        return False
    evidence = _cached(ctx, "bare-reasons", lambda: _bare_reasons(ctx))
    return any(same_place(ctx, expr, known) for known in evidence)  # type: ignore[attr-defined]


def _bare_reasons(ctx: SourceContext) -> list[cst.BaseExpression]:
    found: list[cst.BaseExpression] = []
    for comparison in ctx.nodes(cst.Comparison):
        parts = single_comparison(comparison)
        if parts is None or not isinstance(parts[1], (cst.Equal, cst.NotEqual, cst.In, cst.NotIn)):
            continue
        for field, value in ((parts[0], parts[2]), (parts[2], parts[0])):
            if is_bare_reason_name(field) and stop_reason_value(value):
                found.append(field)
    for binding in bindings(ctx):
        if is_bare_reason_name(binding.target) and is_reason_field(binding.value):
            found.append(binding.target)
    return found
