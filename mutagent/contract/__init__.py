"""The streaming-contract battery: checks any model adapter against the contract an agent loop
relies on, over the fake model server, in every dialect the adapter speaks.

    from mutagent.contract import AdapterContract, Finish, Text

    class TestMyAdapter(AdapterContract):
        dialects = ("anthropic",)

        def make_adapter(self, dialect, base_url):
            return MyAdapter(base_url)  # adapter(turn) or adapter.stream(turn) -> events

See ``suite.AdapterContract`` for the checks and ``events`` for the neutral vocabulary.
"""

from __future__ import annotations

from mutagent.contract.events import (
    NEUTRAL_REASONS,
    Adapter,
    EarlyStop,
    Event,
    Failure,
    Finish,
    Outcome,
    Text,
    Tool,
    ToolUse,
    Turn,
    consume,
)
from mutagent.contract.suite import CHECKS, AdapterContract

__all__ = [
    "CHECKS",
    "NEUTRAL_REASONS",
    "Adapter",
    "AdapterContract",
    "EarlyStop",
    "Event",
    "Failure",
    "Finish",
    "Outcome",
    "Text",
    "Tool",
    "ToolUse",
    "Turn",
    "consume",
]
