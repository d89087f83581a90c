"""Survivor hints written for the code they are about: the advice and a fake-server test to copy.

An operator's own ``hint`` is dialect-neutral; here each agent operator gets advice in the words
of the API the mutated code speaks (see :mod:`mutagent.reports.dialect`) and a short test body
with ``fake_model.script(...)`` for that dialect: the client built on the right base URL (the
fake server picks its dialect from the endpoint the client calls), streaming or not, sync or
async. Operators without a recipe (generic ones, third-party plugins) keep their own hint and get
the client set-up and a request assertion for the dialect, when the code's package talks to a model
API we recognise; in code that calls no model (a parser, a calculator) they get their hint alone.
"""

from __future__ import annotations

from collections.abc import Callable

from mutagent.model import Mutant, RunData
from mutagent.reports.dialect import ANTHROPIC, OPENAI_CHAT, OPENAI_RESPONSES, Dialect, dialect_of_file
from mutagent.reports.opinfo import operator_info

Recipe = Callable[[Dialect], tuple[str, list[str], list[str]]]  # advice, script lines, checks


def _tool_id(d: Dialect) -> str:
    return "toolu_1" if d.api == ANTHROPIC else "call_1"


def _stop_marker(d: Dialect) -> str:
    if d.api == OPENAI_CHAT:
        return "`data: [DONE]` (and a finish_reason)" if d.streaming else "a finish_reason"
    if d.api == OPENAI_RESPONSES:
        return "`response.completed`" if d.streaming else "status `completed`"
    return "`message_stop`" if d.streaming else "a stop_reason"


def _length_stop(d: Dialect) -> str:
    if d.api == OPENAI_CHAT:
        return "finish_reason `length`"
    if d.api == OPENAI_RESPONSES:
        return "status `incomplete` (max_output_tokens)"
    return "stop_reason `max_tokens`"


def _messages_key(d: Dialect) -> str:
    return "input" if d.api == OPENAI_RESPONSES else "messages"


def _failure(d: Dialect) -> tuple[str, str]:
    """(words, behaviour) for a transport failure the loop must recover from."""
    if d.streaming:
        return "cut the stream mid-response", 'b.cut(after=3, text="Hello world")'
    return "drop the connection before the response", "b.drop()"


def _empty(d: Dialect) -> tuple[str, list[str], list[str]]:
    if d.api == OPENAI_CHAT:
        words = "a completion whose choice has no content and no tool_calls"
    elif d.api == OPENAI_RESPONSES:
        words = "a response with an empty output list"
    elif d.streaming:
        words = "a stream of message_start, message_delta and message_stop with no content block"
    else:
        words = "a message whose content list is empty"
    return (
        f"Script {words} and assert the agent retries it (a second request) or fails, never returns ''.",
        ['fake_model.script(b.empty(), b.ok(text="the answer"))'],
        ['assert result == "the answer" and fake_model.request_count == 2'],
    )


def _truncated_arguments(d: Dialect) -> tuple[str, list[str], list[str]]:
    tool = f'ToolCall("{_tool_id(d)}", "lookup", {{"city": "Paris"}})'
    if not d.streaming:
        cut = f'ToolCall("{_tool_id(d)}", "lookup", \'{{"city": "Par\')'
        return (
            "Send the tool arguments as a string that is not complete JSON (the fake server sends a "
            "string verbatim) and assert the tool never ran and the turn failed or was retried.",
            [f'fake_model.script(b.ok(tool_calls=[{cut}]), b.ok(text="done"))'],
            ["assert lookup.calls == []  # the tool never saw half an argument object"],
        )
    fragments = {
        ANTHROPIC: "input_json_delta",
        OPENAI_CHAT: "tool_calls[].function.arguments delta",
        OPENAI_RESPONSES: "response.function_call_arguments.delta",
    }[d.api if d.api in (ANTHROPIC, OPENAI_CHAT, OPENAI_RESPONSES) else ANTHROPIC]
    return (
        f"Cut the stream after the first {fragments} (so the arguments stop mid-object, e.g. "
        '\'{"city": "Par\') and assert the tool was not executed and the turn failed or was retried.',
        [
            "# event_names(b.ok(tool_calls=[...]), dialect) lists the frames: cut inside the arguments",
            f'fake_model.script(b.cut(after=4, tool_calls=[{tool}]), b.ok(text="done"))',
        ],
        ["assert lookup.calls == []  # the cut call never ran; the retry answered with text"],
    )


