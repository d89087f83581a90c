"""Hints that fit the code: the dialect a module speaks, and survivor hints written for it."""

from __future__ import annotations

import textwrap
from dataclasses import replace

import pytest
from rich.console import Console
from testkit.sample_runs import sample_run_data

from mutagent.model import Status
from mutagent.reports.dialect import (
    ANTHROPIC,
    OPENAI_CHAT,
    OPENAI_RESPONSES,
    UNKNOWN,
    Dialect,
    detect_dialect,
    dialect_of_file,
)
from mutagent.reports.hints import RECIPES, advice_for, hint_for
from mutagent.reports.junit import to_junit
from mutagent.reports.opinfo import operator_info
from mutagent.reports.terminal import render_mutant


def code(text: str) -> str:
    return textwrap.dedent(text).lstrip()


ANTHROPIC_STREAMING = code(
    """
    from anthropic import Anthropic as Client

    def turn(client: Client, messages):
        with client.messages.stream(model="m", max_tokens=10, messages=messages) as stream:
            return stream.get_final_message()
    """
)
OPENAI_CHAT_ASYNC = code(
    """
    import openai

    async def turn(client: openai.AsyncOpenAI, messages):
        reply = await client.chat.completions.create(model="m", messages=messages)
        return reply.choices[0].message
    """
)
OPENAI_RESPONSES_STREAMING = code(
    """
    from openai import OpenAI

    def turn(client: OpenAI, items):
        events = client.responses.create(model="m", input=items, stream=True)
        return [e for e in events]
    """
)
RAW_HTTPX_CHAT = code(
    """
    import httpx

    def turn(base_url, messages):
        with httpx.Client() as http:
            body = {"messages": messages, "stream": True}
            with http.stream("POST", base_url + "/v1/chat/completions", json=body) as r:
                return list(r.iter_lines())
    """
)
RAW_AIOHTTP_MESSAGES = code(
    """
    import aiohttp

    async def turn(session: aiohttp.ClientSession, url, body):
        async with session.post(url + "/v1/messages", json=body) as response:
            return await response.json()
    """
)
NO_MODEL = "def add(a, b):\n    return a + b\n"


@pytest.mark.parametrize(
    "source, expected",
    [
        (ANTHROPIC_STREAMING, Dialect(ANTHROPIC, sdk=True, streaming=True, is_async=False)),
        (OPENAI_CHAT_ASYNC, Dialect(OPENAI_CHAT, sdk=True, streaming=False, is_async=True)),
        (OPENAI_RESPONSES_STREAMING, Dialect(OPENAI_RESPONSES, sdk=True, streaming=True, is_async=False)),
        (RAW_HTTPX_CHAT, Dialect(OPENAI_CHAT, sdk=False, streaming=True, is_async=False)),
        (RAW_AIOHTTP_MESSAGES, Dialect(ANTHROPIC, sdk=False, streaming=False, is_async=True)),
        (NO_MODEL, Dialect(UNKNOWN, sdk=True, streaming=False, is_async=False)),
        ("def broken(:\n", Dialect()),
    ],
)
def test_detect_dialect(source: str, expected: Dialect) -> None:
    assert detect_dialect(source) == expected


def test_a_module_without_model_calls_takes_its_package_dialect() -> None:
    sources = {"agent/loop.py": OPENAI_CHAT_ASYNC, "agent/tools.py": NO_MODEL}
    assert dialect_of_file(sources, "agent/tools.py").api == OPENAI_CHAT
    assert dialect_of_file(sources, "agent/loop.py") == detect_dialect(OPENAI_CHAT_ASYNC)


RESPONSES_AGENT_WITH_OPENAI_ERRORS = code(
    """
    import openai
    from openai import APIConnectionError, APIStatusError, APITimeoutError, OpenAI, RateLimitError

    RETRYABLE = (APIConnectionError, APITimeoutError, RateLimitError, openai.InternalServerError)

    class Agent:
        def __init__(self, client: OpenAI):
            self.client = client

        def turn(self, items):
            try:
                events = self.client.responses.create(model="m", input=items, tools=[], stream=True)
            except APIStatusError as error:
                raise RuntimeError(error.status_code)
            return list(events)
    """
)


def test_a_responses_call_decides_whatever_exception_names_are_imported() -> None:
    """Seven ``openai.X`` names against one ``responses.create`` call: the call decides."""
    found = detect_dialect(RESPONSES_AGENT_WITH_OPENAI_ERRORS)
    assert found == Dialect(OPENAI_RESPONSES, sdk=True, streaming=True, is_async=False)
    # a sibling that only names openai's exceptions serves the same Responses loop
    sources = {
        "agent/loop.py": RESPONSES_AGENT_WITH_OPENAI_ERRORS,
        "agent/retry.py": "import openai\n\nRETRY = (openai.RateLimitError, openai.APIConnectionError)\n",
    }
    assert dialect_of_file(sources, "agent/retry.py").api == OPENAI_RESPONSES
    for operator in RECIPES:
        advice = advice_for(operator, dialect_of_file(sources, "agent/loop.py"))
        assert "Chat Completions" not in advice and "OpenAI Responses via the SDK" in advice, operator


@pytest.mark.parametrize(
    "call, api",
    [
        ("client.chat.completions.create(model='m', messages=[])", OPENAI_CHAT),
        ("client.messages.create(model='m', messages=[], max_tokens=5)", ANTHROPIC),
        ("client.messages.stream(model='m', messages=[], max_tokens=5)", ANTHROPIC),
        ("client.responses.create(model='m', input=[])", OPENAI_RESPONSES),
    ],
)
def test_the_api_call_decides_the_dialect(call: str, api: str) -> None:
    source = f"import openai\nimport anthropic\n\ndef turn(client):\n    return {call}\n"
    assert detect_dialect(source).api == api


