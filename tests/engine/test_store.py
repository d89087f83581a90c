"""The SQLite store: results survive as written, stale ones are ignored, damage means a fresh start."""

from __future__ import annotations

from pathlib import Path

import pytest

from mutagent import model
from mutagent.errors import UsageError
from mutagent.model import Location, Mutant, MutantResult, Status, TextPatch
from mutagent.store import STORE_DIR, Store, load_run_data, store_path


def mutant(mutant_id: str, line: int = 1) -> Mutant:
    return Mutant(
        mutant_id,
        "skip-backoff",
        "agent/loop.py",
        ("Agent", "run"),
        Location(line, 4, line, 9),
        "sleep(delay)",
        "sleep(0)",
        "sleep before retry becomes 0",
        TextPatch(10, 22, "sleep(0)"),
    )


def test_results_round_trip_into_run_data(tmp_path: Path) -> None:
    store = Store.open(tmp_path)
    store.set_run(
        [mutant("a"), mutant("b", 5)],
        {"a": "fa", "b": "fb"},
        [model.TestInfo("tests/test_loop.py::test_retry", 0.25)],
        {"agent/loop.py": "source"},
    )
    store.save_result(
        MutantResult(
            "a",
            Status.KILLED,
            killed_by=["tests/test_loop.py::test_retry"],
            covered_by=["tests/test_loop.py::test_retry"],
            duration=0.3,
            status_reason="tests/test_loop.py::test_retry: assert 0 > 0",
        ),
        "fa",
    )
    store.close()

    data = load_run_data(tmp_path)
    assert [m.id for m in data.mutants] == ["a", "b"]
    assert data.mutants[1] == mutant("b", 5)
    assert data.result_of(data.mutants[0]).killed_by == ["tests/test_loop.py::test_retry"]
    assert data.result_of(data.mutants[1]).status is Status.PENDING
    assert data.tests == [model.TestInfo("tests/test_loop.py::test_retry", 0.25)]
    assert data.sources == {"agent/loop.py": "source"}


def test_the_run_scope_is_recorded_with_the_mutant_set(tmp_path: Path) -> None:
    """A shard's or --since run's store says so: `mutagent report PATH` labels its score."""
    store = Store.open(tmp_path)
    store.set_run([mutant("a")], {"a": "fa"}, [], {}, {"shard": [2, 2], "since": "origin/main", "fast": True})
    store.close()
    data = load_run_data(tmp_path)
    assert (data.shard, data.since, data.fast) == ((2, 2), "origin/main", True)
    store = Store.open(tmp_path)
    store.set_run([mutant("a")], {"a": "fa"}, [], {})  # the next, whole run: no label left behind
    store.close()
    data = load_run_data(tmp_path)
    assert (data.shard, data.since, data.fast) == (None, None, False)


def test_a_result_whose_fingerprint_changed_is_not_reused(tmp_path: Path) -> None:
    store = Store.open(tmp_path)
    store.save_result(MutantResult("a", Status.SURVIVED), "old")
    assert store.finished({"a": "old"})["a"].status is Status.SURVIVED
    assert store.finished({"a": "new"}) == {}
    store.close()


def test_the_baseline_cache_keeps_only_the_latest_key(tmp_path: Path) -> None:
    store = Store.open(tmp_path)
    store.save_baseline("k1", {"tests": 1})
    store.save_baseline("k2", {"tests": 2})
    assert store.load_baseline("k1") is None
    assert store.load_baseline("k2") == {"tests": 2}
    store.close()


@pytest.mark.parametrize("damage", [b"this is not a database" * 100, b""])
def test_a_damaged_store_warns_and_starts_afresh(tmp_path: Path, damage: bytes) -> None:
    store = Store.open(tmp_path)
    store.save_result(MutantResult("a", Status.KILLED), "f")
    store.close()
    for suffix in ("-wal", "-shm"):
        Path(f"{store_path(tmp_path)}{suffix}").unlink(missing_ok=True)
    store_path(tmp_path).write_bytes(damage)
    warnings: list[str] = []
    store = Store.open(tmp_path, warn=warnings.append)
    assert store.finished({"a": "f"}) == {}
    store.save_result(MutantResult("a", Status.KILLED), "f")
    assert "a" in store.finished({"a": "f"})
    store.close()
    if damage:
        assert warnings and "starting afresh" in warnings[0]


def test_a_store_from_another_schema_is_replaced(tmp_path: Path) -> None:
    store = Store.open(tmp_path)
    store.set_meta("schema", "999")
    store.close()
    warnings: list[str] = []
    Store.open(tmp_path, warn=warnings.append).close()
    assert warnings and "schema version 999" in warnings[0]


def test_the_store_directory_ignores_itself_in_git(tmp_path: Path) -> None:
    Store.open(tmp_path).close()
    assert (tmp_path / STORE_DIR / ".gitignore").read_text().strip().endswith("*")


def test_load_run_data_without_a_run_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="mutagent run"):
        load_run_data(tmp_path)
