"""misclassify-retryable: one retryable failure is treated as fatal, or one fatal failure as retryable.

The retry decision is a classification: 408/409/429/5xx/529, timeouts and dropped connections are
worth another attempt; 400/401/403/404 are not, because the same request fails the same way. A
retryable error treated as fatal turns a blip into a failed task; a fatal one treated as
retryable resends a bad request, with a bad key, until the budget is gone. Each mutant moves
exactly one status, error type or exception class across the line.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.hierarchy import subclass_kept
from mutagent.anatomy.retry.classification import (
    error_kind,
    exception_verdict,
    is_status_comparison,
    runs_as_attempt,
    status_string,
    verdict_fields,
)
from mutagent.anatomy.retry.decisions import resends_after_wait, tries_until_success, verdict_gate
from mutagent.anatomy.retry.disconnects import caught_by_a_base, only_for_type_checkers
from mutagent.anatomy.retry.loops import in_retry_decision, is_retry_loop, retry_library
from mutagent.anatomy.syntax import caught_classes, condition_leaves, innermost_loop, negated
from mutagent.anatomy.vocabulary import (
    BASE_ONLY_ERRORS,
    CLASSIFICATION_WORDS,
    CLASSIFIED_DELAY_WORDS,
    ERROR_TYPE_WORDS,
    FATAL_EXAMPLE,
    RETRY_OVERRIDE_HEADERS,
    VERDICT_WORDS,
    http_status,
    identifier,
    is_count_name,
    is_fatal_name,
    is_retry_name,
    is_retryable_status,
    is_status_name,
    words,
)
from mutagent.mutation.context import SourceContext
from mutagent.mutation.operator import Example, Mutation, Operator

_COLLECTION = m.Set() | m.Tuple() | m.List()
#: Calls a collection passes through on its way to its name: ``frozenset({...})``, ``Field(default=...)``.
_WRAPPERS = frozenset({"frozenset", "set", "tuple", "list", "field", "Field", "MappingProxyType", "sorted"})
_FALSE, _TRUE = cst.Name("False"), cst.Name("True")


def without(collection: cst.Set | cst.Tuple | cst.List, index: int) -> cst.BaseExpression:
    """``collection`` minus its ``index``-th element, still valid code (``(429,)``, ``set()``)."""
    elements = list(collection.elements)
    removed = elements.pop(index)
    if not elements:
        return (
            cst.parse_expression("set()")
            if isinstance(collection, cst.Set)
            else collection.with_changes(elements=[])
        )
    if index == len(elements):
        elements[-1] = elements[-1].with_changes(comma=removed.comma)
    if isinstance(collection, cst.Tuple) and len(elements) == 1:
        elements[0] = elements[0].with_changes(comma=cst.Comma())
    return collection.with_changes(elements=elements)


def with_fatal(collection: cst.Set | cst.Tuple | cst.List) -> cst.BaseExpression:
    """``collection`` plus the fatal status 400 (``"400"`` in a table of status strings)."""
    elements = list(collection.elements)
    last = elements[-1]
    if last.comma is cst.MaybeSentinel.DEFAULT or isinstance(collection, cst.Tuple) and len(elements) == 1:
        elements[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    quoted = isinstance(last.value, cst.SimpleString)
    added = cst.Element(cst.SimpleString(f'"{FATAL_EXAMPLE}"') if quoted else cst.Integer(str(FATAL_EXAMPLE)))
    if last.comma is not cst.MaybeSentinel.DEFAULT and not (
        isinstance(collection, cst.Tuple) and len(elements) == 1
    ):
        added = added.with_changes(comma=last.comma)
    return collection.with_changes(elements=[*elements, added])


def _class_of(ctx: SourceContext, assignment: cst.CSTNode, field: str) -> list[str]:
    """The class a classification field belongs to: ``statuses = (429, 503)`` in ``class
    RetryConfig`` is retry config; ``REPR_FIELDS = ("sleep",)`` in ``class RetryAction`` is not."""
    if not set(words(field)) & CLASSIFICATION_WORDS:
        return []
    line = ctx.parent(assignment)
    block = ctx.parent(line) if isinstance(line, cst.SimpleStatementLine) else None
    owner = ctx.parent(block) if block is not None else None
    return [owner.name.value] if isinstance(owner, cst.ClassDef) else []


def _owner_names(ctx: SourceContext, collection: cst.CSTNode) -> tuple[list[str], bool] | None:
    """Names that say what a collection is for (its variable, dict key, keyword, callee) and
    whether it is an argument of a retry library; None for collections owned by a comparison or
    an ``except`` clause (handled where they decide) or by nothing nameable."""
    names: list[str] = []
    for ancestor in ctx.ancestors(collection):
        if isinstance(ancestor, (cst.Lambda, cst.Element, cst.Tuple, cst.List)) or (
            isinstance(ancestor, cst.Call) and identifier(ancestor) in _WRAPPERS
        ):
            continue
        if isinstance(ancestor, cst.Arg):
            if ancestor.keyword is not None:
                names.append(ancestor.keyword.value)
            continue
        if isinstance(ancestor, cst.Call):
            return [*names, identifier(ancestor) or ""], retry_library(ctx, ancestor) is not None
        if isinstance(ancestor, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
            targets = (
                [t.target for t in ancestor.targets]
                if isinstance(ancestor, cst.Assign)
                else [ancestor.target]
            )
            fields = [identifier(t) or "" for t in targets]
            return [*names, *fields, *(c for f in fields for c in _class_of(ctx, ancestor, f))], False
        if isinstance(ancestor, cst.DictElement):
            key = ancestor.key
            value = key.evaluated_value if isinstance(key, cst.SimpleString) else identifier(key)
            return [*names, value if isinstance(value, str) else ""], False
        if isinstance(ancestor, cst.Param):
            return [*names, ancestor.name.value], False
        return None
    return None


def _classifies(collection: cst.Set | cst.Tuple | cst.List) -> bool:
    """Elements a classification holds: HTTP error statuses, error-type strings, exception classes."""
    if not collection.elements:
        return False
    for element in collection.elements:
        value = element.value
        if isinstance(element, cst.StarredElement):
            return False
        if isinstance(value, (cst.Integer, cst.Attribute)) and http_status(value) is not None:
            continue
        if status_string(value) is not None:
            continue  # ``"429"``, ``"5XX"``: an SDK generator's retry table
        if isinstance(value, cst.SimpleString) and set(words(str(value.evaluated_value))) & ERROR_TYPE_WORDS:
            continue  # ``"overloaded_error"``, ``"rate_limit_exceeded"``, ``"timeout"``
        if isinstance(value, (cst.Name, cst.Attribute)) and (identifier(value) or "x")[0].isupper():
            continue  # an exception class or a constant, not ``self.total``
        return False
    return True


def _kind_of_owner(names: list[str], library: bool) -> str | None:
    """What a collection's names say it holds; delays and counts (``RETRY_DELAYS``, ``retry_counts``)
    hold no classification."""
    if any(set(words(n)) & CLASSIFIED_DELAY_WORDS or is_count_name(n) for n in names):
        return None
    if any(is_fatal_name(n) for n in names):
        return "fatal"
    if library or any(is_retry_name(n) for n in names):
        return "retryable"
    return None


def _element_kind(ctx: SourceContext, node: cst.CSTNode) -> str | None:
    """What one member of an unnamed-kind collection means by itself: an error class
    (``httpx.ConnectError``) or its name as a string (``"TimeoutException"``) read by
    :func:`error_kind`."""
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        if not isinstance(value, str) or not value.isidentifier():
            return None
        return error_kind(ctx, cst.Name(value))
    if isinstance(node, (cst.Name, cst.Attribute)):
        return error_kind(ctx, node)
    return None


def _read_by_classifier(ctx: SourceContext, collection: cst.CSTNode) -> bool:
    """A module-level collection whose name says no verdict (``_TRANSPORT_ERROR_NAMES``) is a
    classification when a function that decides a retry reads it (``names &
    _TRANSPORT_ERROR_NAMES`` in ``_is_transport_error``, whose answer the retried attempt
    obeys)."""
    assign = ctx.enclosing(collection, (cst.Assign, cst.AnnAssign))
    if assign is None or ctx.enclosing_function(assign) is not None or ctx.enclosing(assign, (cst.ClassDef,)):
        return False
    targets = [t.target for t in assign.targets] if isinstance(assign, cst.Assign) else [assign.target]
    names = {t.value for t in targets if isinstance(t, cst.Name)}
    if not names:
        return False
    for name in ctx.findall(m.Name()):
        if name.value in names and ctx.enclosing(name, (cst.Assign, cst.AnnAssign)) is not assign:
            function = ctx.enclosing_function(name)
            if function is not None and _decides_retry(ctx, name):
                return True
    return False


def _retried_members(ctx: SourceContext, collection: cst.Set | cst.Tuple | cst.List) -> Iterator[Mutation]:
    """One mutant per member of a collection a retrying handler catches; a fatal class listed
    there (``openai.AuthenticationError``, fast-failed by an earlier handler) is left alone: its
    removal would be no misclassification, or none at all."""
    classes = [el.value for el in collection.elements]
    for index, element in enumerate(collection.elements):
        if _element_kind(ctx, element.value) == "fatal":
            continue
        yield Mutation(
            collection,
            without(collection, index),
            f"{_label(ctx, element.value)} no longer retried",
            equivalent=_kept(ctx, element.value, classes),
        )


def _members_retried(ctx: SourceContext, collection: cst.Set | cst.Tuple | cst.List) -> Iterator[Mutation]:
    """One mutant per member that is retryable by its own meaning, in a collection a retry
    classifier reads."""
    kinds = [_element_kind(ctx, el.value) for el in collection.elements]
    if not kinds or any(k is None for k in kinds):
        return  # a member that means nothing by itself: the collection may be anything
    for index, (element, kind) in enumerate(zip(collection.elements, kinds, strict=True)):
        if kind == "retryable":
            yield Mutation(
                collection, without(collection, index), f"{_label(ctx, element.value)} no longer retried"
            )


def _caught_by_retry(ctx: SourceContext, collection: cst.CSTNode) -> bool:
    """``errors: tuple = (RateLimitError, APIError, ...)`` (a parameter default) or ``TRANSIENT =
    (...)`` whose name a handler of a retry loop catches and goes round again with (``except
    errors as e: ...; time.sleep(delay)``): the collection is the retryable set, whatever its
    name. A name caught by a handler that gives up, or by none in a retry loop, proves nothing."""
    owner = ctx.parent(collection)
    if isinstance(owner, cst.Param):
        names, scope = {owner.name.value}, ctx.enclosing_function(owner)
    elif isinstance(owner, (cst.Assign, cst.AnnAssign)):
        targets = [t.target for t in owner.targets] if isinstance(owner, cst.Assign) else [owner.target]
        names = {t.value for t in targets if isinstance(t, cst.Name)}
        scope = ctx.enclosing_function(owner) or ctx.module
    else:
        return False
    if not names or scope is None:
        return False
    for handler in ctx.descendants(scope, m.ExceptHandler(type=m.Name())):
        if handler.type.value in names and not _handler_gives_up(handler):
            loop = innermost_loop(ctx, handler)
            if loop is not None and is_retry_loop(ctx, loop):
                return True
    return False


def _gives_up_when_listed(ctx: SourceContext, collection: cst.CSTNode) -> bool:
    """``if any(marker in str(e) for marker in ["BadRequestError", "NotFoundError"]): raise e``
    in a retry path: the listed markers make the caught error fatal. The collection is what the
    test iterates; the ``if`` gives up (its last statement raises)."""
    parent = ctx.parent(collection)
    if not isinstance(parent, (cst.CompFor, cst.For)) or parent.iter is not collection:
        return False
    for ancestor in ctx.ancestors(collection):
        if isinstance(ancestor, cst.If):
            last = ancestor.body.body[-1] if ancestor.body.body else None
            gives_up = isinstance(last, cst.SimpleStatementLine) and any(
                isinstance(s, cst.Raise) for s in last.body
            )
            return gives_up and in_retry_decision(ctx, ancestor) and _in_handler(ctx, ancestor)
        if isinstance(ancestor, (cst.BaseSuite, cst.FunctionDef, cst.Lambda)):
            return False
    return False


def _in_handler(ctx: SourceContext, node: cst.CSTNode) -> bool:
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.ExceptHandler):
            return True
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda)):
            return False
    return False


def _kept(ctx: SourceContext, member: cst.BaseExpression, classes: list[cst.BaseExpression]) -> str | None:
    """Why dropping ``member`` from ``classes`` changes nothing (a base class of it stays), or None."""
    reason = subclass_kept(ctx, member, classes)
    if reason is None and caught_by_a_base(ctx, member, classes):
        reason = f"{_label(ctx, member)} derives from another class the tuple still names"
    return reason


def _label(ctx: SourceContext, node: cst.CSTNode) -> str:
    return ctx.code(node).strip()


def _removals(
    ctx: SourceContext, collection: cst.Set | cst.Tuple | cst.List, kind_of: str | None
) -> Iterator[Mutation]:
    """One mutant per element: ``kind_of`` is the collection's meaning, or None to judge each element."""
    for index, element in enumerate(collection.elements):
        code = _status_of(element.value)
        kind = kind_of or ("retryable" if code and is_retryable_status(code) else "fatal" if code else None)
        if kind is None:
            continue
        if len(collection.elements) == 1 and ctx.qualified_names(element.value) & _BROAD:
            # ``retry_on = (Exception,)``: the catch-all; emptied, the collection usually means "the
            # default", which is again every exception -- nothing says one class moved.
            continue
        effect = "no longer retried" if kind == "retryable" else "now retried"
        yield Mutation(collection, without(collection, index), f"{_label(ctx, element.value)} {effect}")
    codes = [_status_of(el.value) for el in collection.elements]
    if codes and all(c is not None and is_retryable_status(c) for c in codes) and kind_of != "fatal":
        if not _decided_elsewhere(ctx, collection, FATAL_EXAMPLE):
            yield Mutation(collection, with_fatal(collection), f"{FATAL_EXAMPLE} (a bad request) now retried")


