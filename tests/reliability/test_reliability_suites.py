"""Target suites that cannot run as they are under mutagent (issue 7): a suite that needs the
network, and pytest plugins that disagree about who runs async tests.

Each is run through the real command line, as a user would: the run either works with honest
statuses or stops with exactly one clear line and the documented exit code, never a hang or a
traceback.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from testkit.engine_targets import ENGINE_TARGETS, HandMutant, HandMutants, write_target

from mutagent import exitcodes
from mutagent.model import Status
from mutagent.store import load_run_data

SLACK = ["--workers", "1", "--timeout-constant", "4"]  # two loaded cores: no Timeout by accident


def run_cli(root: Path, specs: list[HandMutant]) -> tuple[subprocess.CompletedProcess[str], float]:
    """``mutagent run ROOT`` with hand-written mutants; returns the process and its wall time."""
    spec = root.parent / "mutants.json"
    spec.write_text(HandMutants(specs).to_json(), encoding="utf-8")
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, ENGINE_TARGETS, str(spec), "run", *SLACK, str(root)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    return done, time.monotonic() - started


def error_lines(done: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in done.stderr.splitlines() if line.strip()]


# --- a suite that needs the network ---------------------------------------------------------------
NET_CORE = """
    import socket
    import urllib.request


    def probe(host, port):
        with socket.create_connection((host, port), timeout=60):  # a minute: a hang would show
            return True


    def fetch(url):
        return urllib.request.urlopen(url, timeout=60).status
"""


@pytest.mark.parametrize(
    "call, blocked",
    [
        ('probe("203.0.113.1", 443) is True', "203.0.113.1:443"),  # TEST-NET-3: would hang, not refuse
        ('fetch("https://example.com") == 200', "example.com:443"),  # a name: not even a DNS query
    ],
    ids=["address", "name"],
)
def test_a_suite_that_needs_the_network_stops_at_the_baseline_naming_the_address(
    tmp_path: Path, call: str, blocked: str
) -> None:
    root = write_target(
        tmp_path / "project",
        {
            "net/__init__.py": "",
            "net/core.py": NET_CORE,
            "tests/test_net.py": f"""
                from net.core import fetch, probe


                def test_reaches_the_internet():
                    assert {call}
            """,
        },
    )
    done, elapsed = run_cli(root, [HandMutant("net/core.py", "return True", "return False")])
    assert done.returncode == exitcodes.BASELINE_FAILED, done.stderr
    lines = error_lines(done)
    assert len(lines) == 1, lines
    assert "tests/test_net.py::test_reaches_the_internet" in lines[0]
    assert f"mutagent blocked a network connection to {blocked}" in lines[0]
    assert elapsed < 45  # blocked before any packet: no connect timeout was waited out


# --- pytest-asyncio and anyio in one suite ----------------------------------------------------------
AIO_TARGET = {
    "aio/__init__.py": "",
    "aio/core.py": """
        import asyncio


        async def reply(prompt):
            await asyncio.sleep(0)
            return prompt.upper()
    """,
    "tests/test_aio.py": """
        import pytest

        from aio.core import reply


        async def test_unmarked():
            assert await reply("a") == "A"


        @pytest.mark.anyio
        async def test_anyio_marked():
            assert await reply("b") == "B"


        @pytest.mark.asyncio
        async def test_asyncio_marked():
            assert await reply("c") == "C"
    """,
}
AIO_SPECS = [
    HandMutant("aio/core.py", "prompt.upper()", "prompt.lower()"),
    HandMutant("aio/core.py", "asyncio.sleep(0)", "asyncio.sleep(0.0)"),  # equivalent: survives
]


def test_asyncio_auto_mode_with_anyio_markers_runs_like_plain_pytest(tmp_path: Path) -> None:
    """In auto mode pytest-asyncio also claims the anyio-marked tests (even their trio variant,
    if trio is installed, which it then runs on asyncio): plain pytest passes them, so must we,
    and every one of them kills the mutant it sees."""
    pytest.importorskip("pytest_asyncio")
    pytest.importorskip("anyio")
    root = write_target(
        tmp_path / "project",
        {**AIO_TARGET, "pyproject.toml": '[tool.pytest.ini_options]\nasyncio_mode = "auto"\n'},
    )
    done, _ = run_cli(root, AIO_SPECS)
    assert done.returncode == exitcodes.OK, done.stderr
    data = load_run_data(root)
    nodeids = sorted(t.nodeid for t in data.tests)
    assert {"tests/test_aio.py::test_unmarked", "tests/test_aio.py::test_asyncio_marked"} <= set(nodeids)
    assert any(n.startswith("tests/test_aio.py::test_anyio_marked") for n in nodeids)
    killed, survived = (data.result_of(m) for m in data.mutants)
    assert killed.status is Status.KILLED and sorted(killed.killed_by) == nodeids
    assert survived.status is Status.SURVIVED and sorted(survived.tests_run) == nodeids


def test_an_unmarked_async_test_in_strict_mode_stops_with_one_line(tmp_path: Path) -> None:
    """Strict mode (pytest-asyncio's default) leaves an unmarked ``async def`` test to no plugin:
    plain pytest fails it, so the baseline is red (exit 3), named in one line."""
    pytest.importorskip("pytest_asyncio")
    root = write_target(
        tmp_path / "project",
        {
            **AIO_TARGET,
            "pyproject.toml": '[tool.pytest.ini_options]\nasyncio_mode = "strict"\n',
            # asyncio only: a trio run of this asyncio code would be a second, unrelated failure
            "conftest.py": """
                import pytest


                @pytest.fixture
                def anyio_backend():
                    return "asyncio"
            """,
        },
    )
    done, _ = run_cli(root, AIO_SPECS)
    assert done.returncode == exitcodes.BASELINE_FAILED, done.stderr
    lines = error_lines(done)
    assert len(lines) == 1, lines
    assert "tests/test_aio.py::test_unmarked" in lines[0]
    assert "async def functions are not natively supported" in lines[0]
    assert "test_anyio_marked" not in lines[0] and "test_asyncio_marked" not in lines[0]
