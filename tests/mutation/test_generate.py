"""Generation: stable ids, exact text patches, mutants that compile, qualnames Python agrees with.

The corpus is real code (the installed ``anthropic/_base_client.py``, stdlib modules, the sample
agent) plus a synthetic file full of awkward syntax, run through the generic family (mutmut's
operators: thousands of mutants of every shape) and the agent family.
"""

from __future__ import annotations

import asyncio
import json.decoder
import textwrap
from collections import Counter
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import anthropic
import libcst as cst
import libcst.matchers as m
import pytest
from libcst.metadata import PositionProvider

from mutagent.errors import UsageError
from mutagent.model import Mutant
from mutagent.mutation.context import SourceContext
from mutagent.mutation.generate import (
    _common_length,
    _needs_parent,
    _Patcher,
    _replace_child,
    generate_for_file,
    generate_for_source,
)
from mutagent.mutation.operator import Mutation, Operator
from mutagent.mutation.registry import select_operators

ROOT = Path(__file__).resolve().parents[2]
BASE_CLIENT = Path(anthropic.__file__).parent / "_base_client.py"
SAMPLE_AGENT = sorted(p for p in (ROOT / "sample_agent").glob("*.py") if p.name != "__init__.py")
STDLIB = [Path(textwrap.__file__), Path(json.decoder.__file__)]

AWKWARD = '''\
"""Docstring."""
from __future__ import annotations

import copy
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

MAX_RETRIES = 3
NAMES = {"a": 1, "b": 2.5, "c": 1j}
KEY = lambda item: item[0]  # noqa: E731


def tool(fn):
    return fn


@tool
def lookup(x: int = 3, *args, flag=True, **kwargs) -> int:
    if(not x):
        return -x
    total = 0
    for i in range(x):
        if i % 2 == 0 and i is not None:
            continue
        elif i in (1, 2) or i not in [3]:
            break
        total += i ** 2
    while total > 10:
        total //= 2; total -= 1; extra = 0
    return total if total >= 0 else ~total


async def stream(events):
    async for event in events:
        match event:
            case {"type": "ping"}:
                continue
            case {"type": "stop", **rest}:
                yield rest
                break
            case [first, *others]:
                yield first
            case _:
                pass
    async with events as e:
        await e.aclose()


class Agent:
    retries: int = 2
    name = "agent"

    def __init__(self, client, *, limit=10):
        self.client = client
        self.limit = limit
        self._history = copy.deepcopy([])

    @property
    def history(self):
        return [m for m in self._history if m]

    def step(self, text: str) -> str:
        def clean(s):
            nonlocal text
            text = s.strip().lower()
            return text.split(":", 1)[-1].rsplit(maxsplit=1)
        parts = dict(role="user", content=clean(text))
        x = (y := len(parts)) > 1
        return f"{parts['role']}: {x} {y}" + text.lstrip() + str(1 << 2 | 3 & 4 ^ 5 >> 1)


for attempt in range(MAX_RETRIES):
    if attempt > 1:
        break
else:
    attempt = None
'''


@cache
def _operators(spec: str) -> tuple:
    return tuple(select_operators(spec))


def _mutants(source: str, spec: str = "generic", name: str = "mod.py") -> list[Mutant]:
    return generate_for_source(source, name, _operators(spec))


# -- stable ids ---------------------------------------------------------------------------

STABLE = """\
def f(x):
    return x + 1 if x > 2 else "small"


def g(y):
    if y > 0:
        return y * 3
    return "neg"
"""


def _ids_in(mutants: list[Mutant], qualname: str) -> dict[tuple[str, str, str], str]:
    return {(m.operator, m.original, m.replacement): m.id for m in mutants if m.qualname == qualname}


def test_ids_survive_edits_of_another_function() -> None:
    before = _ids_in(_mutants(STABLE), "g")
    edited = STABLE.replace("def f(x):\n    return", "import os\n\n\ndef f(x):\n    x = os.sep\n    return")
    edited = edited.replace('"small"', '"tiny"')
    after = _ids_in(_mutants(edited), "g")
    assert before and before == after


def test_ids_survive_moving_a_function_down_the_file() -> None:
    before = _ids_in(_mutants(STABLE), "g")
    moved = "\n\n# a new comment\n" * 20 + STABLE
    assert _ids_in(_mutants(moved), "g") == before