def test_an_sdks_own_transport_layer_gets_a_transport_recipe_not_an_agent() -> None:
    transport = code(
        """
        import httpx
        from ._exceptions import APIStatusError

        class BaseClient:
            def _retry_request(self, options, retries_taken):
                return self._client.send(options, stream=False)
        """
    )
    sources = {"src/anthropic/_base_client.py": transport}
    found = dialect_of_file(sources, "src/anthropic/_base_client.py")
    assert found.transport and found.sdk_name == "anthropic"
    for operator in ("ignore-retry-after", "unbounded-retry", "misclassify-retryable"):
        advice = advice_for(operator, found, operator_info(operator).hint)
        assert "transport layer" in advice and "anthropic client" in advice
        assert "max_retries=0" not in advice and "run_your_loop" not in advice
    openai_sources = {"openai/_base_client.py": transport}
    assert "openai client" in advice_for(
        "unbounded-retry", dialect_of_file(openai_sources, "openai/_base_client.py")
    )


def test_every_agent_operator_has_a_recipe() -> None:
    from mutagent.mutation.registry import select_operators

    names = {op.name for op in select_operators("agent")}
    assert names <= set(RECIPES), names - set(RECIPES)


ANTHROPIC_WORDS = ("input_json_delta", "message_stop", "content_block", "journal", "toolu_")


@pytest.mark.parametrize("operator", sorted(RECIPES))
def test_a_non_streaming_openai_loop_gets_openai_words_in_prose(operator: str) -> None:
    advice = advice_for(operator, detect_dialect(OPENAI_CHAT_ASYNC))
    assert not any(word in advice for word in ANTHROPIC_WORDS), advice
    assert "mid-stream" not in advice and "cut the stream" not in advice
    assert "\n" not in advice and "fake_model.script(" not in advice  # words, never an unverified test
    assert "OpenAI Chat Completions via the SDK, not streaming, async" in advice


def test_the_recipe_names_what_the_mutant_changed() -> None:
    """The status the mutant drops from the retryable set, the header it stops reading."""
    data = sample_run_data()
    mutant = replace(
        data.mutants[0],
        operator="misclassify-retryable",
        original="RETRYABLE = frozenset({408, 409, 429})",
        replacement="RETRYABLE = frozenset({408, 429})",
    )
    d = detect_dialect(ANTHROPIC_STREAMING)
    assert "HTTP 409" in advice_for("misclassify-retryable", d, mutant=mutant)
    assert "503" not in advice_for("misclassify-retryable", d, mutant=mutant)
    error_type = replace(
        mutant, original='{"api_error", "overloaded_error"}', replacement='{"overloaded_error"}'
    )
    assert "api_error" in advice_for("misclassify-retryable", d, mutant=error_type)
    header = replace(mutant, original='headers.get("retry-after-ms")', replacement="None")
    assert "`retry-after-ms`" in advice_for(
        "ignore-retry-after", detect_dialect(OPENAI_CHAT_ASYNC), mutant=header
    )


def test_a_generic_operator_gets_its_own_hint_in_code_that_calls_no_model() -> None:
    own = operator_info("generic-number").hint
    assert own
    plain = dialect_of_file({"calc/core.py": NO_MODEL}, "calc/core.py")
    assert not plain.known
    assert advice_for("generic-number", plain, own) == own  # no model call, no fake server
    loop = dialect_of_file({"agent/loop.py": OPENAI_CHAT_ASYNC, "agent/util.py": NO_MODEL}, "agent/util.py")
    advice = advice_for("generic-number", loop, own)
    assert advice.startswith(own) and "OpenAI Chat Completions" in advice


def test_streaming_hints_speak_of_their_own_events() -> None:
    d = detect_dialect(ANTHROPIC_STREAMING)
    assert "input_json_delta" in advice_for("accept-truncated-tool-arguments", d)
    assert "`message_stop`" in advice_for("skip-stop-marker-check", d)
    assert "b.cut" in advice_for("drop-disconnect-handling", d)
    responses = detect_dialect(OPENAI_RESPONSES_STREAMING)
    assert "response.function_call_arguments.delta" in advice_for(
        "accept-truncated-tool-arguments", responses
    )
    assert "`response.completed`" in advice_for("skip-stop-marker-check", responses)
    assert "input" in advice_for("keep-partial-history", responses)


def test_reports_show_the_fitted_advice() -> None:
    data = sample_run_data()
    survivor = next(m for m in data.mutants if data.result_of(m).status is Status.SURVIVED)
    mutant = replace(survivor, operator="drop-disconnect-handling")
    data = replace(
        data,
        mutants=[mutant if m.id == survivor.id else m for m in data.mutants],
        sources={**data.sources, mutant.file: OPENAI_CHAT_ASYNC},
    )
    hint = hint_for(data, mutant)
    assert (
        "OpenAI Chat Completions via the SDK, not streaming, async" in hint.advice
        and "b.drop()" in hint.advice
    )
    assert hint.code == ""
    console = Console(record=True, width=100, color_system=None)
    console.print(render_mutant(data, mutant))
    text = " ".join(console.export_text().split())
    assert "OpenAI Chat Completions via the SDK" in text
    assert "b.drop()" in to_junit(data)
