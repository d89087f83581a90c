"""The file's own call graph: which local function a call reaches, and whether a function
(transitively, through the file's functions and methods) talks to a model.

Only calls the file itself can resolve are followed: ``helper()`` to a module-level ``def``,
``self.method()``/``cls.method()`` to a method of the enclosing class. That is enough to see that
``while not self._should_halt(): self._step()`` calls the model through ``_step`` and is bounded
through ``_should_halt``.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.vocabulary import MODEL_CALL_WORDS, MODEL_OBJECT_WORDS, MODEL_VERBS, identifier, words
from mutagent.mutation.context import SourceContext

_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


def _definitions(ctx: SourceContext) -> dict[tuple[str, str], cst.FunctionDef]:
    """(owner class name or "", function name) -> its def, for module-level defs and methods."""

    def compute() -> dict[tuple[str, str], cst.FunctionDef]:
        found: dict[tuple[str, str], cst.FunctionDef] = {}
        for func in ctx.nodes(cst.FunctionDef):
            parent = ctx.parent(ctx.parent(func))  # def -> IndentedBlock/Module -> owner
            if ctx.parent(func) is ctx.module:
                found.setdefault(("", func.name.value), func)
            elif isinstance(parent, cst.ClassDef):
                found.setdefault((parent.name.value, func.name.value), func)
        return found

    return ctx.cached(("anatomy", "definitions"), compute)


def _owner_class(ctx: SourceContext, node: cst.CSTNode) -> cst.ClassDef | None:
    return ctx.enclosing(node, cst.ClassDef)  # type: ignore[return-value]


def callee(ctx: SourceContext, call: cst.CSTNode) -> cst.FunctionDef | None:
    """The def of this file that ``call`` runs, when the file alone says which."""
    if isinstance(call, cst.Await):
        call = call.expression
    if not isinstance(call, cst.Call):
        return None
    defs = _definitions(ctx)
    func = call.func
    if isinstance(func, cst.Name):
        return defs.get(("", func.value))
    if isinstance(func, cst.Attribute) and m.matches(func.value, m.Name("self") | m.Name("cls")):
        owner = _owner_class(ctx, call)
        if owner is not None:
            for klass in _lineage(ctx, owner.name.value):
                found = defs.get((klass, func.attr.value))
                if found is not None:
                    return found
    return None


def _lineage(ctx: SourceContext, name: str) -> list[str]:
    """``name`` and the classes of this file it inherits from, nearest first (``SyncToolRunner``
    -> ``BaseToolRunner``): a ``self.`` call may run a method of a base class."""
    bases = ctx.cached(("anatomy", "bases"), lambda: _bases(ctx))
    order, queue = [], [name]
    while queue:
        current = queue.pop(0)
        if current not in order:
            order.append(current)
            queue.extend(bases.get(current, ()))
    return order


def _bases(ctx: SourceContext) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for klass in ctx.nodes(cst.ClassDef):
        names = []
        for base in klass.bases:
            value = base.value
            if isinstance(value, cst.Subscript):  # ``BaseToolRunner[T]``
                value = value.value
            if isinstance(value, cst.Name):
                names.append(value.value)
        found.setdefault(klass.name.value, names)
    return found


def own_calls(ctx: SourceContext, node: cst.CSTNode) -> list[cst.Call]:
    """Calls under ``node`` that run when it runs (not in nested defs, lambdas or classes)."""
    found = []
    for call in ctx.descendants(node, m.Call()):
        if not any(isinstance(a, _SCOPES) for a in _between(ctx, call, node)):
            found.append(call)
    return found


def _between(ctx: SourceContext, node: cst.CSTNode, stop: cst.CSTNode) -> list[cst.CSTNode]:
    result = []
    for ancestor in ctx.ancestors(node):
        if ancestor is stop:
            break
        result.append(ancestor)
    return result


def model_call_evidence(
    ctx: SourceContext, node: cst.CSTNode, is_direct: Callable[[cst.Call], str | None], depth: int = 3
) -> str | None:
    """Why running ``node`` talks to a model: a direct model call (``is_direct`` names it), a call
    named for one (``self.llm.invoke``, ``self._model_turn()``), or a local function that does
    (followed ``depth`` levels deep). None if nothing says so."""
    for call in own_calls(ctx, node):
        if any(isinstance(a, cst.Raise) for a in _between(ctx, call, node)):
            continue  # ``raise TurnLimitExceeded(...)`` builds an error, it talks to nobody
        direct = is_direct(call)
        if direct:
            return direct
        name = identifier(call) or ""
        chain = ctx.code(call.func) if isinstance(call.func, cst.Attribute) else name
        if not name.startswith("__") and not name[:1].isupper():
            chain_words = set(words(chain))
            if chain_words & MODEL_CALL_WORDS or (
                chain_words & MODEL_OBJECT_WORDS and set(words(name)) & MODEL_VERBS
            ):
                return f"calls {chain}()"
        target = callee(ctx, call)
        if target is not None and depth > 0:
            key = ("anatomy", "calls-model", id(target), depth - 1)
            inner = ctx.cached(key, lambda t=target: model_call_evidence(ctx, t.body, is_direct, depth - 1))
            if inner:
                return f"calls {target.name.value}() -> {inner}"
    return None
