"""How a role recogniser reports what it found: the site, the role, and the evidence.

An operator is a codemod over one *role* of an agent loop (the turn bound, the retry bound, ...):
it asks the role's recogniser for the sites of a file, rewrites each site's node and describes
the change. The recogniser decides what is a site, from evidence that may come from anywhere in
the file:

* :attr:`Source.NAMES`: words of identifiers and strings, read through
  :mod:`mutagent.anatomy.vocabulary` (``max_turns`` names a turn limit);
* :attr:`Source.DATA_FLOW`: what a value is bound to and where it goes;
* :attr:`Source.CALL_GRAPH`: the functions a loop reaches, or that reach it
  (:mod:`mutagent.anatomy.callgraph`);
* :attr:`Source.SDK_TYPES`: qualified names of SDK and library functions, classes and enums
  (``tenacity.stop_after_attempt``);
* :attr:`Source.STRUCTURE`: where the node sits (a ``while`` test, an ``if`` whose body leaves
  the loop).

A :class:`Site` carries the evidence that was present and, where the recogniser knows it, the
evidence it looked for and did not find (a site may stand without all of it). For
``mutagent map FILE:LINE --explain`` a recogniser also lists its :class:`Candidate` nodes on a
line, sites or not, with the same two lists: that is how a developer sees why a line got no
mutant. A candidate's ``site`` flag is never computed apart from :meth:`RoleRecogniser.sites`
(see :meth:`RoleRecogniser.candidate`), so the explanation cannot disagree with the operators.
"""

from __future__ import annotations

import abc
import enum
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

import libcst as cst

from mutagent.mutation.context import SourceContext

D = TypeVar("D")


class Source(enum.Enum):
    """Where a piece of evidence comes from."""

    NAMES = "names"
    DATA_FLOW = "data flow"
    CALL_GRAPH = "call graph"
    SDK_TYPES = "SDK types"
    STRUCTURE = "structure"


@dataclass(frozen=True)
class Evidence:
    """One piece of evidence: where it comes from and what it says, in a short sentence that
    names the code (``counter turn is named for turns``)."""

    source: Source
    text: str

    def __str__(self) -> str:
        return f"{self.source.value}: {self.text}"


@dataclass(frozen=True)
class Site(Generic[D]):
    """One site of a role: the ``kind`` of node it is (a comparison, a ``range(...)``, a counter
    step: the role's own words), the node an operator rewrites, the role-specific ``detail`` it
    needs to rewrite and describe it (a turn bound's sense, a limit check's readings), and the
    evidence."""

    role: str
    kind: str
    node: cst.CSTNode = field(compare=False, repr=False)
    detail: D = field(compare=False, repr=False)
    present: tuple[Evidence, ...]
    missing: tuple[Evidence, ...] = ()


@dataclass(frozen=True)
class Candidate:
    """A node a recogniser considered, whether it is a site of the role, and why: the evidence
    present and the evidence missing. ``kind`` says what the recogniser took the node for (a
    comparison, a ``range(...)``, a counter step)."""

    role: str
    node: cst.CSTNode = field(compare=False, repr=False)
    kind: str
    site: bool
    present: tuple[Evidence, ...]
    missing: tuple[Evidence, ...]


@dataclass(frozen=True)
class RoleExample:
    """A documented case of a role, tested like an operator's examples. ``site`` is the code of
    the node (whitespace-normalised) that must be a site of the role in ``source``; ``site=None``
    marks a must-not-match snippet, where the recogniser must find no site at all."""

    source: str
    site: str | None = None
    note: str = ""

    @property
    def must_not_match(self) -> bool:
        return self.site is None


class RoleRecogniser(abc.ABC):
    """Finds the sites of one role in a file, and explains its verdict on any candidate node.

    Subclasses set ``role`` (kebab-case, e.g. ``turn-bound``), ``family`` (``turns``, ``retry``,
    ``streams``, ``tools``), a one-line ``summary`` and ``examples`` (at least two must-match and
    two must-not-match), and implement :meth:`sites` (cached per file by the implementation) and
    :meth:`considered` (every node the recogniser looks at, with its evidence)."""

    role: str
    family: str
    summary: str
    examples: tuple[RoleExample, ...] = ()

    @abc.abstractmethod
    def sites(self, ctx: SourceContext) -> Sequence[Site]:
        """Every site of the role in the file, in the order the operators rewrite them."""

    @abc.abstractmethod
    def considered(self, ctx: SourceContext) -> list[tuple[cst.CSTNode, str]]:
        """(node, kind) for every node the recogniser weighs as a possible site, in document order."""

    @abc.abstractmethod
    def weigh(
        self, ctx: SourceContext, node: cst.CSTNode, kind: str
    ) -> tuple[list[Evidence], list[Evidence]]:
        """(present, missing) evidence for one considered node."""

    def candidate(self, ctx: SourceContext, node: cst.CSTNode, kind: str) -> Candidate:
        """The verdict on one considered node: a site exactly when :meth:`sites` has it."""
        site = next((s for s in self.sites(ctx) if s.node is node and s.kind == kind), None)
        if site is not None:
            return Candidate(self.role, node, kind, True, site.present, site.missing)
        present, missing = self.weigh(ctx, node, kind)
        return Candidate(self.role, node, kind, False, tuple(present), tuple(missing))

    def explain(self, ctx: SourceContext, line: int) -> list[Candidate]:
        """The candidates that start on ``line`` (1-based), sites or not, with their evidence."""
        return [
            self.candidate(ctx, node, kind)
            for node, kind in self.considered(ctx)
            if ctx.position(node).start.line == line
        ]

    def near_misses(self, ctx: SourceContext, limit: int = 3) -> list[Candidate]:
        """Candidates that are not sites but have evidence for them beyond their place in the code
        (names, data flow, call graph or SDK types: a comparison inside an ``if`` is no near miss by
        that alone), most evidence first: what ``mutagent map --explain`` shows under a role it
        did not find."""
        sites = {(id(s.node), s.kind) for s in self.sites(ctx)}
        found = [
            self.candidate(ctx, node, kind)
            for node, kind in self.considered(ctx)
            if (id(node), kind) not in sites
        ]
        found = [c for c in found if any(e.source is not Source.STRUCTURE for e in c.present)]
        found.sort(key=lambda c: (-len(c.present), ctx.position(c.node).start.line))
        return found[:limit]

    def __repr__(self) -> str:
        return f"<role {self.role}>"
