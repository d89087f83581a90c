"""The turn-bound role: what ends an agent's turn loop after N turns.

Sites come from :mod:`mutagent.anatomy.turns.loops`: every bound of every turn loop of the file
(``range(max_turns)`` as the loop's iterable, a turn counter compared with a turn limit in the
``while`` test, in an ``if`` that leaves the loop, or in a predicate or check of the file the
loop calls), then the bounds whose loop is out of sight (an ``if`` comparing a turn or
model-request counter with its limit that raises a limit error). Each node is one site, however
many loops share it. The site's ``detail`` is the :class:`~mutagent.anatomy.turns.loops.TurnBound`
(its kind, sense, counter, limit, the error it raises, which target of a chained comparison).

The evidence says which names, which place in the loop, which call path to the model and which
raise made the verdict, and what the recogniser looked for and did not find.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.agent_code import in_test
from mutagent.anatomy.callgraph import model_call_evidence
from mutagent.anatomy.evidence import Evidence, RoleExample, RoleRecogniser, Site, Source
from mutagent.anatomy.retry.loops import is_retry_loop
from mutagent.anatomy.syntax import identifiers_in, innermost_loop
from mutagent.anatomy.turns.loops import (
    TurnBound,
    TurnLoop,
    block_exit,
    counter_and_limit,
    loose_turn_bounds,
    raised_class,
    reached_defs,
    stateful_turn_bounds,
    test_leaves,
    turn_loops,
    turn_model_call,
    turn_pair,
)
from mutagent.anatomy.vocabulary import EXCEEDED_WORDS, REQUEST_WORDS, is_count_name, words
from mutagent.mutation.context import SourceContext

ROLE = "turn-bound"


def _model_source(text: str) -> Source:
    """Where the loop's model evidence comes from: a call path through the file's functions, an
    SDK or HTTP call recognised by name and endpoint, or a call named for a model."""
    if " -> " in text:
        return Source.CALL_GRAPH
    if text.startswith(("SDK call", "HTTP request")):
        return Source.SDK_TYPES
    return Source.NAMES


def _line(ctx: SourceContext, node: cst.CSTNode) -> int:
    return ctx.position(node).start.line


def _within(ctx: SourceContext, node: cst.CSTNode, outer: cst.CSTNode) -> bool:
    """``node`` is ``outer`` or lies inside it."""
    return node is outer or any(ancestor is outer for ancestor in ctx.ancestors(node))


def _loop_evidence(ctx: SourceContext, turn_loop: TurnLoop) -> list[Evidence]:
    """Why the loop around a bound is a turn loop: its turn names and its model calls."""
    line = _line(ctx, turn_loop.loop)
    *named, model = turn_loop.evidence
    found = [Evidence(Source.NAMES, f"the loop at line {line}: {text}") for text in named]
    found.append(Evidence(Source.STRUCTURE, f"the turn loop at line {line} is no retry loop"))
    found.append(Evidence(_model_source(model), f"the loop at line {line} talks to the model: {model}"))
    return found


def _placement(ctx: SourceContext, bound: TurnBound, turn_loop: TurnLoop) -> Evidence:
    """Where the bound sits in (or outside) its loop."""
    loop = turn_loop.loop
    if bound.kind == "range":
        return Evidence(Source.STRUCTURE, f"range(...) is the turn loop's iterable: {bound.limit} turns")
    if isinstance(loop, cst.While) and _within(ctx, bound.node, loop.test):
        return Evidence(Source.STRUCTURE, "compared in the turn loop's while test")
    function = ctx.enclosing_function(bound.node)
    if function is not None and function is not ctx.enclosing_function(loop):
        return Evidence(Source.CALL_GRAPH, f"compared in {function.name.value}(), which the turn loop calls")
    return Evidence(Source.STRUCTURE, "compared in an if of the turn loop whose body leaves it")


def _site(ctx: SourceContext, bound: TurnBound, turn_loop: TurnLoop | None) -> Site[TurnBound]:
    present: list[Evidence] = []
    missing: list[Evidence] = []
    if bound.kind == "comparison":
        what = "turn" if turn_loop is not None else "turn or model-request"
        present.append(
            Evidence(Source.NAMES, f"compares {what} counter {bound.counter} with limit {bound.limit}")
        )
    if turn_loop is not None:
        present.append(_placement(ctx, bound, turn_loop))
        present.extend(_loop_evidence(ctx, turn_loop))
    elif bound.state is not None:
        exit_ = f"raises {bound.raises}" if bound.raises else "returns"
        ended = f"an if that ends the run ({exit_}) once the limit is reached"
        present.append(Evidence(Source.STRUCTURE, ended))
        present.append(Evidence(Source.DATA_FLOW, bound.evidence[-1]))
        missing.append(
            Evidence(Source.CALL_GRAPH, "no loop in sight: the engine re-enters this step once per turn")
        )
    else:
        present.append(
            Evidence(Source.NAMES, f"an if that raises {bound.raises} (named for an exceeded limit)")
        )
        missing.append(
            Evidence(
                Source.CALL_GRAPH, "no turn loop of this file reaches it: the loop it bounds is elsewhere"
            )
        )
    if bound.raises and turn_loop is not None:
        present.append(Evidence(Source.STRUCTURE, f"raises {bound.raises} once the limit is reached"))
    elif turn_loop is not None:
        missing.append(Evidence(Source.STRUCTURE, "no limit error raised at the bound: the loop just ends"))
    return Site(ROLE, bound.kind, bound.node, bound, tuple(present), tuple(missing))


def turn_bound_sites(ctx: SourceContext) -> list[Site[TurnBound]]:
    """Every bound of every turn loop of the file, then the loose bounds, each node once (a
    predicate shared by two loops is one bound). Cached per file."""

    def compute() -> list[Site[TurnBound]]:
        seen: set[int] = set()
        found = []
        pairs = [(bound, loop) for loop in turn_loops(ctx) for bound in loop.bounds]
        pairs += [(bound, None) for bound in loose_turn_bounds(ctx)]
        pairs += [(bound, None) for bound in stateful_turn_bounds(ctx)]
        for bound, loop in pairs:
            if id(bound.node) not in seen:
                seen.add(id(bound.node))
                found.append(_site(ctx, bound, loop))
        return found

    return ctx.cached(("anatomy", "turn-bound-sites"), compute)


# -- explaining a node that is not a site ---------------------------------------------------------


def _names_evidence(ctx: SourceContext, comparison: cst.Comparison) -> tuple[list[Evidence], list[Evidence]]:
    """What the comparison's names say, through the same gates as ``turn_pair``."""
    names = identifiers_in(ctx, comparison)
    if turn_pair(ctx, comparison) is not None:
        counter, limit = counter_and_limit(ctx, comparison)
        return [Evidence(Source.NAMES, f"compares turn counter {counter} with limit {limit}")], []
    if turn_pair(ctx, comparison, set(), REQUEST_WORDS) is not None:
        counter, limit = counter_and_limit(ctx, comparison, REQUEST_WORDS)
        return [Evidence(Source.NAMES, f"compares model-request counter {counter} with limit {limit}")], []
    attempts = sorted({n for n in names if is_count_name(n)})
    if attempts:
        why = f"it counts attempts ({', '.join(attempts)}): a retry bound, not a turn bound"
    elif "None" in names:
        why = "it compares with None"
    elif ctx.descendants(comparison, m.SimpleString() | m.Float() | m.FormattedString()):
        why = "it compares with a string or a float"
    else:
        read = ", ".join(dict.fromkeys(n for n in names if n not in ("self", "cls"))) or "none"
        why = f"no turn counter compared with a turn limit (names: {read})"
    return [], [Evidence(Source.NAMES, why)]


