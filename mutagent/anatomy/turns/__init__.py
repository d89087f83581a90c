"""The turn family: the agent's turn loop (``loops``) and the turn-bound role (``bound``).

``mutagent.anatomy.turns`` keeps the names it had as one module (``turn_loops``,
``loose_turn_bounds``, ``TurnBound``...), read from :mod:`mutagent.anatomy.turns.loops`.
"""

from __future__ import annotations

from mutagent.anatomy.turns.loops import (
    TurnBound,
    TurnLoop,
    loose_turn_bounds,
    turn_comparison,
    turn_loops,
    turn_pair,
)

__all__ = ["TurnBound", "TurnLoop", "loose_turn_bounds", "turn_comparison", "turn_loops", "turn_pair"]