def _disconnect(d: Dialect) -> tuple[str, list[str], list[str]]:
    words, behaviour = _failure(d)
    return (
        f"Make the fake server {words} (or point the client at FakeModelServer.refused_url()) and "
        "assert the agent retried with the same request.",
        [f'fake_model.script({behaviour}, b.ok(text="Hello world"))'],
        ["assert fake_model.request_count == 2 and fake_model.bodies_identical(0, 1)"],
    )


def _idle_timeout(d: Dialect) -> tuple[str, list[str], list[str]]:
    where = "mid-stream" if d.streaming else "before the response"
    after = 3 if d.streaming else 0
    return (
        f"Make the fake server go silent {where} for longer than the read/idle limit and assert the "
        "agent gives up on that attempt within a bound and retries (run it under a pytest timeout).",
        [f'fake_model.script(b.stall(seconds=None, after={after}), b.ok(text="Hello"))'],
        ["assert fake_model.request_count == 2  # the stalled attempt was abandoned, not waited out"],
    )


def _response_close(d: Dialect) -> tuple[str, list[str], list[str]]:
    return (
        "Stop consuming early (break after what you need, or raise from a handler) against a "
        "response that never ends, and assert the server saw the client let go.",
        ['fake_model.script(b.endless(text="tick "))'],
        ["fake_model.wait_for_responses(1, timeout=5)", "assert fake_model.responses[0].client_closed_early"],
    )


def _sdk_retries(d: Dialect) -> tuple[str, list[str], list[str]]:
    return (
        "Script one 500 then a success and assert exactly how many requests reached the server: "
        "the SDK's hidden retries would add one the loop never sees or records.",
        ['fake_model.script(b.http_error(500), b.ok(text="done"))'],
        ["assert fake_model.request_count == 2  # your loop's retry, counted by your loop"],
    )


def _idempotency(d: Dialect) -> tuple[str, list[str], list[str]]:
    first, second = _tool_id(d), _tool_id(d).replace("1", "2")
    return (
        "Have the model repeat the same side-effecting call (or retry the turn) and assert the side "
        "effect happened once.",
        [
            "fake_model.script(",
            f'    b.ok(tool_calls=[ToolCall("{first}", "charge", {{"order": "A1", "amount": 5}})]),',
            f'    b.ok(tool_calls=[ToolCall("{second}", "charge", {{"amount": 5, "order": "A1"}})]),',
            '    b.ok(text="done"),',
            ")",
        ],
        ['assert payments.charged == [("A1", 5)]'],
    )


def _length(d: Dialect) -> tuple[str, list[str], list[str]]:
    return (
        f"Script a response that stops on {_length_stop(d)} and assert the agent raises, continues or "
        "reports truncation instead of returning the partial text as the answer.",
        ['fake_model.script(b.length_stop(text="The refund policy is"), b.ok(text=" 30 days."))'],
        ['assert result != "The refund policy is"  # continued (2 requests) or raised'],
    )


def _retry_after(d: Dialect) -> tuple[str, list[str], list[str]]:
    header = (
        '{"retry-after-ms": "1500", "retry-after": "2"}' if d.api == ANTHROPIC else '{"retry-after": "2"}'
    )
    return (
        "Answer 429 with a Retry-After different from your default backoff and assert the wait before "
        "the retry is the header's value.",
        [f'fake_model.script(b.http_error(429, headers={header}), b.ok(text="done"))'],
        ["assert sleeps == [2.0] or fake_model.gap(0, 1) >= 2.0  # a fake sleep or the recorded gap"],
    )


