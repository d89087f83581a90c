"""The anatomy of an agent loop (``mutagent.anatomy``) on small sources, sync and async, SDK and
raw HTTP, and ``mutagent map`` printing it."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from mutagent.anatomy import ROLE_KINDS, anatomy_of
from mutagent.cli import main
from mutagent.mutation.context import SourceContext


def _anatomy(source: str):  # noqa: ANN202 - the Anatomy
    return anatomy_of(SourceContext(textwrap.dedent(source), "loop.py"))


def _kinds(source: str) -> list[tuple[str, int]]:
    return [(role.kind, role.line) for role in _anatomy(source).roles]


SYNC_SDK = """\
    import anthropic

    def converse(client: anthropic.Anthropic, messages, tools, max_turns=8):
        for turn in range(max_turns):
            with client.messages.create(model="m", messages=messages, stream=True) as stream:
                for event in stream:
                    if event.type == "message_stop":
                        break
            for call in pending(messages):
                output = tools.run_tool(call)
                messages.append({"type": "tool_result", "tool_use_id": call.id, "content": output})
        raise StepLimitError("no final answer")
    """

ASYNC_HTTP = """\
    import asyncio
    import httpx

    async def post(client: httpx.AsyncClient, body, retries=3):
        for attempt in range(retries):
            try:
                resp = await client.post("/v1/chat/completions", json=body)
            except httpx.ReadTimeout:
                await asyncio.sleep(2 ** attempt)
                continue
            if resp.status_code == 429:
                await asyncio.sleep(float(resp.headers.get("retry-after", "1")))
                continue
            return resp.json()

    class Runner:
        async def loop(self, messages):
            while not self._should_halt():
                await self._step(messages)

        async def _step(self, messages):
            self._rounds += 1
            return await post(self.http, {"messages": messages})

        def _should_halt(self):
            return self._rounds >= self._round_cap
    """


def test_sync_sdk_loop_roles_with_evidence() -> None:
    anatomy = _anatomy(SYNC_SDK)
    kinds = {role.kind for role in anatomy.roles}
    assert {"model-call", "stream-consumer", "end-of-stream-check", "turn-loop", "turn-bound"} <= kinds
    assert {"tool-dispatch", "tool-result"} <= kinds
    (call,) = anatomy.of_kind("model-call")
    assert call.function == "converse" and call.line == 5
    assert call.evidence == ("SDK call client.messages.create()",) and call.fact("streaming") == "yes"
    (bound,) = anatomy.of_kind("turn-bound")
    assert (bound.fact("limit"), bound.fact("raises"), bound.fact("sense")) == (
        "max_turns",
        "StepLimitError",
        "continue",
    )
    (result,) = anatomy.of_kind("tool-result")
    assert result.fact("id") == "call.id"
    assert "no retry loop found" in anatomy.missing() and "no turn bound found" not in anatomy.missing()


def test_async_raw_http_retry_and_turn_roles() -> None:
    anatomy = _anatomy(ASYNC_HTTP)
    (call,) = anatomy.of_kind("model-call")
    assert "HTTP request client.post()" in call.evidence[0] and "/v1/chat/completions" in call.evidence[0]
    (loop,) = anatomy.of_kind("retry-loop")
    assert loop.function == "post" and loop.fact("counter") == "attempt"
    assert [r.line for r in anatomy.of_kind("retry-delay")] == [9, 12]
    assert any("ReadTimeout" in r.evidence[0] for r in anatomy.of_kind("retry-classification"))
    assert any("status check" in r.evidence[0] for r in anatomy.of_kind("retry-classification"))
    assert [r.line for r in anatomy.of_kind("retry-after-source")] == [12]
    (turn_loop,) = anatomy.of_kind("turn-loop")
    assert turn_loop.function == "Runner.loop"
    assert turn_loop.evidence == (
        "calls _step() -> calls post() -> HTTP request client.post() to '/v1/chat/completions'",
    )
    (bound,) = anatomy.of_kind("turn-bound")
    assert bound.function == "Runner._should_halt" and bound.fact("sense") == "stop"
    assert bound.fact("counter") == "self._rounds" and bound.fact("limit") == "self._round_cap"


def test_turn_bound_raise_in_loop_and_while_test() -> None:
    anatomy = _anatomy(
        """\
        async def run(client, messages, max_turns=10):
            turn = 0
            while True:
                turn += 1
                if turn > max_turns:
                    raise TurnLimitExceeded(turn)
                reply = await client.chat.completions.create(model="m", messages=messages)

        def run2(self, messages):
            done = False
            while not done and self.steps_taken <= self.step_budget:
                reply = self.llm.invoke(messages)
                self.steps_taken += 1
        """
    )
    bounds = [(b.line, b.fact("sense"), b.fact("raises")) for b in anatomy.of_kind("turn-bound")]
    assert bounds == [(5, "stop", "TurnLimitExceeded"), (11, "continue", None)]


@pytest.mark.parametrize(
    "source",
    [
        # retry attempts
        "def f(client):\n    for attempt in range(3):\n        try:\n"
        "            return client.messages.create()\n        except TimeoutError:\n            continue\n",
        # pagination
        "def f(client, max_pages):\n    page = 1\n    while page <= max_pages:\n"
        "        client.messages.list(page=page)\n        page += 1\n",
        # token accounting
        "def f(client, max_tokens):\n    used = 0\n    while used < max_tokens:\n"
        "        used += client.messages.create().usage.output_tokens\n",
        # a training loop: counts steps, never talks to a model API
        "def train(model, data, max_steps):\n    for step in range(max_steps):\n        model.fit(data)\n",
    ],
    ids=["retry", "pagination", "tokens", "training"],
)
def test_no_turn_loop_where_there_is_none(source: str) -> None:
    anatomy = _anatomy(source)
    assert not anatomy.of_kind("turn-loop") and not anatomy.of_kind("turn-bound")
    assert "no turn bound found" in anatomy.missing()


def test_guards_are_classified_by_what_they_check() -> None:
    anatomy = _anatomy(
        """\
        class Executor:
            def execute_tool(self, call):
                if call.name not in self.allowed_tools:
                    return {"type": "tool_result", "tool_use_id": call.id, "content": "no", "is_error": True}
                if call.tenant != self.tenant:
                    raise PermissionError("other tenant")
                return self.tools[call.name](**call.input)
        """
    )
    assert [r.fact("guard") for r in anatomy.of_kind("guard")] == ["allow-list", "tenant"]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "__init__.py").write_text("")
    (tmp_path / "agent" / "loop.py").write_text(textwrap.dedent(SYNC_SDK))
    (tmp_path / "agent" / "broken.py").write_text("def oops(:\n    pass\n")
    return tmp_path


def test_map_json_has_the_documented_keys(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["map", str(project), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert set(document) == {"files", "missing", "skipped", "exploration"}
    assert document["exploration"] is None  # nothing explored in this tree
    assert document["skipped"] and "broken.py" in document["skipped"][0]
    files = {entry["file"]: entry for entry in document["files"]}
    loop = files["agent/loop.py"]
    assert set(loop) == {"file", "roles", "missing"}
    role = next(r for r in loop["roles"] if r["kind"] == "turn-bound")
    assert set(role) == {"kind", "function", "line", "column", "code", "evidence", "facts"}
    assert role["code"] == "range(max_turns)" and role["facts"]["raises"] == "StepLimitError"
    assert all(r["kind"] in ROLE_KINDS for r in loop["roles"])
    assert "no retry loop found" in loop["missing"] and "no retry loop found" in document["missing"]


def test_map_prints_roles_evidence_and_what_is_missing(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["map", str(project / "agent" / "loop.py")]) == 0
    out = capsys.readouterr().out
    assert "turn-bound" in out and "evidence: the loop runs range(max_turns) turns" in out
    assert "no retry loop found" in out and "agent/broken.py" not in out


def test_map_of_a_missing_path_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["map", str(tmp_path / "nope")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_map_explains_a_line_for_every_agent_operator(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``range(max_turns)`` of the sync loop: a site of the turn operators, with the evidence that
    made it one and the mutant it gets; not a retry bound, with what the retry loop lacks; the
    operators without a recogniser say they report no evidence."""
    from mutagent.mutation.registry import select_operators

    assert main(["map", f"{project / 'agent' / 'loop.py'}:4", "--explain", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["line"] == 4 and document["code"] == "for turn in range(max_turns):"
    assert {r["kind"] for r in document["anatomy"]} == {"turn-loop", "turn-bound"}
    verdicts = {v["operator"]: v for v in document["operators"]}
    assert set(verdicts) == {op.name for op in select_operators("agent")}
    turn = verdicts["turn-limit-off-by-one"]
    assert turn["site"] and turn["evidence"] == "reported"
    (candidate,) = turn["candidates"]
    assert (candidate["role"], candidate["kind"], candidate["code"]) == (
        "turn-bound",
        "range",
        "range(max_turns)",
    )
    assert {"source": "names", "text": "the loop at line 4: loop header names turns: turn"} in candidate[
        "present"
    ]
    assert [m["description"] for m in turn["mutants"]] == [
        "turn loop runs one more turn: one extra turn allowed before StepLimitError"
    ]
    retry = verdicts["retry-bound-off-by-one"]
    assert not retry["site"] and not retry["mutants"]
    (range_bound,) = retry["candidates"]
    assert {
        "source": "structure",
        "text": "the loop at line 4 handles no failure (no except, status check or retry predicate)",
    } in range_bound["missing"]
    assert verdicts["drop-response-close"]["evidence"] == "not reported"
    assert not verdicts["drop-response-close"]["candidates"]


def test_map_explain_prints_present_and_missing_evidence(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["map", f"{project / 'agent' / 'loop.py'}:4", "--explain"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "turn-limit-off-by-one: site" in out and "present names: the loop at line 4" in out
    assert (
        "retry-bound-off-by-one: not a site" in out
        and "missing structure: the loop at line 4 handles no" in out
    )
    assert "these operators report no evidence yet" in out


def test_map_explains_what_a_missing_role_saw_instead(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "agent" / "pages.py").write_text(
        "def list_all(client, max_pages=5):\n"
        "    page = 1\n"
        "    while page <= max_pages:\n"
        "        client.messages.create(page=page)\n"
        "        page += 1\n"
    )
    assert main(["map", str(project), "--explain", "--json"]) == 0
    files = {entry["file"]: entry for entry in json.loads(capsys.readouterr().out)["files"]}
    explained = files["agent/pages.py"]["explained"]["no turn bound found"]
    assert explained["as"] == "near misses"
    (miss,) = explained["candidates"]
    assert miss["code"] == "page <= max_pages" and not miss["site"]
    assert any("names: page, max_pages" in e["text"] for e in miss["missing"])
    assert "no retry loop found" not in files["agent/pages.py"]["explained"]  # no recogniser: nothing said


@pytest.mark.parametrize(
    ("args", "message"),
    [(["loop.py:4"], "is explained with --explain"), (["loop.py:99", "--explain"], "has 12 lines, not 99")],
)
def test_map_explain_refuses_bad_lines(
    project: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    target = str(project / "agent" / args[0])
    assert main(["map", target, *args[1:]]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
