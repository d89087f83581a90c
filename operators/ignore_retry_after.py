"""ignore-retry-after: the server's ``Retry-After`` / ``retry-after-ms`` is read as if absent.

When a provider rate-limits or sheds load it says how long to stay away; an agent that ignores
it falls back to its own (usually shorter) backoff, gets rejected again, and burns its retry
budget while making the overload worse. The fallback still "works", so only a test that sends
the header and asserts the delay the agent honoured can tell.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.retry.loops import in_retry_decision
from mutagent.anatomy.retry.waits import getattr_server_wait, names_server_wait
from mutagent.anatomy.vocabulary import (
    HEADER_GETTERS,
    LIMIT_WORDS,
    READ_WORDS,
    RETRY_AFTER_HEADERS,
    WAITING_WORDS,
    WRITE_WORDS,
    identifier,
    words,
)
from mutagent.mutation.context import SourceContext
from mutagent.mutation.operator import Example, Mutation, Operator

HEADERS = RETRY_AFTER_HEADERS


def _module_strings(ctx: SourceContext) -> dict[str, str]:
    """Module-level string constants (``RETRY_AFTER = "retry-after"``), so a header named through
    a constant is recognised too."""
    constants: dict[str, str] = {}
    for statement in ctx.module.body:
        for assign in ctx.descendants(
            statement, m.Assign(targets=[m.AssignTarget(m.Name())], value=m.SimpleString())
        ):
            value = assign.value.evaluated_value
            if isinstance(value, str) and ctx.parent(ctx.parent(assign)) is ctx.module:
                constants[assign.targets[0].target.value] = value
    return constants


def _header(
    ctx: SourceContext, node: cst.CSTNode, constants: dict[str, str], *, loops: bool = True
) -> str | None:
    """The retry-after header ``node`` names, lower-cased, in any spelling, through a constant, or
    as the variable of a loop over header names (``for name, unit in (("retry-after-ms", 1000),
    ("retry-after", 1)): headers.get(name)``, named ``"retry-after headers"``)."""
    value: object = None
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
    elif isinstance(node, cst.Name):
        value = constants.get(node.value)
        if value is None:
            return _loop_over_headers(ctx, node, constants) if loops else None
    if isinstance(value, bytes):
        value = value.decode("latin-1")
    return value.lower() if isinstance(value, str) and value.lower() in HEADERS else None


def _loop_over_headers(ctx: SourceContext, name: cst.Name, constants: dict[str, str]) -> str | None:
    """``name`` is bound by an enclosing ``for`` over a literal collection that names retry-after
    headers (directly, in pairs with a unit divisor, or through a module constant)."""
    for loop in ctx.ancestors(name):
        if isinstance(loop, (cst.FunctionDef, cst.ClassDef)):
            return None
        if not isinstance(loop, cst.For) or name.value not in {
            n.value for n in ctx.descendants(loop.target, m.Name())
        }:
            continue
        iterable = loop.iter
        if isinstance(iterable, cst.Name):  # RETRY_AFTER_HEADERS = (...) at module level
            iterable = _module_collections(ctx).get(iterable.value, iterable)
        strings = ctx.descendants(iterable, m.SimpleString() | m.Name())
        if any(_header(ctx, s, constants, loops=False) for s in strings):
            return "retry-after-ms/retry-after"
    return None


def _module_collections(ctx: SourceContext) -> dict[str, cst.BaseExpression]:
    def compute() -> dict[str, cst.BaseExpression]:
        found: dict[str, cst.BaseExpression] = {}
        for statement in ctx.module.body:
            if m.matches(
                statement,
                m.SimpleStatementLine(
                    body=[m.Assign(targets=[m.AssignTarget(m.Name())], value=m.Tuple() | m.List())]
                ),
            ):
                assign = statement.body[0]
                found[assign.targets[0].target.value] = assign.value
        return found

    return ctx.cached(("ignore-retry-after", "collections"), compute)


def _reads_retry_after(call: cst.Call) -> bool:
    """``get_retry_after(error)``, ``_parse_retry_after_ms(headers)``: a helper that reads the
    server's wait (not one that sets or formats it)."""
    parts = set(words(identifier(call) or ""))
    return (
        {"retry", "after"} <= parts
        and bool(parts & READ_WORDS)
        and not parts & WRITE_WORDS
        and not parts & LIMIT_WORDS
    )


