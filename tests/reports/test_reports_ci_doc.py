"""docs/ci.md's workflow, executed: the merge and gate commands are run exactly as written.

The shard jobs' ``mutagent run`` belongs to the engine; here each shard's report is produced the
way a ``--shard I/N`` run stores it (the mutants ``select_shard`` picks, with their results).
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import replace

import pytest
from testkit import REPO
from testkit.sample_runs import large_run_data, sample_run_data
from testkit.sarif_schema import validate_sarif

from mutagent.cli import main
from mutagent.mutants.shard import parse_shard, select_shard
from mutagent.reports.gate import evaluate_gate
from mutagent.reports.stats import undetected_mutants
from mutagent.reports.writer import write_reports

DOC = REPO / "docs" / "ci.md"


def workflow() -> str:
    text = DOC.read_text(encoding="utf-8")
    return re.search(r"```yaml\n(.*?)```", text, re.S).group(1)


def run_steps(yaml: str) -> list[str]:
    return [m.group(1).strip() for m in re.finditer(r"^\s*- run: (mutagent .*)$", yaml, re.M)]


def test_doc_workflow_shards_are_consistent():
    yaml = workflow()
    shards = [int(s) for s in re.search(r"shard: \[([\d, ]+)\]", yaml).group(1).split(",")]
    (run,) = [c for c in run_steps(yaml) if c.startswith("mutagent run")]
    spec = re.search(r"--shard (.+?/\d+)", run).group(1)
    count = int(spec.split("/")[1])
    assert shards == list(range(1, count + 1))
    for shard in shards:
        assert parse_shard(spec.replace("${{ matrix.shard }}", str(shard))) == (shard, count)


@pytest.mark.parametrize("build, expected_code", [(sample_run_data, 1), (large_run_data, 1)])
def test_doc_merge_and_gate_commands_run_as_written(tmp_path, monkeypatch, capsys, build, expected_code):
    yaml = workflow()
    commands = run_steps(yaml)
    (run,) = [c for c in commands if c.startswith("mutagent run")]
    (merge,) = [c for c in commands if c.startswith("mutagent merge")]
    (report,) = [c for c in commands if c.startswith("mutagent report")]
    count = int(re.search(r"--shard .+?/(\d+)", run).group(1))
    json_pattern = re.search(r"--json (.+?\.json)", run).group(1)

    full = build()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "step-summary.md"))
    for shard in range(1, count + 1):  # what each matrix job uploads
        mutants = select_shard(full.mutants, shard, count)
        ids = {m.id for m in mutants}
        part = replace(
            full,
            mutants=mutants,
            results={k: v for k, v in full.results.items() if k in ids},
            shard=(shard, count),
        )
        write_reports(part, json=json_pattern.replace("${{ matrix.shard }}", str(shard)))

    assert main(shlex.split(merge)[1:]) == 0
    gate_flags = shlex.split(report)
    fail_under = float(gate_flags[gate_flags.index("--fail-under") + 1])
    code = main(gate_flags[1:])
    assert code == expected_code == (0 if evaluate_gate(full, fail_under=fail_under).passed else 1)
    out = capsys.readouterr().out
    assert "gate FAILED" in out
    annotations = [line for line in out.splitlines() if line.startswith("::warning file=")]
    assert len(annotations) == len(undetected_mutants(full))
    comment = gate_flags[gate_flags.index("--markdown") + 1]
    assert (tmp_path / "step-summary.md").read_text(encoding="utf-8") == (tmp_path / comment).read_text(
        encoding="utf-8"
    )
    sarif = json.loads((tmp_path / gate_flags[gate_flags.index("--sarif") + 1]).read_text(encoding="utf-8"))
    assert len(validate_sarif(sarif)["runs"][0]["results"]) == len(undetected_mutants(full))
    assert re.search(r"sarif_file: (\S+)", yaml).group(1) == gate_flags[gate_flags.index("--sarif") + 1]
    assert re.search(r"--body-file (\S+)", yaml).group(1) == comment
    uploaded = re.search(r"name: mutation-report\n\s+path: \|\n((?:\s+\S+\n)+)", yaml).group(1).split()
    for name in uploaded:
        assert (tmp_path / name).is_file(), name