def _partial_history(d: Dialect) -> tuple[str, list[str], list[str]]:
    words, behaviour = _failure(d)
    key = _messages_key(d)
    return (
        f"{words[0].upper()}{words[1:]}, then assert the retried request's {key} equal the first "
        "request's (no half-written assistant turn) and history holds one complete reply afterwards.",
        [f'fake_model.script({behaviour}, b.ok(text="Hello world"))'],
        [f'assert fake_model.requests[1].body["{key}"] == fake_model.requests[0].body["{key}"]'],
    )


def _misclassify(d: Dialect) -> tuple[str, list[str], list[str]]:
    overloaded = "529" if d.api == ANTHROPIC else "503"
    return (
        f"For each failure class assert the decision: a 429/{overloaded}/5xx is retried (two requests), "
        "a 400/401 fails at once (one request, the error surfaced). One test per status.",
        [f'fake_model.script(b.http_error({overloaded}), b.ok(text="done"))  # and: b.http_error(400) alone'],
        ["assert fake_model.request_count == 2  # 400: == 1 and the call raised"],
    )


def _mismatch_id(d: Dialect) -> tuple[str, list[str], list[str]]:
    a, b_ = _tool_id(d), _tool_id(d).replace("1", "2")
    return (
        "Script a turn with two tool calls and assert each tool result in the next request carries "
        "exactly the id of the call it answers.",
        [
            "fake_model.script(",
            f'    b.ok(tool_calls=[ToolCall("{a}", "lookup", {{"q": "a"}}), '
            f'ToolCall("{b_}", "lookup", {{"q": "b"}})]),',
            '    b.ok(text="done"),',
            ")",
        ],
        [f'assert fake_model.tool_results(1) == {{"{a}": lookup("a"), "{b_}": lookup("b")}}'],
    )


def _closed_block(d: Dialect) -> tuple[str, list[str], list[str]]:
    if d.api == ANTHROPIC and d.streaming:
        words = "a duplicate content_block_stop, or a delta after the stop, for the same index"
    else:
        words = "a repeated final chunk for a block the assembler already closed"
    return (
        f"Feed the assembler (or replay through the fake server) {words} and assert the assembled "
        "block is the first-closed one.",
        ['fake_model.script(b.ok(text="Hello"))  # then feed the duplicate frames to the assembler'],
        ['assert message.text == "Hello"'],
    )


def _retry_bound(d: Dialect) -> tuple[str, list[str], list[str]]:
    return (
        "Make every attempt fail and assert the exact number of requests; also let a call succeed "
        "exactly on the last allowed attempt.",
        ["fake_model.script(*[b.http_error(503)] * MAX_ATTEMPTS)  # one request more fails the test"],
        ["assert fake_model.request_count == MAX_ATTEMPTS"],
    )


def _turn_script(d: Dialect) -> list[str]:
    """A model that asks for a tool on every turn: only the loop's own turn bound ends it."""
    return [
        "fake_model.script(*[",
        f'    b.ok(tool_calls=[ToolCall(f"{_tool_id(d)[:-1]}{{i}}", "lookup", {{"q": "again"}})])',
        "    for i in range(MAX_TURNS + 1)",
        "])",
    ]


def _turn_limit(d: Dialect) -> tuple[str, list[str], list[str]]:
    return (
        "Script a model that asks for a tool on every turn and assert the exact number of model "
        "requests before the turn-limit error; also let a run finish on exactly the last allowed turn.",
        _turn_script(d),
        [
            "with pytest.raises(YourTurnLimitError): agent.run(...)",
            "assert fake_model.request_count == MAX_TURNS",
        ],
    )


