"""Survivor hints: what to script and what to assert, in the words of the code they are about.

A hint is prose unless mutagent ran the code it would show. An operator's own ``hint`` is
dialect-neutral; here each agent operator gets a recipe in the words of the API the mutated code
speaks (see :mod:`mutagent.reports.dialect`): the fault to script on the fake server, where in
the stream, and the assertion on the next request that tells the mutant from the original, with
the details the mutant itself fixes (the status it no longer retries, the header it no longer
reads). A code snippet appears in a report only when ``mutagent suggest`` built that test from
the suite, ran it on the original (it passed every time) and on the mutant (it failed): a snippet
nobody ran is a claim with code in it, and the claims this module used to print failed more
often than not. Code of an SDK's own transport layer gets a transport-level recipe, never an
agent built on that SDK with its retries switched off.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mutagent.model import Mutant, RunData, Suggestion
from mutagent.reports.dialect import ANTHROPIC, OPENAI_CHAT, OPENAI_RESPONSES, Dialect, dialect_of_file
from mutagent.reports.opinfo import operator_info

Recipe = Callable[[Dialect, "Mutant | None"], str]


@dataclass(frozen=True)
class Hint:
    """What a report says about one survivor: ``advice`` in words, and ``code`` only when it is a
    verified suggestion (``suggestion`` says how it was verified)."""

    advice: str
    suggestion: Suggestion | None = None

    @property
    def code(self) -> str:
        return self.suggestion.code if self.suggestion is not None else ""

    @property
    def verified(self) -> str:
        """One line on how the code was verified (empty without code)."""
        s = self.suggestion
        if s is None:
            return ""
        fault = f" with {s.fault} inserted" if s.fault else ""
        return (
            f"verified by mutagent suggest{fault}: passed {s.original_runs} times on the original, "
            f"failed on the mutant ({s.mutant_failure}); add it to {s.test_file}"
        )

    def __bool__(self) -> bool:
        return bool(self.advice or self.code)

    def text(self) -> str:
        """The whole hint as plain text (advice, then the verified test when there is one)."""
        if not self.code:
            return self.advice
        return f"{self.advice}\n{self.verified}\n{self.code}"


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


def _failure(d: Dialect) -> str:
    """A transport failure the loop must recover from, in words."""
    if d.streaming:
        return "cut the stream mid-response (`b.cut`, after a few events)"
    return "drop the connection before the response (`b.drop()`)"


def _literals(mutant: Mutant | None, pattern: str) -> list[str]:
    """The literals of ``pattern`` the mutant's original code has and its replacement lacks: what
    the mutant stopped handling (a status, an error type, a header name)."""
    if mutant is None:
        return []
    before = re.findall(pattern, mutant.original)
    after = set(re.findall(pattern, mutant.replacement))
    return [value for value in dict.fromkeys(before) if value not in after]


def _empty(d: Dialect, mutant: Mutant | None) -> str:
    if d.api == OPENAI_CHAT:
        words = "a completion whose choice has no content and no tool_calls"
    elif d.api == OPENAI_RESPONSES:
        words = "a response with an empty output list"
    elif d.streaming:
        words = "a stream of message_start, message_delta and message_stop with no content block"
    else:
        words = "a message whose content list is empty"
    return (
        f"Script {words} (`b.empty()`) followed by a normal reply, and assert the agent retries it "
        "(a second request) or fails, never returns ''."
    )


def _truncated_arguments(d: Dialect, mutant: Mutant | None) -> str:
    if not d.streaming:
        return (
            "Script a complete turn whose tool arguments are a string that is not complete JSON "
            '(`ToolCall(id, name, \'{"city": "Par\')`: the fake server sends a string verbatim) and '
            "assert the tool never ran and the turn failed or was retried."
        )
    fragment = {
        ANTHROPIC: "input_json_delta",
        OPENAI_CHAT: "tool_calls[].function.arguments delta",
        OPENAI_RESPONSES: "response.function_call_arguments.delta",
    }.get(d.api, "input_json_delta")
    return (
        f"Cut the stream inside the tool arguments, after the first {fragment} (count the frames "
        "with `event_names(b.ok(tool_calls=[...]), dialect)`: the text part comes first), or, when "
        "the arguments are parsed from a completed response, script a complete turn whose arguments "
        "are a cut-short string; assert the tool was not executed and the turn failed or was retried."
    )


def _disconnect(d: Dialect, mutant: Mutant | None) -> str:
    errors = _literals(mutant, r"\b([A-Z][A-Za-z]*(?:Error|Timeout|Exception))\b")
    which = f" (the mutant no longer catches {', '.join(errors)})" if errors else ""
    return (
        f"Make the fake server {_failure(d)}, reset it (`reset=True`) or stall it past the read "
        f"timeout, whichever raises the error this handler catches{which}, and assert the agent "
        "retried with the same request: two requests, `fake_model.bodies_identical(0, 1)`."
    )


def _idle_timeout(d: Dialect, mutant: Mutant | None) -> str:
    where = "mid-stream" if d.streaming else "before the response"
    return (
        f"Make the fake server go silent {where} (`b.stall(seconds=None)`) and assert the attempt is "
        "abandoned and retried: build the client through the code this mutant changes (your own "
        "client factory, with a read timeout short enough for a test), not a client of the test's "
        "own, or the mutated timeout never applies."
    )


def _response_close(d: Dialect, mutant: Mutant | None) -> str:
    return (
        "Where the loop stops reading before the end of a response (it breaks at the end marker, or "
        "a handler raises), serve the whole reply and then hold the connection open (`b.stall` after "
        "all events), and assert `fake_model.responses[i].client_closed_early` once the loop has "
        "moved on. A loop that always reads to the end cannot leak a response this way: for it the "
        "mutant may be equivalent, and an endless stream would only hang the test."
    )


def _sdk_retries(d: Dialect, mutant: Mutant | None) -> str:
    return (
        "Script one 500 and then a success against the client built by the code this mutant changes "
        "(your client factory, not a client the test builds), and assert exactly how many requests "
        "reached the server: the SDK's hidden retries add requests the loop never counts."
    )


def _idempotency(d: Dialect, mutant: Mutant | None) -> str:
    return (
        "Have the model repeat the same side-effecting call (the same tool and arguments in another "
        "key order, under a new call id, or the turn retried) and assert the side effect happened once."
    )


def _length(d: Dialect, mutant: Mutant | None) -> str:
    return (
        f"Script a response that stops on {_length_stop(d)} (`b.length_stop(text=...)`) and assert "
        "the agent raises, continues or reports truncation instead of returning the partial text."
    )


def _retry_after(d: Dialect, mutant: Mutant | None) -> str:
    headers = _literals(mutant, r"retry-after(?:-ms)?")
    header = headers[0] if headers else ("retry-after-ms" if d.api == ANTHROPIC else "retry-after")
    return (
        f"Answer 429 (or 503) with a `{header}` header whose value differs from your default backoff "
        "and assert the wait before the retry is that value: the delay your fake sleep received, or "
        "`fake_model.gap(0, 1)` when the loop really sleeps."
    )


def _partial_history(d: Dialect, mutant: Mutant | None) -> str:
    key = _messages_key(d)
    return (
        f"{_failure(d)[0].upper()}{_failure(d)[1:]} after some content, then assert the retried "
        f"request's {key} equal the first request's (`fake_model.bodies_identical(0, 1)`: no "
        "half-written assistant turn) and history holds one complete reply afterwards."
    )


def _misclassify(d: Dialect, mutant: Mutant | None) -> str:
    statuses = [s for s in _literals(mutant, r"\b([1-5]\d\d)\b") if 400 <= int(s) <= 599]
    types = _literals(mutant, r"\b([a-z]+_error)\b")
    if statuses:
        what = f"an HTTP {' / '.join(statuses)} (the status this mutant changes)"
    elif types:
        what = f"an `error` event of type {' / '.join(types)} (the type this mutant changes)"
    else:
        what = "each failure class this classification decides (429/5xx, 400/401, error events)"
    return (
        f"Script {what} followed by a success, and assert the decision: a retryable failure is "
        "retried (two requests and the success returned), a permanent one fails at once (one "
        "request, the error surfaced)."
    )


def _mismatch_id(d: Dialect, mutant: Mutant | None) -> str:
    return (
        "Script a turn with two tool calls and assert each tool result in the next request carries "
        "exactly the id of the call it answers (`fake_model.tool_results(1)` maps id to result)."
    )


def _closed_block(d: Dialect, mutant: Mutant | None) -> str:
    if d.api == ANTHROPIC and d.streaming:
        words = "a duplicate content_block_stop, or a delta after the stop, for the same index"
    else:
        words = "a repeated final chunk for a block the assembler already closed"
    return (
        f"Feed the assembler (or serve through the fake server with `b.raw`) {words} and assert the "
        "assembled block is the first-closed one."
    )


def _retry_bound(d: Dialect, mutant: Mutant | None) -> str:
    return (
        "Make every attempt fail (one scripted error per allowed attempt) and assert the exact "
        "number of requests; also let a call succeed exactly on the last allowed attempt."
    )


def _turn_limit(d: Dialect, mutant: Mutant | None) -> str:
    return (
        "Script a model that asks for a tool on every turn and assert the exact number of model "
        "requests before the turn-limit error; also let a run finish on exactly the last allowed turn."
    )


def _unbounded_turns(d: Dialect, mutant: Mutant | None) -> str:
    return (
        "Script a model that never stops asking for tools (one more turn than the limit) and assert "
        "the loop ends with its turn-limit error: a request beyond the script fails the test, a "
        "hang is reported as Timeout."
    )


def _tool_refused(what: str) -> Recipe:
    def recipe(d: Dialect, mutant: Mutant | None) -> str:
        return (
            f"Script {what} and assert the tool never ran and the next request carries an error "
            "result for that call."
        )

    return recipe


def _swallow(d: Dialect, mutant: Mutant | None) -> str:
    words = "is_error true" if d.api == ANTHROPIC else "content naming the failure"
    return f"Make a tool raise and assert the next request carries an error result for that call ({words})."


def _truncate(d: Dialect, mutant: Mutant | None) -> str:
    return (
        "Have a tool return a long, distinctive text and assert the tool result in the next request "
        "equals it in full (`fake_model.tool_results(1)`)."
    )


def _unbounded(d: Dialect, mutant: Mutant | None) -> str:
    return (
        "Make every attempt fail (as many scripted errors as attempts are allowed) and assert the "
        "agent gives up with its error after exactly that many requests (one more fails the test; a "
        "hang is reported as Timeout, which counts as detected)."
    )


def _stop_marker_check(d: Dialect, mutant: Mutant | None) -> str:
    return (
        f"Script a response that ends cleanly but without {_stop_marker(d)} (`b.no_stop(...)`) and "
        "assert the turn fails or is retried, never returned as an answer."
    )


def _backoff(d: Dialect, mutant: Mutant | None) -> str:
    return (
        "Script a retryable error and assert the delay between the failed request and its retry: "
        "the argument your fake sleep received, or `fake_model.gap(0, 1)` when the loop really sleeps."
    )


def _fault_handling(d: Dialect, mutant: Mutant | None) -> str:
    what = mutant.description if mutant is not None else "the handling of one fault is skipped"
    return (
        f"Fault exploration found this code handling one fault ({what}). Script that fault in a "
        "test that reaches it and assert what the loop does after it: the retried request, the "
        "error raised, the wait."
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
    "skip-approval": _tool_refused("a side-effecting call while the approver says no"),
    "skip-argument-validation": _tool_refused(
        "a tool call with a wrong argument type (also: a missing required key, an extra key)"
    ),
    "skip-backoff": _backoff,
    "skip-fault-handling": _fault_handling,
    "skip-stop-marker-check": _stop_marker_check,
    "skip-tenant-check": _tool_refused("a tool call naming another tenant's resource"),
    "skip-tool-allowlist": _tool_refused("a call to a tool that is not on the allow-list"),
    "swallow-tool-error": _swallow,
    "truncate-tool-results": _truncate,
    "turn-limit-off-by-one": _turn_limit,
    "unbounded-retry": _unbounded,
    "unbounded-turns": _unbounded_turns,
}


def transport_recipe(d: Dialect, fallback: str) -> str:
    """For code inside an SDK's transport layer: a test of that layer, never an agent test."""
    base = "fake_model.base_url" if d.sdk_name == "anthropic" else "fake_model.openai_base_url"
    what = fallback.rstrip(".") + ". " if fallback else ""
    return (
        f"{what}This code is {d.describe()}: test it there. Build the {d.sdk_name} client this "
        f"layer belongs to on `{base}` with its retry settings as shipped (switching its retries "
        "off switches off the code under test), script the fault on the fake server and assert "
        "on what the server recorded: how many requests, the wait between them, the headers sent."
    )


