"""Incremental re-runs: no change, then one function edited, as fractions of the first run.

On a fresh copy of the sample agent (agent operators, full kill matrix): a first run, the same
run again with nothing changed, then one run after each of a few one-function edits (a harmless
statement added to the body, so that function's mutants must run again), the functions taken
across the range of how many tests run them. Only function bodies change, so the baseline
re-measures just the tests that ran the edited function (the closing line says how many).

    python bench/incremental.py [--repeat 3] [--workers 2] [--quick]
"""

from __future__ import annotations

import ast
import json
import sqlite3
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import agentruns
import common
from common import (
    BenchError,
    Figure,
    Section,
    base_parser,
    bench_env,
    check,
    console,
    copy_sample_agent,
    fmt,
    median,
    print_section,
    scratch,
)
from storeinfo import RunInfo, _query, measured_run

from mutagent.model import Mutant, Status
from mutagent.store import store_path


def enclosing_function(source: str, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The innermost function (or method) whose body spans ``line``; ``None`` at module or class level."""
    chosen: ast.FunctionDef | ast.AsyncFunctionDef | None = None
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= line <= (
            node.end_lineno or 0
        ):
            if chosen is None or node.lineno > chosen.lineno:
                chosen = node
    return chosen


def edit_function(target: Path, mutant: Mutant) -> str:
    """Insert ``_bench_edit = None`` before the first statement of the innermost function holding
    ``mutant`` (after its docstring); returns the function's name."""
    path = target / mutant.file
    source = path.read_text(encoding="utf-8")
    chosen = enclosing_function(source, mutant.location.start_line)
    if chosen is None:
        raise ValueError(f"{mutant.file}:{mutant.location.start_line} is not inside a function")
    body = chosen.body
    first = (
        body[1]
        if len(body) > 1
        and isinstance(body[0], ast.Expr)
        and isinstance(getattr(body[0], "value", None), ast.Constant)
        and isinstance(body[0].value.value, str)
        else body[0]
    )
    lines = source.splitlines(keepends=True)
    indent = lines[first.lineno - 1][: first.col_offset]
    lines.insert(first.lineno - 1, f"{indent}_bench_edit = None\n")
    path.write_text("".join(lines), encoding="utf-8")
    return chosen.name


def spread_of_functions(
    info: RunInfo, target: Path, points: tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 1.0)
) -> list[Mutant]:
    """One mutant per chosen function: the functions holding a mutant that ran, ordered by how many
    tests run them (the most covering tests of any of their mutants), taken at ``points`` of that
    order (fewest, quartiles, most). An edit's cost depends mostly on how many tests run the edited
    function; a spread shows that range instead of one arbitrary function."""
    sources: dict[str, str] = {}
    widest: dict[tuple[str, int], tuple[int, Mutant]] = {}
    for mutant in info.data.mutants:
        result = info.data.result_of(mutant)
        if not result.tests_run:
            continue
        if mutant.file not in sources:
            sources[mutant.file] = (target / mutant.file).read_text(encoding="utf-8")
        function = enclosing_function(sources[mutant.file], mutant.location.start_line)
        if function is None:  # module level or a class body: not a one-function edit
            continue
        key = (mutant.file, function.lineno)
        breadth = len(result.covered_by)
        if key not in widest or breadth > widest[key][0]:
            widest[key] = (breadth, mutant)
    ordered = sorted(widest.values(), key=lambda pair: (pair[0], pair[1].file, pair[1].location.start_line))
    chosen: list[Mutant] = []
    for point in points:
        mutant = ordered[round(point * (len(ordered) - 1))][1]
        if mutant not in chosen:
            chosen.append(mutant)
    return chosen


def timed_run(target: Path, workers: int, *args: str) -> tuple[RunInfo, float, set[str]]:
    """The run, the seconds it spent before its first mutant started (start-up, baseline,
    generation; the whole run when no mutant ran), from the results it committed, and the ids of
    the mutants it ran (not reused)."""
    started = time.time()
    info = measured_run(target, workers, *args)
    connection = sqlite3.connect(f"file:{store_path(target)}?mode=ro", uri=True)
    try:
        rows = connection.execute("SELECT mutant_id, finished FROM results").fetchall()
    finally:
        connection.close()
    ran = {mutant_id for mutant_id, at in rows if at >= started and mutant_id in info.data.results}
    starts = [at - info.data.results[mutant_id].duration for mutant_id, at in rows if mutant_id in ran]
    return info, (min(starts) - started if starts else info.wall), ran


