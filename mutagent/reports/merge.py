"""Combining shard reports into the report of the whole run.

Shards of one run share the tree, so a file's source must be identical in every shard that has
it: a mismatch means the shards ran on different commits and merging them would report
statuses for code that never existed together, so it is refused. The same mutant appearing in
two shards (a re-run job) is fine when both agree or one is still pending. Each shard report
records its ``I/N``: a set with a shard missing or given twice is refused (``--allow-partial``
merges it anyway and marks the result partial), so a merged report never looks whole when it is not.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mutagent.errors import UsageError
from mutagent.model import Mutant, MutantResult, RunData, Status, TestInfo


def read_json(path: Path | str) -> Any:
    """Parse a JSON file; unreadable or invalid input is a one-line UsageError."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise UsageError(f"{path}: no such file") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from exc


def load_report(path: Path | str) -> RunData:
    """A schema JSON report file as :class:`RunData`."""
    from mutagent.reports.stryker import from_stryker_json

    return from_stryker_json(read_json(path), name=str(path))


def _same_result(a: MutantResult, b: MutantResult) -> bool:
    return (a.status, sorted(a.killed_by), sorted(a.covered_by)) == (
        b.status,
        sorted(b.killed_by),
        sorted(b.covered_by),
    )


def check_shard_set(parts: Sequence[tuple[str, RunData]]) -> str | None:
    """``None`` when the parts are exactly shards 1..N of one run on one source; else why not.

    A report without a shard record is the whole run (1/1). Different source fingerprints mean
    different commits and are never accepted; a missing or repeated shard is what
    ``--allow-partial`` lets through.
    """
    from mutagent.reports.stryker import source_fingerprint

    fingerprints = {source_fingerprint(data.sources): name for name, data in parts}
    if len(fingerprints) > 1:
        first, second = list(fingerprints.values())[:2]
        raise UsageError(
            f"{first} and {second} were run on different sources (source fingerprints differ): "
            "were the shards run on the same commit?"
        )
    seen: dict[tuple[int, int], str] = {}
    counts: set[int] = set()
    for name, data in parts:
        shard = data.shard or (1, 1)
        counts.add(shard[1])
        if shard in seen:
            return f"shard {shard[0]}/{shard[1]} appears twice ({seen[shard]} and {name})"
        seen[shard] = name
    if len(counts) > 1:
        return "the reports come from different splits (" + ", ".join(f"/{n}" for n in sorted(counts)) + ")"
    (count,) = counts
    missing = [index for index in range(1, count + 1) if (index, count) not in seen]
    if missing:
        names = ", ".join(f"{index}/{count}" for index in missing)
        return f"incomplete: shard{'s' if len(missing) > 1 else ''} {names} missing"
    return None


def merge_run_data(parts: Sequence[tuple[str, RunData]], allow_partial: bool = False) -> RunData:
    """One :class:`RunData` from named shard parts; conflicting shards raise UsageError.

    The parts must be shards 1..N of the same split, each once, on the same source; otherwise
    the merge is refused, unless ``allow_partial``: then the merged report says it is partial.
    """
    if not parts:
        raise UsageError("merge needs at least one report")
    sources: dict[str, str] = {}
    source_from: dict[str, str] = {}
    mutants: dict[str, Mutant] = {}
    mutant_from: dict[str, str] = {}
    results: dict[str, MutantResult] = {}
    tests: dict[str, TestInfo] = {}
    faults: dict[tuple[object, object], dict[str, Any]] = {}
    for name, data in parts:
        for file, source in data.sources.items():
            if file in sources and sources[file] != source:
                raise UsageError(
                    f"{file} differs between {source_from[file]} and {name}: "
                    "were the shards run on the same commit?"
                )
            sources.setdefault(file, source)
            source_from.setdefault(file, name)
        for mutant in data.mutants:
            if mutant.id in mutants and mutants[mutant.id] != mutant:
                raise UsageError(f"mutant {mutant.id} differs between {mutant_from[mutant.id]} and {name}")
            mutants.setdefault(mutant.id, mutant)
            mutant_from.setdefault(mutant.id, name)
            new = data.results.get(mutant.id)
            old = results.get(mutant.id)
            if new is None or new.status is Status.PENDING:
                if old is None and new is not None:
                    results[mutant.id] = new
                continue
            if old is not None and old.status is not Status.PENDING and not _same_result(old, new):
                raise UsageError(
                    f"mutant {mutant.id} has conflicting results "
                    f"({old.status.value} in {mutant_from[mutant.id]}, {new.status.value} in {name})"
                )
            results[mutant.id] = new
        for test in data.tests:
            tests.setdefault(test.nodeid, test)
        for step in data.faults:  # every shard measured the same baseline: keep each step once
            faults.setdefault((step.get("test"), step.get("step")), step)
    problem = check_shard_set(parts)
    inherited = [data.partial for _, data in parts if data.partial]
    if problem is not None and not allow_partial:
        raise UsageError(
            f"{problem}; refusing to write a report that looks whole (--allow-partial merges anyway)"
        )
    partial = "; ".join([*([problem] if problem else []), *inherited]) or None
    return RunData(
        root=parts[0][1].root,
        mutants=list(mutants.values()),
        results=results,
        tests=list(tests.values()),
        sources=sources,
        faults=list(faults.values()),
        partial=partial,
        # shards of a ``--since`` run share the revision; one ``--fast`` shard leaves the matrix incomplete
        since=" and ".join(dict.fromkeys(data.since for _, data in parts if data.since is not None)) or None,
        fast=any(data.fast for _, data in parts),
    )


def merge_reports(paths: Sequence[Path | str], allow_partial: bool = False) -> RunData:
    """Load and merge shard JSON reports (as written by ``--json``)."""
    return merge_run_data([(str(path), load_report(path)) for path in paths], allow_partial)
