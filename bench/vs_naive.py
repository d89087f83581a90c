"""mutagent vs the naive approach on the sample agent's agent mutants.

The naive approach is what one writes by hand: for each mutant, copy the tree, write the mutated
file, run ``python -m pytest -x`` in a fresh interpreter (stop at the first failure: killed or
not, the same question ``--fast`` answers), with ``--workers`` of them in parallel. To keep the
run bounded only a seeded random sample of mutants is timed and the cost is extrapolated to all of
them; the sampled verdicts are also checked against mutagent's.

    python bench/vs_naive.py [--repeat 3] [--workers 2] [--sample 8] [--seed 0] [--quick]
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import agentruns
from common import (
    BenchError,
    Figure,
    Section,
    base_parser,
    bench_env,
    check,
    console,
    copy_sample_agent,
    copy_tree,
    fmt,
    measure,
    median,
    print_section,
    scratch,
)
from floor import FLOOR_NOTE, tests_floor
from storeinfo import RunInfo

from mutagent.engine.selection.discover import discover
from mutagent.model import Mutant
from mutagent.mutation.generate import generate_for_file
from mutagent.mutation.registry import select_operators

PYTEST = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "sample_agent/tests"]


@dataclass
class NaiveResult:
    mutant: Mutant
    seconds: float  # copy + apply + pytest
    verdict: str  # Killed / Survived / Timeout / Error


def agent_mutants(target: Path) -> tuple[list[Mutant], dict[str, str]]:
    """Every agent mutant of the sample agent copy at ``target`` (Ignored ones left out) and the sources."""
    operators = select_operators(agentruns.operators())
    mutants: list[Mutant] = []
    sources: dict[str, str] = {}
    for relative in discover(target).sources:
        sources[relative] = (target / relative).read_text(encoding="utf-8")
        mutants += [
            m for m in generate_for_file(target, target / relative, operators) if not m.ignored_reason
        ]
    return mutants, sources


def suite_seconds(parent: Path) -> float:
    """One plain run of the unmutated suite in ``parent`` (which must be green)."""
    check_import = measure(
        [sys.executable, "-c", "import sample_agent; print(sample_agent.__file__)"],
        cwd=parent,
        env=bench_env(),
    )
    if not check_import.stdout.strip().startswith(str(parent)):
        raise BenchError(f"the naive runs would not import the copy: {check_import.stdout.strip()}")
    run = measure(PYTEST, cwd=parent, env=bench_env())
    if not run.ok:
        raise BenchError(f"the sample agent's suite is not green in a plain run:\n{run.tail()}")
    return run.wall


def run_one(
    original: Path, scratch_dir: Path, index: int, mutant: Mutant, source: str, timeout: float
) -> NaiveResult:
    """Copy, apply, run pytest in a fresh interpreter: the per-mutant cost of the naive approach."""
    started = time.monotonic()
    parent = scratch_dir / f"mutant-{index}"
    target = copy_tree(original, parent / "sample_agent")
    (target / mutant.file).write_text(mutant.mutated_source(source), encoding="utf-8")
    run = measure(PYTEST, cwd=parent, env=bench_env(), timeout=timeout)
    # any other non-zero exit (failures, collection errors) is a kill, as a hand-written loop counts it
    verdict = {0: "Survived", -9: "Timeout", 5: "Error"}.get(run.returncode, "Killed")
    return NaiveResult(mutant, time.monotonic() - started, verdict)


def run_sample(
    sample: list[Mutant], sources: dict[str, str], workers: int, timeout: float
) -> tuple[float, list[NaiveResult]]:
    """Run the sampled mutants ``workers`` at a time; returns the batch wall and the results."""
    with scratch("naive") as parent:
        original = copy_sample_agent(parent / "original")
        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futures = [
                pool.submit(run_one, original, parent, i, m, sources[m.file], timeout)
                for i, m in enumerate(sample)
            ]
            results = [f.result() for f in futures]
        return time.monotonic() - started, results


def measure_naive(
    repeat: int, workers: int, sample_size: int, seed: int
) -> tuple[int, list[float], list[NaiveResult]]:
    """The mean seconds one mutant costs the naive approach (copy + apply + pytest, ``workers`` running
    at once), one figure per batch of ``sample_size`` seeded random mutants."""
    with scratch("naive-setup") as parent:
        copy = copy_sample_agent(parent)
        mutants, sources = agent_mutants(copy)
        suite = suite_seconds(parent)
    rng = random.Random(seed)
    costs: list[float] = []
    results: list[NaiveResult] = []
    for i in range(repeat):
        sample = rng.sample(mutants, min(sample_size, len(mutants)))
        console.print(f"[dim]naive: batch {i + 1}/{repeat}, {len(sample)} mutants, {workers} at a time[/]")
        _, batch = run_sample(sample, sources, workers, timeout=3 * suite + 10)
        costs.append(statistics.fmean(r.seconds for r in batch))
        results += batch
    return len(mutants), costs, results


def cross_check(results: list[NaiveResult], runs: list[RunInfo]) -> list[list[str]]:
    """Sampled mutants whose naive verdict disagrees with mutagent's ``--fast`` verdict."""
    detected = {"Killed", "Timeout"}
    rows = []
    seen = set()
    for result in results:
        if result.mutant.id in seen:
            continue
        seen.add(result.mutant.id)
        theirs = {run.outcome_of(result.mutant.id) for run in runs}
        naive_detected = result.verdict in detected
        if any((status in detected) != naive_detected for status in theirs):
            m = result.mutant
            rows.append(
                [f"{m.file}:{m.location.start_line}", m.operator, result.verdict, ", ".join(sorted(theirs))]
            )
    return rows


