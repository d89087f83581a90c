"""``mutagent run`` end to end with the reports wired in: --json/--html/--junit, the gate, --shard, --since.

One tiny target with hand-written mutants (``testkit.engine_targets``), a single worker and a few
fresh baselines in all: the full run is shared by the output and gate tests, which re-run it from
the store (nothing re-executed) with different flags.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import sqlite3
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
from testkit import FIXTURES, REPO
from testkit.engine_targets import HandMutant, HandMutants, write_target

from mutagent import exitcodes
from mutagent.cli import build_parser, main
from mutagent.commands import run as run_command
from mutagent.config import build_config
from mutagent.errors import UsageError
from mutagent.store import load_run_data, store_path

SCHEMA = json.loads((FIXTURES / "mutation-testing-report-schema.json").read_text(encoding="utf-8"))
CI_DOC = REPO / "docs" / "ci.md"

CORE = "calc/core.py"
TARGET = {
    "calc/__init__.py": "",
    CORE: """
        def add(a, b):
            return a + b


        def mul(a, b):
            product = a * b
            return product
    """,
    "tests/test_calc.py": """
        from calc.core import add, mul

        def test_add():
            assert add(2, 2) == 4

        def test_mul():
            assert mul(2, 3) == 6
    """,
}
ADD_SURVIVOR = HandMutant(CORE, "return a + b", "return a * b")  # add(2, 2) == 2 * 2: the suite misses it
ADD_MUTANTS = [ADD_SURVIVOR, HandMutant(CORE, "return a + b", "return a - b")]
MUL_MUTANTS = [
    HandMutant(CORE, "product = a * b", "product = a + b"),
    HandMutant(CORE, "product = a * b", "product = b * a"),  # equivalent: survives
    HandMutant(CORE, "return product", "return -product"),
    HandMutant(CORE, "return product", "return product + 0"),  # equivalent: survives
]
SPECS = ADD_MUTANTS + MUL_MUTANTS
SLACK = ["--workers", "1", "--timeout-constant", "4"]  # two shared cores: no Timeout by accident


def run_cli(root: Path, *flags: str, specs: list[HandMutant] = SPECS) -> int:
    """``mutagent run ROOT FLAGS`` in-process, with hand-written mutants instead of the operators."""
    args = build_parser().parse_args(["run", str(root), *SLACK, *flags])
    return run_command.run(args, mutant_source=HandMutants(specs))


def statuses(report: Path) -> dict[str, str]:
    """``mutant id -> status`` of a schema JSON report."""
    data = json.loads(report.read_text(encoding="utf-8"))
    return {m["id"]: m["status"] for f in data["files"].values() for m in f["mutants"]}


def survivor_id(root: Path) -> str:
    data = load_run_data(root)
    (mutant,) = [m for m in data.mutants if m.replacement == ADD_SURVIVOR.replace]
    return mutant.id


def one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1, lines
    return lines[0]


@pytest.fixture(scope="module")
def full(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The unsharded run of the target, with all three report files."""
    out = tmp_path_factory.mktemp("full")
    root = write_target(out / "project", TARGET)
    code = run_cli(
        root, "--json", str(out / "r.json"), "--html", str(out / "r.html"), "--junit", str(out / "r.xml")
    )
    assert code == exitcodes.OK  # no gate configured: survivors alone do not fail the run
    return out


def test_json_html_and_junit_are_all_written(full: Path) -> None:
    report = json.loads((full / "r.json").read_text(encoding="utf-8"))
    jsonschema.validate(report, SCHEMA)
    assert len(statuses(full / "r.json")) == len(SPECS)
    assert set(statuses(full / "r.json").values()) == {"Killed", "Survived"}
    html = (full / "r.html").read_text(encoding="utf-8")
    assert html.lstrip().lower().startswith("<!doctype html")
    suite = ET.parse(full / "r.xml").getroot()
    cases = suite.findall(".//testcase")
    assert len(cases) == len(SPECS)
    assert sum(1 for case in cases if case.find("failure") is not None) == 3  # the three survivors


