"""Which code is agent code: test modules (``test_*.py``, ``conftest.py``) and pytest test
functions build expected results and assert on them; no role is looked for there."""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from mutagent.mutation.context import SourceContext


def is_test_file(ctx: SourceContext) -> bool:
    """A pytest module (``test_*.py``, ``*_test.py``, ``conftest.py``): its helpers build expected
    tool results and its asserts check them; none of that is agent code."""
    name = ctx.path.replace("\\", "/").rsplit("/", 1)[-1]
    return name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"


def in_test(ctx: SourceContext, node: cst.CSTNode) -> bool:
    """Inside a test module or a pytest test function."""
    return is_test_file(ctx) or any(
        isinstance(a, cst.FunctionDef) and a.name.value.startswith("test") for a in ctx.ancestors(node)
    )


def agent_code(ctx: SourceContext, matcher: m.BaseMatcherNode) -> list[cst.CSTNode]:
    """``ctx.findall(matcher)`` without what lies in tests (see :func:`in_test`)."""
    return [node for node in ctx.findall(matcher) if not in_test(ctx, node)]
