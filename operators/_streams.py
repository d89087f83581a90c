"""Shared vocabulary and matchers of the stream & transport operators.

Stream bugs hide behind many spellings: ``httpx2.RemoteProtocolError`` after ``import httpx2 as
h`` is ``h.RemoteProtocolError``, a stop marker is ``"message_stop"`` in one loop and ``"[DONE]"``
in the next, a flag may be called ``saw_stop`` or ``self._complete``. The helpers here recognise
those things by meaning: exception types by *qualified* name, stop flags by where they are set
(inside a branch that tested for an end-of-turn marker), fields by the provider APIs' own names
(``stop_reason``, ``finish_reason``, ``choices``...), never by the spelling of one sample agent.

Nothing in here yields mutations; the operator modules decide what to change.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.vocabulary import (  # the stream/tool vocabulary lives there
    ABSENT_SENTINEL_WORDS as _ABSENT_SENTINEL_WORDS,
)
from mutagent.anatomy.vocabulary import (
    ASYNC_LIMITS,
    HTTP_CLIENT_CLASSES,
    HTTP_PACKAGES,
    HTTP_VERBS,
    MODEL_ENDPOINT_HINTS,
    MODEL_METHODS,
    MODEL_RESOURCES,
    SDK_PACKAGES,
    SSE_READS,
    STOP_EVENT_CLASSES,
    STOP_MARKERS,
    STOP_REASON_VALUES,
    STREAM_EVENT_MARKERS,
    STREAM_EVENT_WORDS,
    STREAM_READS,
    TRANSPORT_ERRORS,
    TRANSPORT_SENDS,
    UNAMBIGUOUS_TRANSPORT_ERRORS,
    tokens,
    word_list,
)
from mutagent.anatomy.vocabulary import (
    BARE_REASON_NAMES as _BARE_REASON_NAMES,
)
from mutagent.anatomy.vocabulary import (
    END_SENTINEL_WORDS as _END_SENTINEL_WORDS,
)
from mutagent.anatomy.vocabulary import (
    REASON_SUBJECTS as _REASON_SUBJECTS,
)
from mutagent.anatomy.vocabulary import (
    STREAM_ERROR_WORDS as _ERROR_WORDS,
)
from mutagent.anatomy.vocabulary import (
    cached_analysis as _cached,
)
from mutagent.mutation.context import SourceContext

# -- transport / connection / timeout exceptions ---------------------------------------------


def transport_error_name(ctx: SourceContext, expr: cst.BaseExpression) -> str | None:
    """The qualified name of ``expr`` if it names a transport/connection/timeout exception."""
    for name in sorted(ctx.qualified_names(expr)):
        leaf = name.rsplit(".", 1)[-1]
        if leaf in UNAMBIGUOUS_TRANSPORT_ERRORS and "." in name:
            return name
        for module, classes in TRANSPORT_ERRORS.items():
            if leaf in classes and (name == f"{module}.{leaf}" or name.startswith(f"{module}.")):
                return name
    return None


# -- words ------------------------------------------------------------------------------------


def string_value(node: cst.CSTNode) -> str | None:
    """The value of a plain (non f-) string literal, including implicitly concatenated ones."""
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def leaf_name(expr: cst.CSTNode) -> str | None:
    """The name an expression finally reads: ``resp.choices[0]`` -> ``choices``,
    ``data["content"]`` / ``data.get("content")`` -> ``content``, ``text.strip()`` -> ``text``."""
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        return expr.attr.value
    if isinstance(expr, cst.Subscript):
        if len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index):
            key = string_value(expr.slice[0].slice.value)
            if key is not None:
                return key
        return leaf_name(expr.value)
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        method = expr.func.attr.value
        if method in ("get", "pop") and expr.args:
            return string_value(expr.args[0].value)
        if method in ("strip", "lstrip", "rstrip", "lower", "upper", "casefold"):
            return leaf_name(expr.func.value)
    return None


def root_name(expr: cst.CSTNode) -> str | None:
    """The leftmost plain name of an attribute/subscript/call chain (``self`` for ``self.a.b``)."""
    while True:
        if isinstance(expr, cst.Name):
            return expr.value
        if isinstance(expr, (cst.Attribute, cst.Subscript)):
            expr = expr.value
        elif isinstance(expr, cst.Call):
            expr = expr.func
        else:
            return None


def attribute_chain(expr: cst.CSTNode) -> list[str]:
    """Every name along a call/attribute chain: ``client.beta.messages.create`` ->
    ``["client", "beta", "messages", "create"]``."""
    names: list[str] = []
    while True:
        if isinstance(expr, cst.Attribute):
            names.append(expr.attr.value)
            expr = expr.value
        elif isinstance(expr, cst.Call):
            expr = expr.func
        elif isinstance(expr, cst.Subscript):
            expr = expr.value
        elif isinstance(expr, cst.Name):
            names.append(expr.value)
            return names[::-1]
        else:
            return names[::-1]


def keyword(call: cst.Call, name: str) -> cst.Arg | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def is_literal(node: cst.CSTNode, *values: str) -> bool:
    """``None``/``True``/``False`` spelled as one of ``values``."""
    return isinstance(node, cst.Name) and node.value in values


def is_number(node: cst.CSTNode, value: float | None = None) -> bool:
    if isinstance(node, (cst.Integer, cst.Float)):
        return value is None or ast.literal_eval(node.value) == value
    return False


# -- conditions -------------------------------------------------------------------------------

FALSE = cst.Name("False")
TRUE = cst.Name("True")


def condition_leaves(test: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    """The operands of a test's top-level ``and``/``or`` chain (the test itself if it has none)."""
    if isinstance(test, cst.BooleanOperation):
        yield from condition_leaves(test.left)
        yield from condition_leaves(test.right)
    else:
        yield test


