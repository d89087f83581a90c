"""``mutagent merge``: combine the JSON reports of CI shards into the report of the whole run."""

from __future__ import annotations

import argparse

HELP = "Merge JSON reports of --shard runs into one report (gate it with 'mutagent report --from OUT')."


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("reports", nargs="+", metavar="REPORT.json", help="shard reports written by --json")
    parser.add_argument(
        "-o", "--output", required=True, metavar="OUT.json", help="where to write the merged report"
    )
    parser.add_argument(
        "--allow-partial",
        action="store_true",
        help="merge even when a shard of the split is missing or given twice; the merged report "
        "then says it is partial (by default such a set is refused, exit 2)",
    )


def run(args: argparse.Namespace) -> int:
    from rich.markup import escape

    from mutagent.console import console
    from mutagent.reports.merge import merge_reports
    from mutagent.reports.stats import format_score, summarize
    from mutagent.reports.writer import write_reports

    run_data = merge_reports(args.reports, allow_partial=args.allow_partial)
    write_reports(run_data, json=args.output)
    total = summarize(run_data).total
    console.print(
        f"merged {len(args.reports)} reports: {total.total} mutants, score {format_score(total.score)} "
        f"-> [bold]{escape(args.output)}[/]",
        highlight=False,
    )
    if run_data.partial:
        console.print(f"[bold yellow]partial report:[/] {escape(run_data.partial)}", highlight=False)
    return 0
