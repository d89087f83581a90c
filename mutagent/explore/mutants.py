"""Mutants of their own for fault-handling code that no agent operator reaches.

Fault exploration finds, per fault, the lines that run only under it: that fault's handling code,
whatever it is called. An ``except`` handler or an ``if``/``else`` branch whose body is made of
such lines is a handling region; when no mutant of the agent operators touches it, its bugs would
go unjudged, so it gets a mutant of its own: the handler's body becomes ``raise`` (the fault is no
longer handled, it escapes), a branch's body becomes ``pass`` (the handling is skipped), described
by the fault (``the handling of a stream cut mid-text at loop.py:140-142 is skipped``). Nothing
here depends on how the code is spelt: the regions come from what the runs did.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst
import libcst.matchers as m

from mutagent.explore.results import Exploration
from mutagent.model import Mutant
from mutagent.mutation.context import SourceContext
from mutagent.mutation.operator import Mutation, Operator

OPERATOR = "skip-fault-handling"


def regions_by_file(exploration: Exploration) -> dict[str, list[tuple[str, set[int]]]]:
    """Per file, (fault label, the lines that run only under that fault), the faults in the order
    they were explored (a region several faults run is described by the first)."""
    found: dict[str, list[tuple[str, set[int]]]] = {}
    for report in exploration.by_fault():
        for file, lines in report.handling.items():
            found.setdefault(file, []).append((report.label, set(lines)))
    return found


class SkipFaultHandling(Operator):
    """Built per run from fault exploration; not in the operator registry (it needs a run)."""

    name = OPERATOR
    description = "The code that handles one fault (found by fault exploration) is skipped."
    failure = (
        "A fault the loop handles today is no longer handled: the handler re-raises, or the branch "
        "taken only under that fault does nothing. Exploration found this code; no other operator "
        "mutates it."
    )
    hint = "Script the fault the description names and assert what the loop does after it."

    def __init__(self, regions: dict[str, list[tuple[str, set[int]]]], taken: dict[str, set[int]]) -> None:
        self.regions = regions
        self.taken = taken

    def find(self, ctx: SourceContext) -> Iterator[Mutation]:
        wanted = self.regions.get(ctx.path, [])
        if not wanted:
            return
        chosen: list[tuple[int, int]] = []
        blocks = [
            node
            for node in ctx.findall(m.ExceptHandler() | m.If() | m.Else())
            if isinstance(getattr(node, "body", None), cst.IndentedBlock)
        ]
        for node in blocks:
            body: cst.IndentedBlock = node.body  # type: ignore[attr-defined]
            starts = [ctx.position(statement).start.line for statement in body.body]
            first, last = starts[0], ctx.position(body.body[-1]).end.line
            if any(a <= first and last <= b for a, b in chosen):
                continue  # inside a region already mutated
            whole = ctx.position(node)
            if set(range(whole.start.line, whole.end.line + 1)) & self.taken.get(ctx.path, set()):
                continue  # an agent operator's mutant reaches it (its header, its body)
            label = next((label for label, lines in wanted if set(starts) <= lines), None)
            if label is None:
                continue
            chosen.append((first, last))
            where = f"{ctx.path}:{first}" + (f"-{last}" if last > first else "")
            if isinstance(node, cst.ExceptHandler):
                new_body = cst.IndentedBlock(body=[cst.SimpleStatementLine(body=[cst.Raise()])])
                yield Mutation(
                    node,
                    node.with_changes(body=new_body),
                    f"the handling of {label} at {where} is skipped: the error is raised again",
                )
            else:
                new_body = cst.IndentedBlock(body=[cst.SimpleStatementLine(body=[cst.Pass()])])
                yield Mutation(
                    node, node.with_changes(body=new_body), f"the handling of {label} at {where} is skipped"
                )


def fault_mutants(exploration: Exploration, sources: dict[str, str], existing: list[Mutant]) -> list[Mutant]:
    """The mutants of the handling regions no agent mutant of ``existing`` touches."""
    from mutagent.mutation.generate import generate_for_source

    regions = regions_by_file(exploration)
    taken: dict[str, set[int]] = {}
    for mutant in existing:
        if mutant.operator != OPERATOR:
            lines = range(mutant.location.start_line, mutant.location.end_line + 1)
            taken.setdefault(mutant.file, set()).update(lines)
    operator = SkipFaultHandling(regions, taken)
    found: list[Mutant] = []
    for file in sorted(regions):
        if file in sources:
            found += generate_for_source(sources[file], file, [operator])
    return found
