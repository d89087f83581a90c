"""``mutagent report``: re-render a finished run and apply the CI gate, without running anything."""

from __future__ import annotations

import argparse

from mutagent.commands._reportargs import add_gate_arguments, add_output_arguments, add_source_arguments

HELP = "Show the results of a finished run, write --json/--html/--junit reports and apply the CI gate."


def register(parser: argparse.ArgumentParser) -> None:
    add_source_arguments(parser)
    add_output_arguments(parser)
    add_gate_arguments(parser)
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="print only the gate verdict and the files written"
    )


def gate_settings(
    path: str, fail_under: float | None, max_survived: int | None
) -> tuple[float | None, int | None]:
    """Flags win; otherwise ``fail-under``/``max-survived`` from ``[tool.mutagent]`` of PATH's pyproject."""
    from pathlib import Path

    root = Path(path)
    if not (root / "pyproject.toml").is_file():
        return fail_under, max_survived
    try:
        from mutagent.engine.config import build_config
    except ImportError:  # engine not installed: flags only
        return fail_under, max_survived
    config = build_config(root, {"fail_under": fail_under, "max_survived": max_survived})
    return config.fail_under, config.max_survived


def run(args: argparse.Namespace) -> int:
    from mutagent.console import console
    from mutagent.reports.finish import finish_run
    from mutagent.reports.load import load_run_data_for

    run_data = load_run_data_for(args.path, args.from_json)
    fail_under, max_survived = gate_settings(args.path, args.fail_under, args.max_survived)
    return finish_run(
        run_data,
        console,
        json=args.json,
        html=args.html,
        junit=args.junit,
        fail_under=fail_under,
        max_survived=max_survived,
        terminal=not args.quiet,
        group_by=args.group_by,
        verbose=bool(getattr(args, "verbose", False)),
    )
