"""The anatomy of an agent loop: which code plays which role, and why we believe it.

Computed once per file (cached on its :class:`~mutagent.mutation.context.SourceContext`) from
libcst metadata (qualified names, scopes, parents, positions) and the file's own call graph
(:mod:`mutagent.anatomy.callgraph`). Every recogniser the operators use lives here, by family
(``streams/``, ``retry/``, ``turns/``, ``tools/``); the roles converted to the evidence interface
(:mod:`mutagent.anatomy.evidence`, listed in :mod:`mutagent.anatomy.recognisers`) report each site
with the evidence present and missing, and the operators rewrite their sites. ``mutagent map``
prints the anatomy, so a user can see what mutagent recognised in their loop and what it did not
find, and ``--explain`` says why (:mod:`mutagent.anatomy.explain`).

Roles (see :data:`mutagent.anatomy.roles.ROLE_KINDS`): where the model is called, which code
consumes the stream and which check ends a turn, retry loops with their bounds, delays,
classification and Retry-After sources, the turn loop and its bound, tool dispatch, tool-result
construction, and tool guards. Each role carries its evidence.
"""

from __future__ import annotations

from mutagent.anatomy.build import Anatomy, anatomy_of
from mutagent.anatomy.roles import ROLE_KINDS, Role

__all__ = ["ROLE_KINDS", "Anatomy", "Role", "anatomy_of"]
