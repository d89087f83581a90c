"""Incremental re-runs: no change, then one function edited, as fractions of the first run.

On a fresh copy of the sample agent (agent operators, full kill matrix): a first run, the same
run again with nothing changed, then again after adding a harmless statement to the function
holding the first mutant (its mutants' statement text changes, so they must re-run), then again
after the same kind of edit to the function run by the fewest tests (of those holding a mutant
that ran). Only function bodies change, so the baseline re-measures just the tests that ran the
edited function (the closing line says how many).

    python bench/incremental.py [--repeat 3] [--workers 2] [--quick]
"""

from __future__ import annotations

import ast
import sqlite3
import time
from pathlib import Path

import agentruns
from common import (
    Figure,
    Section,
    base_parser,
    check,
    console,
    copy_sample_agent,
    fmt,
    median,
    print_section,
    scratch,
)
from storeinfo import RunInfo, measured_run

from mutagent.model import Mutant
from mutagent.store import store_path


def edit_function(target: Path, mutant: Mutant) -> str:
    """Insert ``_bench_edit = None`` before the first statement of the top-level function or method
    holding ``mutant`` (after its docstring); returns the function's name."""
    path = target / mutant.file
    source = path.read_text(encoding="utf-8")
    line = mutant.location.start_line
    chosen: ast.FunctionDef | ast.AsyncFunctionDef | None = None
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= line <= (
            node.end_lineno or 0
        ):
            if chosen is None or node.lineno > chosen.lineno:
                chosen = node  # the innermost function around the mutant
    if chosen is None:
        raise ValueError(f"{mutant.file}:{line} is not inside a function")
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


def narrowest(info: RunInfo, skip: str) -> Mutant:
    """The mutant that ran with the fewest covering tests, outside the function ``skip``."""
    ran = [m for m in info.data.mutants if m.scope and info.data.result_of(m).tests_run]
    ran = [m for m in ran if f"{m.file}:{m.scope[-1] if m.scope else ''}" != skip] or ran
    return min(ran, key=lambda m: len(info.data.result_of(m).covered_by))


def timed_run(target: Path, workers: int, *args: str) -> tuple[RunInfo, float]:
    """The run and the seconds it spent before its first mutant started (start-up, baseline,
    generation; the whole run when no mutant ran), from the results it committed."""
    started = time.time()
    info = measured_run(target, workers, *args)
    connection = sqlite3.connect(f"file:{store_path(target)}?mode=ro", uri=True)
    try:
        rows = connection.execute("SELECT mutant_id, finished FROM results").fetchall()
    finally:
        connection.close()
    starts = [
        at - info.data.results[mutant_id].duration
        for mutant_id, at in rows
        if at >= started and mutant_id in info.data.results
    ]
    return info, (min(starts) - started if starts else info.wall)


def one_round(workers: int) -> tuple[RunInfo, RunInfo, RunInfo, str, RunInfo, str, float, float]:
    with scratch("incremental") as parent:
        target = copy_sample_agent(parent)
        args = ("--operators", agentruns.operators())
        first, first_before = timed_run(target, workers, *args)
        same = measured_run(target, workers, *args)
        mutant = next(m for m in first.data.mutants if first.data.result_of(m).tests_run)
        where = f"{mutant.file}:{edit_function(target, mutant)}"
        edited, edited_before = timed_run(target, workers, *args)
        narrow = narrowest(edited, where)
        narrow_where = f"{narrow.file}:{edit_function(target, narrow)}"
        narrow_edited = measured_run(target, workers, *args)
        return first, same, edited, where, narrow_edited, narrow_where, first_before, edited_before


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
    rounds = []
    for i in range(repeat):
        console.print(f"[dim]incremental: round {i + 1}/{repeat} (3 runs)[/]")
        rounds.append(one_round(workers))
    same = [r[1].wall / r[0].wall for r in rounds]
    edited = [r[2].wall / r[0].wall for r in rounds]
    narrow = [r[4].wall / r[0].wall for r in rounds]
    edited_cpu = [r[2].cpu / r[0].cpu for r in rounds if r[0].cpu]
    before = [r[7] / r[6] for r in rounds]
    section.figures += [
        Figure("no-change re-run ÷ first run", same, "%", "< 10 %", check(median(same), at_most=0.1)),
        Figure(
            "one-function-edit re-run ÷ first run", edited, "%", "≤ 10 %", check(median(edited), at_most=0.1)
        ),
        Figure("one-function-edit re-run ÷ first run, CPU", edited_cpu, "%"),
        Figure("one-function edit: time before the first mutant ÷ first run's", before, "%"),
        Figure("narrowest-function-edit re-run ÷ first run", narrow, "%"),
        Figure("first run wall", [r[0].wall for r in rounds], "s"),
        Figure("no-change re-run wall", [r[1].wall for r in rounds], "s"),
        Figure("edited re-run wall", [r[2].wall for r in rounds], "s"),
        Figure("narrowest-edit re-run wall", [r[4].wall for r in rounds], "s"),
    ]
    rows = []
    for i, (f, s, e, where, n, narrow_where, _, _) in enumerate(rounds, 1):
        rows.append(
            [
                str(i),
                fmt(f.wall, "s"),
                f"{s.ran} run / {s.reused} reused, {fmt(s.wall, 's')}",
                f"{where}: {remeasured(e)}; {e.ran} run / {e.reused} reused, {fmt(e.wall, 's')}",
                f"{narrow_where}: {remeasured(n)}; {n.ran} run / {n.reused} reused, {fmt(n.wall, 's')}",
            ]
        )
    section.add_table(
        "rounds",
        ["round", "first", "no change", "one-function edit", "narrowest-function edit"],
        rows,
    )
    section.notes.append(
        "Each edit adds `_bench_edit = None` as the first statement of a function: the one holding "
        "the first mutant that ran, then (after that run) the one holding the mutant with the fewest "
        "covering tests. Only a function body changes, so the baseline re-measures the tests that "
        "ran that function and keeps the rest. Ratios are wall ÷ wall (CPU ÷ CPU of the whole "
        "process tree) of runs on the same copy, one right after the other. The first edited "
        "function, `make_client`, is called by the suite's `make_agent` fixture, so most tests "
        "run it and are measured again; its two mutants, which must run again, are Timeouts that "
        "run to their time limit. The time before the first mutant (worker start-up, baseline) is "
        "the part of a re-run the incremental baseline shortens."
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
