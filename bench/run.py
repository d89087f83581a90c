"""Run every benchmark on this machine and write ``bench/RESULTS.md``.

    python bench/run.py                 # the full set (long: see bench/README in RESULTS.md)
    python bench/run.py --quick         # a few minutes: smallest configurations, one run each
    python bench/run.py --only mutmut,naive --repeat 5

    python bench/run.py --quick --only irradiate,first-mutant,overhead

Sections: mutmut (1), naive (2), matrix (3), efficiency (4), scaling (5), incremental (6),
irradiate (7: mutmut and irradiate 0.4.3 vs mutagent), first-mutant (8), overhead (9).
irradiate and first-mutant build separate venvs once under the bench cache (bench/venvs.py).
A section that fails is reported as not measured with its error; the others still run.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import traceback
from collections.abc import Callable
from pathlib import Path

import agentruns
import first_mutant
import incremental
import matrix
import overhead
import scaling
import vs_irradiate
import vs_mutmut
import vs_naive
from common import BENCH, BenchError, Section, console, machine_info, print_section
from report import write_results

SECTIONS = (
    "mutmut",
    "naive",
    "matrix",
    "efficiency",
    "scaling",
    "incremental",
    "irradiate",
    "first-mutant",
    "overhead",
)


def plan(args: argparse.Namespace) -> list[tuple[str, Callable[[], Section]]]:
    repeat, workers, quick = args.repeat, args.workers, args.quick
    runs: list[tuple[str, Callable[[], Section]]] = [
        ("mutmut", lambda: vs_mutmut.measure(repeat, workers, quick, None, args.sample_agent_repeat)),
        ("naive", lambda: vs_naive.measure_section(repeat, workers, quick, args.naive_sample, args.seed)),
        ("matrix", lambda: matrix.matrix_section(*agentruns.interleaved(repeat, workers), workers)),
        ("efficiency", lambda: matrix.efficiency_section(*agentruns.interleaved(repeat, workers), workers)),
        ("scaling", lambda: scaling.measure(repeat, workers, quick)),
        ("incremental", lambda: incremental.measure(repeat, workers, quick)),
        (
            "irradiate",
            lambda: vs_irradiate.measure(repeat, workers, quick, None, args.sample_agent_repeat),
        ),
        ("first-mutant", lambda: first_mutant.measure_section(repeat, workers, quick)),
        ("overhead", lambda: overhead.measure(repeat, workers, quick)),
    ]
    chosen = args.only.split(",") if args.only else list(SECTIONS)
    unknown = set(chosen) - set(SECTIONS)
    if unknown:
        raise SystemExit(f"unknown sections {sorted(unknown)}; choose from {', '.join(SECTIONS)}")
    return [(key, make) for key, make in runs if key in chosen]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (median reported; default 3)")
    parser.add_argument(
        "--workers", type=int, default=2, help="mutagent workers / mutmut children (default 2)"
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: one repetition, smallest targets, a few agent operators",
    )
    parser.add_argument("--only", help="comma list of sections: " + ", ".join(SECTIONS))
    parser.add_argument(
        "--sample-agent-repeat",
        type=int,
        default=1,
        help="mutmut pairs / irradiate triples on the sample agent (about 1000 generic mutants: "
        "many minutes each)",
    )
    parser.add_argument("--naive-sample", type=int, default=8, help="mutants timed per naive batch")
    parser.add_argument("--seed", type=int, default=0, help="seed of the naive sample")
    parser.add_argument("--output", type=Path, default=BENCH / "RESULTS.md")
    args = parser.parse_args(argv)
    if args.quick:
        args.repeat = 1
        args.naive_sample = min(args.naive_sample, 4)
        agentruns.use_operators(agentruns.QUICK_OPERATORS)
    machine = machine_info()
    started = time.monotonic()
    sections: list[Section] = []
    for key, make in plan(args):
        console.print(f"[bold]== {key}[/]")
        try:
            section = make()
        except (BenchError, OSError, ValueError, KeyError) as exc:
            section = Section(key, key, error=f"{type(exc).__name__}: {exc}".strip())
            console.print(traceback.format_exc(), style="dim")
        section.measured = measured_under(args.quick)
        sections.append(section)
        print_section(section)
    machine["load average at the end"] = machine_info()["load average (1, 5, 15 min)"]
    everything = merge(args.output.with_suffix(".json"), sections) if args.only else sections
    write_results(args.output, everything, machine, args, time.monotonic() - started)
    console.print(f"wrote {args.output} and {args.output.with_suffix('.json')}")
    return 0 if all(s.error is None for s in sections) else 1


def measured_under(quick: bool) -> str:
    """When and under which load a section was measured; marked noisy when the 1-minute load
    average exceeds the cores (other processes competed for the CPU during the section)."""
    info = machine_info()
    text = f"{info['date']}, {info['cpu']}, load average {info['load average (1, 5, 15 min)']}"
    if quick:
        text += ", --quick (one run, smallest configuration)"
    if os.getloadavg()[0] > (os.cpu_count() or 1):
        text += "; **measured under load** (1-minute load above the core count): noisy figures"
    return text


def merge(path: Path, fresh: list[Section]) -> list[Section]:
    """``--only``: keep the other sections of the previous run (from its JSON twin), replace these."""
    previous: dict[str, Section] = {}
    if path.is_file():
        try:
            previous = {d["key"]: Section.from_json(d) for d in json.loads(path.read_text(encoding="utf-8"))}
        except (ValueError, KeyError, TypeError):
            console.print(f"[yellow]ignoring unreadable {path}[/]")
    previous.update({s.key: s for s in fresh})
    return [previous[key] for key in SECTIONS if key in previous]


if __name__ == "__main__":
    raise SystemExit(main())
