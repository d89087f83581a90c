"""Third-party operators: found through the ``mutagent.operators`` entry point group.

Installing ``tests/fixtures/plugin_dist`` into a fresh virtualenv would prove this too, but
slowly; ``importlib.metadata`` finds entry points through any ``*.dist-info`` directory on
``sys.path``, so the tests write the distribution's metadata (its entry points read from the
fixture's own ``pyproject.toml``) into a temporary directory and run the real CLI in a
subprocess with that directory on ``PYTHONPATH``, exactly as after ``pip install``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from testkit import REPO

from mutagent.errors import UsageError
from mutagent.mutation.generate import generate_for_source
from mutagent.mutation.registry import FAMILIES, all_operators, select_operators

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - 3.10
    import tomli as tomllib

ROOT = REPO
PLUGIN_DIST = ROOT / "tests" / "fixtures" / "plugin_dist"
PLUGIN_OPERATOR = "example-zero-timeout"


def _install_metadata(
    site: Path, entry_points: dict[str, str], name: str = "mutagent-example-plugin"
) -> None:
    """What ``pip install`` leaves for importlib.metadata: a dist-info with entry_points.txt."""
    dist_info = site / f"{name.replace('-', '_')}-0.1.0.dist-info"
    dist_info.mkdir(parents=True)
    (dist_info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1.0\n")
    lines = ["[mutagent.operators]", *(f"{key} = {value}" for key, value in entry_points.items())]
    (dist_info / "entry_points.txt").write_text("\n".join(lines) + "\n")


def _declared_entry_points() -> dict[str, str]:
    project = tomllib.loads((PLUGIN_DIST / "pyproject.toml").read_text())["project"]
    return dict(project["entry-points"]["mutagent.operators"])


def _mutagent(site: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(PLUGIN_DIST), str(ROOT), env.get("PYTHONPATH", "")])
    env["COLUMNS"] = "200"
    return subprocess.run(
        [sys.executable, "-m", "mutagent", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd or ROOT,
        timeout=120,
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("site")
    _install_metadata(directory, _declared_entry_points())
    return directory


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("project")
    (directory / "agent").mkdir()
    (directory / "agent" / "__init__.py").write_text("")
    (directory / "agent" / "client.py").write_text(
        textwrap.dedent(
            """\
            import httpx


            def fetch(url):
                return httpx.get(url, timeout=30)


            def fetch_fast(url):
                return httpx.get(url, timeout=1.5)  # mutagent: skip=example-zero-timeout health check only
            """
        )
    )
    return directory


def test_the_fixture_declares_the_plugin_operator() -> None:
    assert _declared_entry_points() == {PLUGIN_OPERATOR: "mutagent_example_plugin:ZeroTimeout"}


def test_plugin_operator_is_in_the_catalogue(site: Path) -> None:
    result = _mutagent(site, "operators", "--json")
    assert result.returncode == 0, result.stderr
    catalogue = {entry["name"]: entry for entry in json.loads(result.stdout)}
    entry = catalogue[PLUGIN_OPERATOR]
    assert entry["family"] == "agent"
    assert entry["description"] == "A call's timeout= argument becomes 0.001 seconds."
    assert entry["failure"] and entry["hint"]
    assert {"before": "r = get(url, timeout=30)\n", "after": "r = get(url, timeout=0.001)\n", "note": ""} in (
        entry["examples"]
    )
    assert "skip-backoff" in catalogue and "generic-number" in catalogue  # built-ins are still there


def test_plugin_operator_is_applied_by_list(site: Path, project: Path) -> None:
    result = _mutagent(site, "list", str(project), "--operators", PLUGIN_OPERATOR, "--json")
    assert result.returncode == 0, result.stderr
    mutants = json.loads(result.stdout)
    assert [(m["operator"], m["file"], m["line"]) for m in mutants] == [
        (PLUGIN_OPERATOR, "agent/client.py", 5),
        (PLUGIN_OPERATOR, "agent/client.py", 9),
    ]
    assert mutants[0]["description"] == "timeout=30 -> 0.001" and not mutants[0]["ignored"]
    assert mutants[1]["ignored_reason"] == "health check only"
    assert all(len(m["id"]) == 12 for m in mutants)


def test_plugin_operator_is_in_the_agent_family(site: Path, project: Path) -> None:
    result = _mutagent(site, "list", str(project), "--operators", "agent", "--json")
    assert result.returncode == 0, result.stderr
    assert PLUGIN_OPERATOR in {m["operator"] for m in json.loads(result.stdout)}


def test_unknown_operator_is_one_clear_line(site: Path, project: Path) -> None:
    result = _mutagent(site, "list", str(project), "--operators", "example-zero-timeuot", "--json")
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(
        "error: unknown operator 'example-zero-timeuot' (did you mean 'example-zero-timeout'"
    )


def test_a_broken_plugin_is_one_clear_line(tmp_path: Path, project: Path) -> None:
    _install_metadata(tmp_path, {"broken-op": "no_such_module:Operator"}, name="broken-plugin")
    result = _mutagent(tmp_path, "operators", "--json")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot load operator plugin 'broken-op'" in lines[0], result.stderr


def test_a_plugin_shadowing_a_built_in_is_refused(tmp_path: Path) -> None:
    (tmp_path / "shadow_plugin.py").write_text(
        "from operators.generic import OPERATORS\nSHADOW = OPERATORS[0]\n"  # generic-number again
    )
    _install_metadata(tmp_path, {"shadow": "shadow_plugin:SHADOW"}, name="shadow-plugin")
    result = _mutagent(tmp_path, "operators", "--json", cwd=tmp_path)
    assert result.returncode == 2
    assert "clashes with a built-in" in result.stderr


def test_plugin_examples_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    """The plugin's examples, checked the way tests/operators/test_operator_examples.py checks built-ins."""
    monkeypatch.syspath_prepend(str(PLUGIN_DIST))
    from mutagent_example_plugin import ZeroTimeout

    operator = ZeroTimeout()
    for example in operator.examples:
        mutated = [
            m.mutated_source(example.before) for m in generate_for_source(example.before, "x.py", [operator])
        ]
        assert mutated == ([example.after] if example.after else [])


def test_select_operators_families_and_names() -> None:
    catalogue = all_operators()
    assert {op.name for op in select_operators("generic")} == {
        name for name, op in catalogue.items() if op.family == "generic"
    }
    assert len(select_operators("all")) == len(catalogue)
    assert [op.name for op in select_operators("generic-number, skip-backoff")] == [
        "generic-number",
        "skip-backoff",
    ]
    assert set(FAMILIES) == {"agent", "generic", "all"}
    with pytest.raises(UsageError, match=r"unknown operator 'generic-numbr' \(did you mean 'generic-number'"):
        select_operators("generic-numbr")
    with pytest.raises(UsageError, match="no operators selected"):
        select_operators(" , ")
