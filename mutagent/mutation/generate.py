"""From source files to :class:`~mutagent.model.Mutant` objects.

Each operator's :class:`Mutation` names one node and its replacement. Turning that into an exact
mutated file must be cheap (thousands of mutants per second) and exact. Instead of
``deep_replace`` over the whole module (a full tree transform per mutant), the file is rendered
once with every node's character span recorded (``SourceContext.span``); a mutant's text is the
enclosing top-level statement as written, with the node's span replaced by the replacement
rendered in place. The resulting :class:`TextPatch` replaces that statement's span, so the file
stays byte-identical everywhere else.
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import libcst as cst

from mutagent.errors import UsageError
from mutagent.model import Location, Mutant, TextPatch
from mutagent.mutation.context import SourceContext
from mutagent.mutation.operator import Mutation, Operator
from mutagent.mutation.suppress import Directive, directives_by_line, parse_directive

_BLOCK_HEADERS = (
    cst.FunctionDef,
    cst.ClassDef,
    cst.If,
    cst.Else,
    cst.For,
    cst.While,
    cst.With,
    cst.Try,
    cst.TryStar,
    cst.ExceptHandler,
    cst.ExceptStarHandler,
    cst.Finally,
    cst.Match,
    cst.MatchCase,
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


_KWARG_CACHE: dict[type, bool] = {}


def _needs_parent(node_type: type) -> bool:
    """Whether a node's rendering depends on its parent (``elif``/``if``, a default comma or
    semicolon, an annotation's ``:``/``->``): libcst passes those as codegen keyword arguments,
    so such a node cannot be rendered alone exactly and is rendered through its parent."""
    needs = _KWARG_CACHE.get(node_type)
    if needs is None:
        parameters = inspect.signature(node_type._codegen_impl).parameters  # type: ignore[attr-defined]
        needs = _KWARG_CACHE[node_type] = len(parameters) > 2  # more than (self, state)
    return needs


class _Patcher:
    """Turns mutations of one file into exact :class:`TextPatch` objects.

    The patch always spans the whole top-level statement holding the mutation. Its text is the
    statement as written, with the span of the mutated node (or of its nearest ancestor that
    renders on its own, see :func:`_needs_parent`) replaced by that node rebuilt with the
    replacement and rendered in place, with the enclosing blocks' indentation. That is exactly
    what re-rendering the rebuilt statement would print, without rendering a 500-line class
    once per mutant. Re-rendering the statement remains the fallback for a node without a
    known span (the end of a file without a trailing newline).
    """

    def __init__(self, ctx: SourceContext) -> None:
        self.ctx = ctx

    def _rebuild(self, node: cst.CSTNode, replacement: cst.CSTNode, up_to: cst.CSTNode) -> cst.CSTNode:
        """``up_to`` (an ancestor of ``node``, or ``node``) with ``node`` replaced."""
        current_old, current_new = node, replacement
        if current_old is up_to:
            return current_new
        for parent in self.ctx.ancestors(node):
            current_new = _replace_child(parent, current_old, current_new)
            current_old = parent
            if parent is up_to:
                break
        return current_new

    def original_text(self, node: cst.CSTNode) -> str:
        """``node`` as written in the file (as rendered alone when its span is unknown)."""
        span = self.ctx.span(node)
        if span is not None and span[1] <= len(self.ctx.source):
            return self.ctx.source[span[0] : span[1]]
        return self.ctx.code(node)

    def patch(self, mutation: Mutation) -> tuple[TextPatch, str]:
        """The patch, and the replacement's text as it reads in the file (for display and ids;
        read off its rebuilt parent's rendering when it cannot be rendered alone)."""
        ctx, source = self.ctx, self.ctx.source
        node = mutation.node
        top = ctx.top_level_statement(node)
        top_span = ctx.span(top)
        anchor = node
        while anchor is not top and _needs_parent(type(anchor)):
            anchor = ctx.parent(anchor)  # type: ignore[assignment]
        anchor_span = ctx.span(anchor)
        if top_span is not None and anchor_span is not None and top_span[1] <= len(source):
            rebuilt = self._rebuild(node, mutation.replacement, anchor)
            (start, end), (a, b) = top_span, anchor_span
            if anchor is node:
                rendered = replacement = ctx.code_in_place(anchor, rebuilt)
            else:  # the replacement's text is read off the rendering of its rebuilt parent
                rendered, replacement = ctx.code_of_part_in_place(anchor, rebuilt, mutation.replacement)
            return TextPatch(start, end, source[start:a] + rendered + source[b:end]), replacement
        rebuilt = self._rebuild(node, mutation.replacement, top)
        _, replacement = ctx.code_of_part_in_place(top, rebuilt, mutation.replacement)
        if top_span is not None:
            start, end = top_span
            text = ctx.module.code_for_node(rebuilt)
            if end > len(source):  # last statement of a file without a trailing newline
                text = text.removesuffix(ctx.module.default_newline)
                end = len(source)
            return TextPatch(start, end, text), replacement
        body = [rebuilt if stmt is top else stmt for stmt in ctx.module.body]
        return TextPatch(0, len(source), ctx.module.with_changes(body=body).code), replacement