def advice_for(operator: str, d: Dialect, fallback: str = "", mutant: Mutant | None = None) -> str:
    """The advice in words: the operator's recipe for the dialect (``fallback``: its own hint)."""
    recipe = RECIPES.get(operator)
    if d.transport:
        return transport_recipe(d, fallback)
    advice = recipe(d, mutant) if recipe is not None else fallback
    if not advice:
        return ""
    if recipe is None and not d.known:
        # a generic operator in code that talks to no model API we recognise (a calculator, a
        # parser): its own hint says what to assert, there is no model call to script
        return advice
    return f"{advice} (this code: {d.describe()})" if d.known else advice


_EXPLORATIONS: dict[int, Any] = {}


def exploration_evidence(run_data: RunData, mutant: Mutant) -> str:
    """What fault exploration saw of the mutated lines: the faults under which alone they run,
    with one explored run that reached them ("" when exploration did not see them so)."""
    data = run_data.exploration
    if not data:
        return ""
    from mutagent.explore.results import Exploration

    exploration = _EXPLORATIONS.get(id(data))
    if exploration is None:
        exploration = _EXPLORATIONS[id(data)] = Exploration.from_json(data)
    lines = range(mutant.location.start_line, mutant.location.end_line + 1)
    faults = exploration.handling_faults(mutant.file, lines)
    if not faults:
        return ""
    example = exploration.runs_reaching(mutant.file, lines)[0]
    return (
        f"Fault exploration: this code runs only under {', '.join(faults)} (it ran in "
        f"{example.test.rsplit('::', 1)[-1]} with {example.fault.describe()} inserted)."
    )


def hint_for(run_data: RunData, mutant: Mutant) -> Hint:
    """The hint a report shows for ``mutant``: advice fitted to the code's dialect and what fault
    exploration saw of its lines, and the test ``mutagent suggest`` verified for it if any."""
    dialect = dialect_of_file(run_data.sources, mutant.file)
    advice = advice_for(mutant.operator, dialect, operator_info(mutant.operator).hint, mutant)
    evidence = exploration_evidence(run_data, mutant)
    if evidence:
        advice = f"{advice} {evidence}" if advice else evidence
    return Hint(advice, run_data.suggestions.get(mutant.id))
