"""``mutagent report``: re-render a finished run and apply the CI gate, without running anything."""

from __future__ import annotations

import argparse

from mutagent.commands._reportargs import (
    add_gate_arguments,
    add_output_arguments,
    add_source_arguments,
    show_command,
)

HELP = (
    "Show the results of a finished run, write --json/--html/--junit/--sarif/--markdown reports, "
    "annotate a pull request (--github) and apply the CI gate."
)


def register(parser: argparse.ArgumentParser) -> None:
    add_source_arguments(parser)
    add_output_arguments(parser)
    add_gate_arguments(parser)
    parser.add_argument(
        "--since",
        metavar="REV",
        help="report only the mutants touching lines added or modified since git revision REV "
        "(in PATH's repository), e.g. origin/main on a pull request",
    )
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
        from mutagent.config import build_config
    except ImportError:  # engine not installed: flags only
        return fail_under, max_survived
    config = build_config(root, {"fail_under": fail_under, "max_survived": max_survived})
    return config.fail_under, config.max_survived


def run(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from mutagent.console import console
    from mutagent.mutants.since import changed_lines, filter_changed
    from mutagent.reports.finish import finish_run
    from mutagent.reports.load import load_run_data_for
    from mutagent.reports.merge import load_report

    base = load_report(args.fail_on_regression) if args.fail_on_regression else None
    changed = changed_lines(args.path, args.since) if args.since is not None else None
    run_data = load_run_data_for(args.path, args.from_json)
    if changed is not None:
        since = args.since if run_data.since in (None, args.since) else f"{run_data.since} and {args.since}"
        run_data = replace(run_data, mutants=filter_changed(run_data.mutants, changed), since=since)
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
        sarif=args.sarif,
        markdown=args.markdown,
        github=args.github,
        changed=changed,
        base=base,
        base_name=args.fail_on_regression or "",
        verbose=bool(getattr(args, "verbose", False)),
        show_command=show_command(args.path, args.from_json),
    )
