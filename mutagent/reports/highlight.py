"""Python source -> one escaped, syntax-highlighted HTML fragment per line (for the HTML report).

The HTML report marks mutants line by line, so it needs highlighting split at line boundaries,
which pygments' own HtmlFormatter does not give directly; lexing and escaping here is small and
keeps every character of the source escaped exactly once.
"""

from __future__ import annotations

from html import escape
from typing import Any

from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer
from pygments.token import STANDARD_TYPES

_LEXER = PythonLexer(stripnl=False, stripall=False, ensurenl=False)


def _css_class(token: Any) -> str:
    while token not in STANDARD_TYPES and token.parent is not None:
        token = token.parent
    return STANDARD_TYPES.get(token, "")


def highlight_lines(source: str) -> list[str]:
    """One HTML fragment per source line (``\\n``-split, like the report's line numbers)."""
    source = source.replace("\r\n", "\n").replace("\r", "\n")  # pygments normalises newlines the same way
    lines: list[list[str]] = [[]]
    for token, value in _LEXER.get_tokens(source):
        css = _css_class(token)
        for index, piece in enumerate(value.split("\n")):
            if index:
                lines.append([])
            if piece:
                text = escape(piece, quote=False)
                lines[-1].append(f'<span class="{css}">{text}</span>' if css else text)
    count = source.count("\n") + (0 if source.endswith("\n") else 1)
    fragments = ["".join(parts) for parts in lines][:count]
    return fragments + [""] * (count - len(fragments))


def highlight_css(scope: str = ".hl") -> str:
    """The pygments colour rules for token classes under ``scope``."""
    rules = HtmlFormatter(style="default").get_style_defs(scope).splitlines()
    return "\n".join(rule for rule in rules if rule.startswith(scope))  # drop pygments' global pre/td rules
