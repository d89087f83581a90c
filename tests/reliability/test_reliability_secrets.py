"""The store and every report stay free of secrets, even when the target's tests dump the
environment into the failure messages mutagent stores (issue 7).

The run gets fake Anthropic and OpenAI keys in its environment. The target's tests put
``repr(os.environ)`` into their assertion messages, print it, and one mutant raises it past
pytest (a RuntimeError whose traceback is stored). A harmless canary variable proves that the
dumps really reach the store and the reports, so the keys' absence means they were scrubbed
before any test process started, not that nothing was stored.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from testkit.engine_targets import ENGINE_TARGETS, HandMutant, HandMutants, write_target

from mutagent import exitcodes
from mutagent.model import Status
from mutagent.store import load_run_data

SECRETS = {
    "ANTHROPIC_API_KEY": "sk-ant-FAKE-1234567890",
    "OPENAI_API_KEY": "sk-openai-FAKE-0987654321",
}
CANARY = ("RELIABILITY_CANARY", "canary-visible-4242")  # not secret-looking: it must get through

CORE = "vault/core.py"
TARGET = {
    "vault/__init__.py": "",
    CORE: """
        import os

        LIMIT = 3


        def value():
            return 1


        def label():
            return "label"
    """,
    "tests/test_vault.py": """
        import os

        from vault.core import LIMIT, label, value


        def environment():
            return repr(dict(sorted(os.environ.items())))


        def test_value_prints_the_environment():
            print(environment())
            print(os.environ.get("ANTHROPIC_API_KEY"), os.environ.get("OPENAI_API_KEY"))
            assert value() == 1, environment()


        def test_label():
            assert label() == "label", environment()


        def test_limit():
            assert LIMIT == 3, environment()
    """,
}
# each mutant with its status: the dump lands in a kill's reason, in a RuntimeError's stored
# traceback, and in the reason of a kill by a fresh import (another process, another environment)
SPECS = [
    (HandMutant(CORE, "return 1", "return 2"), Status.KILLED),
    (
        HandMutant(CORE, 'return "label"', "raise KeyboardInterrupt(repr(dict(os.environ)))"),
        Status.RUNTIME_ERROR,
    ),
    (HandMutant(CORE, "LIMIT = 3", "LIMIT = 4"), Status.KILLED),
]
SLACK = ["--workers", "1", "--timeout-constant", "4"]  # two loaded cores: no Timeout by accident


def cli(*argv: str, env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, *argv], capture_output=True, timeout=300, env={**env, "COLUMNS": "200"}
    )


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, bytes]]:
    """Run the target through the real command line with the fake keys; return the root and the
    bytes of everything the run and the report commands produced."""
    base = tmp_path_factory.mktemp("secrets")
    root = write_target(base / "project", TARGET)
    spec = base / "mutants.json"
    spec.write_text(HandMutants([mutant for mutant, _ in SPECS]).to_json(), encoding="utf-8")
    env = {**os.environ, **SECRETS, CANARY[0]: CANARY[1]}
    reports = {name: base / name for name in ("run.json", "run.html", "run.xml", "report.json")}
    flags = ["--json", str(reports["run.json"]), "--html", str(reports["run.html"])]
    flags += ["--junit", str(reports["run.xml"])]
    run = cli(ENGINE_TARGETS, str(spec), "run", *SLACK, *flags, str(root), env=env)
    assert run.returncode == exitcodes.OK, run.stderr.decode(errors="replace")
    report = cli("-m", "mutagent", "report", str(root), "--json", str(reports["report.json"]), env=env)
    assert report.returncode == exitcodes.OK, report.stderr.decode(errors="replace")
    found: dict[str, bytes] = {
        "run output": run.stdout + run.stderr,
        "report output": report.stdout + report.stderr,
        **{name: path.read_bytes() for name, path in reports.items()},
        **{f".mutagent/{p.name}": p.read_bytes() for p in (root / ".mutagent").iterdir() if p.is_file()},
    }
    for mutant in load_run_data(root).mutants:
        shown = cli("-m", "mutagent", "show", mutant.id, str(root), env=env)
        assert shown.returncode == exitcodes.OK, shown.stderr.decode(errors="replace")
        found[f"show {mutant.id}"] = shown.stdout + shown.stderr
    return root, found


def test_the_environment_dumps_got_their_statuses(outputs: tuple[Path, dict[str, bytes]]) -> None:
    data = load_run_data(outputs[0])
    by_replacement = {m.replacement: data.result_of(m) for m in data.mutants}
    for spec, status in SPECS:
        result = by_replacement[spec.replace]
        assert result.status is status, result
        assert CANARY[1] in f"{result.status_reason}{result.error}"  # the dump is what got stored


def test_the_dumps_reach_the_store_and_the_reports(outputs: tuple[Path, dict[str, bytes]]) -> None:
    """Without this the absence test below could pass because nothing was stored at all."""
    _, found = outputs
    canary = CANARY[1].encode()
    assert any(canary in data for name, data in found.items() if name.startswith(".mutagent/store"))
    assert any(canary in data for name, data in found.items() if name.startswith("show "))
    assert all(canary in found[name] for name in ("run.json", "run.html", "run.xml", "report.json"))


@pytest.mark.parametrize("secret", list(SECRETS.values()))
def test_no_secret_in_the_store_reports_or_output(
    outputs: tuple[Path, dict[str, bytes]], secret: str
) -> None:
    _, found = outputs
    leaks = [name for name, data in found.items() if secret.encode() in data]
    assert leaks == []