def test_ids_change_when_the_mutated_construct_changes() -> None:
    before = _ids_in(_mutants(STABLE), "g")
    after = _ids_in(_mutants(STABLE.replace("y * 3", "y * 4")), "g")
    changed_keys = {k for k in before if "3" in k[1]}
    assert changed_keys, before
    assert not set(before.values()) & {after.get(k) for k in changed_keys}
    kept = {k: v for k, v in before.items() if k not in changed_keys}
    assert kept and all(after[k] == v for k, v in kept.items())


def test_ids_are_unique_and_deterministic() -> None:
    first = _mutants(AWKWARD, "all")
    second = _mutants(AWKWARD, "all")
    assert [m.id for m in first] == [m.id for m in second]
    assert len({m.id for m in first}) == len(first)


def test_identical_constructs_in_one_function_get_distinct_ids() -> None:
    mutants = _mutants("def f(a):\n    return a + 1, a + 1\n")
    plus = [m for m in mutants if m.operator == "generic-swap-op"]
    assert len(plus) == 2 and plus[0].id != plus[1].id


def test_mutants_report_their_location_and_scope() -> None:
    mutants = _mutants(STABLE)
    number = next(m for m in mutants if m.operator == "generic-number" and m.original == "3")
    assert (number.location.start_line, number.location.start_col) == (7, 19)
    assert number.scope == ("g",) and number.file == "mod.py"


# -- compiling mutants --------------------------------------------------------------------


def _units(ctx: SourceContext) -> list[cst.FunctionDef]:
    """Functions whose enclosing scopes are only classes: each compiles on its own inside
    ``class`` wrappers, since nothing in it can refer to an enclosing function."""
    units = []
    for node in ctx.nodes(cst.FunctionDef):
        if all(isinstance(a, cst.ClassDef | cst.IndentedBlock | cst.Module) for a in ctx.ancestors(node)):
            units.append(node)
    return units


def _compile_unit(ctx: SourceContext, units: list[cst.FunctionDef], mutant: Mutant, path: str) -> None:
    """compile() the innermost function holding the change, wrapped in its enclosing classes,
    or else the mutated top-level statement.

    A SyntaxError compile() finds in a mutated file lies in the changed function (statement),
    and nothing in such a function depends on code outside it but its class nesting
    (``return``, ``await``, ``nonlocal`` and ``break`` are all checked within it; the generic
    family never touches ``__future__`` imports): the same errors, far cheaper.
    """
    source, patch = ctx.source, mutant.patch
    original = source[patch.start : patch.end]
    prefix = _common_length(original, patch.text, from_end=False)
    limit = min(len(original), len(patch.text)) - prefix
    suffix = min(_common_length(original, patch.text, from_end=True), limit)
    changed = (patch.start + prefix, patch.end - suffix)
    holders = [u for u in units if ctx.span(u)[0] <= changed[0] and changed[1] <= ctx.span(u)[1]]
    if not holders:  # module level or a class body: the mutated top-level statement alone
        compile(patch.text, path, "exec", dont_inherit=True)
        return
    unit = max(holders, key=lambda u: ctx.span(u)[0])
    start, end = ctx.span(unit)
    text = patch.text[start - patch.start : len(patch.text) - (patch.end - end)]
    wrappers = [a for a in ctx.ancestors(unit) if isinstance(a, cst.ClassDef)][::-1]
    header = "".join("".join(ctx.indent_tokens(c)) + "class _:\n" for c in wrappers)
    compile(header + text, path, "exec", dont_inherit=True)


@pytest.mark.parametrize(
    "path",
    [*SAMPLE_AGENT, *STDLIB],
    ids=lambda p: p.name if p.parent.name != "sample_agent" else f"agent-{p.name}",
)
def test_every_mutated_file_compiles(path: Path) -> None:
    source = path.read_text()
    mutants = _mutants(source, "all", path.name)
    assert mutants
    for mutant in mutants:
        try:
            compile(mutant.mutated_source(source), str(path), "exec", dont_inherit=True)
        except SyntaxError as exc:
            pytest.fail(f"{mutant.operator} {mutant.original!r} -> {mutant.replacement!r}: {exc}")


