"""The stop-check role: end-of-turn markers (``"message_stop"``, ``"[DONE]"``, a ``DONE``
constant or an end sentinel), the tests and branches that see them, and the flags set there
(``saw_stop = True``), read wherever the same variable is read."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.dataflow import local_values, same_place
from mutagent.anatomy.streams.stop_reasons import is_reason_field
from mutagent.anatomy.syntax import (
    absence_of,
    boolean_nodes,
    condition_leaves,
    is_literal,
    leaf_name,
    negated,
    presence_of,
    root_name,
    single_comparison,
    statements,
    string_value,
)
from mutagent.anatomy.vocabulary import (  # the stream/tool vocabulary lives there
    ABSENT_SENTINEL_WORDS as _ABSENT_SENTINEL_WORDS,
)
from mutagent.anatomy.vocabulary import (
    END_SENTINEL_WORDS as _END_SENTINEL_WORDS,
)
from mutagent.anatomy.vocabulary import (
    STOP_EVENT_CLASSES,
    STOP_MARKERS,
    tokens,
)
from mutagent.anatomy.vocabulary import (
    cached_analysis as _cached,
)
from mutagent.mutation.context import SourceContext


def stop_marker(value: str | None) -> bool:
    """``"message_stop"``, ``"[DONE]"``, ``"data: [DONE]"``, ``"event: message_stop"``..."""
    if value is None:
        return False
    text = value.strip()
    for prefix in ("data:", "event:"):
        if text.startswith(prefix):
            text = text[len(prefix) :].strip()
    return text in STOP_MARKERS


def _marker_in(node: cst.CSTNode, ctx: SourceContext | None = None) -> bool:
    """A stop marker literal, a tuple of them, or (with ``ctx``) a constant standing for the end
    of the stream: ``DONE = "[DONE]"``, ``SENTINEL = object()`` (see :func:`end_constant`)."""
    if stop_marker(string_value(node)):
        return True
    if isinstance(node, (cst.Tuple, cst.List, cst.Set)):
        return any(_marker_in(element.value, ctx) for element in node.elements)
    return ctx is not None and end_constant(ctx, node)


def _constants(ctx: SourceContext) -> dict[str, list[cst.BaseExpression]]:
    """Names bound at module or class level (``DONE = "[DONE]"``, ``_SENTINEL = object()``), with
    every value bound to them there."""

    def compute() -> dict[str, list[cst.BaseExpression]]:
        found: dict[str, list[cst.BaseExpression]] = {}
        for assign in ctx.nodes(cst.Assign) + ctx.nodes(cst.AnnAssign):
            if assign.value is None or ctx.enclosing_function(assign) is not None:
                continue
            targets = (
                [t.target for t in assign.targets] if isinstance(assign, cst.Assign) else [assign.target]
            )
            for target in targets:
                if isinstance(target, cst.Name):
                    found.setdefault(target.value, []).append(assign.value)
        return found

    return _cached(ctx, "constants", compute)


def end_constant(ctx: SourceContext, node: cst.CSTNode) -> bool:
    """``node`` reads a constant that marks the end of a stream: a module/class constant bound
    once to a stop marker (``DONE = "[DONE]"``), or to a fresh ``object()`` whose name says the
    stream is over (``SENTINEL``, ``_END``, ``EOF``; not ``_MISSING``/``NOT_GIVEN``)."""
    name = (
        node.value
        if isinstance(node, cst.Name)
        else node.attr.value
        if isinstance(node, cst.Attribute)
        else None
    )
    if name is None:
        return False
    values = _constants(ctx).get(name, [])
    if len(values) != 1:
        return False
    value = values[0]
    if stop_marker(string_value(value)):
        return True
    named = tokens(name)
    return (
        m.matches(value, m.Call(func=m.Name("object"), args=[]))
        and bool(named & _END_SENTINEL_WORDS)
        and not named & _ABSENT_SENTINEL_WORDS
    )


def _stop_class(ctx: SourceContext, node: cst.CSTNode) -> bool:
    if isinstance(node, (cst.Tuple, cst.List)):
        return any(_stop_class(ctx, element.value) for element in node.elements)
    names = {name.rsplit(".", 1)[-1] for name in ctx.qualified_names(node)} | {leaf_name(node) or ""}
    return any(name.endswith(STOP_EVENT_CLASSES) for name in names)


def stop_test(ctx: SourceContext, test: cst.CSTNode) -> bool | None:
    """True if ``test`` says "this is the end-of-turn marker", False if it says "this is not",
    None if it is not about the marker. Comparisons, ``in``, ``startswith``/``endswith`` and
    ``isinstance(event, RawMessageStopEvent)`` count; ``not`` flips."""
    inner = negated(test)
    if inner is not None:
        result = stop_test(ctx, inner)
        return None if result is None else not result
    parts = single_comparison(test)
    if parts is not None:
        left, op, right = parts
        if not (_marker_in(left, ctx) or _marker_in(right, ctx)):
            return None
        if isinstance(op, (cst.Equal, cst.Is, cst.In)):
            return True
        if isinstance(op, (cst.NotEqual, cst.IsNot, cst.NotIn)):
            return False
        return None
    if isinstance(test, cst.Call) and m.matches(
        test, m.Call(func=m.Name("any"), args=[m.Arg(m.GeneratorExp())])
    ):
        return stop_test(ctx, test.args[0].value.elt)  # any(e["type"] == "message_stop" for e in events)
    if isinstance(test, cst.Call):
        method = leaf_name(test.func) if isinstance(test.func, cst.Attribute) else None
        if method in ("startswith", "endswith") and test.args and _marker_in(test.args[0].value, ctx):
            return True
        if (
            m.matches(test.func, m.Name("isinstance"))
            and len(test.args) == 2
            and _stop_class(ctx, test.args[1].value)
        ):
            return True
    return None


def _pattern_has_marker(ctx: SourceContext, pattern: cst.CSTNode) -> bool:
    for node in ctx.descendants(pattern, m.MatchValue() | m.MatchClass()):
        if isinstance(node, cst.MatchValue) and stop_marker(string_value(node.value)):
            return True
        if isinstance(node, cst.MatchClass) and _stop_class(ctx, node.cls):
            return True
    return False


def stop_branches(ctx: SourceContext) -> list[cst.BaseSuite]:
    """Bodies that run only once the end-of-turn marker arrived: ``if event.type ==
    "message_stop": ...`` (also as an ``elif`` or one ``and`` operand) and ``case "message_stop":``."""

    def compute() -> list[cst.BaseSuite]:
        found: list[cst.BaseSuite] = []
        for node in ctx.nodes(cst.If):
            leaves = list(condition_leaves(node.test))
            conjunction = all(isinstance(b.operator, cst.And) for b in boolean_nodes(node.test))
            if (len(leaves) == 1 or conjunction) and any(stop_test(ctx, leaf) is True for leaf in leaves):
                found.append(node.body)
        for case in ctx.nodes(cst.MatchCase):
            if _pattern_has_marker(ctx, case.pattern):
                found.append(case.body)
        return found

    return _cached(ctx, "stop_branches", compute)


def _assignments_in(block: cst.BaseSuite) -> Iterator[tuple[cst.BaseExpression, cst.BaseExpression]]:
    """Assignments made directly by a branch (not in a loop or a nested block inside it)."""
    for node in statements(block):
        if isinstance(node, cst.Assign):
            for target in node.targets:
                yield target.target, node.value
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign)) and node.value is not None:
            yield node.target, node.value


def in_stop_branch(ctx: SourceContext, node: cst.CSTNode) -> bool:
    """``node`` runs only once the marker arrived: a check there is no completeness check."""
    branches = {id(body) for body in stop_branches(ctx)}
    return any(id(ancestor) in branches for ancestor in ctx.ancestors(node))


def stop_flags(ctx: SourceContext) -> list[cst.BaseExpression]:
    """Targets that record "the end-of-turn marker arrived": assigned (anything but
    ``False``/``None``) inside a stop branch, or assigned a stop test (``done = line == "[DONE]"``,
    ``saw |= event.type == "message_stop"``). Returned as the assignment targets."""

    def compute() -> list[cst.BaseExpression]:
        flags: list[cst.BaseExpression] = []
        for body in stop_branches(ctx):
            for target, value in _assignments_in(body):
                if isinstance(target, (cst.Name, cst.Attribute, cst.Subscript)) and not is_literal(
                    value, "False", "None"
                ):
                    flags.append(target)
        for node in ctx.nodes(cst.Assign) + ctx.nodes(cst.AugAssign):
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            if any(stop_test(ctx, leaf) is True for leaf in condition_leaves(node.value)):
                flags.extend(t for t in targets if isinstance(t, (cst.Name, cst.Attribute, cst.Subscript)))
        # A branch taken once the stream's finish reason arrived (``if choices[0].get("finish_reason")
        # is not None: self.terminal = True``): in a chat stream the reason is the end marker.
        for node in ctx.nodes(cst.If):
            leaves = list(condition_leaves(node.test))
            conjunction = all(isinstance(b.operator, cst.And) for b in boolean_nodes(node.test))
            found = any(reason_presence(leaf) is not None for leaf in leaves)
            if (len(leaves) == 1 or conjunction) and found:
                # state that outlives the chunk: on the object (``self.terminal``), or a local of
                # the loop that reads the stream; a per-chunk translator's local is data
                in_loop = in_own_loop(ctx, node)
                for target, value in _assignments_in(node.body):
                    if not is_literal(value, "True"):
                        continue
                    if (isinstance(target, cst.Attribute) and root_name(target) == "self") or (
                        isinstance(target, cst.Name) and in_loop
                    ):
                        flags.append(target)
        # One step further: what is set only once such a flag is set (``terminal_response =
        # event.response`` on the completed event, then ``if terminal_response is not None:
        # final_response = ...``) records the marker too.
        for node in ctx.nodes(cst.If):
            present = presence_of(node.test)
            if present is None or not any(same_place(ctx, flag, present) for flag in flags):
                continue
            for target, value in _assignments_in(node.body):
                if isinstance(target, (cst.Name, cst.Attribute)) and not is_literal(value, "False", "None"):
                    if not any(same_place(ctx, flag, target) for flag in flags):
                        flags.append(target)
        return flags

    return _cached(ctx, "stop_flags", compute)


def is_stop_flag(ctx: SourceContext, expr: cst.CSTNode) -> bool:
    """Whether ``expr`` reads a variable recorded by :func:`stop_flags` (same function/class)."""
    if not isinstance(expr, (cst.Name, cst.Attribute, cst.Subscript)):
        return False
    if any(same_place(ctx, flag, expr) for flag in stop_flags(ctx)):
        return True
    # An accumulator's flag read by its owner: ``if not acc.complete`` for the ``self.complete =
    # True`` its class sets on the end-of-turn event.
    return (
        isinstance(expr, cst.Attribute)
        and root_name(expr) not in ("self", "cls")
        and expr.attr.value in _cached(ctx, "object-stop-flags", lambda: _object_stop_flags(ctx))  # type: ignore[operator]
    )


def _object_stop_flags(ctx: SourceContext) -> frozenset[str]:
    """Attribute names of stop flags an object keeps on itself (``self.complete``)."""
    return frozenset(
        flag.attr.value
        for flag in stop_flags(ctx)
        if isinstance(flag, cst.Attribute) and root_name(flag) in ("self", "cls")
    )


def _reads_reason(expr: cst.CSTNode) -> bool:
    """``choice.finish_reason``, ``chunk["stop_reason"]``, ``choices[0].get("finish_reason")``."""
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "get":
        key = string_value(expr.args[0].value) if expr.args else None
        return bool(key) and key.isidentifier() and is_reason_field(cst.Name(key))  # type: ignore[union-attr]
    return is_reason_field(expr)


def reason_presence(test: cst.BaseExpression) -> cst.BaseExpression | None:
    """The reason field ``test`` finds present (``choice.finish_reason``, ``... is not None``)."""
    present = presence_of(test)
    if present is None:
        parts = single_comparison(test)
        if parts is not None and isinstance(parts[1], cst.IsNot) and is_literal(parts[2], "None"):
            present = parts[0]  # ``x.get("finish_reason") is not None`` (a call, not a name)
    return present if present is not None and _reads_reason(present) else None


def reason_absence(test: cst.BaseExpression) -> cst.BaseExpression | None:
    """The reason field ``test`` finds missing (``finish_reason is None``, ``not stop_reason``)."""
    missing = absence_of(test)
    return missing if missing is not None and _reads_reason(missing) else None


def predicate_source(ctx: SourceContext, leaf: cst.BaseExpression) -> cst.BaseExpression | None:
    """What ``leaf`` stands for: the ``return`` expression of the one-line predicate it calls
    (``self._should_fail()`` -> a method of the same class, ``cut(x)`` -> a function of the
    file), or the value a local it reads was given in the same function (``gave_up``)."""
    if isinstance(leaf, cst.Call):
        func = leaf.func
        target: cst.FunctionDef | None = None
        if isinstance(func, cst.Attribute) and m.matches(func.value, m.Name("self")):
            cls = ctx.enclosing(leaf, cst.ClassDef)
            if isinstance(cls, cst.ClassDef) and isinstance(cls.body, cst.IndentedBlock):
                methods = [s for s in cls.body.body if isinstance(s, cst.FunctionDef)]
                target = next((s for s in methods if s.name.value == func.attr.value), None)
        elif isinstance(func, cst.Name):
            target = next(
                (s for s in ctx.module.body if isinstance(s, cst.FunctionDef) and s.name.value == func.value),
                None,
            )
        if target is None:
            return None
        body = [s for s in statements(target.body) if not _is_docstring(s)]
        if len(body) == 1 and isinstance(body[0], cst.Return) and body[0].value is not None:
            return body[0].value
        return None
    if isinstance(leaf, cst.Name):
        values = local_values(ctx, leaf)
        tests = (cst.BooleanOperation, cst.Comparison, cst.UnaryOperation)
        if len(values) == 1 and isinstance(values[0], tests):
            return values[0]
    return None


def _is_docstring(statement: cst.CSTNode) -> bool:
    strings = (cst.SimpleString, cst.ConcatenatedString)
    return isinstance(statement, cst.Expr) and isinstance(statement.value, strings)


def in_own_loop(ctx: SourceContext, node: cst.CSTNode) -> bool:
    """``node`` sits in a ``for``/``while`` of its own function (the loop that reads the stream)."""
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, (cst.For, cst.While)):
            return True
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
            return False
    return False
