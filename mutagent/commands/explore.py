"""``mutagent explore [PATH]``: fault exploration alone, without mutants.

The baseline (cached, as ``run`` caches it), then each passing ``fake_model`` test once more
with each fault that fits its script inserted, within the budget; prints per fault the code that
runs only under it and what the loop did (``--json``: the same as JSON, keys documented in
``mutagent/reports/exploration.py``). ``mutagent run`` explores too, as a phase before the
mutants, and keeps the result with the baseline: ``mutagent map`` shows it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from mutagent.commands._targetargs import add_path_arguments

HELP = (
    "Re-run each passing fake_model test with each fault that fits its script inserted, and show the "
    "code that runs only under each fault and where the loop crashes, hangs or sends a bad request."
)


def register(parser: argparse.ArgumentParser) -> None:
    add_path_arguments(parser, "the target project (default: the current directory)")
    parser.add_argument(
        "--tests", metavar="ARGS", help='pytest arguments selecting the suite, as for "mutagent run"'
    )
    parser.add_argument("--workers", metavar="N", help="parallel worker processes (default: number of cores)")
    add_budget_argument(parser)
    parser.add_argument("--json", action="store_true", help="print what exploration found as JSON")


def add_budget_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--explore-budget",
        metavar="X",
        help="fault exploration may take X times as long as the baseline did, spread over the "
        "workers (default 1.0; 0 turns it off)",
    )


def run(args: argparse.Namespace) -> int:
    from mutagent.commands.run import refuse_applied_mutant
    from mutagent.config import build_config
    from mutagent.console import console
    from mutagent.engine.orchestration.runner import run_engine
    from mutagent.errors import UsageError
    from mutagent.explore.results import Exploration
    from mutagent.reports.exploration import exploration_json, render_exploration
    from mutagent.store import Store

    config = build_config(Path(args.path), vars(args))
    if config.explore_budget <= 0:
        raise UsageError("--explore-budget 0 turns fault exploration off: nothing to do")
    config.explore_only = True
    refuse_applied_mutant(config.root)
    run_engine(config, console)
    store = Store.open(config.root)
    try:
        stored = store.get_meta("exploration")
    finally:
        store.close()
    if not stored:
        console.print("no test of this suite uses the fake_model fixture: nothing to explore")
        return 0
    exploration = Exploration.from_json(json.loads(stored))
    if args.json:
        console.out(json.dumps(exploration_json(exploration), indent=2), highlight=False)
    else:
        console.print(render_exploration(exploration))
    return 0
