"""RunData <-> the mutation-testing-report-schema (Stryker's, schemaVersion 2).

The JSON report is mutagent's portable artifact: CI shards write it, ``mutagent merge`` combines
it, ``mutagent report --from`` re-renders every other format from it, and any Stryker-compatible
dashboard can read it. Everything the schema defines is filled in its own field; what mutagent
needs beyond that to rebuild an exact :class:`RunData` (the enclosing scope, the exact text patch,
the tests actually run, the raw error) sits in an extra ``"mutagent"`` object on each mutant and
test, which the schema permits and other tools ignore. A report written by another tool loads too:
the patch is then rebuilt from ``location`` and ``replacement``.
"""

from __future__ import annotations

import hashlib
import os
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

from mutagent import __version__
from mutagent.errors import UsageError
from mutagent.model import Location, Mutant, MutantResult, RunData, Status, TestInfo, TextPatch
from mutagent.reports.guards import all_tests
from mutagent.reports.repopaths import repo_relative, repo_root
from mutagent.reports.stats import sorted_mutants, status_of

SCHEMA_VERSION = "2"
EXT = "mutagent"  # key of mutagent's extra data on mutants and tests
DEFAULT_THRESHOLDS = {"high": 80, "low": 60}


def line_starts(source: str) -> list[int]:
    """Offsets of each line start, splitting where libcst does (``\\n``, ``\\r\\n``, ``\\r``)."""
    starts = [0]
    index, length = 0, len(source)
    while index < length:
        char = source[index]
        if char == "\r" and index + 1 < length and source[index + 1] == "\n":
            index += 1
        if char in "\r\n":
            starts.append(index + 1)
        index += 1
    return starts


def offset_of(starts: list[int], line: int, col: int) -> int:
    """Character offset of 1-based ``line`` and 0-based ``col``."""
    if not 1 <= line <= len(starts):
        raise ValueError(f"line {line} is outside the file")
    return starts[line - 1] + col


def minimal_patch(source: str, patch: TextPatch) -> TextPatch:
    """The smallest patch with the same effect: shared prefix and suffix trimmed away.

    Generation re-renders a whole top-level statement (possibly a large class) per mutant; storing
    only the changed middle keeps the JSON small while ``apply`` still gives the identical file.
    """
    old = source[patch.start : patch.end]
    new = patch.text
    prefix = 0
    limit = min(len(old), len(new))
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[len(old) - 1 - suffix] == new[len(new) - 1 - suffix]:
        suffix += 1
    return TextPatch(patch.start + prefix, patch.end - suffix, new[prefix : len(new) - suffix])


def _position(line: int, col: int) -> dict[str, int]:
    return {"line": line, "column": col + 1}


def _test_name(nodeid: str) -> str:
    return nodeid.split("::", 1)[1] if "::" in nodeid else nodeid


def _dependencies() -> dict[str, str]:
    found = {}
    for name in ("libcst", "pytest", "coverage"):
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


def _mutant_json(run_data: RunData, mutant: Mutant) -> dict[str, Any]:
    result = run_data.results.get(mutant.id)
    status = status_of(run_data, mutant)
    source = run_data.sources.get(mutant.file)
    patch = minimal_patch(source, mutant.patch) if source is not None else mutant.patch
    loc = mutant.location
    entry: dict[str, Any] = {
        "id": mutant.id,
        "mutatorName": mutant.operator,
        "location": {
            "start": _position(loc.start_line, loc.start_col),
            "end": _position(loc.end_line, loc.end_col),
        },
        "status": status.value,
        "description": mutant.description,
        "replacement": mutant.replacement,
        "killedBy": list(result.killed_by) if result else [],
        "coveredBy": list(result.covered_by) if result else [],
    }
    reason = _status_reason(mutant, result, status)
    if reason:
        entry["statusReason"] = reason
    if result is not None:
        entry["duration"] = round(result.duration * 1000, 3)
        if result.tests_run:
            entry["testsCompleted"] = len(result.tests_run)
    ext: dict[str, Any] = {
        "scope": list(mutant.scope),
        "original": mutant.original,
        "patch": {"start": patch.start, "end": patch.end, "text": patch.text},
    }
    if result is None:
        ext["result"] = False
    else:
        ext["testsRun"] = list(result.tests_run)
        ext["seconds"] = result.duration  # exact; the schema's duration is rounded milliseconds
        for key, value in (("error", result.error), ("statusReason", result.status_reason)):
            if value is not None:
                ext[key] = value
    if mutant.ignored_reason is not None:
        ext["ignoredReason"] = mutant.ignored_reason
    entry[EXT] = ext
    return entry