def condition_sites(
    test: cst.BaseExpression, predicate: Callable[[cst.BaseExpression], bool]
) -> list[cst.BaseExpression]:
    """Which part of ``test`` to turn ``False`` so that the checks ``predicate`` recognises stop
    guarding: the whole test when it is one such check (or an ``and`` of them only), the first
    one of an ``and`` mixed with other conditions, each one of an ``or`` (so that
    ``if not saw_stop or open_blocks:`` keeps its second check)."""
    if predicate(test):
        return [test]
    leaves = list(condition_leaves(test))
    if len(leaves) == 1:
        return []
    hits = [leaf for leaf in leaves if predicate(leaf)]
    if hits and all(isinstance(node.operator, cst.And) for node in _boolean_nodes(test)):
        # One false operand disables a conjunction: a mutant per operand would be equivalents.
        return [test] if len(hits) == len(leaves) else hits[:1]
    return hits


def _boolean_nodes(test: cst.BaseExpression) -> Iterator[cst.BooleanOperation]:
    if isinstance(test, cst.BooleanOperation):
        yield test
        yield from _boolean_nodes(test.left)
        yield from _boolean_nodes(test.right)


def negated(test: cst.BaseExpression) -> cst.BaseExpression | None:
    """``x`` for ``not x``."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return test.expression
    return None


def caught_classes(handler: cst.ExceptHandler | cst.ExceptStarHandler) -> list[cst.BaseExpression]:
    """The classes an ``except`` clause names: ``except (A, B)`` -> ``[A, B]``, ``except A`` ->
    ``[A]``, a bare ``except:`` -> ``[]``."""
    caught = handler.type
    if caught is None:
        return []
    return [e.value for e in caught.elements] if isinstance(caught, cst.Tuple) else [caught]


def single_comparison(
    test: cst.CSTNode,
) -> tuple[cst.BaseExpression, cst.BaseCompOp, cst.BaseExpression] | None:
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        return test.left, target.operator, target.comparator
    return None


def absence_of(test: cst.BaseExpression) -> cst.BaseExpression | None:
    """``x`` for tests meaning "x is missing": ``not x``, ``x is None``, ``x is False``,
    ``x == None``, ``x == False``, ``x is not True``."""
    inner = negated(test)
    if inner is not None:
        return inner
    parts = single_comparison(test)
    if parts is None:
        return None
    left, op, right = parts
    if isinstance(op, (cst.Is, cst.Equal)) and is_literal(right, "None", "False"):
        return left
    if isinstance(op, cst.IsNot) and is_literal(right, "True"):
        return left
    return None


def presence_of(test: cst.BaseExpression) -> cst.BaseExpression | None:
    """``x`` for tests meaning "x is there": ``x``, ``x is not None``, ``x is True``, ``x == True``."""
    if isinstance(test, (cst.Name, cst.Attribute, cst.Subscript)):
        return test
    parts = single_comparison(test)
    if parts is None:
        return None
    left, op, right = parts
    if isinstance(op, cst.IsNot) and is_literal(right, "None", "False"):
        return left
    if isinstance(op, (cst.Is, cst.Equal)) and is_literal(right, "True"):
        return left
    return None


def statements(block: cst.BaseSuite) -> list[cst.BaseStatement | cst.BaseSmallStatement]:
    """The statements of a block, small statements of a one-line suite included."""
    if isinstance(block, cst.SimpleStatementSuite):
        return list(block.body)
    flat: list[cst.BaseStatement | cst.BaseSmallStatement] = []
    for statement in block.body:
        if isinstance(statement, cst.SimpleStatementLine):
            flat.extend(statement.body)
        else:
            flat.append(statement)
    return flat


def fails(block: cst.BaseSuite) -> bool:
    """Whether a block turns the situation into an error: it raises, or calls / returns / yields
    something named as an error (``self._fail(...)``, ``return ErrorEvent(...)``)."""
    for statement in statements(block):
        if isinstance(statement, cst.Raise):
            return True
        value = getattr(statement, "value", None)
        if isinstance(value, (cst.Yield, cst.Await)):
            value = value.value if isinstance(value, cst.Yield) else value.expression
        if isinstance(statement, (cst.Expr, cst.Return)) and isinstance(value, cst.Call):
            if tokens(leaf_name(value.func)) & _ERROR_WORDS and not _is_logging(value):
                return True
    return False


def _is_logging(call: cst.Call) -> bool:
    """``log.error(...)``, ``logger.exception(...)``, ``logging.error(...)``: reporting, not failing."""
    receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
    return receiver is not None and bool(
        tokens(leaf_name(receiver)) & {"log", "logger", "logging", "warnings"}
    )


def exits_early(block: cst.BaseSuite) -> bool:
    """A guard body that only leaves quietly: bare ``return``/``return None``, ``continue``."""
    body = statements(block)
    if not body:
        return False
    for statement in body:
        if isinstance(statement, cst.Return):
            if statement.value is not None and not is_literal(statement.value, "None"):
                return False
        elif not isinstance(statement, (cst.Continue, cst.Pass)):
            return False
    return not all(isinstance(s, cst.Pass) for s in body)


def raised_names(block: cst.BaseSuite) -> set[str]:
    """Words of what a block raises: class name and message text (``EmptyResponseError("no
    content")`` -> ``{"empty", "response", "error", "no", "content"}``)."""
    words: set[str] = set()
    for statement in statements(block):
        if isinstance(statement, cst.Raise) and statement.exc is not None:
            exc = statement.exc
            if isinstance(exc, cst.Call):
                words |= tokens(leaf_name(exc.func))
                for arg in exc.args:
                    text = string_value(arg.value)
                    if text is None and isinstance(arg.value, cst.FormattedString):
                        text = "".join(
                            part.value
                            for part in arg.value.parts
                            if isinstance(part, cst.FormattedStringText)
                        )
                    words |= tokens(text)
            else:
                words |= tokens(leaf_name(exc))
    return words


# -- functions and bindings -------------------------------------------------------------------


def parameters(func: cst.FunctionDef | None) -> set[str]:
    if func is None:
        return set()
    params = func.params
    every = [*params.posonly_params, *params.params, *params.kwonly_params]
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            every.append(star)
    return {param.name.value for param in every}


def owner_of(ctx: SourceContext, expr: cst.CSTNode) -> cst.CSTNode | None:
    """Where a name lives: a plain name in its function (None at module level); ``self.x`` in
    its class; any other chain (``state.done``) module-wide (None)."""
    if isinstance(expr, cst.Name):
        return ctx.enclosing_function(expr)
    if root_name(expr) in ("self", "cls"):
        return ctx.enclosing(expr, cst.ClassDef)
    return None


def same_place(ctx: SourceContext, a: cst.CSTNode, b: cst.CSTNode) -> bool:
    """``a`` and ``b`` spell the same variable in the same function/class."""
    return ctx.code(a) == ctx.code(b) and owner_of(ctx, a) is owner_of(ctx, b)


def references(ctx: SourceContext, node: cst.CSTNode) -> list[cst.Name | cst.Attribute]:
    """The variables ``node`` reads: names and attribute chains, but not the ``done`` of
    ``self.done`` nor the keyword of ``f(done=1)``, which are no variable ``done``."""
    found = []
    for ref in ctx.descendants(node, m.Name() | m.Attribute()):
        parent = ctx.parent(ref)
        if isinstance(parent, cst.Attribute) and parent.attr is ref:
            continue
        if isinstance(parent, cst.Arg) and parent.keyword is ref:
            continue
        found.append(ref)
    return found


@dataclass(frozen=True)
class Binding:
    """``target`` (an expression's code) was assigned ``value`` (or bound by ``with value as target``)."""

    target: cst.BaseExpression
    value: cst.BaseExpression


def bindings(ctx: SourceContext) -> list[Binding]:
    """Every simple binding in the file: assignments, annotated assignments, ``with ... as``."""
    found: list[Binding] = []
    for assign in ctx.nodes(cst.Assign):
        for target in assign.targets:
            found.append(Binding(target.target, assign.value))
    for assign in ctx.nodes(cst.AnnAssign):
        if assign.value is not None:
            found.append(Binding(assign.target, assign.value))
    for item in ctx.nodes(cst.WithItem):
        if item.asname is not None and isinstance(item.asname.name, (cst.Name, cst.Attribute)):
            found.append(Binding(item.asname.name, item.item))
    return found


def bound_values(ctx: SourceContext, expr: cst.CSTNode) -> list[cst.BaseExpression]:
    """Values assigned to the variable ``expr`` spells (same function/class), awaits unwrapped."""
    if not isinstance(expr, (cst.Name, cst.Attribute, cst.Subscript)):
        return []
    index = _cached(ctx, "bindings", lambda: _binding_index(ctx))
    code = ctx.code(expr)
    found = index.get((code, id(owner_of(ctx, expr))))
    if found is None and isinstance(expr, cst.Name):  # a global read inside a function
        found = index.get((code, id(None)))
    return found or []


def _binding_index(ctx: SourceContext) -> dict[tuple[str, int], list[cst.BaseExpression]]:
    index: dict[tuple[str, int], list[cst.BaseExpression]] = {}
    for binding in bindings(ctx):
        value = binding.value.expression if isinstance(binding.value, cst.Await) else binding.value
        key = (ctx.code(binding.target), id(owner_of(ctx, binding.target)))
        index.setdefault(key, []).append(value)
    return index


# -- SDK and HTTP clients ---------------------------------------------------------------------


def qualified_leaf(ctx: SourceContext, node: cst.CSTNode) -> tuple[str, str] | None:
    """(package, last name) of what ``node`` resolves to, if it resolves to an import."""
    for name in sorted(ctx.qualified_names(node)):
        if "." in name:
            return name.split(".", 1)[0], name.rsplit(".", 1)[-1]
    return None


def is_client_constructor(ctx: SourceContext, call: cst.CSTNode) -> bool:
    """``anthropic.Anthropic(...)``, ``openai.AsyncOpenAI(...)``, ``httpx2.Client(...)``,
    ``aiohttp.ClientSession(...)``, ``requests.Session()``, any alias."""
    if not isinstance(call, cst.Call):
        return False
    resolved = qualified_leaf(ctx, call)
    if resolved is None:
        return False
    package, leaf = resolved
    if package in HTTP_PACKAGES:
        return leaf in HTTP_CLIENT_CLASSES
    return package in SDK_PACKAGES and leaf[:1].isupper() and not leaf.endswith(("Error", "Timeout"))


def _annotation_is_client(ctx: SourceContext, expr: cst.CSTNode) -> bool:
    """A parameter annotated with a client class (``client: httpx2.AsyncClient``)."""
    if not isinstance(expr, cst.Name):
        return False
    func = ctx.enclosing_function(expr)
    if func is None:
        return False
    for param in [*func.params.params, *func.params.kwonly_params, *func.params.posonly_params]:
        if param.name.value == expr.value and param.annotation is not None:
            for node in ctx.descendants(param.annotation.annotation, m.Name() | m.Attribute()):
                if qualified_leaf(ctx, node) and is_client_constructor(ctx, cst.Call(func=node)):
                    return True
    return False


def is_client(ctx: SourceContext, expr: cst.CSTNode) -> bool:
    """Whether ``expr`` holds an SDK or HTTP client: bound to a client constructor, annotated
    with a client class, or named as one (``client``, ``session``, ``http``)."""
    if any(is_client_constructor(ctx, value) for value in bound_values(ctx, expr)):
        return True
    if _annotation_is_client(ctx, expr):
        return True
    name = leaf_name(expr)
    return bool(name) and _last_word(name) in {"client", "session", "http", "httpx"}


def is_model_call(call: cst.CSTNode) -> bool:
    """A call on a model API resource: ``x.messages.create``, ``x.chat.completions.stream``..."""
    if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute):
        return False
    chain = attribute_chain(call.func)
    return call.func.attr.value in MODEL_METHODS and bool(MODEL_RESOURCES & set(chain[:-1]))


def is_http_call(ctx: SourceContext, call: cst.CSTNode) -> bool:
    """An HTTP request: ``httpx2.post``/``requests.get``/``aiohttp.request`` or a verb on a client."""
    if not isinstance(call, cst.Call):
        return False
    resolved = qualified_leaf(ctx, call)
    if resolved is not None and resolved[0] in HTTP_PACKAGES and resolved[1] in HTTP_VERBS:
        return True
    func = call.func
    return isinstance(func, cst.Attribute) and func.attr.value in HTTP_VERBS and is_client(ctx, func.value)


def streaming_producer(ctx: SourceContext, expr: cst.CSTNode) -> bool:
    """Whether ``expr`` opens a streamed response that holds a connection until released:
    a model or HTTP call with ``stream=True``, ``.messages.stream(...)``, ``client.stream(...)``,
    ``.with_streaming_response.``, an aiohttp request (its body is read lazily)."""
    if isinstance(expr, cst.Await):
        expr = expr.expression
    if not isinstance(expr, cst.Call):
        return False
    if leaf_name(expr.func) in TRANSPORT_SENDS and expr.args:
        return True  # an httpx transport hands back the response with its body still unread
    flag = keyword(expr, "stream")
    if (
        flag is not None
        and is_literal(flag.value, "True")
        and (is_model_call(expr) or is_http_call(ctx, expr))
    ):
        return True
    chain = attribute_chain(expr.func)
    if "with_streaming_response" in chain:
        return True
    if chain and chain[-1] == "stream" and (is_model_call(expr) or is_http_call(ctx, expr)):
        return True
    return False


def is_stream_value(ctx: SourceContext, expr: cst.CSTNode) -> bool:
    """A variable holding a streamed response: bound to a streaming producer, or named for one
    (``stream``, ``self._raw_stream``, ``failed_response``) and not bound to a file."""
    values = bound_values(ctx, expr)
    if any(streaming_producer(ctx, value) for value in values):
        return True
    if any(
        isinstance(v, cst.Call) and leaf_name(v.func) in ("open", "_open", "StringIO", "BytesIO")
        for v in values
    ):
        return False
    name = leaf_name(expr)
    if not name or name[:1].isupper():  # ``StreamHandler.close(self)``: a class, not a value
        return False
    return _last_word(name) in {"stream", "response", "resp", "sse", "eventsource"}


# -- stream markers ---------------------------------------------------------------------------


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
            conjunction = all(isinstance(b.operator, cst.And) for b in _boolean_nodes(node.test))
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


def is_reason_field(expr: cst.CSTNode) -> bool:
    """``stop_reason``/``finish_reason``/``finishReason``/``end_reason``/``done_reason`` (or a
    ``..._cause``) however it is read. A bare ``finish``/``stop`` is not one by name alone: see
    :func:`is_bare_reason_name` and :func:`is_stop_reason`."""
    words = tokens(leaf_name(expr))
    return bool(words & {"reason", "cause"}) and bool(words & _REASON_SUBJECTS)


def is_bare_reason_name(expr: cst.CSTNode) -> bool:
    """``finish``/``stop``/``reply.finish``/``data["stop"]``: a name that is a stop reason when it
    is compared with a stop-reason value (``reply.finish == "length"``), never by itself."""
    if not isinstance(expr, (cst.Name, cst.Attribute, cst.Subscript)):
        return False
    words = word_list(leaf_name(expr))
    return len(words) == 1 and words[0] in _BARE_REASON_NAMES


def stop_reason_value(node: cst.CSTNode) -> bool:
    """``"length"``, ``"tool_calls"``, ``("end_turn", "tool_use")``: stop-reason values."""
    value = string_value(node)
    if value is not None:
        return value in STOP_REASON_VALUES
    if isinstance(node, (cst.Tuple, cst.List, cst.Set)) and node.elements:
        return all(string_value(e.value) in STOP_REASON_VALUES for e in node.elements)
    return False


def is_stop_reason(ctx: SourceContext, expr: cst.CSTNode) -> bool:
    """A stop reason: a reason field by name, or a bare ``finish``/``stop`` that the file itself
    shows to be one, by comparing the same variable with a stop-reason value (``reply.finish !=
    "tool_calls"``) or assigning it a reason field (``reply.finish = choice.finish_reason``). A
    ``self.stop`` flag, a ``stop_event`` or a ``finish_time`` never is."""
    if is_reason_field(expr):
        return True
    if not is_bare_reason_name(expr):
        return False
    evidence = _cached(ctx, "bare-reasons", lambda: _bare_reasons(ctx))
    return any(same_place(ctx, expr, known) for known in evidence)  # type: ignore[attr-defined]


def _bare_reasons(ctx: SourceContext) -> list[cst.BaseExpression]:
    found: list[cst.BaseExpression] = []
    for comparison in ctx.nodes(cst.Comparison):
        parts = single_comparison(comparison)
        if parts is None or not isinstance(parts[1], (cst.Equal, cst.NotEqual, cst.In, cst.NotIn)):
            continue
        for field, value in ((parts[0], parts[2]), (parts[2], parts[0])):
            if is_bare_reason_name(field) and stop_reason_value(value):
                found.append(field)
    for binding in bindings(ctx):
        if is_bare_reason_name(binding.target) and is_reason_field(binding.value):
            found.append(binding.target)
    return found


def handles_stream_events(ctx: SourceContext, node: cst.CSTNode) -> bool:
    """Whether ``node`` sits in a function that processes stream events: it takes an
    event/chunk/delta, is named for one, or itself mentions stream event types."""
    func = ctx.enclosing_function(node)
    if func is None:
        return False
    if any(_last_word(p) in STREAM_EVENT_WORDS for p in parameters(func)):
        return True
    if tokens(func.name.value) & (STREAM_EVENT_WORDS | {"block", "blocks"}):
        return True
    return _cached(ctx, f"markers:{id(func)}", lambda: _mentions_events(ctx, func))


def _last_word(name: str) -> str:
    """``raw_event`` -> ``event``; ``chunk_size`` -> ``size`` (a size is no chunk)."""
    words = word_list(name)
    return words[-1] if words else ""


def _mentions_events(ctx: SourceContext, scope: cst.CSTNode) -> bool:
    for string in ctx.descendants(scope, m.SimpleString()):
        value = string_value(string)
        if value is not None and (value in STREAM_EVENT_MARKERS or value.startswith("response.")):
            return True
    return False


def reads_stream(ctx: SourceContext, node: cst.CSTNode) -> bool:
    """An ``async for``, a next-chunk read, a model call or an HTTP request inside ``node``."""
    if ctx.descendants(node, m.For(asynchronous=m.Asynchronous())):
        return True
    for call in ctx.descendants(node, m.Call()):
        if _is_read_call(call) or is_model_call(call) or is_http_call(ctx, call):
            return True
    return False


def _is_read_call(call: cst.Call) -> bool:
    """``stream.__anext__()``, ``queue.get()``, ``ws.recv()``; a ``get`` given a key
    (``config.get("timeout", 30)``) is a mapping lookup, not a read."""
    name = leaf_name(call.func)
    if name == "get" and any(arg.keyword is None for arg in call.args):
        return False
    return name in STREAM_READS


def model_context(ctx: SourceContext, node: cst.CSTNode) -> bool:
    """Whether ``node`` is in code that talks to a model: its function makes a model call,
    streams (``stream=True``, ``aiter_lines``, ``async for``) or handles stream events, or its
    file imports a model SDK or names a model endpoint or stream event. Keeps the HTTP-level
    checks off a tool's or a tracer's HTTP calls."""
    func = ctx.enclosing_function(node)
    if func is not None and _cached(ctx, f"streams:{id(func)}", lambda: _streams_in(ctx, func)):
        return True
    if func is not None and any(_streams_or_twin(ctx, twin) for twin in async_twins(ctx, func)):
        return True
    owner = ctx.parent(ctx.parent(func)) if func is not None else None
    if isinstance(owner, cst.ClassDef) and _cached(
        ctx, f"class-streams:{id(owner)}", lambda: _class_streams(ctx, owner)
    ):
        return True
    return _cached(ctx, "model-file", lambda: _model_file(ctx))


def _streams_or_twin(ctx: SourceContext, func: cst.FunctionDef) -> bool:
    return _cached(ctx, f"streams:{id(func)}", lambda: _streams_in(ctx, func))  # type: ignore[return-value]


def builds_streaming_object(ctx: SourceContext, value: cst.CSTNode) -> bool:
    """``ChatCompletionStream(...)``: a constructor of a class of this file that reads a stream."""
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name)):
        return False
    return any(
        cls.name.value == value.func.value
        and _cached(ctx, f"class-streams:{id(cls)}", lambda cls=cls: _class_streams(ctx, cls))
        for cls in ctx.nodes(cst.ClassDef)
    )


