"""A suite that never executes the code to mutate is refused, instead of a run where every
mutant is NoCoverage or "survives" (the usual cause: tests importing an installed copy)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_a_suite_that_never_runs_the_sources_is_a_usage_error(tmp_path: Path) -> None:
    target = tmp_path / "proj"
    (target / "pkg").mkdir(parents=True)
    (target / "pkg" / "__init__.py").write_text("")
    (target / "pkg" / "core.py").write_text("def double(x):\n    return x * 2\n")
    (target / "tests").mkdir()
    (target / "tests" / "test_other.py").write_text("def test_unrelated():\n    assert 1 + 1 == 2\n")
    done = subprocess.run(
        [sys.executable, "-m", "mutagent", "run", str(target), "--operators", "generic", "--workers", "1"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "no test executes any line" in errors[0], done.stderr
