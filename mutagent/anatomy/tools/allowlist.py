"""The allow-list role's names: the requested tool's name (``block.name``,
``tc.function.name``), collections of tools by their head noun, and collections named as an
allow- or deny-list (``ALLOWED_TOOLS``, ``enabled_tools``) rather than a plain registry."""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.callgraph import callee
from mutagent.anatomy.dataflow import local_values
from mutagent.anatomy.syntax import final_name, final_name_or_key, is_constant, walk
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
    ``.keys()``, ``set(...)`` and comprehensions: ``{t.name for t in self.tools}`` counts. In
    ``X_by_Y`` the head is ``X``: ``toolsets_by_family`` holds toolsets, ``users_by_name`` users."""
    parts = _collection_words(expr)
    if parts and "by" in parts[1:]:
        # ``toolsets_by_family``, ``handlers_by_name``: a mapping of what comes before "by"
        parts = parts[: parts.index("by", 1)]
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


def is_tool_lookup(ctx: SourceContext, expr: cst.BaseExpression, depth: int = 0) -> bool:
    """``self._tools.get(call.name)``, ``REGISTRY.get(name, None)``, ``getattr(tools, name, None)``
    (also inside a walrus), or a call of a helper of this file that returns such a lookup
    (``toolset = self._toolset_for(tool_use)`` where ``_toolset_for`` returns
    ``self._toolsets_by_family.get(tool_use.toolset_name)``): the helper's every returned value is
    the lookup, so its ``None`` is the unknown tool. A helper that returns anything else as well
    (``return self.tools.get(name) or default_tool``) is not a lookup, nor is ``config.get(name)``."""
    return lookup_collection(ctx, expr, depth) is not None


def lookup_collection(
    ctx: SourceContext, expr: cst.BaseExpression, depth: int = 0
) -> cst.BaseExpression | None:
    """The tool collection a tool lookup (see :func:`is_tool_lookup`) reads, or None when ``expr``
    is no tool lookup."""
    if isinstance(expr, (cst.NamedExpr, cst.Await)):
        expr = expr.value if isinstance(expr, cst.NamedExpr) else expr.expression
    if not isinstance(expr, cst.Call):
        return None
    if expr.args and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "get":
        collection, name = expr.func.value, expr.args[0].value
    elif expr.args and m.matches(expr.func, m.Name("getattr")) and len(expr.args) == 3:
        collection, name = expr.args[0].value, expr.args[1].value
    else:
        return _helper_collection(ctx, expr, depth)
    return collection if is_tool_collection(ctx, collection) and names_tool(name) else None


def _helper_collection(ctx: SourceContext, call: cst.Call, depth: int) -> cst.BaseExpression | None:
    """The collection a helper of this file looks the tool up in, when every value it returns is
    that lookup (directly or through a local) or ``None``."""
    function = callee(ctx, call)
    if function is None or depth > 1:
        return None
    returned = [
        node.value
        for node in walk(function.body)
        if isinstance(node, cst.Return)
        and node.value is not None
        and not m.matches(node.value, m.Name("None"))
    ]
    found: cst.BaseExpression | None = None
    for value in returned:
        candidates = local_values(ctx, value) if isinstance(value, cst.Name) else [value]
        collections = [lookup_collection(ctx, v, depth + 1) for v in candidates]
        if not collections or any(c is None for c in collections):
            return None
        found = collections[0]
    return found
