"""Time to the first mutant vs one pytest collection plus one suite run, in a bare and a plugin-laden venv.

Every extra pytest process pays for the plugins installed where the tests run, so the fixed cost
of a run is measured in two environments built by ``venvs.py``: a bare one (pytest,
pytest-asyncio; plus hypothesis for the sample agent, whose suite imports it) and one with the
usual plugins (hypothesis, anyio, pytest-asyncio, pytest-timeout, pytest-cov, pytest-xdist).
Both install this checkout editable, so the figures are those of the engine it holds.

In each environment and for each target, on fresh copies, in a row: ``pytest --collect-only -q``,
``pytest -q`` (the whole suite), then ``mutagent run``. The time to the first mutant comes from
mutagent's store, not its output: the wall clock at launch (taken here) to the first committed
verdict of a mutant that ran tests (``results.finished``), so it includes that first mutant's own
run (tens of milliseconds with ``--fast``). The baseline row's ``created`` stamp is no phase
boundary (the row is written again during the mutant phase), so it is not used.

    python bench/first_mutant.py [--repeat 3] [--workers 2] [--quick]
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import agentruns
from common import (
    BenchError,
    Figure,
    Measurement,
    Section,
    base_parser,
    bench_env,
    check,
    console,
    copy_generic_target,
    copy_sample_agent,
    fmt,
    measure,
    median,
    print_section,
    scratch,
)
from storeinfo import _query
from venvs import BARE, BARE_HYPOTHESIS, PLUGINS, Venv

from mutagent.store import load_run_data

PYTEST = ("-m", "pytest", "-q", "-p", "no:cacheprovider")


@dataclass
class Sample:
    collect: float  # pytest --collect-only, process start to exit
    suite: float  # pytest (the whole suite), process start to exit
    first_mutant: float  # mutagent launch .. the first verdict of a mutant that ran tests, committed
    wall: float  # the whole mutagent run
    mutants: int

    @property
    def budget(self) -> float:
        """The issue's target: one collection plus one suite run, plus 10 %."""
        return 1.1 * (self.collect + self.suite)


def _timed(venv: Venv, args: list[str], cwd: Path, what: str) -> Measurement:
    result = measure([str(venv.python), *args], cwd=cwd, env=bench_env())
    if not result.ok:
        raise BenchError(
            f"{what} failed in the {venv.name} venv (exit {result.returncode}):\n{result.tail()}"
        )
    return result


def one_sample(
    venv: Venv, copy: Callable[[Path], Path], label: str, workers: int, mutagent_args: list[str]
) -> Sample:
    with scratch(f"first-{label}-{venv.name}") as parent:
        target = copy(parent)
        collect = _timed(venv, [*PYTEST, "--collect-only"], target, "pytest --collect-only")
        suite = _timed(venv, [*PYTEST], target, "pytest")
        launched = time.time()
        command = ["-m", "mutagent", "run", str(target), *mutagent_args, "--workers", str(workers)]
        run = _timed(venv, command, target.parent, "mutagent run")
        data = load_run_data(target)
        ran = {m.id for m in data.mutants if m.id in data.results and data.results[m.id].tests_run}
        verdicts = [at for mid, at in _query(target, "SELECT mutant_id, finished FROM results") if mid in ran]
        if not verdicts:
            raise BenchError(
                f"mutagent run in the {venv.name} venv left no verdict of a mutant that ran tests"
            )
        return Sample(
            collect.wall,
            suite.wall,
            min(verdicts) - launched,
            run.wall,
            len(data.mutants),
        )


