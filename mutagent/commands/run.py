"""``mutagent run [PATH]``: mutate the target, run its own suite against every mutant, store results.

The end of a run is the reports library's :func:`~mutagent.reports.finish_run` (terminal report,
``--json``/``--html``/``--junit`` files, the gate), exactly what ``mutagent report`` does on a
stored run. ``--since`` and ``--shard`` narrow the mutant list through the engine's
``mutant_filter`` hook, after generation and before anything is planned or run.
"""

from __future__ import annotations

import argparse
import signal
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from mutagent.commands._reportargs import add_output_arguments, add_regression_argument, show_command
from mutagent.commands._targetargs import add_target_arguments
from mutagent.commands.explore import add_budget_argument

if TYPE_CHECKING:
    from rich.console import Console

    from mutagent.config import EngineConfig
    from mutagent.engine.orchestration.runner import RunStats
    from mutagent.model import Mutant

HELP = "Run the target's test suite against every mutant of its agent code (results go to PATH/.mutagent/)."


def register(parser: argparse.ArgumentParser) -> None:
    """The engine's options, the shared report outputs, ``--since``/``--shard`` and the gate."""
    add_target_arguments(
        parser,
        "the target project: pytest's rootdir and where sources and tests are found "
        "(default: the current directory)",
    )
    parser.add_argument(
        "--tests",
        metavar="ARGS",
        help='pytest arguments selecting the suite, e.g. "tests/ -k agent" (default: what '
        "pytest collects in PATH)",
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
        "--since",
        metavar="REV",
        help="mutate only lines added or modified since git revision REV (committed or not) and "
        "untracked files, e.g. origin/main on a pull request",
    )
    parser.add_argument(
        "--shard",
        metavar="I/N",
        help="run only shard I of N (e.g. 2/4; a deterministic split by mutant id, for CI matrix "
        "jobs); no gate is applied: merge the shards' --json reports and gate the merged one",
    )
    add_budget_argument(parser)
    add_output_arguments(parser)
    # Validated by mutagent.config (one-line errors naming the flag, shared with [tool.mutagent]).
    parser.add_argument(
        "--fail-under", metavar="SCORE", help="exit 1 if the mutation score is below SCORE percent"
    )
    parser.add_argument(
        "--max-survived",
        metavar="N",
        help="exit 1 if more than N mutants survive (NoCoverage counts as survived)",
    )
    add_regression_argument(parser)


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


class Narrowing:
    """The engine's ``mutant_filter`` for ``--since`` then ``--shard``; remembers what each step kept.

    The counts tell an empty run apart afterwards: a ``--since`` change that touches no mutated
    line is "nothing to test", not a target where no operator matched.
    """

    def __init__(
        self, since: str | None, changed: Any, shard: tuple[int, int] | None, console: Console
    ) -> None:
        self.since = since
        self.changed = changed
        self.shard = shard
        self.console = console
        self.after_since: int | None = None

    def scope(self) -> dict[str, Any]:
        """What the store records of this narrowing, for the reports' labels (JSON-ready)."""
        scope: dict[str, Any] = {}
        if self.shard is not None:
            scope["shard"] = list(self.shard)
        if self.since is not None:
            scope["since"] = self.since
        return scope

    def __call__(self, mutants: list[Mutant]) -> list[Mutant]:
        from rich.markup import escape

        from mutagent.mutants import filter_changed, select_shard

        kept = mutants
        if self.changed is not None:
            kept = filter_changed(kept, self.changed)
            self.after_since = len(kept)
            self.console.print(
                f"[dim]--since {escape(str(self.since))}: {len(kept)} of {len(mutants)} mutants touch "
                "changed lines[/]",
                soft_wrap=True,
            )
        if self.shard is not None:
            before = len(kept)
            kept = select_shard(kept, *self.shard)
            self.console.print(
                f"[dim]--shard {self.shard[0]}/{self.shard[1]}: {len(kept)} of {before} mutants[/]",
                soft_wrap=True,
            )
        return kept


