"""The fast scope analysis (issue 24) gives exactly libcst's scope metadata."""

from __future__ import annotations

import textwrap

import libcst as cst
from libcst.metadata import ExpressionContextProvider, MetadataWrapper, ScopeProvider

from mutagent.mutation.context import SourceContext
from mutagent.mutation.tree import children, resolve_scopes

# Every construct scope analysis treats specially: imports with aliases, class bases and
# keywords (field hooks), decorators, defaults and annotations evaluated outside the function,
# string annotations (parsed into new nodes), typing.cast / TypeVar, comprehensions, lambdas,
# global / nonlocal, del, walrus, match, type aliases.
SOURCE = textwrap.dedent(
    """
    from __future__ import annotations
    import json as j, os.path
    from typing import TYPE_CHECKING, Literal, TypeVar, cast
    from .errors import RateLimitError as RLE

    T = TypeVar("T", bound="Client")
    counter = 0


    def deco(f):
        return f


    class Base:
        pass


    class Client(Base, metaclass=type):
        kind: Literal["a", "b"] = "a"
        other: "Base | None" = None

        @deco
        def call(self, payload: "dict[str, Client]" = j.loads("{}"), *args, **kwargs) -> "T":
            global counter
            counter += 1
            data = cast("Client", payload)
            names = [n for n in args if (m := n)]
            total = sum(x * y for x in args for y in kwargs)
            key = lambda item, default=counter: item.get("k", default)

            def inner():
                nonlocal data
                data = RLE(os.path.join("a", "b"))
                return data

            try:
                del names
            except RLE as exc:
                raise j.JSONDecodeError("x", "", 0) from exc
            match payload:
                case {"k": value}:
                    return value
            return inner(), total, key, m
    """
)


def _qualified(scopes, node: cst.CSTNode) -> set[str]:
    scope = scopes[node]
    return {q.name for q in scope.get_qualified_names_for(node)} if scope is not None else set()


def test_resolve_scopes_is_libcsts_scope_provider() -> None:
    module = cst.parse_module(SOURCE)
    reference = MetadataWrapper(module, unsafe_skip_copy=True)
    expected = reference.resolve(ScopeProvider)
    fast = MetadataWrapper(module, unsafe_skip_copy=True)
    got = resolve_scopes(fast)
    ours = [node for node in expected if node in got]
    # string annotations are parsed into fresh nodes on every run: compare those by text
    assert [n for n in expected if n not in got] != []
    assert [module.code_for_node(n) for n in expected if n not in got] == [
        module.code_for_node(n) for n in got if n not in expected
    ]
    assert ours == [node for node in got if node in expected]
    assert len(ours) > 200
    for node in ours:
        assert type(expected[node]) is type(got[node])
        if isinstance(node, (cst.Name, cst.Attribute, cst.Call)):
            assert _qualified(expected, node) == _qualified(got, node), module.code_for_node(node)
    assert dict(reference.resolve(ExpressionContextProvider)) == dict(fast.resolve(ExpressionContextProvider))
    names = [n for n in ours if isinstance(n, cst.Name) and n.value == "RLE"]
    assert names and all(_qualified(got, n) == {".errors.RateLimitError"} for n in names[1:])


def test_resolve_scopes_is_cached_in_the_wrapper_and_restores_visit() -> None:
    original_visit = cst.CSTNode.visit
    wrapper = MetadataWrapper(cst.parse_module(SOURCE), unsafe_skip_copy=True)
    scopes = resolve_scopes(wrapper)
    assert cst.CSTNode.visit is original_visit
    assert wrapper.resolve(ScopeProvider) is scopes
    assert resolve_scopes(wrapper) is scopes


def test_children_are_libcsts_children_in_order() -> None:
    module = cst.parse_module(SOURCE)
    stack: list[cst.CSTNode] = [module]
    seen = 0
    while stack:
        node = stack.pop()
        assert list(children(node)) == list(node.children)
        stack.extend(node.children)
        seen += 1
    assert seen > 500


def test_source_context_qualified_names_use_the_fast_scopes() -> None:
    ctx = SourceContext(SOURCE, "client.py")
    calls = [c for c in ctx.nodes(cst.Call) if ctx.code(c.func) == "j.loads"]
    assert calls and ctx.qualified_names(calls[0]) == {"json.loads"}
    assert ctx.wrapper.resolve(ScopeProvider) is ctx._scopes


def test_document_order_is_the_order_of_start_positions() -> None:
    loops_text = "\nfor a in b:\n    while a:\n        for c in a: pass\nwhile 1: break\n"
    ctx = SourceContext(SOURCE + loops_text, "m.py")
    loops = ctx.nodes(cst.While) + ctx.nodes(cst.For)
    by_position = sorted(loops, key=lambda n: (ctx.position(n).start.line, ctx.position(n).start.column))
    assert len(loops) == 4
    assert ctx.in_document_order(loops) == by_position
