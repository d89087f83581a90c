"""ignore-idempotency-key: a retried side-effecting tool call is no longer recognised as a repeat.

Agent loops retry whole turns, and models repeat themselves; a side-effecting tool (create a
ticket, charge a card, send a message) must therefore run once per logical call. That takes an
idempotency key derived from canonical arguments, a lookup of already-executed keys, and the
key passed on to the downstream service. Lose any of them and a retry executes twice -- which
no test notices unless it replays a call and counts the side effects.

Recognised:

* canonical JSON for a key: ``json.dumps(..., sort_keys=True, ...)`` in a function or assignment
  named for idempotency/dedup (``make_idempotency_key``), or named for a key and hashed in
  tool-handling code (``call_key``), loses ``sort_keys``, so the same arguments in another key
  order get another key;
* the executed-calls lookup in tool-handling code: ``if key in self.completed: return ...``,
  ``cached = self.results.get(key)`` then ``if cached is not None``, ``if not store.exists(key):
  run()`` -- the guard always takes the executing side;
* the key sent downstream: an ``Idempotency-Key`` header in a dict literal or a
  ``headers["Idempotency-Key"] = key`` assignment, and an ``idempotency_key=`` keyword to a
  library call, are dropped.

``json.dumps(..., sort_keys=True)`` for display, fingerprints outside tool code, and caches of
model responses are not keys of this kind.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.agent_code import agent_code
from mutagent.anatomy.dataflow import local_values
from mutagent.anatomy.retry.loops import retry_loops
from mutagent.anatomy.syntax import final_name, identifiers_in, is_constant, string_value, walk
from mutagent.anatomy.tools.context import in_tool_context
from mutagent.anatomy.tools.guards import branches, force, guard_of, guard_operands, refusal_level
from mutagent.anatomy.tools.invocation import invokes_tool
from mutagent.anatomy.vocabulary import (
    DONE_WORDS,
    HASHERS,
    IDEMPOTENCY_HEADERS,
    IDEMPOTENCY_WORDS,
    KEY_WORDS,
    PRESENCE_CALLS,
    REPEAT_WORDS,
    STORE_CALLS,
    TOOL_NOUNS,
    node_words,
)
from mutagent.anatomy.vocabulary import tool_words as words
from mutagent.mutation.context import SourceContext
from mutagent.mutation.operator import Example, Mutation, Operator
from mutagent.mutation.rewrite import without

_DUMPS = frozenset("json.dumps simplejson.dumps".split())


def _keyed(ctx: SourceContext, expr: cst.BaseExpression) -> bool:
    """A key of a call: named for a key, and not one built from the tool alone (see below)."""
    return not is_constant(expr) and bool(node_words(ctx, expr) & KEY_WORDS) and not _keys_the_tool(ctx, expr)


def _keys_the_tool(ctx: SourceContext, expr: cst.BaseExpression) -> bool:
    """``key = (func, False)``: a key made of the function or tool and constants names the tool,
    not one call of it. Its store memoises something per tool (a wrapper, a schema); a repeated
    call is not looked up there."""
    values = local_values(ctx, expr) if isinstance(expr, cst.Name) else [expr]

    def names_the_tool(value: cst.BaseExpression) -> bool:
        parts = [e.value for e in value.elements] if isinstance(value, cst.Tuple) else [value]
        return all(is_constant(p) or (isinstance(p, cst.Name) and words(p.value) & TOOL_NOUNS) for p in parts)

    return bool(values) and all(names_the_tool(value) for value in values)


def _cache_of(
    ctx: SourceContext, operand: cst.BaseExpression, seen: frozenset[str] = frozenset()
) -> cst.BaseExpression | None:
    """The executed-calls store an operand looks a key up in, or None if it is no such lookup.

    ``seen`` holds the names already followed to their values: ``x = x or y`` or two names bound
    to each other would otherwise send the data flow round for ever."""
    if isinstance(operand, cst.Comparison) and len(operand.comparisons) == 1:
        target = operand.comparisons[0]
        if isinstance(target.operator, (cst.In, cst.NotIn)) and _keyed(ctx, operand.left):
            return target.comparator if node_words(ctx, target.comparator) & DONE_WORDS else None
        if isinstance(target.operator, (cst.Is, cst.IsNot)) and is_constant(target.comparator):
            operand = operand.left
    if isinstance(operand, cst.Name):
        if operand.value in seen:
            return None
        seen = seen | {operand.value}
        values = local_values(ctx, operand)
        return next((c for v in values if (c := _cache_of(ctx, v, seen)) is not None), None)
    if isinstance(operand, cst.Await):
        operand = operand.expression
    if isinstance(operand, cst.Call) and isinstance(operand.func, cst.Attribute) and operand.args:
        store = operand.func.value
        if operand.func.attr.value in PRESENCE_CALLS and node_words(ctx, store) & DONE_WORDS:
            return store if _keyed(ctx, operand.args[0].value) else None
    return None


def _stores_into(ctx: SourceContext, nodes: list[cst.CSTNode], store: cst.BaseExpression) -> bool:
    """The branch records into the store (``done[key] = result``, ``done.add(key)``): the executing side."""
    name = ctx.code(store)
    for node in (n for top in nodes for n in walk(top)):
        if isinstance(node, cst.AssignTarget) and isinstance(node.target, cst.Subscript):
            if ctx.code(node.target.value) == name:
                return True
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            if node.func.attr.value in STORE_CALLS and ctx.code(node.func.value) == name:
                return True
    return False


def _always_execute(
    ctx: SourceContext, operand: cst.BaseExpression, store: cst.BaseExpression
) -> cst.Name | None:
    """The literal that sends the guard down the side that executes the call instead of replaying it."""
    found = guard_of(ctx, operand)
    if found is None or isinstance(found[0], cst.Assert):
        return None
    guard, sense = found
    when_true, when_false = branches(ctx, guard)
    for side, test_value in ((when_true, True), (when_false, False)):
        other = when_false if test_value else when_true
        if (invokes_tool(ctx, side) or _stores_into(ctx, side, store)) and not (
            invokes_tool(ctx, other) or _stores_into(ctx, other, store)
        ):
            return force(sense, test_value)
    # ``if key in done: return done[key]`` followed by the execution: never take the early exit.
    replayed = DONE_WORDS | KEY_WORDS | node_words(ctx, operand)
    if refusal_level(ctx, when_true, replayed) >= 1 and refusal_level(ctx, when_false, replayed) == 0:
        return force(sense, False)
    return None


def _derives_key(ctx: SourceContext, call: cst.Call) -> bool:
    """The dumped text becomes a key for recognising repeats: the function or the variable it is
    assigned to is named for idempotency/dedup, or is named for a key (``call_key``,
    ``fingerprint``) in tool-handling code and the text is hashed there."""
    function = ctx.enclosing_function(call)
    named = words(function.name.value) if function else frozenset()
    assign = ctx.enclosing(call, cst.Assign)
    variable: frozenset[str] = frozenset()
    if assign is not None:
        variable = frozenset(w for t in assign.targets for w in node_words(ctx, t.target))
    if (named | variable) & REPEAT_WORDS:
        return True
    scope = function or ctx.top_level_statement(call)
    hashed = any(isinstance(n, cst.Call) and final_name(n) in HASHERS for n in walk(scope))
    if not (hashed and in_tool_context(ctx, call)):
        return False
    if named & KEY_WORDS:
        return True
    # Only a local named ``key`` in a function made for something else (``send_completion``
    # hashing its request for bookkeeping): a key only if the function looks a repeat up by it.
    return bool(variable & KEY_WORDS) and assign is not None and _looked_up(ctx, assign, scope)


def _looked_up(ctx: SourceContext, assign: cst.Assign, scope: cst.CSTNode) -> bool:
    """A name the assignment binds (or one computed from it) is tested for membership (``key in
    seen``) or used to index or ``.get`` a store (``cache[key]``, ``results.get(key)``) in
    ``scope``."""
    bound = {t.target.value for t in assign.targets if isinstance(t.target, cst.Name)}
    for later in ctx.descendants(scope, m.Assign()):  # ``digest = sha256(key).hexdigest()``
        if set(identifiers_in(ctx, later.value)) & bound:
            bound |= {t.target.value for t in later.targets if isinstance(t.target, cst.Name)}
    for comparison in ctx.descendants(scope, m.Comparison()):
        if comparison.left is not None and set(identifiers_in(ctx, comparison.left)) & bound and any(
            isinstance(t.operator, (cst.In, cst.NotIn)) for t in comparison.comparisons
        ):
            return True
    for subscript in ctx.descendants(scope, m.Subscript()):
        if any(set(identifiers_in(ctx, e.slice)) & bound for e in subscript.slice):
            return True
    for get in ctx.descendants(scope, m.Call(func=m.Attribute(attr=m.Name("get")))):
        if get.args and set(identifiers_in(ctx, get.args[0].value)) & bound:
            return True
    return False


def _keys_made_before(ctx: SourceContext, loop: cst.For | cst.While) -> list[cst.SimpleStatementLine]:
    """``options.idempotency_key = self._idempotency_key()``, ``idem_key = str(uuid.uuid4())``,
    ``headers["Idempotency-Key"] = new_key()``: assignments of the same function before ``loop``
    (outside it) that make an idempotency key by a call, of a variable the loop reads."""
    function = ctx.enclosing_function(loop)
    if function is None:
        return []
    start = ctx.position(loop).start.line
    read = {n.value for n in ctx.descendants(loop.body, m.Name())}
    sent = _sent_as_key(ctx, loop)
    found = []
    for assign in ctx.descendants(function.body, m.Assign(targets=[m.AssignTarget()])):
        line = ctx.parent(assign)
        if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
            continue
        if ctx.position(assign).start.line >= start or ctx.enclosing_function(assign) is not function:
            continue
        target = assign.targets[0].target
        named = node_words(ctx, target) | {
            w for s in ctx.descendants(target, m.SimpleString()) for w in words(string_value(s) or "")
        }
        sent_here = isinstance(target, cst.Name) and target.value in sent
        if not (named & IDEMPOTENCY_WORDS or sent_here) or not ctx.descendants(assign.value, m.Call()):
            continue
        root = target
        while isinstance(root, (cst.Attribute, cst.Subscript)):
            root = root.value
        if isinstance(root, cst.Name) and root.value in read:
            found.append(line)
    return found


def _header_key(ctx: SourceContext, key: cst.CSTNode | None) -> str | None:
    """The idempotency header a mapping key names: the literal ``"Idempotency-Key"``, or a
    variable holding the configured header name (``idempotency_header``, ``self._idempotency_header``)."""
    literal = string_value(key) if key is not None else None
    if literal is not None:
        return literal if literal.lower() in IDEMPOTENCY_HEADERS else None
    if isinstance(key, (cst.Name, cst.Attribute)):
        parts = node_words(ctx, key)
        if parts & IDEMPOTENCY_WORDS and "header" in parts:
            return ctx.code(key).strip()
    return None


def _common_block(ctx: SourceContext, first: cst.CSTNode, second: cst.CSTNode) -> cst.CSTNode:
    """The innermost block holding both nodes."""
    around_first = {id(a) for a in ctx.ancestors(first) if isinstance(a, cst.IndentedBlock)}
    for ancestor in ctx.ancestors(second):
        if isinstance(ancestor, cst.IndentedBlock) and id(ancestor) in around_first:
            return ancestor
    raise ValueError("no common block")


def _sent_as_key(ctx: SourceContext, loop: cst.CSTNode) -> set[str]:
    """Names the loop sends as an idempotency key: ``{"Idempotency-Key": key}``,
    ``headers["Idempotency-Key"] = key``, ``idempotency_key=key``."""
    names: set[str] = set()
    for element in ctx.descendants(loop, m.DictElement()):
        key = string_value(element.key)
        if key is not None and key.lower() in IDEMPOTENCY_HEADERS and isinstance(element.value, cst.Name):
            names.add(element.value.value)
    for arg in ctx.descendants(loop, m.Arg(keyword=m.Name("idempotency_key"), value=m.Name())):
        names.add(arg.value.value)
    for assign in ctx.descendants(loop, m.Assign(targets=[m.AssignTarget(m.Subscript())], value=m.Name())):
        key = string_value(getattr(assign.targets[0].target.slice[0].slice, "value", None))
        if key is not None and key.lower() in IDEMPOTENCY_HEADERS:
            names.add(assign.value.value)
    return names


class IgnoreIdempotencyKey(Operator):
    name = "ignore-idempotency-key"
    description = "A retried side-effecting tool call is no longer recognised as a repeat."
    failure = (
        "The idempotency key is derived non-canonically, not looked up, or not sent downstream, so a "
        "retried turn or a repeated call executes the side effect twice."
    )
    hint = (
        "Replay the same side-effecting call (the fake model repeats it, or the turn is retried; for "
        "canonical keys, with its argument keys in another order) and assert the side effect happened once."
    )
    examples = (
        Example(
            before=(
                "import hashlib\n"
                "import json\n\n"
                "class ToolRunner:\n"
                "    def run_tool_call(self, call):\n"
                "        key = json.dumps(call.arguments, sort_keys=True)\n"
                "        digest = hashlib.sha256(key.encode()).hexdigest()\n"
                "        if digest in self.completed:\n"
                "            return self.completed[digest]\n"
                "        self.completed[digest] = result = self.tools[call.name](**call.arguments)\n"
                "        return result\n"
            ),
            after=(
                "import hashlib\n"
                "import json\n\n"
                "class ToolRunner:\n"
                "    def run_tool_call(self, call):\n"
                "        key = json.dumps(call.arguments)\n"
                "        digest = hashlib.sha256(key.encode()).hexdigest()\n"
                "        if digest in self.completed:\n"
                "            return self.completed[digest]\n"
                "        self.completed[digest] = result = self.tools[call.name](**call.arguments)\n"
                "        return result\n"
            ),
            note="a local key of a tool-call runner, hashed and looked up among completed calls",
        ),
        Example(
            before=(
                "import hashlib\n"
                "import json\n\n"
                "class Model:\n"
                "    def send_completion(self, messages, tools):\n"
                "        kwargs = {'messages': messages, 'tools': tools, 'tool_choice': 'auto'}\n"
                "        key = json.dumps(kwargs, sort_keys=True).encode()\n"
                "        digest = hashlib.sha1(key)\n"
                "        return digest, self.client.chat.completions.create(**kwargs)\n"
            ),
            note="a request hashed for bookkeeping: the local 'key' is never looked up",
        ),
        Example(
            before=(
                "import hashlib\n"
                "import json\n\n"
                "def make_idempotency_key(tool, args):\n"
                '    raw = json.dumps({"tool": tool, "args": args}, ensure_ascii=False, sort_keys=True, '
                'separators=(",", ":"))\n'
                '    return hashlib.sha256(raw.encode("utf-8")).hexdigest()\n'
            ),
            after=(
                "import hashlib\n"
                "import json\n\n"
                "def make_idempotency_key(tool, args):\n"
                '    raw = json.dumps({"tool": tool, "args": args}, ensure_ascii=False, separators=(",", '
                '":"))\n'
                '    return hashlib.sha256(raw.encode("utf-8")).hexdigest()\n'
            ),
            note="canonical JSON loses sort_keys",
        ),
        Example(
            before=(
                "class Executor:\n"
                "    def run(self, name, args, key):\n"
                "        if key in self.completed:\n"
                '            return {"status": "replayed", "result": self.completed[key]}\n'
                "        result = self.tools[name].handler(args)\n"
                "        self.completed[key] = result\n"
                '        return {"status": "completed", "result": result}\n'
            ),
            after=(
                "class Executor:\n"
                "    def run(self, name, args, key):\n"
                "        if False:\n"
                '            return {"status": "replayed", "result": self.completed[key]}\n'
                "        result = self.tools[name].handler(args)\n"
                "        self.completed[key] = result\n"
                '        return {"status": "completed", "result": result}\n'
            ),
            note="executed-calls lookup with an early replay",
        ),
        Example(
            before=(
                "async def call_tool(tool_call, store, functions):\n"
                "    key = tool_call.id\n"
                "    if not await store.exists(key):\n"
                "        output = await functions[tool_call.function.name](tool_call.function.arguments)\n"
                "        await store.put(key, output)\n"
                '    return {"role": "tool", "tool_call_id": tool_call.id, "content": await '
                "store.fetch(key)}\n"
            ),
            after=(
                "async def call_tool(tool_call, store, functions):\n"
                "    key = tool_call.id\n"
                "    if not False:\n"
                "        output = await functions[tool_call.function.name](tool_call.function.arguments)\n"
                "        await store.put(key, output)\n"
                '    return {"role": "tool", "tool_call_id": tool_call.id, "content": await '
                "store.fetch(key)}\n"
            ),
            note="OpenAI async runner that executes only when the key is new",
        ),
        Example(
            before=(
                "import httpx\n\n"
                "def create_ticket(args, context):\n"
                '    headers = {"Authorization": f"Bearer {TOKEN}", "Idempotency-Key": '
                "context.idempotency_key}\n"
                "    return httpx.post(URL, json=args, headers=headers).json()\n"
            ),
            after=(
                "import httpx\n\n"
                "def create_ticket(args, context):\n"
                '    headers = {"Authorization": f"Bearer {TOKEN}"}\n'
                "    return httpx.post(URL, json=args, headers=headers).json()\n"
            ),
            note="the key is no longer sent downstream",
        ),
        Example(
            before=(
                "import stripe\n\n"
                "def charge(arguments, key):\n"
                '    return stripe.PaymentIntent.create(amount=arguments["amount"], currency="eur", '
                "idempotency_key=key)\n"
            ),
            after=(
                "import stripe\n\n"
                "def charge(arguments, key):\n"
                '    return stripe.PaymentIntent.create(amount=arguments["amount"], currency="eur")\n'
            ),
            note="a library's idempotency_key keyword",
        ),
        Example(
            before=(
                "import json\n\n"
                "def render(output):\n"
                "    text = json.dumps(output, ensure_ascii=False, sort_keys=True, indent=2)\n"
                '    return {"type": "tool_result", "tool_use_id": output.id, "content": text}\n'
            ),
            note="sorted JSON for display is no key",
        ),
        Example(
            before=(
                "class Model:\n"
                "    def complete(self, prompt):\n"
                "        key = hash(prompt)\n"
                "        if key in self._cache:\n"
                "            return self._cache[key]\n"
                "        reply = self._cache[key] = self.client.complete(prompt)\n"
                "        return reply\n"
            ),
            note="a response cache outside tool code",
        ),
        Example(
            before=(
                "def request(self, options, max_retries=2):\n"
                "    if options.idempotency_key is None and options.method != 'get':\n"
                "        options.idempotency_key = self._idempotency_key()\n"
                "    for retries_taken in range(max_retries + 1):\n"
                "        try:\n"
                "            return self._send(self._build_request(options))\n"
                "        except TimeoutError:\n"
                "            continue\n"
            ),
            after=(
                "def request(self, options, max_retries=2):\n"
                "    if options.idempotency_key is None and options.method != 'get':\n"
                "        options.idempotency_key = self._idempotency_key()\n"
                "    for retries_taken in range(max_retries + 1):\n"
                "        options.idempotency_key = self._idempotency_key()\n"
                "        try:\n"
                "            return self._send(self._build_request(options))\n"
                "        except TimeoutError:\n"
                "            continue\n"
            ),
            note="a key made once on the request options before the retry loop, now made per attempt",
        ),
        Example(
            before=(
                "import asyncio\n"
                "import uuid\n\n"
                "async def charge(http, url, body, attempts=3):\n"
                "    key = str(uuid.uuid4())\n"
                "    attempt = 0\n"
                "    while True:\n"
                "        attempt += 1\n"
                "        resp = await http.post(url, json=body, headers={'Idempotency-Key': key})\n"
                "        if resp.status_code >= 500 and attempt < attempts:\n"
                "            await asyncio.sleep(attempt)\n"
                "            continue\n"
                "        return resp\n"
            ),
            after=(
                "import asyncio\n"
                "import uuid\n\n"
                "async def charge(http, url, body, attempts=3):\n"
                "    key = str(uuid.uuid4())\n"
                "    attempt = 0\n"
                "    while True:\n"
                "        key = str(uuid.uuid4())\n"
                "        attempt += 1\n"
                "        resp = await http.post(url, json=body, headers={'Idempotency-Key': key})\n"
                "        if resp.status_code >= 500 and attempt < attempts:\n"
                "            await asyncio.sleep(attempt)\n"
                "            continue\n"
                "        return resp\n"
            ),
            note="async: a uuid sent as the Idempotency-Key header across retries becomes one per attempt",
        ),
        Example(
            before=(
                "import uuid\n\n"
                "def send_all(client, url, bodies):\n"
                "    idempotency_key = str(uuid.uuid4())\n"
                "    for body in bodies:\n"
                "        try:\n"
                "            client.send_event(url, body, token=idempotency_key)\n"
                "        except TimeoutError:\n"
                "            continue\n"
            ),
            note="a key before a loop over items that is no retry loop",
        ),
        Example(
            before=(
                "import time\n\n"
                "def call(client, body, request_id, max_retries=3):\n"
                "    trace_id = make_trace_id()\n"
                "    for attempt in range(max_retries):\n"
                "        try:\n"
                "            return client.post('/v1/messages', json=body, headers={'x-trace': trace_id})\n"
                "        except TimeoutError:\n"
                "            time.sleep(attempt)\n"
            ),
            note="an id made before a retry loop that is no idempotency key",
        ),
        Example(
            before=(
                "def build_headers(self, options, headers):\n"
                "    idempotency_header = self._idempotency_header\n"
                "    if idempotency_header and options.idempotency_key:\n"
                "        headers[idempotency_header] = options.idempotency_key\n"
                "    return headers\n"
            ),
            after=(
                "def build_headers(self, options, headers):\n"
                "    idempotency_header = self._idempotency_header\n"
                "    if idempotency_header and options.idempotency_key:\n"
                "        pass\n"
                "    return headers\n"
            ),
            note="the header name is configured, held in a variable",
        ),
        Example(
            before=(
                "def build_headers(self, headers, request_id):\n"
                "    trace_header = self._trace_header\n"
                "    headers[trace_header] = request_id\n"
                "    return {**headers, idempotency_key_field: 'x'}\n"
            ),
            note="another configured header, and a key variable that names no header",
        ),
        Example(
            before=(
                "_CACHE = {}\n\n"
                "def wrapper_for_tool(func):\n"
                "    key = (func, False)\n"
                "    if key in _CACHE:\n"
                "        return _CACHE[key]\n"
                "    wrapped = ToolWrapper(func)\n"
                "    return _CACHE.setdefault(key, wrapped)\n"
            ),
            note="a cache keyed by the tool itself memoises a wrapper; no call of the tool is looked up",
        ),
    )

    def find(self, ctx: SourceContext) -> Iterator[Mutation]:
        yield from self._non_canonical_keys(ctx)
        yield from self._lookups_skipped(ctx)
        yield from self._dropped_keys(ctx)
        yield from self._keys_per_attempt(ctx)

    @staticmethod
    def _keys_per_attempt(ctx: SourceContext) -> Iterator[Mutation]:
        """A key made once per logical request, before the retry loop, runs again at the top of
        every attempt: each retry then carries a new key."""
        for loop in retry_loops(ctx):
            if not isinstance(loop.body, cst.IndentedBlock):
                continue
            for line in _keys_made_before(ctx, loop):
                made = ctx.code(line.body[0]).strip()
                body = loop.body.with_changes(body=[line.with_changes(leading_lines=[]), *loop.body.body])
                # The mutant spans from where the key is made to the loop that now remakes it.
                region = _common_block(ctx, line, loop)
                yield Mutation(
                    region,
                    region.deep_replace(loop.body, body),
                    f"idempotency key made per attempt (`{made}` runs before every retry): the server "
                    "sees each retry as a new request",
                )

    @staticmethod
    def _non_canonical_keys(ctx: SourceContext) -> Iterator[Mutation]:
        sort_keys = m.Arg(keyword=m.Name("sort_keys"), value=m.Name("True"))
        for call in agent_code(ctx, m.Call(args=[m.ZeroOrMore(), sort_keys, m.ZeroOrMore()])):
            if ctx.qualified_names(call) & _DUMPS and _derives_key(ctx, call):
                dropped = next(a for a in call.args if m.matches(a, sort_keys))
                yield Mutation(call, without(call, dropped), "canonical JSON for the key loses sort_keys")

    @staticmethod
    def _lookups_skipped(ctx: SourceContext) -> Iterator[Mutation]:
        for operand in guard_operands(ctx):
            store = _cache_of(ctx, operand)
            if store is None:
                continue
            if in_tool_context(ctx, operand) or "idempotency" in node_words(ctx, operand):
                executes = _always_execute(ctx, operand, store)
                if executes is not None:
                    description = f"lookup `{ctx.code(operand)}` never finds an earlier run"
                    yield Mutation(operand, executes, description)

    @staticmethod
    def _dropped_keys(ctx: SourceContext) -> Iterator[Mutation]:
        for mapping in agent_code(ctx, m.Dict()):
            for element in mapping.elements:
                key = _header_key(ctx, getattr(element, "key", None))
                if key is not None:
                    yield Mutation(mapping, without(mapping, element), f"{key} header dropped")
        header = m.Subscript(slice=[m.SubscriptElement(slice=m.Index())])
        for assign in agent_code(ctx, m.Assign(targets=[m.AssignTarget(target=header)])):
            key = _header_key(ctx, assign.targets[0].target.slice[0].slice.value)
            if key is not None:
                yield Mutation(assign, cst.Pass(), f"{key} header no longer set")
        for call in agent_code(
            ctx, m.Call(args=[m.ZeroOrMore(), m.Arg(keyword=m.Name("idempotency_key")), m.ZeroOrMore()])
        ):
            if (final_name(call) or "")[:1].isupper() and isinstance(call.func, cst.Name):
                continue  # a class of this project: its constructor may require the field
            dropped = next(a for a in call.args if a.keyword and a.keyword.value == "idempotency_key")
            yield Mutation(call, without(call, dropped), "idempotency_key no longer passed")
