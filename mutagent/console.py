"""The one place terminal output is configured: every command prints through these rich consoles."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape

console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)


def error(message: str) -> None:
    """Print a one-line error the way every command does (the message is text, not markup:
    ``[tool.mutagent]`` in a message must reach the user intact)."""
    err_console.print(f"[bold red]error:[/] {escape(message)}", soft_wrap=True)


def warning(message: str) -> None:
    err_console.print(f"[yellow]warning:[/] {escape(message)}", soft_wrap=True)