def _floor_figures(naive_walls: list[float], fast: list[RunInfo]) -> list[Figure]:
    """The floor (``floor.tests_floor``) of each ``--fast`` run, and the naive and mutagent walls over
    it: naive ÷ floor is the largest ratio over the naive approach any tool could reach here."""
    floors = [tests_floor(run) for run in fast]
    return [
        Figure("floor (tests only, any tool)", [f.seconds for f in floors], "s"),
        Figure(
            "naive (extrapolated) ÷ floor",
            [f.ratio(n) for n, f in zip(naive_walls, floors, strict=True)],
            "x",
        ),
        Figure(
            "mutagent --fast wall ÷ floor", [f.ratio(r.wall) for r, f in zip(fast, floors, strict=True)], "x"
        ),
    ]


def measure_section(repeat: int, workers: int, quick: bool, sample_size: int = 8, seed: int = 0) -> Section:
    section = Section(
        "naive",
        f"2. mutagent vs the naive approach, sample agent, --operators {agentruns.operators()}, "
        f"{workers} workers",
    )
    full, fast = agentruns.interleaved(repeat, workers)
    total, costs, results = measure_naive(repeat, workers, sample_size, seed)
    naive_walls = [cost * total / workers for cost in costs]  # all mutants, ``workers`` at a time
    fast_walls = [r.wall for r in fast]
    full_walls = [r.wall for r in full]
    vs_fast = [n / w for n, w in zip(naive_walls, fast_walls, strict=True)]
    section.figures += [
        Figure(
            "naive (extrapolated) ÷ mutagent --fast",
            vs_fast,
            "x",
            "≥ 20×",
            check(median(vs_fast), at_least=20.0),
        ),
        Figure(
            "naive (extrapolated) ÷ mutagent full matrix",
            [n / w for n, w in zip(naive_walls, full_walls, strict=True)],
            "x",
        ),
        *_floor_figures(naive_walls, fast),
        Figure("naive: seconds per mutant (mean of the sample)", costs, "s"),
        Figure("naive: extrapolated wall for all mutants", naive_walls, "s"),
        Figure("mutagent --fast wall", fast_walls, "s"),
        Figure("mutagent full-matrix wall", full_walls, "s"),
    ]
    verdicts = {
        v: sum(1 for r in results if r.verdict == v) for v in ("Killed", "Survived", "Timeout", "Error")
    }
    section.notes.append(
        f"The naive side timed a seeded random sample (seed {seed}) of {min(sample_size, total)} "
        f"of the {total} mutants per repetition ({repeat} repetitions), {workers} at a time, "
        f"and extrapolated: "
        f"mean seconds per mutant × {total} ÷ {workers}; a mutant still running after 3 × the plain "
        f"suite time + 10 s is stopped and counted as Timeout. Per mutant it copies the tree, "
        f"writes the mutant and runs "
        f"`python -m pytest -x` in a fresh interpreter. Sampled verdicts: "
        + ", ".join(f"{k} {v}" for k, v in verdicts.items())
        + "."
    )
    last = tests_floor(fast[-1])
    section.notes.append(
        f"floor of the last --fast run = suite {fmt(last.suite, 's')} + (survived "
        f"{fmt(last.survived, 's')} + killed or timed out {fmt(last.detected, 's')}) ÷ {last.workers} = "
        f"{fmt(last.seconds, 's')}"
        + (f"; {last.uncounted} mutants with no usable verdict counted as free" if last.uncounted else "")
        + f". {FLOOR_NOTE} Here the other tool is the naive approach: if naive ÷ floor is under 20×, "
        "the ≥ 20× target is out of reach by construction on these mutants."
    )
    mismatches = cross_check(results, fast)
    if mismatches:
        section.add_table(
            "sampled mutants where the naive verdict and mutagent's differ",
            ["where", "operator", "naive", "mutagent --fast"],
            mismatches,
        )
    else:
        section.notes.append(
            f"All {len({r.mutant.id for r in results})} sampled mutants got the same "
            "detected/undetected verdict from the naive run and from mutagent."
        )
    section.notes.append(f"mutagent ran {fmt(median([float(r.mutants) for r in fast]))} mutants per run.")
    return section


def main(argv: list[str] | None = None) -> int:
    parser = base_parser(__doc__ or "")
    parser.add_argument("--sample", type=int, default=8, help="mutants timed per naive batch")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    repeat = 1 if args.quick else args.repeat
    sample = min(args.sample, 4) if args.quick else args.sample
    if args.quick:
        agentruns.use_operators(agentruns.QUICK_OPERATORS)
    print_section(measure_section(repeat, args.workers, args.quick, sample, args.seed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
