"""The turn-counter role: the statement that advances the counter a turn bound reads.

A turn bound (:mod:`mutagent.anatomy.turns.bound`) compares a counter with a limit; the limit only
ends the run if something advances the counter once per turn. That step is found by data flow
from a recognised bound, never by its name alone:

* ``counter += 1`` (``-= 1`` for a countdown) of the bound's own counter: in the bound's function
  for a local counter, anywhere in the bound's class for state on ``self`` or on a state object
  (``self.state.n_steps += 1`` in ``_finalize()`` feeds ``while self.state.n_steps <= max_steps``);
* the write-back of a counter kept in a store between re-entries of a step
  (``await ctx.store.set("num_iterations", num_iterations)``): without it every re-entry reads the
  old count.

A ``range(...)`` bound has no counter of its own to advance, and a counter compared with no turn
limit (a request count kept for usage reports) is no site.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.agent_code import in_test
from mutagent.anatomy.evidence import Evidence, RoleExample, RoleRecogniser, Site, Source
from mutagent.anatomy.turns.bound import turn_bound_sites
from mutagent.anatomy.turns.loops import TurnBound
from mutagent.anatomy.vocabulary import STORE_CALLS
from mutagent.mutation.context import SourceContext

ROLE = "turn-counter"

_STEP = m.AugAssign(
    target=m.Name() | m.Attribute(), operator=m.AddAssign() | m.SubtractAssign(), value=m.Integer()
)

_ADD = m.AugAssign(target=m.Attribute(value=m.Name("self")), operator=m.AddAssign())


@dataclass(frozen=True)
class TurnCounter:
    """A step of a turn bound's counter. ``kind`` is ``"step"`` (``counter += 1``) or
    ``"store-write"`` (the counter written back to the store it is read from); ``bound`` is the
    bound whose counter it advances."""

    kind: str
    counter: str
    bound: TurnBound


def _code(ctx: SourceContext, node: cst.CSTNode) -> str:
    return " ".join(ctx.code(node).split())


def _scope(ctx: SourceContext, node: cst.CSTNode, attribute: bool) -> cst.CSTNode | None:
    """Where the counter lives: the class for state on an object, the function for a local."""
    function = ctx.enclosing_function(node)
    if not attribute:
        return function
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.ClassDef):
            return ancestor
    return ctx.module


def _counter_node(ctx: SourceContext, bound: TurnBound) -> cst.CSTNode | None:
    comparison: cst.Comparison = bound.node  # type: ignore[assignment]
    left = comparison.left if bound.index == 0 else comparison.comparisons[bound.index - 1].comparator
    right = comparison.comparisons[bound.index].comparator
    for side in (left, right):
        if isinstance(side, (cst.Name, cst.Attribute)) and _code(ctx, side) == bound.counter:
            return side
    return None


def _sites_of(ctx: SourceContext, bound: TurnBound, line: int) -> list[Site[TurnCounter]]:
    counter = _counter_node(ctx, bound)
    if counter is None:
        return []
    attribute = isinstance(counter, cst.Attribute)
    scope = _scope(ctx, bound.node, attribute)
    if scope is None:
        return []
    function = ctx.enclosing_function(bound.node)
    read = Evidence(Source.DATA_FLOW, f"{bound.counter} is the counter of the turn bound at line {line}")
    found: list[Site[TurnCounter]] = []
    # A re-entered step may add what arrived since its last call (``+= len(new_messages)``).
    pattern = _STEP if bound.state is None else _STEP | _ADD
    for step in ctx.descendants(scope, pattern):
        if _code(ctx, step.target) != bound.counter or in_test(ctx, step):
            continue
        if not m.matches(step, _STEP) and ctx.enclosing_function(step) is not function:
            continue
        if not attribute and ctx.enclosing_function(step) is not function:
            continue
        where = "state on an object, stepped in its class" if attribute else "a local stepped in its function"
        present = (read, Evidence(Source.STRUCTURE, f"{_code(ctx, step)}: {where}"))
        found.append(Site(ROLE, "step", step, TurnCounter("step", bound.counter, bound), present, ()))
    if attribute or function is None or bound.state is None:
        return found
    for statement in ctx.descendants(function.body, m.Expr(value=m.Call() | m.Await())):
        call = statement.value.expression if isinstance(statement.value, cst.Await) else statement.value
        if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute):
            continue
        if call.func.attr.value not in STORE_CALLS:
            continue
        if any(m.matches(arg.value, m.Name(bound.counter)) for arg in call.args):
            present = (
                read,
                Evidence(Source.DATA_FLOW, f"{_code(ctx, call)} keeps the count for the step's next entry"),
            )
            detail = TurnCounter("store-write", bound.counter, bound)
            found.append(Site(ROLE, "store-write", statement, detail, present, ()))
    return found


def turn_counter_sites(ctx: SourceContext) -> list[Site[TurnCounter]]:
    """The steps of every compared turn counter of the file, each node once. Cached per file."""

    def compute() -> list[Site[TurnCounter]]:
        seen: set[int] = set()
        found = []
        for site in turn_bound_sites(ctx):
            if site.detail.kind != "comparison":
                continue
            for counter in _sites_of(ctx, site.detail, ctx.position(site.node).start.line):
                if id(counter.node) not in seen:
                    seen.add(id(counter.node))
                    found.append(counter)
        found.sort(key=lambda s: (ctx.position(s.node).start.line, ctx.position(s.node).start.column))
        return found

    return ctx.cached(("anatomy", "turn-counter-sites"), compute)


class TurnCounterRole(RoleRecogniser):
    role = ROLE
    family = "turns"
    summary = "What advances the counter a turn bound reads: counter += 1, or its write-back to a store."
    examples = (
        RoleExample(
            "class Agent:\n"
            "    async def run(self, max_steps):\n"
            "        while self.state.n_steps <= max_steps:\n"
            "            await self.step()\n\n"
            "    async def step(self):\n"
            "        await self.llm.ainvoke(self.messages)\n"
            "        self.state.n_steps += 1\n",
            site="self.state.n_steps += 1",
            note="a counter on a state object, advanced in another method of the class",
        ),
        RoleExample(
            "class Agent:\n"
            "    @step\n"
            "    async def parse_agent_output(self, ctx, ev):\n"
            "        max_iterations = await ctx.store.get('max_iterations')\n"
            "        num_iterations = await ctx.store.get('num_iterations', default=0)\n"
            "        num_iterations += 1\n"
            "        await ctx.store.set('num_iterations', num_iterations)\n"
            "        if num_iterations >= max_iterations:\n"
            "            raise WorkflowRuntimeError('Max iterations reached')\n",
            site="await ctx.store.set('num_iterations', num_iterations)",
            note="the count written back to the workflow's context store for the step's next entry",
        ),
        RoleExample(
            "async def run(client, messages, run_ctx):\n"
            "    while True:\n"
            "        reply = await client.chat.completions.create(model='m', messages=messages)\n"
            "        run_ctx.request_count += 1\n"
            "        if not reply.choices[0].message.tool_calls:\n"
            "            return reply\n",
            note="a request count kept for usage reports, compared with no limit",
        ),
        RoleExample(
            "class Step:\n"
            "    def handle(self, ctx):\n"
            "        seen = 0\n"
            "        seen += 1\n"
            "        if seen >= self.max_turns:\n"
            "            return None\n",
            note="a local reset on every call: it counts nothing across turns",
        ),
    )

    def sites(self, ctx: SourceContext) -> list[Site[TurnCounter]]:
        return turn_counter_sites(ctx)

    def considered(self, ctx: SourceContext) -> list[tuple[cst.CSTNode, str]]:
        """Every ``+= n``/``-= n`` step, and every statement that is a call to a store verb."""
        found: list[tuple[cst.CSTNode, str]] = [
            (node, "step") for node in ctx.findall(_STEP | _ADD) if not in_test(ctx, node)
        ]
        found += [(site.node, site.kind) for site in self.sites(ctx) if site.kind == "store-write"]
        found.sort(key=lambda pair: (ctx.position(pair[0]).start.line, ctx.position(pair[0]).start.column))
        return found

    def weigh(
        self, ctx: SourceContext, node: cst.CSTNode, kind: str
    ) -> tuple[list[Evidence], list[Evidence]]:
        target = _code(ctx, node.target) if isinstance(node, cst.AugAssign) else _code(ctx, node)
        return [], [
            Evidence(
                Source.DATA_FLOW,
                f"{target} is read by no turn bound of this file (no turn limit compared with it)",
            )
        ]


TURN_COUNTER = TurnCounterRole()