def _class_streams(ctx: SourceContext, cls: cst.ClassDef) -> bool:
    """A method of the class (or the async twin of one) reads a stream: its ``close()``,
    ``__exit__`` and the like release that stream (``Stream.close`` beside ``Stream.__stream__``)."""
    body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ()
    for method in (node for node in body if isinstance(node, cst.FunctionDef)):
        if _streams_or_twin(ctx, method) or any(_streams_or_twin(ctx, t) for t in async_twins(ctx, method)):
            return True
    return False


def _sync_spelling(name: str) -> str:
    """``AsyncStream`` -> ``Stream``, ``async_iter_events``/``iter_events_async`` -> ``iter_events``,
    ``__aexit__`` -> ``__exit__``."""
    if name.startswith("__a") and name.endswith("__") and len(name) > 5:
        return "__" + name[3:]
    for prefix in ("Async", "async_", "_async_"):
        if name.startswith(prefix) and len(name) > len(prefix):
            return name[len(prefix) :] if prefix != "_async_" else "_" + name[len(prefix) :]
    for suffix in ("_async", "Async"):
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def async_twins(ctx: SourceContext, func: cst.FunctionDef) -> list[cst.FunctionDef]:
    """The ``async def`` counterparts of a plain ``def`` in the same file: SDKs write every stream
    twice (``Stream.__stream__`` and ``AsyncStream.__stream__``, ``iter_lines`` and
    ``aiter_lines``), and what the async one shows (an ``async for`` over the response) holds
    for the sync one, which reads through a plain ``for``."""
    if func.asynchronous is not None:
        return []

    def compute() -> dict[tuple[str, ...], list[cst.FunctionDef]]:
        index: dict[tuple[str, ...], list[cst.FunctionDef]] = {}
        for other in ctx.nodes(cst.FunctionDef):
            if other.asynchronous is None:
                continue
            scope = ctx.scope_of(other.name)
            *owners, own = scope or (other.name.value,)
            keys = {own, _sync_spelling(own)}
            if own.startswith("a") and len(own) > 1:
                keys.add(own[1:])  # aiter_lines / iter_lines, aclose / close
            for key in keys:
                index.setdefault((*map(_sync_spelling, owners), key), []).append(other)
        return index

    index = _cached(ctx, "async-twins", compute)
    scope = ctx.scope_of(func.name)
    return [twin for twin in index.get(tuple(map(_sync_spelling, scope)), []) if twin is not func]  # type: ignore[union-attr]


