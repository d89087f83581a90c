"""``mutagent apply ID``: put one mutant into the working tree to debug it by hand.

This deliberately modifies the user's source, so it refuses when the file is not the version the
run tested (it would mix the mutant with unrelated edits) and prints, loudly, how to undo it.
"""

from __future__ import annotations

import argparse

from mutagent.commands._reportargs import add_source_arguments

HELP = "Write one mutant into the source tree for debugging (undo with --revert or git)."


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", metavar="ID", help="mutant id (a unique prefix is enough)")
    add_source_arguments(parser)
    parser.add_argument(
        "--revert", action="store_true", help="put the original source of the mutant's file back"
    )


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from mutagent.console import console
    from mutagent.errors import UsageError
    from mutagent.mutants.apply import apply_mutant, revert_mutant
    from mutagent.reports.load import find_mutant, load_run_data_for

    run_data = load_run_data_for(args.path, args.from_json)
    mutant = find_mutant(run_data, args.id)
    root = Path(args.path)
    if not root.is_dir():
        raise UsageError(f"{root} is not a directory")
    if args.revert:
        revert_mutant(run_data, mutant, root, console)
    else:
        apply_mutant(run_data, mutant, root, console)
    return 0