def _normalise(code: str) -> str:
    return " ".join(code.split())


def mutant_id(
    file: str, scope: tuple[str, ...], operator: str, original: str, replacement: str, n: int
) -> str:
    """Content-derived id: unchanged by edits anywhere outside the mutated construct's function.

    ``n`` numbers identical (scope, operator, original, replacement) occurrences in document
    order, so two ``retries + 1`` in one function still get distinct ids.
    """
    parts = [file, ".".join(scope), operator, _normalise(original), _normalise(replacement), str(n)]
    key = "\x00".join(parts)
    return hashlib.sha256(key.encode()).hexdigest()[:12]


def _common_length(a: str, b: str, *, from_end: bool) -> int:
    """Length of the common prefix (or suffix) of ``a`` and ``b``, by binary search over slice
    comparisons: statements are long and differ in a few characters."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        same = a[len(a) - middle :] == b[len(b) - middle :] if from_end else a[:middle] == b[:middle]
        if same:
            low = middle
        else:
            high = middle - 1
    return low


def _changed_lines(ctx: SourceContext, patch: TextPatch) -> range:
    """The lines of the original text the patch actually rewrites.

    A directive suppresses mutants on its line; a mutation anchored on a multi-line node (a
    ``match`` losing one ``case``, a call losing one argument) should only be suppressed by a
    directive on the lines it removes or rewrites, as mutmut does, not by one anywhere in it.
    """
    before = ctx.source[patch.start : patch.end]
    after = patch.text
    prefix = _common_length(before, after, from_end=False)
    limit = min(len(before), len(after)) - prefix
    suffix = min(_common_length(before, after, from_end=True), limit)
    first = ctx.source.count("\n", 0, patch.start + prefix)
    last = ctx.source.count("\n", 0, patch.start + max(prefix, len(before) - suffix - 1))
    return range(first + 1, last + 2)


def _offset_location(source: str, offset: int) -> tuple[int, int]:
    """(1-based line, 0-based column) of a character offset of ``source``."""
    line_start = source.rfind("\n", 0, offset) + 1
    return source.count("\n", 0, offset) + 1, offset - line_start


def _edited_location(source: str, patch: TextPatch) -> Location:
    """Where a block mutation really edits the file: the span of the original text the patch
    changes, from the first changed character (past the indentation of its line) to the last.

    A mutation anchored on a whole block (a key made once before a retry loop, now made again at
    the top of each attempt, rebuilds the function's body) would otherwise be located at the
    block's first statement: reported at a line it never touches, and taken for code spanning
    the whole body. An insertion is a point: where the new text goes.
    """
    before = source[patch.start : patch.end]
    after = patch.text
    prefix = _common_length(before, after, from_end=False)
    limit = min(len(before), len(after)) - prefix
    suffix = min(_common_length(before, after, from_end=True), limit)
    start = patch.start + prefix
    end = max(start, patch.start + len(before) - suffix)
    line_start = source.rfind("\n", 0, start) + 1
    if end > start and not source[line_start:start].strip():  # inside the indentation: skip it
        text = source[line_start:end]
        start = min(end, line_start + len(text) - len(text.lstrip(" \t")))
    return Location(*_offset_location(source, start), *_offset_location(source, end))


def _header_comment(block: cst.CSTNode) -> cst.Comment | None:
    """The comment after a block header's colon (``if x:  # here``), wherever that line is."""
    body = getattr(block, "body", None)
    if isinstance(body, cst.IndentedBlock):
        return body.header.comment
    if isinstance(body, cst.SimpleStatementSuite):
        return body.trailing_whitespace.comment
    if isinstance(block, cst.Match):
        return block.whitespace_after_colon.comment
    return None


def _suppression(
    ctx: SourceContext,
    node: cst.CSTNode,
    operator: str,
    directives: dict[int, Directive],
    patch: TextPatch,
) -> str | None:
    """Why this mutant is Ignored, or None: a directive on a changed line, on the first line or
    in the trailing comment of an enclosing statement, or on an enclosing block's header."""
    if not directives:
        return None
    lines = set(_changed_lines(ctx, patch))
    comments: list[cst.Comment] = []
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.SimpleStatementLine):
            lines.add(ctx.position(ancestor).start.line)
            if ancestor.trailing_whitespace.comment:
                comments.append(ancestor.trailing_whitespace.comment)
        elif isinstance(ancestor, cst.BaseSmallStatement):
            lines.add(ctx.position(ancestor).start.line)
        elif isinstance(ancestor, _BLOCK_HEADERS):
            header = ancestor.name if isinstance(ancestor, cst.FunctionDef | cst.ClassDef) else ancestor
            lines.add(ctx.position(header).start.line)
            comment = _header_comment(ancestor)
            if comment:
                comments.append(comment)
    for line in sorted(lines):
        directive = directives.get(line)
        if directive and directive.applies_to(operator):
            return directive.reason
    for comment in comments:
        directive = parse_directive(comment.value)
        if directive and directive.applies_to(operator):
            return directive.reason
    return None


