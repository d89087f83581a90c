"""Collecting the roles of one file.

The recognisers are the ones the operators use (the anatomy's ``retry/``, ``streams/`` and
``tools/`` modules and :mod:`mutagent.anatomy.turns`), so ``mutagent map`` shows what the
operators see.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.agent_code import in_test
from mutagent.anatomy.callgraph import callee
from mutagent.anatomy.exits import control_flow_exits
from mutagent.anatomy.model_calls import direct_model_call
from mutagent.anatomy.retry.classification import is_status_comparison
from mutagent.anatomy.retry.loops import retry_loops
from mutagent.anatomy.retry.waits import is_sleep_like
from mutagent.anatomy.roles import ROLE_KINDS, Role
from mutagent.anatomy.streams.release import is_stream_value, streaming_producer
from mutagent.anatomy.streams.stop_check import stop_branches
from mutagent.anatomy.syntax import identifiers_in, keyword, leaf_name, loop_variables, own
from mutagent.anatomy.tools.context import in_tool_context
from mutagent.anatomy.tools.invocation import is_tool_invocation
from mutagent.anatomy.tools.results import tool_results
from mutagent.anatomy.turns import loose_turn_bounds, turn_loops
from mutagent.anatomy.vocabulary import (
    GUARD_KINDS,
    LIMIT_WORDS,
    RETRY_AFTER_HEADERS,
    SSE_READS,
    identifier,
    is_count_name,
    words,
)
from mutagent.mutation.context import SourceContext


@dataclass(frozen=True)
class Anatomy:
    """Every role found in one file, in document order."""

    path: str
    roles: tuple[Role, ...]

    def of_kind(self, kind: str) -> list[Role]:
        return [role for role in self.roles if role.kind == kind]

    def missing(self) -> list[str]:
        """The sentences for the role kinds this file has none of (``no turn bound found``)."""
        present = {role.kind for role in self.roles}
        return [sentence for kind, sentence in ROLE_KINDS.items() if kind not in present]


def anatomy_of(ctx: SourceContext) -> Anatomy:
    """The anatomy of the file behind ``ctx`` (computed once per file)."""
    return ctx.cached(("anatomy", "all"), lambda: _build(ctx))


def _role(
    ctx: SourceContext, kind: str, node: cst.CSTNode, evidence: tuple[str, ...], **facts: str | None
) -> Role:
    position = ctx.position(node).start
    scope = ctx.scope_of(node)
    if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
        scope = scope[:-1]
    return Role(
        kind,
        node,
        ".".join(scope),
        position.line,
        position.column,
        tuple(e for e in evidence if e),
        tuple((k, v) for k, v in facts.items() if v is not None),
    )


def _build(ctx: SourceContext) -> Anatomy:

    roles: list[Role] = []
    seen: set[tuple[str, int]] = set()
    for finder in _FINDERS:
        for role in finder(ctx):
            key = (role.kind, id(role.node))
            if key not in seen and not in_test(ctx, role.node):
                seen.add(key)
                roles.append(role)
    roles.sort(key=lambda r: (r.line, r.column, list(ROLE_KINDS).index(r.kind)))
    return Anatomy(ctx.path, tuple(roles))


def _short(ctx: SourceContext, node: cst.CSTNode, limit: int = 60) -> str:
    text = " ".join(ctx.code(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


# -- model calls and streams ------------------------------------------------------------------


def _model_calls(ctx: SourceContext) -> Iterator[Role]:
    for call in ctx.findall(m.Call()):
        evidence = direct_model_call(ctx, call)
        if evidence:
            flag = keyword(call, "stream")
            streams = "yes" if (flag is not None or ctx.code(call.func).endswith(".stream")) else None
            yield _role(ctx, "model-call", call, (evidence,), streaming=streams)


def _stream_consumers(ctx: SourceContext) -> Iterator[Role]:

    for loop in ctx.findall(m.For()):
        iterable = loop.iter
        if isinstance(iterable, cst.Await):
            iterable = iterable.expression
        if streaming_producer(ctx, iterable):
            evidence = f"iterates a streamed response: {_short(ctx, iterable)}"
        elif isinstance(iterable, cst.Call) and leaf_name(iterable.func) in SSE_READS:
            evidence = f"reads the body line by line: {_short(ctx, iterable)}"
        elif isinstance(iterable, (cst.Name, cst.Attribute)) and is_stream_value(ctx, iterable):
            evidence = f"iterates a stream: {_short(ctx, iterable)}"
        else:
            continue
        asynchronous = "yes" if loop.asynchronous is not None else None
        yield _role(ctx, "stream-consumer", loop, (evidence,), asynchronous=asynchronous)


def _end_of_stream_checks(ctx: SourceContext) -> Iterator[Role]:

    for body in stop_branches(ctx):
        owner = ctx.parent(body)
        test = owner.test if isinstance(owner, cst.If) else getattr(owner, "pattern", owner)
        yield _role(
            ctx, "end-of-stream-check", owner, (f"tests the end-of-turn marker: {_short(ctx, test)}",)
        )


# -- retries ----------------------------------------------------------------------------------


def _retry_roles(ctx: SourceContext) -> Iterator[Role]:

    for loop in retry_loops(ctx):
        header = loop.iter if isinstance(loop, cst.For) else loop.test
        counters = sorted(loop_variables(loop)) + [
            ctx.code(step.target).strip()
            for step in own(ctx, loop, m.AugAssign())
            if is_count_name(identifier(step.target))
        ]
        statement = "for" if isinstance(loop, cst.For) else "while"
        evidence = [f"`{statement} {_short(ctx, header, 40)}` handles failures"]
        if counters:
            evidence.append(f"attempt counter {', '.join(counters)}")
        yield _role(ctx, "retry-loop", loop, tuple(evidence), counter=", ".join(counters) or None)
        for comparison in own(ctx, loop, m.Comparison()) + list(
            ctx.descendants(header, m.Comparison()) if isinstance(loop, cst.While) else []
        ):
            if is_status_comparison(ctx, comparison):
                yield _role(
                    ctx, "retry-classification", comparison, (f"status check {_short(ctx, comparison)}",)
                )
            elif any(is_count_name(n) for n in identifiers_in(ctx, comparison)):
                yield _role(
                    ctx, "retry-bound", comparison, (f"compares attempts: {_short(ctx, comparison)}",)
                )
        if isinstance(loop, cst.For) and isinstance(loop.iter, cst.Call) and identifier(loop.iter) == "range":
            yield _role(ctx, "retry-bound", loop.iter, (f"the loop makes {_short(ctx, loop.iter)} attempts",))
        for call in own(ctx, loop, m.Call()):
            target = callee(ctx, call)
            if target is not None:
                yield from _helper_bounds(ctx, target)
            if is_sleep_like(ctx, call):
                yield _role(
                    ctx, "retry-delay", call, (f"waits before the next attempt: {_short(ctx, call)}",)
                )
        for handler in ctx.descendants(loop.body, m.ExceptHandler()):
            if handler.type is not None:
                yield _role(ctx, "retry-classification", handler, (f"catches {_short(ctx, handler.type)}",))


def _helper_bounds(ctx: SourceContext, helper: cst.FunctionDef) -> Iterator[Role]:
    """Give-up checks of a helper the retry loop calls (``self._back_off(attempt, ...)``)."""

    def compute() -> list[Role]:
        found = []
        for branch in ctx.descendants(helper.body, m.If()):
            comparisons = ctx.descendants(branch.test, m.Comparison())
            counted = [c for c in comparisons if any(is_count_name(n) for n in identifiers_in(ctx, c))]
            if counted and control_flow_exits(ctx, branch.body):
                for comparison in counted:
                    evidence = (f"{helper.name.value}() gives up on {_short(ctx, comparison)}",)
                    found.append(_role(ctx, "retry-bound", comparison, evidence))
        return found

    return iter(ctx.cached(("anatomy", "helper-bounds", id(helper)), compute))


def _retry_after_sources(ctx: SourceContext) -> Iterator[Role]:
    for string in ctx.findall(m.SimpleString()):
        value = string.evaluated_value
        if isinstance(value, str) and value.lower() in RETRY_AFTER_HEADERS:
            parent = ctx.parent(string)
            node = ctx.parent(parent) if isinstance(parent, (cst.Arg, cst.Index)) else parent
            yield _role(ctx, "retry-after-source", node, (f"reads header {value!r}: {_short(ctx, node)}",))
    for attribute in ctx.findall(m.Attribute()):
        parts = set(words(attribute.attr.value))
        if ({"retry", "after"} <= parts or {"wait", "hint"} <= parts) and not parts & LIMIT_WORDS:
            if not isinstance(ctx.parent(attribute), cst.AssignTarget):
                yield _role(
                    ctx, "retry-after-source", attribute, (f"reads a server wait: {_short(ctx, attribute)}",)
                )


# -- turns --------------------------------------------------------------------------------------


def _turn_roles(ctx: SourceContext) -> Iterator[Role]:
    for bound in loose_turn_bounds(ctx):
        yield _role(
            ctx,
            "turn-bound",
            bound.node,
            bound.evidence,
            sense=bound.sense,
            counter=bound.counter,
            limit=bound.limit,
            raises=bound.raises,
        )
    for turn_loop in turn_loops(ctx):
        yield _role(
            ctx, "turn-loop", turn_loop.loop, turn_loop.evidence, bounded="yes" if turn_loop.bounds else "no"
        )
        for bound in turn_loop.bounds:
            yield _role(
                ctx,
                "turn-bound",
                bound.node,
                bound.evidence,
                sense=bound.sense,
                counter=bound.counter,
                limit=bound.limit,
                raises=bound.raises,
            )


# -- tools --------------------------------------------------------------------------------------


def _tool_roles(ctx: SourceContext) -> Iterator[Role]:

    for call in ctx.findall(m.Call()):
        if is_tool_invocation(ctx, call):
            yield _role(ctx, "tool-dispatch", call, (f"invokes a tool: {_short(ctx, call.func)}",))
    for result in tool_results(ctx):
        ids, contents, flags = result.ids, result.contents, result.error_flags
        yield _role(
            ctx,
            "tool-result",
            result.node,
            (f"builds a {result.label} ({result.dialect})",),
            id=_short(ctx, ids[0], 40) if ids else None,
            content=_short(ctx, contents[0], 40) if contents else None,
            error_flag=_short(ctx, flags[0], 40) if flags else None,
        )
    for branch in ctx.findall(m.If()):
        test_words = set()
        for name in ctx.descendants(branch.test, m.Name()):
            test_words.update(words(name.value))
        for string in ctx.descendants(branch.test, m.SimpleString()):
            test_words.update(words(str(string.evaluated_value)))
        kinds = [kind for kind, vocabulary in GUARD_KINDS.items() if test_words & vocabulary]
        if not kinds or not _refuses(ctx, branch) or not in_tool_context(ctx, branch):
            continue
        for kind in kinds:
            hit = sorted(test_words & GUARD_KINDS[kind])
            yield _role(
                ctx,
                "guard",
                branch,
                (f"{kind} check on {', '.join(hit)}: {_short(ctx, branch.test)}",),
                guard=kind,
            )


def _refuses(ctx: SourceContext, branch: cst.If) -> bool:
    """The guarded branch leaves (raise/return/continue): it can refuse the tool call."""
    return bool(ctx.descendants(branch.body, m.Raise() | m.Return() | m.Continue()))


_FINDERS: tuple[Callable[[SourceContext], Iterator[Role]], ...] = (
    _model_calls,
    _stream_consumers,
    _end_of_stream_checks,
    _retry_roles,
    _retry_after_sources,
    _turn_roles,
    _tool_roles,
)
