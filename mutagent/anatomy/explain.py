"""Why a line is, or is not, a site of each agent operator (``mutagent map FILE:LINE --explain``),
and why a role the map did not find is missing (``mutagent map PATH --explain``).

Two kinds of knowledge, kept apart so that nothing is invented:

* an operator that names its roles (``Operator.roles``) is explained by their recognisers
  (:mod:`mutagent.anatomy.recognisers`): every candidate node on the line, site or not, with the
  evidence present and missing;
* any other operator is explained by what it did: its mutants on the line (with the reason a
  mutant is Ignored, where the operator gives one), or none; the explanation says plainly that
  the operator does not report its evidence yet.

Both list the operator's mutants on the line, from the same generation ``mutagent list`` runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mutagent.anatomy.build import anatomy_of
from mutagent.anatomy.evidence import Candidate
from mutagent.anatomy.recognisers import recogniser
from mutagent.anatomy.roles import Role
from mutagent.model import Mutant
from mutagent.mutation.context import SourceContext
from mutagent.mutation.generate import generate_for_source
from mutagent.mutation.operator import Operator


@dataclass(frozen=True)
class OperatorVerdict:
    """One operator on one line: whether the line is a site, the role candidates there (for an
    operator with roles), and its mutants that touch the line."""

    operator: str
    reports_evidence: bool
    site: bool
    candidates: tuple[Candidate, ...]
    mutants: tuple[Mutant, ...]


@dataclass(frozen=True)
class LineExplanation:
    path: str
    line: int
    code: str
    anatomy: tuple[Role, ...]  # the map's roles that start on the line
    verdicts: tuple[OperatorVerdict, ...]


def _kinds_of(operator: Operator) -> frozenset[str] | None:
    kinds = getattr(operator, "role_kinds", ())
    return frozenset(kinds) if kinds else None


def operator_candidates(ctx: SourceContext, operator: Operator, line: int) -> list[Candidate]:
    """The candidates of the operator's roles on ``line``, limited to the site kinds it rewrites."""
    kinds = _kinds_of(operator)
    found: list[Candidate] = []
    for role in operator.roles:
        known = recogniser(role)
        if known is None:
            continue
        found += [c for c in known.explain(ctx, line) if kinds is None or c.kind in kinds]
    return found


def explain_line(ctx: SourceContext, line: int, operators: Sequence[Operator]) -> LineExplanation:
    """The explanation of ``line`` (1-based) of the file behind ``ctx`` for each of ``operators``."""
    lines = ctx.source.splitlines()
    if not 1 <= line <= len(lines):
        raise ValueError(f"{ctx.path} has {len(lines)} lines, not {line}")
    mutants = generate_for_source(ctx.source, ctx.path, operators, warn=lambda message: None)
    verdicts = []
    for operator in operators:
        touching = tuple(
            mutant
            for mutant in mutants
            if mutant.operator == operator.name
            and mutant.location.start_line <= line <= mutant.location.end_line
        )
        reports = any(recogniser(role) is not None for role in operator.roles)
        candidates = tuple(operator_candidates(ctx, operator, line)) if reports else ()
        site = any(c.site for c in candidates) if reports else bool(touching)
        verdicts.append(OperatorVerdict(operator.name, reports, site, candidates, touching))
    anatomy = tuple(role for role in anatomy_of(ctx).roles if role.line == line)
    return LineExplanation(ctx.path, line, lines[line - 1].strip(), anatomy, tuple(verdicts))


def explain_missing(ctx: SourceContext, kind: str, limit: int = 3) -> tuple[str, list[Candidate]]:
    """For a role kind the map did not find in this file: what its recogniser says. ("sites", the
    recogniser's sites) when the operators' recogniser does find sites the map's reading does not
    show; ("near misses", candidates with some evidence but not all) otherwise; ("", []) for a
    role with no recogniser yet."""
    known = recogniser(kind)
    if known is None:
        return "", []
    sites = known.sites(ctx)
    if sites:
        return "sites", [known.candidate(ctx, site.node, site.kind) for site in sites[:limit]]
    return "near misses", known.near_misses(ctx, limit)
