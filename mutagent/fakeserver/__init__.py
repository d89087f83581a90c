"""The fake model server: Anthropic Messages, OpenAI Chat and OpenAI Responses dialects, scripted
and seeded-random faults, request recording with tool-call invariants, and record/replay of real
exchanges.

    from mutagent.fakeserver import FakeModelServer, ToolCall, behaviours as b

    with FakeModelServer() as server:
        server.script(b.ok(tool_calls=[ToolCall("toolu_1", "lookup", {"q": "x"})]), b.ok(text="done"))
        ...  # point the agent at server.base_url

In pytest, install mutagent and take the ``fake_model`` fixture instead. Names are resolved
lazily so that the pytest plugin (imported by every pytest run) stays import-light.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mutagent.fakeserver import behaviours
    from mutagent.fakeserver.behaviours import Behaviour, ToolCall
    from mutagent.fakeserver.invariants import assert_invariants, check_invariants
    from mutagent.fakeserver.plan import event_names
    from mutagent.fakeserver.randommode import DEFAULT_WEIGHTS
    from mutagent.fakeserver.records import RecordedRequest, ResponseRecord
    from mutagent.fakeserver.server import FakeModelServer
    from mutagent.fakeserver.transcript import load_transcript

_LAZY = {
    "FakeModelServer": "mutagent.fakeserver.server",
    "ToolCall": "mutagent.fakeserver.behaviours",
    "Behaviour": "mutagent.fakeserver.behaviours",
    "RecordedRequest": "mutagent.fakeserver.records",
    "ResponseRecord": "mutagent.fakeserver.records",
    "check_invariants": "mutagent.fakeserver.invariants",
    "assert_invariants": "mutagent.fakeserver.invariants",
    "event_names": "mutagent.fakeserver.plan",
    "DEFAULT_WEIGHTS": "mutagent.fakeserver.randommode",
    "load_transcript": "mutagent.fakeserver.transcript",
}

__all__ = [
    "DEFAULT_WEIGHTS",
    "Behaviour",
    "FakeModelServer",
    "RecordedRequest",
    "ResponseRecord",
    "ToolCall",
    "assert_invariants",
    "behaviours",
    "check_invariants",
    "event_names",
    "load_transcript",
]


def __getattr__(name: str) -> Any:
    if name == "behaviours":
        return import_module("mutagent.fakeserver.behaviours")
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'mutagent.fakeserver' has no attribute {name!r}")