def _unbounded_turns(d: Dialect) -> tuple[str, list[str], list[str]]:
    return (
        "Script a model that never stops asking for tools and assert the loop ends with its turn-limit "
        "error (a request beyond the script fails the test; a hang is reported as Timeout).",
        _turn_script(d),
        ["assert fake_model.request_count <= MAX_TURNS  # wrap the run in pytest.raises(YourTurnLimitError)"],
    )


def _tool_refused(what: str, call: str) -> Recipe:
    def recipe(d: Dialect) -> tuple[str, list[str], list[str]]:
        tool = call.replace("ID", _tool_id(d))
        return (
            f"Script {what} and assert the tool never ran and the next request carries an error result "
            "for that call.",
            [f'fake_model.script(b.ok(tool_calls=[{tool}]), b.ok(text="done"))'],
            [f'assert "{_tool_id(d)}" in fake_model.tool_results(1) and tool.calls == []'],
        )

    return recipe


def _swallow(d: Dialect) -> tuple[str, list[str], list[str]]:
    if d.api == ANTHROPIC:
        check = 'assert fake_model.requests[1].body["messages"][-1]["content"][0]["is_error"] is True'
        words = "is_error true"
    else:
        check = f'assert "failed" in fake_model.tool_results(1)["{_tool_id(d)}"]'
        words = "content naming the failure"
    return (
        f"Make a tool raise and assert the next request carries an error result for that call ({words}).",
        [f'fake_model.script(b.ok(tool_calls=[ToolCall("{_tool_id(d)}", "lookup", {{}})]), b.ok(text="ok"))'],
        [check],
    )


def _truncate(d: Dialect) -> tuple[str, list[str], list[str]]:
    return (
        "Have a tool return a long, distinctive text and assert the tool result in the next request "
        "equals it in full.",
        [
            f'fake_model.script(b.ok(tool_calls=[ToolCall("{_tool_id(d)}", "lookup", {{"q": "policy"}})]), '
            'b.ok(text="done"))'
        ],
        [f'assert fake_model.tool_results(1) == {{"{_tool_id(d)}": LONG_POLICY_TEXT}}'],
    )


def _unbounded(d: Dialect) -> tuple[str, list[str], list[str]]:
    return (
        "Make every attempt fail and assert the agent gives up with an error after the configured "
        "number of requests (a hang is reported as Timeout, which counts as detected).",
        ["fake_model.script(*[b.http_error(503)] * MAX_ATTEMPTS)  # a request beyond it fails the test"],
        [
            "with pytest.raises(YourRetriesExhaustedError): ...",
            "assert fake_model.request_count == MAX_ATTEMPTS",
        ],
    )


def _stop_marker_check(d: Dialect) -> tuple[str, list[str], list[str]]:
    return (
        f"Script a response that ends cleanly but without {_stop_marker(d)} and assert the turn "
        "fails or is retried, never returned as an answer.",
        ['fake_model.script(b.no_stop(text="Hello"), b.ok(text="Hello world"))'],
        ['assert result == "Hello world" and fake_model.request_count == 2'],
    )


def _backoff(d: Dialect) -> tuple[str, list[str], list[str]]:
    return (
        "Assert the delay between the failed request and its retry: the argument your fake sleep "
        "received, or the gap the fake server recorded between the two requests.",
        ['fake_model.script(b.http_error(503), b.ok(text="done"))'],
        ["assert sleeps == [EXPECTED_DELAY] or fake_model.gap(0, 1) >= EXPECTED_DELAY"],
    )


