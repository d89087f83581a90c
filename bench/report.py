"""Writing ``bench/RESULTS.md``: the machine, the headline figures against their targets, then
every section's figures, tables and notes."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from common import Section
from timeouts import timeout_doc

TARGETS_DOC = (
    "Targets: ≥ 3× mutmut end to end (aim 5×); ≥ 20× the naive approach; full kill matrix ≤ 1.5× `--fast`; "
    "efficiency ≥ 0.8 at 2 workers; a no-change re-run < 10 % of a full run; a one-function edit "
    "re-run ≤ 10 %; peak memory < 500 MB; time to the first mutant ≤ 1.1 × (one collection + one "
    "suite run); median harness overhead ≤ 10 ms per mutant; mutagent cheaper per mutant than irradiate."
)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(_cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return lines


def _verdict(passed: bool | None) -> str:
    return {True: "met", False: "**missed**", None: ""}[passed]


def _conditions(section: Section) -> str:
    """The measured line's warnings, repeated in the headline so a noisy figure is never read alone."""
    marks = [
        word
        for word, found in (("--quick", "--quick"), ("under load", "measured under load"))
        if found in section.measured
    ]
    return ", ".join(marks) or section.measured.split(",")[0]


def render(sections: list[Section], machine: dict[str, str], args: argparse.Namespace, elapsed: float) -> str:
    command = (
        "python bench/run.py" + (" --quick" if args.quick else "") + f" --repeat {args.repeat} "
        f"--workers {args.workers}" + (f" --only {args.only}" if args.only else "")
    )
    out = [
        "# mutagent benchmark results",
        "",
        f"Written by `{command}` in {elapsed / 60:.1f} min. Each figure is the median of its runs "
        "(range shown when there are several). Timings are wall-clock on a shared machine: compare "
        "ratios measured in the same run, not absolute seconds across runs."
        + (
            " With `--only`, the other sections are kept from the previous run, each with its own "
            "measured line (date, load, CPU when recorded); the machine table is this run's."
            if args.only
            else ""
        ),
        "",
        "## Machine",
        "",
        *_table(["", ""], [[key, value] for key, value in machine.items()]),
        "",
        "## Headline",
        "",
        TARGETS_DOC,
        "",
    ]
    headline = [
        [s.title.split(",")[0], f.name, f.shown(), f.spread(), f.target, _verdict(f.passed), _conditions(s)]
        for s in sections
        for f in s.figures
        if f.target
    ]
    out += (
        _table(["benchmark", "figure", "median", "range", "target", "verdict", "measured"], headline)
        if headline
        else ["(no figure with a target was measured)"]
    )
    missing = [s for s in sections if s.error]
    if missing:
        out += ["", "Not measured: " + "; ".join(f"{s.key} ({s.error.splitlines()[0]})" for s in missing)]
    for section in sections:
        out += ["", f"## {section.title}", ""]
        if section.measured:
            out += [f"_Measured {section.measured}._", ""]
        if section.error:
            out += ["Not measured:", "", "```", section.error, "```"]
            continue
        if section.figures:
            out += _table(
                ["figure", "median", "range", "target", ""],
                [[f.name, f.shown(), f.spread(), f.target, _verdict(f.passed)] for f in section.figures],
            )
        for title, header, rows in section.tables:
            out += ["", f"{title}:", "", *_table(header, rows)]
        if section.notes:
            out += [""] + [f"- {note}" for note in dict.fromkeys(section.notes)]
    out += ["", *timeout_doc()]
    return "\n".join(out) + "\n"


CORPUS_HEADING = "## Real-code corpus"


def _corpus_section(path: Path) -> str:
    """The corpus section of the previous ``path``: written from ``bench/corpus/score.py``, not by
    ``run.py``, so a re-run keeps it instead of dropping it."""
    previous = path.read_text(encoding="utf-8") if path.exists() else ""
    start = previous.find(f"\n{CORPUS_HEADING}")
    return previous[start:] if start >= 0 else ""


def write_results(
    path: Path, sections: list[Section], machine: dict[str, str], args: argparse.Namespace, elapsed: float
) -> None:
    """``path`` (Markdown) and its JSON twin (``--only`` merges into it later)."""
    kept = _corpus_section(path)
    path.write_text(render(sections, machine, args, elapsed) + kept, encoding="utf-8")
    twin = path.with_suffix(".json")
    twin.write_text(
        json.dumps([s.to_json() for s in sections], indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
