"""``mutagent suggest`` end to end on a tiny target: a survivor no test of the suite reaches with
the right fault gets a test built from the suite's own test, verified on the original and on the
mutant; the written module kills the mutant in the next ``mutagent run``, and every report shows
the verified test as the survivor's hint."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from testkit.engine_targets import HandMutant, HandMutants, write_target

from mutagent.cli import build_parser, main
from mutagent.commands import run as run_command
from mutagent.model import Status
from mutagent.reports.hints import hint_for
from mutagent.store import load_run_data

AGENT = {
    "agent/__init__.py": "",
    "agent/loop.py": """
        import json
        import urllib.error
        import urllib.request

        RETRYABLE = (429, 500, 529)


        class GaveUp(Exception):
            pass


        def ask(base_url, prompt, sleeps, attempts=3):
            messages = [{"role": "user", "content": prompt}]
            body = json.dumps({"model": "m", "max_tokens": 16, "messages": messages}).encode()
            for attempt in range(attempts):
                request = urllib.request.Request(base_url + "/v1/messages", data=body, method="POST")
                try:
                    with urllib.request.urlopen(request, timeout=5) as response:
                        reply = json.loads(response.read())
                except urllib.error.HTTPError as error:
                    if error.code not in RETRYABLE:
                        raise GaveUp(error.code) from error
                    sleeps.append(float(error.headers.get("retry-after") or 0.1))
                    continue
                return "".join(block["text"] for block in reply["content"])
            raise GaveUp("no attempt left")
        """,
    "tests/__init__.py": "",
    "tests/test_loop.py": """
        from mutagent.fakeserver import behaviours as b

        from agent.loop import ask


        def test_answers(fake_model):
            sleeps = []
            fake_model.script(b.ok(text="hi"))

            assert ask(fake_model.base_url, "hello", sleeps) == "hi"
            assert sleeps == []
        """,
}
DROPS_429 = HandMutant(
    "agent/loop.py", "RETRYABLE = (429, 500, 529)", "RETRYABLE = (500, 529)", operator="misclassify-retryable"
)


def mutagent_run(root: Path) -> int:
    args = build_parser().parse_args(["run", str(root), "--workers", "2", "--explore-budget", "30"])
    return run_command.run(args, mutant_source=HandMutants([DROPS_429]))


@pytest.fixture(scope="module")
def suggested(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, argparse.Namespace]:
    root = write_target(tmp_path_factory.mktemp("suggest") / "project", AGENT)
    assert mutagent_run(root) == 0
    assert [r.status for r in load_run_data(root).results.values()] == [Status.SURVIVED]
    assert (
        main(["suggest", str(root), "--write", str(root / "tests" / "test_suggested.py"), "--runs", "3"]) == 0
    )
    return root, load_run_data(root)


def test_the_written_test_is_the_suites_test_with_the_fault_the_mutant_drops(suggested) -> None:
    root, data = suggested
    written = (root / "tests" / "test_suggested.py").read_text()
    assert "def test_answers_with_http_429_retry_after(fake_model):" in written
    assert 'fake_model.script(b.http_error(429, headers={"retry-after": "1"}), b.ok(text="hi"))' in written
    assert "from mutagent.fakeserver import behaviours as b" in written
    assert "from .test_loop import ask" not in written and "from agent.loop import ask" in written
    assert "mutagent.suggest" not in written and "_mutagent_probe" not in written  # no internals
    assert len(written.splitlines()) <= 40


def test_the_verified_test_is_stored_and_every_report_shows_it(suggested) -> None:
    root, data = suggested
    (mutant,) = data.mutants
    hint = hint_for(data, mutant)
    assert hint.suggestion is not None and hint.suggestion.original_runs == 3
    assert "def test_answers_with_http_429_retry_after" in hint.code
    assert "agent.loop.GaveUp" in hint.suggestion.mutant_failure


def test_the_written_test_kills_its_mutant_in_the_next_run(suggested) -> None:
    root, _ = suggested
    assert mutagent_run(root) == 0
    (result,) = load_run_data(root).results.values()
    assert result.status is Status.KILLED
    assert result.killed_by == ["tests/test_suggested.py::test_answers_with_http_429_retry_after"]