def _streams_in(ctx: SourceContext, func: cst.FunctionDef) -> bool:
    if handles_stream_events(ctx, func.body) or ctx.descendants(func, m.For(asynchronous=m.Asynchronous())):
        return True
    for call in ctx.descendants(func, m.Call()):
        flag = keyword(call, "stream")
        if (
            is_model_call(call)
            or leaf_name(call.func) in SSE_READS
            or (flag and not is_literal(flag.value, "False", "None") and is_http_call(ctx, call))
            or (flag and is_literal(flag.value, "True"))
        ):
            return True
    return False


def _model_file(ctx: SourceContext) -> bool:
    for node in ctx.nodes(cst.Import) + ctx.nodes(cst.ImportFrom):
        names = [a.name for a in node.names] if isinstance(node, cst.Import) else [node.module]
        for name in names:
            if name is not None and ctx.code(name).split(".")[0] in SDK_PACKAGES:
                return True
    texts = [string_value(string) for string in ctx.nodes(cst.SimpleString)]
    texts += [part.value for part in ctx.nodes(cst.FormattedStringText)]  # f"{base}/v1/messages"
    for value in texts:
        if value and (
            value in STREAM_EVENT_MARKERS
            or stop_marker(value)
            or any(h in value for h in MODEL_ENDPOINT_HINTS)
        ):
            return True
    return False


