"""mutmut's node operators, run through mutagent's walker: the ``generic`` family.

mutmut (pinned to the 3.8 range) keeps a list of ``(node type, function)`` pairs in
``mutmut.mutation.mutators.mutation_operators``; each function maps one libcst node to its
mutated variants. We import those functions rather than copying them, so the generic family
produces exactly mutmut's mutants and follows mutmut's fixes within the pinned range. What we
add is the *where*: mutmut only mutates code inside top-level functions and methods (its
trampolines need a function to swap), we walk the whole file, and we mirror the exclusions
mutmut applies inside functions so that a plain function gets the same mutants from both tools.

Same as mutmut (see ``mutmut/mutation/file_mutation.py``, ``MutationVisitor``):

* nothing inside type annotations, decorator expressions, calls to ``NEVER_MUTATE_FUNCTION_CALLS``
  (``len``, ``isinstance``), functions named in ``NEVER_MUTATE_FUNCTION_NAMES`` or, in enum
  classes, ``NEVER_MUTATE_ENUM_FUNCTION_NAMES``;
* a parameter whose default is more than a name, number or string is left alone entirely
  (the default runs at definition time: ``abs(None)`` there breaks the import);
* triple-quoted strings and f-strings (``operator_string`` itself declines them).

Deliberate differences (each changes the count only where the construct occurs):

1. Module-level code, class bodies, methods of nested classes and functions defined under an
   ``if``/``try`` at module level ARE mutated (``MAX_RETRIES = 3`` is where agent loops keep
   their limits); mutmut drops those mutations because it cannot trampoline them.
2. Decorated functions (``@tool``, ``@app.post(...)``, ``@property``) ARE mutated; mutmut skips
   their whole body for trampoline reasons. Their decorator expressions stay untouched.
3. ``import`` statements and ``if TYPE_CHECKING:`` blocks are skipped: renaming an import
   (``from copy import deepcopy`` -> ``... import copy``) is a NameError, not an injected bug,
   and a ``TYPE_CHECKING`` block never runs, so its mutants could only survive. ``__future__``
   imports are covered by this.
4. A single-quoted docstring (``'Doc.'`` as first statement) is skipped like a triple-quoted one.
5. Assignments to dunder names (``__all__``, ``__version__``, ``__slots__``) are skipped: they
   are module metadata; their mutants only break star imports or crash at import.
6. The name of a ``def``/``class`` is not mutated (mutmut would turn ``def deepcopy`` into
   ``def copy``, a mutant its trampoline cannot apply).
7. ``break`` -> ``return`` is not produced outside a function (a SyntaxError at module level),
   and a node that loses its parentheses by a mutation keeps them (``if(not x)`` -> ``if(x)``,
   not ``ifx``); mutmut never sees either case or renders them broken. Counts are unchanged.
8. Two identical mutations of the same node by one operator are one mutant (``f(a, a)`` loses
   "either" argument the same way); mutmut counts two.
9. Suppression comments mark a mutant Ignored instead of not creating it, so it is listed with
   its reason; compare counts of non-ignored mutants.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

import libcst as cst
from mutmut.mutation import mutators as _mutmut
from mutmut.mutation.file_mutation import (
    ENUM_BASE_NAMES,
    NEVER_MUTATE_ENUM_FUNCTION_NAMES,
    NEVER_MUTATE_FUNCTION_CALLS,
    NEVER_MUTATE_FUNCTION_NAMES,
)

from mutagent.mutation.context import SourceContext
from mutagent.mutation.operator import Example, Mutation, Operator

MutmutFunction = Callable[[cst.CSTNode], Iterable[cst.CSTNode]]

_ELIGIBLE_KEY = "generic:eligible"
_SIMPLE_DEFAULTS = (cst.Name, cst.BaseNumber, cst.BaseString)
_DOCSTRING_OWNERS = (cst.FunctionDef, cst.ClassDef)


class _Skip(enum.Enum):
    """Why a subtree is not mutated; the value doubles as documentation."""

    ANNOTATION = "type annotations do not run"
    DECORATOR = "decorators run at definition time"
    IMPORT = "renaming an import is a NameError, not a bug"
    NEVER_CALL = "mutmut's NEVER_MUTATE_FUNCTION_CALLS"
    NEVER_FUNCTION = "mutmut's NEVER_MUTATE_FUNCTION_NAMES"
    ENUM_HOOK = "mutmut's NEVER_MUTATE_ENUM_FUNCTION_NAMES"
    COMPLEX_DEFAULT = "a default that is more than a literal runs at definition time"
    DEF_NAME = "the name of a def or class"
    DOCSTRING = "docstrings"
    TYPE_CHECKING = "if TYPE_CHECKING: never runs"
    DUNDER = "assignments to dunder names (__all__, __version__, __slots__) are metadata"


def _is_enum_class(node: cst.CSTNode | None) -> bool:
    if not isinstance(node, cst.ClassDef):
        return False
    for base in node.bases:
        value = base.value
        name = value.attr.value if isinstance(value, cst.Attribute) else getattr(value, "value", None)
        if name in ENUM_BASE_NAMES:
            return True
    return False


def _is_type_checking(test: cst.BaseExpression) -> bool:
    if isinstance(test, cst.Name):
        return test.value == "TYPE_CHECKING"
    return isinstance(test, cst.Attribute) and test.attr.value == "TYPE_CHECKING"


def _is_docstring(ctx: SourceContext, node: cst.Expr, parent: cst.CSTNode | None) -> bool:
    """``node`` is the first statement of a module, class or function and a plain string."""
    if not isinstance(node.value, cst.SimpleString | cst.ConcatenatedString):
        return False
    if isinstance(parent, cst.SimpleStatementSuite):  # def f(): "doc"
        return parent.body[0] is node and isinstance(ctx.parent(parent), _DOCSTRING_OWNERS)
    if not isinstance(parent, cst.SimpleStatementLine) or parent.body[0] is not node:
        return False
    block = ctx.parent(parent)
    if isinstance(block, cst.Module):
        return block.body[0] is parent
    return (
        isinstance(block, cst.IndentedBlock)
        and block.body[0] is parent
        and isinstance(ctx.parent(block), _DOCSTRING_OWNERS)
    )


# Every node type some exclusion rule looks at (``_skip_by_type``).
_ROOT_TYPES = frozenset(
    (cst.Annotation, cst.Decorator, cst.Import, cst.ImportFrom, cst.Call, cst.FunctionDef, cst.Param)
    + (cst.Name, cst.Expr, cst.Assign, cst.AnnAssign, cst.AugAssign)
)


def _skip_reason(ctx: SourceContext, node: cst.CSTNode, parent: cst.CSTNode | None) -> _Skip | None:
    """Whether the subtree rooted at ``node`` is excluded, and why (None: mutate it).

    Called for every node of a file, so the common case (a type no rule is about, under a
    parent that is not an ``if``) returns after two set lookups.
    """
    node_type = type(node)
    if node_type in _ROOT_TYPES:
        reason = _skip_by_type(ctx, node, parent)
        if reason is not None:
            return reason
    if type(parent) is cst.If and (node is parent.test or node is parent.body):  # type: ignore[union-attr]
        if _is_type_checking(parent.test):  # type: ignore[union-attr]
            return _Skip.TYPE_CHECKING
    return None


def _skip_by_type(ctx: SourceContext, node: cst.CSTNode, parent: cst.CSTNode | None) -> _Skip | None:
    if isinstance(node, cst.Annotation):
        return _Skip.ANNOTATION
    if isinstance(node, cst.Decorator):
        return _Skip.DECORATOR
    if isinstance(node, cst.Import | cst.ImportFrom):
        return _Skip.IMPORT
    if isinstance(node, cst.Call):
        if isinstance(node.func, cst.Name) and node.func.value in NEVER_MUTATE_FUNCTION_CALLS:
            return _Skip.NEVER_CALL
    elif isinstance(node, cst.FunctionDef):
        if node.name.value in NEVER_MUTATE_FUNCTION_NAMES:
            return _Skip.NEVER_FUNCTION
        if (
            node.name.value in NEVER_MUTATE_ENUM_FUNCTION_NAMES
            and isinstance(parent, cst.IndentedBlock)
            and _is_enum_class(ctx.parent(parent))
        ):
            return _Skip.ENUM_HOOK
    elif isinstance(node, cst.Param):
        if node.default is not None and not isinstance(node.default, _SIMPLE_DEFAULTS):
            return _Skip.COMPLEX_DEFAULT
    elif isinstance(node, cst.Name):
        if isinstance(parent, cst.FunctionDef | cst.ClassDef) and parent.name is node:
            return _Skip.DEF_NAME
    elif isinstance(node, cst.Expr):
        if _is_docstring(ctx, node, parent):
            return _Skip.DOCSTRING
    elif isinstance(node, cst.Assign | cst.AnnAssign | cst.AugAssign):
        targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
        if all(isinstance(t, cst.Name) and _is_dunder(t.value) for t in targets):
            return _Skip.DUNDER
    return None


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def eligible_nodes(ctx: SourceContext) -> list[cst.CSTNode]:
    """Every node the generic family may mutate, in document order, computed once per file.

    The context's node index is in pre-order, so a node is excluded exactly when its parent is
    or when it roots an excluded subtree: one pass, no second tree walk.
    """

    def compute() -> list[cst.CSTNode]:
        excluded: set[cst.CSTNode] = set()
        eligible: list[cst.CSTNode] = []
        for node in ctx.nodes_in_order():
            parent = ctx.parent(node)
            if parent in excluded or _skip_reason(ctx, node, parent) is not None:
                excluded.add(node)
            else:
                eligible.append(node)
        return eligible

    return ctx.cached(_ELIGIBLE_KEY, compute)


def _eligible_of_type(ctx: SourceContext, node_types: tuple[type, ...]) -> list[cst.CSTNode]:
    return ctx.cached(
        (_ELIGIBLE_KEY, node_types),
        lambda: [n for n in eligible_nodes(ctx) if isinstance(n, node_types)],
    )


def _inside_function(ctx: SourceContext, node: cst.CSTNode) -> bool:
    """``return`` is legal here: a def encloses the node before any class body does."""
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.FunctionDef):
            return True
        if isinstance(ancestor, cst.ClassDef | cst.Lambda):
            return False
    return False


def _repair(ctx: SourceContext, node: cst.CSTNode, replacement: cst.CSTNode) -> cst.CSTNode | None:
    """Make a mutmut replacement valid where mutmut itself would never apply it (None: drop it)."""
    if isinstance(replacement, cst.Return) and not _inside_function(ctx, node):
        return None  # break -> return at module level is a SyntaxError
    if (
        isinstance(node, cst.BaseExpression)
        and isinstance(replacement, cst.BaseExpression)
        and node.lpar
        and not replacement.lpar
    ):
        # `if(not x):` -> `if(x):`, not `ifx:`; parentheses never change an expression's value
        replacement = replacement.with_changes(lpar=node.lpar, rpar=node.rpar)
    return replacement


def _short(code: str, limit: int = 40) -> str:
    text = " ".join(code.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _first_difference(before: Sequence[cst.CSTNode], after: Sequence[cst.CSTNode]) -> int:
    """Index of the first element of ``before`` that ``after`` does not keep at the same index."""
    for index, (old, new) in enumerate(zip(before, after, strict=False)):
        if old is not new:
            return index
    return min(len(before), len(after))


def _describe_call(ctx: SourceContext, node: cst.Call, replacement: cst.Call) -> str:
    func = _short(ctx.code(node.func), 30)
    if node.func is not replacement.func:  # s.lower() -> s.upper()
        return f"{func}() -> {_short(ctx.module.code_for_node(replacement.func), 30)}()"
    index = _first_difference(node.args, replacement.args)
    if len(replacement.args) < len(node.args):
        return f"{func}(...) loses argument {index + 1} ({_short(ctx.code(node.args[index].value), 24)})"
    old, new = node.args[index], replacement.args[index]
    if old.keyword is not None and new.keyword is not None and old.keyword.value != new.keyword.value:
        return f"{func}(...) keyword {old.keyword.value}= -> {new.keyword.value}="
    return f"{func}(...) argument {index + 1} ({_short(ctx.code(old.value), 24)}) -> None"


def _describe(ctx: SourceContext, node: cst.CSTNode, replacement: cst.CSTNode) -> str:
    """One short line naming the change.

    Built from the small pieces that changed (a literal, an operator token, one argument), never
    by rendering the whole node: a mutated call or assignment can span fifty lines.
    """
    render = ctx.module.code_for_node
    if isinstance(node, cst.Integer | cst.Float | cst.Imaginary | cst.SimpleString | cst.Name):
        return f"{_short(node.value)} -> {_short(getattr(replacement, 'value', render(replacement)))}"
    before, after = getattr(node, "operator", None), getattr(replacement, "operator", None)
    if isinstance(before, cst.CSTNode) and isinstance(after, cst.CSTNode) and type(before) is not type(after):
        return f"{render(before).strip()} -> {render(after).strip()}"
    if isinstance(node, cst.Call) and isinstance(replacement, cst.Call):
        return _describe_call(ctx, node, replacement)
    if isinstance(node, cst.Assign | cst.AnnAssign) and isinstance(replacement, cst.Assign | cst.AnnAssign):
        value = replacement.value
        target = node.targets[0].target if isinstance(node, cst.Assign) else node.target
        return f"{_short(render(target), 30)} = ... -> = {render(value) if value is not None else ''}"
    if isinstance(node, cst.AugAssign):
        return f"{render(node.operator).strip()} -> ="
    if isinstance(node, cst.UnaryOperation):
        return f"drop {render(node.operator).strip()}"
    if isinstance(node, cst.Lambda) and isinstance(replacement, cst.Lambda):
        return f"lambda returns {render(replacement.body)}"
    if isinstance(node, cst.Match) and isinstance(replacement, cst.Match):
        index = _first_difference(node.cases, replacement.cases)
        return f"drop case {_short(render(node.cases[index].pattern), 30)}"
    if isinstance(node, cst.IfExp) and isinstance(replacement.test, cst.BooleanOperation):  # type: ignore[attr-defined]
        forced = render(replacement.test.right)  # type: ignore[attr-defined]
        return f"condition {_short(render(node.test), 30)} always {forced}"
    if type(node) is not type(replacement):  # break -> return, is -> is not
        return f"{render(node).strip()} -> {render(replacement).strip()}"
    return f"{_short(render(node))} -> {_short(render(replacement))}"


@dataclass(frozen=True)
class GenericDoc:
    """The documentation mutmut does not ship: what the mutant means for an agent loop."""

    description: str
    failure: str
    hint: str
    examples: tuple[Example, ...] = ()


class MutmutOperator(Operator):
    """One mutmut operator function, applied to every eligible node of its node types.

    Concrete operators are subclasses built by :func:`build_generic_operators`, one per
    function, so each has ordinary class attributes like any other operator.
    """

    family = "generic"
    node_types: tuple[type, ...] = ()
    mutmut_function: MutmutFunction

    def find(self, ctx: SourceContext) -> Iterator[Mutation]:
        function = type(self).mutmut_function
        for node in _eligible_of_type(ctx, self.node_types):
            for mutated in function(node):
                replacement = _repair(ctx, node, mutated)
                if replacement is not None:
                    yield Mutation(node, replacement, _describe(ctx, node, replacement))


# mutmut registers these two for every node (``cst.CSTNode``) and filters inside; calling them
# on the ~10,000 nodes of a file cost more than all other generic operators together. These are
# the node types they can change, read from their own mapping and matcher (the parity test with
# mutmut in tests/mutation/test_generate.py fails if a mutmut release widens them).
_NARROWED: dict[str, Callable[[], tuple[type, ...]]] = {
    "operator_keywords": lambda: tuple(getattr(_mutmut, "_keyword_mapping", {cst.CSTNode: None})),
    "operator_swap_op": lambda: (
        cst.BinaryOperation,
        cst.UnaryOperation,
        cst.BooleanOperation,
        cst.ComparisonTarget,
        cst.AugAssign,
    ),
}


def operator_name_for(function: MutmutFunction) -> str:
    """``operator_swap_op`` -> ``generic-swap-op``: the mutmut function stays recognisable."""
    return "generic-" + function.__name__.removeprefix("operator_").replace("_", "-")


def mutmut_operator_functions() -> list[tuple[MutmutFunction, tuple[type, ...]]]:
    """mutmut's operator functions in its order, each with every node type it is registered for
    (``operator_assignment`` serves both ``Assign`` and ``AnnAssign``)."""
    grouped: dict[MutmutFunction, list[type]] = {}
    for node_type, function in _mutmut.mutation_operators:
        grouped.setdefault(function, []).append(node_type)
    result = []
    for function, types in grouped.items():
        narrowed = _NARROWED.get(function.__name__)
        result.append((function, narrowed() if types == [cst.CSTNode] and narrowed else tuple(types)))
    return result


def build_generic_operators(docs: dict[str, GenericDoc]) -> list[Operator]:
    """One operator instance per mutmut function; ``docs`` is keyed by the function's name.

    A function a newer mutmut adds without an entry in ``docs`` still becomes an operator, with
    its docstring as description, so upgrading never silently drops mutants (a test flags the
    missing documentation).
    """
    operators: list[Operator] = []
    for function, node_types in mutmut_operator_functions():
        doc = docs.get(function.__name__)
        if doc is None:
            summary = (function.__doc__ or "").strip().splitlines()
            doc = GenericDoc(
                description=summary[0] if summary else f"mutmut's {function.__name__}",
                failure="A generic code change from mutmut; no agent-specific failure documented yet.",
                hint="assert on the values this code computes",
            )
        name = operator_name_for(function)
        class_name = "".join(part.title() for part in name.split("-"))
        cls = type(
            class_name,
            (MutmutOperator,),
            {
                "name": name,
                "description": doc.description,
                "failure": doc.failure,
                "hint": doc.hint,
                "examples": doc.examples,
                "node_types": node_types,
                "mutmut_function": staticmethod(function),
                "__doc__": f"mutmut's ``{function.__name__}`` as a mutagent operator: {doc.description}",
            },
        )
        operators.append(cls())
    return operators
