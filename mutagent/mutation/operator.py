"""The contract every mutation operator fulfils, built-in or third-party.

An operator is a small class, one per module (like a libcst codemod): a kebab-case ``name``, a
one-line ``description``, the agent ``failure`` it simulates, a ``hint`` telling the user which
assertion would kill a survivor, and ``examples`` that both test and document it (as cosmic-ray's
``examples()`` do). ``find`` yields :class:`Mutation` objects for the nodes of one file.
"""

from __future__ import annotations

import abc
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import libcst as cst

if TYPE_CHECKING:
    from mutagent.mutation.context import SourceContext


@dataclass(frozen=True)
class Mutation:
    """Replace ``node`` (a node of ``SourceContext.module``) by ``replacement``.

    ``equivalent`` is set by an operator that can prove the mutant behaves exactly like the
    original (a bound already decided by a dominating check): the reason why. Such a mutant is
    listed and reported Ignored with that reason, never run (it could only survive)."""

    node: cst.CSTNode
    replacement: cst.CSTNode
    description: str
    equivalent: str | None = None


@dataclass(frozen=True)
class Example:
    """A documented case. ``after`` is the expected source of one of the mutants of ``before``;
    ``after=None`` marks a must-not-match snippet: the operator must yield no mutant for it."""

    before: str
    after: str | None = None
    note: str = ""

    @property
    def must_not_match(self) -> bool:
        return self.after is None


class Operator(abc.ABC):
    """Base class of every operator. Subclasses set the class attributes and implement ``find``."""

    name: ClassVar[str]
    description: ClassVar[str]
    failure: ClassVar[str]
    hint: ClassVar[str]
    family: ClassVar[str] = "agent"
    examples: ClassVar[tuple[Example, ...]] = ()
    #: The anatomy roles whose sites this operator rewrites (``("turn-bound",)``), by the names of
    #: :data:`mutagent.anatomy.recognisers.RECOGNISERS`. ``mutagent map FILE:LINE --explain`` asks
    #: those recognisers why a line is or is not a site; an operator without roles is explained by
    #: its mutants only.
    roles: ClassVar[tuple[str, ...]] = ()
    #: The kinds of its roles' sites it rewrites (``("limit-check", "attempt-range")``); empty: all.
    role_kinds: ClassVar[tuple[str, ...]] = ()

    @abc.abstractmethod
    def find(self, ctx: SourceContext) -> Iterator[Mutation]:
        """Yield the mutations of this operator in the file behind ``ctx``."""

    def __repr__(self) -> str:
        return f"<operator {self.name}>"
