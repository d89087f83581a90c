"""enable-sdk-retries: ``max_retries=0`` on an SDK client is dropped, so the library retries again.

An agent that journals and bounds its own retries must switch the SDK's off: otherwise one
adapter call silently becomes up to three provider attempts, hidden from the journal, outside
the attempt limit, multiplied by the agent's own retries, and "why was this turn slow" has no
answer. Only a test that counts requests after a 5xx/429 notices the SDK default came back.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst
import libcst.matchers as m

from mutagent.anatomy.syntax import attribute_chain, is_number, keyword
from mutagent.anatomy.vocabulary import SDK_PACKAGES
from mutagent.mutation.context import SourceContext
from mutagent.mutation.operator import Example, Mutation, Operator
from mutagent.mutation.rewrite import without_arg


class EnableSdkRetries(Operator):
    name = "enable-sdk-retries"
    description = "max_retries=0 on an SDK client is dropped: the SDK's hidden retries come back."
    failure = (
        "The SDK retries 429/5xx/connection errors on its own (twice by default) before the agent sees "
        "anything: attempts multiply, Retry-After is handled outside the journal, the limit is exceeded."
    )
    hint = (
        "Script one 500 (or 429) followed by a success and assert exactly how many requests the fake "
        "server received, and that the agent journaled the retry itself."
    )
    examples = (
        Example(
            before=("import anthropic\n\nclient = anthropic.Anthropic(api_key='k', max_retries=0)\n"),
            after=("import anthropic\n\nclient = anthropic.Anthropic(api_key='k')\n"),
            note="anthropic sync client",
        ),
        Example(
            before=(
                "from openai import AsyncOpenAI as Client\n"
                "\n"
                "NO_SDK_RETRIES = 0\n"
                "\n"
                "def make(base_url):\n"
                "    return Client(\n"
                "        max_retries=NO_SDK_RETRIES,\n"
                "        base_url=base_url,\n"
                "    )\n"
            ),
            after=(
                "from openai import AsyncOpenAI as Client\n"
                "\n"
                "NO_SDK_RETRIES = 0\n"
                "\n"
                "def make(base_url):\n"
                "    return Client(\n"
                "        base_url=base_url,\n"
                "    )\n"
            ),
            note="aliased async openai client, the 0 in a module constant",
        ),
        Example(
            before=(
                "async def ask(client, messages):\n"
                "    return await client.with_options(max_retries=0, timeout=20).messages.create(\n"
                "        model='m', max_tokens=256, messages=messages\n"
                "    )\n"
            ),
            after=(
                "async def ask(client, messages):\n"
                "    return await client.with_options(timeout=20).messages.create(\n"
                "        model='m', max_tokens=256, messages=messages\n"
                "    )\n"
            ),
            note="per-request with_options on an async client",
        ),
        Example(
            before=(
                "import anthropic\n"
                "\n"
                "client = anthropic.AnthropicBedrock(aws_region='us-east-1', max_retries=3)\n"
                "policy = RetryPolicy(max_retries=0)\n"
            ),
            note="SDK retries already on, and an unrelated max_retries=0 of the agent's own policy",
        ),
        Example(
            before=(
                "import httpx2\n"
                "\n"
                "transport = httpx2.HTTPTransport(retries=0)\n"
                "session = make_session(max_retries=0)\n"
            ),
            note="not an SDK client",
        ),
    )

    def find(self, ctx: SourceContext) -> Iterator[Mutation]:
        for call in ctx.findall(m.Call()):
            arg = keyword(call, "max_retries")
            if arg is None or not _is_zero(ctx, arg.value):
                continue
            if _sdk_client(ctx, call) or attribute_chain(call.func)[-1:] == ["with_options"]:
                yield Mutation(
                    call,
                    without_arg(call, arg),
                    f"{ctx.code(call.func)}(...) loses max_retries=0: SDK retries on",
                )


def _sdk_client(ctx: SourceContext, call: cst.Call) -> bool:
    return any(name.split(".", 1)[0] in SDK_PACKAGES and "." in name for name in ctx.qualified_names(call))


def _is_zero(ctx: SourceContext, value: cst.BaseExpression) -> bool:
    """``0``, or a module-level constant assigned ``0``."""
    if is_number(value, 0):
        return True
    if isinstance(value, cst.Name):
        pattern = m.Assign(targets=[m.AssignTarget(m.Name(value.value))]) | m.AnnAssign(
            target=m.Name(value.value)
        )
        for statement in ctx.module.body:
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    if ctx.matches(small, pattern) and small.value is not None and is_number(small.value, 0):
                        return True
    return False
