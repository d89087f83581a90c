"""The run store: SQLite under ``PATH/.mutagent/store.sqlite``.

Every mutant result is committed the moment it finishes (WAL mode), so a run interrupted by
Ctrl-C or SIGKILL loses nothing it finished and the next run resumes. Results are keyed by a
fingerprint of everything that could change them (see ``mutagent.engine.selection.fingerprint``): a
re-run re-tests only mutants whose fingerprint changed. The baseline (per-test coverage,
durations, control run) is cached under a hash of the sources, tests and configuration, with
what it was measured on beside it (the ``baseline_basis`` meta row): after an edit to function
bodies the next run re-measures only the tests that ran them.

The store is a cache: if it is missing, unreadable or from another schema version, the run warns
and starts afresh rather than failing.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

from mutagent.model import Location, Mutant, MutantResult, RunData, Status, Suggestion, TestInfo, TextPatch

SCHEMA_VERSION = "1"
STORE_DIR = ".mutagent"
STORE_FILE = "store.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS mutants (
    id TEXT PRIMARY KEY, seq INTEGER NOT NULL, fingerprint TEXT NOT NULL, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS results (
    mutant_id TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, status TEXT NOT NULL, data TEXT NOT NULL,
    finished REAL NOT NULL);
CREATE TABLE IF NOT EXISTS tests (nodeid TEXT PRIMARY KEY, seq INTEGER NOT NULL, duration REAL NOT NULL,
    outcome TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sources (file TEXT PRIMARY KEY, text TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS baseline (key TEXT PRIMARY KEY, data TEXT NOT NULL, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS generated (file TEXT PRIMARY KEY, digest TEXT NOT NULL, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS suggestions (
    mutant_id TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, data TEXT NOT NULL);
"""


class StoreUnavailable(Exception):
    """The store file cannot be used (corrupt, foreign, unreadable)."""


def store_path(root: Path) -> Path:
    return root / STORE_DIR / STORE_FILE


def mutant_to_dict(mutant: Mutant) -> dict[str, Any]:
    data = asdict(mutant)
    data["scope"] = list(mutant.scope)
    return data


def mutant_from_dict(data: dict[str, Any]) -> Mutant:
    return Mutant(
        id=data["id"],
        operator=data["operator"],
        file=data["file"],
        scope=tuple(data["scope"]),
        location=Location(**data["location"]),
        original=data["original"],
        replacement=data["replacement"],
        description=data["description"],
        patch=TextPatch(**data["patch"]),
        ignored_reason=data.get("ignored_reason"),
    )


def result_to_dict(result: MutantResult) -> dict[str, Any]:
    data = asdict(result)
    data["status"] = result.status.value
    return data


def result_from_dict(data: dict[str, Any]) -> MutantResult:
    return MutantResult(
        mutant_id=data["mutant_id"],
        status=Status(data["status"]),
        killed_by=list(data.get("killed_by", [])),
        covered_by=list(data.get("covered_by", [])),
        tests_run=list(data.get("tests_run", [])),
        duration=float(data.get("duration", 0.0)),
        error=data.get("error"),
        status_reason=data.get("status_reason"),
    )