def _status_reason(mutant: Mutant, result: MutantResult | None, status: Status) -> str | None:
    """The schema's ``statusReason``: why ignored, the error of an error mutant, else the engine's note."""
    if status is Status.IGNORED:
        return mutant.ignored_reason or (result.status_reason if result else None) or "ignored"
    if result is None:
        return None
    if status in (Status.RUNTIME_ERROR, Status.COMPILE_ERROR) and result.error:
        return result.error
    return result.status_reason


def to_stryker_json(
    run_data: RunData,
    *,
    config: dict[str, Any] | None = None,
    thresholds: dict[str, int] | None = None,
) -> dict[str, Any]:
    """The schema-v2 report of ``run_data`` (validates against mutation-testing-report-schema.json)."""
    # file keys relative to the repository root (a CI resolves paths from its checkout), and
    # projectRoot that root, so that a report read back keeps consistent paths
    target_root = Path(run_data.root)
    top = repo_root(target_root) if run_data.root else None
    if top is not None and top == Path(os.path.abspath(target_root)):
        top = None  # the target is the repository root: paths are already what a CI wants

    def key(file: str) -> str:
        return repo_relative(Path(file), target_root) if top is not None else file

    files: dict[str, Any] = {}
    for file, source in sorted(run_data.sources.items()):
        files[key(file)] = {"language": "python", "source": source, "mutants": []}
    for mutant in sorted_mutants(run_data.mutants):
        file_entry = files.setdefault(
            key(mutant.file),
            {"language": "python", "source": "", "mutants": [], EXT: {"sourceMissing": True}},
        )
        file_entry["mutants"].append(_mutant_json(run_data, mutant))

    baseline = {t.nodeid: t for t in run_data.tests}
    test_files: dict[str, Any] = {}
    for order, nodeid in enumerate(all_tests(run_data)):
        info = baseline.get(nodeid)
        ext: dict[str, Any] = {"order": order}
        if info is None:
            ext["baseline"] = False
        else:
            ext.update(duration=info.duration, outcome=info.outcome)
        test = {"id": nodeid, "name": _test_name(nodeid), EXT: ext}
        test_files.setdefault(nodeid.split("::", 1)[0], {"tests": []})["tests"].append(test)

    report: dict[str, Any] = {
        "schemaVersion": SCHEMA_VERSION,
        "thresholds": dict(thresholds or DEFAULT_THRESHOLDS),
        "projectRoot": str(top) if top is not None else run_data.root,
        "config": dict(config or {}),
        "files": files,
        "testFiles": test_files,
        "framework": {"name": "mutagent", "version": __version__, "dependencies": _dependencies()},
        EXT: _run_record(run_data),
        "system": {
            "ci": bool(os.environ.get("CI")),
            "os": {"platform": sys.platform},
            "cpu": {"logicalCores": os.cpu_count() or 1},
        },
    }
    if run_data.faults:
        from mutagent.reports.faults import fault_coverage_json

        # top-level extension field (the schema allows extra properties): the raw fault log, so
        # `report --from` rebuilds every view, and the coverage table other tools can read as is
        report[EXT].update(faultLog=run_data.faults, faultCoverage=fault_coverage_json(run_data))
    return report


def source_fingerprint(sources: dict[str, str]) -> str:
    """One digest of every mutated file's path and text: shards of one run must agree on it."""
    digest = hashlib.sha256()
    for file, source in sorted(sources.items()):
        digest.update(file.encode("utf-8", "surrogatepass") + b"\x00")
        digest.update(source.encode("utf-8", "surrogatepass") + b"\x00")
    return digest.hexdigest()


def _run_record(run_data: RunData) -> dict[str, Any]:
    """mutagent's run-level record: the shard (for ``merge``), the source fingerprint, partiality,
    the ``--since`` revision and ``--fast`` (what the report's score and guard claims are of)."""
    record: dict[str, Any] = {"sourceFingerprint": source_fingerprint(run_data.sources)}
    if run_data.shard is not None:
        record["shard"] = {"index": run_data.shard[0], "count": run_data.shard[1]}
    if run_data.partial:
        record["partial"] = run_data.partial
    if run_data.since is not None:
        record["since"] = run_data.since
    if run_data.fast:
        record["fast"] = True
    return record


def _check_version(report: dict[str, Any], name: str) -> None:
    version = str(report.get("schemaVersion", ""))
    if version.split(".")[0] not in ("1", "2"):
        raise UsageError(f"{name}: unsupported mutation report schemaVersion {version!r} (expected 1 or 2)")


