"""The contract battery against correct adapters (it passes) and broken ones (each fails exactly
the check for its bug)."""

from __future__ import annotations

from pathlib import Path

import pytest
from contract_adapters import (
    AnthropicAdapter,
    AsyncAnthropicAdapter,
    ChatAdapter,
    ConfigError,
    ResponsesAdapter,
)

from mutagent.contract import CHECKS, AdapterContract

pytest_plugins = ["pytester"]


class TestAnthropicAdapterKeepsTheContract(AdapterContract):
    dialects = ("anthropic",)
    config_error = ConfigError

    def make_adapter(self, dialect, base_url):
        return AnthropicAdapter(base_url)


class TestAsyncAnthropicAdapterKeepsTheContract(AdapterContract):
    dialects = ("anthropic",)
    config_error = ConfigError

    def make_adapter(self, dialect, base_url):
        return AsyncAnthropicAdapter(base_url)


class TestResponsesAdapterKeepsTheContract(AdapterContract):
    dialects = ("responses",)
    config_error = ConfigError

    def make_adapter(self, dialect, base_url):
        return ResponsesAdapter(base_url)


class TestChatAdapterKeepsTheContract(AdapterContract):
    dialects = ("openai",)
    config_error = ConfigError

    def make_adapter(self, dialect, base_url):
        return ChatAdapter(base_url)


#: Broken adapter -> the one check it must fail (and a class attribute line it needs).
BROKEN = {
    "LeakyAdapter": ("early_stop", ""),
    "LingeringAdapter": ("end_marker_release", ""),
    "NoEndMarkerAdapter": ("missing_end_marker", ""),
    "DoubleFinishAdapter": ("one_finish", ""),
    "RawReasonAdapter": ("finish_reason", ""),
    "ErrorNotLastAdapter": ("error_last", ""),
    "NoNameCheckAdapter": ("tool_names", "mcp_names = 'accept'"),
    "NoDuplicateCheckAdapter": ("duplicate_tools", ""),
    "NoChoiceCheckAdapter": ("tool_choice", ""),
    "OverStrictAdapter": ("valid_tools", ""),
    "McpLenientAdapter": ("mcp_names", ""),
    "EmptyIsSuccessAdapter": ("cut_prefix", ""),
    "EmptyArgumentsAdapter": ("tool_arguments", ""),
    "AsyncLeakyReaderAdapter": ("early_stop", ""),
}


def test_each_broken_adapter_fails_exactly_the_check_for_its_bug(pytester: pytest.Pytester) -> None:
    pytester.syspathinsert(Path(__file__).parent)
    classes = "\n".join(
        f"""
class Test{name}(AdapterContract):
    dialects = ("anthropic",)
    config_error = contract_adapters.ConfigError
    release_seconds = 1.0
    cut_examples = 12
    {extra}

    def make_adapter(self, dialect, base_url):
        return contract_adapters.{name}(base_url)
"""
        for name, (_, extra) in BROKEN.items()
    )
    pytester.makepyfile(
        test_broken="import contract_adapters\nfrom mutagent.contract import AdapterContract\n" + classes
    )
    result = pytester.inline_run("-p", "no:randomly", "-p", "no:cacheprovider")
    failed: dict[str, set[str]] = {name: set() for name in BROKEN}
    method_to_check = {method: check for check, method in CHECKS.items()}
    for report in result.getreports("pytest_runtest_logreport"):
        if report.failed:
            cls, method = report.nodeid.split("::")[1:3]
            failed[cls.removeprefix("Test")].add(method_to_check[method.split("[")[0]])
    passed = [r for r in result.getreports("pytest_runtest_logreport") if r.when == "call" and r.passed]
    assert failed == {name: {check} for name, (check, _) in BROKEN.items()}
    assert len(passed) == len(BROKEN) * (len(CHECKS) - 1)


def test_exclude_drops_checks_and_rejects_unknown_names() -> None:
    class Partial(AdapterContract):
        dialects = ("anthropic",)
        exclude = {"early_stop"}

    assert Partial.test_stopping_early_releases_the_response is None
    assert callable(Partial.test_one_finish_and_nothing_after_it)
    with pytest.raises(TypeError, match="unknown checks"):

        class Typo(AdapterContract):
            exclude = {"early-stop"}

    with pytest.raises(TypeError, match="unknown dialects"):

        class Wrong(AdapterContract):
            dialects = ("gemini",)
