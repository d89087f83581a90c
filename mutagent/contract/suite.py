"""``AdapterContract``: the streaming-contract battery, as a pytest test class to subclass.

Subclass it in a test module of a suite that has the ``fake_model`` fixture (every suite in an
environment with mutagent installed), say which dialects the adapter speaks and how to build it
for a base URL; pytest then runs every check once per dialect. The checks only use the neutral
events of ``mutagent.contract.events`` and what the fake server saw on the wire.

Why each check exists: an agent loop journals whatever its adapter says is a complete turn, so
an adapter that leaks a response, passes off a truncated turn as complete, finishes twice or
with no reason, keeps talking after an error, or sends a tool setup every provider rejects
breaks the loop in ways its own tests rarely reach.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, ClassVar

import pytest

from mutagent.contract.events import (
    NEUTRAL_REASONS,
    EarlyStop,
    Failure,
    Finish,
    Outcome,
    Text,
    Tool,
    ToolUse,
    Turn,
    consume,
)
from mutagent.fakeserver import ToolCall
from mutagent.fakeserver import behaviours as b
from mutagent.fakeserver.plan import event_names, stream_body

#: Check name -> the test method that runs it (names are what ``exclude`` takes).
CHECKS: dict[str, str] = {
    "early_stop": "test_stopping_early_releases_the_response",
    "end_marker_release": "test_the_turn_ends_at_its_end_marker",
    "missing_end_marker": "test_a_turn_without_its_end_marker_is_an_error",
    "one_finish": "test_one_finish_and_nothing_after_it",
    "finish_reason": "test_the_finish_reason_is_never_empty",
    "error_last": "test_an_error_is_the_last_thing_seen",
    "tool_arguments": "test_tool_arguments_that_are_not_a_json_object_are_an_error",
    "tool_names": "test_tool_names_providers_reject_are_refused",
    "duplicate_tools": "test_two_tools_with_one_name_are_refused",
    "tool_choice": "test_a_tool_choice_that_cannot_be_met_is_refused",
    "valid_tools": "test_a_valid_tool_setup_reaches_the_provider",
    "mcp_names": "test_mcp_tool_names_are_handled_as_declared",
    "cut_prefix": "test_a_response_cut_short_is_never_a_different_success",
}
DIALECTS = ("anthropic", "openai", "responses")

#: Names no provider accepts and MCP does not allow either (outside 1-128 of ``A-Za-z0-9_.-``).
INVALID_NAMES = ("has space", "semi;colon", "ünïcode", "", "a" * 129)
#: Names MCP allows but providers do not (a dot, or longer than 64).
MCP_ONLY_NAMES = ("server.lookup", "ns.sub-tool_1", "m" * 65, "x" * 128)
#: Names every provider accepts.
VALID_NAMES = ("get_weather-2", "A" * 64)
MCP_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")
PROVIDER_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
#: Tool setups no provider can honour: (tool names, tool_choice, tool_name).
UNMEETABLE_CHOICES = (
    ((), "sometimes", None),
    (("lookup",), "sometimes", None),
    ((), "required", None),
    ((), "tool", "lookup"),
    (("lookup",), "tool", None),
    (("lookup",), "tool", "other"),
)
MEETABLE_CHOICES = (
    ((), "auto", None),
    ((), "none", None),
    ((), None, None),
    (("lookup",), "required", None),
    (("lookup", "clock"), "tool", "clock"),
)


def _turn(names: Iterable[str] = (), tool_choice: str | None = None, tool_name: str | None = None) -> Turn:
    return Turn("hi", tuple(Tool(name) for name in names), tool_choice, tool_name)


class AdapterContract:
    """Subclass as ``Test...`` and set:

    * ``dialects``: the fake-server dialects the adapter speaks (``"anthropic"``, ``"openai"``
      for Chat Completions, ``"responses"``);
    * ``make_adapter(self, dialect, base_url)``: the adapter pointed at ``base_url`` (for
      ``openai``/``responses`` it ends in ``/v1``, what the openai SDK's ``base_url`` wants).
      It returns a callable ``adapter(turn)`` or an object with ``stream(turn)``, giving an
      iterable or async iterable of ``Text``/``ToolUse``/``Finish``/``Failure`` events; errors
      may be raised or yielded as ``Failure``. Build it with the SDK's own retries off: one call, one attempt;
    * optionally ``config_error`` (what the adapter raises for a refused tool setup),
      ``mcp_names`` (``"refuse"`` or ``"accept"``: MCP-only names such as ``server.lookup``),
      ``exclude`` (check names of ``CHECKS`` that do not apply, e.g. ``{"early_stop"}`` for a
      loop that never hands a live stream to its caller), and the time bounds.
    """

    dialects: ClassVar[tuple[str, ...]] = ()
    config_error: ClassVar[type[BaseException]] = Exception
    mcp_names: ClassVar[str] = "refuse"
    exclude: ClassVar[frozenset[str] | set[str]] = frozenset()
    release_seconds: ClassVar[float] = 2.0
    turn_seconds: ClassVar[float] = 10.0
    cut_examples: ClassVar[int] = 40

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        unknown = sorted(set(cls.exclude) - set(CHECKS))
        if unknown:
            raise TypeError(f"{cls.__name__}.exclude names unknown checks {unknown}; known: {sorted(CHECKS)}")
        bad = sorted(set(cls.dialects) - set(DIALECTS))
        if bad:
            raise TypeError(f"{cls.__name__}.dialects has unknown dialects {bad}; known: {list(DIALECTS)}")
        if cls.mcp_names not in ("refuse", "accept"):
            raise TypeError(f"{cls.__name__}.mcp_names must be 'refuse' or 'accept', got {cls.mcp_names!r}")
        for name in cls.exclude:
            setattr(cls, CHECKS[name], None)  # pytest collects no test that is not a function

    def make_adapter(self, dialect: str, base_url: str) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define make_adapter(dialect, base_url)")

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        if "dialect" in metafunc.fixturenames:
            if not self.dialects:
                raise TypeError(
                    f"{type(self).__name__}.dialects is empty: name the dialects the adapter speaks"
                )
            metafunc.parametrize("dialect", self.dialects)

    # -- helpers ------------------------------------------------------------------------------------

    @pytest.fixture
    def adapter(self, dialect: str, fake_model: Any) -> Any:
        base_url = fake_model.base_url if dialect == "anthropic" else fake_model.base_url + "/v1"
        return self.make_adapter(dialect, base_url)

    def _run(self, adapter: Any, turn: Turn | None = None) -> Outcome:
        outcome = consume(adapter, turn or Turn(), self.turn_seconds)
        assert not outcome.timed_out, f"the adapter did not end the turn within {self.turn_seconds}s"
        return outcome

    def _refused(self, fake_model: Any, adapter: Any, turn: Turn, quoting: str | None = None) -> None:
        fake_model.script(b.ok(text="this tool setup was sent"))
        before = fake_model.request_count
        outcome = self._run(adapter, turn)
        sent = fake_model.request_count - before
        assert sent == 0, f"{turn!r} was sent to the provider instead of refused ({outcome.describe()})"
        error = outcome.raised or next((e.error for e in outcome.events if isinstance(e, Failure)), None)
        assert isinstance(error, self.config_error), (
            f"{turn!r} must fail with {self.config_error.__name__}: {outcome.describe()}"
        )
        if quoting is not None:
            assert quoting in str(error), f"the error for tool name {quoting!r} must quote it: {error}"

    def _accepted(self, fake_model: Any, adapter: Any, turn: Turn) -> None:
        fake_model.script(b.ok(text="fine"))
        before = fake_model.request_count
        outcome = self._run(adapter, turn)
        assert fake_model.request_count - before == 1, (
            f"{turn!r} never reached the provider: {outcome.describe()}"
        )
        assert not outcome.failed, f"{turn!r} reached the provider but failed: {outcome.describe()}"
        raw = fake_model.requests[-1].raw.decode(errors="replace")
        missing = [t.name for t in turn.tools if PROVIDER_NAME.fullmatch(t.name) and t.name not in raw]
        assert not missing, f"the request does not declare the tools {missing}"

    # -- releasing the response ---------------------------------------------------------------------

    def test_stopping_early_releases_the_response(self, fake_model: Any, adapter: Any) -> None:
        """A consumer that breaks out after two text events (and, for an async adapter, one that
        cancels the reading task instead): the server must see the client close in time."""
        fake_model.script(b.endless(text="tick ", delay=0.01))
        outcome = self._stop_early(fake_model, adapter, cancel=False)
        if outcome.asynchronous:
            fake_model.script(b.endless(text="tick ", delay=0.01))
            self._stop_early(fake_model, adapter, cancel=True)

    def _stop_early(self, fake_model: Any, adapter: Any, cancel: bool) -> Outcome:
        index = fake_model.request_count

        def released() -> bool:
            return index in fake_model.client_disconnects

        how = "cancelled the task reading it" if cancel else "broke out of it"
        stop = EarlyStop(2, released, self.release_seconds, cancel=cancel)
        outcome = consume(adapter, Turn(), self.turn_seconds, stop)
        assert not outcome.timed_out, f"the adapter did not stop within {self.turn_seconds}s"
        texts = [e for e in outcome.events if isinstance(e, Text)]
        assert len(texts) >= 2, f"expected text events from an endless stream: {outcome.describe()}"
        assert outcome.released, (
            f"the consumer {how} after two text events, but the response was still open "
            f"{self.release_seconds}s later"
        )
        return outcome

    def test_the_turn_ends_at_its_end_marker(self, fake_model: Any, adapter: Any, dialect: str) -> None:
        """The server sends a whole turn and then holds the connection open: the adapter must end
        the turn at the end-of-turn marker and release the response, not wait for the socket."""
        whole = b.ok(text="Hello there")
        events = len(event_names(whole, dialect)) - 1
        fake_model.script(b.stall(seconds=None, after=events, text="Hello there"))
        # the connection stays open for ever after the marker: an adapter that waits for it never
        # ends the turn, so the turn's own limit tells the two apart (a tight one only flakes)
        outcome = consume(adapter, Turn(), self.turn_seconds)
        assert not outcome.timed_out, (
            f"the turn was not over {self.turn_seconds}s after its end marker: the adapter waits "
            f"for the connection to end ({outcome.describe()})"
        )
        assert not outcome.failed and outcome.finishes, f"a complete turn must finish: {outcome.describe()}"
        released = fake_model.wait_for_responses(1, timeout=self.release_seconds)
        assert released and fake_model.client_disconnects == [0], (
            "the turn ended but its response was not released"
        )

    # -- ending a turn --------------------------------------------------------------------------------

    def test_a_turn_without_its_end_marker_is_an_error(self, fake_model: Any, adapter: Any) -> None:
        """A body that ends cleanly without the marker, and a connection closed mid-turn."""
        for behaviour in (b.no_stop(text="Hello there"), b.cut(after=3, text="Hello there world")):
            fake_model.script(behaviour)
            outcome = self._run(adapter)
            assert outcome.failed and not outcome.finishes, (
                f"{behaviour.name}: a turn that ended before its end marker must be an error, never a "
                f"complete message: {outcome.describe()}"
            )

    def test_one_finish_and_nothing_after_it(self, fake_model: Any, adapter: Any) -> None:
        for behaviour in (
            b.ok(text="Hello there"),
            b.ok(text=None, tool_calls=[ToolCall("call_1", "lookup", {"q": "x"})]),
            b.length_stop(text="partial"),
        ):
            fake_model.script(behaviour)
            outcome = self._run(adapter)
            assert not outcome.failed, f"{behaviour.name}: a complete turn failed: {outcome.describe()}"
            assert len(outcome.finishes) == 1, f"{behaviour.name}: finish once: {outcome.describe()}"
            assert isinstance(outcome.events[-1], Finish), (
                f"{behaviour.name}: events after the finish: {outcome.describe()}"
            )

    def test_the_finish_reason_is_never_empty(self, fake_model: Any, adapter: Any) -> None:
        """Known reasons, a reason the provider left out (``null``), an empty one, one of its own."""
        for stop_reason in (None, "length", b.NULL_STOP, "", "pause_turn"):
            fake_model.script(b.ok(text="Hello", stop_reason=stop_reason))
            outcome = self._run(adapter)
            assert not outcome.failed and outcome.finishes, (
                f"stop reason {stop_reason!r}: a complete turn must finish: {outcome.describe()}"
            )
            for finish in outcome.finishes:
                assert isinstance(finish.reason, str) and finish.reason, (
                    f"stop reason {stop_reason!r}: the finish reason is empty ({finish!r}); map a turn "
                    "ended without a reason to 'stop'"
                )
                assert finish.reason in NEUTRAL_REASONS or finish.reason == finish.raw, (
                    f"stop reason {stop_reason!r}: {finish!r} is neither one of {sorted(NEUTRAL_REASONS)} "
                    "nor the provider's own value passed through as raw"
                )

    def test_an_error_is_the_last_thing_seen(self, fake_model: Any, adapter: Any) -> None:
        for behaviour in (
            b.error_event(after=3, error_type="overloaded_error"),
            b.malformed(after=3),
            b.http_error(500),
        ):
            fake_model.script(behaviour)
            outcome = self._run(adapter)
            assert outcome.failed, f"{behaviour.name}: the error was not reported: {outcome.describe()}"
            failures = [i for i, e in enumerate(outcome.events) if isinstance(e, Failure)]
            assert not failures or failures[0] == len(outcome.events) - 1, (
                f"{behaviour.name}: events after the error: {outcome.describe()}"
            )
            assert not outcome.finishes, f"{behaviour.name}: a failed turn finished: {outcome.describe()}"

    def test_tool_arguments_that_are_not_a_json_object_are_an_error(
        self, fake_model: Any, adapter: Any
    ) -> None:
        """A complete turn whose tool call carries arguments cut short, or JSON that is no object:
        the call must not run (with ``{}`` or anything else), the turn fails instead."""
        for arguments in ('{"q": "weath', '{"q": "x"', "[1, 2]", "not json"):
            fake_model.script(b.ok(text=None, tool_calls=[ToolCall("call_1", "lookup", arguments)]))
            outcome = self._run(adapter)
            assert outcome.failed and not any(isinstance(e, ToolUse) for e in outcome.events), (
                f"tool arguments {arguments!r} became a tool call instead of an error: {outcome.describe()}"
            )

    # -- tool setup ----------------------------------------------------------------------------------

    def test_tool_names_providers_reject_are_refused(self, fake_model: Any, adapter: Any) -> None:
        for name in INVALID_NAMES:
            self._refused(fake_model, adapter, _turn([name]), quoting=name)

    def test_two_tools_with_one_name_are_refused(self, fake_model: Any, adapter: Any) -> None:
        self._refused(fake_model, adapter, _turn(["lookup", "lookup"]), quoting="lookup")

    def test_a_tool_choice_that_cannot_be_met_is_refused(self, fake_model: Any, adapter: Any) -> None:
        for names, choice, tool_name in UNMEETABLE_CHOICES:
            self._refused(fake_model, adapter, _turn(names, choice, tool_name))

    def test_a_valid_tool_setup_reaches_the_provider(self, fake_model: Any, adapter: Any) -> None:
        for name in VALID_NAMES:
            self._accepted(fake_model, adapter, _turn([name], "auto"))
        for names, choice, tool_name in MEETABLE_CHOICES:
            self._accepted(fake_model, adapter, _turn(names, choice, tool_name))

    def test_mcp_tool_names_are_handled_as_declared(self, fake_model: Any, adapter: Any) -> None:
        for name in MCP_ONLY_NAMES:
            assert MCP_NAME.fullmatch(name)
            if self.mcp_names == "refuse":
                self._refused(fake_model, adapter, _turn([name]), quoting=name)
            else:
                self._accepted(fake_model, adapter, _turn([name]))

    # -- truncation, as a property --------------------------------------------------------------------

    def test_a_response_cut_short_is_never_a_different_success(
        self, fake_model: Any, adapter: Any, dialect: str
    ) -> None:
        """Every prefix of a valid stream, ended cleanly: an error, or the whole response's success."""
        from hypothesis import HealthCheck, given, settings
        from hypothesis import strategies as st

        whole = b.ok(text="Hello there, world", tool_calls=[ToolCall("call_1", "lookup", {"q": "x"})])
        body = stream_body(whole, dialect, model="contract")
        fake_model.script(b.raw(body))
        complete = self._run(adapter)
        assert not complete.failed and complete.finishes, f"the whole response failed: {complete.describe()}"
        boundaries = sorted({0, *(m.end() for m in re.finditer(rb"\n\n", body[:-1]))})

        @settings(
            max_examples=self.cut_examples,
            derandomize=True,
            database=None,
            deadline=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(st.one_of(st.sampled_from(boundaries), st.integers(0, len(body) - 1)))
        def cut_short(cut: int) -> None:
            fake_model.script(b.raw(body[:cut]))
            outcome = self._run(adapter)
            if not outcome.failed:
                assert outcome.events == complete.events, (
                    f"the first {cut} of {len(body)} bytes gave a success that differs from the whole "
                    f"response's: {outcome.events!r} instead of {complete.events!r}"
                )

        cut_short()
