"""The role recognisers that report sites with evidence (:mod:`mutagent.anatomy.evidence`), by
role name. An operator names the roles it rewrites in ``Operator.roles``; ``mutagent map
--explain`` and the role examples' tests read this table. A role converted to the evidence
interface is added here (see docs/architecture.md, "How to add or widen a role")."""

from __future__ import annotations

from mutagent.anatomy.evidence import RoleRecogniser
from mutagent.anatomy.retry.bound import RETRY_BOUND
from mutagent.anatomy.turns.bound import TURN_BOUND
from mutagent.anatomy.turns.counter import TURN_COUNTER

RECOGNISERS: dict[str, RoleRecogniser] = {
    recogniser.role: recogniser for recogniser in (TURN_BOUND, TURN_COUNTER, RETRY_BOUND)
}


def recogniser(role: str) -> RoleRecogniser | None:
    """The recogniser of ``role``, or None for a role not yet converted."""
    return RECOGNISERS.get(role)