def mutant_filter(root: Path, since: str | None, shard: str | None, console: Console) -> Narrowing | None:
    """The engine's ``mutant_filter`` for ``--since`` then ``--shard`` (``None`` when neither is given).

    Both options are checked here, before the engine starts, so a bad revision, a tree outside
    git or a malformed shard is one line and exit 2 before any test runs.
    """
    from mutagent.mutants import changed_lines, parse_shard

    changed = changed_lines(root, since) if since is not None else None
    index_count = parse_shard(shard) if shard is not None else None
    if changed is None and index_count is None:
        return None
    return Narrowing(since, changed, index_count, console)


def refuse_applied_mutant(root: Path) -> None:
    """Stop before anything runs when ``mutagent apply`` left a mutant in the tree.

    The baseline would test the mutated code, fail (or pass) for the wrong reason, and every
    mutant would be a mutant of a mutant.
    """
    from mutagent.errors import UsageError
    from mutagent.mutants.apply import applied_mutant

    applied = applied_mutant(root)
    if applied is not None:
        raise UsageError(
            f"mutant {applied.id} ({applied.operator}) is still applied to {root / applied.file} "
            f"by `mutagent apply`; revert it first: {applied.revert_command(root)}"
        )


def empty_run_outcome(
    stats: RunStats, narrow: Narrowing | None, operators: str, root: Path, console: Console
) -> int | None:
    """The exit code of a run left with no mutant (``None`` when there are mutants to report).

    No mutant generated at all is exit 5 with one line saying what to try: a pass would be green
    over nothing. A ``--since`` change that touches no mutated line is a clean "nothing to test"
    (exit 0, no score, no gate); an empty ``--shard`` is fine too (the merged report is gated).
    """
    from mutagent import exitcodes
    from mutagent.errors import NoMutantsError

    if stats.mutants:
        return None
    if stats.generated == 0:
        raise NoMutantsError(
            f"no mutants: no operator of --operators {operators} matched any of the "
            f"{stats.files_scanned} source files scanned in {root}; try --operators generic "
            f"(mutmut's operators), or `mutagent map {root}` to see what mutagent recognises in your loop"
        )
    if narrow is not None and narrow.after_since == 0:
        console.print(
            f"nothing to test: the change since {narrow.since} touches none of the {stats.generated} "
            "mutated lines (no score, no gate)",
            soft_wrap=True,
            markup=False,
        )
        return exitcodes.OK
    if narrow is not None and narrow.shard is not None:
        console.print(
            f"shard {narrow.shard[0]}/{narrow.shard[1]} holds none of the {stats.generated} mutants "
            "(the merged report is the one to gate)",
            soft_wrap=True,
            markup=False,
        )
        return exitcodes.OK
    return None


def _interrupted(root: Path) -> Exception:
    """Ctrl-C / SIGTERM: one line saying how many results the store keeps and that a re-run resumes."""
    from mutagent.errors import InterruptedRun
    from mutagent.store import load_run_data

    try:
        kept = len(load_run_data(root).results)
    except Exception:  # nothing stored yet, or the store is being written: say so, do not crash
        kept = 0
    return InterruptedRun(
        f"interrupted: {kept} mutant results are kept in {root / '.mutagent'}; "
        "run the same command again to resume where this run stopped"
    )


def _stats_line(stats: RunStats) -> str:
    """One line about the run itself (timing, workers, reuse), not about the suite's quality."""
    from mutagent.reports.stats import count

    parts = [f"{count(stats.mutants, 'mutant')} in {stats.wall:.1f}s"]
    if stats.ran:
        parts.append(
            f"{stats.ran} run with {stats.workers} workers ({stats.swapped} by code swap, "
            f"{stats.fresh_imports} by fresh import)"
        )
        if stats.median_overhead is not None:
            overhead = f"median harness overhead {stats.median_overhead * 1000:.0f} ms per mutant"
            if stats.median_own_overhead is not None:
                overhead += (
                    f" ({stats.median_own_overhead * 1000:.0f} ms without pytest's own work around each test)"
                )
            parts.append(overhead)
    if stats.worker_restarts:
        parts.append(f"{stats.worker_restarts} worker restarts")
    if stats.reused:
        parts.append(f"{count(stats.reused, 'result')} reused from the store")
    if stats.exploration is not None:
        runs, wall, cached = stats.exploration
        parts.append(
            f"fault exploration cached ({runs} runs)" if cached else f"{runs} explored runs in {wall:.1f}s"
        )
    if stats.baseline_cached:
        parts.append("baseline cached")
    elif stats.baseline_remeasured is not None:
        again, total = stats.baseline_remeasured
        parts.append(f"baseline: re-measured {again} of {total} tests")
    return "; ".join(parts)


