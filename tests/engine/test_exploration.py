"""Fault exploration: which faults fit which script, the order and budget of the runs, what a run
means, and a real exploration of a tiny agent that handles a 429 and crashes on a reset."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console
from testkit.engine_targets import write_target

from mutagent.config import EngineConfig
from mutagent.engine.orchestration.exploration import FORK_COST, _expected, _StallCost
from mutagent.engine.orchestration.runner import Engine
from mutagent.explore.catalogue import Step, faults_for, fits, scripts
from mutagent.explore.results import (
    CRASH,
    GAVE_UP,
    HANG,
    MALFORMED_REQUEST,
    RECOVERED,
    WENT_ON,
    Exploration,
    ExploredRun,
)
from mutagent.explore.schedule import STALL_ALLOWANCE, Budget, Candidate, candidates
from mutagent.fakeserver.inject import CUT_TEXT, CUT_TOOL_ARGS, HTTP, LENGTH, RESET, STALL, Fault
from mutagent.store import Store, load_run_data

LOG = [
    {"test": "t::plain", "dialect": "anthropic", "fault": "tool-call", "position": "complete", "step": 0,
     "stream": True, "kind": "ok", "text": False, "tools": 1},
    {"test": "t::plain", "dialect": "anthropic", "fault": "ok", "position": "complete", "step": 1,
     "stream": True, "kind": "ok", "text": True, "tools": 0},
    {"test": "t::own429", "dialect": "anthropic", "fault": "http-429", "position": "before-first-byte",
     "step": 0, "stream": True, "kind": "http_error", "text": False, "tools": 0},
    {"test": "t::own429", "dialect": "anthropic", "fault": "ok", "position": "complete", "step": 1,
     "stream": True, "kind": "ok", "text": True, "tools": 0},
    {"test": "t::plain", "dialect": "anthropic", "fault": "ok", "position": "complete", "step": 1,
     "stream": True, "kind": "ok", "text": True, "tools": 0},  # a worker ran the batch twice
]  # fmt: skip


def test_scripts_come_from_the_fault_log_of_passing_tests() -> None:
    found = scripts(LOG, ["t::plain", "t::own429", "t::no_fake_model"])
    assert list(found) == ["t::plain", "t::own429"]
    assert [s.tools for s in found["t::plain"].steps] == [1, 0] and found["t::plain"].plain
    assert not found["t::own429"].plain


def test_a_fault_fits_a_step_only_where_it_can_strike() -> None:
    tool_turn = Step(0, "anthropic", True, "ok", text=False, tools=1)
    text_turn = Step(1, "anthropic", False, "ok", text=True, tools=0)
    scripted_error = Step(2, "anthropic", True, "http_error", text=False, tools=0)
    assert fits(Fault(CUT_TOOL_ARGS), tool_turn) and not fits(Fault(CUT_TOOL_ARGS), text_turn)
    assert not fits(Fault(CUT_TEXT), tool_turn)  # no text to cut in
    assert not fits(Fault(CUT_TEXT), text_turn)  # not streamed
    assert fits(Fault(LENGTH), text_turn) and not fits(Fault(LENGTH), scripted_error)
    assert fits(Fault(HTTP, status=500), scripted_error) and fits(Fault(RESET), text_turn)
    assert {f.status for f in faults_for("openai") if f.kind == HTTP} == {429, 500, 503}
    assert 529 in {f.status for f in faults_for("anthropic")}


def test_every_fault_runs_once_before_any_runs_twice_and_stalls_come_last() -> None:
    found = scripts(LOG, ["t::plain", "t::own429"])
    planned = list(candidates(found, lambda test: 0.1, {"t::plain": 50, "t::own429": 80}))
    firsts: dict[str, int] = {}
    for position, candidate in enumerate(planned):
        firsts.setdefault(candidate.fault.label, position)
    assert max(firsts.values()) < len(firsts)  # round one: each fault once
    first_round = planned[: len(firsts)]
    assert first_round[-1].fault.kind == STALL
    # a test that scripts no fault of its own first, though the other runs more lines
    assert all(c.test == "t::plain" for c in first_round)
    http = [c for c in planned if c.fault.kind == HTTP and c.fault.status == 500]
    assert [c.fault.at for c in http[:2]] == [0, 1]  # the second run strikes a later request


def test_the_budget_takes_a_run_only_when_its_cost_fits() -> None:
    budget = Budget(1.0)
    assert budget.take(0.6) and not budget.take(0.6) and budget.left_out == 1
    budget.settle(0.6, 0.3)
    assert budget.take(0.6) and budget.spent == 0.3


def test_a_stall_that_does_not_fit_the_allowance_waits_for_the_measured_cost() -> None:
    """Two stalls, one running: the second is not dropped on the allowance's guess but tried again
    once the first has told what a stall really costs here."""
    stall = _StallCost()
    first, second = (Candidate("t::plain", Fault(STALL, at=at), STALL_ALLOWANCE) for at in (0, 1))
    assert not stall.defer(first)  # nothing running to learn from: dropped as before
    stall.in_flight = 1
    assert stall.defer(second) and list(stall.retry()) == []  # nothing measured yet
    stall.measure(0.4)
    assert stall.measured == 0.4 and stall.in_flight == 0
    assert list(stall.retry()) == [second] and list(stall.retry()) == []
    assert _expected(second, 0.1, stall.measured) == pytest.approx(0.1 + FORK_COST + 0.4)
    assert _expected(second, 0.1) == pytest.approx(0.1 + FORK_COST + STALL_ALLOWANCE)


def run(fault: Fault, outcome: str, **fields) -> ExploredRun:
    return ExploredRun("t::x", fault, outcome, requests=[{"t": 0.0, "outcome": "scripted"}] * 2, **fields)


def test_what_a_run_says_about_the_loop() -> None:
    f = Fault(RESET)
    assert run(f, "passed").verdict(["agent"]) == RECOVERED
    assert run(f, "timeout").verdict(["agent"]) == HANG
    assert run(f, "failed", raised="KeyError").verdict(["agent"]) == WENT_ON  # the test's own lookup
    escaped = run(f, "failed", raised="http.client.RemoteDisconnected", through=["agent/loop.py:12"])
    assert escaped.verdict(["agent"]) == CRASH
    own = run(f, "failed", raised="agent.loop.GaveUp", through=["agent/loop.py:20"])
    assert own.verdict(["agent"]) == GAVE_UP
    bad = ExploredRun(
        "t::x", f, "failed", fault_request=0, requests=[{"t": 0.0}, {"t": 0.1, "outcome": "violation"}]
    )
    assert bad.verdict(["agent"]) == MALFORMED_REQUEST
    assert run(f, "not-served").served is False


def test_handling_code_is_what_runs_only_under_the_fault() -> None:
    runs = [
        ExploredRun("t::a", Fault(HTTP, status=500), "passed", new={"a/loop.py": [10, 11]}),
        ExploredRun("t::b", Fault(HTTP, status=500, at=1), "passed", new={"a/loop.py": [11, 12]}),
        ExploredRun("t::a", Fault(RESET), "passed", new={}),
    ]
    exploration = Exploration(runs, baseline_time=1.0, budget=1.0, spent=0.5)
    reports = {r.label: r for r in exploration.by_fault()}
    assert reports["HTTP 500"].where() == "a/loop.py:10-12"
    assert reports["connection reset before the first byte"].where() == ""
    assert exploration.handling_faults("a/loop.py", [12]) == ["HTTP 500"]
    assert (
        Exploration.from_json(json.loads(json.dumps(exploration.to_json()))).to_json()
        == exploration.to_json()
    )


AGENT = {
    "agent/__init__.py": "",
    "agent/loop.py": """
        import json
        import time
        import urllib.error
        import urllib.request


        class GaveUp(Exception):
            pass


        def ask(base_url, prompt, sleep=time.sleep, attempts=3):
            messages = [{"role": "user", "content": prompt}]
            body = json.dumps({"model": "m", "max_tokens": 16, "messages": messages})
            for attempt in range(attempts):
                request = urllib.request.Request(base_url + "/v1/messages", data=body.encode(), method="POST")
                try:
                    with urllib.request.urlopen(request, timeout=5) as response:
                        reply = json.loads(response.read())
                except urllib.error.HTTPError as error:
                    if error.code not in (429, 500, 529):  # RETRYABLE
                        raise GaveUp(error.code) from error
                    sleep(float(error.headers.get("retry-after") or 0))  # WAIT
                    continue
                return "".join(block["text"] for block in reply["content"])
            raise GaveUp("no attempt left")
        """,
    "tests/test_loop.py": """
        from mutagent.fakeserver import behaviours as b

        from agent.loop import ask


        def test_answers(fake_model):
            fake_model.script(b.ok(text="hi"))
            assert ask(fake_model.base_url, "hello", sleep=lambda s: None) == "hi"
        """,
}


def line_of(root: Path, marker: str) -> int:
    lines = (root / "agent/loop.py").read_text().splitlines()
    return next(number for number, text in enumerate(lines, 1) if marker in text)


@pytest.fixture(scope="module")
def explored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Exploration]:
    root = write_target(tmp_path_factory.mktemp("explore") / "project", AGENT)
    # a one-test suite: its time would not pay for one run of each fault
    config = EngineConfig(root=root, workers=1, explore_only=True, explore_budget=20.0)
    Engine(config, Console(file=io.StringIO())).run()
    store = Store.open(root)
    try:
        return root, Exploration.from_json(json.loads(store.get_meta("exploration") or "{}"))
    finally:
        store.close()


def test_exploration_finds_the_429_handling_and_the_crash_on_a_reset(explored) -> None:
    root, exploration = explored
    reports = {r.label: r for r in exploration.by_fault()}
    handling = reports["HTTP 429 + retry-after"].handling["agent/loop.py"]
    assert line_of(root, "# WAIT") in handling and line_of(root, "# RETRYABLE") in handling
    assert line_of(root, "return ") not in handling  # the test runs that line anyway
    reset = reports["connection reset before the first byte"]
    assert reset.findings == {CRASH: ["tests/test_loop.py::test_answers"]}
    crashed = next(r for r in reset.runs if r.verdict(exploration.own_modules) == CRASH)
    assert crashed.through and crashed.through[0].startswith("agent/loop.py:")
    assert "HTTP 500" in reports and "stream cut mid-text" not in reports  # no stream: no stream fault
    assert crashed.inserted == "b.drop(reset=True)" and crashed.fault_request == 0


def test_explored_runs_stay_out_of_the_suites_fault_log_and_are_cached(explored) -> None:
    root, exploration = explored
    store = Store.open(root)
    try:
        baseline = json.loads(store.db.execute("SELECT data FROM baseline").fetchone()[0])
    finally:
        store.close()
    assert {step["fault"] for step in baseline["faults"]} == {"ok"}
    config = EngineConfig(root=root, workers=1, explore_only=True, explore_budget=20.0)
    engine = Engine(config, Console(file=io.StringIO()))
    stats = engine.run()
    assert stats.exploration is not None and stats.exploration[2]  # cached: nothing ran again
    assert load_run_data(root).exploration == exploration.to_json()


def test_map_shows_per_fault_the_handling_code_and_the_findings(explored, capsys) -> None:
    from mutagent.cli import main

    root, _ = explored
    assert main(["map", str(root), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    faults = {entry["fault"]: entry for entry in document["exploration"]["faults"]}
    assert line_of(root, "# WAIT") in faults["HTTP 429 + retry-after"]["handling"]["agent/loop.py"]
    assert faults["connection reset before the first byte"]["findings"] == {
        CRASH: ["tests/test_loop.py::test_answers"]
    }
    assert main(["map", str(root)]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "crash under connection reset before the first byte: test_loop.py::test_answers" in text


def test_a_mutant_in_a_faults_handling_code_carries_that_evidence(explored) -> None:
    from dataclasses import replace

    from testkit.sample_runs import make_mutant

    from mutagent.reports.hints import hint_for

    root, exploration = explored
    source = (root / "agent/loop.py").read_text()
    line = line_of(root, "# WAIT")
    mutant = make_mutant("agent/loop.py", source, "skip-backoff", line, "sleep(", "(lambda s: None)(")
    data = replace(load_run_data(root), mutants=[mutant], exploration=exploration.to_json())
    advice = hint_for(data, mutant).advice
    assert "Fault exploration: this code runs only under HTTP 429 + retry-after" in advice
    assert "(it ran in test_answers with HTTP " in advice and "before request 1 inserted)" in advice
    elsewhere = make_mutant(
        "agent/loop.py", source, "skip-backoff", line_of(root, "return "), "return", "return"
    )
    assert "Fault exploration" not in hint_for(data, elsewhere).advice


def test_a_handling_region_no_agent_mutant_reaches_gets_a_mutant_of_its_own(explored) -> None:
    from testkit.sample_runs import make_mutant

    from mutagent.explore.mutants import OPERATOR, fault_mutants

    root, exploration = explored
    sources = {"agent/loop.py": (root / "agent/loop.py").read_text()}
    (mutant,) = fault_mutants(exploration, sources, [])
    assert mutant.operator == OPERATOR and mutant.replacement.strip().endswith("raise")
    assert mutant.location.start_line == line_of(root, "except urllib.error.HTTPError")
    assert mutant.description.startswith("the handling of HTTP 429 + retry-after at agent/loop.py:")
    assert mutant.description.endswith("is skipped: the error is raised again")
    assert fault_mutants(exploration, sources, []) == [mutant]  # the same run, the same id
    header = line_of(root, "except urllib.error.HTTPError")
    source = sources["agent/loop.py"]
    reached = make_mutant("agent/loop.py", source, "drop-disconnect-handling", header, "urllib", "urllib")
    assert fault_mutants(exploration, sources, [reached]) == []  # an agent operator reaches it
