"""The README's quickstart works as written on a fresh machine, and ``.ci/run`` proves it.

The first command must install everything ``mutagent run ./sample_agent`` needs: every module the
sample agent and its suite import must come from mutagent's own requirements or from the extras
that command names (or from what those pull in). ``.ci/run`` must read both commands from the
README rather than carry copies that could drift.
"""

from __future__ import annotations

import ast
import re
import sys
from importlib import metadata
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from packaging.requirements import Requirement
from testkit import REPO

sys.path.insert(0, str(REPO / "scripts"))
from readme_commands import quickstart_commands  # noqa: E402


def commands() -> list[str]:
    return quickstart_commands((REPO / "README.md").read_text(encoding="utf-8"))


def _closure(names: set[str]) -> set[str]:
    """The distributions ``names`` install, with their own requirements, as installed here."""
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop().lower().replace("_", "-")
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        for line in requires:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(requirement.name)
    return seen


def _third_party_imports(folder: Path) -> set[str]:
    found: set[str] = set()
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return {name for name in found if name not in sys.stdlib_module_names} - {"sample_agent", "mutagent"}


def test_the_quickstart_is_exactly_two_commands() -> None:
    first, second = commands()
    assert first.endswith("&& mutagent run ./sample_agent")
    assert second == "bash scripts/test.sh"


def test_the_first_command_installs_everything_the_sample_agent_suite_imports() -> None:
    first = commands()[0]
    match = re.match(r"pip install -e '\.\[([\w,-]+)\]' && ", first)
    assert match, f"the first command installs no extra: {first}"
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = {Requirement(r).name for r in project["dependencies"]}
    for extra in match.group(1).split(","):
        wanted |= {Requirement(r).name for r in project["optional-dependencies"][extra]}
    installed = _closure(wanted)
    providers = metadata.packages_distributions()
    for module in sorted(_third_party_imports(REPO / "sample_agent")):
        dists = {d.lower().replace("_", "-") for d in providers.get(module, [])}
        assert dists & installed, f"sample_agent imports {module}, which the first command does not install"


def test_ci_runs_the_readme_commands_read_from_the_readme() -> None:
    script = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "readme_commands.py 1" in script and "readme_commands.py 2" in script
    assert "-m venv" in script  # a fresh environment, not the one CI happens to have
    assert "mutation score 100" in script
    for command in commands():
        assert command not in script  # read from the README, never a copy that can drift
