"""The control run overlapped with the first mutants: a mutant is released once every one of its
tests passed alone (``orchestration/control.py``)."""

from __future__ import annotations

from mutagent.engine.orchestration.control import (
    ControlGate,
    control_order,
    provisional_controls,
    release_ranks,
)


def _gate() -> ControlGate[str]:
    plans = [("m1", "plan1", ["a", "b"]), ("m2", "plan2", ["b"]), ("m3", "plan3", ["c"])]
    return ControlGate.holding(plans, ["a", "b", "c"])


def test_a_mutant_is_released_when_its_last_test_passed_alone() -> None:
    gate = _gate()
    assert gate.open() == []
    assert gate.passed("b") == ["plan2"]  # m1 still waits on a
    assert gate.passed("a") == ["plan1"]
    assert not gate.done
    assert gate.passed("c") == ["plan3"] and gate.done and gate.held == 0


def test_nothing_is_released_once_a_test_failed_alone() -> None:
    gate = _gate()
    gate.did_not_pass("a")
    assert gate.passed("b") == []  # m2 is complete, but the run will end with the flaky error
    assert gate.failed == ["a"] and gate.held == 3


def test_a_mutant_whose_tests_need_no_control_is_open_at_once() -> None:
    gate = ControlGate.holding([("m1", "plan1", ["x"])], ["a"])  # x: skipped or already controlled
    assert gate.open() == ["plan1"] and gate.held == 0


def test_the_controls_of_the_cheapest_mutant_to_release_run_first() -> None:
    durations = {"a": 1.0, "b": 0.1, "c": 0.2, "d": 0.05}.__getitem__
    covering = [["a", "b"], ["b", "c"], ["c"], ["d", "a"]]
    order = control_order(["a", "b", "c", "d"], covering, durations)
    assert order[0] == "c"  # releases the third mutant alone, in 0.2 s
    assert order[1:] == ["b", "a", "d"]  # then by how many wait (b, a: 2; d: 1), the shortest first
    assert sorted(order) == ["a", "b", "c", "d"]


def test_provisional_controls_stand_in_as_passed_with_the_batch_durations() -> None:
    records = provisional_controls(["a", "b"], {"a": 0.5, "b": 0.25}.__getitem__)
    assert records == {
        "a": {"outcome": "passed", "duration": 0.5, "cpu": 0.0},
        "b": {"outcome": "passed", "duration": 0.25, "cpu": 0.0},
    }


def test_the_longest_mutant_and_its_controls_go_ahead_of_short_ones() -> None:
    durations = {"a": 0.1, "b": 0.1, "c": 0.1, "d": 0.5, "e": 0.01, "f": 0.01}.__getitem__
    held = [
        ("first", 1.5, ["f"]),  # the cheapest to release: ranked first of all (next test)
        ("short", 1.6, ["a"]),
        ("long", 8.5, ["a", "b", "c"]),
        ("middle", 3.0, ["d"]),
    ]
    controls, mutants = release_ranks(["a", "b", "c", "d", "e", "f"], held, durations)
    assert mutants["long"] > mutants["middle"] > mutants["short"]
    assert controls["b"] > mutants["long"]  # a control goes just ahead of the mutant it holds
    assert controls["a"] == controls["b"] == controls["c"]  # a: ranked with the longest it holds
    assert controls["d"] > mutants["middle"] and controls["d"] < mutants["long"]
    assert controls["e"] < min(mutants.values())  # holds nothing: last


def test_the_cheapest_mutant_to_release_and_its_controls_go_first_of_all() -> None:
    durations = {"a": 0.1, "b": 0.1, "c": 0.1, "x": 0.01}.__getitem__
    held = [("long", 8.5, ["a", "b", "c"]), ("first", 1.6, ["x"]), ("free", 1.5, ["y"])]
    controls, mutants = release_ranks(["a", "b", "c", "x"], held, durations)
    # "free" waits on no control at all (cheapest: 0 s), so it is the one released at once
    assert mutants["free"] > mutants["long"] > mutants["first"]
    controls, mutants = release_ranks(["a", "b", "c", "x"], held[:2], durations)
    assert mutants["first"] > controls["a"] and controls["x"] > controls["a"]
    order = sorted(
        [*(("c", t) for t in controls), *(("m", k) for k in mutants)],
        key=lambda item: (controls if item[0] == "c" else mutants)[item[1]],
        reverse=True,
    )
    assert order[:3] == [("c", "x"), ("m", "first"), ("c", "a")]
