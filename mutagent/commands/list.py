"""``mutagent list [PATH]``: the mutants a run would execute, without running anything.

Uses the engine's own source discovery and ``[tool.mutagent]`` settings, so the list is exactly
what ``mutagent run`` would mutate, and it fails where ``run`` fails: a source file that cannot
be read or parsed is one line naming it and exit 2 (a list that quietly drops a file would
promise a run that never happens). Each mutant takes two lines (id, place and operator, then its
description, indented) so that an 80-column terminal shows every word of it.
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
            raise UsageError(f"cannot read {root / relative}: {exc}") from exc
        # a syntax error is a UsageError naming the file, exit 2, exactly as `mutagent run` stops
        mutants.extend(generate_for_source(text, relative, operators, warn=warnings.append, root=root))
    return mutants, warnings, len(target.sources)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _print_list(mutants: list[Any], files: int) -> None:
    """Two lines per mutant: ``id  file:line  operator``, then the description, indented."""
    from rich.text import Text

    from mutagent.console import console

    for mutant in mutants:
        ignored = mutant.ignored_reason is not None
        head = Text.assemble(
            (mutant.id, "cyan"),
            "  ",
            (f"{mutant.file}:{mutant.location.start_line}", "bold"),
            "  ",
            (mutant.operator, "magenta"),
            style="dim" if ignored else "",
        )
        description = Text(mutant.description, style="dim" if ignored else "")
        if ignored:
            description.append(f"  [Ignored: {mutant.ignored_reason}]", style="yellow")
        console.print(head, overflow="fold")
        for line in description.wrap(console, max(20, console.width - 4)):
            line.rstrip()
            console.print(Text("    ") + line, soft_wrap=True)
    ignored = sum(1 for m in mutants if m.ignored_reason is not None)
    operators = len({m.operator for m in mutants})
    with_mutants = len({m.file for m in mutants})
    summary = (
        f"{_count(len(mutants), 'mutant')} ({ignored} ignored) from {_count(operators, 'operator')} "
        f"in {with_mutants} of {_count(files, 'file')}"
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
        _print_list(mutants, files)
    return 0