def test_every_mutant_of_awkward_syntax_compiles() -> None:
    mutants = _mutants(AWKWARD, "all")
    assert len({m.operator for m in mutants}) >= 12
    for mutant in mutants:
        try:
            compile(mutant.mutated_source(AWKWARD), "awkward.py", "exec", dont_inherit=True)
        except SyntaxError as exc:
            pytest.fail(f"{mutant.operator} {mutant.original!r} -> {mutant.replacement!r}: {exc}")


def test_every_mutant_of_the_anthropic_base_client_compiles() -> None:
    """~3,000 generic mutants of a 2,800-line file: each is compiled through its function (see
    ``_compile_unit``), and a stratified sample as the whole mutated file."""
    source = BASE_CLIENT.read_text()
    mutants = _mutants(source, "generic", "_base_client.py")
    assert len(mutants) > 2000
    ctx = SourceContext(source)
    units = _units(ctx)
    for mutant in mutants:
        try:
            _compile_unit(ctx, units, mutant, str(BASE_CLIENT))
        except SyntaxError as exc:
            pytest.fail(f"{mutant.operator} line {mutant.location.start_line}: {mutant.replacement!r}: {exc}")
    by_operator: dict[str, list[Mutant]] = {}
    for mutant in mutants:
        by_operator.setdefault(mutant.operator, []).append(mutant)
    for group in by_operator.values():
        for mutant in group[:: max(1, len(group) // 8)]:
            compile(mutant.mutated_source(source), str(BASE_CLIENT), "exec", dont_inherit=True)


# -- patch exactness ----------------------------------------------------------------------


def _reference_text(ctx: SourceContext, node: cst.CSTNode, replacement: cst.CSTNode) -> str:
    """The old, obviously exact way: rebuild the statement around the node and render it."""
    top = ctx.top_level_statement(node)
    old, new = node, replacement
    for parent in [node, *ctx.ancestors(node)]:
        if parent is top:
            break
        new = _replace_child(ctx.parent(parent), old, new)
        old = ctx.parent(parent)
    return ctx.module.code_for_node(new)


@pytest.mark.parametrize("path", [*SAMPLE_AGENT[:6], STDLIB[0]], ids=lambda p: p.name)
def test_patches_equal_re_rendering_the_rebuilt_statement(path: Path) -> None:
    source = path.read_text()
    ctx = SourceContext(source, path.name)
    patcher = _Patcher(ctx)
    checked = 0
    for operator in _operators("all"):
        for mutation in operator.find(ctx):
            patch, _ = patcher.patch(mutation)
            assert patch.text == _reference_text(ctx, mutation.node, mutation.replacement), operator.name
            checked += 1
    assert checked > 20


class _ParentRendered(Operator):
    """Mutates nodes libcst renders differently depending on their parent: an ``elif``, an
    argument without its own comma, a statement followed by ``;``, an annotation."""

    name = "test-parent-rendered"
    description = failure = hint = "test only"

    def find(self, ctx: SourceContext) -> Iterator[Mutation]:
        for node in ctx.nodes(cst.If):
            yield Mutation(node, node.with_changes(test=cst.Name("False")), "if False")
        for node in ctx.nodes(cst.Arg):
            yield Mutation(node, node.with_changes(value=cst.Name("None")), "arg None")
        for node in ctx.nodes(cst.AugAssign):
            yield Mutation(node, cst.Assign([cst.AssignTarget(node.target)], node.value), "assign")
        for node in ctx.nodes(cst.Annotation):
            yield Mutation(node, node.with_changes(annotation=cst.Name("object")), "object")


def test_nodes_rendered_by_their_parent_are_patched_exactly() -> None:
    source = textwrap.dedent(
        """\
        def f(x: int, *args) -> str:
            if x:
                a = g(1, key=2)
            elif x > 1:
                a += 1; a -= 2; b = 3
            else:
                a = h(x)
            return a
        """
    )
    ctx = SourceContext(source)
    patcher = _Patcher(ctx)
    mutations = list(_ParentRendered().find(ctx))
    assert len(mutations) >= 8
    for mutation in mutations:
        patch, _ = patcher.patch(mutation)
        assert patch.text == _reference_text(ctx, mutation.node, mutation.replacement)
        compile(patch.apply(source), "parent.py", "exec")
    elif_mutant = generate_for_source(source, "parent.py", [_ParentRendered()])
    assert any("elif False:" in m.mutated_source(source) for m in elif_mutant)


@pytest.mark.parametrize("source", [AWKWARD, STABLE], ids=["awkward", "stable"])
def test_only_the_mutated_lines_change(source: str) -> None:
    lines = source.splitlines()
    for mutant in _mutants(source, "all"):
        mutated = mutant.mutated_source(source).splitlines()
        first, last = mutant.location.start_line, mutant.location.end_line
        assert mutated[: first - 1] == lines[: first - 1], mutant
        tail = len(lines) - last
        assert mutated[len(mutated) - tail :] == lines[last:], mutant
        assert mutated != lines


def test_patch_covers_exactly_the_enclosing_top_level_statement() -> None:
    for mutant in _mutants(STABLE):
        statement = cst.parse_module(STABLE[mutant.patch.start : mutant.patch.end])
        assert [s.name.value for s in statement.body] == [mutant.scope[0]]  # type: ignore[attr-defined]
        assert mutant.mutated_source(STABLE).startswith(STABLE[: mutant.patch.start])
        assert mutant.mutated_source(STABLE).endswith(STABLE[mutant.patch.end :])


def test_a_file_without_trailing_newline() -> None:
    source = "def f():\n    return 1\n\nX = 2"
    mutants = _mutants(source)
    assert {m.mutated_source(source) for m in mutants if m.operator == "generic-number"} == {
        "def f():\n    return 2\n\nX = 2",
        "def f():\n    return 1\n\nX = 3",
    }


def test_a_file_with_windows_newlines() -> None:
    source = "def f(x):\r\n    if x:\r\n        return g(\r\n            1,\r\n        )\r\n"
    mutants = _mutants(source)
    assert mutants
    for mutant in mutants:
        mutated = mutant.mutated_source(source)
        assert mutated.count("\r\n") == source.count("\r\n") and "\n" not in mutated.replace("\r\n", "")
        compile(mutated, "crlf.py", "exec")


def test_a_replacement_spanning_lines_keeps_the_block_indentation() -> None:
    source = textwrap.dedent(
        """\
        class A:
            def f(self, x):
                match x:
                    case 1:
                        pass
                    case _:
                        return g(
                            1,
                            2,
                        )
        """
    )
    mutants = _mutants(source)
    assert any(m.operator == "generic-match" for m in mutants)
    for mutant in mutants:
        compile(mutant.mutated_source(source), "indent.py", "exec")


# -- scopes ---------------------------------------------------------------------------------

QUALNAMES = """\
@rec
class A:
    @rec
    def method(self):
        @rec
        def inner():
            @rec
            class Local:
                @rec
                def deep(self):
                    return 1
            return Local().deep()
        return inner()

    @rec
    async def coroutine(self):
        @rec
        async def nested():
            return 2
        return await nested()

    @rec
    class Inner:
        @rec
        def method(self):
            @rec
            def g():
                return 3
            return g()


@rec
def outer(x=1):
    @rec
    def middle():
        @rec
        def innermost():
            return x
        return innermost()
    return middle()


@rec
async def top():
    return 4
"""


def _seen_qualnames() -> dict[str, str]:
    """Run QUALNAMES (calling every function, so nested defs exist) and record the
    ``__qualname__`` Python gives each decorated def and class."""
    seen: dict[str, str] = {}

    def rec(obj):  # type: ignore[no-untyped-def]
        seen[obj.__qualname__] = obj.__qualname__
        return obj

    namespace: dict[str, object] = {"rec": rec}
    exec(compile(QUALNAMES, "qualnames.py", "exec"), namespace)  # noqa: S102 - our own test source
    a = namespace["A"]()
    a.method()
    asyncio.run(a.coroutine())
    namespace["A"].Inner().method()
    namespace["outer"]()
    asyncio.run(namespace["top"]())
    return seen


def test_scope_of_definitions_matches_python_qualnames() -> None:
    seen = _seen_qualnames()
    ctx = SourceContext(QUALNAMES)
    computed = {".".join(ctx.scope_of(d)) for d in [*ctx.nodes(cst.FunctionDef), *ctx.nodes(cst.ClassDef)]}
    assert computed == set(seen)
    assert "A.method.<locals>.inner.<locals>.Local.deep" in computed
    assert "A.coroutine.<locals>.nested" in computed


def test_scope_of_code_inside_a_body_is_the_function() -> None:
    ctx = SourceContext(QUALNAMES)
    returns = {ctx.code(r.value): ".".join(ctx.scope_of(r.value)) for r in ctx.nodes(cst.Return)}
    assert returns["1"] == "A.method.<locals>.inner.<locals>.Local.deep"
    assert returns["3"] == "A.Inner.method.<locals>.g"
    assert returns["x"] == "outer.<locals>.middle.<locals>.innermost"


def test_defaults_decorators_and_annotations_belong_to_the_enclosing_scope() -> None:
    source = "class C:\n    @deco(5)\n    def f(self, x: int = 7) -> Ret:\n        return 9\n"
    ctx = SourceContext(source)
    scopes = {ctx.code(n): ctx.scope_of(n) for n in [*ctx.nodes(cst.Integer), *ctx.nodes(cst.Name)]}
    assert [scopes[k] for k in ("5", "7", "int", "Ret")] == [("C",)] * 4
    assert scopes["9"] == ("C", "f") and scopes["x"] == ("C", "f")
    mutants = _mutants(source)
    numbers = {m.original: m.scope for m in mutants if m.operator == "generic-number"}
    assert numbers == {"7": ("C",), "9": ("C", "f")}


# -- the context agrees with libcst -------------------------------------------------------------


class _Recorder(cst.CSTVisitor):
    def __init__(self) -> None:
        self.nodes: list[cst.CSTNode] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.nodes.append(node)
        return True


@pytest.mark.parametrize("path", [SAMPLE_AGENT[0], *STDLIB, BASE_CLIENT], ids=lambda p: p.name)
def test_context_index_positions_and_matching_agree_with_libcst(path: Path) -> None:
    """The context re-implements libcst pieces for speed (child order, positions, findall):
    they must give libcst's own answers."""
    source = path.read_text()
    ctx = SourceContext(source)
    recorder = _Recorder()
    ctx.module.visit(recorder)
    assert [id(n) for n in ctx.nodes_in_order()] == [id(n) for n in recorder.nodes]
    assert dict(ctx.wrapper.resolve(PositionProvider)) == {n: ctx.position(n) for n in recorder.nodes}
    spans_ok = all(
        source[a:b] == ctx.code_in_place(n)
        for n in recorder.nodes[::17]
        if not _needs_parent(type(n))  # their text depends on the parent (``elif``, a comma ...)
        for a, b in [ctx.span(n)]
        if b <= len(source)
    )
    assert spans_ok
    matchers = [
        m.Call(),
        m.Name("self") | m.Attribute(attr=m.Name("get")),
        m.AllOf(m.Call(), m.Call(func=m.Name())),
    ]
    for matcher in matchers:
        assert ctx.findall(matcher) == list(m.findall(ctx.module, matcher))
        for node in ctx.nodes(cst.FunctionDef)[:12]:
            assert ctx.descendants(node, matcher) == list(m.findall(node, matcher))


# -- parity with mutmut ----------------------------------------------------------------------------


def _mutmut_pairs(source: str) -> Counter[tuple[str, str]]:
    from libcst.metadata import MetadataWrapper
    from mutmut.mutation.file_mutation import MutationVisitor
    from mutmut.mutation.mutators import mutation_operators
    from mutmut.mutation.pragma_handling import IgnoredCode

    visitor = MutationVisitor(mutation_operators, IgnoredCode(set(), set(), set()))
    module = MetadataWrapper(cst.parse_module(source)).visit(visitor)
    return Counter(
        (_plain(module.code_for_node(mu.original_node)), _plain(module.code_for_node(mu.mutated_node)))
        for mu in visitor.mutations
        if isinstance(mu.contained_by_top_level_function, cst.FunctionDef)  # what mutmut runs
    )


def _plain(code: str) -> str:
    """Whitespace-insensitive, and blind to the parentheses mutagent keeps on ``(not x)``."""
    text = " ".join(code.split())
    while text.startswith("(") and text.endswith(")"):
        text = text[1:-1]
    return text


def _undecorated_function_lines(source: str) -> list[tuple[int, int]]:
    """Lines of the top-level functions and methods mutmut mutates (it skips decorated ones)."""
    ctx = SourceContext(source)
    ranges = []
    for statement in ctx.module.body:
        candidates = [statement]
        if isinstance(statement, cst.ClassDef) and isinstance(statement.body, cst.IndentedBlock):
            candidates = list(statement.body.body)
        for node in candidates:
            decorators = [d.decorator for d in getattr(node, "decorators", ())]
            plain = all(
                isinstance(d, cst.Name) and d.value in ("staticmethod", "classmethod") for d in decorators
            )
            if isinstance(node, cst.FunctionDef) and plain and len(decorators) <= 1:
                position = ctx.position(node)
                ranges.append((position.start.line, position.end.line))
    return ranges


@pytest.mark.parametrize("path", [*SAMPLE_AGENT, *STDLIB], ids=lambda p: p.name)
def test_generic_family_makes_mutmuts_mutants_inside_functions(path: Path) -> None:
    source = path.read_text()
    ranges = _undecorated_function_lines(source)
    ours = Counter(
        (_plain(mu.original), _plain(mu.replacement))
        for mu in _mutants(source, "generic", path.name)
        if any(a <= mu.location.start_line <= b for a, b in ranges)
    )
    theirs = _mutmut_pairs(source)
    assert sum(ours.values()) == sum(theirs.values())
    assert ours == theirs


def test_generic_family_also_mutates_module_level_and_decorated_code() -> None:
    mutants = _mutants(AWKWARD, "generic")
    assert any(m.scope == () and m.original == "3" for m in mutants)  # MAX_RETRIES = 3
    assert any(m.scope == ("lookup",) for m in mutants)  # @tool
    assert not any(m.scope == () and m.location.start_line in (2, 4, 5, 8) for m in mutants)  # imports
    assert not any(m.original == "NAMES" or "TYPE_CHECKING" in m.original for m in mutants)


# -- errors -------------------------------------------------------------------------------------


def test_a_syntax_error_names_the_file() -> None:
    with pytest.raises(UsageError, match=r"^pkg/broken\.py: cannot parse"):
        generate_for_source("def f(:\n", "pkg/broken.py", _operators("generic"))


def test_generate_for_file_labels_mutants_relative_to_the_root(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("X = 1\n")
    mutants = generate_for_file(tmp_path, tmp_path / "pkg" / "mod.py", _operators("generic"))
    assert {m.file for m in mutants} == {"pkg/mod.py"}
    (tmp_path / "bad.py").write_bytes(b"X = '\xff'\n")
    with pytest.raises(UsageError, match="cannot read"):
        generate_for_file(tmp_path, tmp_path / "bad.py", _operators("generic"))


class _Crashing(Operator):
    """An operator with a bug: it raises on every file."""

    name = "crashing-operator"
    description = "Crashes."
    failure = "None."
    hint = "None."
    family = "agent"

    def find(self, ctx: SourceContext) -> Iterator[Mutation]:
        raise RecursionError("maximum recursion depth exceeded")
        yield  # pragma: no cover - a generator


def test_an_operator_crash_is_a_warning_naming_operator_and_file_and_the_others_carry_on() -> None:
    source = "def f(a, b):\n    return a + b\n"
    alone = _mutants(source, name="pkg/mod.py")
    assert alone  # the generic family has something to say about this file
    told: list[str] = []
    mutants = generate_for_source(
        source, "pkg/mod.py", (_Crashing(), *_operators("generic")), warn=told.append
    )
    assert [m.id for m in mutants] == [m.id for m in alone]
    assert len(told) == 1
    assert "crashing-operator" in told[0] and "pkg/mod.py" in told[0] and "RecursionError" in told[0]


def test_list_reports_an_operator_crash_and_lists_the_other_mutants(tmp_path: Path, monkeypatch) -> None:
    from mutagent.commands import list as list_command

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "mod.py").write_text("def f(a, b):\n    return a + b\n")
    import mutagent.mutation.registry as registry  # collect() imports select_operators from here

    original = registry.select_operators
    monkeypatch.setattr(registry, "select_operators", lambda spec: [_Crashing(), *original("generic")])
    mutants, warnings, files = list_command.collect(tmp_path, None, "generic")
    assert mutants and files >= 1
    assert any("crashing-operator" in w and "pkg/mod.py" in w for w in warnings)
