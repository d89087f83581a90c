"""Tool-handling code: a function or class named for it (``run_tool``, ``Executor``), taking a
tool call, or invoking a tool / building a tool result itself. The tool roles are only looked
for there."""

from __future__ import annotations

import libcst as cst

from mutagent.anatomy.tools.invocation import invokes_tool
from mutagent.anatomy.tools.results import tool_results
from mutagent.anatomy.vocabulary import (  # the stream/tool vocabulary lives there
    TOOL_CONTEXT_WORDS,
    node_words,
)
from mutagent.anatomy.vocabulary import (
    tool_words as words,
)
from mutagent.mutation.context import SourceContext


def in_tool_context(ctx: SourceContext, node: cst.CSTNode) -> bool:
    """Whether ``node`` sits in code that handles tool calls: a function or class named for it
    (``run_tool``, ``Executor``, ``dispatch``), taking a tool call (``tool_call``, ``spec``), or
    invoking a tool / building a tool result itself."""
    return any(_handles_tools(ctx, owner) for owner in ctx.ancestors(node) if isinstance(owner, _DEFS))


_DEFS = (cst.FunctionDef, cst.ClassDef)


def _handles_tools(ctx: SourceContext, owner: cst.FunctionDef | cst.ClassDef) -> bool:
    def compute() -> bool:
        if not owner.name.value.startswith("__") and words(owner.name.value) & TOOL_CONTEXT_WORDS:
            return True
        if isinstance(owner, cst.ClassDef):
            return False
        if node_words(ctx, owner.params) & TOOL_CONTEXT_WORDS or invokes_tool(ctx, owner.body):
            return True
        return any(ctx.enclosing_function(result.node) is owner for result in tool_results(ctx))

    return ctx.cached(("tools", "handles_tools", id(owner)), compute)
