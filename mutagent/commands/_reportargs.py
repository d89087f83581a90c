"""Arguments shared by the commands that read a finished run (report, show, apply).

Also holds the argparse types for the gate thresholds, so ``run`` (engine) can reuse them.
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path


def percentage(text: str) -> float:
    """argparse type for ``--fail-under``: a number from 0 to 100 (a trailing % is accepted)."""
    try:
        value = float(text.strip().rstrip("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a percentage such as 80, not {text!r}") from None
    if not 0 <= value <= 100:
        raise argparse.ArgumentTypeError(f"expected a percentage from 0 to 100, not {text}")
    return value


def count(text: str) -> int:
    """argparse type for ``--max-survived``: a whole number >= 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number such as 0, not {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected 0 or more, not {value}")
    return value


def show_command(path: str | None, from_json: str | None = None) -> str:
    """``mutagent show {id}`` as it works from the current directory: with ``--from REPORT`` or the
    target's path when the run was not read from here (``{id}`` stands for the mutant's id)."""
    if from_json is not None:
        return f"mutagent show {{id}} --from {shlex.quote(from_json)}"
    try:
        here = path is None or Path(path).resolve() == Path.cwd().resolve()
    except OSError:
        here = False
    return "mutagent show {id}" if here else f"mutagent show {{id}} {shlex.quote(str(path))}"


def add_source_arguments(parser: argparse.ArgumentParser) -> None:
    """``[PATH]`` (the target whose store to read) and ``--from REPORT.json``."""
    parser.add_argument(
        "path", nargs="?", default=".", metavar="PATH", help="the target project (default: .)"
    )
    parser.add_argument(
        "--from",
        dest="from_json",
        metavar="REPORT.json",
        help="read a JSON report (e.g. merged CI shards) instead of PATH's result store",
    )


def add_gate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--fail-under",
        type=percentage,
        metavar="SCORE",
        help="exit 1 when the mutation score (percent) is below SCORE",
    )
    parser.add_argument(
        "--max-survived",
        type=count,
        metavar="N",
        help="exit 1 when more than N mutants go undetected (Survived + NoCoverage)",
    )
    add_regression_argument(parser)


def add_regression_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--fail-on-regression",
        metavar="BASE.json",
        help="exit 1 when a mutant detected in the --json report BASE.json (e.g. main's) goes "
        "undetected now, or the mutation score drops below BASE.json's",
    )


def add_output_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", metavar="FILE", help="write the mutation-testing-report-schema JSON report")
    parser.add_argument("--html", metavar="FILE", help="write a self-contained HTML report")
    parser.add_argument("--junit", metavar="FILE", help="write JUnit XML (one testcase per mutant)")
    parser.add_argument(
        "--sarif", metavar="FILE", help="write SARIF 2.1.0 (one result per survivor, for code scanning)"
    )
    parser.add_argument(
        "--markdown",
        metavar="FILE",
        help="write the Markdown summary (score, operators, survivors, idle tests) for a PR comment",
    )
    parser.add_argument(
        "--github",
        action="store_true",
        help="GitHub Actions: print ::warning annotations on the survivors' lines (changed lines only "
        "under --since) and append the Markdown summary to $GITHUB_STEP_SUMMARY",
    )
    parser.add_argument(
        "--group-by",
        choices=("operator", "file"),
        default="operator",
        help="group the terminal kill matrix's columns by operator (default) or by file (the HTML "
        "report shows one matrix per file, columns grouped by operator)",
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="also print the full kill matrix and guard map (the default report is compact for CI "
        "logs: score, per-operator table, survivors with diff and hint, tests that guard nothing)",
    )
