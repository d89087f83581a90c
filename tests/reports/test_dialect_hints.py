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
from mutagent.reports.hints import RECIPES, hint_for, hint_for_dialect
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


def test_every_agent_operator_has_a_recipe() -> None:
    from mutagent.mutation.registry import select_operators

    names = {op.name for op in select_operators("agent")}
    assert names <= set(RECIPES), names - set(RECIPES)


ANTHROPIC_WORDS = ("input_json_delta", "message_stop", "content_block", "journal", "toolu_")


@pytest.mark.parametrize("operator", sorted(RECIPES))
def test_a_non_streaming_openai_loop_gets_openai_words_and_an_openai_script(operator: str) -> None:
    hint = hint_for_dialect(operator, detect_dialect(OPENAI_CHAT_ASYNC))
    advice, _, script = hint.partition("\n")
    assert not any(word in hint for word in ANTHROPIC_WORDS), hint
    assert "mid-stream" not in advice and "cut the stream" not in advice
    assert "fake_model.script(" in script
    if operator == "enable-sdk-retries":  # the code under test builds its own client
        assert "your_client_factory(base_url=fake_model.openai_base_url)" in script
    else:
        assert 'AsyncOpenAI(base_url=fake_model.openai_base_url, api_key="test", max_retries=0)' in script
    assert "result = await run_your_loop(client" in script
    assert script.splitlines()[-1].startswith(("assert", "with"))  # ends with the check that kills it


@pytest.mark.parametrize(
    "source, client",
    [
        (ANTHROPIC_STREAMING, "client = Anthropic(base_url=fake_model.base_url"),
        (OPENAI_RESPONSES_STREAMING, "client = OpenAI(base_url=fake_model.openai_base_url"),
        (
            RAW_HTTPX_CHAT,
            'base_url = fake_model.openai_base_url  # your loop POSTs to base_url + "/chat/completions"',
        ),
        (
            RAW_AIOHTTP_MESSAGES,
            'base_url = fake_model.base_url  # your loop POSTs to base_url + "/v1/messages"',
        ),
    ],
)
def test_the_script_points_the_code_at_the_fake_server_in_its_dialect(source: str, client: str) -> None:
    hint = hint_for_dialect("drop-disconnect-handling", detect_dialect(source))
    assert client in hint


def test_a_generic_operator_gets_a_fake_server_script_only_in_code_that_calls_a_model() -> None:
    own = operator_info("generic-number").hint
    assert own
    plain = dialect_of_file({"calc/core.py": NO_MODEL}, "calc/core.py")
    assert not plain.known
    assert hint_for_dialect("generic-number", plain, own) == own  # no model call, no fake server
    loop = dialect_of_file({"agent/loop.py": OPENAI_CHAT_ASYNC, "agent/util.py": NO_MODEL}, "agent/util.py")
    hint = hint_for_dialect("generic-number", loop, own)
    assert hint.startswith(own) and "AsyncOpenAI(base_url=fake_model.openai_base_url" in hint
    # an agent operator keeps its script even where no API is recognised: it matched a loop
    assert "fake_model.script(" in hint_for_dialect("unbounded-retry", plain)


def test_streaming_anthropic_hints_speak_of_its_events() -> None:
    d = detect_dialect(ANTHROPIC_STREAMING)
    assert "input_json_delta" in hint_for_dialect("accept-truncated-tool-arguments", d)
    assert "`message_stop`" in hint_for_dialect("skip-stop-marker-check", d)
    assert "b.cut(" in hint_for_dialect("drop-disconnect-handling", d)
    responses = detect_dialect(OPENAI_RESPONSES_STREAMING)
    assert "response.function_call_arguments.delta" in hint_for_dialect(
        "accept-truncated-tool-arguments", responses
    )
    assert "`response.completed`" in hint_for_dialect("skip-stop-marker-check", responses)
    assert 'body["input"]' in hint_for_dialect("keep-partial-history", responses)


def test_reports_show_the_fitted_hint() -> None:
    data = sample_run_data()
    survivor = next(m for m in data.mutants if data.result_of(m).status is Status.SURVIVED)
    mutant = replace(survivor, operator="drop-disconnect-handling")
    data = replace(
        data,
        mutants=[mutant if m.id == survivor.id else m for m in data.mutants],
        sources={**data.sources, mutant.file: OPENAI_CHAT_ASYNC},
    )
    hint = hint_for(data, mutant)
    assert "OpenAI Chat Completions via the SDK, not streaming, async" in hint and "b.drop()" in hint
    console = Console(record=True, width=100, color_system=None)
    console.print(render_mutant(data, mutant))
    text = console.export_text()
    assert "b.drop()" in text and "AsyncOpenAI(base_url=fake_model.openai_base_url" in " ".join(text.split())
    assert "b.drop()" in to_junit(data)