def _is_header_helper(call: cst.Call) -> bool:
    name = identifier(call) or ""
    if isinstance(call.func, cst.Attribute) and name in HEADER_GETTERS:
        return False  # ``headers.get(...)``: read by the getter rule
    parts = set(words(name))
    return bool(parts & READ_WORDS) and not parts & WRITE_WORDS and not name[:1].isupper()


def carries_server_wait(attribute: cst.Attribute) -> bool:
    """``x.retry_after`` or ``x.wait_hint`` (not ``self.max_retry_after``, a cap)."""
    return names_server_wait(attribute.attr.value)


def _carried_getattr(ctx: SourceContext, call: cst.Call) -> tuple[str, cst.CSTNode, cst.CSTNode, str] | None:
    """``getattr(exc, "retry_after", None)`` where the retry delay or decision is made: the same
    carried read as ``exc.retry_after`` (see :func:`_carried`), read as None."""
    name = getattr_server_wait(call)
    function = ctx.enclosing_function(call)
    if name is None or function is None:
        return None
    if not (in_retry_decision(ctx, call) or set(words(function.name.value)) & WAITING_WORDS):
        return None
    label = f"server wait carried on {ctx.code(call.args[0].value).strip()}.{name}"
    return label, call, cst.Name("None"), "read as None"


def _carried(
    ctx: SourceContext, attribute: cst.Attribute
) -> tuple[str, cst.CSTNode, cst.CSTNode, str] | None:
    """(label, node, replacement, how) for a read of a server wait carried on an object
    (``err.wait_hint``, ``normalized.retry_after``) where the retry delay or decision is made."""
    if not carries_server_wait(attribute) or _is_stored(ctx, attribute):
        return None
    call = ctx.parent(attribute)
    if isinstance(call, cst.Call) and call.func is attribute:
        return None  # ``self._parse_retry_after_header(...)``: a method, not a carried value
    function = ctx.enclosing_function(attribute)
    if function is None:
        return None
    if not (in_retry_decision(ctx, attribute) or set(words(function.name.value)) & WAITING_WORDS):
        return None
    label = f"server wait carried on {ctx.code(attribute).strip()}"
    parent = ctx.parent(attribute)
    if isinstance(parent, cst.Comparison) and len(parent.comparisons) == 1 and parent.left is attribute:
        target = parent.comparisons[0]
        if m.matches(target.comparator, m.Name("None")):
            if isinstance(target.operator, cst.IsNot):
                return label, parent, cst.Name("False"), "check is never true"
            if isinstance(target.operator, cst.Is):
                return label, parent, cst.Name("True"), "check is always true"
    if isinstance(ctx.parent(parent), cst.Comparison) or isinstance(parent, cst.Comparison):
        return None
    return label, attribute, cst.Name("None"), "read as None"


#: Methods that rebuild or show an object: a header read there restores a pickled attribute or
#: prints it, it never decides how long to wait.
_STATE_METHODS = frozenset(
    {"__setstate__", "__getstate__", "__reduce__", "__reduce_ex__", "__repr__", "__str__"}
)


def _restores_state(ctx: SourceContext, node: cst.CSTNode) -> bool:
    function = ctx.enclosing_function(node)
    return function is not None and function.name.value in _STATE_METHODS


def _is_stored(ctx: SourceContext, node: cst.CSTNode) -> bool:
    """``headers["Retry-After"] = "1"`` or ``del headers[...]``: the code writes the header."""
    parent = ctx.parent(node)
    return (
        isinstance(parent, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.Del))
        and getattr(parent, "target", None) is node
    )


