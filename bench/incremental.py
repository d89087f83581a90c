"""Incremental re-runs: no change, then one function edited, as fractions of the first run.

On a fresh copy of the sample agent (agent operators, full kill matrix): a first run, the same
run again with nothing changed, then again after adding a harmless statement to the function
holding the first mutant (its mutants' statement text changes, so they must re-run).

    python bench/incremental.py [--repeat 3] [--workers 2] [--quick]
"""

from __future__ import annotations

import ast
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


def one_round(workers: int) -> tuple[RunInfo, RunInfo, RunInfo, str]:
    with scratch("incremental") as parent:
        target = copy_sample_agent(parent)
        args = ("--operators", agentruns.operators())
        first = measured_run(target, workers, *args)
        same = measured_run(target, workers, *args)
        mutant = next(m for m in first.data.mutants if first.data.result_of(m).tests_run)
        name = edit_function(target, mutant)
        edited = measured_run(target, workers, *args)
        return first, same, edited, f"{mutant.file}:{name}"


def measure(repeat: int, workers: int, quick: bool) -> Section:
    section = Section(
        "incremental",
        f"6. incremental re-runs, sample agent, --operators {agentruns.operators()}, {workers} workers",
    )
    rounds = []
    for i in range(repeat):
        console.print(f"[dim]incremental: round {i + 1}/{repeat} (3 runs)[/]")
        rounds.append(one_round(workers))
    same = [s.wall / f.wall for f, s, _, _ in rounds]
    edited = [e.wall / f.wall for f, _, e, _ in rounds]
    section.figures += [
        Figure("no-change re-run ÷ first run", same, "%", "< 10 %", check(median(same), at_most=0.1)),
        Figure(
            "one-function-edit re-run ÷ first run", edited, "%", "≤ 10 %", check(median(edited), at_most=0.1)
        ),
        Figure("first run wall", [f.wall for f, _, _, _ in rounds], "s"),
        Figure("no-change re-run wall", [s.wall for _, s, _, _ in rounds], "s"),
        Figure("edited re-run wall", [e.wall for _, _, e, _ in rounds], "s"),
    ]
    rows = []
    for i, (f, s, e, where) in enumerate(rounds, 1):
        rows.append(
            [
                str(i),
                where,
                fmt(f.wall, "s"),
                f"{s.ran} run / {s.reused} reused",
                fmt(s.wall, "s"),
                f"{e.ran} run / {e.reused} reused",
                fmt(e.wall, "s"),
            ]
        )
    section.add_table(
        "rounds",
        ["round", "edited function", "first", "no change: mutants", "wall", "after edit: mutants", "wall"],
        rows,
    )
    section.notes.append(
        "The edit adds `_bench_edit = None` as the first statement of the function holding the "
        "first mutant that ran (an edit inside a function body: the file's import-time lines do not "
        "change). Both ratios are wall ÷ wall of runs on the same copy, one right after the other."
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
