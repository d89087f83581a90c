"""What the anatomy says about one place in the code: a role, where it is, and why we believe it."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

#: Every role the anatomy looks for, in the order ``mutagent map`` prints them, with the sentence
#: it prints when a file has none of that role.
ROLE_KINDS: dict[str, str] = {
    "model-call": "no model call found",
    "stream-consumer": "no stream consumption found",
    "end-of-stream-check": "no end-of-stream check found",
    "retry-loop": "no retry loop found",
    "retry-bound": "no retry bound found",
    "retry-delay": "no retry delay found",
    "retry-classification": "no retry classification found",
    "retry-after-source": "no Retry-After source found",
    "turn-loop": "no turn loop found",
    "turn-bound": "no turn bound found",
    "tool-dispatch": "no tool dispatch found",
    "tool-result": "no tool-result construction found",
    "guard": "no tool guard found",
}


@dataclass(frozen=True)
class Role:
    """One role of one node: ``kind`` (a key of :data:`ROLE_KINDS`), the node, the function it is
    in (``Agent.run``; empty at module level), its 1-based line and column, the ``evidence`` (the
    names, calls and strings that made us believe it) and ``facts`` (kind-specific details such
    as a bound's ``sense``), both short strings so ``--json`` can print them as they are."""

    kind: str
    node: cst.CSTNode = field(compare=False, repr=False)
    function: str
    line: int
    column: int
    evidence: tuple[str, ...]
    facts: tuple[tuple[str, str], ...] = ()

    def fact(self, key: str) -> str | None:
        return dict(self.facts).get(key)