def _absent(
    ctx: SourceContext, node: cst.CSTNode, constants: dict[str, str]
) -> tuple[str, cst.CSTNode, str] | None:
    """(header, what the expression evaluates to when the header is missing, how) or None."""
    if m.matches(node, m.Call(func=m.Attribute(attr=m.Name()))) and node.func.attr.value in HEADER_GETTERS:
        positional = [a for a in node.args if a.keyword is None and not a.star]
        header = _header(ctx, positional[0].value, constants) if positional else None
        if header:
            default = positional[1].value if len(positional) > 1 else cst.Name("None")
            default = next(
                (a.value for a in node.args if a.keyword and a.keyword.value == "default"), default
            )
            return header, default, "read returns its default"
    if (
        isinstance(node, cst.Call)
        and _reads_retry_after(node)
        and not any(  # ``parse_retry_after(headers.get("retry-after"))``: the inner read is the site
            _header(ctx, s, constants)
            for arg in node.args
            for s in ctx.descendants(arg.value, m.SimpleString() | m.Name())
        )
    ):
        return f"server wait read by {identifier(node)}()", cst.Name("None"), "it returns None"
    if isinstance(node, cst.Call) and _is_header_helper(node):
        for arg in node.args:
            header = _header(ctx, arg.value, constants) if not arg.star else None
            if header:
                return header, cst.Name("None"), f"{identifier(node)}() returns None"
    if (
        isinstance(node, cst.Subscript)
        and len(node.slice) == 1
        and isinstance(node.slice[0].slice, cst.Index)
    ):
        key = node.slice[0].slice.value
        header = _header(ctx, key, constants)
        if header and not _is_stored(ctx, node):
            # Indexing an empty dict raises KeyError, exactly what a missing header raises.
            return header, node.with_changes(value=cst.Dict([])), "lookup raises KeyError"
    if isinstance(node, cst.Comparison) and len(node.comparisons) == 1:
        operator = node.comparisons[0].operator
        header = _header(ctx, node.left, constants) or _header(ctx, node.comparisons[0].comparator, constants)
        if header and isinstance(operator, (cst.In, cst.Equal)):
            return header, cst.Name("False"), "check is never true"
        if header and isinstance(operator, (cst.NotIn, cst.NotEqual)):
            return header, cst.Name("True"), "check is always true"
    return None