def _status_of(node: cst.CSTNode) -> int | None:
    """The status ``node`` spells, as an int or a string (``"429"``; a range ``"5XX"`` as 500,
    ``"4XX"`` as 400: retryable and fatal as their class)."""
    code = http_status(node)
    if code is not None:
        return code
    spelled = status_string(node)
    return None if spelled is None else int(spelled[0]) * 100 + (0 if "X" in spelled else int(spelled[1:]))


def _decided_elsewhere(ctx: SourceContext, collection: cst.CSTNode, code: int) -> bool:
    """The code already has its own check nearby (``if status in (400, 401): return None``), so
    adding it to the retryable collection would change nothing."""
    scope = ctx.enclosing_function(collection) or ctx.module
    for literal in ctx.descendants(scope, m.Integer()):
        if http_status(literal) != code:
            continue
        parent = ctx.parent(literal)
        if isinstance(parent, cst.Element):
            return True  # a member of another collection of statuses
        target = parent if isinstance(parent, cst.ComparisonTarget) else None
        if isinstance(parent, cst.Comparison) and parent.left is literal:
            target = parent.comparisons[0]
        if target is not None and isinstance(target.operator, (cst.Equal, cst.NotEqual)):
            return True  # ``status == 400``; a boundary such as ``status >= 400`` decides no single code
    return False


def _status_check(ctx: SourceContext, comparison: cst.Comparison) -> Iterator[Mutation]:
    """``status == 429`` / ``!= 401`` / ``in (429, 529)`` / ``>= 500`` / ``400 <= status < 500``."""
    operands = [comparison.left, *(t.comparator for t in comparison.comparisons)]
    if not any(is_status_name(identifier(op)) for op in operands):
        return
    if len(comparison.comparisons) > 1:
        bounds = [http_status(op) for op in operands]
        if any(b is not None for b in bounds):
            yield Mutation(
                comparison, _FALSE, f"{_label(ctx, comparison)} never holds: that class is misjudged"
            )
        return
    operator, other = comparison.comparisons[0].operator, comparison.comparisons[0].comparator
    if not is_status_name(identifier(comparison.left)):
        other = comparison.left
    code = http_status(other)
    if isinstance(operator, (cst.In, cst.NotIn)) and m.matches(other, _COLLECTION):
        yield from _removals(ctx, other, None)
    elif code is not None and isinstance(operator, (cst.Equal, cst.NotEqual)):
        verdict = _FALSE if isinstance(operator, cst.Equal) else _TRUE
        effect = "no longer retried" if is_retryable_status(code) else "no longer treated as fatal"
        yield Mutation(comparison, verdict, f"status {code} {effect}")
    elif code in (499, 500) and not isinstance(operator, (cst.Equal, cst.NotEqual, cst.In, cst.NotIn)):
        yield Mutation(comparison, _FALSE, f"{_label(ctx, comparison)} never holds: the 4xx/5xx line moves")


def _handler_gives_up(handler: cst.ExceptHandler) -> bool:
    body = handler.body.body
    last = body[-1] if body else None
    if isinstance(last, cst.SimpleStatementLine):
        return any(isinstance(s, (cst.Raise, cst.Return, cst.Break)) for s in last.body)
    return False


def _module_collections(ctx: SourceContext) -> set[str]:
    """Names bound at module level to a tuple/set/list literal (possibly through ``frozenset(...)``)."""
    names = set()
    for statement in ctx.module.body:
        for assign in ctx.descendants(statement, m.Assign() | m.AnnAssign()):
            if ctx.descendants(assign.value, _COLLECTION) if assign.value is not None else False:
                targets = (
                    [t.target for t in assign.targets] if isinstance(assign, cst.Assign) else [assign.target]
                )
                names.update(t.value for t in targets if isinstance(t, cst.Name))
    return names


_BROAD = frozenset({"builtins.Exception", "builtins.BaseException"})


def _handler_types(
    ctx: SourceContext,
    handler: cst.ExceptHandler,
    kinds: set[str | None],
    later: list[cst.ExceptHandler] | None = None,
) -> Iterator[Mutation]:
    """Drop one caught class (``except ()`` catches nothing). ``except Exception`` is left alone:
    removing it flips every failure at once, not one class.

    ``later`` (for a handler that gives up): the handlers after it, up to and including the first
    that retries. A dropped class reaches that retry only if nothing between catches it first (a
    base class caught there, ``except GraphBubbleUp: raise``, is invisible from this file: the
    description says so), and never when the retry catches ``Exception`` and the class derives from
    ``BaseException`` alone (``asyncio.CancelledError``): that mutant is not made."""
    caught = handler.type
    if ctx.qualified_names(caught) & _BROAD:
        return
    effect = "no longer retried" if "retryable" in kinds else "now retried"
    retry_takes_any = True  # the handler the dropped class reaches catches BaseException too
    if later:
        # a class that reaches ``except Exception`` is an Exception: a handler of cancellations
        # and interrupts alone (``except KeyboardInterrupt``) cannot catch it on the way
        retry, between = later[-1], [h for h in later[:-1] if not _catches_only_base(ctx, h)]
        if between:
            first = _label(ctx, between[0].type)
            effect = f"falls through to `except {first}` (retried if that does not catch it)"
        retry_takes_any = retry.type is None or "builtins.BaseException" in ctx.qualified_names(retry.type)

    def reaches_retry(node: cst.CSTNode) -> bool:
        return retry_takes_any or not ctx.qualified_names(node) & BASE_ONLY_ERRORS

    if isinstance(caught, cst.Tuple) and len(caught.elements) > 1:
        classes = [e.value for e in caught.elements]
        for index, element in enumerate(caught.elements):
            if error_kind(ctx, element.value) in kinds and reaches_retry(element.value):
                yield Mutation(
                    caught,
                    without(caught, index),
                    f"{_label(ctx, element.value)} {effect}",
                    equivalent=_kept(ctx, element.value, classes),  # a base stays: still caught
                )
    elif isinstance(caught, cst.Name) and caught.value in _module_collections(ctx):
        return  # ``except RETRYABLE_ERRORS:`` -- its definition in this file is mutated element by element
    elif (
        isinstance(caught, (cst.Name, cst.Attribute))
        and error_kind(ctx, caught) in kinds
        and reaches_retry(caught)
    ):
        empty = cst.Tuple([], lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        yield Mutation(caught, empty, f"{_label(ctx, caught)} {effect}")


def _catches_only_base(ctx: SourceContext, handler: cst.ExceptHandler) -> bool:
    """``except KeyboardInterrupt`` / ``except (asyncio.CancelledError, GeneratorExit)``."""
    classes = caught_classes(handler)
    return bool(classes) and all(ctx.qualified_names(c) & BASE_ONLY_ERRORS for c in classes)


def _except_clauses(ctx: SourceContext, attempt: cst.Try) -> Iterator[Mutation]:
    """In a retry loop, a handler that goes round again retries every type it catches; a handler
    that gives up before such a handler keeps its (fatal) types out of the retry."""
    handlers = list(attempt.handlers)

    def gives_up(handler: cst.ExceptHandler) -> bool:
        # ``if attempt < n - 1: ...; continue`` before a final ``raise ValueError(...)``: the
        # handler retries, and only there. A final raise of a retryable class (``raise
        # APITimeoutError(...) from err``) hands the error on to be retried elsewhere too: what
        # dropping the clause changes is then unknown, so the handler is left as one that gives up.
        if not _handler_gives_up(handler) or not _retries_in_handler(ctx, handler):
            return _handler_gives_up(handler)
        last = handler.body.body[-1].body[-1]
        return isinstance(last, cst.Raise) and exception_verdict(ctx, last.exc) == "retryable"

    for position, handler in enumerate(handlers):
        if handler.type is None:
            continue
        if not gives_up(handler):
            yield from _handler_types(ctx, handler, {"retryable", "fatal", None})
            continue
        retrying = next(
            (i for i, later in enumerate(handlers[position + 1 :], position + 1) if not gives_up(later)),
            None,
        )
        if retrying is not None:
            yield from _handler_types(ctx, handler, {"fatal", None}, handlers[position + 1 : retrying + 1])


def _raises_in(ctx: SourceContext, block: cst.CSTNode, stop: tuple[type, ...]) -> list[cst.Raise]:
    """``raise`` statements of ``block`` that run as part of it: not those of a nested function,
    class or (for a handler) a nested ``try``'s own handlers."""
    found = []
    for raise_ in ctx.descendants(block, m.Raise(exc=m.Call() | m.Name() | m.Attribute())):
        for ancestor in ctx.ancestors(raise_):
            if ancestor is block:
                found.append(raise_)
                break
            if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Lambda, *stop)):
                break
    return found