def _loop_verdict(ctx: SourceContext, loop: cst.For | cst.While) -> tuple[list[Evidence], list[Evidence]]:
    """Why a loop around a candidate is or is not a turn loop."""
    line = _line(ctx, loop)
    turn_loop = next((t for t in turn_loops(ctx) if t.loop is loop), None)
    if turn_loop is not None:
        return [Evidence(Source.STRUCTURE, f"the loop at line {line} is a turn loop")], []
    if is_retry_loop(ctx, loop):
        return [], [
            Evidence(Source.STRUCTURE, f"the loop at line {line} is a retry loop (the retry family's)")
        ]
    model = model_call_evidence(ctx, loop.body, lambda call: turn_model_call(ctx, call))
    if model is None:
        return [], [
            Evidence(
                Source.CALL_GRAPH,
                f"the loop at line {line} talks to no model (no model call in it or in the functions "
                "of this file it calls)",
            )
        ]
    return [Evidence(_model_source(model), f"the loop at line {line} talks to the model: {model}")], [
        Evidence(Source.NAMES, f"the loop at line {line} neither names turns nor compares a turn counter")
    ]


def _decides(ctx: SourceContext, node: cst.CSTNode, loop: cst.For | cst.While) -> Evidence | None:
    """How ``node`` decides whether ``loop`` goes on (its while test, or an if that leaves it)."""
    if isinstance(loop, cst.While) and _within(ctx, node, loop.test):
        return Evidence(Source.STRUCTURE, f"in the while test of the loop at line {_line(ctx, loop)}")
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.If) and any(leaf is node for leaf, _ in test_leaves(ctx, ancestor.test)):
            exit_ = block_exit(ctx, ancestor.body)
            if exit_:
                return Evidence(Source.STRUCTURE, f"in an if whose body leaves the loop ({exit_})")
            return None
        if ancestor is loop:
            return None
    return None