def measure_section(repeat: int, workers: int, quick: bool) -> Section:
    spec = agentruns.operators()
    section = Section(
        "first-mutant", f"8. time to the first mutant vs one collection + one suite run, {workers} workers"
    )
    cases = [
        ("generic", copy_generic_target, BARE, ["--operators", "generic", "--fast"]),
        ("generic", copy_generic_target, PLUGINS, ["--operators", "generic", "--fast"]),
        ("sample_agent", copy_sample_agent, BARE_HYPOTHESIS, ["--operators", spec, "--fast"]),
        ("sample_agent", copy_sample_agent, PLUGINS, ["--operators", spec, "--fast"]),
    ]
    samples: dict[tuple[str, str], list[Sample]] = {}
    errors: dict[tuple[str, str], str] = {}
    for i in range(repeat):
        for label, copy, venv, args in cases:  # interleaved: each repetition visits every case once
            key = (label, venv.name)
            if key in errors:
                continue
            console.print(f"[dim]first mutant: {label} in the {venv.name} venv, {i + 1}/{repeat}[/]")
            try:
                samples.setdefault(key, []).append(one_sample(venv.ensure(), copy, label, workers, args))
            except BenchError as exc:
                errors[key] = " / ".join(str(exc).strip().splitlines()[-4:])
    rows = []
    for (label, name), runs in samples.items():
        ratio = [s.first_mutant / (s.collect + s.suite) for s in runs]
        section.figures += [
            Figure(
                f"{label}, {name} venv: time to first mutant verdict ÷ (collection + suite run)",
                ratio,
                "x",
                "≤ 1.10×",
                check(median(ratio), at_most=1.10),
            ),
            Figure(
                f"{label}, {name} venv: time to first mutant verdict", [s.first_mutant for s in runs], "s"
            ),
        ]
        rows.append(
            [
                label,
                name,
                fmt(median([s.collect for s in runs]), "s"),
                fmt(median([s.suite for s in runs]), "s"),
                fmt(median([s.budget for s in runs]), "s"),
                fmt(median([s.first_mutant for s in runs]), "s"),
                fmt(median([s.wall for s in runs]), "s"),
                str(runs[-1].mutants),
            ]
        )
    section.add_table(
        "medians",
        [
            "target",
            "venv",
            "pytest --collect-only",
            "pytest (suite)",
            "target: 1.1 × (both)",
            "mutagent: first mutant verdict",
            "mutagent wall",
            "mutants",
        ],
        rows,
    )
    for (label, name), error in errors.items():
        section.notes.append(f"{label}, {name} venv: not measured: {error}")
    for venv in {v for _, _, v, _ in cases}:
        if venv.python.exists():
            section.notes.append(f"{venv.name} venv ({venv.path}): {venv.packages()}")
    section.notes.append(
        "Times are from process launch. pytest commands: `python -m pytest -q -p no:cacheprovider "
        "[--collect-only]` in the target copy. mutagent: `mutagent run COPY --operators … --fast`; "
        "its first-mutant time is read from its store: launch → the first committed verdict of a mutant "
        "that ran tests (that mutant's own run included)."
    )
    section.notes.append(
        "Before the first mutant, mutagent pays: its own start-up up to the first worker's launch "
        "(the reports, which import libcst's matchers, load only after the run), one pytest start-up "
        "(the first worker imports the plugins and collects while the mutants are generated; the "
        "other workers are forked from it, no second start-up), then the baseline on all workers: "
        "measured batches with per-test coverage, then every test once more alone (the control "
        "run). The module-level mutants' narrow analysis is made in a thread of the engine during "
        "the start-up and the baseline (`orchestration/ahead.py`)."
    )
    section.notes.append(
        "The control run is not folded into the measured batches: it is each test's second run, "
        "which catches a test that passes only once (it leaves a file or a port behind) as well as "
        "one that fails alone after passing in its batch; measuring each test alone would still "
        "need that second run, so folding would drop the check rather than its cost."
    )
    return section


def main(argv: list[str] | None = None) -> int:
    args = base_parser(__doc__ or "").parse_args(argv)
    if args.quick:
        agentruns.use_operators(agentruns.QUICK_OPERATORS)
    print_section(measure_section(1 if args.quick else args.repeat, args.workers, args.quick))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