def _gate(config: EngineConfig, shard: str | None, console: Console) -> tuple[float | None, int | None]:
    """The thresholds to apply: the configured ones, or none for a shard (its score is not the run's)."""
    if shard is None:
        return config.fail_under, config.max_survived
    if config.fail_under is not None or config.max_survived is not None:
        console.print(
            "[dim]gate not applied to a --shard run: merge the shards' --json reports with "
            "`mutagent merge` and gate the result with `mutagent report --from`[/]",
            soft_wrap=True,
        )
    return None, None


def run(args: argparse.Namespace, mutant_source: Any = None) -> int:
    """Run the engine, then print/write the reports and apply the gate through ``finish_run``.

    ``mutant_source`` replaces the operator library (tests inject hand-written mutants through it).
    """
    from mutagent.config import build_config, check_test_paths
    from mutagent.console import console
    from mutagent.engine.orchestration.runner import run_engine
    from mutagent.errors import MutagentError
    from mutagent.store import load_run_data

    config = build_config(Path(args.path), vars(args))
    check_test_paths(config.root, config.tests)
    refuse_applied_mutant(config.root)
    since: str | None = getattr(args, "since", None)
    shard: str | None = getattr(args, "shard", None)
    from mutagent.mutants import changed_lines

    narrow = mutant_filter(config.root, since, shard, console)
    fail_under, max_survived = _gate(config, shard, console)
    base_name: str | None = getattr(args, "fail_on_regression", None)
    base = None
    if base_name and shard is None:  # a bad file fails first
        from mutagent.reports.merge import load_report

        base = load_report(base_name)
    if base_name and shard is not None:
        console.print(
            "[dim]--fail-on-regression not applied to a --shard run: gate the merged report with "
            "`mutagent report --from`[/]",
            soft_wrap=True,
        )
    github = bool(getattr(args, "github", False))
    changed = changed_lines(config.root, since) if github and since is not None else None
    previous = signal.signal(signal.SIGTERM, _sigterm)
    try:
        stats = run_engine(config, console, mutant_source, mutant_filter=narrow)
    except KeyboardInterrupt:
        raise _interrupted(config.root) from None
    except MutagentError:
        raise
    except Exception as exc:
        raise _internal_error(config.root, exc) from exc
    finally:
        signal.signal(signal.SIGTERM, previous)
    empty = empty_run_outcome(stats, narrow, config.operators, Path(args.path), console)
    run_data = load_run_data(config.root)  # with the --shard/--since the store recorded (its labels)
    if empty is not None:
        # the files CI asked for still exist (an empty report), but no score and no gate
        from mutagent.reports.writer import write_reports

        for path in write_reports(
            run_data, json=getattr(args, "json", None), junit=getattr(args, "junit", None)
        ):
            console.print(f"wrote {path}", highlight=False, markup=False)
        return empty
    console.print("[dim]" + _stats_line(stats) + "[/]", soft_wrap=True)
    # imported only now: the reports import libcst's matchers (~0.3 s), which would otherwise
    # delay the start of the first worker, the longest step before the first mutant
    from mutagent.reports import finish_run

    return finish_run(
        run_data,
        console,
        json=getattr(args, "json", None),
        html=getattr(args, "html", None),
        junit=getattr(args, "junit", None),
        fail_under=fail_under,
        max_survived=max_survived,
        group_by=getattr(args, "group_by", "operator"),
        sarif=getattr(args, "sarif", None),
        markdown=getattr(args, "markdown", None),
        github=github,
        changed=changed,
        base=base,
        base_name=base_name or "",
        verbose=bool(getattr(args, "verbose", False)),
        show_command=show_command(args.path),
    )
