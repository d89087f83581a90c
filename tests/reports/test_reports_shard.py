"""Sharding is a deterministic partition; merging the shards' reports equals the unsharded run."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections import Counter
from dataclasses import replace

import jsonschema
import pytest
from testkit import FIXTURES, REPO
from testkit.sample_runs import large_run_data, sample_run_data

from mutagent.cli import main
from mutagent.errors import UsageError
from mutagent.model import RunData
from mutagent.mutants.shard import parse_shard, select_shard, shard_of
from mutagent.reports.merge import merge_reports
from mutagent.reports.stryker import to_stryker_json
from mutagent.reports.writer import write_reports

SCHEMA = json.loads((FIXTURES / "mutation-testing-report-schema.json").read_text())


def shard_run(data: RunData, index: int, count: int) -> RunData:
    """What a ``--shard index/count`` run stores: its mutants and results, the same tests and sources."""
    mutants = select_shard(data.mutants, index, count)
    ids = {m.id for m in mutants}
    results = {k: v for k, v in data.results.items() if k in ids}
    return replace(data, mutants=mutants, results=results, shard=(index, count))


def comparable(report: dict) -> dict:
    report = dict(report)
    report.pop("system")  # which machine wrote it
    return report


@pytest.mark.parametrize(
    "text, expected", [("1/2", (1, 2)), ("4/4", (4, 4)), (" 2 / 3 ", (2, 3)), ("1/1", (1, 1))]
)
def test_parse_shard(text, expected):
    assert parse_shard(text) == expected


@pytest.mark.parametrize("text", ["0/2", "3/2", "1/0", "1", "a/b", "-1/2", "1/2/3", ""])
def test_parse_shard_rejects_nonsense(text):
    with pytest.raises(UsageError, match="shard"):
        parse_shard(text)


def test_shards_partition_the_mutants_deterministically():
    mutants = large_run_data(n_mutants=200).mutants
    shards = [select_shard(mutants, i, 4) for i in range(1, 5)]
    ids = [m.id for shard in shards for m in shard]
    assert sorted(ids) == sorted(m.id for m in mutants)  # complete and disjoint
    assert all(25 <= len(shard) <= 75 for shard in shards)  # roughly balanced
    shuffled = list(mutants)
    random.Random(1).shuffle(shuffled)
    for i in range(1, 5):  # independent of order: another job scanning files differently agrees
        assert {m.id for m in select_shard(shuffled, i, 4)} == {m.id for m in shards[i - 1]}


def test_shard_is_the_same_in_every_process():
    # CI jobs are separate interpreters: the split must not depend on hash randomisation
    code = "from mutagent.mutants.shard import shard_of; print([shard_of(f'{n:012x}', 4) for n in range(64)])"
    outputs = set()
    for seed in ("1", "2", "random"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            env=env,
            check=True,
            cwd=REPO,
        )
        outputs.add(done.stdout)
    assert len(outputs) == 1
    assert outputs == {str([shard_of(f"{n:012x}", 4) for n in range(64)]) + "\n"}
    counts = Counter(shard_of(f"{n:012x}", 3) for n in range(3000))
    assert set(counts) == {1, 2, 3} and min(counts.values()) > 900


@pytest.mark.parametrize("build", [sample_run_data, large_run_data])
def test_merged_shards_equal_the_unsharded_report(tmp_path, build):
    full = build()
    paths = []
    for i in range(1, 4):
        path = tmp_path / f"shard-{i}.json"
        write_reports(shard_run(full, i, 3), json=path)
        paths.append(str(path))
    out = tmp_path / "merged.json"
    assert main(["merge", *paths, "-o", str(out)]) == 0
    merged = json.loads(out.read_text(encoding="utf-8"))
    jsonschema.validate(merged, SCHEMA)
    assert comparable(merged) == comparable(to_stryker_json(full))
    statuses = {m["id"]: m["status"] for f in merged["files"].values() for m in f["mutants"]}
    assert statuses == {m.id: full.result_of(m).status.value for m in full.mutants}


def test_the_same_shard_twice_is_refused_unless_partial_is_allowed(tmp_path, capsys):
    path = tmp_path / "a.json"
    write_reports(shard_run(sample_run_data(), 1, 2), json=path)
    out = tmp_path / "out.json"
    assert main(["merge", str(path), str(path), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "shard 1/2 appears twice" in err and len(err.strip().splitlines()) == 1
    assert not out.exists()
    merged = merge_reports([path, path], allow_partial=True)
    assert len(merged.mutants) == len(shard_run(sample_run_data(), 1, 2).mutants)
    assert "appears twice" in merged.partial


def test_an_incomplete_set_is_refused_and_allow_partial_says_so_everywhere(tmp_path, capsys):
    data = sample_run_data()
    a, c = tmp_path / "a.json", tmp_path / "c.json"
    write_reports(shard_run(data, 1, 3), json=a)
    write_reports(shard_run(data, 3, 3), json=c)
    out = tmp_path / "out.json"
    assert main(["merge", str(a), str(c), "-o", str(out)]) == 2
    assert "incomplete: shard 2/3 missing" in capsys.readouterr().err
    assert not out.exists()
    assert main(["merge", str(a), str(c), "-o", str(out), "--allow-partial"]) == 0
    assert "partial report: incomplete: shard 2/3 missing" in " ".join(capsys.readouterr().out.split())
    assert json.loads(out.read_text())["mutagent"]["partial"] == "incomplete: shard 2/3 missing"
    assert main(["report", "--from", str(out)]) == 0
    assert "PARTIAL report: incomplete: shard 2/3 missing" in " ".join(capsys.readouterr().out.split())


def test_the_shard_and_the_source_fingerprint_are_recorded(tmp_path):
    path = tmp_path / "a.json"
    write_reports(shard_run(sample_run_data(), 2, 4), json=path)
    record = json.loads(path.read_text())["mutagent"]
    assert record["shard"] == {"index": 2, "count": 4}
    assert len(record["sourceFingerprint"]) == 64


def test_shards_from_different_commits_are_refused(tmp_path, capsys):
    data = sample_run_data()
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    write_reports(shard_run(data, 1, 2), json=a)
    changed = dict(data.sources)
    changed["agent/loop.py"] += "# edited\n"
    write_reports(replace(shard_run(data, 2, 2), sources=changed), json=b)
    assert main(["merge", str(a), str(b), "-o", str(tmp_path / "out.json")]) == 2
    err = capsys.readouterr().err
    assert "agent/loop.py differs between" in err and "same commit" in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out.json").exists()


def test_conflicting_results_are_refused(tmp_path):
    data = sample_run_data()
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    write_reports(data, json=a)
    other = replace(data, results=dict(data.results))
    flipped = data.mutants[0].id
    other.results[flipped] = replace(
        data.results[flipped], status=data.results[flipped].status.__class__("Survived")
    )
    write_reports(other, json=b)
    with pytest.raises(UsageError, match=f"mutant {flipped} has conflicting results"):
        merge_reports([a, b])


def test_merge_input_errors_are_one_line(tmp_path, capsys):
    garbage = tmp_path / "garbage.json"
    garbage.write_text("{not json", encoding="utf-8")
    assert main(["merge", str(garbage), "-o", str(tmp_path / "o.json")]) == 2
    assert main(["merge", str(tmp_path / "missing.json"), "-o", str(tmp_path / "o.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2
    assert "not valid JSON" in err[0] and "no such file" in err[1]


def test_shards_that_list_every_mutant_as_pending_still_merge(tmp_path):
    # a shard run may store every generated mutant and results only for its own share
    full = sample_run_data()
    paths = []
    for i in (1, 2):
        own = {m.id for m in select_shard(full.mutants, i, 2)}
        part = replace(full, results={k: v for k, v in full.results.items() if k in own}, shard=(i, 2))
        paths.append(tmp_path / f"shard-{i}.json")
        write_reports(part, json=paths[-1])
    merged = merge_reports(paths)
    assert merged.results == full.results
    assert comparable(to_stryker_json(merged)) == comparable(to_stryker_json(full))
