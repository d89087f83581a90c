"""Suppression comments: mutmut's ``# pragma: no mutate`` and mutagent's own directives.

* ``# pragma: no mutate`` or ``# mutagent: skip`` -- no mutant on this line (or in this block
  when written on a block's header line: ``def``, ``class``, ``if``, ``for``, ``with``, ``try`` ...).
* ``# mutagent: skip=<operator>[,<operator>] <reason>`` -- only those operators; the reason is
  reported with the Ignored mutant.

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


def parse_directive(comment: str) -> Directive | None:
    text = comment.lstrip("#").strip()
    if _PRAGMA.search(text):
        return Directive(frozenset(), "pragma: no mutate")
    found = _SKIP.search(text)
    if not found:
        return None
    ops = frozenset(o for o in (found.group("ops") or "").split(",") if o)
    reason = (found.group("reason") or "").strip() or "mutagent: skip"
    return Directive(ops, reason)


def directives_by_line(source: str) -> dict[int, Directive]:
    """Map 1-based line numbers to the suppression directive in that line's comment."""
    result: dict[int, Directive] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.COMMENT:
                directive = parse_directive(token.string)
                if directive:
                    result[token.start[0]] = directive
    except (tokenize.TokenError, SyntaxError):
        pass
    return result
