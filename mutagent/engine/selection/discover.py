"""Which files of the target are code to mutate and which are its tests, and how Python names them.

Module names follow pytest's ``prepend`` import mode: walk up from a file while the directory has
an ``__init__.py``; the first directory without one is the import root. ``sample_agent/`` is itself
a package, so its import root is the target's parent and ``loop.py`` is ``sample_agent.loop``.
Below a ``src`` directory, directories without an ``__init__.py`` are namespace packages (PEP 420):
``src/acme/sdk/events.py`` is ``acme.sdk.events`` with ``src`` as its import root.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from mutagent.errors import UsageError

SKIPPED_DIR_NAMES = {
    "__pycache__",
    "build",
    "dist",
    "node_modules",
    "site-packages",
    "venv",
    "virtualenv",
    "htmlcov",
}
TEST_DIR_NAMES = {"tests", "test"}
NOT_SOURCES = {"setup.py", "conftest.py", "noxfile.py", "fabfile.py"}
CONFIG_FILES = ("pyproject.toml", "setup.cfg", "pytest.ini", ".pytest.ini", "tox.ini")


def skipped_dir(path: Path) -> bool:
    """Directories never copied, scanned or mutated: hidden ones (.git, .mutagent, .venv, caches),
    virtualenvs (any directory holding ``pyvenv.cfg`` or ``conda-meta``), build output."""
    name = path.name
    return (
        name.startswith(".")
        or name in SKIPPED_DIR_NAMES
        or name.endswith(".egg-info")
        or (path / "pyvenv.cfg").exists()
        or (path / "conda-meta").is_dir()
    )


def is_test_file(relative: PurePosixPath) -> bool:
    name = relative.name
    return (
        name == "conftest.py"
        or name.startswith("test_")
        or name.endswith("_test.py")
        or any(part in TEST_DIR_NAMES for part in relative.parts[:-1])
    )


def walk_files(root: Path) -> Iterator[Path]:
    """Every file under ``root`` outside skipped directories, in a stable order."""
    for current, dirs, files in os.walk(root):
        base = Path(current)
        dirs[:] = sorted(d for d in dirs if not skipped_dir(base / d))
        for name in sorted(files):
            yield base / name


@dataclass
class Target:
    """The project under test, as found on disk (paths relative to ``root``, posix)."""

    root: Path
    sources: list[str]
    tests: list[str]
    config_files: list[str] = field(default_factory=list)
    package_root: bool = False  # ``root`` itself holds an ``__init__.py``

    def module_name(self, relative: str) -> tuple[str, str]:
        """``(module, import_root)`` of a source file; ``import_root`` is relative to the parent
        of ``root`` (``"sample_agent"`` -> ``root`` itself, ``""`` -> its parent)."""
        parts = list(PurePosixPath(relative).parts)
        directory = self.root.joinpath(*parts[:-1])
        stem = parts[-1][:-3]
        names = [] if stem == "__init__" else [stem]
        depth = len(parts) - 1
        # climb while the directory is a package; ``root`` may be one (then its parent is the root)
        while depth >= 0 and (directory / "__init__.py").is_file():
            names.insert(0, directory.name)
            if depth == 0:
                return ".".join(names), ""
            directory = directory.parent
            depth -= 1
        if "src" in parts[:depth] and parts[depth - 1] != "src":
            # a namespace package (PEP 420: no __init__.py) inside a src layout: src/acme/sdk/x.py
            # is acme.sdk.x, as the src directory on sys.path imports it, not sdk.x
            src = depth - 1 - parts[:depth][::-1].index("src")
            names[:0] = parts[src + 1 : depth]
            depth = src + 1
        return ".".join(names), PurePosixPath(self.root.name, *parts[:depth]).as_posix()

    def import_roots(self) -> list[str]:
        """Distinct import roots of all sources, the target's own root(s) first."""
        roots: list[str] = []
        for relative in self.sources:
            root = self.module_name(relative)[1]
            if root not in roots:
                roots.append(root)
        return sorted(roots, key=lambda r: (r.count("/"), r))


def _auto_sources(root: Path, files: list[PurePosixPath], package_root: bool) -> list[str]:
    sources = []
    for relative in files:
        if relative.suffix != ".py" or is_test_file(relative) or relative.name in NOT_SOURCES:
            continue
        parent = root.joinpath(*relative.parts[:-1])
        top_level = len(relative.parts) == 1
        in_src = len(relative.parts) == 2 and relative.parts[0] == "src"
        if top_level or in_src or (parent / "__init__.py").is_file() or package_root:
            sources.append(relative.as_posix())
    return sources


def _explicit_sources(root: Path, paths: list[str], all_files: list[PurePosixPath]) -> list[str]:
    chosen: list[str] = []
    resolved_root = root.resolve()
    for given in paths:
        candidate = (root / given).resolve()
        try:
            relative = PurePosixPath(candidate.relative_to(resolved_root).as_posix())
        except ValueError:
            raise UsageError(f"--paths {given!r} is outside the target {root}") from None
        if candidate.is_file():
            if candidate.suffix != ".py":
                raise UsageError(f"--paths {given!r} is not a Python file")
            matches = [relative]
        elif candidate.is_dir():
            prefix = relative.parts if str(relative) != "." else ()
            matches = [
                f
                for f in all_files
                if f.parts[: len(prefix)] == prefix and f.suffix == ".py" and not is_test_file(f)
            ]
        else:
            raise UsageError(f"--paths {given!r} does not exist in {root}")
        if not matches:
            raise UsageError(f"--paths {given!r} holds no Python source files")
        chosen.extend(m.as_posix() for m in matches if m.as_posix() not in chosen)
    return chosen


def discover(root: Path, paths: list[str] | None = None, tests_given: bool = False) -> Target:
    """Classify the target's files; one clear line when it is not a usable target."""
    if not root.exists():
        raise UsageError(f"target {root} does not exist")
    if not root.is_dir():
        raise UsageError(f"target {root} is not a directory")
    all_files = [PurePosixPath(p.relative_to(root).as_posix()) for p in walk_files(root)]
    package_root = (root / "__init__.py").is_file()
    if paths:
        sources = _explicit_sources(root, paths, all_files)
    else:
        sources = _auto_sources(root, all_files, package_root)
    tests = [f.as_posix() for f in all_files if f.suffix == ".py" and is_test_file(f)]
    runnable_tests = [t for t in tests if PurePosixPath(t).name != "conftest.py"]
    if not sources:
        raise UsageError(f"no Python sources to mutate found in {root} (use --paths to name them)")
    if not runnable_tests and not tests_given:
        raise UsageError(f"no tests found in {root} (expected tests/ or test_*.py files; use --tests)")
    configs = [name for name in CONFIG_FILES if (root / name).is_file()]
    return Target(root=root, sources=sources, tests=tests, config_files=configs, package_root=package_root)
