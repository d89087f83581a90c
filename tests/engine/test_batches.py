"""The baseline's measured batches shrink as the suite is used up (``orchestration/batches.py``)."""

from __future__ import annotations

from mutagent.engine.orchestration.batches import measured_batches

TESTS = [f"t::{i:02d}" for i in range(16)]


def test_batches_are_contiguous_slices_in_collection_order_covering_every_test_once() -> None:
    batches = measured_batches(TESTS, 2)
    assert [test for batch in batches for test in batch] == TESTS


def test_batches_shrink_to_single_tests_at_the_end() -> None:
    sizes = [len(batch) for batch in measured_batches(TESTS, 2)]
    assert sizes == [4, 3, 3, 2, 1, 1, 1, 1]  # a quarter of what is left each time, rounded up
    assert sizes == sorted(sizes, reverse=True)


def test_equal_slices_are_gone_a_slow_tail_no_longer_lands_in_one_batch() -> None:
    # the generic target's shape: the last three tests take 0.2 s each, the others ~1 ms
    slow = set(TESTS[-3:])
    batches = measured_batches(TESTS, 2)
    assert all(len(set(batch) & slow) <= 1 for batch in batches)


def test_with_known_durations_the_shares_are_of_expected_time() -> None:
    durations = {test: 0.01 for test in TESTS} | {TESTS[3]: 1.0}
    batches = measured_batches(TESTS, 2, durations.__getitem__)
    assert [TESTS[3]] in batches  # the slow test runs alone: nothing waits behind it in a batch
    assert [test for batch in batches for test in batch] == TESTS
    first = batches[0]
    assert first == TESTS[:3]  # up to a quarter of the 1.15 s left, before the slow one


def test_one_worker_and_tiny_suites() -> None:
    assert measured_batches(["a"], 1) == [["a"]]
    assert measured_batches([], 2) == []
    assert [len(b) for b in measured_batches(TESTS[:4], 1)] == [2, 1, 1]
    zero = measured_batches(TESTS[:3], 2, lambda _test: 0.0)  # nothing known to take time
    assert [t for batch in zero for t in batch] == TESTS[:3]
