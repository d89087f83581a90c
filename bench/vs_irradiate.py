"""mutagent vs mutmut 3.8 vs irradiate 0.4.3, generic operators, cold, end to end and per mutant.

For each target and repetition, three fresh temporary copies in a row (so machine noise hits all
three alike): ``mutagent run COPY --operators generic --fast --workers N``, ``mutmut run
--max-children N`` and ``irradiate run ... --workers N`` (its own venv, pointed at this
interpreter with ``--python``). The tools' operators differ (mutmut and mutagent make the same
mutants in plain function bodies, irradiate makes its own), so milliseconds per mutant are
compared as well as walls, with the floor (``floor.py``) of mutagent's run beside each.

    python bench/vs_irradiate.py [--repeat 3] [--workers 2] [--targets generic,sample_agent] [--quick]
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from common import BenchError, Figure, Section, base_parser, console, fmt, median, print_section, scratch
from floor import FLOOR_NOTE, Floor, tests_floor
from irradiate_side import IrradiateRun, run_irradiate
from mutmut_side import MutmutRun
from storeinfo import RunInfo
from vs_mutmut import TARGETS, Target, run_pair

GOAL = "mutagent cheaper per mutant than irradiate"
IRRADIATE_BUDGET = 5  # irradiate is stopped after 5 × the slower of mutagent's and mutmut's wall + 60 s


@dataclass
class Triple:
    mutagent: RunInfo
    mutmut: MutmutRun
    irradiate: IrradiateRun | None
    irradiate_error: str = ""


def run_triple(target: Target, workers: int) -> Triple:
    """mutagent then mutmut (``vs_mutmut.run_pair``) then irradiate, each on its own fresh copy."""
    pair = run_pair(target, workers)
    try:
        with scratch(f"irradiate-{target.name}") as parent:
            copy = target.copy(parent)
            budget = IRRADIATE_BUDGET * max(pair.mutagent.wall, pair.mutmut.measurement.wall) + 60
            irradiate = run_irradiate(copy, target.mutmut_root(copy), workers, timeout=budget)
    except BenchError as exc:
        lines = str(exc).strip().splitlines()
        return Triple(pair.mutagent, pair.mutmut, None, " / ".join(lines[:1] + lines[-4:]))
    return Triple(pair.mutagent, pair.mutmut, irradiate)


def per_mutant(wall: float, mutants: int) -> float:
    return wall / mutants if mutants else float("nan")


def compare(name: str, triples: list[Triple], section: Section) -> None:
    floors: list[Floor] = [tests_floor(t.mutagent) for t in triples]
    ours = [per_mutant(t.mutagent.wall, t.mutagent.mutants) for t in triples]
    mutmut = [per_mutant(t.mutmut.measurement.wall, t.mutmut.mutants) for t in triples]
    section.figures += [
        Figure(
            f"{name}: mutmut ÷ mutagent, end to end",
            [t.mutmut.measurement.wall / t.mutagent.wall for t in triples],
            "x",
        ),
        Figure(
            f"{name}: mutmut ÷ mutagent, per mutant", [a / b for a, b in zip(mutmut, ours, strict=True)], "x"
        ),
    ]
    measured = [(t, f, o) for t, f, o in zip(triples, floors, ours, strict=True) if t.irradiate is not None]
    if measured:
        theirs = [per_mutant(t.irradiate.measurement.wall, t.irradiate.mutants) for t, _, _ in measured]
        per_ratio = [b / o for b, (_, _, o) in zip(theirs, measured, strict=True)]
        section.figures += [
            Figure(
                f"{name}: irradiate ÷ mutagent, end to end",
                [t.irradiate.measurement.wall / t.mutagent.wall for t, _, _ in measured],
                "x",
            ),
            Figure(
                f"{name}: irradiate ÷ mutagent, per mutant",
                per_ratio,
                "x",
                "> 1× (" + GOAL + ")",
                median(per_ratio) > 1.0 if per_ratio else None,
            ),
        ]
    rows = []
    for label, walls, counts, under in (
        ("mutagent", [t.mutagent.wall for t in triples], [t.mutagent.mutants for t in triples], floors),
        (
            "mutmut 3.8.1",
            [t.mutmut.measurement.wall for t in triples],
            [t.mutmut.mutants for t in triples],
            floors,
        ),
        (
            "irradiate 0.4.3",
            [t.irradiate.measurement.wall for t, _, _ in measured],
            [t.irradiate.mutants for t, _, _ in measured],
            [f for _, f, _ in measured],
        ),
    ):
        if not walls:
            rows.append([label, "not measured", "", "", "", ""])
            continue
        per = [per_mutant(w, c) for w, c in zip(walls, counts, strict=True)]
        over = [w / f.seconds for w, f in zip(walls, under, strict=True) if f.seconds > 0]
        rows.append(
            [
                label,
                str(counts[-1]),
                fmt(median(walls), "s"),
                fmt(median(per), "ms"),
                fmt(median(over), "x"),
                fmt(median([f.seconds for f in floors]), "s"),
            ]
        )
    floor_per = [
        f.seconds / t.mutagent.mutants for t, f in zip(triples, floors, strict=True) if t.mutagent.mutants
    ]
    section.add_table(
        f"{name}: end to end and per mutant (medians)",
        ["tool", "mutants (last run)", "wall", "wall per mutant", "wall ÷ floor", "floor"],
        rows,
    )
    section.figures.append(
        Figure(f"{name}: floor (tests only, mutagent's mutants)", [f.seconds for f in floors], "s")
    )
    section.figures.append(Figure(f"{name}: floor per mutagent mutant", floor_per, "ms"))
    statuses = sorted(
        set(triples[-1].mutagent.statuses)
        | set(triples[-1].mutmut.statuses)
        | (set(triples[-1].irradiate.statuses) if triples[-1].irradiate else set())
    )
    last = triples[-1]
    status_rows = [
        ["mutagent", *[str(last.mutagent.statuses[s]) for s in statuses]],
        ["mutmut", *[str(last.mutmut.statuses[s]) for s in statuses]],
    ]
    if last.irradiate:
        status_rows.append(["irradiate", *[str(last.irradiate.statuses[s]) for s in statuses]])
    section.add_table(f"{name}: verdicts (last run)", ["tool", *statuses], status_rows)
    errors = {t.irradiate_error for t in triples if t.irradiate_error}
    for error in sorted(errors):
        section.notes.append(f"{name}: irradiate could not run: {error}")
    section.notes.append(
        f"{name}: median of {len(triples)} triple(s) (mutagent, mutmut, irradiate in a row, each on a "
        "fresh copy). "
        "The floor is that of mutagent's mutants: irradiate's wall ÷ floor compares a different mutant set "
        "and is indicative only; per-mutant walls are the fair comparison across tools."
    )


def measure(
    repeat: int, workers: int, quick: bool, targets: list[str] | None = None, sample_agent_repeat: int = 1
) -> Section:
    section = Section(
        "irradiate",
        f"7. mutagent vs mutmut 3.8.1 vs irradiate 0.4.3, generic operators, cold, {workers} workers",
    )
    chosen = targets or (["generic"] if quick else ["generic", "sample_agent"])
    for name in chosen:
        runs = sample_agent_repeat if name == "sample_agent" else repeat
        triples: list[Triple] = []
        try:
            for i in range(runs):
                console.print(f"[dim]vs irradiate: {name} triple {i + 1}/{runs}[/]")
                triples.append(run_triple(TARGETS[name], workers))
        except BenchError as exc:
            lines = str(exc).strip().splitlines()
            section.notes.append(f"{name}: not measured: " + " / ".join(lines[:1] + lines[-4:]))
        if triples:
            compare(name, triples, section)
    if quick:
        section.notes.append(
            "--quick: the generic target only (the sample agent's generic run takes many minutes per tool)."
        )
    section.notes.append(
        "mutagent: --operators generic --fast; mutmut: run --max-children N; irradiate: run SOURCES "
        "--tests-dir TESTS --workers N --python (this interpreter), defaults otherwise (its own venv "
        "under the bench cache). "
        "Wall per mutant = end-to-end wall ÷ that tool's mutant count."
    )
    section.notes.append(FLOOR_NOTE)
    return section


def main(argv: list[str] | None = None) -> int:
    parser: argparse.ArgumentParser = base_parser(__doc__ or "")
    parser.add_argument("--targets", help="comma list of: " + ", ".join(TARGETS))
    parser.add_argument("--sample-agent-repeat", type=int, default=1, help="triples on the sample agent")
    args = parser.parse_args(argv)
    targets = args.targets.split(",") if args.targets else None
    print_section(
        measure(1 if args.quick else args.repeat, args.workers, args.quick, targets, args.sample_agent_repeat)
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
