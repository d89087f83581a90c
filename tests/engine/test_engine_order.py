"""The order of a mutant's covering tests: the most focused first, earlier killers of the site first."""

from __future__ import annotations

from mutagent.engine.orchestration.plan import breadth_of, focused_first
from mutagent.engine.selection.order import KillerFirst

COVERAGE = {
    "loop.py": {1: ["unit", "turn", "slow_unit"], 2: ["turn"], 3: ["turn", "slow_unit"]},
    "tools.py": {1: ["turn", "other"], 2: ["turn"]},
}
DURATIONS = {"unit": 0.05, "turn": 0.01, "slow_unit": 0.02, "other": 0.01}


def test_breadth_counts_the_lines_each_test_covers() -> None:
    assert breadth_of(COVERAGE) == {"unit": 1, "turn": 5, "slow_unit": 2, "other": 1}


def test_the_most_focused_test_runs_first_even_when_slower() -> None:
    order = focused_first(["turn", "slow_unit", "unit"], breadth_of(COVERAGE), DURATIONS.__getitem__)
    assert order == ["unit", "slow_unit", "turn"]


def test_equal_focus_falls_back_to_the_fastest_then_the_name() -> None:
    breadth = {"a": 1, "b": 1, "c": 1}
    durations = {"a": 0.2, "b": 0.1, "c": 0.1}
    assert focused_first(["a", "c", "b"], breadth, durations.__getitem__) == ["b", "c", "a"]


def test_a_sites_earlier_killer_moves_to_the_front_for_its_siblings_only() -> None:
    learner = KillerFirst()
    site, other_site = ["unit", "slow_unit", "turn"], ["unit", "turn"]
    assert learner.ordered(site, site) == site  # nothing learnt: the planner's order stays
    learner.record(site, "turn")
    assert learner.ordered(site, site) == ["turn", "unit", "slow_unit"]
    assert learner.ordered(other_site, other_site) == other_site  # another site learnt nothing
    learner.record(site, "slow_unit")
    learner.record(site, "slow_unit")
    assert learner.ordered(site, site) == ["slow_unit", "turn", "unit"]  # the most frequent killer
