"""From source files to :class:`~mutagent.model.Mutant` objects.

Each operator's :class:`Mutation` names one node and its replacement. Turning that into an exact
mutated file must be cheap (hundreds of mutants per second) and exact, so instead of
``deep_replace`` over the whole module (a full tree transform per mutant) we rebuild only the
path from the node up to its top-level statement (``with_changes`` on each ancestor) and
re-render that one statement. The resulting :class:`TextPatch` replaces the statement's span in
the original text, which stays byte-identical everywhere else.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import libcst as cst

from mutagent.errors import UsageError
from mutagent.model import Location, Mutant, TextPatch
from mutagent.mutation.context import SourceContext
from mutagent.mutation.operator import Mutation, Operator
from mutagent.mutation.suppress import Directive, directives_by_line

_BLOCK_HEADERS = (
    cst.FunctionDef,
    cst.ClassDef,
    cst.If,
    cst.For,
    cst.While,
    cst.With,
    cst.Try,
    cst.TryStar,
    cst.ExceptHandler,
    cst.Match,
)


def _replace_child(parent: cst.CSTNode, old: cst.CSTNode, new: cst.CSTNode) -> cst.CSTNode:
    """``parent`` with its direct child ``old`` (by identity) replaced by ``new``."""
    changes: dict[str, object] = {}
    for field in dataclasses.fields(parent):
        value = getattr(parent, field.name)
        if value is old:
            changes[field.name] = new
        elif isinstance(value, (list, tuple)) and any(item is old for item in value):
            changes[field.name] = type(value)(new if item is old else item for item in value)
    if not changes:
        raise ValueError(f"{type(old).__name__} is not a direct child of {type(parent).__name__}")
    return parent.with_changes(**changes)


class _StatementSpans:
    """Character spans of each top-level statement, so one statement can be re-rendered alone."""

    def __init__(self, ctx: SourceContext) -> None:
        module = ctx.module
        offset = sum(len(module.code_for_node(line)) for line in module.header)
        self.spans: dict[int, tuple[int, int]] = {}
        for statement in module.body:
            length = len(module.code_for_node(statement))
            self.spans[id(statement)] = (offset, offset + length)
            offset += length
        footer = sum(len(module.code_for_node(line)) for line in module.footer)
        # libcst renders the module exactly; if the pieces do not add up (odd trailing-newline
        # cases) fall back to re-rendering the whole module, slower but still exact.
        self.exact = offset + footer == len(ctx.source) and module.code == ctx.source

    def patch(self, ctx: SourceContext, mutation: Mutation) -> TextPatch:
        top = ctx.top_level_statement(mutation.node)
        current_old, current_new = mutation.node, mutation.replacement
        if current_old is not top:
            for parent in ctx.ancestors(mutation.node):
                rebuilt = _replace_child(parent, current_old, current_new)
                current_old, current_new = parent, rebuilt
                if parent is top:
                    break
        if self.exact:
            start, end = self.spans[id(top)]
            return TextPatch(start, end, ctx.module.code_for_node(current_new))
        body = [current_new if stmt is top else stmt for stmt in ctx.module.body]
        return TextPatch(0, len(ctx.source), ctx.module.with_changes(body=body).code)


def _normalise(code: str) -> str:
    return " ".join(code.split())


def mutant_id(file: str, scope: tuple[str, ...], operator: str, original: str, replacement: str, n: int) -> str:
    """Content-derived id: unchanged by edits anywhere outside the mutated construct's function."""
    key = "\x00".join([file, ".".join(scope), operator, _normalise(original), _normalise(replacement), str(n)])
    return hashlib.sha256(key.encode()).hexdigest()[:12]


def _suppression(
    ctx: SourceContext, node: cst.CSTNode, operator: str, directives: dict[int, Directive]
) -> str | None:
    if not directives:
        return None
    position = ctx.position(node)
    lines = set(range(position.start.line, position.end.line + 1))
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.SimpleStatementLine | cst.BaseSmallStatement):
            lines.add(ctx.position(ancestor).start.line)
        elif isinstance(ancestor, _BLOCK_HEADERS):
            header = ancestor.name if isinstance(ancestor, cst.FunctionDef | cst.ClassDef) else ancestor
            lines.add(ctx.position(header).start.line)
    for line in sorted(lines):
        directive = directives.get(line)
        if directive and directive.applies_to(operator):
            return directive.reason
    return None


def generate_for_source(source: str, file: str, operators: Sequence[Operator]) -> list[Mutant]:
    """All mutants the given operators produce for one file's text (``file`` is only a label)."""
    try:
        ctx = SourceContext(source, file)
    except cst.ParserSyntaxError as exc:
        raise UsageError(f"{file}: cannot parse: {str(exc).splitlines()[0]}") from exc
    spans = _StatementSpans(ctx)
    directives = directives_by_line(source)
    mutants: list[Mutant] = []
    seen: Counter[tuple] = Counter()
    for operator in operators:
        produced: set[tuple[int, str]] = set()
        for mutation in operator.find(ctx):
            original = ctx.code(mutation.node)
            replacement = ctx.module.code_for_node(mutation.replacement)
            if original == replacement or (id(mutation.node), replacement) in produced:
                continue
            produced.add((id(mutation.node), replacement))
            scope = ctx.scope_of(mutation.node)
            key = (scope, operator.name, _normalise(original), _normalise(replacement))
            occurrence = seen[key]
            seen[key] += 1
            position = ctx.position(mutation.node)
            mutants.append(
                Mutant(
                    id=mutant_id(file, scope, operator.name, original, replacement, occurrence),
                    operator=operator.name,
                    file=file,
                    scope=scope,
                    location=Location(
                        position.start.line, position.start.column, position.end.line, position.end.column
                    ),
                    original=original,
                    replacement=replacement,
                    description=mutation.description,
                    patch=spans.patch(ctx, mutation),
                    ignored_reason=_suppression(ctx, mutation.node, operator.name, directives),
                )
            )
    mutants.sort(key=lambda mu: (mu.location.start_line, mu.location.start_col, mu.operator, mu.id))
    return mutants


def generate_for_file(root: Path, path: Path, operators: Sequence[Operator]) -> list[Mutant]:
    """Mutants of one file; their ``file`` is ``path`` relative to ``root`` in posix form."""
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from exc
    relative = path.resolve().relative_to(root.resolve()).as_posix()
    return generate_for_source(source, relative, operators)