def _loose_evidence(ctx: SourceContext, node: cst.CSTNode) -> tuple[list[Evidence], list[Evidence]]:
    """The loose-bound path: an if with ``node`` as a leaf of its test whose body raises a limit error."""
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.If) and any(leaf is node for leaf, _ in test_leaves(ctx, ancestor.test)):
            raises = raised_class(block_exit(ctx, ancestor.body))
            parts = set(words(raises or ""))
            if raises and parts & EXCEEDED_WORDS and "rate" not in parts:
                return [
                    Evidence(Source.NAMES, f"an if that raises {raises} (named for an exceeded limit)")
                ], []
            if raises and "rate" in parts:
                return [], [Evidence(Source.NAMES, f"the if raises {raises}: a rate limit, not a turn limit")]
            if raises:
                return [], [
                    Evidence(Source.NAMES, f"the if raises {raises}, not named for an exceeded limit")
                ]
            break
        if isinstance(ancestor, cst.BaseStatement):
            break
    return [], [Evidence(Source.STRUCTURE, "not in an if whose body raises a limit error")]


def _callers(ctx: SourceContext, function: cst.FunctionDef) -> list[cst.For | cst.While]:
    """Loops of the file whose running reaches ``function`` (two calls deep)."""
    loops = ctx.nodes(cst.For) + ctx.nodes(cst.While)
    return [loop for loop in loops if function in reached_defs(ctx, loop)]


