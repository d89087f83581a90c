"""The isolated workspace every test process of a run lives in, and the environment it gets.

The target is copied to ``<tmp>/work/<name>``: ``<tmp>/work`` holds nothing else, so when the
target is itself a package (its import root is its parent) putting ``<tmp>/work`` first on
``sys.path`` exposes exactly the copy. mutagent's own helpers live in ``<tmp>/aux`` next to it.
Nothing a test or a mutant does can write into the user's tree, because nothing runs there.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import mutagent
from mutagent.engine.selection.discover import skipped_dir

PREFIX = "mutagent-run-"
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.IGNORECASE)
# variables that would make the target's test processes behave unlike a plain pytest run
DROPPED = ("PYTEST_CURRENT_TEST", "COVERAGE_PROCESS_START", "PYTEST_XDIST_WORKER", "PYTEST_XDIST_TESTRUNUID")


@dataclass
class Workspace:
    """Paths of one run's temporary workspace."""

    base: Path

    @property
    def work(self) -> Path:
        return self.base / "work"

    @property
    def aux(self) -> Path:
        return self.base / "aux"

    @property
    def lib(self) -> Path:
        """A directory holding only a link to the ``mutagent`` package, for the test processes."""
        return self.aux / "lib"

    def copy_of(self, root: Path) -> Path:
        return self.work / root.name

    def cleanup(self) -> None:
        shutil.rmtree(self.base, ignore_errors=True)


def _ignore(directory: str, names: list[str]) -> set[str]:
    base = Path(directory)
    return {name for name in names if (base / name).is_dir() and skipped_dir(base / name)}


def create_workspace(root: Path) -> Workspace:
    """Copy ``root`` into a fresh temporary workspace (skipping VCS, venvs, caches, ``.mutagent``)."""
    workspace = Workspace(Path(tempfile.mkdtemp(prefix=PREFIX)).resolve())
    workspace.work.mkdir()
    workspace.lib.mkdir(parents=True)
    shutil.copytree(
        root, workspace.copy_of(root), ignore=_ignore, symlinks=False, ignore_dangling_symlinks=True
    )
    package_dir = Path(mutagent.__file__).resolve().parent  # the installed package, wherever it lives
    (workspace.lib / "mutagent").symlink_to(package_dir, target_is_directory=True)
    (workspace.aux / "owner.pid").write_text(str(os.getpid()))
    return workspace


def remove_stale_workspaces() -> None:
    """Delete workspaces left behind by runs that were SIGKILLed (their owner pid is gone)."""
    for candidate in Path(tempfile.gettempdir()).glob(f"{PREFIX}*"):
        try:
            pid = int((candidate / "aux" / "owner.pid").read_text())
        except (OSError, ValueError):
            continue
        if pid != os.getpid() and not _alive(pid):
            shutil.rmtree(candidate, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def scrub_environment(environ: dict[str, str], pass_env: list[str]) -> dict[str, str]:
    """The environment of every test process: secrets removed unless ``--pass-env`` names them.

    Tests of an agent must talk to the fake model server; a real API key in the environment of
    a mutant is how a mutated retry loop ends up billing the user's account.
    """
    allowed = set(pass_env)
    env = {
        name: value
        for name, value in environ.items()
        if name in allowed
        or not (SECRET_NAME.search(name) or name in DROPPED or name.startswith("COV_CORE_"))
    }
    env.setdefault("PYTHONHASHSEED", "0")  # same set/dict order in the baseline and in the workers
    env["COVERAGE_CORE"] = "ctrace"  # dynamic contexts need a tracer core (sysmon lacks them)
    env.pop("PYTHONSTARTUP", None)
    return env


def test_environment(
    workspace: Workspace, import_roots: list[str], base_env: dict[str, str]
) -> dict[str, str]:
    """``base_env`` with the copy's import roots first on ``PYTHONPATH``, then mutagent's helpers."""
    entries = [str(workspace.work / root) if root else str(workspace.work) for root in import_roots]
    entries.append(str(workspace.lib))
    if base_env.get("PYTHONPATH"):
        entries.append(base_env["PYTHONPATH"])
    env = dict(base_env)
    env["PYTHONPATH"] = os.pathsep.join(entries)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env
