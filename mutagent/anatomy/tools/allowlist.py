"""The allow-list role's names: the requested tool's name (``block.name``,
``tc.function.name``), collections of tools by their head noun, and collections named as an
allow- or deny-list (``ALLOWED_TOOLS``, ``enabled_tools``) rather than a plain registry."""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.callgraph import callee
from mutagent.anatomy.dataflow import local_values
from mutagent.anatomy.syntax import final_name, final_name_or_key, is_constant, string_value, walk
from mutagent.anatomy.vocabulary import (  # the stream/tool vocabulary lives there
    ALLOW_WORDS,
    TOOLISH,
    node_words,
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
    if configured_list(ctx, expr):
        return True
    parts = _collection_words(expr)
    if parts and "by" in parts[1:]:
        # ``toolsets_by_family``, ``handlers_by_name``: a mapping of what comes before "by"
        parts = parts[: parts.index("by", 1)]
    if _qualified_tools(parts):
        return True
    return bool(parts) and (
        parts[-1] in _COLLECTION_HEADS
        or (parts[-1] in _MAPPING_HEADS and bool(set(parts) & (TOOLISH | ALLOW_WORDS)))
    )


def is_allow_list(ctx: SourceContext, expr: cst.BaseExpression) -> bool:
    """A tool collection named as an allow- or deny-list (see ``ALLOW_WORDS``): ``self.allow``,
    ``ALLOWED_TOOLS``, ``enabled_tools``, ``allow_list`` -- not a plain registry (``self.tools``)."""
    if configured_list(ctx, expr):
        return True
    parts = _collection_words(expr)
    return is_tool_collection(ctx, expr) and bool(set(parts or ()) & ALLOW_WORDS or _qualified_tools(parts))


#: Keys of a tool configuration that list the tools let in or kept out.
_LIST_KEYS = frozenset("include exclude allow deny allowed denied allowlist denylist blocklist".split())


def configured_list(ctx: SourceContext, expr: cst.BaseExpression) -> bool:
    """A local bound (only) to a list read from a tool configuration under an include/exclude
    key: ``include = set(tool_configuration.get("include", [])) if tool_configuration else set()``.
    ``include = set(options.get("include", []))`` (no tool in the configuration's name) and
    ``include = tool_configuration.get("include_schema")`` are not."""
    if not isinstance(expr, cst.Name):
        return False
    values = [v for v in local_values(ctx, expr) if v is not expr]
    reads = [r for v in values for r in _list_reads(ctx, v)]
    return bool(reads) and all(reads)


def _list_reads(ctx: SourceContext, value: cst.BaseExpression) -> list[bool]:
    """For each non-empty source of ``value`` (through ``x if c else set()``, ``set(...)``,
    ``list(...)``), whether it reads an include/exclude key of a tool configuration."""
    if isinstance(value, cst.IfExp):
        return _list_reads(ctx, value.body) + _list_reads(ctx, value.orelse)
    if (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Name)
        and value.func.value in ("set", "list", "frozenset")
    ):
        return _list_reads(ctx, value.args[0].value) if value.args else []
    if isinstance(value, (cst.List, cst.Set, cst.Tuple)) and not value.elements:
        return []  # the empty default
    if isinstance(value, (cst.Call, cst.Subscript)):
        key = final_name_or_key(value) if isinstance(value, cst.Subscript) else None
        owner = value.value if isinstance(value, cst.Subscript) else None
        if isinstance(value, cst.Call) and final_name(value) == "get" and value.args:
            key = string_value(value.args[0].value)
            owner = value.func.value if isinstance(value.func, cst.Attribute) else None
        return [bool(key in _LIST_KEYS and owner is not None and node_words(ctx, owner) & TOOLISH)]
    return [False]


#: Participles that restrict a collection of tools to those this code may run: ``llm_tools_handled``,
#: ``llm_tools_usable``, ``tools_enabled``. ``tools_used``/``tools_called`` (a history of what ran)
#: and ``tools_failed`` restrict nothing.
_RESTRICTING = frozenset("handled usable allowed enabled permitted offered exposed included".split())
_TOOL_PLURALS = frozenset("tools functions handlers actions toolsets".split())
_LIST_VERBS = frozenset("include exclude allowed enabled disabled".split())


def _qualified_tools(parts: list[str] | None) -> bool:
    """``llm_tools_handled``: a plural tool noun followed only by restricting participles -- an
    allow-list named after its head noun rather than with an allow word up front; or
    ``include_actions``: an include/exclude verb before it. ``include_history`` (no tools) and
    ``include_tools_schema`` (the head is a schema) are not."""
    if not parts:
        return False
    if len(parts) == 2 and parts[0] in _LIST_VERBS and parts[1] in _TOOL_PLURALS:
        return True  # ``include_actions``, ``exclude_tools``: the list a caller restricts tools to
    heads = [i for i, part in enumerate(parts) if part in _TOOL_PLURALS]
    if not heads or heads[-1] == len(parts) - 1:
        return False
    return set(parts[heads[-1] + 1 :]) <= _RESTRICTING


def read_off_tool(ctx: SourceContext, expr: cst.BaseExpression) -> bool:
    """A value read off a tool object: ``tool.default_value("request")``, ``t.request`` where ``t``
    iterates a tool collection (``for t in tools``) -- what identifies the tool, compared with an
    allow-list. ``user.default_value("request")`` or ``t.name`` over ``users`` is not."""
    root = expr
    while isinstance(root, (cst.Attribute, cst.Call, cst.Subscript)):
        root = root.func if isinstance(root, cst.Call) else root.value
    if root is expr or not isinstance(root, cst.Name):
        return False
    if words(root.value) == {"tool"}:
        return True
    for ancestor in ctx.ancestors(expr):
        fors = getattr(ancestor, "for_in", None)
        while isinstance(fors, cst.CompFor):
            if m.matches(fors.target, m.Name(root.value)) and is_tool_collection(ctx, fors.iter):
                return True
            fors = fors.inner_for_in
        if isinstance(ancestor, cst.For) and m.matches(ancestor.target, m.Name(root.value)):
            return is_tool_collection(ctx, ancestor.iter)
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
            break
    return False


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