class Store:
    """One target's store. Use :meth:`open`, which recovers from a damaged file."""

    def __init__(self, path: Path, connection: sqlite3.Connection) -> None:
        self.path = path
        self.db = connection

    # --- opening -------------------------------------------------------------------------
    @classmethod
    def open(cls, root: Path, warn: Any = None) -> Store:
        """Open (or create) the store of ``root``; a damaged one is replaced, with a warning."""
        path = store_path(root)
        path.parent.mkdir(parents=True, exist_ok=True)
        ignore = path.parent / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# mutagent's cache: never commit it\n*\n", encoding="utf-8")
        try:
            return cls._connect(path)
        except StoreUnavailable as exc:
            if warn:
                warn(f"the mutagent store {path} is unusable ({exc}); starting afresh")
            for suffix in ("", "-wal", "-shm", "-journal"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
            return cls._connect(path)

    @classmethod
    def _connect(cls, path: Path) -> Store:
        connection: sqlite3.Connection | None = None
        try:
            connection = sqlite3.connect(path, isolation_level=None, timeout=5)
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=NORMAL")
            check = connection.execute("PRAGMA quick_check").fetchone()
            if not check or check[0] != "ok":
                raise StoreUnavailable(f"integrity check failed: {check}")
            connection.executescript(_SCHEMA)
            row = connection.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            if row is None:
                count = connection.execute("SELECT count(*) FROM mutants").fetchone()[0]
                if count:
                    raise StoreUnavailable("no schema version")
                connection.execute("INSERT INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
            elif row[0] != SCHEMA_VERSION:
                raise StoreUnavailable(f"schema version {row[0]}, expected {SCHEMA_VERSION}")
        except sqlite3.Error as exc:
            if connection is not None:
                connection.close()
            raise StoreUnavailable(str(exc)) from exc
        except StoreUnavailable:
            if connection is not None:
                connection.close()
            raise
        return cls(path, connection)

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        self.db.execute("BEGIN")
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    # --- meta ----------------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    # --- baseline ------------------------------------------------------------------------
    def load_baseline(self, key: str) -> dict[str, Any] | None:
        row = self.db.execute("SELECT data FROM baseline WHERE key=?", (key,)).fetchone()
        if row is None:
            return None
        try:
            return json.loads(row[0])
        except ValueError:
            return None

    def save_baseline(self, key: str, data: dict[str, Any], basis: dict[str, Any] | None = None) -> None:
        """Keep one baseline, the latest; ``basis``: what it was measured on (see
        ``fingerprint.baseline_basis``), for the next run's incremental baseline."""
        with self.transaction():
            self.db.execute("DELETE FROM baseline")
            self.db.execute("INSERT INTO baseline VALUES (?, ?, ?)", (key, json.dumps(data), time.time()))
            if basis is not None:
                self.set_meta("baseline_basis", json.dumps({**basis, "key": key}))

    def previous_baseline(self) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """The latest baseline and its basis, whatever it was measured on (``None`` when there is
        none, or its basis was not recorded): the starting point of an incremental baseline."""
        row = self.db.execute("SELECT key, data FROM baseline").fetchone()
        if row is None:
            return None
        try:
            basis = json.loads(self.get_meta("baseline_basis") or "null")
            data = json.loads(row[1])
        except ValueError:
            return None
        if not isinstance(basis, dict) or basis.get("key") != row[0] or not isinstance(data, dict):
            return None
        return data, basis

    # --- generated mutants cache ----------------------------------------------------------
    def load_generated(self, file: str, digest: str) -> list[Mutant] | None:
        row = self.db.execute("SELECT digest, data FROM generated WHERE file=?", (file,)).fetchone()
        if row is None or row[0] != digest:
            return None
        return [mutant_from_dict(item) for item in json.loads(row[1])]

    def save_generated(self, file: str, digest: str, mutants: list[Mutant]) -> None:
        data = json.dumps([mutant_to_dict(m) for m in mutants])
        self.db.execute("INSERT OR REPLACE INTO generated VALUES (?, ?, ?)", (file, digest, data))

    # --- the current run -------------------------------------------------------------------
    def set_run(
        self,
        mutants: list[Mutant],
        fingerprints: dict[str, str],
        tests: list[TestInfo],
        sources: dict[str, str],
        scope: dict[str, Any] | None = None,
    ) -> None:
        """Record the mutant set, tests and sources of the run about to start (results stay).

        ``scope``: how the run narrowed or shortened its work (``{"shard": [2, 2], "since": "REV",
        "fast": true}``), so that ``mutagent report`` labels a shard's score as the shard's.
        """
        with self.transaction():
            self.set_meta("scope", json.dumps(scope or {}))
            self.db.execute("DELETE FROM mutants")
            self.db.executemany(
                "INSERT OR REPLACE INTO mutants VALUES (?, ?, ?, ?)",
                [
                    (m.id, seq, fingerprints[m.id], json.dumps(mutant_to_dict(m)))
                    for seq, m in enumerate(mutants)
                ],
            )
            self.db.execute("DELETE FROM tests")
            self.db.executemany(
                "INSERT OR REPLACE INTO tests VALUES (?, ?, ?, ?)",
                [(t.nodeid, seq, t.duration, t.outcome) for seq, t in enumerate(tests)],
            )
            self.db.execute("DELETE FROM sources")
            self.db.executemany("INSERT INTO sources VALUES (?, ?)", sorted(sources.items()))

    def finished(self, fingerprints: dict[str, str]) -> dict[str, MutantResult]:
        """Stored results whose fingerprint still matches: these mutants need no new run."""
        done: dict[str, MutantResult] = {}
        for mutant_id, fingerprint, data in self.db.execute(
            "SELECT mutant_id, fingerprint, data FROM results"
        ):
            if fingerprints.get(mutant_id) == fingerprint:
                done[mutant_id] = result_from_dict(json.loads(data))
        return done

    def save_result(self, result: MutantResult, fingerprint: str) -> None:
        """Commit one result right away (autocommit): a kill -9 a moment later keeps it."""
        self.db.execute(
            "INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?)",
            (
                result.mutant_id,
                fingerprint,
                result.status.value,
                json.dumps(result_to_dict(result)),
                time.time(),
            ),
        )

    def save_results(self, items: Iterable[tuple[MutantResult, str]]) -> None:
        with self.transaction():
            for result, fingerprint in items:
                self.save_result(result, fingerprint)

    # --- verified suggestions (``mutagent suggest``) ----------------------------------------
    def save_suggestion(self, suggestion: Suggestion, fingerprint: str) -> None:
        """Keep a test ``suggest`` verified, tied to the mutant's fingerprint: when the mutant's
        code or its tests change, the suggestion is no longer shown (it was verified on the old)."""
        data = asdict(suggestion)
        data["imports"] = list(suggestion.imports)
        self.db.execute(
            "INSERT OR REPLACE INTO suggestions VALUES (?, ?, ?)",
            (suggestion.mutant_id, fingerprint, json.dumps(data)),
        )

    def drop_suggestion(self, mutant_id: str) -> None:
        self.db.execute("DELETE FROM suggestions WHERE mutant_id=?", (mutant_id,))

    def suggestions(self, fingerprints: dict[str, str]) -> dict[str, Suggestion]:
        """The stored suggestions still about the current mutants (same fingerprint)."""
        found: dict[str, Suggestion] = {}
        for mutant_id, fingerprint, data in self.db.execute(
            "SELECT mutant_id, fingerprint, data FROM suggestions"
        ):
            if fingerprints.get(mutant_id) != fingerprint:
                continue
            try:
                item = json.loads(data)
                found[mutant_id] = Suggestion(**{**item, "imports": tuple(item.get("imports", ()))})
            except (ValueError, TypeError):
                continue
        return found

    def fingerprints(self) -> dict[str, str]:
        """The current run's mutant fingerprints, by id."""
        return dict(self.db.execute("SELECT id, fingerprint FROM mutants"))

    # --- reading for reports -------------------------------------------------------------
    def run_data(self, root: Path) -> RunData:
        mutants: list[Mutant] = []
        fingerprints: dict[str, str] = {}
        for mutant_id, fingerprint, data in self.db.execute(
            "SELECT id, fingerprint, data FROM mutants ORDER BY seq"
        ):
            mutants.append(mutant_from_dict(json.loads(data)))
            fingerprints[mutant_id] = fingerprint
        tests = [
            TestInfo(nodeid, duration, outcome)
            for nodeid, duration, outcome in self.db.execute(
                "SELECT nodeid, duration, outcome FROM tests ORDER BY seq"
            )
        ]
        sources = dict(self.db.execute("SELECT file, text FROM sources"))
        faults = json.loads(self.get_meta("faults") or "[]")  # the baseline's fault log
        scope = json.loads(self.get_meta("scope") or "{}")
        scope = scope if isinstance(scope, dict) else {}
        shard = scope.get("shard")
        exploration = json.loads(self.get_meta("exploration") or "null")
        return RunData(
            root=str(root),
            mutants=mutants,
            results=self.finished(fingerprints),
            tests=tests,
            sources=sources,
            faults=faults if isinstance(faults, list) else [],
            shard=(int(shard[0]), int(shard[1])) if isinstance(shard, list) and len(shard) == 2 else None,
            since=str(scope["since"]) if scope.get("since") is not None else None,
            fast=bool(scope.get("fast", False)),
            suggestions=self.suggestions(fingerprints),
            exploration=exploration if isinstance(exploration, dict) else None,
        )


def load_run_data(root: Path) -> RunData:
    """Everything the last ``mutagent run`` of ``root`` recorded, for the reports (read-only).

    Mutants without a current result are absent from ``results`` (reports show them Pending).
    """
    root = Path(root)
    path = store_path(root)
    if not path.is_file():
        from mutagent.errors import UsageError

        raise UsageError(f"no mutagent results in {root} (run `mutagent run {root}` first)")
    try:
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        try:
            return Store(path, connection).run_data(root)
        finally:
            connection.close()
    except (sqlite3.Error, ValueError, KeyError, TypeError) as exc:
        from mutagent.errors import UsageError

        raise UsageError(f"cannot read the mutagent store {path}: {exc} (re-run `mutagent run`)") from exc
