"""A disk that refuses the report at the end of ``mutagent run`` (issue 7): one clear line, and
the results already in the store stay usable by ``mutagent report``.

``/dev/full`` answers every write with ENOSPC. A full disk that hits a regular file half-way is
simulated with ``RLIMIT_FSIZE`` (Python ignores SIGXFSZ, so a write past the limit fails with
EFBIG), to check that a failed rewrite never leaves a truncated report where a good one was.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from testkit.engine_targets import ENGINE_TARGETS, HandMutant, HandMutants, write_target

from mutagent import exitcodes
from mutagent.cli import main
from mutagent.store import load_run_data

pytestmark = pytest.mark.skipif(
    not os.path.exists("/dev/full"), reason="needs /dev/full to simulate a full disk"
)

CORE = "calc/core.py"
PADDING = "# " + "x" * 98 + "\n"
TARGET = {
    "calc/__init__.py": "",
    # ~80 kB of source: the JSON report embeds it, so a rewrite crosses the file-size limit below
    CORE: "def add(a, b):\n    return a + b\n\n\n" + PADDING * 800,
    "tests/test_calc.py": """
        from calc.core import add


        def test_add():
            assert add(2, 2) == 4
    """,
}
SPECS = [
    HandMutant(CORE, "return a + b", "return a - b"),
    HandMutant(CORE, "return a + b", "return a * b"),  # survives: 2 + 2 == 2 * 2
]
FILE_SIZE_LIMIT = 48 * 1024  # above SQLite's 32 kB shared-memory file, below the JSON report


# ``python -c LIMITED BYTES ARGS...``: the ``mutagent`` command with its file-size limit lowered first
LIMITED = """
import resource, runpy, sys
limit = int(sys.argv.pop(1))
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
runpy.run_module("mutagent", run_name="__main__", alter_sys=True)
"""


def python(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *argv],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "COLUMNS": "200"},
    )


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def full_disk_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    root = write_target(tmp_path_factory.mktemp("disk") / "project", TARGET)
    spec = root.parent / "mutants.json"
    spec.write_text(HandMutants(SPECS).to_json(), encoding="utf-8")
    done = python(
        ENGINE_TARGETS, str(spec), "run", "--workers", "1", "--timeout-constant", "4",
        "--json", "/dev/full", str(root),
    )  # fmt: skip
    return root, done


def test_a_full_disk_under_the_run_report_is_one_line(
    full_disk_run: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    _, done = full_disk_run
    assert done.returncode == exitcodes.USAGE_ERROR, done.stderr
    assert error_lines(done.stderr) == ["error: cannot write /dev/full: No space left on device"]
    assert "mutation score 50.0%" in done.stdout  # the run itself finished before the write


def test_the_store_stays_intact_and_a_later_report_works(
    full_disk_run: tuple[Path, subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    root, _ = full_disk_run
    out = tmp_path / "report.json"
    assert main(["report", str(root), "-q", "--json", str(out)]) == exitcodes.OK
    report = json.loads(out.read_text(encoding="utf-8"))
    written = {m["id"]: m["status"] for f in report["files"].values() for m in f["mutants"]}
    data = load_run_data(root)
    assert written == {m.id: data.result_of(m).status.value for m in data.mutants}
    assert sorted(written.values()) == ["Killed", "Survived"]


@pytest.mark.parametrize("flag", ["--html", "--junit", "--json"])
def test_each_report_format_into_a_full_disk_is_one_line(
    full_disk_run: tuple[Path, subprocess.CompletedProcess[str]],
    flag: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    root, _ = full_disk_run
    assert main(["report", str(root), "-q", flag, "/dev/full"]) == exitcodes.USAGE_ERROR
    assert error_lines(capsys.readouterr().err) == ["error: cannot write /dev/full: No space left on device"]


def test_a_rewrite_that_runs_out_of_space_keeps_the_previous_report(
    full_disk_run: tuple[Path, subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    root, _ = full_disk_run
    previous = tmp_path / "report.json"
    assert main(["report", str(root), "-q", "--json", str(previous)]) == exitcodes.OK
    assert previous.stat().st_size > FILE_SIZE_LIMIT  # else the limit below would not bite
    good = previous.read_bytes()

    done = python("-c", LIMITED, str(FILE_SIZE_LIMIT), "report", str(root), "-q", "--json", str(previous))
    assert done.returncode == exitcodes.USAGE_ERROR, done.stderr
    assert error_lines(done.stderr) == [f"error: cannot write {previous}: File too large"]
    assert previous.read_bytes() == good  # never a truncated report where a good one was
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]  # no temporary file left


def test_a_report_path_under_a_file_names_the_real_problem(
    full_disk_run: tuple[Path, subprocess.CompletedProcess[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    root, _ = full_disk_run
    assert main(["report", str(root), "-q", "--json", "/dev/full/x.json"]) == exitcodes.USAGE_ERROR
    lines = error_lines(capsys.readouterr().err)
    assert len(lines) == 1, lines
    assert lines[0].startswith("error: cannot write /dev/full/x.json:")
    assert "File exists" not in lines[0] and "not a directory" in lines[0].lower()
