"""Scaling: mutagent on generated targets of about 50, 200 and 800 mutants with 10 and 100 tests.

Each configuration is generated afresh in a temporary directory (``gen_target.py``) and run with
``mutagent run --operators generic --workers N`` (full kill matrix). Reported: wall time against
mutants and against tests, and the peak memory of the mutagent process tree (summed RSS sampled
every 50 ms, so shared pages of forked workers count more than once: an upper bound).

    python bench/scaling.py [--repeat 3] [--workers 2] [--mutants 50,200,800] [--tests 10,100] [--quick]
"""

from __future__ import annotations

from common import Figure, Section, base_parser, check, console, fmt, median, print_section, scratch
from gen_target import generate
from storeinfo import RunInfo, measured_run

DEFAULT_MUTANTS = (50, 200, 800)
DEFAULT_TESTS = (10, 100)


def run_config(mutants: int, tests: int, workers: int) -> tuple[int, RunInfo]:
    with scratch(f"scale-{mutants}-{tests}") as parent:
        made = generate(parent / "target", mutants, tests)
        info = measured_run(made.root, workers, "--operators", "generic")
        return made.mutants, info


def measure(
    repeat: int,
    workers: int,
    quick: bool,
    mutant_sizes: tuple[int, ...] = DEFAULT_MUTANTS,
    test_sizes: tuple[int, ...] = DEFAULT_TESTS,
) -> Section:
    if quick:
        mutant_sizes, test_sizes = mutant_sizes[:1], test_sizes[:1]
    section = Section(
        "scaling", f"5. scaling on generated targets, generic operators, full matrix, {workers} workers"
    )
    results: dict[tuple[int, int], list[RunInfo]] = {}
    actual: dict[tuple[int, int], int] = {}
    for i in range(repeat):
        for size in mutant_sizes:
            for tests in test_sizes:
                console.print(f"[dim]scaling: ~{size} mutants, {tests} tests, run {i + 1}/{repeat}[/]")
                count, info = run_config(size, tests, workers)
                actual[(size, tests)] = count
                results.setdefault((size, tests), []).append(info)
    rows = []
    for (size, tests), runs in results.items():
        walls = [r.wall for r in runs]
        rows.append(
            [
                str(actual[(size, tests)]),
                str(tests),
                fmt(median(walls), "s"),
                fmt(median([r.wall / r.mutants for r in runs]), "ms"),
                fmt(median([r.peak_rss_mb for r in runs]), "MB"),
                fmt(median([r.cpu for r in runs]), "s"),
                _statuses(runs[-1]),
            ]
        )
    section.add_table(
        "runs (medians)",
        ["mutants", "tests", "wall", "wall per mutant", "peak RSS (tree)", "CPU", "statuses (last run)"],
        rows,
    )
    small, large = mutant_sizes[0], mutant_sizes[-1]
    few, many = test_sizes[0], test_sizes[-1]
    if large != small:
        for tests in test_sizes:
            pairs = zip(results[(small, tests)], results[(large, tests)], strict=True)
            ratios = [b.wall / a.wall for a, b in pairs]
            size_ratio = actual[(large, tests)] / actual[(small, tests)]
            section.figures.append(
                Figure(
                    f"wall ×{size_ratio:.0f} mutants ({small}→{large}), {tests} tests",
                    ratios,
                    "x",
                    note="linear would be the mutant ratio",
                )
            )
    if many != few:
        for size in mutant_sizes:
            pairs = zip(results[(size, few)], results[(size, many)], strict=True)
            ratios = [b.wall / a.wall for a, b in pairs]
            section.figures.append(Figure(f"wall, {few}→{many} tests, ~{size} mutants", ratios, "x"))
    peaks = [max(r.peak_rss_mb for r in runs) for runs in zip(*results.values(), strict=True)]
    section.figures.append(
        Figure(
            "peak memory, largest of all configurations",
            peaks,
            "MB",
            "< 500 MB",
            check(median(peaks), at_most=500),
        )
    )
    section.notes.append(
        "Generated targets (bench/gen_target.py): 19 generic mutants per function, 50 functions per module; "
        "test j checks every function i with i % T == j % T and sleeps 5 ms. Peak memory = summed RSS of the "
        "mutagent process tree (workers and their forked children included; shared pages counted repeatedly)."
    )
    return section


def _statuses(run: RunInfo) -> str:
    return ", ".join(f"{name} {count}" for name, count in sorted(run.statuses.items()))


def main(argv: list[str] | None = None) -> int:
    parser = base_parser(__doc__ or "")
    parser.add_argument("--mutants", help="comma list of approximate mutant counts (default 50,200,800)")
    parser.add_argument("--tests", help="comma list of suite sizes (default 10,100)")
    args = parser.parse_args(argv)
    sizes = tuple(int(x) for x in args.mutants.split(",")) if args.mutants else DEFAULT_MUTANTS
    tests = tuple(int(x) for x in args.tests.split(",")) if args.tests else DEFAULT_TESTS
    print_section(measure(1 if args.quick else args.repeat, args.workers, args.quick, sizes, tests))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