def test_max_survived_0_fails_and_names_the_survivor(
    full: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    code = run_cli(full / "project", "--max-survived", "0", "--json", str(tmp_path / "gated.json"))
    out = capsys.readouterr().out
    assert code == exitcodes.GATE_FAILED
    assert "gate FAILED" in out and "max-survived: 3 mutants survived" in out
    assert f"[{survivor_id(full / 'project')}]" in out and "return a + b -> return a * b" in out
    assert statuses(tmp_path / "gated.json") == statuses(full / "r.json")  # written although it failed


def test_fail_under_100_fails_and_names_the_survivor(full: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    code = run_cli(full / "project", "--fail-under", "100")
    out = capsys.readouterr().out
    assert code == exitcodes.GATE_FAILED
    assert "fail-under: mutation score 50.0% is below 100%" in out
    assert f"[{survivor_id(full / 'project')}]" in out
    assert "6 results reused from the store" in out  # the gate re-run executed nothing


def test_a_passing_gate_exits_0(full: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(full / "project", "--fail-under", "50", "--max-survived", "3") == exitcodes.OK
    assert "gate passed" in capsys.readouterr().out


def test_shards_are_disjoint_halves_that_merge_into_the_unsharded_run(
    full: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = write_target(tmp_path / "project", TARGET)  # a fresh store: the shards really run
    for index in (1, 2):
        # a shard never gates, even with survivors and a threshold: its score is not the run's
        code = run_cli(
            root, "--shard", f"{index}/2", "--max-survived", "0", "--json", str(tmp_path / f"{index}.json")
        )
        assert code == exitcodes.OK
        assert "gate not applied to a --shard run" in capsys.readouterr().out
    first, second = statuses(tmp_path / "1.json"), statuses(tmp_path / "2.json")
    assert first and second and not set(first) & set(second)
    assert {m.id for m in load_run_data(root).mutants} == set(second)  # the store holds the last shard
    # `mutagent report PATH` re-renders that shard: its score is labelled as the shard's
    capsys.readouterr()
    assert main(["report", str(root)]) == exitcodes.OK
    headline = " ".join(capsys.readouterr().out.split("Mutants by operator")[0].split())
    assert "mutation score" in headline and "score of shard 2/2" in headline

    merged = tmp_path / "m.json"
    assert main(["merge", str(tmp_path / "1.json"), str(tmp_path / "2.json"), "-o", str(merged)]) == 0
    jsonschema.validate(json.loads(merged.read_text(encoding="utf-8")), SCHEMA)
    assert statuses(merged) == statuses(full / "r.json") == {**first, **second}


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_since_mutates_only_the_edited_function(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = write_target(tmp_path / "project", TARGET)
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "target")
    core = root / CORE
    core.write_text(core.read_text().replace("product = a * b", "product = a * b * 1"), encoding="utf-8")
    specs = ADD_MUTANTS + [HandMutant(CORE, "product = a * b * 1", "product = a * b * 0")]

    assert run_cli(root, "--since", "HEAD", "--json", str(tmp_path / "pr.json"), specs=specs) == exitcodes.OK
    assert "--since HEAD: 1 of 3 mutants touch changed lines" in capsys.readouterr().out
    (mutant,) = load_run_data(root).mutants
    assert mutant.replacement == "product = a * b * 0" and mutant.location.start_line == 6
    assert list(statuses(tmp_path / "pr.json").values()) == ["Killed"]
    # `mutagent report PATH` and `report --from` say which mutants the score is of
    for argv in (["report", str(root)], ["report", "--from", str(tmp_path / "pr.json")]):
        assert main(argv) == exitcodes.OK
        headline = " ".join(capsys.readouterr().out.split("Mutants by operator")[0].split())
        assert "mutation score 100.0%" in headline
        assert "score of the mutants on lines changed since HEAD" in headline


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_since_with_no_changed_source_line_runs_no_baseline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = write_target(tmp_path / "project", TARGET)
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "target")
    (root / "README.md").write_text("docs only\n", encoding="utf-8")  # a change outside the sources

    assert (
        run_cli(root, "--since", "HEAD", "--json", str(tmp_path / "pr.json"), "--fail-under", "90")
        == exitcodes.OK
    )
    out = " ".join(capsys.readouterr().out.split())
    assert "--since HEAD: 0 of 6 mutants touch changed lines" in out
    # a clean "nothing to test", not a score, and no gate verdict over nothing
    assert "nothing to test: the change since HEAD touches none of the 6 mutated lines" in out
    assert "mutation score" not in out and "gate" not in out.replace("no gate", "")
    data = load_run_data(root)
    assert data.mutants == [] and data.tests == []
    assert statuses(tmp_path / "pr.json") == {}
    connection = sqlite3.connect(store_path(root))
    try:
        assert connection.execute("SELECT COUNT(*) FROM baseline").fetchone() == (0,)  # never measured
    finally:
        connection.close()


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_since_an_unknown_revision_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = write_target(tmp_path / "project", TARGET)
    git(root, "init", "-q")
    assert main(["run", str(root), "--since", "no-such-rev"]) == exitcodes.USAGE_ERROR
    assert "unknown git revision 'no-such-rev'" in one_error_line(capsys)


def test_since_outside_git_is_one_line_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = write_target(tmp_path / "project", TARGET)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))  # even if tmp lives inside a repo
    assert main(["run", str(root), "--since", "HEAD"]) == exitcodes.USAGE_ERROR
    assert "not inside a git repository" in one_error_line(capsys)
    assert not (root / ".mutagent").exists()  # refused before the engine started


@pytest.mark.parametrize(
    "tests, missing",
    [
        ("nowhere/tests", "nowhere/tests"),
        ("tests/test_calc.py tests/test_gone.py::test_x -k add", "tests/test_gone.py"),
    ],
)
def test_a_missing_tests_path_is_one_line_exit_2_before_the_baseline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], tests: str, missing: str
) -> None:
    root = write_target(tmp_path / "project", TARGET)
    assert main(["run", str(root), "--tests", tests]) == exitcodes.USAGE_ERROR
    line = one_error_line(capsys)
    assert missing in line and "does not exist" in line
    assert not (root / ".mutagent").exists()  # refused before the engine (and its baseline) started