RECIPES: dict[str, Recipe] = {
    "accept-empty-response": _empty,
    "accept-truncated-tool-arguments": _truncated_arguments,
    "drop-disconnect-handling": _disconnect,
    "drop-idle-timeout": _idle_timeout,
    "drop-response-close": _response_close,
    "enable-sdk-retries": _sdk_retries,
    "ignore-idempotency-key": _idempotency,
    "ignore-length-stop": _length,
    "ignore-retry-after": _retry_after,
    "keep-partial-history": _partial_history,
    "misclassify-retryable": _misclassify,
    "mismatch-tool-call-id": _mismatch_id,
    "overwrite-closed-block": _closed_block,
    "retry-bound-off-by-one": _retry_bound,
    "skip-approval": _tool_refused(
        "a side-effecting call while the approver says no", 'ToolCall("ID", "delete_ticket", {"id": 7})'
    ),
    "skip-argument-validation": _tool_refused(
        "a tool call with a wrong argument type (also: a missing required key, an extra key)",
        'ToolCall("ID", "lookup", {"q": 3})',
    ),
    "skip-backoff": _backoff,
    "skip-stop-marker-check": _stop_marker_check,
    "skip-tenant-check": _tool_refused(
        "a tool call naming another tenant's resource", 'ToolCall("ID", "read_ticket", {"tenant": "other"})'
    ),
    "skip-tool-allowlist": _tool_refused(
        "a call to a tool that is not on the allow-list", 'ToolCall("ID", "delete_everything", {})'
    ),
    "swallow-tool-error": _swallow,
    "truncate-tool-results": _truncate,
    "turn-limit-off-by-one": _turn_limit,
    "unbounded-retry": _unbounded,
    "unbounded-turns": _unbounded_turns,
}


def client_lines(d: Dialect) -> list[str]:
    """How the test points the code at the fake server, in the code's own dialect."""
    anthropic = d.api == ANTHROPIC or not d.known
    base = "fake_model.base_url" if anthropic else "fake_model.openai_base_url"
    if not d.sdk:
        endpoint = d.endpoint if anthropic else d.endpoint.removeprefix("/v1")
        return [f'base_url = {base}  # your loop POSTs to base_url + "{endpoint}"']
    cls = (
        ("AsyncAnthropic" if d.is_async else "Anthropic")
        if anthropic
        else ("AsyncOpenAI" if d.is_async else "OpenAI")
    )
    return [f'client = {cls}(base_url={base}, api_key="test", max_retries=0)']


def _run_line(d: Dialect) -> str:
    target = "client" if d.sdk else "base_url"
    call = f'run_your_loop({target}, "hi")'
    return f"result = await {call}" if d.is_async else f"result = {call}"


def script_for(operator: str, d: Dialect) -> str:
    """The fake-server test body that would kill ``operator``'s mutant in dialect ``d``."""
    recipe = RECIPES.get(operator)
    if recipe is None:
        script, checks = (
            ['fake_model.script(b.ok(text="the answer"))'],
            ["assert fake_model.requests[0].body[...] == ...  # the value this code computes and sends"],
        )
    else:
        _, script, checks = recipe(d)
    client = client_lines(d)
    if operator == "enable-sdk-retries" and d.sdk:  # the mutated code builds the client itself
        base = "fake_model.base_url" if d.api == ANTHROPIC or not d.known else "fake_model.openai_base_url"
        client = [f"client = your_client_factory(base_url={base})  # yours: it must pass max_retries=0"]
    return "\n".join([*script, *client, _run_line(d), *checks])


def hint_for_dialect(operator: str, d: Dialect, fallback: str = "") -> str:
    """Advice in the dialect's words, then the script (``fallback``: the operator's own hint)."""
    recipe = RECIPES.get(operator)
    advice = recipe(d)[0] if recipe is not None else fallback
    if not advice:
        return ""
    if recipe is None and not d.known:
        # a generic operator in code that talks to no model API we recognise (a calculator, a
        # parser): a fake-server script would describe a model call that is not there
        return advice
    heading = f"{advice} (this code: {d.describe()})" if d.known else advice
    return f"{heading}\n{script_for(operator, d)}"


def hint_for(run_data: RunData, mutant: Mutant) -> str:
    """The hint a report shows for ``mutant``: fitted to the dialect of the code it mutates."""
    dialect = dialect_of_file(run_data.sources, mutant.file)
    return hint_for_dialect(mutant.operator, dialect, operator_info(mutant.operator).hint)
