"""``mutagent operators``: the operator catalogue, so a user can see what each mutant means.

Every operator documents the agent failure it simulates and the assertion that kills it; this
command is where that documentation is read (``-v`` adds the worked examples, the same ones the
test suite checks). ``--json`` gives tools the same catalogue.
"""

from __future__ import annotations

import argparse
import difflib
import json
from typing import Any

HELP = "List the mutation operators: what each injects, the failure it simulates and how to kill it."


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--operators",
        metavar="SPEC",
        default="all",
        help="only these: agent, generic, all (default) or a comma list of operator names",
    )
    parser.add_argument("--json", action="store_true", help="print the catalogue as a JSON list")
    parser.add_argument(
        "-v",
        "--examples",
        "--verbose",
        dest="examples",
        action="store_true",
        help="also show each operator's examples (before/after) with syntax highlighting",
    )


def catalogue_entry(operator: Any) -> dict[str, Any]:
    """The JSON form of one operator: what ``--json`` prints for it."""
    return {
        "name": operator.name,
        "family": operator.family,
        "description": operator.description,
        "failure": operator.failure,
        "hint": operator.hint,
        "examples": [
            {"before": example.before, "after": example.after, "note": example.note}
            for example in operator.examples
        ],
    }


def _example_renderable(example: Any) -> Any:
    """A mutated example as a highlighted unified diff, a must-not-match one as plain code."""
    from rich.syntax import Syntax

    if example.after is None:
        return Syntax(example.before.rstrip("\n"), "python", line_numbers=False, word_wrap=True)
    diff = difflib.unified_diff(
        example.before.splitlines(), example.after.splitlines(), "before", "after", lineterm="", n=2
    )
    lines = list(diff)[2:]  # drop the ---/+++ file header: there are no files
    return Syntax("\n".join(lines), "diff", word_wrap=True)


def _print_examples(operators: list[Any]) -> None:
    from rich.console import Group
    from rich.panel import Panel
    from rich.text import Text

    from mutagent.console import console

    for operator in operators:
        parts: list[Any] = [
            Text(operator.description),
            Text.assemble(("simulates: ", "bold"), operator.failure),
            Text.assemble(("kill it: ", "bold green"), operator.hint),
        ]
        for number, example in enumerate(operator.examples, 1):
            kind = "mutant" if example.after is not None else "no mutant"
            title = Text.assemble((f"example {number}: ", "bold"), (kind, "cyan"))
            if example.note:
                title.append(f" - {example.note}", style="dim")
            parts += [Text(""), title, _example_renderable(example)]
        console.print(
            Panel(
                Group(*parts), title=f"[bold]{operator.name}[/] [dim]{operator.family}[/]", title_align="left"
            )
        )


def _print_table(operators: list[Any]) -> None:
    """Two columns, so the table stays readable at 80 columns: who (name, family, examples)
    and what (description, the failure it simulates, the assertion that kills it)."""
    from rich.table import Table
    from rich.text import Text

    from mutagent.console import console

    table = Table(title=f"{len(operators)} mutation operators", show_lines=True, title_justify="left")
    table.add_column("operator", overflow="fold", max_width=30)
    table.add_column("injects / simulates / kill it with", ratio=1)
    for operator in operators:
        mutated = sum(1 for e in operator.examples if e.after is not None)
        who = Text.assemble(
            (operator.name, "bold cyan"),
            "\n",
            (operator.family, "magenta"),
            "\n",
            (f"examples {mutated}+{len(operator.examples) - mutated}", "dim"),
        )
        what = Text.assemble(
            operator.description,
            "\n",
            ("simulates: ", "bold"),
            operator.failure,
            "\n",
            ("kill it: ", "bold green"),
            (operator.hint, "green"),
        )
        table.add_row(who, what)
    console.print(table)
    console.print(
        "[dim]examples: mutated + must-not-match; `mutagent operators -v` shows them[/]", soft_wrap=True
    )


def run(args: argparse.Namespace) -> int:
    from mutagent.console import console
    from mutagent.mutation.registry import select_operators

    operators = sorted(
        select_operators(args.operators), key=lambda op: (op.family != "agent", op.family, op.name)
    )
    if args.json:
        console.out(json.dumps([catalogue_entry(op) for op in operators], indent=2), highlight=False)
    elif args.examples:
        _print_examples(operators)
    else:
        _print_table(operators)
    return 0