def _under_status_check(ctx: SourceContext, raise_: cst.Raise, handler: cst.CSTNode) -> bool:
    """The raise is guarded by a status comparison, whose own mutant moves that class."""
    for ancestor in ctx.ancestors(raise_):
        if ancestor is handler:
            return False
        if isinstance(ancestor, cst.If) and any(
            is_status_comparison(ctx, c) for c in ctx.descendants(ancestor.test, m.Comparison())
        ):
            return True
    return False


def _caught_names(handler: cst.ExceptHandler) -> set[str]:
    return {identifier(e) or "" for e in caught_classes(handler)}


def _decides_retry(ctx: SourceContext, node: cst.CSTNode) -> bool:
    """``node`` takes part in the retry decision: in a retry path or a retry call's arguments, in a
    function named for retrying (``_should_retry_exception``, even inside its own loop over the
    ``__cause__`` chain), or in a predicate of this file whose result a retry path reads
    (``_is_network_like_error(error)`` called where the retry is decided)."""
    if in_retry_decision(ctx, node) or _in_retry_named_function(ctx, node):
        return True
    function = ctx.enclosing_function(node)
    if function is None:
        return False
    if runs_as_attempt(ctx, function):
        return True
    return ctx.cached(("misclassify", "feeds-retry", id(function)), lambda: _feeds_retry(ctx, function))


def _in_retry_named_function(ctx: SourceContext, node: cst.CSTNode) -> bool:
    function = ctx.enclosing_function(node)
    return function is not None and (is_retry_name(function.name.value) or is_fatal_name(function.name.value))


def _feeds_retry(ctx: SourceContext, function: cst.FunctionDef) -> bool:
    from mutagent.anatomy.callgraph import callee

    for call in ctx.nodes(cst.Call):
        if callee(ctx, call) is function and ctx.enclosing_function(call) is not function:
            outer = ctx.enclosing_function(call)
            if in_retry_decision(ctx, call) or (
                outer is not None and (is_retry_name(outer.name.value) or runs_as_attempt(ctx, outer))
            ):
                return True
            if _in_gate_test(ctx, call):
                return True
    return False


def _in_gate_test(ctx: SourceContext, node: cst.CSTNode) -> bool:
    """``node`` is part of the test of a :func:`verdict_gate`."""
    child = node
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.If):
            return child is ancestor.test and verdict_gate(ctx, ancestor)
        if isinstance(ancestor, (cst.BaseSuite, cst.FunctionDef, cst.Lambda)):
            return False
        child = ancestor
    return False


def _retries_in_handler(ctx: SourceContext, handler: cst.ExceptHandler) -> bool:
    """The handler itself goes round the retry loop again (a ``continue`` of its own loop)."""
    loop = innermost_loop(ctx, handler)
    return loop is not None and any(
        innermost_loop(ctx, node) is loop for node in ctx.descendants(handler.body, m.Continue())
    )


def _sends_or_decides(ctx: SourceContext, attempt: cst.Try, loop: cst.CSTNode | None) -> bool:
    """A conversion classifies an error for a retry only where an attempt is made: in a retry
    path, or around a request being sent (a model or HTTP call), whose caller may retry it. A
    ``try`` that only reads an already open stream converts errors nobody retries (a half-read
    stream cannot be replayed)."""
    from mutagent.anatomy.streams.clients import is_http_call, is_model_call

    if in_retry_decision(ctx, attempt) or (loop is not None and is_retry_loop(ctx, loop)):
        return True
    return any(is_model_call(c) or is_http_call(ctx, c) for c in ctx.descendants(attempt.body, m.Call()))


def _override_reads(ctx: SourceContext, function: cst.CSTNode) -> set[str]:
    """Local names that hold the server's retry-override header (``x-should-retry``), directly
    or through a normalising step (``value = header.lower().strip()``)."""
    tainted: set[str] = set()
    assigns = list(ctx.descendants(function, m.Assign(targets=[m.AssignTarget(m.Name())])))
    changed = True
    while changed:
        changed = False
        for assign in assigns:
            name = assign.targets[0].target.value
            if name in tainted:
                continue
            strings = {
                str(s.evaluated_value).lower() for s in ctx.descendants(assign.value, m.SimpleString())
            }
            names = {n.value for n in ctx.descendants(assign.value, m.Name())}
            if strings & RETRY_OVERRIDE_HEADERS or names & tainted:
                tainted.add(name)
                changed = True
    return tainted


def _override_ignored(ctx: SourceContext) -> Iterator[Mutation]:
    """``if should_retry_header == "true": return True`` obeys the server before the status rules;
    the mutant never sees the header, so the status rules decide alone."""
    for function in ctx.findall(m.FunctionDef()):
        tainted = _override_reads(ctx, function)
        for comparison in ctx.descendants(function.body, m.Comparison()):
            if ctx.enclosing_function(comparison) is not function or len(comparison.comparisons) != 1:
                continue
            target = comparison.comparisons[0]
            if not isinstance(target.operator, cst.Equal):
                continue
            sides = (comparison.left, target.comparator)
            verdicts = [str(s.evaluated_value).lower() for s in sides if isinstance(s, cst.SimpleString)]
            reads = [
                s
                for s in sides
                if (isinstance(s, cst.Name) and s.value in tainted)
                or {str(x.evaluated_value).lower() for x in ctx.descendants(s, m.SimpleString())}
                & RETRY_OVERRIDE_HEADERS
            ]
            if len(verdicts) == 1 and verdicts[0] in ("true", "false") and reads:
                what = "an order to retry" if verdicts[0] == "true" else "an order not to retry"
                yield Mutation(
                    comparison,
                    _FALSE,
                    f"server's x-should-retry: {verdicts[0]} ({what}) ignored: the status rules decide alone",
                )


def _conversions(ctx: SourceContext, attempt: cst.Try) -> Iterator[Mutation]:
    """A handler that turns the caught error into a retryable exception (``except
    openai.RateLimitError as err: raise TransientFailure(...) from err``) classifies it, wherever the
    retry loop is. The mutant re-raises the original error instead, which the loop does not retry;
    a handler converting into a fatal exception raises a retryable sibling handler's class instead."""
    handlers = [
        h for h in attempt.handlers if h.type is not None and not ctx.qualified_names(h.type) & _BROAD
    ]
    converted: list[tuple[cst.ExceptHandler, cst.Raise, str]] = []
    for handler in handlers:
        if _retries_in_handler(ctx, handler):
            # ``except Timeout: if retries_left: ...; continue`` then ``raise APITimeoutError``: the
            # raise is the give-up after the retry decision; its type is what the caller sees.
            continue
        for raise_ in _raises_in(ctx, handler.body, (cst.ExceptHandler, cst.ExceptStarHandler)):
            verdict = exception_verdict(ctx, raise_.exc)
            raised = identifier(raise_.exc)
            if (
                verdict
                and raised not in _caught_names(handler)
                and not _under_status_check(ctx, raise_, handler)
            ):
                converted.append((handler, raise_, verdict))
    retryable = next((r.exc for _, r, v in converted if v == "retryable"), None)
    for handler, raise_, verdict in converted:
        caught, raised = _label(ctx, handler.type), identifier(raise_.exc)
        if verdict == "retryable":
            yield Mutation(
                raise_, cst.Raise(), f"{caught} re-raised as is, not as {raised}: no longer retried"
            )
        elif retryable is not None:
            target = raise_.exc.func if isinstance(raise_.exc, cst.Call) else raise_.exc
            source = retryable.func if isinstance(retryable, cst.Call) else retryable
            yield Mutation(
                target, source, f"{caught} raised as {identifier(source)}, not {raised}: now retried"
            )


