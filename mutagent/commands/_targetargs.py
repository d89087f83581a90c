"""Arguments naming what to mutate, shared by ``run`` and ``list`` so both read the same way."""

from __future__ import annotations

import argparse

OPERATORS_HELP = "agent (default), generic, all, or a comma list of operator names"


def add_target_arguments(parser: argparse.ArgumentParser, path_help: str) -> None:
    """``PATH``, ``--paths`` and ``--operators``: the target and the mutants to make in it."""
    add_path_arguments(parser, path_help)
    parser.add_argument("--operators", metavar="SPEC", help=OPERATORS_HELP)


def add_path_arguments(parser: argparse.ArgumentParser, path_help: str) -> None:
    """``PATH`` and ``--paths``: the target and which of its sources to read."""
    parser.add_argument("path", nargs="?", default=".", metavar="PATH", help=path_help)
    parser.add_argument(
        "--paths",
        action="append",
        metavar="PATH",
        help="source file or directory to mutate, relative to PATH (repeatable; default: "
        "auto-detected packages and modules)",
    )
