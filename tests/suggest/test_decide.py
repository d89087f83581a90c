"""From observations to a candidate (``suggest.probe`` and ``suggest.decide``): what held on the
original is kept, what no longer holds is rewritten to what the original did, the candidate ends
at its first kill, and without a difference there is no candidate."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest

from mutagent.suggest.build import rewrite
from mutagent.suggest.decide import candidate_name, decide
from mutagent.suggest.probe import Probe
from mutagent.suggest.testsource import read_test

MODULE = """
import pytest

from mutagent.fakeserver import behaviours as b
from agent.loop import ask


def test_retried(fake_model, agent):
    fake_model.script(b.ok(text="hi"))

    assert agent.ask("hello") == "hi"
    assert fake_model.request_count == 1
    assert agent.sleeps == []
"""


@pytest.fixture
def rw(tmp_path: Path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_m.py").write_text(textwrap.dedent(MODULE))
    src = read_test(tmp_path, "tests/test_m.py::test_retried")
    return rewrite(src, "b.http_error(500)", 0)


class FakeServer:
    def __init__(self, count: int) -> None:
        self.requests = [
            SimpleNamespace(time=float(i), body={"n": 1}, outcome="scripted") for i in range(count)
        ]

    def tool_results(self, index: int) -> dict[str, str]:
        return {}

    def problems(self) -> list[str]:
        return []


def observe(tmp_path: Path, returned: object, sleeps: list[float], count: int) -> dict:
    """A probe run of the rewritten test, played by hand: what ``Probe`` records."""
    record = tmp_path / "record.json"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MUTAGENT_EXPLORE", json.dumps({"fault": None, "record": str(record)}))
        probe = Probe("k")

    def answer() -> object:
        if isinstance(returned, Exception):
            raise returned
        return returned

    server = FakeServer(count)
    probe.compare(0, [answer, lambda: "hi"], ["=="])
    probe.compare(1, [lambda: len(server.requests), lambda: 1], ["=="])
    probe.compare(2, [lambda: sleeps, lambda: []], ["=="])
    probe.finish(server)
    return json.loads(Path(f"{record}.probe.json").read_text())


def test_what_still_holds_is_kept_and_what_changed_is_what_the_original_did(rw, tmp_path) -> None:
    originals = [observe(tmp_path, "hi", [0.5], 2) for _ in range(2)]
    mutant = observe(tmp_path, "hi", [], 2)  # the mutant retries without waiting
    candidate = decide(rw, originals, mutant, name="test_retried_with_http_500", docstring="With a 500.")
    assert candidate is not None
    lines = candidate.code.splitlines()
    assert lines[0] == "def test_retried_with_http_500(fake_model, agent):"
    assert '    fake_model.script(b.http_error(500), b.ok(text="hi"))' in lines
    assert '    assert agent.ask("hello") == "hi"' in lines  # held on the original: kept as written
    assert "    assert fake_model.request_count == 2" in lines  # rewritten: the original sent two
    assert lines[-1] == "    assert agent.sleeps == [0.5]" and "sleeps" in candidate.kills
    compile(candidate.code, "candidate", "exec")


def test_an_exception_of_the_original_goes_under_pytest_raises(rw, tmp_path) -> None:
    originals = [observe(tmp_path, KeyError("gone"), [], 1) for _ in range(2)]
    mutant = observe(tmp_path, "hi", [], 1)
    candidate = decide(rw, originals, mutant, name="test_x", docstring="d")
    assert candidate is not None
    assert '    with pytest.raises(KeyError):\n        agent.ask("hello")\n' in candidate.code
    assert candidate.code.rstrip().endswith('agent.ask("hello")')  # it ends at its first kill


def test_the_server_record_decides_when_no_assertion_of_the_test_does(rw, tmp_path) -> None:
    originals = [observe(tmp_path, "hi", [], 2) for _ in range(2)]
    same = decide(rw, originals, observe(tmp_path, "hi", [], 2), name="test_x", docstring="d")
    assert same is None  # nothing tells the mutant apart: no candidate
    more = dict(observe(tmp_path, "hi", [], 2))
    more["requests"] = more["requests"] + more["requests"][:1]  # the mutant sent one request more
    more["entries"]["1"] = originals[0]["entries"]["1"]  # (its count assertion happens to agree)
    candidate = decide(rw, originals, more, name="test_x", docstring="d")
    assert candidate is not None and "the mutant sends 3 requests" in candidate.kills


def test_values_that_differ_between_original_runs_are_never_asserted(rw, tmp_path) -> None:
    originals = [observe(tmp_path, "hi", [0.5], 2), observe(tmp_path, "hi", [0.7], 2)]
    candidate = decide(rw, originals, observe(tmp_path, "hi", [], 2), name="test_x", docstring="d")
    assert candidate is None or "sleeps ==" not in candidate.code


def test_candidate_names_are_readable_and_short() -> None:
    name = candidate_name(
        "test_timeout_and_conflict_statuses_are_retried", "connection reset before the first byte"
    )
    assert name.startswith("test_timeout_and_conflict") and name.endswith(
        "_with_connection_reset_before_the_first_byte"
    )
    assert len(name) <= 79 and "__" not in name
    assert candidate_name("test_x", "") == "test_x_strictly"
