"""``mutagent`` command line: a thin dispatcher over ``mutagent/commands/<name>.py``.

Each command module exposes ``HELP`` (one line), ``register(parser)`` to add its arguments and
``run(args) -> int``. Command modules keep heavy imports inside ``run`` so ``--help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from rich_argparse import RichHelpFormatter

from mutagent import __version__, exitcodes
from mutagent.console import error
from mutagent.errors import MutagentError

COMMANDS = ("run", "explore", "suggest", "list", "map", "operators", "report", "show", "apply", "merge")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mutagent",
        description=(
            "Mutation testing for LLM agent loops: inject the failures agent loops really have "
            "into your code and report which tests of your fake-server suite catch each one."
        ),
        epilog=exitcodes.EPILOG,
        formatter_class=RichHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"mutagent {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"mutagent.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"mutagent.commands.{name}":
                continue
            raise
        command = sub.add_parser(
            name,
            help=module.HELP,
            description=module.HELP,
            epilog=exitcodes.EPILOG,
            formatter_class=RichHelpFormatter,
        )
        module.register(command)
        command.set_defaults(_run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help()
        return exitcodes.USAGE_ERROR
    try:
        return int(args._run(args) or 0)
    except MutagentError as exc:
        error(str(exc))
        return exc.exit_code
    except KeyboardInterrupt:  # outside a run's engine (a run says what it kept, see commands/run.py)
        error("interrupted")
        return exitcodes.INTERRUPTED


if __name__ == "__main__":  # pragma: no cover - exercised through the console script
    sys.exit(main())