class IgnoreRetryAfter(Operator):
    name = "ignore-retry-after"
    description = "The server's Retry-After / retry-after-ms header is read as if it were absent."
    failure = (
        "After a 429 or 529 the agent ignores how long the server asked it to wait and falls back to its "
        "own backoff, so it comes back too early, is rejected again and exhausts its retries."
    )
    hint = (
        "Have the fake server answer 429 with a Retry-After (and retry-after-ms) value different from your "
        "default backoff, and assert the delay before the retry equals the header's value."
    )
    examples = (
        Example(
            before=(
                "import time\n\n"
                "def _delay(exc, attempt):\n"
                "    hint = getattr(exc, 'retry_after', None)\n"
                "    return hint if hint is not None else min(2 ** attempt, 60)\n"
            ),
            after=(
                "import time\n\n"
                "def _delay(exc, attempt):\n"
                "    hint = None\n"
                "    return hint if hint is not None else min(2 ** attempt, 60)\n"
            ),
            note="the server's wait read with getattr where the delay is computed",
        ),
        Example(
            before=(
                "def describe(exc):\n"
                "    return {'kind': type(exc).__name__, 'after': getattr(exc, 'retry_after', None)}\n"
            ),
            note="the same getattr in a function that describes an error: no delay or retry decided there",
        ),
        Example(
            before=(
                "def retry_delay(response, attempt):\n"
                "    header = response.headers.get('Retry-After')\n"
                "    if header is not None:\n"
                "        return float(header)\n"
                "    return 0.5 * 2 ** attempt\n"
            ),
            after=(
                "def retry_delay(response, attempt):\n"
                "    header = None\n"
                "    if header is not None:\n"
                "        return float(header)\n"
                "    return 0.5 * 2 ** attempt\n"
            ),
            note="hand-written helper on a raw httpx/requests response",
        ),
        Example(
            before=(
                "import anthropic\n"
                "import time\n\n"
                "def call(client, **kw):\n"
                "    for attempt in range(3):\n"
                "        try:\n"
                "            return client.messages.create(**kw)\n"
                "        except anthropic.RateLimitError as e:\n"
                "            time.sleep(int(e.response.headers.get('retry-after', '1')))\n"
            ),
            after=(
                "import anthropic\n"
                "import time\n\n"
                "def call(client, **kw):\n"
                "    for attempt in range(3):\n"
                "        try:\n"
                "            return client.messages.create(**kw)\n"
                "        except anthropic.RateLimitError as e:\n"
                "            time.sleep(int('1'))\n"
            ),
            note="anthropic error in a loop: a read with a default falls back to the default",
        ),
        Example(
            before=(
                "RETRY_AFTER_MS = 'retry-after-ms'\n\n"
                "async def wait_hint(resp) -> float | None:\n"
                "    if RETRY_AFTER_MS in resp.headers:\n"
                "        return float(resp.headers[RETRY_AFTER_MS]) / 1000\n"
                "    if 'Retry-After' in resp.headers:\n"
                "        return float(resp.headers['Retry-After'])\n"
                "    return None\n"
            ),
            after=(
                "RETRY_AFTER_MS = 'retry-after-ms'\n\n"
                "async def wait_hint(resp) -> float | None:\n"
                "    if RETRY_AFTER_MS in resp.headers:\n"
                "        return float(resp.headers[RETRY_AFTER_MS]) / 1000\n"
                "    if False:\n"
                "        return float(resp.headers['Retry-After'])\n"
                "    return None\n"
            ),
            note="async aiohttp-style membership checks, one header named through a constant",
        ),
        Example(
            before=(
                "import email.utils\n\n"
                "def seconds_to_wait(headers, now):\n"
                "    try:\n"
                "        return float(headers['retry-after'])\n"
                "    except KeyError:\n"
                "        return None\n"
                "    except ValueError:\n"
                "        return email.utils.parsedate_to_datetime(headers['retry-after']).timestamp() - now\n"
            ),
            after=(
                "import email.utils\n\n"
                "def seconds_to_wait(headers, now):\n"
                "    try:\n"
                "        return float({}['retry-after'])\n"
                "    except KeyError:\n"
                "        return None\n"
                "    except ValueError:\n"
                "        return email.utils.parsedate_to_datetime(headers['retry-after']).timestamp() - now\n"
            ),
            note="subscript read parsed as seconds or an HTTP date",
        ),
        Example(
            before=(
                "def rate_limited(handler, wait):\n"
                "    handler.send_response(429)\n"
                "    handler.send_header('Retry-After', str(wait))\n"
                "    headers = {'retry-after-ms': str(wait * 1000)}\n"
                "    headers['Retry-After'] = str(wait)\n"
                "    return headers\n"
            ),
            note="a fake server writing the header, not reading it",
        ),
        Example(
            before=(
                "def request_id(response):\n"
                "    return response.headers.get('x-request-id') or response.headers['retry-count']\n"
            ),
            note="other headers",
        ),
        Example(
            before=(
                "RETRY_HEADERS = (('retry-after-ms', 1000), ('retry-after', 1))\n\n"
                "def server_wait(response):\n"
                "    for name, divisor in RETRY_HEADERS:\n"
                "        value = response.headers.get(name)\n"
                "        if value is not None:\n"
                "            return float(value) / divisor\n"
                "    return None\n"
            ),
            after=(
                "RETRY_HEADERS = (('retry-after-ms', 1000), ('retry-after', 1))\n\n"
                "def server_wait(response):\n"
                "    for name, divisor in RETRY_HEADERS:\n"
                "        value = None\n"
                "        if value is not None:\n"
                "            return float(value) / divisor\n"
                "    return None\n"
            ),
            note="a loop over the header names with unit divisors",
        ),
        Example(
            before=(
                "def get_retry_after(error):\n"
                "    value = _get_header_value(error, 'retry-after')\n"
                "    return float(value) if value else None\n"
            ),
            after=(
                "def get_retry_after(error):\n    value = None\n    return float(value) if value else None\n"
            ),
            note="a helper that takes the header name as an argument",
        ),
        Example(
            before=(
                "import asyncio\n\n"
                "async def _delay_for(err, attempt):\n"
                "    if err.wait_hint is not None:\n"
                "        return err.wait_hint\n"
                "    return 0.5 * 2 ** attempt\n"
            ),
            after=(
                "import asyncio\n\n"
                "async def _delay_for(err, attempt):\n"
                "    if False:\n"
                "        return err.wait_hint\n"
                "    return 0.5 * 2 ** attempt\n"
            ),
            note="the wait parsed from the header, carried on the exception",
        ),
        Example(
            before=(
                "def trace_ids(response):\n"
                "    for name in ('x-request-id', 'x-trace-id'):\n"
                "        value = response.headers.get(name)\n"
                "        if value:\n"
                "            return value\n"
                "    return read_header(response, 'content-type')\n"
            ),
            note="a loop over other header names, and a helper reading another header",
        ),
        Example(
            before=(
                "class RateLimited(Exception):\n"
                "    def __init__(self, retry_after):\n"
                "        self.retry_after = retry_after\n\n"
                "    def __str__(self):\n"
                "        return f'rate limited, retry after {self.retry_after}s'\n\n"
                "def delay(policy, attempt):\n"
                "    return min(policy.base * 2 ** attempt, policy.max_retry_after)\n"
            ),
            note="the attribute stored and shown in a message, and a cap named like it: no wait is read",
        ),
        Example(
            before=(
                "def retry_advice(error):\n"
                "    retry_after = get_retry_after(error)\n"
                "    if retry_after is not None:\n"
                "        return Advice(retry=True, delay=retry_after)\n"
                "    return Advice(retry=True)\n"
            ),
            after=(
                "def retry_advice(error):\n"
                "    retry_after = None\n"
                "    if retry_after is not None:\n"
                "        return Advice(retry=True, delay=retry_after)\n"
                "    return Advice(retry=True)\n"
            ),
            note="a helper named for the value it reads from the headers",
        ),
        Example(
            before=(
                "def rate_limited(response, seconds):\n"
                "    set_retry_after(response, seconds)\n"
                "    return format_retry_after(seconds), max_retry_after(response)\n"
            ),
            note="helpers that write, format or cap the value read nothing from the server",
        ),
        Example(
            before=(
                "class ModelHTTPError(Exception):\n"
                "    def __setstate__(self, state):\n"
                "        self.__dict__.update(state)\n"
                "        if 'retry_after' not in state:\n"
                "            self.retry_after = _parse_retry_after(self.headers)\n\n"
                "def normalize(error, advice):\n"
                "    retry_after = _get_retry_after(error)\n"
                "    if advice.retry_after is not None:\n"
                "        retry_after = advice.retry_after\n"
                "    return retry_after\n"
            ),
            after=(
                "class ModelHTTPError(Exception):\n"
                "    def __setstate__(self, state):\n"
                "        self.__dict__.update(state)\n"
                "        if 'retry_after' not in state:\n"
                "            self.retry_after = _parse_retry_after(self.headers)\n\n"
                "def normalize(error, advice):\n"
                "    retry_after = None\n"
                "    if advice.retry_after is not None:\n"
                "        retry_after = advice.retry_after\n"
                "    return retry_after\n"
            ),
            note="the function's own read is its site: no mutant on a second copy of the wait, none where "
            "a pickled error is restored",
        ),
        Example(
            before=(
                "class ModelHTTPError(Exception):\n"
                "    def __setstate__(self, state):\n"
                "        self.__dict__.update(state)\n"
                "        if 'retry_after' not in state:\n"
                "            self.retry_after = _parse_retry_after(self.headers)\n\n"
                "    def __repr__(self):\n"
                "        return f'ModelHTTPError(retry_after={self.headers.get(\"retry-after\")})'\n"
            ),
            note="a pickled error restored, and a repr: neither decides a wait",
        ),
    )

    def find(self, ctx: SourceContext) -> Iterator[Mutation]:
        constants = _module_strings(ctx)
        sites: dict[tuple[int, str], list[tuple[cst.CSTNode, cst.CSTNode, str]]] = defaultdict(list)
        for node in ctx.findall(m.Call() | m.Subscript() | m.Comparison()):
            found = _absent(ctx, node, constants)
            if found and not _restores_state(ctx, node):
                header, replacement, how = found
                sites[(id(ctx.enclosing_function(node)), header)].append((node, replacement, how))
        reading = {function for function, _ in sites}
        carried = [*ctx.findall(m.Attribute()), *ctx.findall(m.Call(func=m.Name("getattr")))]
        carried.sort(key=lambda node: (ctx.position(node).start.line, ctx.position(node).start.column))
        for attribute in carried:
            is_attribute = isinstance(attribute, cst.Attribute)
            found = _carried(ctx, attribute) if is_attribute else _carried_getattr(ctx, attribute)
            # A function that reads the header (or a helper named for the wait) itself: that read
            # is its site; a copy of the wait carried on another object is a second source of the
            # same value, not a place where the server's wait could be lost.
            if found and id(ctx.enclosing_function(attribute)) not in reading:
                label, node, replacement, how = found
                sites[(id(ctx.enclosing_function(node)), label)].append((node, replacement, how))
        for (_, header), group in sites.items():
            # One mutant per header and function: where a check guards the reads, flip the check;
            # otherwise the first read decides whether the header is there (later reads of the
            # same header, e.g. an HTTP-date fallback, only run once it was).
            checks = [site for site in group if isinstance(site[0], cst.Comparison)]
            for node, replacement, how in checks or group[:1]:
                what = header if header.startswith("server wait") else f"{header} header"
                if "/" in header:
                    what += "s"
                yield Mutation(node, replacement, f"{what} ignored: {how}")