def collection_time(target: Path) -> float:
    """One ``pytest --collect-only`` of the target: process start to exit (the start-up every
    run that runs a test pays once, whatever the tool)."""
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--collect-only"]
    result = common.measure(command, cwd=target, env=bench_env())
    if not result.ok:
        raise BenchError(f"pytest --collect-only failed in {target}:\n{result.tail()}")
    return result.wall


def tests_running(target: Path, where: str) -> set[str]:
    """The tests whose stored baseline coverage runs a line of the function ``file:name`` (as
    edited now): the tests an incremental baseline measures again after editing it."""
    file, name = where.split(":")
    source = (target / file).read_text(encoding="utf-8")
    lines: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    rows = _query(target, "SELECT data FROM baseline")
    coverage = json.loads(rows[0][0]).get("coverage", {}).get(file, {}) if rows else {}
    return {test for line, tests in coverage.items() if int(line) in lines for test in tests}


def floor_of(target: Path, where: str, run: RunInfo, ran: set[str], collect: float, workers: int) -> float:
    """What any tool must spend on this re-run: one pytest start-up with the collection, the
    re-measured tests once, and what the re-run mutants' verdicts prove had to run (``floor.py``'s
    rule: every covering test of a survivor, the cheapest covering test of a detected mutant),
    both spread over the workers, with the baseline's per-test durations."""
    durations = run.plain_durations
    remeasured = sum(durations.get(t, 0.0) for t in tests_running(target, where))
    mutant_tests = 0.0
    for mutant_id in ran:
        result = run.data.results[mutant_id]
        covering = [durations.get(t, 0.0) for t in result.covered_by]
        if result.status is Status.SURVIVED:
            mutant_tests += sum(covering)
        elif result.status in (Status.KILLED, Status.TIMEOUT):
            mutant_tests += min(covering, default=0.0)
    return collect + (remeasured + mutant_tests) / workers


@dataclass
class Edit:
    where: str  # file:function edited
    tests: int  # tests that run it (covering tests of its widest mutant)
    run: RunInfo  # the re-run after the edit
    before_first_mutant: float
    floor: float  # collection + (re-measured tests + new mutants' tests) ÷ workers (``floor_of``)


@dataclass
class Round:
    first: RunInfo
    first_before: float
    same: RunInfo
    edits: list[Edit]
    collect: float  # one pytest --collect-only of the copy, measured in the same round


def one_round(workers: int) -> Round:
    with scratch("incremental") as parent:
        target = copy_sample_agent(parent)
        args = ("--operators", agentruns.operators())
        collect = collection_time(target)
        first, first_before, _ = timed_run(target, workers, *args)
        same = measured_run(target, workers, *args)
        edits = []
        for mutant in spread_of_functions(first, target):
            tests = len(first.data.result_of(mutant).covered_by)
            where = f"{mutant.file}:{edit_function(target, mutant)}"
            run, before, ran = timed_run(target, workers, *args)
            floor = floor_of(target, where, run, ran, collect, workers)
            edits.append(Edit(where, tests, run, before, floor))
        return Round(first, first_before, same, edits, collect)


def remeasured(info: RunInfo) -> str:
    if info.remeasured is None:
        return "full baseline"
    again, total = info.remeasured
    return f"{again} of {total} tests"