@pytest.mark.parametrize("shard", ["3/2", "0/2", "half"])
def test_a_bad_shard_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], shard: str
) -> None:
    root = write_target(tmp_path / "project", TARGET)
    assert main(["run", str(root), "--shard", shard]) == exitcodes.USAGE_ERROR
    assert "--shard" in one_error_line(capsys)


@pytest.mark.parametrize(
    "table, fragment",
    [
        ("since = 'origin/main'", "pass --since on the command line"),
        ("shard = '1/2'", "pass --shard on the command line"),
        ("json = 'r.json'", "pass --json on the command line"),
        ("fail-under = 'lots'", "fail-under must be a number"),
        ("fail_under = 101", "fail_under must be a percentage between 0 and 100"),
        ("max-survived = -1", "max-survived must be a whole number of at least 0"),
        ("max-survivors = 0", "unknown key 'max-survivors'"),
    ],
)
def test_bad_tool_mutagent_keys_are_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], table: str, fragment: str
) -> None:
    root = write_target(tmp_path / "project", {**TARGET, "pyproject.toml": f"[tool.mutagent]\n{table}\n"})
    assert main(["run", str(root)]) == exitcodes.USAGE_ERROR
    assert fragment in one_error_line(capsys)


@pytest.mark.parametrize(
    "flags, fragment",
    [
        (["--fail-under", "120"], "--fail-under must be a percentage between 0 and 100"),
        (["--fail-under", "most"], "--fail-under must be a number"),
        (["--max-survived", "-1"], "--max-survived must be a whole number of at least 0"),
    ],
)
def test_bad_gate_flags_are_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], fragment: str
) -> None:
    root = write_target(tmp_path / "project", TARGET)
    assert main(["run", str(root), *flags]) == exitcodes.USAGE_ERROR
    assert fragment in one_error_line(capsys)


def test_gate_keys_in_pyproject_are_read_and_flags_win(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.mutagent]\nfail-under = 80\nmax-survived = 2\n")
    config = build_config(tmp_path, {"max_survived": "0"})
    assert (config.fail_under, config.max_survived) == (80.0, 0)
    with pytest.raises(UsageError, match="pass --since"):
        (tmp_path / "pyproject.toml").write_text("[tool.mutagent]\nsince = 'main'\n")
        build_config(tmp_path, {})


def test_every_run_command_in_the_ci_doc_parses() -> None:
    """docs/ci.md's ``mutagent run`` lines use flags ``run`` really has, with the values they mean."""
    text = CI_DOC.read_text(encoding="utf-8")
    lines = [m.group(1) for m in re.finditer(r"^\s*- run: (mutagent run .*)$", text, re.M)]
    assert len(lines) == 2
    parsed = []
    for line in lines:
        line = line.replace("${{ matrix.shard }}", "3").replace("${{ github.base_ref }}", "main")
        parsed.append(build_parser().parse_args(shlex.split(line)[1:]))
    shard, pr = parsed
    assert (shard.path, shard.shard, shard.json, shard.since) == (".", "3/4", "shard-3.json", None)
    assert (pr.since, pr.fail_under, pr.json, pr.shard) == ("origin/main", "80", "pr.json", None)