def generate_for_source(
    source: str,
    file: str,
    operators: Sequence[Operator],
    warn: Callable[[str], None] | None = None,
    root: Path | None = None,
) -> list[Mutant]:
    """All mutants the given operators produce for one file's text (``file`` is only a label).

    Raises :class:`UsageError` naming the file when it cannot be parsed. An operator that crashes
    on this file (a bug of that operator, e.g. a RecursionError on a cycle it did not foresee)
    loses only its own mutants of this file: ``warn`` (default: a console warning) is told which
    operator and file, and every other operator and file still gets its mutants, because one
    operator's bug must not cost a whole run. ``root``: the target directory ``file`` is relative
    to, so that operators can read the target's other files (a class hierarchy across modules).
    """
    try:
        ctx = SourceContext(source, file, root)
    except cst.ParserSyntaxError as exc:
        raise UsageError(f"{file}: cannot parse: {str(exc).splitlines()[0]}") from exc
    patcher = _Patcher(ctx)
    directives = directives_by_line(source)
    mutants: list[Mutant] = []
    seen: Counter[tuple] = Counter()
    # The same mutated file is one mutant, whichever operators reach it (an except clause in a
    # retry loop is both a disconnect handler and a retry classification): the agent family
    # is asked first, so the more specific concern names it.
    produced: set[str] = set()
    for operator in sorted(operators, key=lambda op: op.family != "agent"):
        try:
            found = list(operator.find(ctx))
        except Exception as exc:  # noqa: BLE001 - any operator bug, reported and contained
            _report_crash(warn, operator.name, file, exc)
            continue
        for mutation in found:
            patch, replacement = patcher.patch(mutation)
            if patch.text == source[patch.start : patch.end]:
                continue  # a no-op
            fingerprint = hashlib.sha1(patch.apply(source).encode()).hexdigest()
            if fingerprint in produced:
                continue
            produced.add(fingerprint)
            original = patcher.original_text(mutation.node)
            scope = ctx.scope_of(mutation.node)
            key = (scope, operator.name, _normalise(original), _normalise(replacement))
            occurrence = seen[key]
            seen[key] += 1
            position = ctx.position(mutation.node)
            location = Location(
                position.start.line, position.start.column, position.end.line, position.end.column
            )
            if isinstance(mutation.node, cst.BaseSuite | cst.Module):  # a block: where it really edits
                location = _edited_location(source, patch)
            mutants.append(
                Mutant(
                    id=mutant_id(file, scope, operator.name, original, replacement, occurrence),
                    operator=operator.name,
                    file=file,
                    scope=scope,
                    location=location,
                    original=original,
                    replacement=replacement,
                    description=mutation.description,
                    patch=patch,
                    ignored_reason=_suppression(ctx, mutation.node, operator.name, directives, patch)
                    or (f"equivalent mutant: {mutation.equivalent}" if mutation.equivalent else None),
                )
            )
    mutants.sort(key=lambda mu: (mu.location.start_line, mu.location.start_col, mu.operator, mu.id))
    return mutants


def _report_crash(warn: Callable[[str], None] | None, operator: str, file: str, exc: Exception) -> None:
    detail = str(exc).splitlines()[0] if str(exc) else ""
    message = (
        f"operator {operator} crashed on {file} ({type(exc).__name__}{': ' + detail if detail else ''}); "
        "its mutants of this file are skipped, the other operators' are kept"
    )
    if warn is None:
        from mutagent.console import warning as warn
    warn(message)


def generate_for_file(root: Path, path: Path, operators: Sequence[Operator]) -> list[Mutant]:
    """Mutants of one file; their ``file`` is ``path`` relative to ``root`` in posix form."""
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from exc
    relative = path.resolve().relative_to(root.resolve()).as_posix()
    return generate_for_source(source, relative, operators, root=root)
