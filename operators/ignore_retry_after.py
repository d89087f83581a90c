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

from mutagent.mutation.context import SourceContext
from mutagent.mutation.operator import Example, Mutation, Operator

HEADERS = frozenset({"retry-after", "retry-after-ms"})
_GETTERS = frozenset({"get", "getheader", "get_one", "getfirst"})


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


def _header(node: cst.CSTNode, constants: dict[str, str]) -> str | None:
    """The retry-after header ``node`` names, lower-cased, in any spelling or through a constant."""
    value: object = None
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
    elif isinstance(node, cst.Name):
        value = constants.get(node.value)
    if isinstance(value, bytes):
        value = value.decode("latin-1")
    return value.lower() if isinstance(value, str) and value.lower() in HEADERS else None


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
    if m.matches(node, m.Call(func=m.Attribute(attr=m.Name()))) and node.func.attr.value in _GETTERS:
        positional = [a for a in node.args if a.keyword is None and not a.star]
        header = _header(positional[0].value, constants) if positional else None
        if header:
            default = positional[1].value if len(positional) > 1 else cst.Name("None")
            default = next(
                (a.value for a in node.args if a.keyword and a.keyword.value == "default"), default
            )
            return header, default, "read returns its default"
    if (
        isinstance(node, cst.Subscript)
        and len(node.slice) == 1
        and isinstance(node.slice[0].slice, cst.Index)
    ):
        key = node.slice[0].slice.value
        header = _header(key, constants)
        if header and not _is_stored(ctx, node):
            # Indexing an empty dict raises KeyError, exactly what a missing header raises.
            return header, node.with_changes(value=cst.Dict([])), "lookup raises KeyError"
    if isinstance(node, cst.Comparison) and len(node.comparisons) == 1:
        operator = node.comparisons[0].operator
        header = _header(node.left, constants) or _header(node.comparisons[0].comparator, constants)
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
    )

    def find(self, ctx: SourceContext) -> Iterator[Mutation]:
        constants = _module_strings(ctx)
        sites: dict[tuple[int, str], list[tuple[cst.CSTNode, cst.CSTNode, str]]] = defaultdict(list)
        for node in ctx.findall(m.Call() | m.Subscript() | m.Comparison()):
            found = _absent(ctx, node, constants)
            if found:
                header, replacement, how = found
                sites[(id(ctx.enclosing_function(node)), header)].append((node, replacement, how))
        for (_, header), group in sites.items():
            # One mutant per header and function: where a check guards the reads, flip the check;
            # otherwise the first read decides whether the header is there (later reads of the
            # same header, e.g. an HTTP-date fallback, only run once it was).
            checks = [site for site in group if isinstance(site[0], cst.Comparison)]
            for node, replacement, how in checks or group[:1]:
                yield Mutation(node, replacement, f"{header} header ignored: {how}")
