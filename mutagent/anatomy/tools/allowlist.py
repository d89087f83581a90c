"""The allow-list role's names: the requested tool's name (``block.name``,
``tc.function.name``), collections of tools by their head noun, and collections named as an
allow- or deny-list (``ALLOWED_TOOLS``, ``enabled_tools``) rather than a plain registry."""

from __future__ import annotations

import libcst as cst

from mutagent.anatomy.syntax import final_name, final_name_or_key, is_constant
from mutagent.anatomy.vocabulary import (  # the stream/tool vocabulary lives there
    ALLOW_WORDS,
    TOOLISH,
    ordered_words,
)
from mutagent.anatomy.vocabulary import (
    COLLECTION_HEADS as _COLLECTION_HEADS,
)
from mutagent.anatomy.vocabulary import (
    MAPPING_HEADS as _MAPPING_HEADS,
)
from mutagent.anatomy.vocabulary import (
    TOOL_NAME_WORDS as _TOOL_NAME_WORDS,
)
from mutagent.anatomy.vocabulary import (
    UNWRAP_CALLS as _UNWRAP_CALLS,
)
from mutagent.anatomy.vocabulary import (
    tool_words as words,
)
from mutagent.mutation.context import SourceContext


def names_tool(expr: cst.BaseExpression) -> bool:
    """The requested tool's name (or the tool): ``name``, ``block.name``, ``tc.function.name``,
    ``call["name"]``, ``tool_name``, ``fn_name`` -- not ``user.name``'s owner, ``__name__``,
    ``managed_agent_class_name`` or a string literal."""
    leaf = final_name_or_key(expr)
    if not leaf or leaf.startswith("__") or is_constant(expr):
        return False
    found = words(leaf)
    return bool(found) and found <= _TOOL_NAME_WORDS


def is_tool_collection(ctx: SourceContext, expr: cst.BaseExpression) -> bool:
    """A collection of tools by its head noun (see ``_COLLECTION_HEADS``), looking through
    ``.keys()``, ``set(...)`` and comprehensions: ``{t.name for t in self.tools}`` counts."""
    parts = _collection_words(expr)
    return bool(parts) and (
        parts[-1] in _COLLECTION_HEADS
        or (parts[-1] in _MAPPING_HEADS and bool(set(parts) & (TOOLISH | ALLOW_WORDS)))
    )


def is_allow_list(ctx: SourceContext, expr: cst.BaseExpression) -> bool:
    """A tool collection named as an allow- or deny-list (see ``ALLOW_WORDS``): ``self.allow``,
    ``ALLOWED_TOOLS``, ``enabled_tools``, ``allow_list`` -- not a plain registry (``self.tools``)."""
    parts = _collection_words(expr)
    return is_tool_collection(ctx, expr) and bool(set(parts or ()) & ALLOW_WORDS)


def _collection_words(expr: cst.BaseExpression) -> list[str] | None:
    """The words of a collection's own name, looking through ``.keys()``, ``set(...)`` and
    comprehensions."""
    for _ in range(4):
        if isinstance(expr, cst.Call) and expr.args and final_name(expr) in _UNWRAP_CALLS:
            expr = expr.args[0].value if isinstance(expr.func, cst.Name) else expr
        if (
            isinstance(expr, cst.Call)
            and isinstance(expr.func, cst.Attribute)
            and final_name(expr) in _UNWRAP_CALLS
        ):
            expr = expr.func.value
        elif isinstance(expr, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
            expr = expr.for_in.iter
        else:
            break
    leaf = final_name_or_key(expr)
    return ordered_words(leaf) if leaf else None
