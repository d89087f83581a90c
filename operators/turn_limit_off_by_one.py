"""turn-limit-off-by-one: the agent's turn (step) limit is shifted by one.

An agent loop bounds how many model calls one task may take: ``max_turns=10`` is a cost and
safety contract (a model stuck asking for tools must be stopped). One ``<`` instead of ``<=``
gives it an eleventh paid turn, or cuts off the tenth turn that would have answered. A suite
whose scripted model answers in two turns passes either way; only a test that keeps the model
asking for tools and counts the requests (or answers exactly on the last allowed turn) decides.

The bound is the anatomy's turn-bound role (:mod:`mutagent.anatomy.turns.bound`): ``range(max_turns)``,
a counter compared with a limit in the ``while`` test, in an ``if`` that leaves the loop, or in
a predicate such as ``_should_halt()``. Retry attempts, pages, tokens and plain list loops are
not turns. This module only rewrites the role's sites and says what the change does.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from mutagent.anatomy.turns.bound import TURN_BOUND
from mutagent.anatomy.turns.loops import TurnBound
from mutagent.mutation.context import SourceContext
from mutagent.mutation.operator import Example, Mutation, Operator
from mutagent.mutation.rewrite import plus_one

_SHIFTED: dict[type, type] = {
    cst.LessThan: cst.LessThanEqual,
    cst.LessThanEqual: cst.LessThan,
    cst.GreaterThan: cst.GreaterThanEqual,
    cst.GreaterThanEqual: cst.GreaterThan,
}
_SYMBOL = {cst.LessThan: "<", cst.LessThanEqual: "<=", cst.GreaterThan: ">", cst.GreaterThanEqual: ">="}
_STRICT = (cst.LessThan, cst.GreaterThan)


def one_more_turn(bound: TurnBound) -> str:
    if bound.raises:
        return f"one extra turn allowed before {bound.raises}"
    return "the agent gets one extra turn"


def one_turn_fewer(bound: TurnBound) -> str:
    if bound.raises:
        return f"the loop stops one turn early ({bound.raises} one turn sooner)"
    return "the loop stops one turn early"


class TurnLimitOffByOne(Operator):
    name = "turn-limit-off-by-one"
    description = "The agent's turn limit is shifted by one: one extra turn, or one turn fewer."
    roles = ("turn-bound",)
    failure = (
        "The agent takes one model turn more than its limit allows (an extra paid call from a model "
        "stuck asking for tools) or stops one turn before the limit, failing a task it could finish."
    )
    hint = (
        "Script the fake model to ask for a tool on every turn and assert the exact number of requests "
        "before the turn-limit error; also let it answer exactly on the last allowed turn."
    )
    examples = (
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
                "        while not done and self.steps_taken < self.step_budget:\n"
                "            reply = self.client.messages.create(model='m', messages=messages)\n"
                "            self.steps_taken += 1\n"
                "            done = reply.stop_reason != 'tool_use'\n"
            ),
            note="step budget in the while test (anthropic SDK, sync): the loop stops one turn early",
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
                "        return self._rounds > self._round_cap\n"
            ),
            note="a halt predicate of the same class: one extra round",
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
                "        if turn >= max_turns:\n"
                "            raise TurnLimitExceeded(f'more than {max_turns} turns')\n"
                "        reply = await client.chat.completions.create(model='m', messages=messages)\n"
                "        if not reply.choices[0].message.tool_calls:\n"
                "            return reply\n"
            ),
            note="async openai loop raising once over the limit: it raises one turn early",
        ),
        Example(
            before=(
                "import httpx\n\n"
                "def converse(http, messages, max_turns=8):\n"
                "    for turn in range(max_turns):\n"
                "        reply = http.post('/v1/messages', json={'messages': messages}).json()\n"
                "        if reply['stop_reason'] != 'tool_use':\n"
                "            return reply\n"
                "        messages.append(run_tools(reply))\n"
                "    raise StepLimitError('no final answer')\n"
            ),
            after=(
                "import httpx\n\n"
                "def converse(http, messages, max_turns=8):\n"
                "    for turn in range(max_turns + 1):\n"
                "        reply = http.post('/v1/messages', json={'messages': messages}).json()\n"
                "        if reply['stop_reason'] != 'tool_use':\n"
                "            return reply\n"
                "        messages.append(run_tools(reply))\n"
                "    raise StepLimitError('no final answer')\n"
            ),
            note="raw HTTP to a model endpoint, bounded by range: one extra turn before StepLimitError",
        ),
        Example(
            before=(
                "def generate(client, contents, config):\n"
                "    remaining_calls = get_max_remote_calls(config)\n"
                "    while remaining_calls > 0:\n"
                "        response = client.chat.completions.create(model='m', messages=contents)\n"
                "        remaining_calls -= 1\n"
                "        if remaining_calls == 0:\n"
                "            break\n"
            ),
            after=(
                "def generate(client, contents, config):\n"
                "    remaining_calls = get_max_remote_calls(config)\n"
                "    while remaining_calls > 0:\n"
                "        response = client.chat.completions.create(model='m', messages=contents)\n"
                "        remaining_calls -= 1\n"
                "        if remaining_calls == 1:\n"
                "            break\n"
            ),
            note="a countdown of model calls: reached one pass sooner, the loop stops one turn early",
        ),
        Example(
            before=(
                "class Coder:\n"
                "    def run_one(self, message):\n"
                "        while message:\n"
                "            reply = self.client.chat.completions.create(model='m', messages=[message])\n"
                "            message = self.reflect(reply)\n"
                "            if self.num_reflections >= self.max_reflections:\n"
                "                return\n"
                "            self.num_reflections += 1\n"
            ),
            after=(
                "class Coder:\n"
                "    def run_one(self, message):\n"
                "        while message:\n"
                "            reply = self.client.chat.completions.create(model='m', messages=[message])\n"
                "            message = self.reflect(reply)\n"
                "            if self.num_reflections > self.max_reflections:\n"
                "                return\n"
                "            self.num_reflections += 1\n"
            ),
            note="a counter stepped on every pass of a model loop against a limit-named value",
        ),
        Example(
            before=(
                "class Coder:\n"
                "    def run_one(self, message):\n"
                "        while message:\n"
                "            try:\n"
                "                reply = self.client.chat.completions.create(model='m', messages=[message])\n"
                "            except ValueError:\n"
                "                self.num_errors += 1\n"
                "                if self.num_errors >= self.max_errors:\n"
                "                    return\n"
                "            message = self.reflect(reply)\n"
            ),
            note="a failure counter stepped only in an except is no turn count",
        ),
        Example(
            before=(
                "import anthropic\n\n"
                "def create(client, policy, **kw):\n"
                "    attempt = 0\n"
                "    while True:\n"
                "        attempt += 1\n"
                "        try:\n"
                "            return client.messages.create(**kw)\n"
                "        except anthropic.APIConnectionError:\n"
                "            if attempt >= policy.max_attempts:\n"
                "                raise\n"
            ),
            note="a retry-attempt bound is retry-bound-off-by-one's, not a turn limit",
        ),
        Example(
            before=(
                "def list_all(client, max_pages=5):\n"
                "    page, items = 1, []\n"
                "    while page <= max_pages:\n"
                "        batch = client.models.list(page=page)\n"
                "        items += batch\n"
                "        page += 1\n"
                "    return items\n"
            ),
            note="pagination",
        ),
        Example(
            before=(
                "def converse(client, messages, max_tokens_total=10_000):\n"
                "    used = 0\n"
                "    for step in plan.steps:\n"
                "        reply = client.messages.create(model='m', messages=messages)\n"
                "        used += reply.usage.output_tokens\n"
                "        if used > max_tokens_total:\n"
                "            raise BudgetExceeded(used)\n"
            ),
            note="token accounting, and a plain loop over a list of steps",
        ),
        Example(
            before=(
                "class UsageLimits:\n"
                "    def check_before_request(self, usage):\n"
                "        request_limit = self.request_limit\n"
                "        if request_limit is not None and usage.requests >= request_limit:\n"
                "            raise UsageLimitExceeded(f'would exceed request_limit={request_limit}')\n"
            ),
            after=(
                "class UsageLimits:\n"
                "    def check_before_request(self, usage):\n"
                "        request_limit = self.request_limit\n"
                "        if request_limit is not None and usage.requests > request_limit:\n"
                "            raise UsageLimitExceeded(f'would exceed request_limit={request_limit}')\n"
            ),
            note="a model-request budget checked where the loop is out of sight: one extra request",
        ),
        Example(
            before=(
                "class RateLimiter:\n"
                "    def check(self):\n"
                "        if self.requests >= self.max_requests_per_minute:\n"
                "            raise RateLimitExceeded('slow down')\n"
                "        if self.tool_calls > self.tool_calls_limit:\n"
                "            raise UsageLimitExceeded('too many tool calls')\n"
            ),
            note="a rate limiter's request count, and a tool-call budget: neither is the turn limit",
        ),
    )

    def find(self, ctx: SourceContext) -> Iterator[Mutation]:
        for site in TURN_BOUND.sites(ctx):
            bound = site.detail
            if bound.kind == "range":
                args = bound.node.args  # type: ignore[attr-defined]
                if args:
                    limit = args[min(1, len(args) - 1)].value
                    yield Mutation(
                        limit, plus_one(limit), f"turn loop runs one more turn: {one_more_turn(bound)}"
                    )
                continue
            comparison: cst.Comparison = bound.node  # type: ignore[assignment]
            targets = list(comparison.comparisons)
            target = targets[bound.index]
            operator = target.operator
            new_type = _SHIFTED.get(type(operator))
            if new_type is not None:
                new_operator = new_type(
                    whitespace_before=operator.whitespace_before, whitespace_after=operator.whitespace_after
                )
                # A comparison that ends the loop when it holds fires on one more value when it
                # becomes non-strict; one that lets the loop go on allows one more turn then.
                looser = new_type not in _STRICT
                extra = looser != (bound.sense == "stop")
                change = f"{_SYMBOL[type(operator)]} becomes {_SYMBOL[new_type]}"
                new_target = target.with_changes(operator=new_operator)
            elif (
                isinstance(operator, (cst.Equal, cst.NotEqual))
                and ctx.code(target.comparator).strip() == bound.limit
            ):
                # ``turn == max_turns`` (stop) or ``turn != max_turns`` (continue) reached one later;
                # a countdown (``remaining == 0``) reaches ``remaining == 1`` one pass sooner.
                extra = not bound.countdown
                change = "compared limit + 1"
                new_target = target.with_changes(comparator=plus_one(target.comparator))
            else:
                continue
            targets[bound.index] = new_target
            replacement = comparison.with_changes(comparisons=targets)
            effect = one_more_turn(bound) if extra else one_turn_fewer(bound)
            yield Mutation(comparison, replacement, f"turn limit shifted by one ({change}): {effect}")