class TurnBoundRole(RoleRecogniser):
    role = ROLE
    family = "turns"
    summary = (
        "What ends an agent's turn loop after N turns: range(max_turns) or a turn counter against its limit."
    )
    examples = (
        RoleExample(
            "async def run_agent(client, messages, max_turns=10):\n"
            "    turn = 0\n"
            "    while True:\n"
            "        turn += 1\n"
            "        if turn > max_turns:\n"
            "            raise TurnLimitExceeded(turn)\n"
            "        reply = await client.chat.completions.create(model='m', messages=messages)\n",
            site="turn > max_turns",
            note="an if of the loop that raises once the limit is passed",
        ),
        RoleExample(
            "class Agent:\n"
            "    def run(self, messages):\n"
            "        done = False\n"
            "        while not done and self.steps_taken <= self.step_budget:\n"
            "            reply = self.client.messages.create(model='m', messages=messages)\n"
            "            self.steps_taken += 1\n",
            site="self.steps_taken <= self.step_budget",
            note="a step budget in the while test",
        ),
        RoleExample(
            "class Runner:\n"
            "    def loop(self, messages):\n"
            "        while not self._should_halt():\n"
            "            self._step(messages)\n\n"
            "    def _step(self, messages):\n"
            "        self._rounds += 1\n"
            "        return self.llm.invoke(messages)\n\n"
            "    def _should_halt(self):\n"
            "        return self._rounds >= self._round_cap\n",
            site="self._rounds >= self._round_cap",
            note="a halt predicate the loop calls; the model is reached through _step()",
        ),
        RoleExample(
            "def converse(http, messages, max_turns=8):\n"
            "    for turn in range(max_turns):\n"
            "        reply = http.post('/v1/messages', json={'messages': messages}).json()\n"
            "        if reply['stop_reason'] != 'tool_use':\n"
            "            return reply\n",
            site="range(max_turns)",
            note="raw HTTP to a model endpoint, bounded by range",
        ),
        RoleExample(
            "class UsageLimits:\n"
            "    def check_before_request(self, usage):\n"
            "        if usage.requests >= self.request_limit:\n"
            "            raise UsageLimitExceeded('request_limit')\n",
            site="usage.requests >= self.request_limit",
            note="a model-request budget whose loop is out of sight",
        ),
        RoleExample(
            "class GroupChatManager:\n"
            "    async def apply_termination(self, delta):\n"
            "        self._current_turn += 1\n"
            "        if self._current_turn >= self._max_turns:\n"
            "            await self.signal_termination('max turns')\n"
            "            return True\n"
            "        return False\n",
            site="self._current_turn >= self._max_turns",
            note="a step the engine re-enters once per turn: the counter is state on self, no loop in sight",
        ),
        RoleExample(
            "class Agent:\n"
            "    @step\n"
            "    async def parse_output(self, ctx, ev):\n"
            "        max_iterations = await ctx.store.get('max_iterations')\n"
            "        num_iterations = await ctx.store.get('num_iterations', default=0)\n"
            "        num_iterations += 1\n"
            "        await ctx.store.set('num_iterations', num_iterations)\n"
            "        if num_iterations >= max_iterations:\n"
            "            raise WorkflowRuntimeError('Max iterations reached')\n",
            site="num_iterations >= max_iterations",
            note="a counter kept in a workflow's context store between re-entries of the step",
        ),
        RoleExample(
            "class MaxMessageTermination:\n"
            "    async def __call__(self, messages):\n"
            "        self._message_count += len(messages)\n"
            "        if self._message_count >= self._max_messages:\n"
            "            return StopMessage(content='Maximum number of messages reached')\n"
            "        return None\n",
            site="self._message_count >= self._max_messages",
            note="a termination condition called after each turn: state stepped per call, a stop signal",
        ),
        RoleExample(
            "class Cache:\n"
            "    def add(self, items):\n"
            "        self._size += len(items)\n"
            "        if self._size >= self._max_size:\n"
            "            return Evicted(self._evict())\n",
            note="a size bound whose branch returns no stop signal",
        ),
        RoleExample(
            "class Coder:\n"
            "    def run_one(self, message):\n"
            "        while message:\n"
            "            reply = self.client.chat.completions.create(model='m', messages=[message])\n"
            "            message = self.reflect(reply)\n"
            "            if not message:\n"
            "                break\n"
            "            if self.num_reflections >= self.max_reflections:\n"
            "                return\n"
            "            self.num_reflections += 1\n",
            site="self.num_reflections >= self.max_reflections",
            note="a counter stepped on every pass of a model loop, against a limit-named value",
        ),
        RoleExample(
            "def generate(client, contents, config):\n"
            "    remaining_calls = get_max_remote_calls(config)\n"
            "    while remaining_calls > 0:\n"
            "        response = client.chat.completions.create(model='m', messages=contents)\n"
            "        remaining_calls -= 1\n",
            site="remaining_calls > 0",
            note="a countdown started from a limit and stepped down on every pass",
        ),
        RoleExample(
            "import dspy\n\n"
            "class ReAct:\n"
            "    def __init__(self, signature):\n"
            "        self.react = dspy.Predict(signature)\n\n"
            "    def forward(self, max_iters=5, **inputs):\n"
            "        for idx in range(max_iters):\n"
            "            pred = self.react(**inputs)\n"
            "            if pred.next_tool_name == 'finish':\n"
            "                break\n",
            site="range(max_iters)",
            note="the model is reached through an LM program bound on self",
        ),
        RoleExample(
            "class Coder:\n"
            "    def run_one(self, message):\n"
            "        while message:\n"
            "            try:\n"
            "                reply = self.client.chat.completions.create(model='m', messages=[message])\n"
            "            except ValueError:\n"
            "                self.num_errors += 1\n"
            "                if self.num_errors >= self.max_errors:\n"
            "                    return\n"
            "            message = self.reflect(reply)\n",
            note="a counter stepped only when a call fails counts failures, not turns",
        ),
        RoleExample(
            "def stream(client, response, max_lines):\n"
            "    for line in response.iter_lines():\n"
            "        client.chat.completions.create(model='m', messages=[line])\n",
            note="iter_lines() is an iterator, not iterations: the singular iter names no turns",
        ),
        RoleExample(
            "import dspy\n\n"
            "class Program:\n"
            "    def __init__(self, signature):\n"
            "        self.react = dspy.Predict(signature)\n\n"
            "    def describe(self, max_iters=5):\n"
            "        for idx in range(max_iters):\n"
            "            self.log(self.react)\n",
            note="an LM program only handed to a logger is never called: no model in the loop",
        ),
        RoleExample(
            "class Files:\n"
            "    def upload_all(self, parts, max_steps=5):\n"
            "        for step in range(max_steps):\n"
            "            path = 'files/upload'\n"
            "            self._api_client.request('post', path, parts[step])\n",
            note="a client request to a path that names no model endpoint",
        ),
        RoleExample(
            "class Step:\n"
            "    def handle(self, ctx):\n"
            "        seen = 0\n"
            "        seen += 1\n"
            "        if seen >= self.max_turns:\n"
            "            return None\n",
            note="a local reset on every call: re-entering the step counts nothing",
        ),
        RoleExample(
            "class Session:\n"
            "    def warn(self):\n"
            "        self.steps += 1\n"
            "        if self.steps >= self.max_steps:\n"
            "            self.log.warning('many steps')\n",
            note="a turn count compared with its limit only to log: nothing ends",
        ),
        RoleExample(
            "def create(client, policy, **kw):\n"
            "    attempt = 0\n"
            "    while True:\n"
            "        attempt += 1\n"
            "        try:\n"
            "            return client.messages.create(**kw)\n"
            "        except TimeoutError:\n"
            "            if attempt >= policy.max_attempts:\n"
            "                raise\n",
            note="a retry loop's attempt bound",
        ),
        RoleExample(
            "def list_all(client, max_pages=5):\n"
            "    page = 1\n"
            "    while page <= max_pages:\n"
            "        client.models.list(page=page)\n"
            "        page += 1\n",
            note="pagination",
        ),
        RoleExample(
            "def train(model, data, max_steps):\n"
            "    for step in range(max_steps):\n"
            "        model.fit(data)\n",
            note="a training loop counts steps but never talks to a model API",
        ),
        RoleExample(
            "class RateLimiter:\n"
            "    def check(self):\n"
            "        if self.requests >= self.max_requests_per_minute:\n"
            "            raise RateLimitExceeded('slow down')\n",
            note="a rate limiter's request count is no turn limit",
        ),
    )

    def sites(self, ctx: SourceContext) -> list[Site[TurnBound]]:
        return turn_bound_sites(ctx)

    def considered(self, ctx: SourceContext) -> list[tuple[cst.CSTNode, str]]:
        """Every comparison outside tests, and every ``range(...)`` a ``for`` loop iterates."""
        found: list[tuple[cst.CSTNode, str]] = [
            (node, "comparison") for node in ctx.nodes(cst.Comparison) if not in_test(ctx, node)
        ]
        for loop in ctx.findall(m.For(iter=m.Call())):
            if "builtins.range" in ctx.qualified_names(loop.iter) and not in_test(ctx, loop):
                found.append((loop.iter, "range"))
        found.sort(key=lambda pair: (_line(ctx, pair[0]), ctx.position(pair[0]).start.column))
        return found

    def weigh(
        self, ctx: SourceContext, node: cst.CSTNode, kind: str
    ) -> tuple[list[Evidence], list[Evidence]]:
        present: list[Evidence] = []
        missing: list[Evidence] = []
        if kind == "range":
            loop = ctx.parent(node)
            verdict = _loop_verdict(ctx, loop)
            present += verdict[0]
            missing += verdict[1]
            if not verdict[1]:
                missing.append(
                    Evidence(Source.NAMES, "the loop header names no turns (for turn in range(...))")
                )
            return present, missing
        names = _names_evidence(ctx, node)
        present += names[0]
        missing += names[1]
        loop = innermost_loop(ctx, node)
        if loop is not None:
            decides = _decides(ctx, node, loop)
            if decides is not None:
                present.append(decides)
            else:
                missing.append(
                    Evidence(
                        Source.STRUCTURE, "it decides no loop (not in a while test nor an if that leaves one)"
                    )
                )
            verdict = _loop_verdict(ctx, loop)
            present += verdict[0]
            missing += verdict[1]
            return present, missing
        function = ctx.enclosing_function(node)
        callers = _callers(ctx, function) if function is not None else []
        if callers:
            present.append(
                Evidence(
                    Source.CALL_GRAPH,
                    f"{function.name.value}() is reached from the loop at line {_line(ctx, callers[0])}",
                )
            )
            verdict = _loop_verdict(ctx, callers[0])
            present += verdict[0]
            missing += verdict[1]
        else:
            where = f"{function.name.value}()" if function is not None else "module level"
            missing.append(Evidence(Source.CALL_GRAPH, f"no loop of this file reaches {where}"))
        loose = _loose_evidence(ctx, node)
        present += loose[0]
        missing += loose[1]
        return present, missing


TURN_BOUND = TurnBoundRole()
