"""Full kill matrix vs ``--fast`` on the sample agent, and the efficiency of those runs.

The full matrix runs every covering test of every mutant (to report *which* tests kill it);
``--fast`` stops each mutant at its first failing test. Both are run alternately on fresh copies
with the agent operators. The same runs give the efficiency figures: Σ over mutants of the
baseline durations of the tests each one ran ÷ (wall × workers), and the per-mutant overhead.

    python bench/matrix.py [--repeat 3] [--workers 2] [--quick]
"""

from __future__ import annotations

import agentruns
from common import Figure, Section, base_parser, check, fmt, median, print_section
from ordering import replay_run
from storeinfo import RunInfo


def consistency(full: list[RunInfo], fast: list[RunInfo]) -> list[list[str]]:
    """Mutants detected in one run and not in another (a wrong status somewhere, or a test whose
    outcome depends on timing), or killed in both modes with a ``--fast`` killer the full matrix
    did not report (a full-matrix Timeout has no complete killer list, so it is not compared)."""
    detected = {"Killed", "Timeout"}
    rows = []
    for mutant in full[0].data.mutants:
        outcomes = [(f"full#{i + 1}", run.data.result_of(mutant)) for i, run in enumerate(full)]
        outcomes += [(f"fast#{i + 1}", run.data.result_of(mutant)) for i, run in enumerate(fast)]
        verdicts = {r.status.value in detected for _, r in outcomes}
        killed_full = [r for name, r in outcomes if name.startswith("full") and r.status.value == "Killed"]
        full_killers = {k for r in killed_full for k in r.killed_by}
        stray = sorted(
            {
                k
                for name, r in outcomes
                if name.startswith("fast") and killed_full
                for k in r.killed_by
                if k not in full_killers
            }
        )
        if len(verdicts) > 1 or stray:
            shown = "; ".join(f"{name} {r.status.value}" for name, r in outcomes)
            rows.append(
                [f"{mutant.file}:{mutant.location.start_line}", mutant.operator, shown, ", ".join(stray)]
            )
    return rows


def matrix_section(full: list[RunInfo], fast: list[RunInfo], workers: int) -> Section:
    section = Section(
        "matrix",
        f"3. full kill matrix vs --fast, sample agent, --operators {agentruns.operators()}, "
        f"{workers} workers",
    )
    ratios = [a.wall / b.wall for a, b in zip(full, fast, strict=True)]
    section.figures += [
        Figure("full-matrix wall ÷ --fast wall", ratios, "x", "≤ 1.5×", check(median(ratios), at_most=1.5)),
        Figure("full-matrix wall", [r.wall for r in full], "s"),
        Figure("--fast wall", [r.wall for r in fast], "s"),
        Figure("tests run per mutant, full matrix", [_tests_per_mutant(r) for r in full]),
        Figure("tests run per mutant, --fast", [_tests_per_mutant(r) for r in fast]),
    ]
    replays = [replay_run(run) for run in full]
    section.figures += [
        Figure(
            "--fast test order, replayed on the full matrix: seconds of tests before the first kill, "
            "fastest first",
            [r.fastest_first for r in replays],
            "s",
        ),
        Figure(
            "the same in mutagent's order (most focused first, a site's killers first)",
            [r.mutagent for r in replays],
            "s",
        ),
        Figure("mutagent's order ÷ fastest first", [r.ratio for r in replays], "x"),
    ]
    killed = replays[0].killed if replays else 0
    section.notes.append(
        f"The order figures replay each full-matrix run's {killed} killed mutants "
        "(bench/ordering.py): every covering test in the given order until the first killing test, summing "
        "the baseline durations; the learning of a site's killers is replayed over 5 shuffled mutant orders "
        "(median)."
    )
    statuses = sorted(set().union(*(r.statuses for r in [*full, *fast])))
    section.add_table(
        "statuses (last run of each)",
        ["mode", "mutants", *statuses],
        [
            [mode, str(run.mutants), *[str(run.statuses[s]) for s in statuses]]
            for mode, run in (("full matrix", full[-1]), ("--fast", fast[-1]))
        ],
    )
    rows = consistency(full, fast)
    if rows:
        section.add_table(
            "mutants whose verdict differs between runs (engine problem?)",
            ["where", "operator", "statuses", "--fast killers not in the full matrix"],
            rows,
        )
    else:
        section.notes.append(
            f"Every mutant got the same detected/undetected verdict in all {len(full) + len(fast)} "
            "runs, and every --fast killer is among the full matrix's killers."
        )
    return section


