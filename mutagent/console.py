"""The one place terminal output is configured: every command prints through these rich consoles."""

from __future__ import annotations

from rich.console import Console

console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)


def error(message: str) -> None:
    """Print a one-line error the way every command does."""
    err_console.print(f"[bold red]error:[/] {message}", soft_wrap=True)


def warning(message: str) -> None:
    err_console.print(f"[yellow]warning:[/] {message}", soft_wrap=True)
