"""``mutagent list [PATH]``: the mutants a run would execute, without running anything.

Uses the engine's own source discovery and ``[tool.mutagent]`` settings, so the list is exactly
what ``mutagent run`` would mutate. A source file that does not parse is skipped with a
one-line warning naming it: one broken file (a fixture, a Python-3.13-only module) should not
hide the mutants of every other file, and the run itself reports it the same way.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from mutagent.commands._targetargs import add_target_arguments

HELP = "List the mutants a run would execute: id, operator, file, line, description (nothing is run)."


def register(parser: argparse.ArgumentParser) -> None:
    add_target_arguments(parser, "the target project (default: the current directory)")
    parser.add_argument("--json", action="store_true", help="print the mutants as a JSON list")


def mutant_entry(mutant: Any) -> dict[str, Any]:
    """The JSON form of one mutant: what ``--json`` prints for it."""
    location = mutant.location
    return {
        "id": mutant.id,
        "operator": mutant.operator,
        "file": mutant.file,
        "line": location.start_line,
        "column": location.start_col,
        "end_line": location.end_line,
        "end_column": location.end_col,
        "scope": mutant.qualname,
        "description": mutant.description,
        "original": mutant.original,
        "replacement": mutant.replacement,
        "ignored": mutant.ignored_reason is not None,
        "ignored_reason": mutant.ignored_reason,
    }


def collect(
    root: Path, paths: list[str] | None, operators_spec: str | None
) -> tuple[list[Any], list[str], int]:
    """Mutants of every source of ``root``, warnings for skipped files, number of files."""
    from mutagent.config import build_config
    from mutagent.engine.selection.discover import discover
    from mutagent.errors import UsageError
    from mutagent.mutation.generate import generate_for_source
    from mutagent.mutation.registry import select_operators

    if not root.exists():
        raise UsageError(f"{root} does not exist")
    if not root.is_dir():
        raise UsageError(f"{root} is not a directory")
    config = build_config(root, {"paths": paths, "operators": operators_spec})
    operators = select_operators(config.operators)  # an unknown name fails before any file is read
    target = discover(root, config.paths or None, tests_given=True)
    mutants: list[Any] = []
    warnings: list[str] = []
    for relative in target.sources:
        try:
            text = (root / relative).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            warnings.append(f"skipped {relative}: cannot read it ({exc})")
            continue
        try:
            mutants.extend(generate_for_source(text, relative, operators, warn=warnings.append))
        except UsageError as exc:  # a syntax error: skip the file, keep the others' mutants
            warnings.append(f"skipped {exc}")
    return mutants, warnings, len(target.sources)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _print_table(mutants: list[Any], files: int) -> None:
    from rich.table import Table
    from rich.text import Text

    from mutagent.console import console

    table = Table(show_lines=False, title_justify="left")
    table.add_column("id", style="cyan", no_wrap=True)
    table.add_column("operator", style="magenta", overflow="fold", max_width=26)
    table.add_column("file:line", overflow="fold", max_width=30)
    table.add_column("description", ratio=1)
    for mutant in mutants:
        description = Text(mutant.description)
        style = ""
        if mutant.ignored_reason is not None:
            description.append(f"  [Ignored: {mutant.ignored_reason}]", style="yellow")
            style = "dim"
        where = f"{mutant.file}:{mutant.location.start_line}"
        table.add_row(mutant.id, mutant.operator, where, description, style=style)
    if mutants:
        console.print(table)
    ignored = sum(1 for m in mutants if m.ignored_reason is not None)
    operators = len({m.operator for m in mutants})
    summary = (
        f"{_count(len(mutants), 'mutant')} ({ignored} ignored) from {_count(operators, 'operator')} "
        f"in {_count(files, 'file')}"
    )
    console.print(f"[bold]{summary}[/]", soft_wrap=True)


def run(args: argparse.Namespace) -> int:
    from rich.markup import escape

    from mutagent.console import console, warning

    mutants, warnings, files = collect(Path(args.path), args.paths, args.operators)
    for message in warnings:
        warning(escape(message))
    if args.json:
        console.out(json.dumps([mutant_entry(m) for m in mutants], indent=2), highlight=False)
    else:
        _print_table(mutants, files)
    return 0
