"""How a block ends: it raises or returns (``control_flow_exits``), fails loudly (``fails``),
only leaves quietly (``exits_early``), and what it raises (``raised_names``). Shared by the
recognisers of bounds, checks and guards, whose meaning is what their branch does."""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.syntax import SCOPES, ancestors_within
from mutagent.mutation.context import SourceContext


def control_flow_exits(ctx: SourceContext, block: cst.CSTNode) -> bool:
    """``block`` raises, returns, breaks or continues (its own statements, not a nested def's):
    a branch that ends or repeats an attempt."""
    for node in ctx.descendants(block, m.Raise() | m.Return() | m.Break() | m.Continue()):
        if not any(isinstance(a, SCOPES) for a in ancestors_within(ctx, node, block)):
            return True
    return False