#: Calls and attributes of local processes and pipes: a ``BrokenPipeError`` or ``TimeoutError``
#: around them is a tool's, not the model connection's.
_PROCESS_MODULES = ("subprocess.", "asyncio.create_subprocess", "os.", "shutil.", "multiprocessing.", "pty.")
_PROCESS_ATTRIBUTES = frozenset("stdin stdout stderr communicate wait poll kill terminate".split())


def guards_something_else(ctx: SourceContext, node: cst.CSTNode) -> bool:
    """``node`` reads no stream and visibly waits on something else: a timeout wrapper or a
    ``timeout=`` call (a tool, a lock), a subprocess or pipe. A ``TimeoutError`` or
    ``BrokenPipeError`` caught around it is not a dropped model connection."""
    if reads_stream(ctx, node):
        return False
    for call in ctx.descendants(node, m.Call()):
        names = ctx.qualified_names(call)
        timeouts = any(
            arg.keyword is not None and "timeout" in tokens(arg.keyword.value) for arg in call.args
        )
        if timeouts or names & set(ASYNC_LIMITS):
            return True
        if any(name.startswith(_PROCESS_MODULES) for name in names) or "open" in {leaf_name(call.func)}:
            return True
    return any(n.attr.value in _PROCESS_ATTRIBUTES for n in ctx.descendants(node, m.Attribute()))


# -- rewriting helpers ------------------------------------------------------------------------


def without_element(node: cst.Tuple | cst.List | cst.Set, element: cst.Element) -> cst.BaseExpression | None:
    """``node`` minus ``element``, keeping a one-element tuple a tuple; None if nothing is left."""
    remaining = [e for e in node.elements if e is not element]
    if not remaining:
        return None
    if node.elements[-1] is element:
        remaining[-1] = remaining[-1].with_changes(comma=element.comma)
    if (
        isinstance(node, cst.Tuple)
        and len(remaining) == 1
        and remaining[0].comma is cst.MaybeSentinel.DEFAULT
    ):
        remaining[0] = remaining[0].with_changes(comma=cst.Comma())
    return node.with_changes(elements=remaining)


def without_arg(call: cst.Call, arg: cst.Arg) -> cst.Call:
    """``call`` minus ``arg``; the new last argument takes over the removed one's comma."""
    remaining = [a for a in call.args if a is not arg]
    if remaining and call.args[-1] is arg:
        remaining[-1] = remaining[-1].with_changes(comma=arg.comma)
    return call.with_changes(args=remaining)