def measure(repeat: int, workers: int, quick: bool) -> Section:
    section = Section(
        "incremental",
        f"6. incremental re-runs, sample agent, --operators {agentruns.operators()}, {workers} workers",
    )
    rounds: list[Round] = []
    for i in range(repeat):
        console.print(
            f"[dim]incremental: round {i + 1}/{repeat} (a first run, a no-change run, one run per edit)[/]"
        )
        rounds.append(one_round(workers))
    same = [r.same.wall / r.first.wall for r in rounds]
    spread = [median([e.run.wall / r.first.wall for e in r.edits]) for r in rounds]
    spread_cpu = [median([e.run.cpu / r.first.cpu for e in r.edits]) for r in rounds if r.first.cpu]
    widest = [max(r.edits, key=lambda e: e.tests).run.wall / r.first.wall for r in rounds]
    narrowest = [min(r.edits, key=lambda e: e.tests).run.wall / r.first.wall for r in rounds]
    before = [median([e.before_first_mutant / r.first_before for e in r.edits]) for r in rounds]
    floor = [median([e.floor / r.first.wall for e in r.edits]) for r in rounds]
    over_floor = [median([e.run.wall / e.floor for e in r.edits]) for r in rounds]
    section.figures += [
        Figure("no-change re-run ÷ first run", same, "%", "< 10 %", check(median(same), at_most=0.1)),
        Figure(
            "one-function-edit re-run ÷ first run (median over the spread of functions)",
            spread,
            "%",
            "≤ 10 %",
            check(median(spread), at_most=0.1),
        ),
        Figure("the same, CPU", spread_cpu, "%"),
        Figure("edit of the function the most tests run ÷ first run", widest, "%"),
        Figure("edit of the function the fewest tests run ÷ first run", narrowest, "%"),
        Figure("one-function edit: time before the first mutant ÷ first run's (median)", before, "%"),
        Figure("one-function edit: the floor ÷ first run (median over the spread)", floor, "%"),
        Figure("one-function edit: re-run wall ÷ its floor (median over the spread)", over_floor, "x"),
        Figure("pytest --collect-only of the copy (the floor's start-up)", [r.collect for r in rounds], "s"),
        Figure("first run wall", [r.first.wall for r in rounds], "s"),
        Figure("no-change re-run wall", [r.same.wall for r in rounds], "s"),
    ]
    rows = []
    for i, r in enumerate(rounds, 1):
        for edit in r.edits:
            e = edit.run
            rows.append(
                [
                    str(i),
                    edit.where,
                    str(edit.tests),
                    remeasured(e),
                    f"{e.ran} run / {e.reused} reused",
                    fmt(e.wall, "s"),
                    f"{e.wall / r.first.wall:.1%}",
                    fmt(edit.floor, "s"),
                    f"{edit.floor / r.first.wall:.1%}",
                    f"{e.wall / edit.floor:.2f}×",
                ]
            )
    section.add_table(
        "edits (first run, then each edit in turn on the same copy)",
        [
            "round",
            "edited function",
            "tests running it",
            "baseline",
            "mutants",
            "re-run wall",
            "÷ first run",
            "floor",
            "floor ÷ first run",
            "wall ÷ floor",
        ],
        rows,
    )
    section.notes.append(
        "Each edit adds `_bench_edit = None` as the first statement of one function. The functions "
        "are a spread, not a pick: those holding a mutant that ran, ordered by how many tests run "
        "them, taken at the fewest, the quartiles and the most (`spread_of_functions`). Only a "
        "function body changes, so the baseline re-measures the tests that ran that function and "
        "keeps the rest, and only that function's mutants run again. Ratios are wall ÷ wall (CPU ÷ "
        "CPU of the whole process tree) of runs on the same copy, one right after the other. Every "
        "re-run pays one pytest start-up with the suite's collection (about 2.9 s for the sample "
        "agent, section 8) before its first mutant: the floor of a re-run that must run tests."
    )
    section.notes.append(
        "The floor of a re-run (`floor_of`) is what any tool would spend on it: one `pytest "
        "--collect-only` of the copy (measured in the same round, process start to exit), plus "
        "the tests that run the edited function (the ones the baseline measures again) once, plus "
        "what the re-run mutants' verdicts prove had to run (the floor's rule of section 1: every "
        "covering test of a survivor, the cheapest covering test of a detected mutant), with the "
        "baseline's per-test durations, divided by the workers. mutagent runs each re-measured "
        "test twice (a measured batch, then alone: the control run) and, in the full kill matrix, "
        "every covering test of a detected mutant, so its own floor is higher."
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