def _branch_verdicts(ctx: SourceContext, comparison: cst.CSTNode) -> set[str]:
    """What the classes raised by the ``if`` whose test holds ``comparison`` tell the retry loop
    (``if err.status_code >= 500: raise TransientFailure(...)`` -> ``{"retryable"}``)."""
    for ancestor in ctx.ancestors(comparison):
        if isinstance(ancestor, cst.If):
            verdicts = {exception_verdict(ctx, r.exc) for r in _raises_in(ctx, ancestor.body, ())}
            return {v for v in verdicts if v}
        if isinstance(ancestor, (cst.BaseSuite, cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return set()
    return set()


def _decides_by_raising(ctx: SourceContext, comparison: cst.Comparison) -> bool:
    """``if err.status_code >= 500: raise TransientFailure(...)``: the status check picks the
    exception the retry loop reacts to, even outside the loop."""
    return bool(_branch_verdicts(ctx, comparison))


def _named_error_check(ctx: SourceContext, comparison: cst.Comparison) -> Iterator[Mutation]:
    """``if ex_info.name == "ContextWindowExceededError": exhausted = True; break`` in a retry
    handler: the error is picked out by its class name and given up on (the ``if`` ends in
    ``break``/``raise``/``return``). The mutant never picks it out, so it follows the general
    verdict. A name compared where nothing gives up (``if kind == "TimeoutError": log(...)``) is
    no classification."""
    if len(comparison.comparisons) != 1 or not isinstance(comparison.comparisons[0].operator, cst.Equal):
        return
    literal = next(
        (
            s
            for s in (comparison.left, comparison.comparisons[0].comparator)
            if isinstance(s, cst.SimpleString)
        ),
        None,
    )
    value = literal.evaluated_value if literal is not None else None
    if not isinstance(value, str) or not value.isidentifier() or not value[:1].isupper():
        return
    if not set(words(value)) & ERROR_TYPE_WORDS:
        return
    branch = ctx.parent(comparison)
    if not isinstance(branch, cst.If) or branch.test is not comparison or not branch.body.body:
        return
    last = branch.body.body[-1]
    if not (
        isinstance(last, cst.SimpleStatementLine)
        and isinstance(last.body[-1], (cst.Break, cst.Raise, cst.Return))
    ):
        return
    if not _in_handler(ctx, branch):
        return
    yield Mutation(comparison, _FALSE, f"{value} is no longer given up on: it gets the general retry verdict")


def _error_code_check(ctx: SourceContext, comparison: cst.Comparison) -> Iterator[Mutation]:
    """``getattr(error, "code", "") == "conversation_locked"`` (or ``error.code == "..."``) in a
    predicate of this file whose "yes" the retry path reads (``_is_conversation_locked_error``):
    the provider's error code picks out one failure worth another attempt. The mutant never
    matches it. A predicate named for giving up (``_is_abort_like_error``) is left alone: there
    "yes" means the opposite; so is a code compared outside any retry decision."""
    if len(comparison.comparisons) != 1 or not isinstance(comparison.comparisons[0].operator, cst.Equal):
        return
    sides = (comparison.left, comparison.comparisons[0].comparator)
    literal = next((x for x in sides if isinstance(x, cst.SimpleString)), None)
    read = next((x for x in sides if x is not literal), None)
    if literal is None or read is None or not isinstance(literal.evaluated_value, str):
        return
    reads_code = (isinstance(read, cst.Attribute) and read.attr.value == "code") or (
        m.matches(read, m.Call(func=m.Name("getattr")))
        and len(read.args) > 1
        and m.matches(read.args[1].value, m.SimpleString())
        and read.args[1].value.evaluated_value == "code"
    )
    function = ctx.enclosing_function(comparison)
    if not reads_code or function is None or is_fatal_name(function.name.value):
        return
    if in_retry_decision(ctx, comparison) or not _decides_retry(ctx, comparison):
        return  # inside the retry path itself the branch may mean anything; a predicate says yes
    yield Mutation(
        comparison, _FALSE, f"error code {literal.value} no longer matched: that failure is no longer retried"
    )


def _configured_status_match(ctx: SourceContext, comparison: cst.Comparison) -> Iterator[Mutation]:
    """``if res.status_code == parsed_code: raise TemporaryError(res)`` and the range form
    ``if code_range <= status_major < code_range + 1:``: the response's status is matched against
    a configured retryable code (no literal in sight) and the branch raises the class the retry
    loop retries. The mutant never matches, so that configured code is no longer retried. A status
    compared with a variable whose branch raises nothing retryable (``if status == expected:
    return body``) is no classification."""
    operands = [comparison.left, *(t.comparator for t in comparison.comparisons)]
    if not any(is_status_name(identifier(op)) for op in operands):
        return
    if any(_status_of(op) is not None for op in operands):
        return  # a literal: ``_status_check`` moves that code
    if (
        len(comparison.comparisons) == 1
        and isinstance(comparison.comparisons[0].operator, cst.In)
        and is_status_name(identifier(comparison.left))
        and is_retry_name(identifier(comparison.comparisons[0].comparator))
        and identifier(comparison.comparisons[0].comparator) not in _module_collections(ctx)
        and _decides_retry(ctx, comparison)
    ):
        # (a set literal of this module, ``RETRYABLE_STATUSES = {429, ...}``, is mutated one
        # member at a time where it is defined)
        # ``e.code in retriable_codes`` in a retry predicate: the configured set is consulted
        yield Mutation(
            comparison,
            _FALSE,
            f"{_label(ctx, comparison)} never holds: a status in the configured set is no longer retried",
        )
        return
    flag = _sets_retry_flag(ctx, comparison)
    if flag is None and _branch_verdicts(ctx, comparison) != {"retryable"}:
        return
    single = len(comparison.comparisons) == 1
    if single and not isinstance(comparison.comparisons[0].operator, cst.Equal):
        return
    what = "the configured status" if single else "the configured status range"
    if flag is not None:
        effect = f"no longer sets {flag} (retried)"
    else:
        raised = next(
            identifier(r.exc)
            for a in ctx.ancestors(comparison)
            if isinstance(a, cst.If)
            for r in _raises_in(ctx, a.body, ())
        )
        effect = f"no longer raises {raised} (retried)"
    yield Mutation(comparison, _FALSE, f"{_label(ctx, comparison)} never holds: {what} {effect}")


def _sets_retry_flag(ctx: SourceContext, comparison: cst.Comparison) -> str | None:
    """``if res.status_code == parsed_code: should_retry = True``: the branch only raises the
    retry flag (read later by ``if should_retry: raise TemporaryError(res)``). The flag's name,
    or None."""
    branch = ctx.parent(comparison)
    if not isinstance(branch, cst.If) or branch.test is not comparison or len(branch.body.body) != 1:
        return None
    line = branch.body.body[0]
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
        return None
    assign = line.body[0]
    if not m.matches(assign, m.Assign(targets=[m.AssignTarget(m.Name())], value=m.Name("True"))):
        return None
    name = assign.targets[0].target.value
    return name if is_retry_name(name) or set(words(name)) & VERDICT_WORDS else None


_PREDICATE_WORDS = frozenset({"is", "should", "can", "has", "may"})


def _is_predicate_call(node: cst.CSTNode) -> bool:
    """``_is_transport_error(exc)``, ``should_retry(err)``: a call that answers a yes/no question."""
    if not isinstance(node, cst.Call):
        return False
    parts = words(identifier(node) or "")
    return bool(parts) and parts[0] in _PREDICATE_WORDS


_ERROR_ARGUMENT_WORDS = frozenset({"e", "ex", "exc", "err", "error", "exception", "failure"})


def _names_the_error(ctx: SourceContext, node: cst.CSTNode, arg: cst.BaseExpression) -> bool:
    """``arg`` is the failure being judged: the name an ``except ... as`` clause bound, or a
    parameter named for an error (``exc``, ``last_error``)."""
    if not isinstance(arg, cst.Name):
        return False
    for handler in ctx.ancestors(node):
        if isinstance(handler, cst.ExceptHandler) and handler.name is not None:
            if m.matches(handler.name.name, m.Name(arg.value)):
                return True
    return bool(set(words(arg.value)) & _ERROR_ARGUMENT_WORDS)


def _builds_retryable(ctx: SourceContext, node: cst.CSTNode) -> bool:
    """``def _fallback_error_for(...) -> MidStreamFallbackError | None``: the function returns the
    error the retry reacts to (or nothing), so its tests decide whether there is another attempt."""
    function = ctx.enclosing_function(node)
    if function is None or function.returns is None:
        return False
    annotation = function.returns.annotation
    return any(
        exception_verdict(ctx, name) == "retryable"
        for name in ctx.descendants(annotation, m.Name() | m.Attribute())
    )


def _classifier_calls(ctx: SourceContext) -> Iterator[Mutation]:
    """``return attempt < retries and is_retryable_lm_error(exc)``, ``if attempt >= n or not
    is_transient(err): raise``: a predicate defined elsewhere classifies the caught error where
    the retry is decided, beside the bound. Its body is out of reach, so the mutant answers yes
    at the call: every error counts as transient and a 400/401 is resent until the bound.
    A predicate of this file is mutated inside (one class at a time), not here; a call that
    judges no error (``is_retryable(config)``) or is not where a retry is decided classifies
    nothing."""
    from mutagent.anatomy.callgraph import callee

    for call in ctx.findall(m.Call(args=[m.Arg(keyword=None)])):
        name = identifier(call) or ""
        parts = set(words(name))
        if not (
            parts & {"retryable", "retriable", "transient", "recoverable"}
            or (_is_predicate_call(call) and "retry" in parts)
        ):
            continue
        judged = call.args[0].value
        by_status = is_status_name(identifier(judged))  # ``attempt.should_retry_status(status_code)``
        if is_fatal_name(name) or not (by_status or _names_the_error(ctx, call, judged)):
            continue
        if callee(ctx, call) is not None:
            continue
        if not (
            in_retry_decision(ctx, call)
            or _in_retry_named_function(ctx, call)
            or _builds_retryable(ctx, call)
        ):
            continue
        if not _is_predicate_call(call):
            continue
        what = "status" if by_status else "error"
        yield Mutation(
            call,
            _TRUE,
            f"{_label(ctx, call)} always holds: every {what} counts as transient, a fatal one "
            "(400/401) is now retried",
        )


def _reraise_gates(ctx: SourceContext) -> Iterator[Mutation]:
    """``except Exception as exc: if _is_transport_error(exc) and retry_connection_errors: raise``
    followed by ``raise PermanentError(exc)``, or ``if not _is_transport_timeout(e) and ...:
    raise mapped`` followed by ``raise MidStreamFallbackError(...)``: the ``if`` is a
    :func:`verdict_gate` and its predicates classify the error. The mutant makes one predicate
    answer no: the errors it picks out take the other way (given up, or retried). An ``if`` with
    no classified raise after it (``if is_closed(exc): raise`` then ``log(exc)``) decides no
    retry."""
    for branch in ctx.findall(m.If()):
        if not verdict_gate(ctx, branch):
            continue
        first = branch.body.body[-1].body[-1]
        body_retries = exception_verdict(ctx, first.exc) == "retryable" if first.exc is not None else True
        for leaf in condition_leaves(branch.test):
            inner = negated(leaf)
            call = inner if inner is not None else leaf
            if not _is_predicate_call(call):
                continue
            # the predicate's "yes" sends its errors into the body (or, negated, past it)
            yes_retries = body_retries if inner is None else not body_retries
            effect = "no longer retried" if yes_retries else "now retried"
            yield Mutation(call, _FALSE, f"{_label(ctx, call)} never holds: those errors are {effect}")


def _only_words_differ(ctx: SourceContext, call: cst.Call) -> bool:
    """The class test picks words, not a retry: ``kind = 'timeout' if isinstance(e, Timeout) else
    'connection error'`` (a log label), or ``if isinstance(e, Timeout): raise ValueError('timed
    out')`` followed by ``raise ValueError('failed')`` (the same class either way)."""
    parent = ctx.parent(call)
    if isinstance(parent, cst.IfExp) and parent.test is call:
        return all(
            isinstance(b, (cst.SimpleString, cst.FormattedString)) for b in (parent.body, parent.orelse)
        )
    if not (isinstance(parent, cst.If) and parent.test is call and parent.orelse is None):
        return False
    block = ctx.parent(parent)
    if not isinstance(block, cst.IndentedBlock):
        return False
    statements = list(block.body)
    position = statements.index(parent)
    inside = parent.body.body[-1] if parent.body.body else None
    after = statements[position + 1] if position + 1 < len(statements) else None
    raised = []
    for statement in (inside, after):
        last = statement.body[-1] if isinstance(statement, cst.SimpleStatementLine) else None
        if not isinstance(last, cst.Raise) or last.exc is None:
            return False
        raised.append(ctx.code(last.exc.func if isinstance(last.exc, cst.Call) else last.exc))
    return raised[0] == raised[1]


def _named_verdict(ctx: SourceContext, call: cst.Call) -> bool:
    """``is_retryable = isinstance(error, (RateLimitError, ...)) or ...``: the test's answer is
    stored under a name that says it is the retry verdict."""
    assign = ctx.enclosing(call, (cst.Assign, cst.AnnAssign, cst.FunctionDef, cst.Lambda))
    if isinstance(assign, cst.Assign):
        targets = [t.target for t in assign.targets]
    elif isinstance(assign, cst.AnnAssign):
        targets = [assign.target]
    else:
        return False
    return any(set(words(identifier(t) or "")) & VERDICT_WORDS for t in targets)


def _isinstance_check(ctx: SourceContext, call: cst.Call) -> Iterator[Mutation]:
    """``isinstance(err, anthropic.RateLimitError)`` / ``isinstance(err, (Timeout, AuthError))``."""
    classes = call.args[1].value
    if isinstance(classes, cst.Tuple):
        for index, element in enumerate(classes.elements):
            kind = error_kind(ctx, element.value)
            if kind and len(classes.elements) > 1:
                effect = "no longer retried" if kind == "retryable" else "no longer treated as fatal"
                yield Mutation(
                    classes,
                    without(classes, index),
                    f"{_label(ctx, element.value)} {effect}",
                    equivalent=_kept(ctx, element.value, [e.value for e in classes.elements]),
                )
    elif isinstance(classes, cst.BinaryOperation) and isinstance(classes.operator, cst.BitOr):
        members = _union_members(classes)
        for index, member in enumerate(members):
            kind = error_kind(ctx, member)
            if kind:
                effect = "no longer retried" if kind == "retryable" else "no longer treated as fatal"
                rest = members[:index] + members[index + 1 :]
                union = rest[0]
                for other in rest[1:]:
                    union = cst.BinaryOperation(left=union, operator=cst.BitOr(), right=other)
                equivalent = subclass_kept(ctx, member, members) or _covered_by_sibling(ctx, call, member)
                yield Mutation(classes, union, f"{_label(ctx, member)} {effect}", equivalent=equivalent)
    elif error_kind(ctx, classes):
        effect = (
            "no longer retried" if error_kind(ctx, classes) == "retryable" else "no longer treated as fatal"
        )
        yield Mutation(call, _FALSE, f"{_label(ctx, classes)} {effect}")


def _covered_by_sibling(ctx: SourceContext, call: cst.Call, member: cst.BaseExpression) -> str | None:
    """``Normalized(is_network_error=_is_network_like_error(error), is_timeout=isinstance(error,
    APITimeoutError | TimeoutError))``: a class dropped from one field is still flagged by a
    sibling field whose predicate (a function of this file) tests that class too, and the
    policy retries either flag. The reason, or None."""
    from mutagent.anatomy.callgraph import callee

    arg = next(
        (
            a
            for a in ctx.ancestors(call)
            if isinstance(a, (cst.FunctionDef, cst.Lambda))
            or (isinstance(a, cst.Arg) and a.keyword is not None)
        ),
        None,
    )
    record = ctx.parent(arg) if isinstance(arg, cst.Arg) else None
    if not isinstance(record, cst.Call):
        return None
    name = identifier(member)
    for sibling in record.args:
        if sibling is arg or not isinstance(sibling.value, cst.Call):
            continue
        if sibling.keyword is None or is_fatal_name(sibling.keyword.value):
            continue  # ``is_abort=...`` flags the class for giving up, not for another attempt
        predicate = callee(ctx, sibling.value)
        if predicate is None:
            continue
        for test in ctx.descendants(predicate, m.Call(func=m.Name("isinstance"))):
            if len(test.args) > 1 and name in {identifier(c) for c in _union_members(test.args[1].value)} | {
                identifier(e.value) for e in ctx.descendants(test.args[1].value, m.Element())
            }:
                field = sibling.keyword.value if sibling.keyword else identifier(sibling.value)
                return f"{name} is still flagged by {field}, which the retry also reads"
    return None


def _union_members(union: cst.BaseExpression) -> list[cst.BaseExpression]:
    """``A | B | C`` (an ``isinstance`` union of classes) -> ``[A, B, C]``."""
    if isinstance(union, cst.BinaryOperation) and isinstance(union.operator, cst.BitOr):
        return _union_members(union.left) + _union_members(union.right)
    return [union]


def _library_single_class(ctx: SourceContext, call: cst.Call) -> Iterator[Mutation]:
    """tenacity's ``retry_if_exception_type(E)`` and backoff's ``on_exception(wait, E)`` with one class."""
    if retry_library(ctx, call) is None:
        return
    qualified = {q.rsplit(".", 1)[-1] for q in ctx.qualified_names(call)}
    if qualified & {"retry_if_exception_type", "retry_if_not_exception_type"} and call.args:
        arg = call.args[0]
    elif "on_exception" in qualified and len(call.args) > 1:
        arg = call.args[1]
    else:
        return
    if isinstance(arg.value, (cst.Name, cst.Attribute)):
        effect = "now retried" if "retry_if_not_exception_type" in qualified else "no longer retried"
        empty = cst.Tuple([], lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        yield Mutation(arg.value, empty, f"{_label(ctx, arg.value)} {effect}")


_BOOL = m.Name("True") | m.Name("False")


def _verdict_flags(ctx: SourceContext) -> Iterator[Mutation]:
    """``retryable = True`` in a class body or anywhere as an assignment, ``retryable=False`` as a
    keyword: the literal verdict is flipped."""
    sites = [(a.keyword, a.value) for a in ctx.findall(m.Arg(keyword=m.Name(), value=_BOOL))]
    sites += [
        (a.targets[0].target, a.value) for a in ctx.findall(m.Assign(targets=[m.AssignTarget()], value=_BOOL))
    ]
    sites += [(a.target, a.value) for a in ctx.findall(m.AnnAssign(value=_BOOL))]
    for target, value in sites:
        name = identifier(target) or ""
        if set(words(name)) & VERDICT_WORDS:
            flipped = _FALSE if value.value == "True" else _TRUE
            yield Mutation(value, flipped, f"{name} flipped to {flipped.value}")


def _verdict_rows(ctx: SourceContext) -> Iterator[Mutation]:
    """``ExInfo("RateLimitError", True, ...)`` where ``ExInfo`` is a record of this file whose
    ``retry: bool`` field is the verdict (see :func:`verdict_fields`): the row's literal verdict
    is flipped, so that one error moves across the line."""
    records = verdict_fields(ctx)
    if not records:
        return
    for call in ctx.findall(m.Call(func=m.Name())):
        record = records.get(call.func.value)
        if record is None:
            continue
        index, field = record
        positional = [a for a in call.args if a.keyword is None and not a.star]
        chosen = next((a for a in call.args if a.keyword is not None and a.keyword.value == field), None)
        if chosen is None and index < len(positional):
            chosen = positional[index]
        if chosen is None or not m.matches(chosen.value, _BOOL):
            continue
        first = positional[0].value if positional and positional[0] is not chosen else None
        what = _label(ctx, first) if first is not None else _label(ctx, call.func)
        fatal_field = is_fatal_name(field)
        retried_now = (chosen.value.value == "True") == fatal_field
        flipped = _FALSE if chosen.value.value == "True" else _TRUE
        effect = "now retried" if retried_now else "no longer retried"
        # the whole row is the mutated node: its error name is part of what the mutant shows
        row = call.with_changes(args=[a.with_changes(value=flipped) if a is chosen else a for a in call.args])
        yield Mutation(call, row, f"{what}: {field} flipped to {flipped.value}, {effect}")
        yield from _special_case(ctx, call, f"{field}={chosen.value.value}")


def _special_case(ctx: SourceContext, row: cst.Call, verdict: str) -> Iterator[Mutation]:
    """``if "boto3" in str(ex): return ExInfo("APIConnectionError", False, ...)``: a special case
    that overrides the table's verdict for one kind of error. The mutant never takes it, so that
    error gets the table's verdict instead (the opposite one, for a special case worth writing)."""
    statement = ctx.parent(ctx.parent(row))
    if not isinstance(ctx.parent(row), cst.Return) or not isinstance(statement, cst.SimpleStatementLine):
        return
    block = ctx.parent(statement)
    branch = ctx.parent(block) if isinstance(block, cst.IndentedBlock) else None
    if not isinstance(branch, cst.If) or branch.orelse is not None or branch.body.body[0] is not statement:
        return
    yield Mutation(
        branch.test,
        _FALSE,
        f"{_label(ctx, branch.test)} never holds: that error no longer gets its special verdict "
        f"({verdict}), the table's applies",
    )


class MisclassifyRetryable(Operator):
    name = "misclassify-retryable"
    description = "One retryable status/error is treated as fatal, or one fatal one as retryable."
    failure = (
        "The agent gives up on a transient failure (429, 529, 5xx, a timeout, a dropped connection) that one "
        "more attempt would have fixed, or keeps resending a request the provider rejected for good (400, "
        "401, 403, 404)."
    )
    hint = (
        "For each class of failure the fake server can produce, assert the decision: a 429/529/5xx is "
        "retried (two requests), a 400/401 fails at once (one request, the error surfaced)."
    )
    examples = (
        Example(
            before="RETRYABLE_STATUSES = frozenset({408, 429, 529})\n",
            after="RETRYABLE_STATUSES = frozenset({408, 529})\n",
            note="module constant of retryable statuses",
        ),
        Example(
            before=(
                "import time\n"
                "import httpx\n\n"
                "def post(client, body, attempts=3):\n"
                "    for attempt in range(attempts):\n"
                "        r = client.post('/v1/chat/completions', json=body)\n"
                "        if r.status_code == 429 or r.status_code >= 500:\n"
                "            time.sleep(2 ** attempt)\n"
                "            continue\n"
                "        return r\n"
            ),
            after=(
                "import time\n"
                "import httpx\n\n"
                "def post(client, body, attempts=3):\n"
                "    for attempt in range(attempts):\n"
                "        r = client.post('/v1/chat/completions', json=body)\n"
                "        if r.status_code == 429 or False:\n"
                "            time.sleep(2 ** attempt)\n"
                "            continue\n"
                "        return r\n"
            ),
            note="raw httpx loop: the 5xx boundary",
        ),
        Example(
            before=(
                "import asyncio\n"
                "from anthropic import APIConnectionError, AuthenticationError, InternalServerError\n"
                "from anthropic import RateLimitError as RLE\n\n"
                "async def ask(client, attempts, **kw):\n"
                "    for attempt in range(attempts):\n"
                "        try:\n"
                "            return await client.messages.create(**kw)\n"
                "        except AuthenticationError:\n"
                "            raise\n"
                "        except (RLE, InternalServerError, APIConnectionError):\n"
                "            await asyncio.sleep(attempt)\n"
            ),
            after=(
                "import asyncio\n"
                "from anthropic import APIConnectionError, AuthenticationError, InternalServerError\n"
                "from anthropic import RateLimitError as RLE\n\n"
                "async def ask(client, attempts, **kw):\n"
                "    for attempt in range(attempts):\n"
                "        try:\n"
                "            return await client.messages.create(**kw)\n"
                "        except AuthenticationError:\n"
                "            raise\n"
                "        except (RLE, APIConnectionError):\n"
                "            await asyncio.sleep(attempt)\n"
            ),
            note="async anthropic loop: except clauses decide",
        ),
        Example(
            before=(
                "import openai\n\n"
                "def should_retry(error: Exception) -> bool:\n"
                "    if isinstance(error, openai.APIStatusError):\n"
                "        return error.status_code not in (400, 401, 403, 404)\n"
                "    return isinstance(error, openai.APITimeoutError)\n"
            ),
            after=(
                "import openai\n\n"
                "def should_retry(error: Exception) -> bool:\n"
                "    if isinstance(error, openai.APIStatusError):\n"
                "        return error.status_code not in (400, 403, 404)\n"
                "    return isinstance(error, openai.APITimeoutError)\n"
            ),
            note="openai predicate helper: the fatal exclusion list",
        ),
        Example(
            before=(
                "from pydantic import BaseModel, Field\n\n"
                "class RetryConfig(BaseModel):\n"
                "    max_attempts: int = 3\n"
                "    retry_on: list[int] = Field(default=[429, 503])\n"
            ),
            after=(
                "from pydantic import BaseModel, Field\n\n"
                "class RetryConfig(BaseModel):\n"
                "    max_attempts: int = 3\n"
                "    retry_on: list[int] = Field(default=[429, 503, 400])\n"
            ),
            note="pydantic config: a fatal status added",
        ),
        Example(
            before=(
                "class StreamError(Exception):\n"
                "    retryable = True\n\n\n"
                "class OutputLimitError(StreamError):\n"
                "    retryable = False\n"
            ),
            after=(
                "class StreamError(Exception):\n"
                "    retryable = True\n\n\n"
                "class OutputLimitError(StreamError):\n"
                "    retryable = True\n"
            ),
            note="error classes carrying their own verdict",
        ),
        Example(
            before=(
                "import openai\n\n"
                "def open_stream(client, **kw):\n"
                "    try:\n"
                "        return client.chat.completions.create(stream=True, **kw)\n"
                "    except openai.RateLimitError as err:\n"
                "        raise TransientFailure(str(err)) from err\n"
            ),
            after=(
                "import openai\n\n"
                "def open_stream(client, **kw):\n"
                "    try:\n"
                "        return client.chat.completions.create(stream=True, **kw)\n"
                "    except openai.RateLimitError as err:\n"
                "        raise\n"
            ),
            note="call-site helper: a provider error converted into the loop's retryable exception",
        ),
        Example(
            before=(
                "import openai\n\n"
                "def open_stream(client, **kw):\n"
                "    try:\n"
                "        return client.chat.completions.create(stream=True, **kw)\n"
                "    except openai.APIStatusError as err:\n"
                "        if err.status_code >= 500 or err.status_code == 408:\n"
                "            raise TransientFailure(str(err)) from err\n"
                "        raise\n"
            ),
            after=(
                "import openai\n\n"
                "def open_stream(client, **kw):\n"
                "    try:\n"
                "        return client.chat.completions.create(stream=True, **kw)\n"
                "    except openai.APIStatusError as err:\n"
                "        if err.status_code >= 500 or False:\n"
                "            raise TransientFailure(str(err)) from err\n"
                "        raise\n"
            ),
            note="call-site helper: a status comparison picks the retryable exception",
        ),
        Example(
            before=(
                "import anthropic\n\n"
                "async def attempt(client, body):\n"
                "    try:\n"
                "        return await client.messages.create(**body)\n"
                "    except anthropic.AuthenticationError as exc:\n"
                "        raise PermanentError('bad key') from exc\n"
                "    except anthropic.InternalServerError as exc:\n"
                "        raise TryAgain(str(exc)) from exc\n"
            ),
            after=(
                "import anthropic\n\n"
                "async def attempt(client, body):\n"
                "    try:\n"
                "        return await client.messages.create(**body)\n"
                "    except anthropic.AuthenticationError as exc:\n"
                "        raise TryAgain('bad key') from exc\n"
                "    except anthropic.InternalServerError as exc:\n"
                "        raise TryAgain(str(exc)) from exc\n"
            ),
            note="call-site helper: a fatal conversion turned into the retryable one",
        ),
        Example(
            before=(
                "def check(response):\n"
                "    if response.status in {429, 503}:\n"
                "        raise RetryLater(response.reason)\n"
                "    response.raise_for_status()\n"
            ),
            after=(
                "def check(response):\n"
                "    if response.status in {503}:\n"
                "        raise RetryLater(response.reason)\n"
                "    response.raise_for_status()\n"
            ),
            note="status set deciding a retryable raise outside the loop",
        ),
        Example(
            before=(
                "import logging\n"
                "import openai\n\n"
                "log = logging.getLogger(__name__)\n\n"
                "def fetch(client, settings, **kw):\n"
                "    try:\n"
                "        response = client.chat.completions.with_raw_response.create(**kw)\n"
                "    except openai.APIStatusError as err:\n"
                "        log.warning('model call failed: %s', err)\n"
                "        raise\n"
                "    except KeyError as err:\n"
                "        raise ConfigError(str(err)) from err\n"
                "    if response.status_code == 200:\n"
                "        return response.parse()\n"
                "    raise RetriesExhausted(response.status_code)\n"
            ),
            note="a handler that logs and re-raises, a domain error, a success check",
        ),
        Example(
            before=(
                "def route(status, page):\n"
                "    if status == 404:\n"
                "        return 'not found'\n"
                "    if status >= 500:\n"
                "        return 'server error'\n"
                "    return page\n\n"
                "MESSAGES = {404: 'Not Found', 429: 'Too Many Requests'}\n"
            ),
            note="a routing table and a status-to-text map decide no retry",
        ),
        Example(
            before=(
                "def parse_events(lines, handlers):\n"
                "    for line in lines:\n"
                "        try:\n"
                "            handlers[line.kind](line)\n"
                "        except (KeyError, TimeoutError):\n"
                "            continue\n\n"
                "RETRY_DELAYS = (0.5, 1.0, 2.0)\n"
            ),
            note="an except clause in a loop over data, and a delay schedule",
        ),
        Example(
            before=(
                "def should_retry(response):\n"
                "    should_retry_header = response.headers.get('x-should-retry')\n"
                "    if should_retry_header == 'true':\n"
                "        return True\n"
                "    if should_retry_header == 'false':\n"
                "        return False\n"
                "    return response.status_code == 429 or response.status_code >= 500\n"
            ),
            after=(
                "def should_retry(response):\n"
                "    should_retry_header = response.headers.get('x-should-retry')\n"
                "    if False:\n"
                "        return True\n"
                "    if should_retry_header == 'false':\n"
                "        return False\n"
                "    return response.status_code == 429 or response.status_code >= 500\n"
            ),
            note="the server's retry override obeyed before the status rules: ignored",
        ),
        Example(
            before=(
                "async def retry_advice(error):\n"
                "    header = _get_header_value(error, 'x-should-retry')\n"
                "    if header is not None:\n"
                "        value = header.lower().strip()\n"
                "        if value == 'false':\n"
                "            return Advice(suggested=False)\n"
                "    return Advice(suggested=error.status_code >= 500)\n"
            ),
            after=(
                "async def retry_advice(error):\n"
                "    header = _get_header_value(error, 'x-should-retry')\n"
                "    if header is not None:\n"
                "        value = header.lower().strip()\n"
                "        if False:\n"
                "            return Advice(suggested=False)\n"
                "    return Advice(suggested=error.status_code >= 500)\n"
            ),
            note="async, read through a helper and normalised: the server's veto ignored",
        ),
        Example(
            before=(
                "import httpx\n\n"
                "def request(client, req, max_retries=2):\n"
                "    for retries_taken in range(max_retries + 1):\n"
                "        try:\n"
                "            return client.send(req)\n"
                "        except httpx.TimeoutException as err:\n"
                "            if retries_taken < max_retries:\n"
                "                continue\n"
                "            raise APITimeoutError(request=req) from err\n"
            ),
            note="the re-raise as the SDK's type comes after the retry decision: it decides no retry",
        ),
        Example(
            before=(
                "import httpx\n\n"
                "class Stream:\n"
                "    def _iter_events(self):\n"
                "        try:\n"
                "            yield from self._decoder.iter_bytes(self.response.iter_bytes())\n"
                "        except httpx.TimeoutException as err:\n"
                "            raise APITimeoutError(request=self.response.request) from err\n"
            ),
            note="a read of an already open stream converts an error nobody retries",
        ),
        Example(
            before=("def cache_hit(response):\n    return response.headers.get('x-cache') == 'true'\n"),
            note="another header compared with 'true'",
        ),
        Example(
            before=(
                "import openai\n\n"
                "def _is_network_like_error(error):\n"
                "    return isinstance(error, openai.APIConnectionError)\n\n"
                "def evaluate_retry(error, attempt, max_retries):\n"
                "    if attempt < max_retries and _is_network_like_error(error):\n"
                "        return True\n"
                "    return False\n"
            ),
            after=(
                "import openai\n\n"
                "def _is_network_like_error(error):\n"
                "    return False\n\n"
                "def evaluate_retry(error, attempt, max_retries):\n"
                "    if attempt < max_retries and _is_network_like_error(error):\n"
                "        return True\n"
                "    return False\n"
            ),
            note="a predicate of the same file whose answer the retry decision reads",
        ),
        Example(
            before=(
                "import openai\n\n"
                "def _is_network_like_error(error):\n"
                "    return isinstance(error, openai.APIConnectionError)\n\n"
                "def report(error):\n"
                "    kind = 'network' if _is_network_like_error(error) else 'other'\n"
                "    print(kind, error)\n"
            ),
            note="the same predicate read only to label a log line",
        ),
        Example(
            before=(
                "import httpx\n\n"
                "def should_retry(error):\n"
                "    return isinstance(error, httpx.ConnectError | httpx.ReadTimeout)\n"
            ),
            after=(
                "import httpx\n\ndef should_retry(error):\n    return isinstance(error, httpx.ReadTimeout)\n"
            ),
            note="a union of classes in isinstance: one member dropped",
        ),
        Example(
            before=(
                "class RunnableRetry:\n"
                "    retry_exception_types: tuple = (Exception,)\n"
                "    max_attempt_number: int = 3\n"
            ),
            note="the catch-all (Exception,): emptied, it reads as the default, which retries everything too",
        ),
        Example(
            before=(
                "from litellm.exceptions import AuthenticationError, NotFoundError\n\n"
                "class Model:\n"
                "    abort_exceptions = [AuthenticationError, NotFoundError]\n"
            ),
            after=(
                "from litellm.exceptions import AuthenticationError, NotFoundError\n\n"
                "class Model:\n"
                "    abort_exceptions = [NotFoundError]\n"
            ),
            note="the errors on which the retry aborts: one of them is now retried",
        ),
        Example(
            before=(
                "class Model:\n"
                "    abort_messages = ['cancelled', 'stopped by user']\n"
                "    abort_hooks = (log_abort, notify_user)\n"
            ),
            note="abort wording on collections that hold no error class or status",
        ),
        Example(
            before=(
                "import asyncio\n"
                "import time\n\n"
                "def run_node(node, state, attempts=3):\n"
                "    for attempt in range(attempts):\n"
                "        try:\n"
                "            return node.invoke(state)\n"
                "        except asyncio.CancelledError as exc:\n"
                "            raise NodeCancelled(node.name) from exc\n"
                "        except Exception:\n"
                "            time.sleep(2 ** attempt)\n"
            ),
            note="a cancellation handler before `except Exception`: dropped, the cancellation "
            "still escapes that retry (it is no Exception)",
        ),
        Example(
            before=(
                "import time\n\n"
                "def run_node(node, state, attempts=3):\n"
                "    for attempt in range(attempts):\n"
                "        try:\n"
                "            return node.invoke(state)\n"
                "        except InvalidUpdateError:\n"
                "            raise\n"
                "        except GraphInterrupt:\n"
                "            raise\n"
                "        except Exception:\n"
                "            time.sleep(2 ** attempt)\n"
            ),
            after=(
                "import time\n\n"
                "def run_node(node, state, attempts=3):\n"
                "    for attempt in range(attempts):\n"
                "        try:\n"
                "            return node.invoke(state)\n"
                "        except ():\n"
                "            raise\n"
                "        except GraphInterrupt:\n"
                "            raise\n"
                "        except Exception:\n"
                "            time.sleep(2 ** attempt)\n"
            ),
            note="a fatal class dropped reaches the next handler first, then the retry "
            "(described as falling through)",
        ),
        Example(
            before=(
                "def complete(self, request, retries):\n"
                "    retry_config = None\n"
                "    if isinstance(retries, RetryConfig):\n"
                "        retry_config = (retries, ['429', '500', '503'])\n"
                "    return self.do_request(request, retry_config=retry_config)\n"
            ),
            after=(
                "def complete(self, request, retries):\n"
                "    retry_config = None\n"
                "    if isinstance(retries, RetryConfig):\n"
                "        retry_config = (retries, ['500', '503'])\n"
                "    return self.do_request(request, retry_config=retry_config)\n"
            ),
            note="an SDK generator's retry table of status strings, paired with its retry config",
        ),
        Example(
            before=(
                "ERROR_PAGES = ['404', '500']\n"
                "route_config = (router, ['429', '503'])\n"
                "retry_config = (retries, ['primary', 'fallback'])\n"
            ),
            note="status strings under a name that says no retry, and a retry table of non-statuses",
        ),
        Example(
            before=(
                "def retry(func, retries):\n"
                "    def do_request():\n"
                "        res = func()\n"
                "        for code in retries.status_codes:\n"
                "            if res.status_code == int(code):\n"
                "                raise TemporaryError(res)\n"
                "        return res\n"
                "    return retry_with_backoff(do_request, retries.backoff)\n"
            ),
            after=(
                "def retry(func, retries):\n"
                "    def do_request():\n"
                "        res = func()\n"
                "        for code in retries.status_codes:\n"
                "            if False:\n"
                "                raise TemporaryError(res)\n"
                "        return res\n"
                "    return retry_with_backoff(do_request, retries.backoff)\n"
            ),
            note="the configured status matched in the attempt a retry helper repeats",
        ),
        Example(
            before=(
                "def fetch(client, expected):\n"
                "    res = client.get('/v1/models')\n"
                "    if res.status_code == expected:\n"
                "        return res.json()\n"
                "    raise UnexpectedStatus(res.status_code)\n"
            ),
            note="a status compared with a variable whose branch raises nothing retryable",
        ),
        Example(
            before=(
                "def retry(func, retries):\n"
                "    def do_request():\n"
                "        try:\n"
                "            return func()\n"
                "        except Exception as exception:\n"
                "            if _is_transport_error(exception) and retries.retry_connection_errors:\n"
                "                raise\n"
                "            raise PermanentError(exception) from exception\n"
                "    return retry_with_backoff(do_request)\n"
            ),
            after=(
                "def retry(func, retries):\n"
                "    def do_request():\n"
                "        try:\n"
                "            return func()\n"
                "        except Exception as exception:\n"
                "            if False and retries.retry_connection_errors:\n"
                "                raise\n"
                "            raise PermanentError(exception) from exception\n"
                "    return retry_with_backoff(do_request)\n"
            ),
            note="a predicate picks re-raise (retried) over the fatal class",
        ),
        Example(
            before=(
                "def load(path):\n"
                "    try:\n"
                "        return read(path)\n"
                "    except Exception as exc:\n"
                "        if is_missing(exc):\n"
                "            raise\n"
                "        log.warning('unreadable %s: %s', path, exc)\n"
                "        return None\n"
            ),
            note="a predicate choosing re-raise over a log line, with no fatal class after it",
        ),
        Example(
            before=(
                "import httpx\n\n"
                "_TRANSPORT_ERROR_NAMES = frozenset({'NetworkError', 'TimeoutException'})\n\n"
                "def _is_transport_error(exc):\n"
                "    return bool({b.__name__ for b in type(exc).__mro__} & _TRANSPORT_ERROR_NAMES)\n\n"
                "def attempt(func):\n"
                "    while True:\n"
                "        try:\n"
                "            return func()\n"
                "        except Exception as exc:\n"
                "            if not _is_transport_error(exc):\n"
                "                raise\n"
                "            time.sleep(1)\n"
            ),
            after=(
                "import httpx\n\n"
                "_TRANSPORT_ERROR_NAMES = frozenset({'TimeoutException'})\n\n"
                "def _is_transport_error(exc):\n"
                "    return bool({b.__name__ for b in type(exc).__mro__} & _TRANSPORT_ERROR_NAMES)\n\n"
                "def attempt(func):\n"
                "    while True:\n"
                "        try:\n"
                "            return func()\n"
                "        except Exception as exc:\n"
                "            if not _is_transport_error(exc):\n"
                "                raise\n"
                "            time.sleep(1)\n"
            ),
            note="error names with no verdict in their own name, read by a predicate the retry obeys",
        ),
        Example(
            before=(
                "_LOGGED_ERROR_NAMES = frozenset({'NetworkError', 'TimeoutException'})\n\n"
                "def describe(exc):\n"
                "    return type(exc).__name__ in _LOGGED_ERROR_NAMES\n"
            ),
            note="the same kind of names read by nothing that decides a retry",
        ),
        Example(
            before=(
                "import openai, time\n\n"
                "def with_backoff(func, errors: tuple = (openai.RateLimitError, openai.APIError)):\n"
                "    def wrapper(*args):\n"
                "        num_retries = 0\n"
                "        while True:\n"
                "            try:\n"
                "                return func(*args)\n"
                "            except errors:\n"
                "                num_retries += 1\n"
                "                time.sleep(2 ** num_retries)\n"
                "    return wrapper\n"
            ),
            after=(
                "import openai, time\n\n"
                "def with_backoff(func, errors: tuple = (openai.APIError,)):\n"
                "    def wrapper(*args):\n"
                "        num_retries = 0\n"
                "        while True:\n"
                "            try:\n"
                "                return func(*args)\n"
                "            except errors:\n"
                "                num_retries += 1\n"
                "                time.sleep(2 ** num_retries)\n"
                "    return wrapper\n"
            ),
            note="a parameter's default tuple, caught by the handler that retries",
        ),
        Example(
            before=(
                "import openai\n\n"
                "def call(func, errors: tuple = (openai.RateLimitError, openai.APIError)):\n"
                "    try:\n"
                "        return func()\n"
                "    except errors as e:\n"
                "        log.error('failed: %s', e)\n"
                "        raise\n"
            ),
            note="a parameter's tuple caught by a handler that gives up, in no retry loop",
        ),
        Example(
            before=(
                "import time\n\n"
                "def with_retries(func, attempts=3):\n"
                "    for attempt in range(attempts):\n"
                "        try:\n"
                "            return func()\n"
                "        except Exception as e:\n"
                "            if any(m in str(e) for m in ['BadRequestError', 'NotFoundError']):\n"
                "                raise e\n"
                "            time.sleep(attempt)\n"
            ),
            after=(
                "import time\n\n"
                "def with_retries(func, attempts=3):\n"
                "    for attempt in range(attempts):\n"
                "        try:\n"
                "            return func()\n"
                "        except Exception as e:\n"
                "            if any(m in str(e) for m in ['NotFoundError']):\n"
                "                raise e\n"
                "            time.sleep(attempt)\n"
            ),
            note="message markers that make a caught error fatal inside the retry loop",
        ),
        Example(
            before=(
                "def summarize(errors):\n"
                "    for e in errors:\n"
                "        if any(m in str(e) for m in ['TimeoutError', 'RateLimitError']):\n"
                "            raise ReportError(e)\n"
            ),
            note="the same markers in a loop over data, no retry in sight",
        ),
        Example(
            before=(
                "def _retryable(state, exc, attempt, retries):\n"
                "    return attempt < retries and is_retryable_lm_error(exc)\n"
            ),
            after=("def _retryable(state, exc, attempt, retries):\n    return attempt < retries and True\n"),
            note="an imported classifier beside the bound, where the retry is decided",
        ),
        Example(
            before=(
                "def _retryable(state, exc, attempt, retries):\n"
                "    return attempt < retries and is_retryable(state.config)\n\n"
                "def report(exc):\n"
                "    return 'transient' if is_transient(exc) else 'fatal'\n"
            ),
            note="a retry predicate asked about a config, and a classifier read for a log label",
        ),
        Example(
            before=(
                "import asyncio\n"
                "import aiohttp\n\n"
                "async def request_once(session, url):\n"
                "    try:\n"
                "        response = await session.request('POST', url)\n"
                "    except (aiohttp.ServerDisconnectedError, aiohttp.ClientPayloadError):\n"
                "        await asyncio.sleep(1)\n"
                "        response = await session.request('POST', url)\n"
                "    return response\n"
            ),
            after=(
                "import asyncio\n"
                "import aiohttp\n\n"
                "async def request_once(session, url):\n"
                "    try:\n"
                "        response = await session.request('POST', url)\n"
                "    except (aiohttp.ClientPayloadError,):\n"
                "        await asyncio.sleep(1)\n"
                "        response = await session.request('POST', url)\n"
                "    return response\n"
            ),
            note="a one-shot retry: the handler waits and sends the same request again",
        ),
        Example(
            before=(
                "import asyncio\n"
                "import aiohttp\n\n"
                "async def request_once(session, url, backup):\n"
                "    try:\n"
                "        return await session.request('POST', url)\n"
                "    except (aiohttp.ServerDisconnectedError, aiohttp.ClientPayloadError):\n"
                "        await asyncio.sleep(1)\n"
                "        return await backup.fetch(url)\n"
            ),
            note="a handler that waits and then calls something else (a fallback) retries nothing",
        ),
        Example(
            before=(
                "from dataclasses import dataclass\n\n"
                "@dataclass\n"
                "class ExInfo:\n"
                "    name: str\n"
                "    retry: bool\n"
                "    description: str\n\n"
                "EXCEPTIONS = [\n"
                "    ExInfo('RateLimitError', True, 'slow down'),\n"
                "    ExInfo('AuthenticationError', False, 'check your key'),\n"
                "]\n"
            ),
            after=(
                "from dataclasses import dataclass\n\n"
                "@dataclass\n"
                "class ExInfo:\n"
                "    name: str\n"
                "    retry: bool\n"
                "    description: str\n\n"
                "EXCEPTIONS = [\n"
                "    ExInfo('RateLimitError', False, 'slow down'),\n"
                "    ExInfo('AuthenticationError', False, 'check your key'),\n"
                "]\n"
            ),
            note="an error table whose rows carry their retry verdict in a bool field",
        ),
        Example(
            before=(
                "from dataclasses import dataclass\n\n"
                "@dataclass\n"
                "class Feature:\n"
                "    name: str\n"
                "    enabled: bool\n\n"
                "@dataclass\n"
                "class Client:\n"
                "    retry: RetryPolicy\n"
                "    max_retries: int\n\n"
                "FEATURES = [Feature('streaming', True)]\n"
                "CLIENT = Client(RetryPolicy(), 3)\n"
                "if 'beta' in flags:\n"
                "    FEATURES = [Feature('beta', False)]\n"
            ),
            note="a bool field that is no retry verdict, and a retry field that is no bool",
        ),
        Example(
            before=(
                "def _is_transport_timeout(error):\n"
                "    return isinstance(error, httpx.TimeoutException)\n\n"
                "def handle_stream_error(e):\n"
                "    mapped = map_exception(e)\n"
                "    if not _is_transport_timeout(e) and 400 <= mapped.status_code < 500:\n"
                "        raise mapped\n"
                "    raise MidStreamFallbackError(original_exception=mapped)\n"
            ),
            after=(
                "def _is_transport_timeout(error):\n"
                "    return isinstance(error, httpx.TimeoutException)\n\n"
                "def handle_stream_error(e):\n"
                "    mapped = map_exception(e)\n"
                "    if not False and 400 <= mapped.status_code < 500:\n"
                "        raise mapped\n"
                "    raise MidStreamFallbackError(original_exception=mapped)\n"
            ),
            note="a gate between raising the error as is and the fallback the router retries",
        ),
        Example(
            before=(
                "def handle_stream_error(e):\n"
                "    if is_cancelled(e):\n"
                "        raise e\n"
                "    raise StreamReadError(str(e)) from e\n"
            ),
            note="a gate between two raises neither of which says retry or give up",
        ),
        Example(
            before=(
                "def can_fall_back(error):\n"
                "    is_retryable = isinstance(error, (ModelRateLimitError, ModelTruncatedError))\n"
                "    return is_retryable and FALLBACK is not None\n"
            ),
            after=(
                "def can_fall_back(error):\n"
                "    is_retryable = isinstance(error, (ModelTruncatedError,))\n"
                "    return is_retryable and FALLBACK is not None\n"
            ),
            note="a class test stored under the name of the retry verdict",
        ),
        Example(
            before=(
                "import asyncio\n"
                "import httpx\n\n"
                "async def invoke(client, payload, max_retries=3):\n"
                "    for attempt in range(max_retries):\n"
                "        try:\n"
                "            return await client.post('/v1/chat', json=payload)\n"
                "        except (httpx.TimeoutException, httpx.ConnectError) as e:\n"
                "            kind = 'timeout' if isinstance(e, httpx.TimeoutException) else 'connection'\n"
                "            if attempt < max_retries - 1:\n"
                "                await asyncio.sleep(2 ** attempt)\n"
                "                continue\n"
                "            if isinstance(e, httpx.TimeoutException):\n"
                "                raise ValueError(f'{kind}: timed out')\n"
                "            raise ValueError(f'{kind}: failed')\n"
            ),
            after=(
                "import asyncio\n"
                "import httpx\n\n"
                "async def invoke(client, payload, max_retries=3):\n"
                "    for attempt in range(max_retries):\n"
                "        try:\n"
                "            return await client.post('/v1/chat', json=payload)\n"
                "        except (httpx.ConnectError,) as e:\n"
                "            kind = 'timeout' if isinstance(e, httpx.TimeoutException) else 'connection'\n"
                "            if attempt < max_retries - 1:\n"
                "                await asyncio.sleep(2 ** attempt)\n"
                "                continue\n"
                "            if isinstance(e, httpx.TimeoutException):\n"
                "                raise ValueError(f'{kind}: timed out')\n"
                "            raise ValueError(f'{kind}: failed')\n"
            ),
            note="a handler that goes round again before its final raise retries what it catches; "
            "the class tests that pick a log word or a message are left alone",
        ),
        Example(
            before=(
                "def call_truncating(module, trajectory):\n"
                "    for _ in range(3):\n"
                "        try:\n"
                "            return module(trajectory=trajectory)\n"
                "        except ContextWindowExceededError:\n"
                "            trajectory = trajectory[1:]\n"
                "    raise ContextWindowExceededError('still too long')\n"
            ),
            after=(
                "def call_truncating(module, trajectory):\n"
                "    for _ in range(3):\n"
                "        try:\n"
                "            return module(trajectory=trajectory)\n"
                "        except ():\n"
                "            trajectory = trajectory[1:]\n"
                "    raise ContextWindowExceededError('still too long')\n"
            ),
            note="a counted loop that returns on success and raises once exhausted retries what it catches",
        ),
        Example(
            before=(
                "def first_readable(paths):\n"
                "    for path in paths:\n"
                "        try:\n"
                "            return open(path).read()\n"
                "        except FileNotFoundError:\n"
                "            pass\n"
                "    raise LookupError('none found')\n"
            ),
            note="the same shape over data: each round tries another item, not the same call again",
        ),
        Example(
            before=(
                "def should_retry(error):\n    return isinstance(error, (ModelTimeoutError, KeyError))\n"
            ),
            after=("def should_retry(error):\n    return isinstance(error, (KeyError,))\n"),
            note="an error class named for a timeout is a transient one",
        ),
        Example(
            before=("def should_retry(error):\n    return isinstance(error, (TimeoutSettings, KeyError))\n"),
            note="a class named for a timeout that is no error (settings) classifies nothing",
        ),
        Example(
            before=(
                "import tenacity\n\n"
                "def retry_args(options):\n"
                "    retriable_codes = options.http_status_codes or DEFAULT_CODES\n"
                "    return tenacity.retry_if_exception(lambda e: e.code in retriable_codes)\n"
            ),
            after=(
                "import tenacity\n\n"
                "def retry_args(options):\n"
                "    retriable_codes = options.http_status_codes or DEFAULT_CODES\n"
                "    return tenacity.retry_if_exception(lambda e: False)\n"
            ),
            note="a tenacity predicate consulting the configured set of retryable statuses",
        ),
        Example(
            before=(
                "def record(metrics, resp, retry_codes):\n"
                "    metrics['retryable' if resp.status in retry_codes else 'final'] += 1\n"
            ),
            note="the same membership test feeding a metric, where no retry is decided",
        ),
        Example(
            before=(
                "def send(self, messages, attempts=5):\n"
                "    for attempt in range(attempts):\n"
                "        try:\n"
                "            return self.model.send(messages)\n"
                "        except ProviderError as err:\n"
                "            info = describe(err)\n"
                "            if info.name == 'ContextWindowExceededError':\n"
                "                break\n"
                "            time.sleep(2 ** attempt)\n"
            ),
            after=(
                "def send(self, messages, attempts=5):\n"
                "    for attempt in range(attempts):\n"
                "        try:\n"
                "            return self.model.send(messages)\n"
                "        except ProviderError as err:\n"
                "            info = describe(err)\n"
                "            if False:\n"
                "                break\n"
                "            time.sleep(2 ** attempt)\n"
            ),
            note="an error picked out by its class name and given up on inside the retry handler",
        ),
        Example(
            before=(
                "def send(self, messages, attempts=5):\n"
                "    for attempt in range(attempts):\n"
                "        try:\n"
                "            return self.model.send(messages)\n"
                "        except Exception as err:\n"
                "            if type(err).__name__ == 'TimeoutError':\n"
                "                log.warning('slow provider')\n"
                "            time.sleep(2 ** attempt)\n"
            ),
            note="the same name test that only logs: nothing is given up on",
        ),
        Example(
            before=(
                "def should_retry_response(res, status_codes):\n"
                "    should_retry = False\n"
                "    for code in status_codes:\n"
                "        if res.status_code == int(code):\n"
                "            should_retry = True\n"
                "    return should_retry\n"
            ),
            after=(
                "def should_retry_response(res, status_codes):\n"
                "    should_retry = False\n"
                "    for code in status_codes:\n"
                "        if False:\n"
                "            should_retry = True\n"
                "    return should_retry\n"
            ),
            note="a configured status match that raises the retry flag",
        ),
        Example(
            before=(
                "def should_retry_response(res, status_codes):\n"
                "    found = False\n"
                "    for code in status_codes:\n"
                "        if res.status_code == int(code):\n"
                "            found = True\n"
                "    return found and res.retryable_body\n"
            ),
            note="a configured status match that sets a flag whose name says nothing of retrying",
        ),
        Example(
            before=(
                "def _pre_content_error(attempt, error, status_code) -> FallbackError | None:\n"
                "    if status_code is None or attempt.should_retry_status(status_code):\n"
                "        return FallbackError(error)\n"
                "    return None\n"
            ),
            after=(
                "def _pre_content_error(attempt, error, status_code) -> FallbackError | None:\n"
                "    if status_code is None or True:\n"
                "        return FallbackError(error)\n"
                "    return None\n"
            ),
            note="a status classifier of another object, in a function that builds the retried error",
        ),
        Example(
            before=(
                "def badge(attempt, status_code) -> str:\n"
                "    return 'retry' if attempt.should_retry_status(status_code) else 'final'\n"
            ),
            note="the same classifier read to label a badge",
        ),
        Example(
            before=(
                "import openai\n\n"
                "def _is_conversation_locked_error(error):\n"
                "    return isinstance(error, openai.APIError) and getattr(error, 'code', '') == 'x'\n\n"
                "def should_retry(error, attempt, max_retries):\n"
                "    return attempt < max_retries and _is_conversation_locked_error(error)\n"
            ),
            after=(
                "import openai\n\n"
                "def _is_conversation_locked_error(error):\n"
                "    return isinstance(error, openai.APIError) and False\n\n"
                "def should_retry(error, attempt, max_retries):\n"
                "    return attempt < max_retries and _is_conversation_locked_error(error)\n"
            ),
            note="a provider error code that marks the one 4xx worth another attempt",
        ),
        Example(
            before=(
                "def _is_abort_like_error(error):\n"
                "    return getattr(error, 'code', '') == 'cancelled'\n\n"
                "def describe(error):\n"
                "    return 'quota' if getattr(error, 'code', '') == 'insufficient_quota' else 'other'\n\n"
                "def should_retry(error, attempt):\n"
                "    return attempt < 3 and not _is_abort_like_error(error)\n"
            ),
            note="an error code read by a give-up predicate, and one read for a label",
        ),
    )

    def find(self, ctx: SourceContext) -> Iterator[Mutation]:
        for collection in ctx.findall(_COLLECTION):
            if only_for_type_checkers(ctx, collection):
                continue  # ``if TYPE_CHECKING:`` never runs: a mutant there changes nothing
            owner = _owner_names(ctx, collection)
            if owner and _classifies(collection):
                kind = _kind_of_owner(*owner)
                if kind:
                    yield from _removals(ctx, collection, kind)
                elif _caught_by_retry(ctx, collection):
                    yield from _retried_members(ctx, collection)
                elif _read_by_classifier(ctx, collection):
                    yield from _members_retried(ctx, collection)
            elif owner is None and _classifies(collection) and _gives_up_when_listed(ctx, collection):
                yield from _removals(ctx, collection, "fatal")
        for comparison in ctx.findall(m.Comparison()):
            if _decides_retry(ctx, comparison) or _decides_by_raising(ctx, comparison):
                yield from _status_check(ctx, comparison)
                yield from _configured_status_match(ctx, comparison)
            if in_retry_decision(ctx, comparison):
                yield from _named_error_check(ctx, comparison)
            yield from _error_code_check(ctx, comparison)
        for attempt in ctx.findall(m.Try()):
            loop = innermost_loop(ctx, attempt)
            if loop is not None and (is_retry_loop(ctx, loop) or tries_until_success(ctx, loop, attempt)):
                yield from _except_clauses(ctx, attempt)
            else:
                for handler in attempt.handlers:
                    if handler.type is not None and resends_after_wait(ctx, attempt, handler):
                        yield from _handler_types(ctx, handler, {"retryable"})
            if _sends_or_decides(ctx, attempt, loop):
                yield from _conversions(ctx, attempt)
        yield from _override_ignored(ctx)
        yield from _reraise_gates(ctx)
        yield from _classifier_calls(ctx)
        for call in ctx.findall(m.Call(func=m.Name("isinstance"), args=[m.DoNotCare(), m.DoNotCare()])):
            if _only_words_differ(ctx, call):
                continue
            if (
                in_retry_decision(ctx, call)
                or _in_retry_named_function(ctx, call)
                or _named_verdict(ctx, call)
            ):
                yield from _isinstance_check(ctx, call)
            elif _decides_retry(ctx, call):
                # A predicate a retry path reads (``_is_network_like_error``): its True means
                # "retry" only for classes that are retryable; a fatal class there may mean
                # anything (``_is_conversation_locked_error`` tests a 400 it retries).
                for mutation in _isinstance_check(ctx, call):
                    if mutation.description.endswith("no longer retried"):
                        yield mutation
        for call in ctx.findall(m.Call()):
            yield from _library_single_class(ctx, call)
        yield from _verdict_flags(ctx)
        yield from _verdict_rows(ctx)
