"""The report, show and apply commands end to end through the CLI, from a JSON report or the store."""

from __future__ import annotations

import json
import os
import sys
import types
from pathlib import Path

import pytest
from testkit.sample_runs import LOOP_FILE, LOOP_SOURCE, TOOLS_FILE, TOOLS_SOURCE, sample_run_data

from mutagent.cli import main
from mutagent.reports.writer import write_reports


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A target tree matching the sample run, with its JSON report next to it."""
    root = tmp_path / "agent-project"
    (root / "agent").mkdir(parents=True)
    (root / LOOP_FILE).write_text(LOOP_SOURCE, encoding="utf-8")
    (root / TOOLS_FILE).write_text(TOOLS_SOURCE, encoding="utf-8")
    write_reports(sample_run_data(str(root)), json=tmp_path / "report.json")
    return root


def report_path(project: Path) -> str:
    return str(project.parent / "report.json")


def survivor(operator: str = "retry-budget"):
    return next(m for m in sample_run_data().mutants if m.operator == operator)


def test_report_from_json_prints_and_gates(project, capsys):
    code = main(["report", "--from", report_path(project), "--fail-under", "80"])
    out = capsys.readouterr().out
    assert code == 1
    assert "mutation score 70.0%" in out
    assert "gate FAILED" in out and "below 80%" in out
    assert survivor().id in out


def test_report_writes_every_format_even_when_the_gate_fails(project, tmp_path, capsys):
    html, junit, out_json = tmp_path / "r.html", tmp_path / "r.xml", tmp_path / "again.json"
    code = main(
        [
            "report",
            "--from",
            report_path(project),
            "-q",
            "--max-survived",
            "0",
            "--html",
            str(html),
            "--junit",
            str(junit),
            "--json",
            str(out_json),
        ]
    )
    assert code == 1
    assert html.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert "<testsuites" in junit.read_text(encoding="utf-8")
    assert json.loads(out_json.read_text(encoding="utf-8"))["schemaVersion"] == "2"
    out = capsys.readouterr().out
    assert "Kill matrix" not in out  # --quiet
    assert f"wrote {html}" in out.replace("\n", "")


def test_report_passes_the_gate(project, capsys):
    assert (
        main(["report", "--from", report_path(project), "-q", "--fail-under", "70", "--max-survived", "3"])
        == 0
    )
    assert "gate passed" in capsys.readouterr().out


@pytest.mark.parametrize(
    "flag, value", [("--fail-under", "120"), ("--fail-under", "abc"), ("--max-survived", "-2")]
)
def test_bad_gate_flags_exit_2(project, flag, value, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["report", "--from", report_path(project), flag, value])
    assert exc.value.code == 2
    assert flag in capsys.readouterr().err


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full to simulate a full disk")
def test_full_disk_is_one_line_not_a_traceback(project, capsys):
    code = main(["report", "--from", report_path(project), "-q", "--json", "/dev/full"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip().splitlines() == ["error: cannot write /dev/full: No space left on device"]


def test_unwritable_target_is_one_line(project, tmp_path, capsys):
    code = main(["report", "--from", report_path(project), "-q", "--html", str(tmp_path)])
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: cannot write {tmp_path}")


def test_missing_report_and_missing_store(tmp_path, capsys, monkeypatch):
    assert main(["report", "--from", str(tmp_path / "nope.json")]) == 2
    monkeypatch.setitem(sys.modules, "mutagent.store", None)  # the engine's store not importable
    assert main(["report", str(tmp_path)]) == 4
    assert main(["report", str(tmp_path / "absent")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3
    assert "no such file" in err[0] and "no result store" in err[1] and "no such directory" in err[2]


def test_report_reads_the_engine_store(project, monkeypatch, capsys):
    seen = []

    def load_run_data(root: Path):
        seen.append(root)
        return sample_run_data(str(root))

    monkeypatch.setitem(sys.modules, "mutagent.store", types.SimpleNamespace(load_run_data=load_run_data))
    assert main(["report", str(project), "-q", "--max-survived", "5"]) == 0
    assert seen == [project]


def test_show_prints_everything_about_one_mutant(project, capsys):
    data = sample_run_data()
    crashed = next(m for m in data.mutants if data.results[m.id].error and "fork" in data.results[m.id].error)
    assert main(["show", crashed.id[:6], "--from", report_path(project)]) == 0
    out = capsys.readouterr().out
    assert "RuntimeError" in out and "BlockingIOError" in out
    assert "-        return events" in out and "+        return events[:-1]" in out
    guarded = next(m for m in data.mutants if m.operator == "drop-stop-check")
    assert main(["show", guarded.id, "--from", report_path(project)]) == 0
    out = capsys.readouterr().out
    assert "killed by: tests/test_loop.py::test_missing_message_stop_is_retried" in out
    assert "only tests/test_loop.py::test_missing_message_stop_is_retried guards this path" in out.replace(
        "\n", " "
    )


def test_show_unknown_id(project, capsys):
    assert main(["show", "zzzz", "--from", report_path(project)]) == 2
    assert "no mutant with id 'zzzz'" in capsys.readouterr().err


def test_apply_then_revert(project, capsys):
    mutant = survivor()
    target = project / LOOP_FILE
    assert main(["apply", mutant.id, str(project), "--from", report_path(project)]) == 0
    assert target.read_text(encoding="utf-8") == mutant.mutated_source(LOOP_SOURCE)
    out = capsys.readouterr().out
    assert "WARNING" in out and "MODIFIED" in out and f"git -C {project} checkout -- {LOOP_FILE}" in out
    assert main(["apply", mutant.id, str(project), "--from", report_path(project)]) == 0  # idempotent
    assert "already contains" in capsys.readouterr().out
    assert main(["apply", mutant.id, str(project), "--from", report_path(project), "--revert"]) == 0
    assert target.read_text(encoding="utf-8") == LOOP_SOURCE


def test_apply_refuses_to_mix_with_local_edits(project, capsys):
    target = project / LOOP_FILE
    target.write_text(LOOP_SOURCE + "# my edit\n", encoding="utf-8")
    assert main(["apply", survivor().id, str(project), "--from", report_path(project)]) == 2
    assert "differs from the version the run tested" in capsys.readouterr().err
    assert target.read_text(encoding="utf-8").endswith("# my edit\n")
    assert main(["apply", survivor().id, str(project), "--from", report_path(project), "--revert"]) == 2
    assert target.read_text(encoding="utf-8").endswith("# my edit\n")


def test_apply_keeps_windows_line_endings(project):
    target = project / LOOP_FILE
    target.write_bytes(LOOP_SOURCE.replace("\n", "\r\n").encode("utf-8"))
    assert main(["apply", survivor().id, str(project), "--from", report_path(project)]) == 0
    raw = target.read_bytes()
    assert b"MAX_RETRIES = 4\r\n" in raw and b"\n" not in raw.replace(b"\r\n", b"")


def test_gate_thresholds_come_from_pyproject_unless_flags_say_otherwise(project, capsys):
    (project / "pyproject.toml").write_text("[tool.mutagent]\nfail-under = 90\n", encoding="utf-8")
    assert main(["report", str(project), "--from", report_path(project), "-q"]) == 1
    assert "below 90%" in capsys.readouterr().out
    assert main(["report", str(project), "--from", report_path(project), "-q", "--fail-under", "60"]) == 0
    (project / "pyproject.toml").write_text("[tool.mutagent]\nfail-under = 'lots'\n", encoding="utf-8")
    assert main(["report", str(project), "--from", report_path(project), "-q"]) == 2
    assert "fail-under" in capsys.readouterr().err
