"""unbounded-turns: the agent's turn (step) limit never ends the loop.

The turn limit is what stops a model that keeps asking for tools (a tool that always fails, two
tools that call for each other, a prompt injection asking for "one more search"). Without it the
agent loops until the process is killed, paying for every turn, and the user never gets the
"too many turns" error that says what went wrong. A test suite whose scripted model answers
after a few turns never notices the limit is gone.

The bound is the anatomy's turn-bound role (:mod:`mutagent.anatomy.turns.bound`), as for
turn-limit-off-by-one; retry loops are unbounded-retry's. This module only rewrites the role's
sites and says what the change does.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from mutagent.anatomy.turns.bound import TURN_BOUND
from mutagent.anatomy.turns.counter import TURN_COUNTER
from mutagent.anatomy.turns.loops import sibling_bound
from mutagent.mutation.context import SourceContext
from mutagent.mutation.operator import Example, Mutation, Operator


def _endless(ctx: SourceContext, iterable: cst.Call) -> cst.BaseExpression:
    """An endless iterator stuck at the first value the ``range(...)`` would produce (builtins only)."""
    first: cst.BaseExpression = cst.Integer("0")
    if len(iterable.args) > 1:
        first = iterable.args[0].value
    return cst.parse_expression(f"iter(lambda: {cst.Module([]).code_for_node(first)}, None)")


class UnboundedTurns(Operator):
    name = "unbounded-turns"
    description = "The agent's turn limit never ends the loop: it runs until the model stops asking."
    roles = ("turn-bound", "turn-counter")
    failure = (
        "A model that keeps asking for tools keeps the agent looping forever: no turn-limit error, "
        "a run that hangs and pays for every turn."
    )
    hint = (
        "Script the fake model to ask for a tool on every turn and assert the agent stops with its "
        "turn-limit error after the configured number of requests (a hang is reported as Timeout)."
    )
    examples = (
        Example(
            before=(
                "def converse(client, messages, max_turns=8):\n"
                "    for turn in range(max_turns):\n"
                "        reply = client.messages.create(model='m', messages=messages)\n"
                "        if reply.stop_reason != 'tool_use':\n"
                "            return reply\n"
                "    raise StepLimitError('no final answer')\n"
            ),
            after=(
                "def converse(client, messages, max_turns=8):\n"
                "    for turn in iter(lambda: 0, None):\n"
                "        reply = client.messages.create(model='m', messages=messages)\n"
                "        if reply.stop_reason != 'tool_use':\n"
                "            return reply\n"
                "    raise StepLimitError('no final answer')\n"
            ),
            note="sync anthropic loop bounded by range",
        ),
        Example(
            before=(
                "async def run_agent(client, messages, max_turns=10):\n"
                "    turn = 0\n"
                "    while True:\n"
                "        turn += 1\n"
                "        if turn > max_turns:\n"
                "            raise TurnLimitExceeded(f'more than {max_turns} turns')\n"
                "        reply = await client.chat.completions.create(model='m', messages=messages)\n"
                "        if not reply.choices[0].message.tool_calls:\n"
                "            return reply\n"
            ),
            after=(
                "async def run_agent(client, messages, max_turns=10):\n"
                "    turn = 0\n"
                "    while True:\n"
                "        turn += 1\n"
                "        if False:\n"
                "            raise TurnLimitExceeded(f'more than {max_turns} turns')\n"
                "        reply = await client.chat.completions.create(model='m', messages=messages)\n"
                "        if not reply.choices[0].message.tool_calls:\n"
                "            return reply\n"
            ),
            note="async openai loop: the limit check never fires",
        ),
        Example(
            before=(
                "class Agent:\n"
                "    def run(self, messages):\n"
                "        done = False\n"
                "        while not done and self.steps_taken <= self.step_budget:\n"
                "            reply = self.client.messages.create(model='m', messages=messages)\n"
                "            self.steps_taken += 1\n"
                "            done = reply.stop_reason != 'tool_use'\n"
            ),
            after=(
                "class Agent:\n"
                "    def run(self, messages):\n"
                "        done = False\n"
                "        while not done and True:\n"
                "            reply = self.client.messages.create(model='m', messages=messages)\n"
                "            self.steps_taken += 1\n"
                "            done = reply.stop_reason != 'tool_use'\n"
            ),
            note="step budget in the while test",
        ),
        Example(
            before=(
                "class Runner:\n"
                "    def loop(self, messages):\n"
                "        while not self._should_halt():\n"
                "            self._step(messages)\n\n"
                "    def _step(self, messages):\n"
                "        self._rounds += 1\n"
                "        return self.llm.invoke(messages)\n\n"
                "    def _should_halt(self):\n"
                "        return self._rounds >= self._round_cap\n"
            ),
            after=(
                "class Runner:\n"
                "    def loop(self, messages):\n"
                "        while not self._should_halt():\n"
                "            self._step(messages)\n\n"
                "    def _step(self, messages):\n"
                "        self._rounds += 1\n"
                "        return self.llm.invoke(messages)\n\n"
                "    def _should_halt(self):\n"
                "        return False\n"
            ),
            note="a halt predicate of the same class",
        ),
        Example(
            before=(
                "class GroupChatManager:\n"
                "    async def apply_termination(self, delta):\n"
                "        self._current_turn += 1\n"
                "        if self._current_turn >= self._max_turns:\n"
                "            return True\n"
                "        return False\n"
            ),
            after=(
                "class GroupChatManager:\n"
                "    async def apply_termination(self, delta):\n"
                "        self._current_turn += 0\n"
                "        if self._current_turn >= self._max_turns:\n"
                "            return True\n"
                "        return False\n"
            ),
            note="the turn counter of a re-entered step no longer advances",
        ),
        Example(
            before=(
                "class Agent:\n"
                "    async def parse_output(self, ctx, ev):\n"
                "        max_iterations = await ctx.store.get('max_iterations')\n"
                "        num_iterations = await ctx.store.get('num_iterations', default=0)\n"
                "        num_iterations += 1\n"
                "        await ctx.store.set('num_iterations', num_iterations)\n"
                "        if num_iterations >= max_iterations:\n"
                "            raise WorkflowRuntimeError('Max iterations reached')\n"
            ),
            after=(
                "class Agent:\n"
                "    async def parse_output(self, ctx, ev):\n"
                "        max_iterations = await ctx.store.get('max_iterations')\n"
                "        num_iterations = await ctx.store.get('num_iterations', default=0)\n"
                "        num_iterations += 1\n"
                "        pass\n"
                "        if num_iterations >= max_iterations:\n"
                "            raise WorkflowRuntimeError('Max iterations reached')\n"
            ),
            note="the count is no longer written back to the context store: every re-entry reads the old one",
        ),
        Example(
            before=(
                "def generate(client, contents, config):\n"
                "    remaining_calls = get_max_remote_calls(config)\n"
                "    while remaining_calls > 0:\n"
                "        response = client.chat.completions.create(model='m', messages=contents)\n"
                "        remaining_calls -= 1\n"
            ),
            after=(
                "def generate(client, contents, config):\n"
                "    remaining_calls = get_max_remote_calls(config)\n"
                "    while remaining_calls > 0:\n"
                "        response = client.chat.completions.create(model='m', messages=contents)\n"
                "        remaining_calls -= 0\n"
            ),
            note="a countdown of model calls that no longer counts down",
        ),
        Example(
            before=(
                "async def run(client, messages, run_ctx):\n"
                "    while True:\n"
                "        reply = await client.chat.completions.create(model='m', messages=messages)\n"
                "        run_ctx.request_count += 1\n"
                "        if not reply.choices[0].message.tool_calls:\n"
                "            return reply\n"
            ),
            note="a request count kept for usage reports bounds nothing",
        ),
        Example(
            before=(
                "import time\n\n"
                "def call(client, max_retries=3, **kw):\n"
                "    for attempt in range(max_retries):\n"
                "        try:\n"
                "            return client.messages.create(**kw)\n"
                "        except TimeoutError:\n"
                "            time.sleep(2 ** attempt)\n"
            ),
            note="a retry loop is unbounded-retry's",
        ),
        Example(
            before=(
                "def summarise(client, documents):\n"
                "    for doc in documents:\n"
                "        client.messages.create(model='m', messages=[{'role': 'user', 'content': doc}])\n"
                "    for step in range(len(documents)):\n"
                "        print(step)\n"
            ),
            note="a plain list loop, and a counting loop that never talks to the model",
        ),
        Example(
            before=(
                "class BaseToolRunner:\n"
                "    def _should_stop(self):\n"
                "        if self._max_iterations is not None and self._iterations >= self._max_iterations:\n"
                "            return True\n"
                "        return False\n\n"
                "class ToolRunner(BaseToolRunner):\n"
                "    def _steps(self):\n"
                "        while not self._should_stop():\n"
                "            message = self._client.beta.messages.create(**self._params)\n"
                "            self._iterations += 1\n"
                "            yield message\n"
            ),
            after=(
                "class BaseToolRunner:\n"
                "    def _should_stop(self):\n"
                "        if self._max_iterations is not None and False:\n"
                "            return True\n"
                "        return False\n\n"
                "class ToolRunner(BaseToolRunner):\n"
                "    def _steps(self):\n"
                "        while not self._should_stop():\n"
                "            message = self._client.beta.messages.create(**self._params)\n"
                "            self._iterations += 1\n"
                "            yield message\n"
            ),
            note="the stop predicate lives in a base class of the same file",
        ),
    )

    def find(self, ctx: SourceContext) -> Iterator[Mutation]:
        for site in TURN_BOUND.sites(ctx):
            bound = site.detail
            never = f": {bound.raises} is never raised" if bound.raises else ""
            # The endless range freezes its variable at the first value, so a check on that
            # variable no longer ends the loop either: only a comparison has a sibling that does.
            other = sibling_bound(ctx, bound) if bound.kind != "range" else None
            same = None
            if other is not None:
                same = (
                    f"{ctx.code(other.node).strip()} bounds the same counter {bound.counter} and still "
                    "ends the loop"
                )
            if bound.kind == "range":
                endless = _endless(ctx, bound.node)  # type: ignore[arg-type]
                yield Mutation(bound.node, endless, f"turn loop never runs out of turns{never}", same)
            elif bound.sense == "stop":
                yield Mutation(bound.node, cst.Name("False"), f"turn limit check never fires{never}", same)
            else:
                description = f"turn limit always allows another turn{never}"
                yield Mutation(bound.node, cst.Name("True"), description, same)
        for site in TURN_COUNTER.sites(ctx):
            counter = site.detail
            limit = counter.bound.limit
            if site.kind == "step":
                frozen = site.node.with_changes(value=cst.Integer("0"))  # type: ignore[attr-defined]
                effect = (
                    "turns taken this way never use it up"
                    if counter.bound.countdown
                    else f"turns taken this way never count toward {limit}"
                )
                what = "counter no longer advances"
                if counter.bound.countdown:
                    what = "budget no longer counts down"
                yield Mutation(site.node, frozen, f"turn {what} here ({counter.counter}): {effect}")
            else:
                yield Mutation(
                    site.node,
                    cst.Pass(),
                    f"turn counter {counter.counter} no longer written back: every re-entry reads "
                    f"the old count and {limit} is never reached",
                )
