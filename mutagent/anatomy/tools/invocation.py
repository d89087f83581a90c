"""Tool invocation (the tool-dispatch role): ``TOOLS[name](**args)``, ``handler(args)``,
``run_tool(...)``, ``session.call_tool(...)``, ``tool.invoke(...)`` -- not a lookup
(``get_tool``), an answer (``reject_tool_call``) or a builtin (``callable(handler)``)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import libcst as cst

from mutagent.anatomy.syntax import final_name, walk
from mutagent.anatomy.vocabulary import (
    CALLER_NOUNS as _CALLER_NOUNS,
)
from mutagent.anatomy.vocabulary import (
    INVOKE_VERBS as _INVOKE_VERBS,
)
from mutagent.anatomy.vocabulary import (
    NOT_INVOKING as _NOT_INVOKING,
)
from mutagent.anatomy.vocabulary import (  # the stream/tool vocabulary lives there
    REGISTRY_WORDS,
    TOOL_NOUNS,
    node_words,
)
from mutagent.anatomy.vocabulary import (
    TOOL_CAMEL as _CAMEL,
)
from mutagent.mutation.context import SourceContext

#: Verbs that carry out an action through a tool collection: ``self.tools.act(action=...)``,
#: ``controller.registry.perform(...)``. Only a bare method of a tool collection counts
#: (``actor.act()``, ``self.act(...)`` run no tool).
_ACT_VERBS = frozenset({"act", "aact", "perform"})


def _not_invoking(verb: str) -> bool:
    """A verb that looks a tool up or answers it (``get``), or its async twin (``aget``, as
    ``ainvoke`` is ``invoke``'s)."""
    return verb in _NOT_INVOKING or (verb[:1] == "a" and verb[1:] in _NOT_INVOKING)


def is_tool_invocation(ctx: SourceContext, call: cst.Call) -> bool:
    """``TOOLS[name](**args)``, ``handler(args)``, ``spec.fn(...)``, ``run_tool(...)``,
    ``session.call_tool(...)``, ``tool.invoke(...)``, ``self.registry.execute(...)``."""
    func = call.func
    if isinstance(func, cst.Subscript):
        return bool(node_words(ctx, func.value) & (REGISTRY_WORDS | TOOL_NOUNS))
    name = final_name(call)
    if not name or name.lstrip("_")[:1].isupper():
        return False
    if isinstance(func, cst.Name) and any(q.startswith("builtins.") for q in ctx.qualified_names(call)):
        return False  # ``callable(handler)`` asks, it does not call
    parts = [p for p in re.split(r"[^a-z0-9]+", _CAMEL.sub("_", name).lower()) if p]
    if not parts or _not_invoking(parts[0]) or parts[-1] in _NOT_INVOKING:
        return False
    if parts[-1] in TOOL_NOUNS:
        return True
    if parts[-1] in _INVOKE_VERBS or parts[0] in _INVOKE_VERBS:
        return bool((set(parts) | node_words(ctx, func)) & _CALLER_NOUNS)
    if parts == [parts[0]] and parts[0] in _ACT_VERBS and isinstance(func, cst.Attribute):
        return bool(node_words(ctx, func.value) & _CALLER_NOUNS)
    return False


def invokes_tool(ctx: SourceContext, nodes: cst.CSTNode | Sequence[cst.CSTNode]) -> bool:
    """Whether a tool is invoked anywhere in ``nodes`` (outside nested functions)."""
    tops = [nodes] if isinstance(nodes, cst.CSTNode) else nodes
    return any(isinstance(n, cst.Call) and is_tool_invocation(ctx, n) for top in tops for n in walk(top))
