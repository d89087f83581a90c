"""Shared reading of turn bounds for the turn operators: the anatomy's turn loops, each bound
once, and the sentence that says what a changed bound does in that code."""

from __future__ import annotations

from collections.abc import Iterator

from mutagent.anatomy.turns import TurnBound, loose_turn_bounds, turn_loops
from mutagent.mutation.context import SourceContext


def turn_bounds(ctx: SourceContext) -> Iterator[TurnBound]:
    """Every bound of every turn loop of the file, each node once (a predicate shared by two
    loops is one bound)."""
    seen: set[int] = set()
    bounds = [bound for loop in turn_loops(ctx) for bound in loop.bounds] + loose_turn_bounds(ctx)
    for bound in bounds:
        if id(bound.node) not in seen:
            seen.add(id(bound.node))
            yield bound


def one_more_turn(bound: TurnBound) -> str:
    if bound.raises:
        return f"one extra turn allowed before {bound.raises}"
    return "the agent gets one extra turn"


def one_turn_fewer(bound: TurnBound) -> str:
    if bound.raises:
        return f"the loop stops one turn early ({bound.raises} one turn sooner)"
    return "the loop stops one turn early"
