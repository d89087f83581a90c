"""``mutagent show ID``: everything about one mutant, to decide which assertion would kill it."""

from __future__ import annotations

import argparse

from mutagent.commands._reportargs import add_source_arguments

HELP = "Show one mutant: its diff, status, killing and covering tests, the operator's hint and any error."


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", metavar="ID", help="mutant id (a unique prefix is enough)")
    add_source_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from rich.text import Text

    from mutagent.console import console
    from mutagent.reports.guards import sole_killer
    from mutagent.reports.load import find_mutant, load_run_data_for
    from mutagent.reports.opinfo import operator_info
    from mutagent.reports.terminal import render_mutant

    run_data = load_run_data_for(args.path, args.from_json)
    mutant = find_mutant(run_data, args.id)
    console.print(render_mutant(run_data, mutant, details=True))
    info = operator_info(mutant.operator)
    if info.failure:
        console.print(Text.assemble(("simulates: ", "bold"), info.failure))
    where = ".".join(mutant.scope) or "module level"
    console.print(Text.assemble(("in: ", "bold"), where))
    guard = sole_killer(run_data, mutant)
    if guard:
        console.print(Text.assemble(("only ", "bold green"), guard, (" guards this path", "bold green")))
    return 0
