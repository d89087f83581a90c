"""``mutagent run [PATH]``: mutate the target, run its own suite against every mutant, store results."""

from __future__ import annotations

import argparse
import signal
from pathlib import Path
from types import FrameType
from typing import Any

HELP = "Run the target's test suite against every mutant of its agent code (results go to PATH/.mutagent/)."


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "path",
        nargs="?",
        default=".",
        metavar="PATH",
        help="the target project: pytest's rootdir and where sources and tests are found "
        "(default: the current directory)",
    )
    parser.add_argument(
        "--paths",
        action="append",
        metavar="PATH",
        help="source file or directory to mutate, relative to PATH (repeatable; default: "
        "auto-detected packages and modules)",
    )
    parser.add_argument(
        "--tests",
        metavar="ARGS",
        help='pytest arguments selecting the suite, e.g. "tests/ -k agent" (default: what '
        "pytest collects in PATH)",
    )
    parser.add_argument(
        "--operators", metavar="SPEC", help="agent (default), generic, all, or a comma list of operator names"
    )
    parser.add_argument("--workers", metavar="N", help="parallel worker processes (default: number of cores)")
    parser.add_argument(
        "--timeout-factor",
        metavar="X",
        help="a mutant times out after X times its tests' baseline duration (default 2.0) ...",
    )
    parser.add_argument(
        "--timeout-constant", metavar="SECONDS", help="... plus this many seconds (default 1.0)"
    )
    parser.add_argument(
        "--fast",
        action="store_true",
        default=None,
        help="stop each mutant at its first killing test (default: full kill matrix)",
    )
    parser.add_argument(
        "--exclude-flaky",
        action="store_true",
        default=None,
        help="leave out tests that behave differently in the forked harness instead of stopping",
    )
    parser.add_argument(
        "--pass-env",
        action="append",
        metavar="NAME",
        help="keep this environment variable for the tests even if its name looks secret "
        "(repeatable; *KEY*, *TOKEN*, *SECRET*, *PASSWORD* are dropped by default)",
    )
    parser.add_argument(
        "--fail-under", metavar="SCORE", help="exit 1 if the mutation score is below SCORE percent"
    )
    parser.add_argument(
        "--max-survived",
        metavar="N",
        help="exit 1 if more than N mutants survive (NoCoverage counts as survived)",
    )


def _sigterm(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt  # CI cancellation stops as cleanly as Ctrl-C


def _internal_error(root: Path, exc: Exception) -> Exception:
    """A bug in mutagent itself: one line for the user, the traceback in ``PATH/.mutagent/crash.log``."""
    import traceback

    from mutagent import exitcodes
    from mutagent.errors import MutagentError

    where = root / ".mutagent" / "crash.log"
    try:
        where.parent.mkdir(parents=True, exist_ok=True)
        where.write_text("".join(traceback.format_exception(exc)), encoding="utf-8")
        details = f" (traceback in {where})"
    except OSError:
        details = ""
    return MutagentError(f"internal error: {type(exc).__name__}: {exc}{details}", exitcodes.INTERNAL_ERROR)


def run(args: argparse.Namespace, mutant_source: Any = None) -> int:
    """Run the engine, print the summary, apply the gate. ``mutant_source`` replaces the operator
    library (tests inject hand-written mutants through it)."""
    from mutagent import exitcodes
    from mutagent.console import console
    from mutagent.engine.config import build_config
    from mutagent.engine.runner import run_engine
    from mutagent.engine.summary import summarize
    from mutagent.errors import MutagentError
    from mutagent.store import load_run_data

    config = build_config(Path(args.path), vars(args))
    previous = signal.signal(signal.SIGTERM, _sigterm)
    try:
        stats = run_engine(config, console, mutant_source)
    except (MutagentError, KeyboardInterrupt):
        raise
    except Exception as exc:
        raise _internal_error(config.root, exc) from exc
    finally:
        signal.signal(signal.SIGTERM, previous)
    run_data = load_run_data(config.root)
    summarize(run_data, console)
    parts = [f"{stats.mutants} mutants in {stats.wall:.1f}s"]
    if stats.ran:
        parts.append(
            f"{stats.ran} run with {stats.workers} workers ({stats.swapped} by code swap, "
            f"{stats.fresh_imports} by fresh import)"
        )
        if stats.median_overhead is not None:
            parts.append(f"median harness overhead {stats.median_overhead * 1000:.0f} ms per mutant")
    if stats.worker_restarts:
        parts.append(f"{stats.worker_restarts} worker restarts")
    if stats.reused:
        parts.append(f"{stats.reused} results reused from the store")
    if stats.baseline_cached:
        parts.append("baseline cached")
    console.print("[dim]" + "; ".join(parts) + "[/]", soft_wrap=True)
    if config.fail_under is None and config.max_survived is None:
        return exitcodes.OK
    from mutagent.reports.gate import evaluate_gate, render_gate

    gate = evaluate_gate(run_data, config.fail_under, config.max_survived)
    render_gate(gate, console)
    return exitcodes.OK if gate.passed else exitcodes.GATE_FAILED
