"""The distribution installs under its own name and docs/ci.md's commands run against it.

The wheel is built from a copy of the repository (a build writes ``build/`` and ``*.egg-info``
next to the sources), installed into a brand-new virtual environment (no system site packages,
so nothing of the test environment leaks in; pip's cache keeps it fast), and docs/ci.md's
``mutagent run``/``merge``/``report`` lines run, as written, on a tiny agent target.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from testkit import REPO
from testkit.engine_targets import write_target

CI_DOC = REPO / "docs" / "ci.md"

TARGET = {
    "tinyagent/__init__.py": "",
    "tinyagent/loop.py": """
        import time

        MAX_ATTEMPTS = 3


        def call_with_retries(send, sleep=time.sleep):
            for attempt in range(MAX_ATTEMPTS):
                try:
                    return send()
                except ConnectionError:
                    sleep(0.5 * 2**attempt)
            raise RuntimeError("gave up")
    """,
    "tests/test_loop.py": """
        import pytest

        from tinyagent.loop import call_with_retries


        def test_a_dropped_connection_is_retried_after_a_wait():
            calls, waits = [], []

            def send():
                calls.append(1)
                if len(calls) < 3:
                    raise ConnectionError("reset")
                return "ok"

            assert call_with_retries(send, sleep=waits.append) == "ok"
            assert len(calls) == 3 and waits == [0.5, 1.0]


        def test_it_gives_up_after_three_attempts():
            calls = []

            def send():
                calls.append(1)
                raise ConnectionError("reset")

            with pytest.raises(RuntimeError):
                call_with_retries(send, sleep=lambda s: None)
            assert len(calls) == 3
    """,
}


def ci_workflow() -> str:
    return re.search(r"```yaml\n(.*?)```", CI_DOC.read_text(encoding="utf-8"), re.S).group(1)


def ci_lines() -> list[str]:
    """Every ``- run:`` line of docs/ci.md's workflow, in order."""
    return [m.group(1).strip() for m in re.finditer(r"^\s*- run: (.*)$", ci_workflow(), re.M)]


def ci_install_source() -> str:
    """The workflow's ``MUTAGENT_HARNESS`` (what every job's ``pip install`` installs)."""
    return re.search(r"^\s*MUTAGENT_HARNESS: \"(.*)\"$", ci_workflow(), re.M).group(1)


def test_the_distribution_has_a_name_of_its_own_and_the_mutagent_command() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["name"] == "mutagent-harness"  # "mutagent" on the public index is another project
    assert project["scripts"] == {"mutagent": "mutagent.cli:main"}
    installs = [line for line in ci_lines() if line.startswith("pip install")]
    # never `pip install mutagent-harness` from the index (it is not published there): every job
    # installs the one source the workflow names, a direct reference to mutagent's repository
    assert installs and all(line.split()[2] == '"$MUTAGENT_HARNESS"' for line in installs)
    assert ci_install_source().startswith("mutagent-harness @ git+")


@pytest.mark.slow
def test_the_wheel_installs_in_a_fresh_venv_and_runs_the_ci_doc_commands(tmp_path: Path) -> None:
    source = tmp_path / "src"
    shutil.copytree(
        REPO,
        source,
        ignore=shutil.ignore_patterns(".git", ".mutagent", "__pycache__", "build", "*.egg-info", "bench"),
    )
    wheels = tmp_path / "wheels"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "wheel", "--no-deps", "-w", str(wheels), str(source)], check=True, timeout=300)
    (wheel,) = wheels.glob("*.whl")
    assert wheel.name.startswith("mutagent_harness-")

    venv = tmp_path / "venv"  # a real fresh environment: nothing of this one is visible in it
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    bin_dir = venv / "bin"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    # the gate job's install line, as written, with MUTAGENT_HARNESS naming the wheel
    (install,) = {line for line in ci_lines() if line.startswith("pip install") and " -e " not in line}
    env["MUTAGENT_HARNESS"] = f"mutagent-harness @ {wheel.resolve().as_uri()}"
    subprocess.run(
        install + " -q --disable-pip-version-check",
        shell=True,
        env=env,
        cwd=tmp_path,
        check=True,
        timeout=600,
    )
    shown = subprocess.run(
        [str(bin_dir / "python"), "-c", "import mutagent, sys; print(mutagent.__file__)"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        cwd=tmp_path,
    ).stdout
    assert str(venv) in shown  # the installed copy, not this checkout

    target = write_target(tmp_path / "project", TARGET)
    commands = [line for line in ci_lines() if line.startswith("mutagent ")]
    (run,) = [c for c in commands if c.startswith("mutagent run")]
    (merge,) = [c for c in commands if c.startswith("mutagent merge")]
    (report,) = [c for c in commands if c.startswith("mutagent report")]
    count = int(re.search(r"--shard .+?/(\d+)", run).group(1))

    def sh(command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            command, shell=True, cwd=target, env=env, capture_output=True, text=True, timeout=300
        )

    for shard in range(1, count + 1):
        done = sh(run.replace("${{ matrix.shard }}", str(shard)))
        assert done.returncode == 0, done.stdout + done.stderr
    done = sh(merge)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "merged 4 reports: 4 mutants" in done.stdout
    done = sh(report)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "mutation score 100.0%" in done.stdout and "gate passed" in done.stdout
    for name in ("report.json", "mutation.html", "mutation-junit.xml"):
        assert (target / name).is_file(), name
