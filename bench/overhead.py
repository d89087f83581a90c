"""Per-mutant harness overhead: everything a mutant costs except its tests' own time (target ≤ 10 ms).

Two measures, on the sample agent (agent operators, full matrix and ``--fast``: the runs shared
with the matrix and efficiency sections) and on the generic target (generic operators, ``--fast``):

- the harness overhead: for each mutant run by code swap, the job's elapsed time minus the
  durations pytest reported for that mutant's tests in that job, their phases (``RunStats.overheads``,
  printed as "median harness overhead N ms" on the closing line; the store does not keep per-job
  test durations, so that line is where it is read). This is the figure held to the target.
- of that, mutagent's part: the same minus pytest's own work around each test's phases (its
  hooks, report objects and failure descriptions, which any pytest run of those tests pays), as
  the child times pytest's whole protocol per test (``RunStats.own_overheads``, "(N ms without
  pytest's own work around each test)" on the closing line).
- from the store, tool-independent: for each Survived mutant (every covering test ran and passed,
  so its tests cost what they cost in the baseline), its elapsed time minus the baseline's plain
  durations of the tests it ran, whichever way it was applied (fresh imports included). The
  baseline traces coverage, which slows tests, so this one can understate the overhead.

    python bench/overhead.py [--repeat 3] [--workers 2] [--quick]
"""

from __future__ import annotations

import agentruns
from common import (
    Figure,
    Section,
    base_parser,
    check,
    console,
    copy_generic_target,
    median,
    print_section,
    scratch,
)
from storeinfo import RunInfo, measured_run

from mutagent.model import Status

TARGET_MS = 10


def generic_runs(repeat: int, workers: int) -> list[RunInfo]:
    runs = []
    for i in range(repeat):
        console.print(f"[dim]overhead: generic target run {i + 1}/{repeat}[/]")
        with scratch("overhead-generic") as parent:
            runs.append(
                measured_run(copy_generic_target(parent), workers, "--operators", "generic", "--fast")
            )
    return runs


def survivor_overheads(info: RunInfo) -> list[float]:
    """Elapsed − Σ plain baseline durations of the tests run, over Survived mutants that ran tests."""
    out = []
    for mutant in info.data.mutants:
        result = info.data.results.get(mutant.id)
        if result is None or result.status is not Status.SURVIVED or not result.tests_run:
            continue
        tests = sum(info.plain_durations.get(nodeid, 0.0) for nodeid in result.tests_run)
        out.append(result.duration - tests)
    return out


def add(section: Section, label: str, runs: list[RunInfo]) -> None:
    engine = [r.engine_overhead_ms / 1000 for r in runs if r.engine_overhead_ms is not None]
    own = [r.engine_own_overhead_ms / 1000 for r in runs if r.engine_own_overhead_ms is not None]
    survivors = [median(o) for r in runs if (o := survivor_overheads(r))]
    section.figures.append(
        Figure(
            f"{label}: median harness overhead per mutant (elapsed − the tests' phases, code-swap mutants)",
            engine,
            "ms",
            f"≤ {TARGET_MS} ms",
            check(median(engine) * 1000, at_most=TARGET_MS) if engine else None,
        )
    )
    if own:
        section.figures.append(
            Figure(
                f"{label}: the same without pytest's own work around each test (mutagent's part)",
                own,
                "ms",
            )
        )
    section.figures.append(
        Figure(f"{label}: median elapsed − baseline test time, Survived mutants (store)", survivors, "ms")
    )
    last = runs[-1]
    section.notes.append(
        f"{label}: last run {last.mutants} mutants, {last.swapped} by code swap, "
        f"{last.fresh_imports} by fresh "
        f"import, {len(survivor_overheads(last))} Survived with tests run"
        + ("" if engine else "; mutagent printed no harness overhead (no code-swap mutant finished)")
        + "."
    )


def measure(repeat: int, workers: int, quick: bool) -> Section:
    spec = agentruns.operators()
    section = Section("overhead", f"9. per-mutant harness overhead, {workers} workers")
    full, fast = agentruns.interleaved(repeat, workers)
    add(section, "sample agent, full matrix", full)
    add(section, "sample agent, --fast", fast)
    add(section, "generic target, --operators generic, --fast", generic_runs(repeat, workers))
    section.notes.append(f"sample agent runs: --operators {spec} (the runs shared with sections 3 and 4).")
    section.notes.append(
        "Harness overhead = a mutant's elapsed time in its worker minus its tests' own time: applying the "
        "mutant, forking, pytest's per-test protocol, reporting back. The first figure is mutagent's "
        "(elapsed − the test durations pytest reported in that job, code-swap mutants only); the second "
        "is computed here from the store (see bench/overhead.py)."
    )
    return section


def main(argv: list[str] | None = None) -> int:
    args = base_parser(__doc__ or "").parse_args(argv)
    if args.quick:
        agentruns.use_operators(agentruns.QUICK_OPERATORS)
    print_section(measure(1 if args.quick else args.repeat, args.workers, args.quick))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
