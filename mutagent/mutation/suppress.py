"""Suppression comments: mutmut's ``# pragma: no mutate`` and mutagent's own directives.

* ``# pragma: no mutate`` or ``# mutagent: skip`` -- no mutant on this line (or in this block
  when written on a block's header line: ``def``, ``class``, ``if``, ``for``, ``with``, ``try`` ...).
* ``# mutagent: skip=<operator>[,<operator>] <reason>`` -- only those operators; the reason is
  reported with the Ignored mutant.
* mutmut's region forms: ``# pragma: no mutate start`` ... ``# pragma: no mutate end`` (every
  line between, an unclosed start runs to the end of the file) and ``# pragma: no mutate block``
  alone on a line (the rest of the enclosing block: every following line indented at least as
  much as the comment, up to the first line indented less).

A suppressed mutant is still generated and listed, as Ignored with the reason, so a report
shows what was deliberately left untested instead of silently having fewer mutants.

Comments are read with :mod:`tokenize`, so a ``#`` inside a string never counts.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass

_SKIP = re.compile(r"mutagent:\s*skip(?:=(?P<ops>[\w,\-]+))?(?:\s+(?P<reason>.*))?$")
_PRAGMA = re.compile(r"pragma:\s*no\s+mutate")


@dataclass(frozen=True)
class Directive:
    """One suppression comment: ``operators`` empty means every operator."""

    operators: frozenset[str]
    reason: str

    def applies_to(self, operator: str) -> bool:
        return not self.operators or operator in self.operators


_REGION = Directive(frozenset(), "pragma: no mutate")


def parse_directive(comment: str) -> Directive | None:
    """The directive a single comment states (a region pragma counts for its own line too)."""
    text = comment.lstrip("#").strip()
    if _PRAGMA.search(text):
        return Directive(frozenset(), "pragma: no mutate")
    found = _SKIP.search(text)
    if not found:
        return None
    ops = frozenset(o for o in (found.group("ops") or "").split(",") if o)
    reason = (found.group("reason") or "").strip() or "mutagent: skip"
    return Directive(ops, reason)


def _region_kind(comment: str) -> str | None:
    """``start``/``end``/``block`` for mutmut's region pragmas, None otherwise."""
    text = comment.lstrip("#").strip()
    found = re.search(r"pragma:\s*no\s+mutate[:\s]*(\w+)?", text)
    if found and found.group(1) in ("start", "end", "block"):
        return found.group(1)
    return None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def directives_by_line(source: str) -> dict[int, Directive]:
    """Map 1-based line numbers to the suppression directive that covers that line."""
    result: dict[int, Directive] = {}
    region_start: int | None = None
    blocks: list[tuple[int, int]] = []  # (line of a standalone ``block`` pragma, its indentation)
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type != tokenize.COMMENT:
                continue
            line = token.start[0]
            standalone = token.line.strip().startswith("#")
            kind = _region_kind(token.string)
            if kind == "start" and region_start is None:
                region_start = line
            elif kind == "end" and region_start is not None:
                for covered in range(region_start, line + 1):
                    result[covered] = _REGION
                region_start = None
            elif kind == "block" and standalone:
                blocks.append((line, token.start[1]))
            directive = parse_directive(token.string)
            if directive:
                result[line] = directive
    except (tokenize.TokenError, SyntaxError):
        pass
    lines = source.splitlines()
    if region_start is not None:
        for covered in range(region_start, len(lines) + 1):
            result[covered] = _REGION
    for start, indent in blocks:
        for number in range(start + 1, len(lines) + 1):
            text = lines[number - 1]
            if text.strip() and not text.lstrip().startswith("#") and _indent(text) < indent:
                break
            result[number] = _REGION
    return result