def _tests_per_mutant(run: RunInfo) -> float:
    counts = [len(r.tests_run) for r in run.data.results.values() if r.tests_run]
    return sum(counts) / len(counts) if counts else float("nan")


def efficiency_section(full: list[RunInfo], fast: list[RunInfo], workers: int) -> Section:
    section = Section(
        "efficiency", f"4. efficiency, sample agent, --operators {agentruns.operators()}, {workers} workers"
    )
    for label, runs in (("full matrix", full), ("--fast", fast)):
        target = "≥ 0.8" if label == "full matrix" else ""
        values = [r.efficiency for r in runs]
        section.figures += [
            Figure(
                f"{label}: efficiency (end-to-end wall)",
                values,
                "",
                target,
                check(median(values), at_least=0.8) if target else None,
            ),
            Figure(f"{label}: efficiency (mutant phase only)", [r.phase_efficiency for r in runs]),
            Figure(
                f"{label}: per-mutant overhead (elapsed − plain test time, median)",
                [median(r.overheads) for r in runs],
                "ms",
            ),
        ]
        engine = [r.engine_overhead_ms / 1000 for r in runs if r.engine_overhead_ms is not None]
        if engine:
            section.figures.append(
                Figure(f"{label}: harness overhead reported by mutagent (median)", engine, "ms")
            )
    section.figures.append(
        Figure(
            "suite one test at a time in the harness ÷ plain run (control vs baseline)",
            [r.forked_slowdown for r in [*full, *fast]],
            "x",
        )
    )
    rows = []
    for label, runs in (("full", full), ("fast", fast)):
        for i, r in enumerate(runs, 1):
            rows.append(
                [
                    f"{label}#{i}",
                    fmt(r.wall, "s"),
                    fmt(r.mutant_phase, "s"),
                    fmt(r.test_time, "s"),
                    fmt(r.forked_test_time, "s"),
                    str(r.ran or len(r.overheads)),
                    fmt(r.efficiency),
                    fmt(r.phase_efficiency),
                ]
            )
    header = [
        "run",
        "wall",
        "mutant phase",
        "Σ plain test time",
        "Σ control-run time of those tests",
        "mutants run",
        "efficiency",
        "phase eff.",
    ]
    section.add_table("runs", header, rows)
    section.notes.append(
        "Efficiency = Σ over mutants of the plain-run baseline durations of the tests each mutant ran "
        "÷ (wall × workers). The end-to-end wall includes start-up, mutant generation, the baseline "
        "with per-test coverage and the control run; the mutant phase runs from the first "
        "mutant's start to the last result's commit. Control-run durations are each test alone in "
        "its own child forked from a warm worker (one fork per test, whereas a mutant's tests share "
        "one child), so their sum overstates a mutant's cost; their ratio to the plain run shows "
        "the per-fork cost. "
        "A killed mutant's tests often fail faster than their baseline, so overhead is approximate."
    )
    return section


def main(argv: list[str] | None = None) -> int:
    args = base_parser(__doc__ or "").parse_args(argv)
    repeat = 1 if args.quick else args.repeat
    if args.quick:
        agentruns.use_operators(agentruns.QUICK_OPERATORS)
    full, fast = agentruns.interleaved(repeat, args.workers)
    print_section(matrix_section(full, fast, args.workers))
    print_section(efficiency_section(full, fast, args.workers))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
