"""The second demo target (``tests/fixtures/responses_agent``: OpenAI Responses through the
``openai`` SDK, streaming, function tools, retries honouring ``retry-after``, a turn limit): its
hints name the Responses API, and ``mutagent suggest`` verifies a killing test for at least 70 %
of the survivors its own suite leaves."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mutagent.cli import main
from mutagent.reports.dialect import OPENAI_RESPONSES, dialect_of_file
from mutagent.reports.hints import RECIPES, advice_for, hint_for
from mutagent.reports.stats import undetected_mutants
from mutagent.store import load_run_data

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "responses_agent"


def sources() -> dict[str, str]:
    return {path.name: path.read_text() for path in FIXTURE.glob("*.py")}


def test_its_hints_name_the_responses_api() -> None:
    """``agent.py`` imports five of openai's exception classes and makes one responses.create call."""
    found = sources()
    for file in ("agent.py", "retry.py"):
        dialect = dialect_of_file(found, file)
        assert dialect.api == OPENAI_RESPONSES and dialect.streaming and not dialect.transport
        for operator in RECIPES:
            advice = advice_for(operator, dialect)
            assert "OpenAI Responses via the SDK, streaming" in advice and "Chat Completions" not in advice


@pytest.mark.slow
def test_suggest_verifies_a_killing_test_for_most_survivors(tmp_path: Path) -> None:
    root = tmp_path / "responses_agent"
    shutil.copytree(FIXTURE, root, ignore=shutil.ignore_patterns(".mutagent", "__pycache__"))
    assert main(["run", str(root), "--workers", "2"]) == 0
    survivors = undetected_mutants(load_run_data(root))
    assert len(survivors) >= 5  # the suite leaves work to do
    assert main(["suggest", str(root), "--workers", "2", "--runs", "3"]) == 0
    data = load_run_data(root)
    verified = [m for m in survivors if m.id in data.suggestions]
    assert len(verified) >= 0.7 * len(survivors), [m.operator for m in survivors if m not in verified]
    for mutant in survivors:
        hint = hint_for(data, mutant)
        assert "OpenAI Responses via the SDK" in hint.advice
        assert bool(hint.code) is (mutant in verified)  # code only for a verified test