def _mutant_from_json(file: str, source: str, starts: list[int], entry: dict[str, Any]) -> Mutant:
    ext = entry.get(EXT) or {}
    start, end = entry["location"]["start"], entry["location"]["end"]
    location = Location(
        int(start["line"]), int(start["column"]) - 1, int(end["line"]), int(end["column"]) - 1
    )
    replacement = str(entry.get("replacement", ""))
    if "patch" in ext:
        patch = TextPatch(int(ext["patch"]["start"]), int(ext["patch"]["end"]), str(ext["patch"]["text"]))
    else:
        patch = TextPatch(
            offset_of(starts, location.start_line, location.start_col),
            offset_of(starts, location.end_line, location.end_col),
            replacement,
        )
    original = ext.get("original")
    if original is None:
        original = source[
            offset_of(starts, location.start_line, location.start_col) : offset_of(
                starts, location.end_line, location.end_col
            )
        ]
    ignored = ext.get("ignoredReason")
    if ignored is None and EXT not in entry and entry["status"] == Status.IGNORED.value:
        ignored = entry.get("statusReason", "ignored")
    return Mutant(
        id=str(entry["id"]),
        operator=str(entry["mutatorName"]),
        file=file,
        scope=tuple(ext.get("scope", ())),
        location=location,
        original=original,
        replacement=replacement,
        description=str(entry.get("description", "")),
        patch=patch,
        ignored_reason=ignored,
    )


def _result_from_json(entry: dict[str, Any]) -> MutantResult | None:
    ext = entry.get(EXT)
    status = Status(entry["status"])
    if (ext is not None and ext.get("result") is False) or (ext is None and status is Status.PENDING):
        return None
    if ext is None:  # a report from another tool: the schema's fields are all there is
        reason = entry.get("statusReason")
        is_error = status in (Status.RUNTIME_ERROR, Status.COMPILE_ERROR)
        error, status_reason = (reason, None) if is_error else (None, reason)
        ext = {"error": error, "statusReason": status_reason}
    return MutantResult(
        mutant_id=str(entry["id"]),
        status=status,
        killed_by=[str(t) for t in entry.get("killedBy") or []],
        covered_by=[str(t) for t in entry.get("coveredBy") or []],
        tests_run=[str(t) for t in ext.get("testsRun") or []],
        duration=float(ext["seconds"]) if "seconds" in ext else float(entry.get("duration", 0.0)) / 1000,
        error=ext.get("error"),
        status_reason=ext.get("statusReason"),
    )


def from_stryker_json(report: Any, name: str = "report") -> RunData:
    """Rebuild :class:`RunData` from a schema report; malformed input is a one-line UsageError."""
    if not isinstance(report, dict) or not isinstance(report.get("files"), dict):
        raise UsageError(f"{name}: not a mutation-testing report (no 'files' object)")
    _check_version(report, name)
    try:
        mutants: list[Mutant] = []
        results: dict[str, MutantResult] = {}
        sources: dict[str, str] = {}
        for file, file_entry in report["files"].items():
            source = str(file_entry.get("source", ""))
            if not (file_entry.get(EXT) or {}).get("sourceMissing"):
                sources[file] = source
            starts = line_starts(source)
            for entry in file_entry.get("mutants", []):
                mutant = _mutant_from_json(file, source, starts, entry)
                mutants.append(mutant)
                result = _result_from_json(entry)
                if result is not None:
                    results[mutant.id] = result
        ordered: list[tuple[int, TestInfo]] = []
        for test_file in (report.get("testFiles") or {}).values():
            for test in test_file.get("tests", []):
                ext = test.get(EXT) or {}
                if ext.get("baseline") is False:
                    continue
                info = TestInfo(
                    str(test["id"]), float(ext.get("duration", 0.0)), str(ext.get("outcome", "passed"))
                )
                ordered.append((int(ext.get("order", len(ordered))), info))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise UsageError(f"{name}: malformed mutation-testing report ({type(exc).__name__}: {exc})") from exc
    tests = [info for _, info in sorted(ordered, key=lambda pair: pair[0])]
    record = report.get(EXT) if isinstance(report.get(EXT), dict) else {}
    faults = record.get("faultLog")
    shard = None
    try:
        if isinstance(record.get("shard"), dict):
            shard = (int(record["shard"]["index"]), int(record["shard"]["count"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise UsageError(f"{name}: malformed shard record ({exc})") from exc

    return RunData(
        root=str(report.get("projectRoot", "")),
        mutants=mutants,
        results=results,
        tests=tests,
        sources=sources,
        faults=[f for f in faults if isinstance(f, dict)] if isinstance(faults, list) else [],
        shard=shard,
        partial=str(record["partial"]) if record.get("partial") else None,
        since=str(record["since"]) if record.get("since") is not None else None,
        fast=bool(record.get("fast", False)),
    )
